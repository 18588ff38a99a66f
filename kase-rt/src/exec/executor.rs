//! The one way `explore` provisions executions: an [`Executor`] owns what
//! consecutive executions of one model share — coroutine stacks, the thread
//! numbering, execution stamps, the watchdog — and runs one execution per
//! [`Executor::run`] under a [`Scheduler`].

use std::sync::Arc;
use std::time::Duration;

use super::clock::VectorClock;
use super::continuation::StackPool;
use super::driver;
use super::object::LiveStamps;
use super::scheduler::{Limits, Outcome, Scheduler};
use super::thread::ThreadInterner;
use super::watchdog::{Watch, Watchdog};

/// How the executions of one exploration run.
pub(crate) struct ExecutorSettings {
    /// Visible operations one execution may perform (`Livelock` beyond).
    pub max_steps: u64,
    /// Plain condvar waits may wake unnotified.
    pub spurious_wakeups: bool,
    /// Capture a backtrace at every visible operation (`KASE_BACKTRACE`).
    pub backtraces: bool,
    /// Critical-section peeking (`exec/peek`).
    pub peeking: bool,
    /// Stack size of each model thread's coroutine.
    pub stack_size: usize,
    /// End the process after this long without progress (`None`: off).
    pub watchdog: Option<Duration>,
    /// The test being explored, named by the watchdog.
    pub test: Option<String>,
    /// Test hook: no load is latest-only (`Builder::__every_read`).
    pub every_read: bool,
}

/// Ends the exploration's stamps even if the model panics out of it.
struct Exploration(u64);

impl Drop for Exploration {
    fn drop(&mut self) {
        LiveStamps::close_exploration(self.0);
    }
}

/// Runs executions of one model, one after another.
pub(crate) struct Executor {
    exploration: Exploration,
    pool: StackPool,
    /// Thread numbering of the current exploration; taken by each execution
    /// and given back by [`Executor::reclaim`], so an execution whose
    /// outcome is not given back leaves a fresh one for the next.
    interner: ThreadInterner,
    /// The last reclaimed execution's event buffer, emptied, for the next.
    spare: super::execution::Buffers,
    limits: Limits,
    runs: u64,
    _watchdog: Option<Watchdog>,
}

impl Executor {
    /// An executor for a new exploration. Panics (a usage error) inside a
    /// model: explorations do not nest.
    pub(crate) fn new(settings: &ExecutorSettings) -> Self {
        assert!(
            !super::in_model(),
            "kase: a model cannot be explored from inside another model (nested `explore`/`check`/`model`)"
        );
        let watch = settings
            .watchdog
            .map(|limit| Arc::new(Watch::new(limit, settings.test.clone())));
        let watchdog = watch.clone().map(Watchdog::new);
        Executor {
            exploration: Exploration(LiveStamps::open_exploration()),
            pool: StackPool::new(settings.stack_size),
            interner: ThreadInterner::new(),
            spare: super::execution::Buffers::default(),
            limits: Limits {
                max_steps: settings.max_steps,
                spurious_wakeups: settings.spurious_wakeups,
                watch,
                backtraces: settings.backtraces,
                peeking: settings.peeking,
                dependence_clocks: true,
                spin_memo: Default::default(),
                psc_memo: Default::default(),
                history_pool: Default::default(),
                graph_pool: Default::default(),
                offer_cache: Default::default(),
                // Interleavings first; the exploration moves to RC11's
                // graphs when it must (`explore/pipeline.rs`).
                weak: false,
                every_read: settings.every_read,
            },
            runs: 0,
            _watchdog: watchdog,
        }
    }

    /// Runs `model` once, asking `scheduler` at every choice point.
    pub(crate) fn run(
        &mut self,
        model: &(dyn Fn() + Sync),
        scheduler: &mut dyn Scheduler,
    ) -> Outcome {
        self.runs += 1;
        if let Some(watch) = &self.limits.watch {
            watch.bump();
        }
        let stamp = LiveStamps::stamp(self.exploration.0, self.runs);
        let interner = std::mem::replace(&mut self.interner, ThreadInterner::new());
        driver::run(
            model,
            scheduler,
            &mut self.pool,
            interner,
            &mut self.spare,
            stamp,
            &self.limits,
        )
    }

    /// Executions run so far.
    pub(crate) fn runs(&self) -> u64 {
        self.runs
    }

    /// Keeps the thread numbering of `outcome` for the next execution of the
    /// same exploration.
    pub(crate) fn reclaim(&mut self, outcome: Outcome) {
        self.interner = outcome.interner;
        if let Some(summary) = outcome.weak {
            self.limits.graph_pool.give(summary);
        }
        // Its events' and choices' buffers too: the next execution's grow
        // no more.
        let mut clocks = outcome.clocks;
        self.spare
            .clocks
            .extend(clocks.drain(..).filter(VectorClock::on_heap));
        self.spare.event_clocks_list = clocks;
        self.spare.events = super::cleared(outcome.events);
        self.spare.schedule = super::cleared(outcome.schedule);
        self.spare.weak_schedule = super::cleared(outcome.weak_schedule);
    }

    /// Numbers threads afresh from the next execution on (as a schedule
    /// string numbers them).
    pub(crate) fn renumber(&mut self) {
        self.interner = ThreadInterner::new();
    }

    /// Turns critical-section peeking on or off for the next executions.
    pub(crate) fn set_peeking(&mut self, on: bool) {
        self.limits.peeking = on;
    }

    /// Whether executions run with critical-section peeking.
    pub(crate) fn peeking(&self) -> bool {
        self.limits.peeking
    }

    /// Whether the next executions keep their events' dependence clocks
    /// (peeking keeps them whatever this says).
    pub(crate) fn set_dependence_clocks(&mut self, on: bool) {
        self.limits.dependence_clocks = on;
    }

    /// Turns RC11's graph semantics on or off for the next executions.
    pub(crate) fn set_weak(&mut self, on: bool) {
        self.limits.weak = on;
    }

    /// Whether executions run under RC11's graph semantics.
    pub(crate) fn weak(&self) -> bool {
        self.limits.weak
    }
}

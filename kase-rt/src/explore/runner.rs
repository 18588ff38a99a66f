//! Runs executions of one model for the explorers: the exploration, the
//! replays of saved schedules and the search for a simpler failure share a
//! [`Runner`]. Every execution runs under [`Guarded`]: the explorer's
//! scheduler, plus the exploration's deadline and the [`Trail`] an
//! internal-error report needs.

use crate::fast_hash::Map as HashMap;
use std::cell::{Cell, RefCell};
use std::time::Instant;

use crate::exec::error::internal_error;
use crate::exec::executor::{Executor, ExecutorSettings};
use crate::exec::{
    self, ChoicePoint, Execution, OpKind, Outcome, Scheduler, Stop, ThreadIdx, WeakPoint,
};
use crate::report::{Failure, FailureKind, Names, Renumbering, Schedule};
use crate::settings::Settings;

use super::{replay, Explorer};

/// What an internal-error report needs from the execution kase was running
/// when its own code panicked: kept outside the [`Runner`], so that it
/// survives the unwinding.
#[derive(Default)]
pub(crate) struct Trail {
    /// Executions started.
    executions: Cell<u64>,
    /// The current execution runs with critical-section peeking.
    peeking: Cell<bool>,
    /// The choices of the current (or last) execution so far, numbered as
    /// a fresh replay numbers threads.
    choices: RefCell<Vec<ThreadIdx>>,
    /// The explorer's thread numbers → a fresh replay's, from the spawns
    /// seen so far in the current execution.
    renumbering: RefCell<HashMap<ThreadIdx, ThreadIdx>>,
    /// Events of the current execution already scanned for spawns.
    scanned: Cell<usize>,
}

impl Trail {
    /// Executions started so far.
    pub(crate) fn executions(&self) -> u64 {
        self.executions.get()
    }

    fn start(&self, peeking: bool) {
        self.executions.set(self.executions.get() + 1);
        self.peeking.set(peeking);
        self.choices.borrow_mut().clear();
        self.renumbering.borrow_mut().clear();
        self.scanned.set(0);
    }

    /// Records that `chosen` was picked at a real choice point of
    /// `execution` (as `exec::run` records it in the outcome's schedule).
    fn record(&self, execution: &Execution, chosen: ThreadIdx) {
        let events = execution.events();
        let mut renumbering = self.renumbering.borrow_mut();
        for e in &events[self.scanned.get().min(events.len())..] {
            if e.action.kind == OpKind::Spawn {
                if let Some(child) = e.value {
                    let fresh = ThreadIdx(renumbering.len() as u32 + 1);
                    renumbering.insert(ThreadIdx(child as u32), fresh);
                }
            }
        }
        self.scanned.set(events.len());
        let shown = renumbering.get(&chosen).copied().unwrap_or(chosen);
        self.choices.borrow_mut().push(shown);
    }

    /// The report of kase's own panic with `payload`, raised during the
    /// current (or last) execution.
    pub(crate) fn internal_failure(&self, payload: &(dyn std::any::Any + Send)) -> Failure {
        let info = exec::panic::take_last(payload);
        Failure::internal(
            info.message,
            info.location,
            Schedule::from_threads(&self.choices.borrow(), self.peeking.get()),
            self.executions.get(),
        )
    }
}

/// The scheduler an execution actually runs with: the explorer's, plus
/// what every execution needs whoever chooses — recording the choices for
/// an internal-error report, and stopping at the exploration's deadline.
struct Guarded<'a> {
    inner: &'a mut dyn Scheduler,
    trail: &'a Trail,
    deadline: Option<Instant>,
    internal_error_at: Option<u64>,
    steps: u64,
    out_of_time: bool,
}

/// How many steps go by between two looks at the clock.
const CLOCK_EVERY: u64 = 64;

impl Scheduler for Guarded<'_> {
    fn choose(&mut self, point: &ChoicePoint<'_>) -> Result<ThreadIdx, Stop> {
        self.steps += 1;
        if self.steps % CLOCK_EVERY == 0 && self.deadline.is_some_and(|d| Instant::now() >= d) {
            // Not a redundant execution: `explore` sees `out_of_time` and
            // drops it, unfinished and uncounted.
            self.out_of_time = true;
            return Err(Stop::Redundant);
        }
        if self.internal_error_at == Some(self.steps) {
            internal_error!(
                "the test hook `Builder::__internal_error_at` fired at step {}",
                self.steps
            );
        }
        let chosen = self.inner.choose(point)?;
        if point.enabled.len() > 1 {
            self.trail.record(point.execution, chosen);
        }
        Ok(chosen)
    }

    fn choose_weak(&mut self, point: &WeakPoint<'_>) -> Result<usize, Stop> {
        self.inner.choose_weak(point)
    }

    fn replay_prefix(&self) -> Option<usize> {
        self.inner.replay_prefix()
    }
}

/// Runs executions of one model one after another.
pub(crate) struct Runner<'m> {
    model: &'m (dyn Fn() + Sync),
    trail: &'m Trail,
    /// The internal-error test hook: (execution, step).
    internal_error_at: Option<(u64, u64)>,
    executor: Executor,
}

impl<'m> Runner<'m> {
    pub(crate) fn new(settings: &Settings, model: &'m (dyn Fn() + Sync), trail: &'m Trail) -> Self {
        let executor = Executor::new(&ExecutorSettings {
            max_steps: settings.max_steps,
            spurious_wakeups: settings.spurious_wakeups,
            backtraces: settings.backtraces,
            peeking: settings.peeking,
            stack_size: settings.stack_size,
            watchdog: settings.watchdog,
            test: crate::stderr::test_name(settings.test.as_ref().map(|t| t.full_name())),
            every_read: settings.every_read,
        });
        Runner {
            model,
            trail,
            internal_error_at: settings.internal_error_at,
            executor,
        }
    }

    /// Runs one execution, asking `scheduler` at every choice point.
    pub(crate) fn execute(&mut self, scheduler: &mut dyn Scheduler) -> Outcome {
        self.execute_until(scheduler, None)
            .expect("no deadline, so never cut short")
    }

    /// Runs one execution, asking `scheduler` at every choice point; `None`
    /// if it was still running at `deadline` (it is then abandoned: its
    /// threads are unwound and it counts for nothing).
    pub(crate) fn execute_until(
        &mut self,
        scheduler: &mut dyn Scheduler,
        deadline: Option<Instant>,
    ) -> Option<Outcome> {
        let run = self.executor.runs() + 1;
        self.trail.start(self.executor.peeking());
        let mut guarded = Guarded {
            inner: scheduler,
            trail: self.trail,
            deadline,
            internal_error_at: self
                .internal_error_at
                .filter(|&(execution, _)| execution == run)
                .map(|(_, step)| step),
            steps: 0,
            out_of_time: false,
        };
        let outcome = self.executor.run(self.model, &mut guarded);
        if guarded.out_of_time {
            self.reclaim(outcome);
            return None;
        }
        Some(outcome)
    }

    /// Turns critical-section peeking on or off for the next executions.
    pub(crate) fn set_peeking(&mut self, on: bool) {
        self.executor.set_peeking(on);
    }

    /// Whether executions run with critical-section peeking.
    pub(crate) fn peeking(&self) -> bool {
        self.executor.peeking()
    }

    /// Whether the next executions keep their events' dependence clocks
    /// (`Event::clock`); peeking keeps them whatever this says.
    pub(crate) fn set_dependence_clocks(&mut self, on: bool) {
        self.executor.set_dependence_clocks(on);
    }

    /// Turns RC11's graph semantics on or off for the next executions.
    pub(crate) fn set_weak(&mut self, on: bool) {
        self.executor.set_weak(on);
    }

    /// Whether executions run under RC11's graph semantics.
    pub(crate) fn weak(&self) -> bool {
        self.executor.weak()
    }

    /// Keeps the thread numbering of `outcome` for the next execution of the
    /// same exploration.
    pub(crate) fn reclaim(&mut self, outcome: Outcome) {
        self.executor.reclaim(outcome);
    }

    /// Replays `schedule` once, with fresh thread numbers (as schedules are
    /// written). Returns the failure, if any (a departure from the schedule
    /// is a nondeterminism failure explaining where and how), and the
    /// replayer (preemptions, choices used).
    pub(crate) fn replay(&mut self, schedule: &Schedule) -> (Option<Failure>, replay::Replay) {
        self.executor.renumber();
        let mut replay = replay::Replay::new(schedule);
        // A schedule replays with the peeking setting it was recorded with.
        // and an RC11 schedule under RC11's graph semantics.
        let (peeking, weak) = (self.executor.peeking(), self.executor.weak());
        self.executor.set_peeking(schedule.peeking());
        self.executor.set_weak(schedule.rc11());
        let mut outcome = self.execute(&mut replay);
        self.executor.set_peeking(peeking);
        self.executor.set_weak(weak);
        let next = replay.advance(&outcome);
        if let Err(message) = next {
            if outcome.fault.is_none() {
                outcome.fault = Some(exec::Fault::Divergence { message });
            }
        }
        if let Some(divergence) = replay.divergence() {
            let described = with_names(&outcome, |names| divergence.describe(names));
            if let Some(exec::Fault::Divergence { message }) = &mut outcome.fault {
                *message = described;
            }
        }
        let failure = outcome.fault.take().map(|fault| {
            let mut failure = failure(fault, &outcome);
            if failure.kind() != FailureKind::Nondeterminism {
                failure.set_preempted(replay.preempted().to_vec());
                let (used, total) = replay.used();
                if used < total {
                    failure.add_note(format!(
                        "the failure happened at choice point {used} of the schedule's {total}: the rest \
                         of the schedule was not used (the code may have changed since it was recorded)"
                    ));
                }
            }
            failure
        });
        (failure, replay)
    }
}

/// Runs `f` with the names a report of `outcome` uses.
pub(super) fn with_names<R>(outcome: &Outcome, f: impl FnOnce(&Names<'_>) -> R) -> R {
    let thread_name = |t| outcome.interner.name(t).map(str::to_owned);
    let renumbering = Renumbering::of(&outcome.events);
    let names = Names {
        objects: &outcome.objects,
        thread_name: &thread_name,
        renumbering: &renumbering,
    };
    f(&names)
}

/// The report of a failed execution. Threads are numbered as a fresh replay
/// of its schedule numbers them.
pub(super) fn failure(fault: exec::Fault, outcome: &Outcome) -> Failure {
    with_names(outcome, |names| {
        let schedule: Vec<_> = outcome
            .schedule
            .iter()
            .map(|&t| names.renumbering.get(t))
            .collect();
        let mut replay = Schedule::from_threads(&schedule, outcome.peeking);
        if outcome.weak.is_some() {
            replay = replay.with_rc11(&outcome.weak_schedule);
        }
        Failure::new(fault, &outcome.events, outcome.weak.as_ref(), replay, names)
    })
}

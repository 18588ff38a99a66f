//! Exploration: runs the model execution after execution, each following a
//! schedule chosen by an [`Explorer`], until every behaviour is covered, a
//! failure is found, or a budget runs out.

mod determinism;
mod exhaustive;
mod minimize;
mod por;
pub use por::bench::UnfoldingProbe;
mod replay;
mod session;
mod trace;

pub use por::Alternatives;

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::exec::continuation::StackPool;
use crate::exec::error::{internal_error, usage_error};
use crate::exec::object::LiveStamps;
use crate::exec::thread::ThreadInterner;
use crate::exec::watchdog::{Watch, Watchdog};
use crate::exec::{
    self, ChoicePoint, Execution, Limits, OpKind, Outcome, Scheduler, Stop, ThreadIdx,
};
use crate::report::progress::{Counts, Progress};
use crate::report::{Failure, FailureKind, Names, Renumbering, Report, Schedule};
pub(crate) use crate::settings::Settings;

/// Which exploration algorithm to use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Strategy {
    /// Unfolding-based partial-order reduction (the default): one execution
    /// per Mazurkiewicz trace with [`Alternatives::Optimal`].
    #[default]
    Por,
    /// Every interleaving, without reduction: the oracle. Counts distinct
    /// Mazurkiewicz traces ([`Report::traces`]).
    Exhaustive,
}

/// A scheduler that also decides, after each execution, whether (and how)
/// there is another one to run.
pub(crate) trait Explorer: Scheduler {
    /// Called after each execution. `Ok(true)`: run another one; `Ok(false)`:
    /// exploration finished; `Err`: the execution did not follow its schedule.
    fn advance(&mut self, outcome: &Outcome) -> Result<bool, String>;

    /// Redundant (sleep-set-blocked) executions so far.
    fn redundant(&self) -> u64 {
        0
    }

    /// Most events held in the unfolding at once, for explorers that keep one.
    fn peak_events(&self) -> Option<usize> {
        None
    }
}

/// Ends the session even if the model closure panics out of `run`.
struct Session(u64);

impl Drop for Session {
    fn drop(&mut self) {
        LiveStamps::close_session(self.0);
    }
}

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
}

/// Runs executions of one model one after another: the exploration, the
/// replays of saved schedules, and the search for a simpler failure share it.
pub(crate) struct Runner<'m> {
    model: &'m (dyn Fn() + Sync),
    trail: &'m Trail,
    /// The internal-error test hook: (execution, step).
    internal_error_at: Option<(u64, u64)>,
    session: Session,
    pool: StackPool,
    /// Thread numbering of the current exploration; taken by each execution
    /// and given back by [`Runner::reclaim`], so a replay that does not give
    /// it back leaves a fresh one for the next execution.
    interner: ThreadInterner,
    limits: Limits,
    runs: u64,
    _watchdog: Option<Watchdog>,
}

impl<'m> Runner<'m> {
    pub(crate) fn new(config: &Settings, model: &'m (dyn Fn() + Sync), trail: &'m Trail) -> Self {
        if exec::in_model() {
            usage_error!(
                "a model cannot be explored from inside another model (nested `explore`/`check`/`model`)"
            );
        }
        let watch = config.watchdog.map(|_| Arc::new(Watch::default()));
        let watchdog = config
            .watchdog
            .zip(watch.clone())
            .map(|(limit, watch)| Watchdog::start(watch, limit));
        Runner {
            model,
            trail,
            internal_error_at: config.internal_error_at,
            _watchdog: watchdog,
            session: Session(LiveStamps::open_session()),
            pool: StackPool::new(config.stack_size),
            interner: ThreadInterner::new(),
            limits: Limits {
                max_steps: config.max_steps,
                spurious_wakeups: config.spurious_wakeups,
                watch,
                backtraces: config.backtraces,
                peeking: config.peeking,
            },
            runs: 0,
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
        self.runs += 1;
        self.trail.start(self.limits.peeking);
        if let Some(watch) = &self.limits.watch {
            watch.bump();
        }
        let stamp = LiveStamps::stamp(self.session.0, self.runs);
        let interner = std::mem::replace(&mut self.interner, ThreadInterner::new());
        let mut guarded = Guarded {
            inner: scheduler,
            trail: self.trail,
            deadline,
            internal_error_at: self
                .internal_error_at
                .filter(|&(execution, _)| execution == self.runs)
                .map(|(_, step)| step),
            steps: 0,
            out_of_time: false,
        };
        let outcome = exec::run(
            self.model,
            &mut guarded,
            &mut self.pool,
            interner,
            stamp,
            &self.limits,
        );
        if guarded.out_of_time {
            self.reclaim(outcome);
            return None;
        }
        Some(outcome)
    }

    /// Turns critical-section peeking on or off for the next executions.
    pub(crate) fn set_peeking(&mut self, on: bool) {
        self.limits.peeking = on;
    }

    /// Whether executions run with critical-section peeking.
    pub(crate) fn peeking(&self) -> bool {
        self.limits.peeking
    }

    /// Keeps the thread numbering of `outcome` for the next execution of the
    /// same exploration.
    pub(crate) fn reclaim(&mut self, outcome: Outcome) {
        self.interner = outcome.interner;
    }

    /// Replays `schedule` once, with fresh thread numbers (as schedules are
    /// written). Returns the failure, if any (a departure from the schedule
    /// is a nondeterminism failure explaining where and how), and the
    /// replayer (preemptions, choices used).
    pub(crate) fn replay(&mut self, schedule: &Schedule) -> (Option<Failure>, replay::Replay) {
        self.interner = ThreadInterner::new();
        let mut replay = replay::Replay::new(schedule);
        // A schedule replays with the peeking setting it was recorded with.
        let peeking = std::mem::replace(&mut self.limits.peeking, schedule.peeking());
        let mut outcome = self.execute(&mut replay);
        self.limits.peeking = peeking;
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

/// Explores `model` under `config`: replays the test's saved schedules,
/// explores, simplifies and saves a failure (see `session.rs`).
pub(crate) fn run(config: &Settings, model: &(dyn Fn() + Sync)) -> Report {
    session::run(config, model)
}

/// Runs `explorer` until it is done, a failure is found, or a budget runs
/// out.
pub(crate) fn explore(
    config: &Settings,
    runner: &mut Runner<'_>,
    mut explorer: Box<dyn Explorer>,
    progress: &mut Progress,
) -> Report {
    let count_traces = config.strategy == Strategy::Exhaustive;
    let mut traces = HashSet::new();
    let start = Instant::now();
    let mut report = Report {
        executions: 0,
        traces: None,
        sleep_set_blocked: 0,
        complete: false,
        stopped_by: None,
        failure: None,
        duration: Duration::ZERO,
        peak_events: None,
        replayed: 0,
        warnings: Vec::new(),
        peeking: runner.peeking(),
        discarded: 0,
        peek_fallback: None,
    };
    loop {
        if let Some(max) = config
            .max_executions
            .filter(|&max| report.executions >= max)
        {
            report.stopped_by = Some(format!("max_executions = {max}"));
            break;
        }
        if let Some(max) = config.max_duration.filter(|&max| start.elapsed() >= max) {
            report.stopped_by = Some(format!("max_duration = {max:?}"));
            break;
        }
        let deadline = config.max_duration.map(|max| start + max);
        let Some(mut outcome) = runner.execute_until(&mut *explorer, deadline) else {
            // An execution still running at the deadline: cut, not counted.
            let max = config.max_duration.unwrap_or_default();
            report.stopped_by = Some(format!(
                "max_duration = {max:?} (during execution {})",
                report.executions + 1
            ));
            break;
        };
        report.executions += 1;
        if let Some(reason) = peeking_unsound(&mut outcome) {
            // The reduced exploration may have missed behaviours: the caller
            // explores again without peeking (POR-DESIGN.md).
            report.peek_fallback = Some(reason);
            runner.reclaim(outcome);
            break;
        }
        if count_traces && outcome.fault.is_none() {
            traces.insert(trace::fingerprint(&outcome.events));
        }
        let next = explorer.advance(&outcome);
        progress.tick(Counts {
            executions: report.executions,
            sleep_set_blocked: explorer.redundant(),
            depth: outcome.events.len(),
        });
        if let Err(message) = &next {
            if outcome.fault.is_none() {
                outcome.fault = Some(exec::Fault::Divergence {
                    message: message.clone(),
                });
            }
        }
        if let Some(fault) = outcome.fault.take() {
            report.failure = Some(failure(fault, &outcome));
            break;
        }
        if config.check_determinism && !outcome.redundant {
            let (events, choices) = (
                std::mem::take(&mut outcome.events),
                outcome.schedule.clone(),
            );
            runner.reclaim(outcome);
            let mut again = runner.execute(&mut determinism::Follow::new(choices));
            let differs = match again.fault.take() {
                Some(exec::Fault::Divergence { message }) => Some(message),
                _ => determinism::first_difference(&events, &again.events),
            };
            if let Some(message) = differs {
                report.failure = Some(failure(exec::Fault::Divergence { message }, &again));
                break;
            }
            outcome = again;
        }
        runner.reclaim(outcome);
        if next == Ok(false) {
            report.complete = true;
            break;
        }
    }
    report.duration = start.elapsed();
    report.sleep_set_blocked = explorer.redundant();
    report.peak_events = explorer.peak_events();
    if count_traces {
        report.traces = Some(traces.len() as u64);
    }
    if let Some(budget) = &report.stopped_by {
        let warning = format!(
            "kase: WARNING: exploration stopped by {budget} after {} executions; the result is INCOMPLETE \
             (behaviours may be left unexplored). Raise the budget to explore everything.",
            report.executions
        );
        eprintln!("{warning}");
        report.warnings.push(warning);
    }
    report
}

/// Why `outcome` shows that peeking may miss behaviours, if it does: a D1
/// violation, or a data race under peeking's happens-before.
fn peeking_unsound(outcome: &mut Outcome) -> Option<String> {
    if let Some(reason) = outcome.peek_violation.take() {
        return Some(reason);
    }
    match outcome.fault.take() {
        Some(exec::Fault::PeekingUnsound { reason }) => Some(reason),
        other => {
            outcome.fault = other;
            None
        }
    }
}

/// Runs `f` with the names a report of `outcome` uses.
fn with_names<R>(outcome: &Outcome, f: impl FnOnce(&Names<'_>) -> R) -> R {
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
fn failure(fault: exec::Fault, outcome: &Outcome) -> Failure {
    with_names(outcome, |names| {
        let schedule: Vec<_> = outcome
            .schedule
            .iter()
            .map(|&t| names.renumbering.get(t))
            .collect();
        Failure::new(
            fault,
            &outcome.events,
            Schedule::from_threads(&schedule, outcome.peeking),
            names,
        )
    })
}

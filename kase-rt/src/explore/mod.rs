//! Exploration: runs the model execution after execution, each following a
//! schedule chosen by an [`Explorer`], until every behaviour is covered, a
//! failure is found, or a budget runs out.

mod exhaustive;
mod por;
mod replay;
mod trace;

pub use por::Alternatives;

use std::collections::HashSet;
use std::time::{Duration, Instant};

use crate::exec::continuation::StackPool;
use crate::exec::object::LiveStamps;
use crate::exec::thread::ThreadInterner;
use crate::exec::{self, Limits, Outcome, Scheduler};
use crate::report::{Failure, Names, Report, Schedule};

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

/// Everything an exploration is parameterised by.
#[derive(Clone, Debug)]
pub(crate) struct Config {
    pub strategy: Strategy,
    pub alternatives: Alternatives,
    pub max_executions: Option<u64>,
    pub max_duration: Option<Duration>,
    pub max_steps: u64,
    pub spurious_wakeups: bool,
    pub stack_size: usize,
    pub replay: Option<Schedule>,
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

/// Explores `model` under `config`.
pub(crate) fn run(config: &Config, model: &(dyn Fn() + Sync)) -> Report {
    assert!(
        !exec::in_model(),
        "kase: a model cannot be explored from inside another model (nested `explore`/`check`/`model`)"
    );
    let session = Session(LiveStamps::open_session());
    let mut explorer: Box<dyn Explorer> = match (&config.replay, config.strategy) {
        (Some(schedule), _) => Box::new(replay::Replay::new(schedule)),
        (None, Strategy::Exhaustive) => Box::<exhaustive::Dfs>::default(),
        (None, Strategy::Por) => Box::new(por::Por::new(config.alternatives)),
    };
    let count_traces = config.strategy == Strategy::Exhaustive && config.replay.is_none();
    let mut traces = HashSet::new();
    let mut pool = StackPool::new(config.stack_size);
    let mut interner = ThreadInterner::new();
    let limits = Limits {
        max_steps: config.max_steps,
        spurious_wakeups: config.spurious_wakeups,
    };
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
        let stamp = LiveStamps::stamp(session.0, report.executions + 1);
        let mut outcome = exec::run(model, &mut *explorer, &mut pool, interner, stamp, &limits);
        report.executions += 1;
        if count_traces && outcome.fault.is_none() {
            traces.insert(trace::fingerprint(&outcome.events));
        }
        let next = explorer.advance(&outcome);
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
        interner = outcome.interner;
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
        eprintln!(
            "kase: WARNING: exploration stopped by {budget} after {} executions; the result is INCOMPLETE \
             (behaviours may be left unexplored). Raise the budget to explore everything.",
            report.executions
        );
    }
    report
}

fn failure(fault: exec::Fault, outcome: &Outcome) -> Failure {
    let thread_name = |t| outcome.interner.name(t).map(str::to_owned);
    let names = Names {
        objects: &outcome.objects,
        thread_name: &thread_name,
    };
    Failure::new(
        fault,
        &outcome.events,
        Schedule::from_threads(&outcome.schedule),
        &names,
    )
}

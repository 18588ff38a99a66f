//! What an exploration found: the [`Report`], its [`Failure`], and schedules.

pub(crate) mod events;
mod failure;
pub(crate) mod persist;
pub(crate) mod progress;
mod schedule;

use std::fmt;
use std::time::Duration;

pub(crate) use failure::{location, FirstFound, Names, Renumbering, Saved};
pub use failure::{Failure, FailureKind};
pub use persist::Persist;
pub use schedule::{Schedule, ScheduleParseError};

/// The result of an exploration.
///
/// ```
/// # extern crate kase_rt as kase;
/// let report = kase::Builder::new().explore(|| {});
/// assert!(report.complete());
/// assert_eq!(report.executions(), 1);
/// assert!(report.failure().is_none());
/// ```
#[derive(Debug)]
pub struct Report {
    pub(crate) executions: u64,
    pub(crate) traces: Option<u64>,
    pub(crate) sleep_set_blocked: u64,
    pub(crate) complete: bool,
    pub(crate) stopped_by: Option<String>,
    pub(crate) failure: Option<Failure>,
    pub(crate) duration: Duration,
    pub(crate) peak_events: Option<usize>,
    /// Saved schedules replayed before exploring.
    pub(crate) replayed: u64,
    pub(crate) warnings: Vec<String>,
    /// The exploration that produced the result used critical-section
    /// peeking.
    pub(crate) peeking: bool,
    /// Executions of an exploration with peeking that was discarded.
    pub(crate) discarded: u64,
    /// Why peeking had to be turned off (only between `search::explore`
    /// and the pipeline, which explores again).
    pub(crate) peek_fallback: Option<String>,
}

impl Report {
    /// A report of nothing explored yet, to fill in.
    pub(crate) fn empty() -> Report {
        Report {
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
            peeking: false,
            discarded: 0,
            peek_fallback: None,
        }
    }

    /// Complete executions run (including a failing one, and the replays
    /// of saved schedules from the regression file that ran first).
    pub fn executions(&self) -> u64 {
        self.executions
    }

    /// Whether the result comes from an exploration with critical-section
    /// peeking. False if peeking was off, or if kase turned it off for this
    /// model because a thread could run in the middle of a critical section
    /// (then [`warnings`](Self::warnings) says where, and
    /// [`discarded_executions`](Self::discarded_executions) counts the
    /// executions of the abandoned exploration).
    pub fn peeking(&self) -> bool {
        self.peeking
    }

    /// Executions of an exploration with peeking that kase abandoned to
    /// explore again without it; included in
    /// [`executions`](Self::executions).
    pub fn discarded_executions(&self) -> u64 {
        self.discarded
    }

    /// How many of [`executions`](Self::executions) replayed schedules
    /// saved in the test's regression file, before exploring.
    pub fn replayed(&self) -> u64 {
        self.replayed
    }

    /// Warnings about this exploration, also printed on stderr: a budget
    /// that stopped it early, saved schedules that no longer fit the code or
    /// no longer fail, unreadable lines in the regression file, a regression
    /// file that could not be written.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Distinct Mazurkiewicz traces among the executions, counted by the
    /// `Exhaustive` strategy (`None` for the others, which do not count them).
    pub fn traces(&self) -> Option<u64> {
        self.traces
    }

    /// Redundant executions: ones that added no new trace because the
    /// explorer could not avoid them (0 for an optimal exploration).
    pub fn sleep_set_blocked(&self) -> u64 {
        self.sleep_set_blocked
    }

    /// Whether every behaviour was explored: false if a budget
    /// (`max_executions`, `max_duration`) cut the exploration short, or if it
    /// stopped at a failure.
    pub fn complete(&self) -> bool {
        self.complete
    }

    /// The failure found, if any. Exploration stops at the first one.
    pub fn failure(&self) -> Option<&Failure> {
        self.failure.as_ref()
    }

    /// Most events the partial-order explorer held in its unfolding at once
    /// (`None` for strategies without one). Stays proportional to the
    /// explored branch and its conflicts, not to the number of executions.
    pub fn peak_events(&self) -> Option<usize> {
        self.peak_events
    }

    /// Wall-clock time spent.
    pub fn duration(&self) -> Duration {
        self.duration
    }

    pub(crate) fn take_failure(&mut self) -> Option<Failure> {
        self.failure.take()
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(failure) = &self.failure {
            writeln!(f, "{failure}")?;
            writeln!(f)?;
        }
        write!(
            f,
            "kase: {} execution{}",
            self.executions,
            if self.executions == 1 { "" } else { "s" }
        )?;
        if let Some(traces) = self.traces {
            write!(
                f,
                ", {traces} distinct trace{}",
                if traces == 1 { "" } else { "s" }
            )?;
        }
        if self.sleep_set_blocked > 0 {
            write!(f, " (+{} redundant)", self.sleep_set_blocked)?;
        }
        if self.replayed > 0 {
            write!(
                f,
                " ({} saved schedule{} replayed first)",
                self.replayed,
                if self.replayed == 1 { "" } else { "s" }
            )?;
        }
        write!(f, " in {:.2?}", self.duration)?;
        match (&self.failure, &self.stopped_by) {
            (Some(_), _) => write!(f, "; stopped at the first failure"),
            (None, Some(budget)) => write!(f, "; INCOMPLETE: stopped by {budget}"),
            (None, None) => write!(f, "; complete"),
        }
    }
}

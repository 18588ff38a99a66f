//! What an exploration found: the [`Report`], its [`Failure`], and schedules.

pub(crate) mod events;
mod failure;
pub(crate) mod persist;
pub(crate) mod progress;
mod schedule;

use std::fmt;
use std::time::Duration;

pub(crate) use failure::{
    location, rows_of, FirstFound, Fold, Names, Renumbering, RowFolder, Saved,
};
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
    /// The trial without the preemption bound stopped at its limit (only
    /// between `search::explore` and the pipeline, which then explores
    /// with the bound).
    pub(crate) trial_exceeded: bool,
    /// The preemption bound the result holds up to, if one was set.
    pub(crate) preemption_bound: Option<usize>,
    /// Every execution within `preemption_bound` was explored (false
    /// without a bound).
    pub(crate) complete_within_bound: bool,
    /// The model's exploration controls (kase-loom's `stop_exploring`,
    /// `skip_branch`) left choices unexplored.
    pub(crate) cut: bool,
    /// The result comes from the partial-order reduction (not the DFS).
    pub(crate) reduction: bool,
    /// The memory model atomics followed.
    pub(crate) memory_model: crate::MemoryModel,
    /// Under RC11: why the exploration went over execution graphs (the
    /// first access weaker than `SeqCst`); `None`: over interleavings.
    pub(crate) graphs: Option<String>,
    /// Under RC11 over execution graphs: which explorer.
    pub(crate) graph_explorer: Option<crate::GraphExplorer>,
    /// Set when the reduction met something it does not take (what it
    /// was): the caller explores with the canonical reduction (over RC11's
    /// graphs) or every interleaving (under sequential consistency). Only
    /// between `search::explore` and the pipeline.
    pub(crate) explorer_fallback: Option<String>,
    /// With `explorer_fallback`: the bounded reduction takes the model once
    /// it orders yields with every step (`explore/bounded.rs`).
    pub(crate) fallback_orders_yields: bool,
    /// Under RC11, during the interleaving exploration: the first access
    /// weaker than `SeqCst`, which moves it to execution graphs (only
    /// between `search::explore` and the pipeline).
    pub(crate) rc11_fallback: Option<String>,
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
            trial_exceeded: false,
            preemption_bound: None,
            complete_within_bound: false,
            cut: false,
            reduction: false,
            memory_model: crate::MemoryModel::SequentiallyConsistent,
            graphs: None,
            graph_explorer: None,
            rc11_fallback: None,
            explorer_fallback: None,
            fallback_orders_yields: false,
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
    /// executions of the abandoned exploration). Peeking starts at the
    /// model's first spawn; a model whose main thread holds a lock then
    /// peeks at no section, though this still says true (the guide's
    /// chapter on peeking).
    pub fn peeking(&self) -> bool {
        self.peeking
    }

    /// The memory model the atomics followed
    /// ([`Builder::memory_model`](crate::Builder::memory_model)).
    pub fn memory_model(&self) -> crate::MemoryModel {
        self.memory_model
    }

    /// Under [`MemoryModel::Rc11`](crate::MemoryModel::Rc11), why kase
    /// explored execution graphs (its RC11 explorer) rather than
    /// interleavings: the first atomic access or fence weaker than `SeqCst`
    /// made while another thread may run, and where. `None`: every atomic access was `SeqCst` (interleavings
    /// are then exactly RC11's behaviours), or the model is sequentially
    /// consistent.
    pub fn graph_exploration(&self) -> Option<&str> {
        self.graphs.as_deref()
    }

    /// Under [`MemoryModel::Rc11`](crate::MemoryModel::Rc11) over execution
    /// graphs ([`graph_exploration`](Self::graph_exploration)), which
    /// explorer went over them: with [`Strategy::Por`](crate::Strategy::Por)
    /// the revisit explorer (exactly one execution per graph), unless the
    /// model uses a lock or another shim object it does not take yet.
    ///
    /// ```
    /// # extern crate kase_rt as kase;
    /// use kase::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    /// use kase::{thread, Builder, GraphExplorer};
    ///
    /// let report = Builder::new().explore(|| {
    ///     static X: AtomicUsize = AtomicUsize::new(0);
    ///     let t = thread::spawn(|| X.store(1, Relaxed));
    ///     X.load(Relaxed);
    ///     t.join().unwrap();
    /// });
    /// assert_eq!(report.graph_explorer(), Some(&GraphExplorer::Revisits));
    /// // Two graphs: the load reads 0 or 1 (and one interleaving discarded
    /// // at the first Relaxed access).
    /// assert_eq!(report.traces(), Some(2));
    /// assert_eq!(report.executions() - report.discarded_executions(), 2);
    /// ```
    pub fn graph_explorer(&self) -> Option<&crate::GraphExplorer> {
        self.graph_explorer.as_ref()
    }

    /// Executions kase abandoned to explore again: with peeking, when
    /// peeking turned out unsafe for the model, and over interleavings,
    /// when an ordering weaker than `SeqCst` moved it to RC11's execution
    /// graphs ([`graph_exploration`](Self::graph_exploration)); included in
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

    /// Distinct Mazurkiewicz traces among the executions (under
    /// [`MemoryModel::Rc11`](crate::MemoryModel::Rc11), distinct execution
    /// graphs), counted by the `Exhaustive` strategy, under RC11 and under a
    /// [preemption bound](crate::Builder::preemption_bound), where the
    /// reduction may run a trace more than once. `None` for the optimal
    /// partial-order reduction under sequential consistency, whose
    /// executions are the traces.
    pub fn traces(&self) -> Option<u64> {
        self.traces
    }

    /// Redundant executions: ones that added no new trace because the
    /// explorer could not avoid them (0 for an optimal exploration).
    pub fn sleep_set_blocked(&self) -> u64 {
        self.sleep_set_blocked
    }

    /// Whether every behaviour was explored: false if a budget
    /// (`max_executions`, `max_duration`) cut the exploration short, if it
    /// stopped at a failure, or if a
    /// [preemption bound](crate::Builder::preemption_bound) left out at
    /// least one execution (then see
    /// [`complete_within_bound`](Self::complete_within_bound)).
    pub fn complete(&self) -> bool {
        self.complete
    }

    /// The [preemption bound](crate::Builder::preemption_bound) the result
    /// holds up to: the bound set, or, when kase deepened the bound under a
    /// time budget, the deepest bound it explored fully (or the one it was
    /// exploring when it found a failure). `None` without a bound, if a
    /// budget stopped even bound 0, or if the
    /// [trial without the bound](crate::Builder::unbounded_trial) ended the
    /// exploration (it explored everything, found a failure, or ran out of
    /// a budget).
    pub fn preemption_bound(&self) -> Option<usize> {
        self.preemption_bound
    }

    /// Whether every execution with at most
    /// [`preemption_bound`](Self::preemption_bound) preemptions was explored
    /// and no failure was found among them. The search is then complete
    /// only up to that bound, unless [`complete`](Self::complete) says it
    /// is complete outright (the bound left nothing out). False without a
    /// bound.
    pub fn complete_within_bound(&self) -> bool {
        self.complete_within_bound
    }

    /// Whether the result comes from a partial-order reduction
    /// (`Strategy::Por`: the unfolding, the revisit explorer, or under a
    /// preemption bound the bounded reduction). False for
    /// `Strategy::Exhaustive` and where a reduction gave the model up to
    /// the depth-first search.
    pub fn reduction(&self) -> bool {
        self.reduction
    }

    /// The failure found, if any. Exploration stops at the first one.
    pub fn failure(&self) -> Option<&Failure> {
        self.failure.as_ref()
    }

    /// Most events the partial-order explorer held in its unfolding at once,
    /// or, over RC11 execution graphs, the revisit explorer in the graphs it
    /// has yet to run (`None` for strategies without either). Stays
    /// proportional to the explored branch and its alternatives, not to the
    /// number of executions.
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
        match (&self.graphs, &self.graph_explorer) {
            (Some(_), Some(explorer)) => write!(f, " (RC11 execution graphs: {explorer})")?,
            (Some(_), None) => write!(f, " (RC11 execution graphs)")?,
            _ => {}
        }
        match (&self.failure, &self.stopped_by) {
            (Some(_), _) => write!(f, "; stopped at the first failure")?,
            (None, Some(budget)) => write!(f, "; INCOMPLETE: stopped by {budget}")?,
            (None, None) if self.cut => write!(
                f,
                "; incomplete: the model skipped choices (stop_exploring, skip_branch)"
            )?,
            (None, None) if !self.complete && self.complete_within_bound => {
                if let Some(bound) = self.preemption_bound {
                    write!(f, "; complete up to {}", preemptions(bound))?;
                }
            }
            (None, None) => write!(f, "; complete")?,
        }
        match (self.preemption_bound, &self.stopped_by) {
            (Some(bound), Some(_)) if self.complete_within_bound && self.failure.is_none() => {
                write!(f, " (complete up to {})", preemptions(bound))
            }
            (Some(_), _) if self.reduction => write!(f, " (bounded partial-order reduction)"),
            (Some(_), _) => write!(f, " (bounded DFS, no reduction)"),
            (None, _) => Ok(()),
        }
    }
}

/// "1 preemption", "2 preemptions".
pub(crate) fn preemptions(n: usize) -> String {
    format!("{n} preemption{}", if n == 1 { "" } else { "s" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bounded_summary_says_how_far_it_holds() {
        let mut report = Report::empty();
        report.preemption_bound = Some(2);
        report.complete_within_bound = true;
        let text = report.to_string();
        assert!(
            text.ends_with("; complete up to 2 preemptions (bounded DFS, no reduction)"),
            "{text}"
        );
        report.reduction = true;
        let text = report.to_string();
        assert!(
            text.ends_with("; complete up to 2 preemptions (bounded partial-order reduction)"),
            "{text}"
        );
        report.reduction = false;
        report.complete = true;
        assert!(
            report.to_string().contains("; complete (bounded DFS"),
            "{report}"
        );
        report.complete = false;
        report.stopped_by = Some("max_duration = 1s".into());
        report.preemption_bound = Some(1);
        assert!(
            report
                .to_string()
                .ends_with("stopped by max_duration = 1s (complete up to 1 preemption)"),
            "{report}"
        );
    }
}

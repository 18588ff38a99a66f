//! Exploration: runs the model execution after execution, each following a
//! schedule chosen by an [`Explorer`], until every behaviour is covered, a
//! failure is found, or a budget runs out.
//!
//! The flow has one owner, [`pipeline::run`] (one `Builder::explore` call:
//! saved schedules, the exploration, a simpler failure, saving it). It runs
//! [`search`] (one exploration loop) over a [`Runner`] (`runner.rs`), the
//! only place that starts executions, through `exec::executor`. The
//! explorers are `por` (the reduction), `exhaustive` (the oracle), `replay`
//! (a schedule string) and `determinism` (the same schedule twice).

mod bounded;
mod budget;
mod canonical;
mod determinism;
mod estimate;
mod exhaustive;
mod minimize;
mod por;
pub use por::bench::UnfoldingProbe;
mod pipeline;
mod replay;
mod revisit;
mod runner;
mod search;
mod trace;
mod unseen;

pub use por::Alternatives;

pub(crate) use crate::settings::Settings;

/// Why an explorer that orders events by objects gives a model up: a spin
/// whose iterations write waited for another thread to run
/// (`exec/spin/alone.rs`), which no object orders.
pub(crate) fn alone_spin(
    (thread, at): (
        crate::exec::ThreadIdx,
        &'static std::panic::Location<'static>,
    ),
) -> String {
    format!(
        "{thread} spins at {at} repeating an iteration that writes back what it read: a yield that \
         waits for another thread to run"
    )
}
/// Why a reduction gives a model up: spinning threads brought the whole
/// state back to that at an earlier point (`exec/spin/repeat.rs`), which
/// only a search of every interleaving may end an execution for.
pub(crate) fn repeated_state(
    (thread, at): (
        crate::exec::ThreadIdx,
        &'static std::panic::Location<'static>,
    ),
) -> String {
    format!(
        "spinning threads bring the state back to where it was (seen before {thread}'s step at \
         {at}): a search of every interleaving ends such rounds"
    )
}

pub(crate) use pipeline::run;
pub(crate) use runner::{Runner, Trail};

use crate::exec::{Outcome, Scheduler};

/// Which exploration algorithm to use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Strategy {
    /// Unfolding-based partial-order reduction (the default): one execution
    /// per Mazurkiewicz trace with [`Alternatives::Optimal`].
    #[default]
    Por,
    /// Every interleaving, without reduction: the oracle. Counts distinct
    /// Mazurkiewicz traces ([`Report::traces`](crate::Report::traces)).
    /// With a [preemption bound](crate::Builder::preemption_bound), every
    /// interleaving within the bound (the bounded oracle).
    Exhaustive,
}

/// Which memory model atomics follow: Rust's (the default) or sequential
/// consistency.
///
/// ```
/// # extern crate kase_rt as kase;
/// use kase::sync::atomic::{AtomicBool, Ordering::{Acquire, Release}};
/// use kase::sync::Arc;
/// use kase::{thread, Builder, MemoryModel};
///
/// // Store buffering with Release/Acquire: both loads may read `false`.
/// let report = Builder::new().explore(|| {
///     let (x, y) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
///     let (x2, y2) = (x.clone(), y.clone());
///     let t = thread::spawn(move || {
///         y2.store(true, Release);
///         x2.load(Acquire)
///     });
///     x.store(true, Release);
///     let seen = y.load(Acquire);
///     let other = t.join().unwrap();
///     assert!(seen || other, "both loads read false");
/// });
/// let failure = report.failure().expect("found under RC11, the default");
/// assert!(report.graph_exploration().is_some());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum MemoryModel {
    /// Sequential consistency: a load reads the latest store of the
    /// interleaving, whatever its ordering; weaker orderings only weaken
    /// happens-before (data races on tracked cells). Exact for programs
    /// whose atomics and fences are all `SeqCst`; for others it misses
    /// behaviours real machines have. The opt-out: the interleaving
    /// explorers with peeking, and nothing else.
    SequentiallyConsistent,
    /// Rust's memory model (RC11 with C++20 release sequences; the
    /// default): a load may read any store coherence allows, and stores
    /// take any consistent place in their location's modification order.
    /// While every atomic access and fence is `SeqCst`, RC11 allows exactly
    /// the interleavings' behaviours and kase explores interleavings (the
    /// unfolding with peeking); at the first weaker one made while another
    /// thread may run (not alone before the first spawn or after the last
    /// join) it discards them and explores execution graphs instead
    /// ([`Report::graph_exploration`](crate::Report::graph_exploration)
    /// says why): [`Strategy::Por`] runs one execution per graph,
    /// [`Strategy::Exhaustive`] every interleaving with every choice of
    /// store, and [`Report::traces`](crate::Report::traces) counts graphs.
    #[default]
    Rc11,
}

/// Which explorer went over RC11's execution graphs
/// ([`Report::graph_explorer`](crate::Report::graph_explorer)).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum GraphExplorer {
    /// Exactly one execution per consistent graph, extending graphs and
    /// revisiting reads when a store comes (TruSt, POPL 2022): for models
    /// whose shared objects are atomics, fences, mutexes (`lock`), threads
    /// and tracked cells.
    /// (A spin loop that re-reads a stale value can only wait: such an
    /// execution ends early, counted as redundant.)
    Revisits,
    /// Each graph's canonical interleaving run to the end and the other
    /// interleavings cut short (counted as redundant): for models that also
    /// use `try_lock`, condvars, `RwLock`s, channels or other shim objects,
    /// which the revisit explorer does not take yet.
    Canonical {
        /// The first such operation, e.g. `Lock on a Mutex`.
        because: String,
    },
    /// Under a [preemption bound](crate::Builder::preemption_bound), every
    /// choice of store in the interleavings the bounded partial-order
    /// reduction runs: one per order of the dependent steps within the
    /// bound.
    BoundedReduction,
    /// Every interleaving with every choice of store
    /// ([`Strategy::Exhaustive`], or a preemption bound on a model the
    /// bounded reduction gave up): the oracle.
    Exhaustive,
}

impl std::fmt::Display for GraphExplorer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GraphExplorer::Revisits => f.write_str("revisits"),
            GraphExplorer::Canonical { because } => {
                write!(f, "canonical interleavings, as the model uses {because}")
            }
            GraphExplorer::BoundedReduction => f.write_str("the bounded partial-order reduction"),
            GraphExplorer::Exhaustive => f.write_str("every interleaving"),
        }
    }
}

/// A scheduler that also decides, after each execution, whether (and how)
/// there is another one to run.
pub(crate) trait Explorer: Scheduler {
    /// Called after each execution. `Ok(true)`: run another one; `Ok(false)`:
    /// exploration finished; `Err`: the execution did not follow its schedule.
    fn advance(&mut self, outcome: &Outcome) -> Result<bool, String>;

    /// Whether it is a reduction (runs fewer executions than there are
    /// interleavings), which then counts no traces of its own.
    fn reduces(&self) -> bool {
        false
    }

    /// Redundant (sleep-set-blocked) executions so far.
    fn redundant(&self) -> u64 {
        0
    }

    /// The exploration's deadline, for explorers whose work between two
    /// executions can take long: they stop it there.
    fn set_deadline(&mut self, _deadline: Option<std::time::Instant>) {}

    /// Whether the deadline stopped the explorer while it computed the
    /// next execution (its last `advance` said "done" for that reason).
    fn interrupted(&self) -> bool {
        false
    }

    /// Most events held in the unfolding at once, for explorers that keep one.
    fn peak_events(&self) -> Option<usize> {
        None
    }

    /// Whether a choice made while the model turned exploring off
    /// (kase-loom's `stop_exploring`, `skip_branch`) had another way left
    /// untried: the exploration is then incomplete by the model's request.
    fn cut(&self) -> bool {
        false
    }

    /// Whether a preemption bound left out at least one choice: the
    /// exploration then covers only the executions within the bound.
    fn pruned(&self) -> bool {
        false
    }

    /// The part of the exploration done, between 0 and 1, estimated from
    /// the search tree (`estimate.rs`); `None` for explorers without one.
    fn explored(&self) -> Option<f64> {
        None
    }

    /// Why the model is outside what this explorer takes, once it found
    /// out (it then stops, and the caller explores with another one).
    fn unsupported(&self) -> Option<String> {
        None
    }

    /// With `unsupported`: whether the bounded reduction takes the model
    /// once it orders every yield with every step (`bounded.rs`).
    fn takes_it_ordering_yields(&self) -> bool {
        false
    }
}

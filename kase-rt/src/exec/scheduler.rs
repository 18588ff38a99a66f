//! What the explorer sees of one execution: the events it produced, the
//! choice points at which a [`Scheduler`] picks the next thread, why an
//! execution stopped early ([`Stop`], [`Fault`]), and its [`Outcome`].
//!
//! This is the whole interface between `exec` and `explore`: an explorer
//! implements [`Scheduler`], starts executions through
//! [`Executor::run`](super::executor::Executor::run), and reads [`Outcome`]s.

use std::any::Any;
use std::panic::Location;
use std::sync::Arc;

use super::action::{Action, ObjectIdx, ObjectKind, ThreadIdx};
use super::call::Call;
use super::clock::VectorClock;
use super::execution::Execution;
use super::hb::CellAccess;
use super::heap::Site;
use super::panic::PanicInfo;
use super::thread::ThreadInterner;
use super::watchdog::Watch;

/// One visible operation that happened.
#[derive(Clone, Debug)]
pub struct Event {
    /// What happened.
    pub action: Action,
    /// Where in the user's code.
    pub location: &'static Location<'static>,
    /// A value worth showing (loaded / stored value, spawned thread).
    pub value: Option<u64>,
    /// Whether it changed its object (a failed CAS or try-lock did not).
    pub modified: bool,
    /// Whether it stored (a failed CAS did not; a read-modify-write that
    /// wrote back the value it read did, though it modified nothing).
    pub stored: bool,
    /// The stack at the operation, captured (unresolved) only with
    /// `KASE_BACKTRACE=1`.
    pub backtrace: Option<Box<backtrace::Backtrace>>,
    /// The user-level operation of a shim it is part of, for reports
    /// (boxed: most events are part of none, and events are many).
    pub call: Option<Box<Call>>,
    /// Whether the model wanted the choices this event made explored
    /// (`Exploring`): false after kase-loom's `stop_exploring` or
    /// `skip_branch` until `explore`.
    pub explore: bool,
}

/// One more than the largest object index `events` touch (0 if none): the
/// length of a table by object for them.
pub(crate) fn objects_touched(events: &[Event]) -> usize {
    events
        .iter()
        .filter_map(|e| e.action.object)
        .map(|o| o.0 as usize + 1)
        .max()
        .unwrap_or(0)
}

/// Steps that lead from a state back to it, and that every thread able to
/// run took part in: repeated forever, they are an execution in which no
/// thread is starved and none gets anywhere (a livelock).
#[derive(Clone, Debug)]
pub struct Cycle {
    /// The number of events before the state first held.
    pub since: usize,
    /// The number of events when it came back.
    pub until: usize,
    /// The threads that ran in between: each one's next operation, and
    /// where it is.
    pub threads: Vec<(Action, &'static Location<'static>)>,
}

/// Why an execution stopped early.
pub enum Fault {
    /// A model thread panicked and nothing caught it.
    Panic {
        /// The thread.
        thread: ThreadIdx,
        /// Message and location.
        info: PanicInfo,
        /// The original payload, to re-raise.
        payload: Box<dyn Any + Send>,
    },
    /// No thread can run, and some have not finished.
    Deadlock {
        /// What each blocked thread waits to do, and the user-level
        /// operation of a shim it waits in.
        blocked: Vec<(Action, &'static Location<'static>, Option<Call>)>,
        /// The blocked threads that are spinning (`exec/spin`): each is back
        /// in a state it was in at an earlier yield, and waits for another
        /// thread to change one of these objects (none: nothing can).
        spinning: Vec<(ThreadIdx, Vec<ObjectIdx>)>,
    },
    /// The execution exceeded `max_steps` visible operations, or came back
    /// to an earlier state by steps a fair scheduler can repeat forever.
    Livelock {
        /// The steps run (the bound, if that was hit).
        steps: u64,
        /// The cycle of states, if one was found (`exec/spin/repeat.rs`).
        cycle: Option<Cycle>,
    },
    /// Two accesses to a tracked cell, at least one a write, not ordered by
    /// happens-before.
    DataRace {
        /// The access made first in this execution.
        earlier: CellAccess,
        /// The access that raced with it.
        later: CellAccess,
    },
    /// Every thread finished, but `Arc`s created in the execution are still
    /// alive: a reference cycle, a forgotten or leaked `Arc`, or a `static`
    /// keeping one past the end of the model.
    LeakedArcs {
        /// Each such `Arc`: the thread that created it, and where.
        arcs: Vec<(ThreadIdx, &'static Location<'static>)>,
    },
    /// A tracked allocation (`kase::alloc`) was used after it was freed: an
    /// object in it accessed, or the block freed again (`again`).
    UseAfterFree {
        /// Who allocated the block, and where.
        allocated: Site,
        /// Who freed it first, and where.
        freed: Site,
        /// The access (or second free) after the free.
        access: Site,
        /// The access is a second free.
        again: bool,
    },
    /// A free of a tracked allocation and an earlier access to an object in
    /// it that happens-before does not order.
    FreeRace {
        /// Who allocated the block, and where.
        allocated: Site,
        /// The access.
        access: CellAccess,
        /// The free.
        free: Site,
    },
    /// Every thread finished, but tracked allocations (`kase::alloc`) were
    /// never freed.
    LeakedAllocations {
        /// Who allocated each, and where.
        blocks: Vec<Site>,
    },
    /// The run did not follow the schedule it was told to follow.
    Divergence {
        /// What differed.
        message: String,
    },
    /// With critical-section peeking, a data race under the happens-before
    /// that every interleaving of this trace shares: it may be in another
    /// interleaving than this one, so it is confirmed by exploring again
    /// without peeking (`explore/POR-DESIGN.md`).
    PeekingUnsound {
        /// What happened, in words.
        reason: String,
    },
}

impl std::fmt::Debug for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fault::Panic { thread, info, .. } => write!(f, "Panic({thread}: {})", info.message),
            Fault::Deadlock { blocked, .. } => write!(f, "Deadlock({} blocked)", blocked.len()),
            Fault::Livelock { steps, .. } => write!(f, "Livelock({steps})"),
            Fault::DataRace { earlier, later } => write!(
                f,
                "DataRace({} at {}, {} at {})",
                earlier.thread, earlier.location, later.thread, later.location
            ),
            Fault::LeakedArcs { arcs } => write!(f, "LeakedArcs({})", arcs.len()),
            Fault::UseAfterFree { access, freed, .. } => write!(
                f,
                "UseAfterFree({} at {}, freed by {} at {})",
                access.thread, access.at, freed.thread, freed.at
            ),
            Fault::FreeRace { access, free, .. } => write!(
                f,
                "FreeRace({} at {}, freed by {} at {})",
                access.thread, access.location, free.thread, free.at
            ),
            Fault::LeakedAllocations { blocks } => write!(f, "LeakedAllocations({})", blocks.len()),
            Fault::Divergence { message } => write!(f, "Divergence({message})"),
            Fault::PeekingUnsound { reason } => write!(f, "PeekingUnsound({reason})"),
        }
    }
}

/// A step of the execution: which thread runs next? Asked before every step;
/// it is a real choice only when `enabled` has more than one thread.
pub(crate) struct ChoicePoint<'a> {
    /// Threads whose pending operation is enabled, ascending; never empty.
    pub enabled: &'a [ThreadIdx],
    /// The thread that ran last.
    pub current: ThreadIdx,
    /// The execution so far.
    pub execution: &'a Execution,
}

/// Why a scheduler ends an execution early.
#[derive(Debug)]
pub(crate) enum Stop {
    /// The run did not follow its schedule (a failure: nondeterminism).
    Diverged(String),
    /// Every way to continue was already explored: a redundant
    /// (sleep-set-blocked) execution, not a failure.
    Redundant,
}

/// Under RC11, a choice of how an atomic access goes: which store a read
/// reads, or where a store goes in its location's modification order.
pub(crate) struct WeakPoint<'a> {
    /// The thread about to make the access.
    pub thread: ThreadIdx,
    /// How many consistent ways it can go (at least one); option 0 is the
    /// one a sequentially consistent run takes.
    pub options: usize,
    /// For each option, what it reads: the event index of the store plus
    /// one, 0 for the initial value, `usize::MAX` for a store's placement.
    pub sources: &'a [usize],
    /// For each option, where it leaves the access in the modification
    /// order: for a store's placement, the store it goes right after (event
    /// index plus one, 0 for the initial value); for a read, as `sources`.
    pub after: &'a [usize],
    /// Whether the model wants this choice explored (loom's exploration
    /// controls): if not, explorers take option 0 only.
    pub explore: bool,
    /// The interleaving explorers take option 0 (the latest store) only:
    /// kase's `Once` fast path (`AtomicIntent::latest_only`). Not a cut:
    /// the other options give nothing a program can observe. The revisit
    /// explorer, which orders accesses by reads-from alone, takes them all
    /// (a revisit of an older read is how a later thread claims the
    /// `Once`), and replays follow their schedule.
    pub latest_only: bool,
    /// The index the access's event will have in the execution.
    pub event: usize,
}

/// Decides which thread runs at each step of an execution.
pub(crate) trait Scheduler {
    /// Picks one of `point.enabled`, or stops the execution.
    fn choose(&mut self, point: &ChoicePoint<'_>) -> Result<ThreadIdx, Stop>;

    /// Picks one of `point.options` ways an atomic access goes under RC11
    /// (asked only then).
    fn choose_weak(&mut self, point: &WeakPoint<'_>) -> Result<usize, Stop>;

    /// For an explorer that replays a prefix of the previous execution:
    /// how many first events of the next execution repeat it, weak choices
    /// included, so that the executor may reuse what it computed for them.
    /// `None`, the default: this explorer does not replay prefixes (the
    /// executor then keeps nothing for a next execution).
    fn replay_prefix(&self) -> Option<usize> {
        None
    }
}

/// Limits for one execution.
pub(crate) struct Limits {
    pub max_steps: u64,
    /// Plain condvar waits may wake unnotified.
    pub spurious_wakeups: bool,
    /// Progress for the watchdog, if one watches.
    pub watch: Option<Arc<Watch>>,
    /// Capture a backtrace at every visible operation (`KASE_BACKTRACE`).
    pub backtraces: bool,
    /// Critical-section peeking: pure parts of mutex sections run as one
    /// step (`exec/peek`).
    pub peeking: bool,
    /// Keep the events' dependence clocks (`Event::clock`): only the trace
    /// fingerprint of interleavings and peeking read them.
    pub dependence_clocks: bool,
    /// The spin rule's decisions so far in this exploration (`exec/spin`).
    pub spin_memo: super::spin::SpinMemo,
    /// Atomics follow Rust's memory model (RC11, `exec/weak`), not
    /// sequential consistency.
    pub weak: bool,
    /// Test hook (`Builder::__every_read`): no load is latest-only
    /// (`WeakPoint::latest_only` always false).
    pub every_read: bool,
    /// The `psc` verdicts so far in this exploration (`exec/weak`).
    pub psc_memo: super::weak::PscMemo,
    /// Location histories of finished executions, for reuse (`exec/weak`).
    pub history_pool: super::weak::HistoryPool,
    /// Other buffers of finished executions' RC11 state, for reuse.
    pub graph_pool: super::weak::GraphPool,
    /// The previous execution's atomic accesses' offers, for a replayed
    /// prefix (`Scheduler::replay_prefix`).
    pub offer_cache: super::weak::OfferCache,
}

/// What one execution produced.
pub(crate) struct Outcome {
    pub events: Vec<Event>,
    /// Each event's dependence clock (by event index): for each thread, how
    /// many of its events precede it in the Mazurkiewicz trace (program
    /// order plus dependence). Empty when the exploration needs none
    /// (`Executor::set_dependence_clocks`). Kept apart from the events: an
    /// event is a third of its size without one, and most explorations
    /// need none.
    pub clocks: Vec<VectorClock>,
    /// Operations threads were waiting to perform when the execution ended
    /// (blocked at a deadlock, or anything when it stopped early).
    pub pending: Vec<Action>,
    /// The scheduler stopped it as redundant.
    pub redundant: bool,
    /// Threads chosen at choice points, in order.
    pub schedule: Vec<ThreadIdx>,
    pub fault: Option<Fault>,
    pub interner: ThreadInterner,
    /// Kinds of the objects, by index.
    pub objects: Vec<ObjectKind>,
    /// For thread objects, their thread (by object index).
    pub owners: Vec<Option<ThreadIdx>>,
    /// It ran with critical-section peeking and some pure section happened
    /// (so its schedule replays only with peeking: `kase1p:`).
    pub peeking: bool,
    /// Why peeking may have missed behaviours (`exec/peek`, D1), if it
    /// may have.
    pub peek_violation: Option<String>,
    /// Under RC11: which store each read read, and the modification
    /// orders (what tells graphs apart).
    pub weak: Option<super::weak::WeakSummary>,
    /// Under RC11: the options chosen at weak choice points, in order.
    pub weak_schedule: Vec<usize>,
    /// Under sequential consistency: the first access or fence weaker than
    /// `SeqCst`, described.
    pub weaker_ordering: Option<String>,
}

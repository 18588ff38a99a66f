//! Synchronisation objects: the handle a shim embeds, and the per-execution
//! state kase keeps for each object.
//!
//! Shims are `const`-constructible, so an object cannot announce itself when
//! it is created. It registers on first use in an execution instead: the
//! handle remembers the execution's stamp and the object's index, and a stale
//! stamp (a `static`, or an object from an earlier execution) means "new in
//! this execution", which is how statics restart every execution.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use parking_lot::Mutex;

use super::action::{ObjectIdx, ObjectKind, OpKind, ThreadIdx};
use super::clock::VectorClock;
use super::dependence::{Acquires, LastAccesses};
use super::error::internal_error;
use super::gate::Gate;
use super::hb::{CellState, ObjectHb};
use super::peek::{AccessTag, ObjectTags};
use super::unsync::AtomicAccesses;

/// Embedded in every shim object; `const`-constructible.
#[derive(Debug)]
pub struct ObjectHandle {
    stamp: AtomicU64,
    index: AtomicU32,
}

impl ObjectHandle {
    /// A handle not yet registered in any execution.
    pub const fn new() -> Self {
        ObjectHandle {
            stamp: AtomicU64::new(0),
            index: AtomicU32::new(0),
        }
    }

    /// The object's index if it is registered in the execution `stamp`.
    pub(crate) fn lookup(&self, stamp: u64) -> Option<ObjectIdx> {
        // The handle is only written by the OS thread running the execution
        // that owns `stamp`, so Relaxed suffices; cross-run sharing is caught
        // in `register`.
        (self.stamp.load(Ordering::Relaxed) == stamp)
            .then(|| ObjectIdx(self.index.load(Ordering::Relaxed)))
    }

    /// Records that the object is `index` in the execution `stamp`. Returns
    /// false if another model run, live on another OS thread, registered it
    /// (a `static` shared by two tests running at once).
    pub(crate) fn register(&self, stamp: u64, index: ObjectIdx) -> bool {
        let previous = self.stamp.swap(stamp, Ordering::Relaxed);
        self.index.store(index.0, Ordering::Relaxed);
        previous == 0 || !LiveStamps::is_live_elsewhere(previous, stamp)
    }
}

impl Default for ObjectHandle {
    fn default() -> Self {
        Self::new()
    }
}

/// Execution stamps: unique per execution in the process, never 0. The high
/// bits name the exploration, so the live-run check can tell
/// "an earlier execution of mine" from "another test's run".
pub(crate) struct LiveStamps;

static NEXT_EXPLORATION: AtomicU64 = AtomicU64::new(1);
static LIVE_EXPLORATIONS: Mutex<Vec<u64>> = Mutex::new(Vec::new());
const EXECUTION_BITS: u32 = 40;

impl LiveStamps {
    /// Starts an exploration; returns its number.
    pub(crate) fn open_exploration() -> u64 {
        let exploration = NEXT_EXPLORATION.fetch_add(1, Ordering::Relaxed);
        LIVE_EXPLORATIONS.lock().push(exploration);
        exploration
    }

    /// Ends an exploration.
    pub(crate) fn close_exploration(exploration: u64) {
        LIVE_EXPLORATIONS.lock().retain(|&e| e != exploration);
    }

    /// The stamp of execution number `execution` of `exploration`.
    pub(crate) fn stamp(exploration: u64, execution: u64) -> u64 {
        (exploration << EXECUTION_BITS) | (execution & ((1 << EXECUTION_BITS) - 1))
    }

    fn is_live_elsewhere(previous: u64, current: u64) -> bool {
        let (earlier, exploration) = (previous >> EXECUTION_BITS, current >> EXECUTION_BITS);
        earlier != exploration && LIVE_EXPLORATIONS.lock().contains(&earlier)
    }
}

/// Per-execution state of a mutex or an `RwLock` beyond its [`Gate`].
#[derive(Debug, Default)]
pub(crate) struct LockState {
    pub poisoned: bool,
    /// Its critical sections may be peeked (a `Mutex` shim's whose data is
    /// zero-sized, unless it is the internal mutex of a shim; an `RwLock`
    /// is always peeked and does not read this).
    pub peekable: bool,
}

/// What kind-specific state an object has.
#[derive(Debug)]
pub(crate) enum ObjectDetail {
    /// An atomic, with the accesses `unsync_load` races are checked against.
    Atomic(AtomicAccesses),
    Mutex(LockState),
    RwLock(LockState),
    Condvar,
    /// The thread object of a model thread (the target of its spawn and
    /// join), and the thread.
    Thread(ThreadIdx),
    /// The park token of a model thread.
    Park,
    /// A tracked `UnsafeCell`: an object of visible operations only inside
    /// pure parts of critical sections (peeking).
    Cell(CellState),
}

impl Gate {
    /// The gate of a new object of this kind.
    pub(crate) fn initial(kind: ObjectKind) -> Gate {
        match kind {
            ObjectKind::Atomic => Gate::Open,
            ObjectKind::Mutex => Gate::Mutex { held: false },
            ObjectKind::RwLock => Gate::RwLock {
                writer: false,
                readers: 0,
            },
            ObjectKind::Condvar => Gate::Condvar(Box::default()),
            ObjectKind::Thread => Gate::Thread { exited: false },
            ObjectKind::Park => Gate::Park { token: false },
            ObjectKind::Cell => Gate::Open,
        }
    }
}

/// Everything kase tracks about one object in one execution, by concern.
#[derive(Debug)]
pub(crate) struct ObjectState {
    pub detail: ObjectDetail,
    /// Dependence: the clocks of its last writing event and of the reads
    /// since (`exec/dependence.rs`).
    pub dependence: LastAccesses<VectorClock, VectorClock>,
    /// Enabling: which operations may run (a function of the writes so far
    /// and of `gate_reads`).
    pub gate: Gate,
    /// The reads since the last write, kept only if the gate counts them.
    pub gate_reads: Vec<(ThreadIdx, OpKind)>,
    /// Happens-before: what it published.
    pub hb: ObjectHb,
    /// Spin loops: operations that changed it so far (spinning threads
    /// wait for more).
    pub modifications: u64,
    /// Peeking: who made the accesses a new access may depend on.
    pub tags: ObjectTags,
    /// Where its handle was at its latest use (0: it has none), to find the
    /// objects a tracked free frees (`exec/heap.rs`).
    pub address: usize,
    /// The tracked block that address lay in when last looked up.
    pub block: super::heap::BlockCache,
}

impl ObjectState {
    /// A new object; `tag_reads`: an empty buffer for its peeking tags'
    /// reads (kept from an earlier execution).
    pub(crate) fn new(detail: ObjectDetail, tag_reads: Vec<AccessTag>) -> Self {
        // Every field in one literal, the return value: assigned after it
        // was built, the record (632 bytes) was copied once more.
        let gate = Gate::initial(Self::kind_of(&detail));
        let tags = ObjectTags {
            reads: tag_reads,
            ..ObjectTags::default()
        };
        ObjectState {
            detail,
            dependence: LastAccesses::default(),
            gate,
            gate_reads: Vec::new(),
            hb: ObjectHb::default(),
            modifications: 0,
            tags,
            address: 0,
            block: super::heap::BlockCache::default(),
        }
    }

    pub(crate) fn kind(&self) -> ObjectKind {
        Self::kind_of(&self.detail)
    }

    fn kind_of(detail: &ObjectDetail) -> ObjectKind {
        match detail {
            ObjectDetail::Atomic(_) => ObjectKind::Atomic,
            ObjectDetail::Mutex(_) => ObjectKind::Mutex,
            ObjectDetail::RwLock(_) => ObjectKind::RwLock,
            ObjectDetail::Condvar => ObjectKind::Condvar,
            ObjectDetail::Thread(_) => ObjectKind::Thread,
            ObjectDetail::Park => ObjectKind::Park,
            ObjectDetail::Cell(_) => ObjectKind::Cell,
        }
    }

    /// The thread whose thread object this is, for a thread object.
    pub(crate) fn owner(&self) -> Option<ThreadIdx> {
        match self.detail {
            ObjectDetail::Thread(t) => Some(t),
            _ => None,
        }
    }

    /// Poison state of a mutex or an `RwLock`.
    pub(crate) fn lock(&mut self) -> &mut LockState {
        match &mut self.detail {
            ObjectDetail::Mutex(m) | ObjectDetail::RwLock(m) => m,
            other => internal_error!("object {other:?} used as a lock"),
        }
    }

    /// Whether `kind` by `thread` may run now.
    pub(crate) fn enabled(&self, kind: OpKind, thread: ThreadIdx) -> bool {
        self.gate.enabled(kind, thread, &self.gate_reads)
    }

    /// Whether a try-operation `kind` succeeds now.
    pub(crate) fn try_succeeds(&self, kind: OpKind) -> bool {
        self.gate.try_succeeds(kind, &self.gate_reads)
    }

    /// Whether `kind` by `thread` acquires what the object published: a
    /// lock taken, a join, a park that consumes a token.
    pub(crate) fn acquires(&self, kind: OpKind, thread: ThreadIdx) -> bool {
        match kind.props().acquires {
            Acquires::Nothing => false,
            Acquires::Release | Acquires::ReleaseAndReaders => true,
            Acquires::ReleaseIfSucceeds | Acquires::ReleaseAndReadersIfSucceeds => {
                self.try_succeeds(kind)
            }
            Acquires::ReleaseIfToken => self.enabled(OpKind::Park, thread),
        }
    }

    /// Whether a park token is there to take (a token object's gate).
    pub(crate) fn gate_token(&self) -> bool {
        matches!(&self.gate, Gate::Park { token: true })
    }

    /// Whether a condvar notification chose `thread` and it has not woken.
    pub(crate) fn gate_notified(&self, thread: ThreadIdx) -> bool {
        matches!(&self.gate, Gate::Condvar(waiters) if waiters.notified.contains(&thread))
    }

    /// Advances the gate past `kind` by `thread`.
    pub(crate) fn pass_gate(&mut self, kind: OpKind, thread: ThreadIdx) {
        if kind.writes() {
            if self.gate != Gate::Open {
                self.gate.pass_write(kind, thread, &self.gate_reads);
            }
            self.gate_reads.clear();
        } else if self.gate.counts_reads() {
            self.gate_reads.push((thread, kind));
        }
    }
}

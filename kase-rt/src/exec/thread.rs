//! Per-execution state of model threads, and the interner that gives every
//! logical thread the same [`ThreadIdx`] in every execution.

use crate::fast_hash::Map as HashMap;
use std::panic::Location;

use super::action::{Action, ObjectIdx, OpKind, ThreadIdx};
use super::call::Call;
use super::clock::VectorClock;
use super::continuation::Suspend;
use super::hb::ThreadHb;
use super::local::Locals;
use super::peek::ThreadPeek;
use super::spin::alone::AloneTrack;
use super::spin::repeat::Standing;
use super::spin::{SpinTrack, SpinWait};

/// Names threads by spawn path: the `k`-th child of a parent is the same
/// logical thread in every execution, whatever ran in between.
#[derive(Debug, Default)]
pub(crate) struct ThreadInterner {
    by_path: HashMap<(ThreadIdx, u32), ThreadIdx>,
    names: Vec<Option<String>>,
}

impl ThreadInterner {
    pub(crate) fn new() -> Self {
        ThreadInterner {
            by_path: HashMap::default(),
            names: vec![Some("main".to_owned())],
        }
    }

    /// The index of the `nth` thread spawned by `parent`.
    pub(crate) fn child(&mut self, parent: ThreadIdx, nth: u32, name: Option<String>) -> ThreadIdx {
        let next = ThreadIdx(self.names.len() as u32);
        let idx = *self.by_path.entry((parent, nth)).or_insert(next);
        if idx == next {
            self.names.push(name);
        } else if name.is_some() {
            self.names[idx.index()] = name;
        }
        idx
    }

    /// The thread's name, if it has one.
    pub(crate) fn name(&self, thread: ThreadIdx) -> Option<&str> {
        self.names.get(thread.index()).and_then(|n| n.as_deref())
    }
}

/// A visible operation a thread is waiting to perform.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pending {
    pub action: Action,
    pub location: &'static Location<'static>,
}

/// Whether a thread's operation `kind` on `object` could run, worked out
/// when the object had been passed `passes` times
/// (`Execution::object_passes`): true while the object has not been
/// passed since, as its gate and the reads it counts change only then.
#[derive(Clone, Copy, Debug)]
pub(crate) struct EnabledMemo {
    pub object: u32,
    pub kind: OpKind,
    pub passes: u32,
    pub enabled: bool,
}

impl EnabledMemo {
    /// Worked out for nothing yet (no object has this index).
    pub const NONE: EnabledMemo = EnabledMemo {
        object: u32::MAX,
        kind: OpKind::Yield,
        passes: 0,
        enabled: false,
    };
}

/// One model thread in one execution.
pub(crate) struct ThreadState {
    pub idx: ThreadIdx,
    /// Its thread object (target of spawn and join).
    pub object: ObjectIdx,
    /// Dependence clock of its last event (its causal past).
    pub clock: VectorClock,
    /// Number of events so far.
    pub events: u32,
    /// Children spawned so far (for naming them).
    pub spawned: u32,
    /// The thread that spawned it (`None` for main), and whether its
    /// closure may borrow from that thread's stack (a scoped thread): the
    /// order threads are torn down in depends on it.
    pub spawner: Option<ThreadIdx>,
    pub scoped: bool,
    pub pending: Option<Pending>,
    /// Whether its pending operation could run, as last worked out
    /// (`Execution::enabled_threads`).
    pub enabled_memo: std::cell::Cell<EnabledMemo>,
    /// Where its latest visible operation is (for std allocations, whose
    /// allocator sees no caller: `exec/heap`).
    pub latest: Option<&'static Location<'static>>,
    pub finished: bool,
    /// Set while its body runs; valid until the body returns.
    pub suspender: Option<*const dyn Suspend>,
    /// Its park token object, created on first `park` / `unpark`.
    pub park: Option<ObjectIdx>,
    /// Its happens-before clocks.
    pub hb: ThreadHb,
    /// What it did since its last modification (is it spinning?).
    pub spin: SpinTrack,
    /// Spinning: its iterations, for the rule for writing spins
    /// (`exec/spin/alone.rs`).
    pub alone: AloneTrack,
    /// What its pending yield waits for (`exec/spin`).
    pub wait: SpinWait,
    /// The fingerprint of its state at the yield it is about to announce.
    pub fingerprint: Option<u64>,
    /// The address its body's outermost frame starts at (for fingerprints).
    pub stack_top: usize,
    /// A hash of its events so far (`exec/spin`'s `SpinMemo`).
    pub history: u64,
    /// The fingerprint of the last yield it announced (`u64::MAX`: none)
    /// and a hash of its events since (`exec/spin/repeat.rs`).
    pub standing: Standing,
    /// Its `thread_local!` values.
    pub locals: Locals,
    /// Its `thread_local!` accesses since its last event: the history they
    /// follow and how many (keys of `SpinMemo::decide_change`).
    pub local_accesses: (u64, u32),
    /// Critical-section peeking: its pure part and the locks it holds.
    pub peek: ThreadPeek,
    /// The user-level operation of a shim it is in (`exec/call.rs`).
    pub call: Option<Call>,
}

impl ThreadState {
    /// A thread whose dependence clock starts as `parent_clock` and whose
    /// happens-before starts after `parent_hb` (its spawner's, or empty
    /// for the main thread), built on `parts` of an earlier execution's
    /// thread.
    pub(crate) fn new(
        idx: ThreadIdx,
        object: ObjectIdx,
        parent_clock: &VectorClock,
        parent_hb: &VectorClock,
        parts: ThreadParts,
    ) -> Self {
        let ThreadParts {
            clock_room,
            hb_clock_room,
            spin,
            peek,
        } = parts;
        let mut clock = VectorClock::with_room(clock_room);
        clock.clone_from(parent_clock);
        let hb_clock = VectorClock::with_room(hb_clock_room);
        ThreadState {
            idx,
            object,
            clock,
            events: 0,
            spawned: 0,
            spawner: None,
            scoped: false,
            pending: None,
            enabled_memo: std::cell::Cell::new(EnabledMemo::NONE),
            latest: None,
            finished: false,
            suspender: None,
            park: None,
            hb: ThreadHb::reusing(hb_clock, idx, parent_hb),
            spin,
            alone: AloneTrack::default(),
            wait: SpinWait::No,
            fingerprint: None,
            stack_top: 0,
            history: 0,
            standing: Standing {
                fingerprint: u64::MAX,
                since: 0,
            },
            locals: Locals::default(),
            local_accesses: (0, 0),
            peek,
            call: None,
        }
    }

    /// Takes the thread's growable parts, emptied, for a thread of a
    /// later execution (in place: a state is large, and moving each out
    /// cost more than the allocations it saves).
    pub(crate) fn take_parts(&mut self) -> ThreadParts {
        let mut parts = ThreadParts {
            clock_room: std::mem::take(&mut self.clock).into_room(),
            hb_clock_room: std::mem::take(&mut self.hb.clock).into_room(),
            spin: std::mem::take(&mut self.spin),
            peek: std::mem::take(&mut self.peek),
        };
        parts.spin.clear();
        parts.peek.clear();
        parts
    }
}

/// What a thread's state holds on the heap, emptied, for a thread of a
/// later execution: its clocks (on the heap in a model of more threads than
/// a clock holds inline) and its spin and peeking records. Each thread
/// allocated them anew (pol(12,3): 40 of an execution's 411 allocations).
#[derive(Default)]
pub(crate) struct ThreadParts {
    /// The clocks' heap room (`VectorClock::into_room`).
    clock_room: Vec<u32>,
    hb_clock_room: Vec<u32>,
    spin: SpinTrack,
    peek: ThreadPeek,
}

//! The explorer's state, grouped by how long it lives: the exploration tree
//! of Algorithm 1 and `D` ([`Tree`], the whole exploration, changing at
//! each backtrack), what the next execution follows ([`Plan`], set by line
//! 12), what the current execution produced so far ([`CurrentRun`], rewound
//! before each execution to the prefix it replays) and the counters the
//! report shows ([`Counters`]).
//! `U` itself, the labels and the names live in [`Por`](super::Por).

use std::panic::Location;

use super::names::Name;
use super::unfolding::{EventId, Frontier};
use crate::exec::dependence::Access;
use crate::exec::{Action, OpKind, ThreadIdx};
use crate::fast_hash::{Map, Set};

/// What thread `t` did after event `p` (a function of `p` in a deterministic
/// model): a different operation or location later is nondeterminism, a
/// different object name means both names denote one object.
#[derive(Clone, Copy)]
pub(super) struct Label {
    pub(super) kind: OpKind,
    pub(super) location: &'static Location<'static>,
    pub(super) name: Option<Name>,
}

/// The [`Label`] first seen after each history `(t, pred)`, by `pred`: a
/// table by event id (slot 0 for no predecessor), with the rare second
/// thread after one event (a spawn's child) kept aside. Every event run
/// looks its label up, and a pruning drops those after pruned events: in
/// a hash map the lookups hashed and the pruning walked the whole map,
/// each a cache miss per entry once `U` outgrew the L2.
#[derive(Default)]
pub(super) struct Labels {
    first: Vec<Option<(ThreadIdx, Label)>>,
    more: Map<(ThreadIdx, Option<EventId>), Label>,
}

impl Labels {
    fn slot(pred: Option<EventId>) -> usize {
        pred.map_or(0, |p| p as usize + 1)
    }

    /// The label seen after `(t, pred)`, if one was.
    pub(super) fn get(&self, t: ThreadIdx, pred: Option<EventId>) -> Option<&Label> {
        match self.first.get(Self::slot(pred)) {
            Some(Some((u, label))) if *u == t => Some(label),
            Some(Some(_)) => self.more.get(&(t, pred)),
            _ => None,
        }
    }

    /// The label seen after `(t, pred)`, `here` if none was (then kept).
    pub(super) fn first_or_insert(
        &mut self,
        t: ThreadIdx,
        pred: Option<EventId>,
        here: Label,
    ) -> Label {
        let i = Self::slot(pred);
        if self.first.len() <= i {
            self.first.resize(i + 1, None);
        }
        match &self.first[i] {
            None => {
                self.first[i] = Some((t, here));
                here
            }
            Some((u, label)) if *u == t => *label,
            Some(_) => *self.more.entry((t, pred)).or_insert(here),
        }
    }

    /// Keeps the labels after kept events (and of first events).
    pub(super) fn retain(&mut self, kept: impl Fn(EventId) -> bool) {
        for (i, slot) in self.first.iter_mut().enumerate().skip(1) {
            if slot.is_some() && !kept(i as EventId - 1) {
                *slot = None;
            }
        }
        self.more.retain(|(_, pred), _| pred.map_or(true, &kept));
    }
}

/// The object state the explorer shadows for one runtime object.
pub(super) struct ObjState {
    /// Its canonical name (before later merges: always go through `find`).
    pub(super) name: Name,
    /// Its last write and the reads of it in the current configuration.
    pub(super) frontier: Frontier,
    /// Its accesses in the current configuration: position, event and
    /// whether it wrote (for its frontier after a prefix, [`ObjState::frontier_at`]).
    pub(super) accesses: Vec<(usize, EventId, Access)>,
}

impl ObjState {
    /// Its frontier after the first `len` events of the configuration: the
    /// last write before `len` and the reads of it since.
    pub(super) fn frontier_at(&self, len: usize) -> Frontier {
        let (write, reads) = self.frontier_parts_at(len);
        // Room for one more: callers often record the next access.
        let mut f = Frontier {
            write,
            reads: Vec::with_capacity(reads.len() + 1),
        };
        f.reads.extend(reads.map(|&(_, e, _)| e));
        f
    }

    /// [`frontier_at`](Self::frontier_at) without a copy: the last write
    /// and the accesses that are the reads of it.
    pub(super) fn frontier_parts_at(
        &self,
        len: usize,
    ) -> (
        Option<EventId>,
        std::slice::Iter<'_, (usize, EventId, Access)>,
    ) {
        let end = self.accesses.partition_point(|&(pos, ..)| pos < len);
        let before = &self.accesses[..end];
        let last_write = before.iter().rposition(|&(_, _, a)| a == Access::Write);
        let reads = &before[last_write.map_or(0, |w| w + 1)..];
        (last_write.map(|w| before[w].1), reads.iter())
    }
}

/// A choice point of the current execution: a node of Algorithm 1's tree
/// (one call of `Explore(C, D, A)` that has more than one enabled event).
pub(super) struct Node {
    /// Scheduler step at which the choice is made.
    pub(super) step: usize,
    /// Size of the configuration `C` at the choice.
    pub(super) config_len: usize,
    /// The event chosen (`e` of line 10), once it ran.
    pub(super) event: Option<EventId>,
    /// Units this node added to `D` when taking right branches (line 12),
    /// by their last event.
    pub(super) added: Vec<EventId>,
    /// The nearest shallower node with units in `added` when this one was
    /// pushed. It stays so while this node exists: only the deepest node
    /// adds units. The comb walks these links (`comb.rs`), not every
    /// shallower node: a scan of the whole stack at every node made long
    /// executions of several threads quadratic.
    pub(super) source: Option<usize>,
    /// The model wanted this choice explored (loom's exploration
    /// controls): if not, no alternative is sought here.
    pub(super) explore: bool,
}

/// Algorithm 1's recursion, made explicit: the stack of `Explore` calls
/// along the current execution and the set `D` of each. Lives for the
/// whole exploration; nodes are pushed as the execution makes choices and
/// popped when they have no alternative left.
#[derive(Default)]
pub(super) struct Tree {
    /// The choice points of the current execution, root first.
    pub(super) nodes: Vec<Node>,
    /// `D`: units, by their last event (a pure part of a critical section
    /// is one unit), counted per node that added them.
    pub(super) in_d: Map<EventId, u32>,
    /// The units of `in_d`, listed: a hash table keeps the capacity of the
    /// largest `D` of the run, and listing its keys walked all of it (a
    /// fifteenth of pol(12,3)'s simulated L1 misses, cachegrind).
    pub(super) d_units: Vec<EventId>,
    /// How many units of `d_units` each thread has (by thread index): a
    /// thread with none cannot run into `D`, and asking which event it
    /// would run next is a lookup in `U` (`Por::next_unit_in_d`).
    pub(super) d_threads: Vec<u32>,
    /// The units of `D` that are pure parts, by their first event.
    pub(super) d_by_first: Map<EventId, Vec<EventId>>,
    /// By node (depth): spike candidates of the units the node put in `D`,
    /// filtered once against its configuration (`comb.rs`). Past the last
    /// node, emptied caches of popped nodes, for new ones (each grew its
    /// tables from nothing otherwise: 1.6 % of mpat(5) in rehashing). Kept
    /// apart from the nodes and emptied where they are: moved out of a
    /// popped node, emptied and moved on to a spare list, a cache went
    /// through the stack in pieces that wide loads then could not take
    /// from the stores (a sixth of `advance`'s samples on mpat(6)).
    pub(super) spikes: Vec<std::cell::RefCell<super::comb::SpikeCache>>,
}

/// What the next execution follows, set when `Alt` found a clue (line 12):
/// the schedule that rebuilds `C`, and `A = J \ C`.
#[derive(Default)]
pub(super) struct Plan {
    /// The threads chosen up to the node's step, replayed as they were.
    pub(super) replay: Vec<ThreadIdx>,
    /// The events the replayed prefix must produce (else nondeterminism).
    pub(super) expected: Vec<EventId>,
    /// The actions and places of those events, as they ran: while an
    /// execution repeats them, what processing them gave last time stands
    /// (`CurrentRun::rewind`, `Por::replays_unchanged`).
    pub(super) expected_actions: Vec<(Action, &'static Location<'static>)>,
    /// `A`: the clue's events not yet run (each leaves as it runs).
    pub(super) guide: Set<EventId>,
    /// How many of the replayed prefix's events were taken into `U` with
    /// their conflicting extensions among themselves, none pruned since,
    /// and no pure part open after them (`Por::closed_prefix`: with
    /// peeking, extra predecessors depend on where a part ends).
    /// `Por::add_extensions` places those again only after what is new.
    pub(super) placed: usize,
}

/// What the current execution has produced: the configuration `C` as a
/// sequence, and the explorer's shadow of each object and thread. Rewound
/// before every execution to the prefix the next one replays
/// ([`CurrentRun::rewind`]).
#[derive(Default)]
pub(super) struct CurrentRun {
    /// How many of the execution's events were taken into `U` so far.
    pub(super) processed: usize,
    /// How many of its first events were found to repeat the plan's
    /// ([`Plan::expected_actions`]).
    pub(super) repeated: usize,
    /// How many of the first events processed are the last execution's,
    /// kept by [`rewind`](Self::rewind): they stand for this execution's
    /// as far as it repeats them (`repeated`).
    pub(super) kept: usize,
    /// Whether the kept events were checked against processing them again
    /// (kase's own tests, `Por::check_kept_events`).
    pub(super) kept_checked: bool,
    /// `C`, in the order the events ran.
    pub(super) config: Vec<EventId>,
    /// Each event's position in `config`.
    pub(super) pos: Positions,
    /// Per thread, its events in `config` with their positions, in order.
    pub(super) positions: Vec<Vec<(usize, EventId)>>,
    /// Per thread, its latest event (the thread predecessor of its next).
    pub(super) last: Vec<Option<EventId>>,
    /// Per thread, the event that spawned it and that event's position
    /// (its thread predecessor until it has events of its own).
    pub(super) spawned_at: Vec<Option<(usize, EventId)>>,
    /// The position of the first event that began a pure part (peeking),
    /// if the execution began one.
    pub(super) first_pure: Option<usize>,
    /// Per runtime object, its name and frontier (`None`: not used yet).
    pub(super) objects: Vec<Option<ObjState>>,
    /// Scheduler steps taken.
    pub(super) steps: usize,
    /// The thread chosen at each step (the schedule to replay later).
    pub(super) chosen: Vec<ThreadIdx>,
    /// The node whose event is the next one to run.
    pub(super) awaiting: Option<usize>,
    /// Nondeterminism seen, reported at the next choice.
    pub(super) diverged: Option<String>,
    /// The execution ran a unit of `D` (only possible with peeking, if a
    /// guided pure part turned out differently): it is redundant.
    pub(super) hit_d: bool,
    /// Emptied object shadows of earlier executions, for
    /// [`new_object`](Self::new_object): most executions use the same
    /// objects, and their buffers need not be allocated again.
    spare_objects: Vec<ObjState>,
    /// Whether two of its runtime objects have one canonical name, with
    /// the unfolding's generation and the object count it was found for
    /// (`Por::names_shared`).
    pub(super) names_shared: std::cell::Cell<Option<((u64, usize), bool)>>,
}

impl CurrentRun {
    /// A shadow for an object first used now, named `name`.
    pub(super) fn new_object(&mut self, name: Name) -> ObjState {
        match self.spare_objects.pop() {
            Some(mut o) => {
                o.name = name;
                o
            }
            None => ObjState {
                name,
                frontier: Frontier::default(),
                accesses: Vec::new(),
            },
        }
    }

    /// Prepares the next execution, which replays the first `len` events of
    /// this one (`Plan::expected_actions`): what they produced stays, taken
    /// as it is; the rest is forgotten. What an execution chose and met is
    /// its own.
    pub(super) fn rewind(&mut self, len: usize) {
        self.rewind_events(len);
        self.kept = self.processed;
        self.kept_checked = false;
        self.repeated = 0;
        self.steps = 0;
        self.chosen.clear();
        self.awaiting = None;
        self.diverged = None;
        self.hit_d = false;
    }

    /// Forgets every event from position `len` on, as if the first `len`
    /// were all that was processed.
    pub(super) fn rewind_events(&mut self, len: usize) {
        if len >= self.processed {
            return;
        }
        self.processed = len;
        self.pos.clear(&self.config[len..]);
        self.config.truncate(len);
        // Threads keep their (emptied) lists: an empty list reads as a
        // thread without events.
        for list in &mut self.positions {
            let kept = list.partition_point(|&(i, _)| i < len);
            list.truncate(kept);
        }
        for spawn in &mut self.spawned_at {
            if spawn.is_some_and(|(i, _)| i >= len) {
                *spawn = None;
            }
        }
        let threads = self.last.len();
        self.last.clear();
        self.last.extend((0..threads).map(|t| {
            let own = self
                .positions
                .get(t)
                .and_then(|l| l.last())
                .map(|&(_, e)| e);
            own.or_else(|| self.spawned_at.get(t).copied().flatten().map(|(_, e)| e))
        }));
        for slot in &mut self.objects {
            let Some(o) = slot else {
                continue;
            };
            // Its frontier after the first `len` events, in place.
            let mut frontier = std::mem::take(&mut o.frontier);
            let (write, reads) = o.frontier_parts_at(len);
            frontier.write = write;
            frontier.reads.clear();
            frontier.reads.extend(reads.map(|&(_, e, _)| e));
            o.frontier = frontier;
            let kept = o.accesses.partition_point(|&(i, ..)| i < len);
            o.accesses.truncate(kept);
            if kept == 0 {
                // First used later: bound again when it is.
                let o = slot.take().expect("checked");
                self.spare_objects.push(o);
            }
        }
        if self.first_pure.is_some_and(|i| i >= len) {
            self.first_pure = None;
        }
        self.names_shared.set(None);
    }
}

/// Counters over the whole exploration.
#[derive(Default)]
pub(super) struct Counters {
    /// Executions that were redundant (sleep-set blocked, line 5).
    pub(super) redundant: u64,
    /// The most events `U` held.
    pub(super) peak_events: usize,
    /// Guided runs that dropped their guide because a pure part's
    /// completion differed from the alternative's (see POR-DESIGN.md).
    pub(super) abandoned_guides: u64,
    /// Size of `U` after the last pruning; the next one waits until it
    /// doubles.
    pub(super) pruned_at: usize,
}

/// Each event's position in the configuration, by event id: looked up for
/// every event an execution runs and for every event a clue or placement
/// asks about, so an array, not a hash table (ids are dense: a pruning's
/// free ids are reused).
#[derive(Default)]
pub(super) struct Positions {
    /// `NONE` for an event not in the configuration.
    at: Vec<u32>,
}

/// [`Positions::at`] of an event not in the configuration.
const NONE: u32 = u32::MAX;

impl Positions {
    /// The position of `e`, if it is in the configuration.
    pub(super) fn get(&self, e: EventId) -> Option<usize> {
        match self.at.get(e as usize) {
            Some(&at) if at != NONE => Some(at as usize),
            _ => None,
        }
    }

    /// Whether `e` is in the configuration.
    pub(super) fn contains(&self, e: EventId) -> bool {
        self.get(e).is_some()
    }

    /// Records that `e` is at position `i`.
    pub(super) fn insert(&mut self, e: EventId, i: usize) {
        let e = e as usize;
        if self.at.len() <= e {
            self.at.resize(e + 1, NONE);
        }
        self.at[e] = u32::try_from(i).expect("a configuration of fewer than 2^32 events");
    }

    /// Forgets the positions of `config`'s events (all it holds).
    fn clear(&mut self, config: &[EventId]) {
        for &e in config {
            self.at[e as usize] = NONE;
        }
    }
}

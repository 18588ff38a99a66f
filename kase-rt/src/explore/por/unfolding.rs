//! The prime event structure `U`: events discovered so far, with causality
//! and conflict. See `POR-DESIGN.md` for the definitions.

use std::cell::RefCell;

use crate::fast_hash::{Map, Set};

use crate::exec::dependence::{Access, LastAccesses};
use crate::exec::error::{self_check, OrInternal};
use crate::exec::gate::Gate;
use crate::exec::{ObjectKind, OpKind, ThreadIdx};

use super::frontiers::{ByName, FrontierView, Frontiers, FrontiersBuilder};
use super::names::{Name, NameUnion};
use super::pool::WordPool;

/// Index of an event in [`Unfolding`].
pub(crate) type EventId = u32;

/// The hash of what identifies an event: thread, thread predecessor, object
/// predecessors and extra predecessors. Looking an event up hashes the parts
/// in place, without building a key.
fn key_hash(
    thread: ThreadIdx,
    pred: Option<EventId>,
    obj_preds: &[EventId],
    extra: &[EventId],
) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = crate::fast_hash::FxHasher::default();
    (thread, pred, obj_preds, extra).hash(&mut h);
    h.finish()
}

/// Appends to `reads` those of `more` it lacks (a union, in order: read
/// sets are short).
fn add_reads(reads: &mut Vec<EventId>, more: &[EventId]) {
    for &r in more {
        if !reads.contains(&r) {
            reads.push(r);
        }
    }
}

/// Predecessors an event's frontiers are merged from without allocating
/// (`Unfolding::joined_frontiers`).
const FEW_PREDS: usize = 8;

/// Whether two lists of events are equal. The lists are short and a lookup
/// compares them for nearly every event it places: an element loop beats
/// the library comparison's call (`memcmp` took a quarter of disp(5,4)).
fn same_ids(a: &[EventId], b: &[EventId]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// A neighbour list (`Unfolding::by_thread`, `by_name`): most hold one
/// event (a thread's only successor of an event, the only access after a
/// write), kept inline instead of in a vector of its own.
#[derive(Debug)]
enum IdList {
    One([EventId; 1]),
    Many(Vec<EventId>),
}

impl Default for IdList {
    fn default() -> Self {
        IdList::Many(Vec::new())
    }
}

impl IdList {
    fn as_slice(&self) -> &[EventId] {
        match self {
            IdList::One(one) => one,
            IdList::Many(many) => many,
        }
    }

    /// Appends `e` (the order of pushes is kept).
    fn push(&mut self, e: EventId) {
        match self {
            IdList::Many(many) if many.is_empty() => *self = IdList::One([e]),
            IdList::Many(many) => many.push(e),
            IdList::One([first]) => *self = IdList::Many(vec![*first, e]),
        }
    }

    /// Puts the events in the order they were made (`born`, by id).
    fn sort_by_born(&mut self, born: &[u64]) {
        if let IdList::Many(many) = self {
            many.sort_unstable_by_key(|&e| born[e as usize]);
        }
    }

    /// Keeps the events `keep` accepts, in order.
    fn retain(&mut self, keep: impl Fn(&EventId) -> bool) {
        match self {
            IdList::One([first]) if !keep(first) => *self = IdList::default(),
            IdList::One(_) => {}
            IdList::Many(many) => many.retain(keep),
        }
    }

    fn is_empty(&self) -> bool {
        self.as_slice().is_empty()
    }
}

/// [`Unfolding`]'s buffers for merging frontiers, and its pool of blocks.
#[derive(Default)]
struct MergeScratch {
    /// The new event's frontiers.
    builder: FrontiersBuilder,
    /// One object's joined reads.
    reads: Vec<EventId>,
    /// Pruned events' blocks, for new events' predecessors and frontiers.
    pool: WordPool,
}

/// Events by the hash of their key ([`key_hash`]); collisions, rare, chain
/// in `more`.
#[derive(Default)]
struct KeyIndex {
    first: Map<u64, EventId>,
    more: Map<u64, Vec<EventId>>,
}

impl KeyIndex {
    fn candidates(&self, hash: u64) -> impl Iterator<Item = EventId> + '_ {
        self.first
            .get(&hash)
            .into_iter()
            .chain(self.more.get(&hash).into_iter().flatten())
            .copied()
    }

    fn insert(&mut self, hash: u64, id: EventId) {
        if let Some(&first) = self.first.get(&hash) {
            debug_assert_ne!(first, id);
            self.more.entry(hash).or_default().push(id);
        } else {
            self.first.insert(hash, id);
        }
    }

    /// Keeps the events `keep` accepts. One pass over the tables, not a
    /// removal per dropped event: that hashed each one's key (loading its
    /// predecessor block) and probed for it, cold loads both, a third of a
    /// pruning's `perf` samples on mpat(6).
    fn retain(&mut self, keep: impl Fn(EventId) -> bool) {
        // Collisions first (nearly never any): a dropped first event of a
        // hash gives way to a kept one of its chain.
        self.more.retain(|_, ids| {
            ids.retain(|&id| keep(id));
            !ids.is_empty()
        });
        let more = &mut self.more;
        self.first.retain(|hash, id| {
            if keep(*id) {
                return true;
            }
            let Some(chain) = more.get_mut(hash) else {
                return false;
            };
            *id = chain.pop().expect("chains are not empty");
            if chain.is_empty() {
                more.remove(hash);
            }
            true
        });
    }
}

/// Where an object stands in a configuration: its last write (`None`: the
/// initial value) and the reads of that write (`exec/dependence.rs`).
pub(crate) type Frontier = LastAccesses<EventId>;

/// One event: an action after a history.
#[derive(Debug)]
pub(crate) struct Event {
    pub thread: ThreadIdx,
    pub kind: OpKind,
    pub name: Option<Name>,
    /// Previous event of the thread, or the spawn event for a child's first.
    pub pred: Option<EventId>,
    /// Its object predecessors, then its extra ones, then its thread
    /// maxima, in one allocation ([`obj_preds`](Self::obj_preds),
    /// [`extra`](Self::extra), [`tmax_at`](Self::tmax_at)).
    packed: Box<[EventId]>,
    n_obj: u32,
    n_extra: u32,
    /// With peeking, the mutex whose pure part it belongs to (its
    /// `PeekLock`, accesses and end).
    pub pure_of: Option<Name>,
    /// For each object in the history, its frontier, by canonical name
    /// (sorted; [`Unfolding::union_names`] renames merged names).
    frontiers: Frontiers,
    /// For a write: its object's gate after it (which operations it
    /// enables). `Gate::Open` for reads and events without an object.
    pub gate: Gate,
    /// Whether it changed its object when it ran (a failed CAS did not);
    /// false until it has run.
    pub modified: bool,
}

/// A thread maximum of `Event::packed` that is none (no event id reaches it).
const NO_EVENT: EventId = EventId::MAX;

impl Event {
    /// Maximal events on its object in its history (sorted).
    pub(crate) fn obj_preds(&self) -> &[EventId] {
        &self.packed[..self.n_obj as usize]
    }

    /// With critical-section peeking, the ends of other pure parts of the
    /// same mutex it depends on (rule R of POR-DESIGN.md; sorted).
    pub(crate) fn extra(&self) -> &[EventId] {
        &self.packed[self.n_obj as usize..(self.n_obj + self.n_extra) as usize]
    }

    /// For each thread (by index, up to the last one its history has),
    /// its maximal event in the history, or `NO_EVENT`.
    fn tmax_raw(&self) -> &[EventId] {
        &self.packed[(self.n_obj + self.n_extra) as usize..]
    }

    /// The maximal event of thread index `t` in its history.
    fn tmax_at(&self, t: usize) -> Option<EventId> {
        self.tmax_raw().get(t).copied().filter(|&e| e != NO_EVENT)
    }

    /// Whether its key is `(thread, pred, obj_preds, extra)`.
    fn has_key(
        &self,
        thread: ThreadIdx,
        pred: Option<EventId>,
        obj_preds: &[EventId],
        extra: &[EventId],
    ) -> bool {
        self.thread == thread
            && self.pred == pred
            && same_ids(self.obj_preds(), obj_preds)
            && same_ids(self.extra(), extra)
    }
}

/// An event's links up its thread's chain and its object's writes. They
/// live apart from the events, in one dense array: ancestor queries, the
/// exploration's commonest (conflict, causality), walk these small records
/// instead of whole events spread over memory.
#[derive(Clone, Copy, Debug, Default)]
struct Links {
    /// Previous event of the same thread (the thread tree parent).
    thread_parent: OptId,
    /// Position in its thread, from 1.
    depth: u32,
    /// A thread-tree ancestor further up (a skew-binary jump pointer,
    /// [`jump_for`]): ancestor queries take O(log depth) steps, not
    /// O(depth) (the paper's §5 asks for logarithmic causality; a walk made
    /// long executions cost quadratically per event).
    thread_jump: OptId,
    /// For a write: the previous write (write tree parent); for a read: the
    /// write it reads.
    write: OptId,
    /// Writes on the object in the history including itself (for a read:
    /// those of the write it reads).
    write_depth: u32,
    /// For a write: a write-tree ancestor further up (as `thread_jump`).
    write_jump: OptId,
    /// Its neighbour lists' indices in `Unfolding::lists` (`NO_LIST`: no
    /// object).
    thread_list: u32,
    object_list: u32,
}

/// An optional event id in four bytes (`NO_EVENT`: none). Every ancestor
/// query walks links, and with `Option<EventId>` fields a record took 48
/// bytes, not 32: fewer fit in the caches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct OptId(EventId);

impl OptId {
    fn new(e: Option<EventId>) -> Self {
        debug_assert_ne!(e, Some(NO_EVENT), "an event id is never NO_EVENT");
        OptId(e.unwrap_or(NO_EVENT))
    }

    fn get(self) -> Option<EventId> {
        (self.0 != NO_EVENT).then_some(self.0)
    }
}

impl Default for OptId {
    fn default() -> Self {
        OptId(NO_EVENT)
    }
}

/// `Links::object_list` of an event without an object.
const NO_LIST: u32 = u32::MAX;

/// The neighbour lists an event leads to (`Unfolding::anchors`).
#[derive(Clone, Copy, Debug)]
struct Anchors {
    /// Its thread's events right after it.
    next_in_thread: u32,
    /// For a write: the accesses of its object right after it.
    after_write: u32,
}

impl Default for Anchors {
    fn default() -> Self {
        Anchors {
            next_in_thread: NO_LIST,
            after_write: NO_LIST,
        }
    }
}

/// A list's index in `lists` (an empty one, recycled from `free_lists` if
/// any).
fn new_list(lists: &mut Vec<IdList>, free_lists: &mut Vec<u32>) -> u32 {
    free_lists.pop().unwrap_or_else(|| {
        lists.push(IdList::default());
        (lists.len() - 1) as u32
    })
}

/// The index of `key`'s list in `lists`, made (empty) if `key` has none.
fn list_of<K: std::hash::Hash + Eq>(
    keys: &mut Map<K, u32>,
    lists: &mut Vec<IdList>,
    free_lists: &mut Vec<u32>,
    key: K,
) -> u32 {
    *keys
        .entry(key)
        .or_insert_with(|| new_list(lists, free_lists))
}

/// The index of the list in `*slot` (an anchor), made (empty) if none.
fn anchored_list(slot: &mut u32, lists: &mut Vec<IdList>, free_lists: &mut Vec<u32>) -> u32 {
    if *slot == NO_LIST {
        *slot = new_list(lists, free_lists);
    }
    *slot
}

/// What the comb asks of most entries of a neighbour list, by event id, in
/// four bytes (the lists are long and their ids scattered: eight bytes an
/// entry cost more cache misses than they saved): whether the event writes
/// its object (the top bit), its thread ([`Dense::MANY`] from there on) and
/// a tag of its thread predecessor (its id's low bits, plus one; 0: none),
/// so that two events of one thread after different predecessors are
/// nearly always told apart without loading their links.
#[derive(Clone, Copy)]
struct Dense(u32);

impl Dense {
    const WRITES: u32 = 1 << 31;
    /// A thread index this large or larger (then not compared).
    const MANY: u32 = (1 << 15) - 1;

    fn new(writes: bool, thread: ThreadIdx, thread_parent: Option<EventId>) -> Self {
        let thread = thread.0.min(Self::MANY);
        let parent = thread_parent.map_or(0, |p| (p & 0xFFFF) + 1) & 0xFFFF;
        Dense(thread << 16 | parent | if writes { Self::WRITES } else { 0 })
    }

    fn writes(self) -> bool {
        self.0 & Self::WRITES != 0
    }

    /// The thread, if small enough to say.
    fn thread(self) -> Option<u32> {
        Some(self.0 >> 16 & Self::MANY).filter(|&t| t != Self::MANY)
    }

    /// The tag of its thread predecessor: different tags, different
    /// predecessors (equal tags decide nothing).
    fn parent_tag(self) -> u32 {
        self.0 & 0xFFFF
    }
}

/// The events of `U` and the index that identifies them across executions.
#[derive(Default)]
pub(crate) struct Unfolding {
    /// Slots of pruned events are `None` and reused.
    events: Vec<Option<Event>>,
    /// By event id, as `events` (a pruned event's entry is stale).
    links: Vec<Links>,
    /// By event id: when the event was made, counting from 1 over the
    /// whole exploration. Neighbour lists are in this order, so a cache
    /// can say how far it scanned one in a way a pruning leaves true.
    born: Vec<u64>,
    /// By event id: whether it writes its object ([`writes`](Self::writes)),
    /// its thread and a tag of its thread predecessor
    /// ([`thread_branches_apart`](Self::thread_branches_apart)), side by
    /// side: the comb asks both of one entry.
    dense: Vec<Dense>,
    /// The `born` of the last event made.
    last_born: u64,
    free: Vec<EventId>,
    live: usize,
    by_key: KeyIndex,
    pub names: NameUnion,
    /// By name (raw): the `born` of the last event made before the name
    /// was ([`fresh_name`](Self::fresh_name)). No event made earlier has
    /// it in its frontiers: a merge renames only events made later.
    name_born: Vec<u64>,
    /// Events by thread and by object name: an event's immediate conflicts
    /// share one of the two, its thread's events after the same
    /// predecessor or its object's accesses after the same write. Each
    /// event keeps its two lists' indices in `lists`
    /// (`Links::{thread_list, object_list}`): the comb asks for an event's
    /// own lists all the time, and three hash lookups in cold tables were
    /// 2.5 % of mpat(6)'s cycles. A list is found from the event it follows
    /// (`anchors`), a table is asked only for a thread's first events
    /// (`first_of_thread`) and for the accesses of an object's initial
    /// value (`initial_of`): a new event made three hash-table updates.
    first_of_thread: Map<(ThreadIdx, Option<EventId>), u32>,
    initial_of: Map<Name, u32>,
    /// By event id: the lists its thread's next events and the accesses
    /// after it (a write) are in (`NO_LIST`: none yet).
    anchors: Vec<Anchors>,
    lists: Vec<IdList>,
    /// By list index (as `lists`, empty past its end): the writes of an
    /// object's list, in its order. A read is in immediate conflict only
    /// with writes of its object (two reads commute), and under peeking a
    /// lock's list is mostly reads (`PeekLock`, `PeekUnlock`): each read
    /// walking the whole list was most of the comb's scanning on pol(12,3).
    write_lists: Vec<IdList>,
    /// Indices in `lists` of lists no key leads to (emptied by a pruning
    /// or merged into another), for new keys.
    free_lists: Vec<u32>,
    /// The kind of object each name denotes (for its initial gate).
    kinds: Map<Name, ObjectKind>,
    /// Bumped whenever neighbour lists are reordered (merged names):
    /// caches built on their prefixes are then stale.
    generation: u64,
    /// Bumped at every pruning ([`retain`](Self::retain)): neighbour lists
    /// lose entries, so their lengths no longer say what was seen. Caches
    /// that hold positions in them move those positions first
    /// (`Por::carry_caches_over_pruning`).
    prunings: u64,
    /// Scratch of [`intern`](Self::intern), and pruned events' blocks.
    /// In a cell: the frontier merges read `self` while they fill it
    /// (taken out of `self` and put back, the buffers moved through the
    /// stack at every new event, and the loads that moved them back could
    /// not be forwarded from the stores that filled them).
    scratch: RefCell<MergeScratch>,
    /// An empty history's frontiers, to fill unused merge slots with.
    no_frontiers: Frontiers,
    /// Scratch of [`intern`](Self::intern): the new event's packed
    /// predecessors and thread maxima.
    packed: Vec<EventId>,
    /// Some event has extra predecessors (peeking's rule R). Until one
    /// does, two events of one thread after one predecessor differ in their
    /// object predecessors, so they are never in immediate conflict
    /// ([`parts_refute_immediate_conflict`](Self::parts_refute_immediate_conflict)).
    has_extras: bool,
}

impl Unfolding {
    pub(crate) fn get(&self, e: EventId) -> &Event {
        self.events[e as usize]
            .as_ref()
            .or_internal("a pruned event was used")
    }

    /// Number of events held.
    pub(crate) fn len(&self) -> usize {
        self.live
    }

    /// The events held (for `bench.rs`).
    pub(crate) fn ids(&self) -> impl Iterator<Item = EventId> + '_ {
        (0..self.events.len() as EventId).filter(|&id| self.events[id as usize].is_some())
    }

    /// Drops every event for which `keep` is false. The caller guarantees
    /// the kept events are causally closed and no longer refers to the others.
    pub(crate) fn retain(&mut self, keep: impl Fn(EventId) -> bool) {
        self.prunings += 1;
        self.scratch.get_mut().pool.clear();
        // `keep` first: it reads a dense table, where the check of an
        // event's slot loads a line per event.
        for id in 0..self.events.len() as EventId {
            if !keep(id) && self.events[id as usize].is_some() {
                let ev = self.events[id as usize].take().expect("checked");
                let pool = &mut self.scratch.get_mut().pool;
                pool.give(ev.packed);
                pool.give(ev.frontiers.into_words());
                self.free.push(id);
                self.live -= 1;
            }
        }
        self.by_key.retain(&keep);
        self_check!(assert_eq!(
            self.by_key.first.len() + self.by_key.more.values().map(Vec::len).sum::<usize>(),
            self.live,
            "the key index lists the live events"
        ));
        // A listed event was live: it still is if kept.
        let live = |id: &EventId| keep(*id);
        // Lists left empty are let go (no live event refers to them): names
        // and predecessors of pruned events would otherwise pile up, one or
        // more per execution, and every pruning would walk them all. A
        // pruned event's lists hold only pruned events (the kept ones are
        // causally closed, and a list's events follow its anchor).
        // The lists in order, then the slots that name them: walking the
        // slots and visiting each one's list loaded lists in no order, a
        // miss each (a tenth of a pruning's `perf` samples on mpat(6)).
        // A list in use is never empty (it is made for a first entry), and
        // a free one always is.
        let mut emptied = vec![false; self.lists.len()];
        for (i, list) in self.lists.iter_mut().enumerate() {
            if list.is_empty() {
                continue;
            }
            list.retain(live);
            if let Some(writes) = self.write_lists.get_mut(i) {
                writes.retain(live);
                if writes.is_empty() {
                    *writes = IdList::default();
                }
            }
            if list.is_empty() {
                *list = IdList::default();
                self.free_lists.push(i as u32);
                emptied[i] = true;
            }
        }
        for anchors in self.anchors.iter_mut() {
            for slot in [&mut anchors.next_in_thread, &mut anchors.after_write] {
                if *slot != NO_LIST && emptied[*slot as usize] {
                    *slot = NO_LIST;
                }
            }
        }
        self.first_of_thread.retain(|_, i| !emptied[*i as usize]);
        self.initial_of.retain(|_, i| !emptied[*i as usize]);
        self_check!({
            let named = self
                .anchors
                .iter()
                .flat_map(|a| [a.next_in_thread, a.after_write]);
            let keyed = self
                .first_of_thread
                .values()
                .chain(self.initial_of.values());
            for i in named.chain(keyed.copied()).filter(|&i| i != NO_LIST) {
                assert!(
                    !self.lists[i as usize].is_empty(),
                    "list {i} is named but empty"
                );
            }
        });
        // A name without events keeps no kind: the current execution binds
        // its objects (and sets their kinds) again before it uses them. A
        // live event on an object has the object's first access in its
        // history (down its chain of writes), which is kept and lies in
        // the name's initial list: the names in use are those with one.
        // (Looking at every kept event's name loaded each record, most of
        // a pruning's cache misses.)
        self_check!({
            let mut named = vec![false; self.names.len()];
            for ev in self.events.iter().flatten() {
                if let Some(n) = ev.name {
                    named[self.names.find(n).raw() as usize] = true;
                }
            }
            for (i, &in_use) in named.iter().enumerate() {
                let name = Name::from_raw(i as u32);
                assert!(
                    in_use == self.initial_of.contains_key(&name),
                    "name {i}: in use {in_use}, but its initial list says otherwise"
                );
            }
        });
        let initial_of = &self.initial_of;
        self.kinds.retain(|name, _| initial_of.contains_key(name));
    }

    /// A new name, for an object met after no known event.
    pub(crate) fn fresh_name(&mut self) -> Name {
        let name = self.names.fresh();
        let i = name.raw() as usize;
        if self.name_born.len() <= i {
            self.name_born.resize(i + 1, 0);
        }
        self.name_born[i] = self.last_born;
        name
    }

    /// Records that names `a` and `b` denote one object.
    pub(crate) fn union_names(&mut self, a: Name, b: Name) {
        let (a, b) = (self.names.find(a), self.names.find(b));
        if a == b {
            return;
        }
        self.generation += 1;
        self.names.union(a, b);
        let keep = self.names.find(a);
        let moved = if keep == a { b } else { a };
        // Keep every frontier list canonical and sorted (merges are rare:
        // a few per exploration, when one object first met under two names).
        // A name is newer than the one kept (the smaller), and no event
        // made before it has it: those are passed over by birth, from a
        // dense table, without loading their records (a merge after a
        // pruning forgot an object's label walked all of `U`, a tenth of
        // the cache misses beyond the L2 on disp(5,4)).
        let moved_born = self
            .name_born
            .get(moved.raw() as usize)
            .copied()
            .unwrap_or(0);
        for id in 0..self.events.len() {
            if self.born[id] <= moved_born {
                self_check!(assert!(
                    self.events[id]
                        .as_ref()
                        .map_or(true, |ev| !ev.frontiers.contains(moved)),
                    "an event made before a name has it"
                ));
                continue;
            }
            let Some(ev) = &self.events[id] else {
                continue;
            };
            if !ev.frontiers.contains(moved) {
                continue;
            }
            let mut list: Vec<(Name, Frontier)> = ev
                .frontiers
                .iter()
                .map(|(n, f)| (n, f.to_frontier()))
                .collect();
            let i = list.iter().position(|(n, _)| *n == moved).expect("checked");
            let (_, f) = list.remove(i);
            match list.binary_search_by_key(&keep, |(n, _)| *n) {
                Ok(j) => self.join_frontier(&mut list[j].1, (&f).into()),
                Err(j) => list.insert(j, (keep, f)),
            }
            let mut builder = FrontiersBuilder::default();
            for (n, f) in &list {
                builder.push(*n, f.write, f.reads.iter().copied());
            }
            self.events[id].as_mut().expect("checked").frontiers = builder.finish();
        }
        // Accesses after a write follow it whatever its name; only the
        // accesses of the two names' initial values meet in one list.
        if let Some(from) = self.initial_of.remove(&moved) {
            match self.initial_of.entry(keep) {
                // Its events keep their list.
                std::collections::hash_map::Entry::Vacant(slot) => {
                    slot.insert(from);
                }
                std::collections::hash_map::Entry::Occupied(slot) => {
                    let to = *slot.get();
                    let events = std::mem::take(&mut self.lists[from as usize]);
                    for &e in events.as_slice() {
                        self.lists[to as usize].push(e);
                        self.links[e as usize].object_list = to;
                        if self.dense[e as usize].writes() {
                            self.push_write(to, e);
                        }
                    }
                    if let Some(writes) = self.write_lists.get_mut(from as usize) {
                        *writes = IdList::default();
                    }
                    // Neighbour lists stay in the order events were made.
                    self.lists[to as usize].sort_by_born(&self.born);
                    if let Some(writes) = self.write_lists.get_mut(to as usize) {
                        writes.sort_by_born(&self.born);
                    }
                    self.free_lists.push(from);
                }
            }
        }
        if let Some(kind) = self.kinds.remove(&moved) {
            self.kinds.entry(keep).or_insert(kind);
        }
    }

    /// Records that `e` changed its object when it ran.
    pub(crate) fn set_modified(&mut self, e: EventId, modified: bool) {
        if let Some(ev) = self.events[e as usize].as_mut() {
            ev.modified = modified;
        }
    }

    /// Records what kind of object `name` denotes.
    pub(crate) fn set_kind(&mut self, name: Name, kind: ObjectKind) {
        let canonical = self.names.find(name);
        self.kinds.entry(canonical).or_insert(kind);
    }

    /// The gate of `name`'s object after write `w` (`None`: as created).
    pub(crate) fn gate_after(&self, name: Name, w: Option<EventId>) -> Gate {
        match w {
            Some(w) => self.get(w).gate.clone(),
            None => self
                .kinds
                .get(&self.names.find(name))
                .map_or(Gate::Open, |&k| Gate::initial(k)),
        }
    }

    /// The threads and kinds of `reads`, as a gate counts them.
    pub(crate) fn read_ops(&self, reads: &[EventId]) -> Vec<(ThreadIdx, OpKind)> {
        reads
            .iter()
            .map(|&r| {
                let ev = self.get(r);
                (ev.thread, ev.kind)
            })
            .collect()
    }

    /// [`neighbour_lists`](Self::neighbour_lists) as one sequence (tests).
    #[cfg(test)]
    pub(crate) fn neighbours(&self, e: EventId) -> impl Iterator<Item = EventId> + '_ {
        let (thread, object) = self.neighbour_lists(e);
        thread.iter().chain(object).copied()
    }

    /// The events that could be in immediate conflict with `e`: those of its
    /// thread with the same predecessor, and those on its object after the
    /// same write (POR-DESIGN.md, "Immediate conflicts": any other
    /// conflicting event has a predecessor that already conflicts with `e`).
    /// Both are in the order the events were made ([`born`](Self::born)):
    /// new events go at the end, a pruning drops entries, and a merge of
    /// names (a new [`generation`](Self::generation)) sorts again.
    pub(crate) fn neighbour_lists(&self, e: EventId) -> (&[EventId], &[EventId]) {
        let link = self.link(e);
        let same_object = match link.object_list {
            NO_LIST => &[][..],
            i => self.lists[i as usize].as_slice(),
        };
        let same_thread = self.lists[link.thread_list as usize].as_slice();
        self_check!(assert!(
            (same_thread, same_object) == self.lists_by_key(e),
            "an event's neighbour lists are those of its keys"
        ));
        (same_thread, same_object)
    }

    /// The events that could be in immediate conflict with `e`, as
    /// [`neighbour_lists`](Self::neighbour_lists), but for a read only the
    /// writes on its object (two reads commute: met through their object
    /// alone, they are never in immediate conflict). In the order the
    /// events were made, as those.
    pub(crate) fn conflict_lists(&self, e: EventId) -> (&[EventId], &[EventId]) {
        if self.writes(e) {
            return self.neighbour_lists(e);
        }
        let link = self.link(e);
        let same_thread = self.lists[link.thread_list as usize].as_slice();
        let writes_on_object = match link.object_list {
            NO_LIST => &[][..],
            i => self
                .write_lists
                .get(i as usize)
                .map_or(&[][..], IdList::as_slice),
        };
        self_check!({
            let (_, same_object) = self.neighbour_lists(e);
            let writes: Vec<EventId> = same_object
                .iter()
                .copied()
                .filter(|&x| self.writes(x))
                .collect();
            assert_eq!(writes, writes_on_object, "an object list's writes");
        });
        (same_thread, writes_on_object)
    }

    /// Adds write `e` to the writes of list `i` (`write_lists`).
    fn push_write(&mut self, i: u32, e: EventId) {
        let i = i as usize;
        if self.write_lists.len() <= i {
            self.write_lists.resize_with(i + 1, IdList::default);
        }
        self.write_lists[i].push(e);
    }

    /// [`neighbour_lists`](Self::neighbour_lists) found from `e`'s keys
    /// (its thread and predecessor; its object and write), for the
    /// self-check that an event's own indices stay right.
    #[cfg(all(debug_assertions, any(test, feature = "self-check")))]
    fn lists_by_key(&self, e: EventId) -> (&[EventId], &[EventId]) {
        let (ev, link) = (self.get(e), self.link(e));
        let list = |i: Option<u32>| match i {
            Some(i) if i != NO_LIST => self.lists[i as usize].as_slice(),
            _ => &[][..],
        };
        let same_thread = match link.thread_parent.get() {
            Some(p) => list(Some(self.anchors[p as usize].next_in_thread)),
            None => list(self.first_of_thread.get(&(ev.thread, ev.pred)).copied()),
        };
        let same_object = match (ev.name, link.write.get()) {
            (None, _) => &[][..],
            (Some(_), Some(w)) => list(Some(self.anchors[w as usize].after_write)),
            (Some(n), None) => list(self.initial_of.get(&self.names.find(n)).copied()),
        };
        (same_thread, same_object)
    }

    /// Whether two events of one thread after one predecessor may be in
    /// immediate conflict: only if some event has extra predecessors (two
    /// such events without differ in their object predecessors).
    pub(crate) fn siblings_may_conflict(&self) -> bool {
        self.has_extras
    }

    /// Changes when neighbour lists are merged (reordered).
    pub(crate) fn generation(&self) -> u64 {
        self.generation
    }

    /// Changes at every pruning, when neighbour lists lose entries (and
    /// the pruned events' ids become free for new events).
    pub(crate) fn prunings(&self) -> u64 {
        self.prunings
    }

    /// When `e` was made: [`neighbour_lists`](Self::neighbour_lists) are
    /// in this order, so the entries made after some event of a list are
    /// a suffix of it, before and after a pruning.
    pub(crate) fn born(&self, e: EventId) -> u64 {
        self.born[e as usize]
    }

    /// Whether live event `e` writes its object: `get(e).kind.writes()`
    /// from a dense array. The comb asks it of every entry of an object's
    /// neighbour list, and loading each event's record for it was a third
    /// of the comb's time on disp(5,4) (cache misses, `perf annotate`).
    pub(crate) fn writes(&self, e: EventId) -> bool {
        // Under self-check only: in a user's debug build (debug assertions
        // on) the record's load was a cache miss on the hottest path.
        self_check!(assert!(
            self.events[e as usize].is_some(),
            "a pruned event was used"
        ));
        self.dense[e as usize].writes()
    }

    /// Whether live events `x` and `y` are of one thread and follow
    /// different events of it (or one follows an event of it and the other
    /// is its first): then they are never in immediate conflict
    /// ([`immediate_conflict`](Self::immediate_conflict) refutes it first).
    /// From dense tables: the comb asks it of most entries of an object's
    /// neighbour list before loading their records.
    pub(crate) fn thread_branches_apart(&self, x: EventId, y: EventId) -> bool {
        let (dx, dy) = (self.dense[x as usize], self.dense[y as usize]);
        let thread = dx.thread();
        if thread.is_none() || thread != dy.thread() {
            return false;
        }
        if dx.parent_tag() != dy.parent_tag() {
            return true;
        }
        // Different parents (two without one are equal).
        self.link(x).thread_parent != self.link(y).thread_parent
    }

    /// The entries of a neighbour list made after `born` (see
    /// [`born`](Self::born)).
    pub(crate) fn made_after<'a>(&self, list: &'a [EventId], born: u64) -> &'a [EventId] {
        &list[list.partition_point(|&x| self.born(x) <= born)..]
    }

    /// One past the largest event id in use (a bound for tables by id).
    pub(crate) fn id_bound(&self) -> usize {
        self.events.len()
    }

    /// Whether `id` is a live event with the key `(thread, pred, obj_preds,
    /// extra)`: a replayed execution checks the event it expects before
    /// looking the key up.
    pub(crate) fn has_key(
        &self,
        id: EventId,
        thread: ThreadIdx,
        pred: Option<EventId>,
        obj_preds: &[EventId],
        extra: &[EventId],
    ) -> bool {
        self.events
            .get(id as usize)
            .and_then(Option::as_ref)
            .is_some_and(|ev| ev.has_key(thread, pred, obj_preds, extra))
    }

    pub(crate) fn find(
        &self,
        thread: ThreadIdx,
        pred: Option<EventId>,
        obj_preds: &[EventId],
        extra: &[EventId],
    ) -> Option<EventId> {
        self.by_key
            .candidates(key_hash(thread, pred, obj_preds, extra))
            .find(|&id| self.get(id).has_key(thread, pred, obj_preds, extra))
    }

    /// The mutex whose pure part `thread`'s action `kind` on `name` after
    /// `pred` belongs to, if any (a function of `pred`, like the label).
    pub(crate) fn pure_of_next(
        &self,
        thread: ThreadIdx,
        kind: OpKind,
        name: Option<Name>,
        pred: Option<EventId>,
    ) -> Option<Name> {
        if kind.starts_pure_part() {
            return name.map(|n| self.names.find(n));
        }
        let p = self.get(pred?);
        (p.thread == thread && !p.kind.ends_pure_part())
            .then_some(p.pure_of)
            .flatten()
            .map(|n| self.names.find(n))
    }

    /// The event `(thread, pred, obj_preds, extra)`, created if new. `kind`,
    /// `name` describe it (they are functions of `pred`).
    pub(crate) fn intern(
        &mut self,
        thread: ThreadIdx,
        kind: OpKind,
        name: Option<Name>,
        pred: Option<EventId>,
        obj_preds: &[EventId],
        extra: &[EventId],
    ) -> (EventId, bool) {
        // Most calls meet a known event (re-placements are recomputed after
        // every execution): look it up before allocating anything.
        if let Some(id) = self.find(thread, pred, obj_preds, extra) {
            return (id, false);
        }
        self.has_extras |= !extra.is_empty();
        let hash = key_hash(thread, pred, obj_preds, extra);
        let pure_of = self.pure_of_next(thread, kind, name, pred);
        let id = self.free.pop().unwrap_or(self.events.len() as EventId);
        let thread_parent = pred.filter(|&p| self.get(p).thread == thread);
        let depth = thread_parent.map_or(1, |p| self.link(p).depth + 1);
        let thread_jump = jump_for(thread_parent, |e| {
            let l = self.link(e);
            (l.depth, l.thread_jump.get())
        });
        // The predecessor lists and the thread maxima, packed.
        let mut packed = std::mem::take(&mut self.packed);
        packed.clear();
        packed.extend_from_slice(obj_preds);
        packed.extend_from_slice(extra);
        let tmax_at = packed.len();
        for &q in pred.iter().chain(obj_preds).chain(extra) {
            self.join_tmax(&mut packed, tmax_at, q);
        }
        if packed.len() <= tmax_at + thread.index() {
            packed.resize(tmax_at + thread.index() + 1, NO_EVENT);
        }
        packed[tmax_at + thread.index()] = id;
        let packed_event: Box<[EventId]> = self.scratch.get_mut().pool.copy_of(&packed);
        self.packed = packed;
        let own = name.map(|n| self.names.find(n));
        // The event's own object: its write, its write depth and its gate,
        // written by `record` into these (none if it has no object).
        // Returned instead, wrapped in an `Option` through three frames,
        // they moved as odd-sized pieces whose loads could not be
        // forwarded from the stores (a fifth of this function's samples).
        let (mut write, mut write_depth, mut gate) = (None, 0, Gate::Open);
        let frontiers = self.joined_frontiers(id, pred, obj_preds, extra, own, |u, f| {
            // The event's access is recorded in its frontier.
            write = f.write;
            write_depth = u.wdepth(f.write) + u32::from(kind.writes());
            if kind.writes() {
                // A copy already: passed in place, not cloned once more.
                gate = u.gate_after(own.expect("own object"), f.write);
                if gate != Gate::Open {
                    gate.pass_write(kind, thread, &u.read_ops(f.reads));
                }
            }
            kind.props().access
        });
        let write_jump = if kind.writes() {
            jump_for(write, |e| {
                let l = self.link(e);
                (l.write_depth, l.write_jump.get())
            })
        } else {
            None
        };
        let event = Event {
            thread,
            kind,
            name,
            pred,
            packed: packed_event,
            n_obj: obj_preds.len() as u32,
            n_extra: extra.len() as u32,
            pure_of,
            frontiers,
            gate,
            modified: false,
        };
        let (lists, free_lists) = (&mut self.lists, &mut self.free_lists);
        let thread_list = match thread_parent {
            Some(p) => anchored_list(
                &mut self.anchors[p as usize].next_in_thread,
                lists,
                free_lists,
            ),
            None => list_of(&mut self.first_of_thread, lists, free_lists, (thread, pred)),
        };
        let object_list = match (name, write) {
            (None, _) => NO_LIST,
            (Some(_), Some(w)) => {
                anchored_list(&mut self.anchors[w as usize].after_write, lists, free_lists)
            }
            (Some(n), None) => list_of(&mut self.initial_of, lists, free_lists, self.names.find(n)),
        };
        let links = Links {
            thread_parent: OptId::new(thread_parent),
            depth,
            thread_jump: OptId::new(thread_jump),
            write: OptId::new(write),
            write_depth,
            write_jump: OptId::new(write_jump),
            thread_list,
            object_list,
        };
        self.last_born += 1;
        if id as usize == self.events.len() {
            self.events.push(Some(event));
            self.links.push(links);
            self.anchors.push(Anchors::default());
            self.born.push(self.last_born);
            self.dense
                .push(Dense::new(kind.writes(), thread, thread_parent));
        } else {
            // A free slot holds `None`: replaced without dropping the old
            // value, whose check loaded the cold slot and waited for it
            // (a hot spot of disp(5,4) in `perf` samples).
            let old = self.events[id as usize].replace(event);
            self_check!(assert!(old.is_none(), "a free slot holds no event"));
            std::mem::forget(old);
            self.links[id as usize] = links;
            self.anchors[id as usize] = Anchors::default();
            self.born[id as usize] = self.last_born;
            self.dense[id as usize] = Dense::new(kind.writes(), thread, thread_parent);
        }
        self.live += 1;
        self.by_key.insert(hash, id);
        self.lists[thread_list as usize].push(id);
        if object_list != NO_LIST {
            self.lists[object_list as usize].push(id);
            if kind.writes() {
                self.push_write(object_list, id);
            }
        }
        (id, true)
    }

    /// Joins the thread maxima of `q`'s history into `packed[at..]`
    /// (`NO_EVENT`: none).
    fn join_tmax(&self, packed: &mut Vec<EventId>, at: usize, q: EventId) {
        let theirs = self.get(q).tmax_raw();
        if packed.len() < at + theirs.len() {
            packed.resize(at + theirs.len(), NO_EVENT);
        }
        for (mine, &b) in packed[at..].iter_mut().zip(theirs) {
            let a = *mine;
            // Equal entries (most, from a shared history) need no depths.
            if a != b
                && (a == NO_EVENT || (b != NO_EVENT && self.link(b).depth > self.link(a).depth))
            {
                *mine = b;
            }
        }
    }

    /// The frontiers of new event `id`'s history: the union of its
    /// predecessors' histories, then its own access of object `own` (if
    /// any). `record` sees `own`'s frontier before the access and says how
    /// the event accesses it.
    #[allow(clippy::too_many_arguments)]
    fn joined_frontiers(
        &self,
        id: EventId,
        pred: Option<EventId>,
        obj_preds: &[EventId],
        extra: &[EventId],
        own: Option<Name>,
        record: impl FnOnce(&Self, FrontierView<'_>) -> Access,
    ) -> Frontiers {
        let mut scratch = self.scratch.borrow_mut();
        let MergeScratch {
            builder,
            reads,
            pool,
        } = &mut *scratch;
        // A predecessor in another's history adds nothing to the union:
        // each of its frontiers is the other's or lies below it (an
        // earlier write of the chain, or the same write with fewer reads).
        // Often every one is in `pred`'s (the object's last access was the
        // thread's own, or one it already synchronised with): then `pred`'s
        // list alone is merged. Of three or more, only the maximal ones
        // are: a data access of a pure part whose object predecessor lies
        // below rule R's extra one (the end of the part that made it)
        // merges two lists, not three. (Two are not sifted further:
        // measured, the second lookup cost what the merges it spared
        // saved.)
        let (obj_preds, extra) = match pred {
            Some(p) if obj_preds.iter().chain(extra).all(|&q| self.leq(q, p)) => (&[][..], &[][..]),
            _ => (obj_preds, extra),
        };
        let mut maximal = [NO_EVENT; FEW_PREDS];
        let mut many = Vec::new();
        let all = pred.iter().chain(obj_preds).chain(extra).copied();
        let mut count = usize::from(pred.is_some()) + obj_preds.len() + extra.len();
        let preds: &[EventId] = if count <= FEW_PREDS {
            for (slot, q) in maximal.iter_mut().zip(all) {
                *slot = q;
            }
            let mut i = 0;
            while count > 2 && i < count {
                let q = maximal[i];
                let dominated = maximal[..count].iter().enumerate().any(|(j, &r)| {
                    if r == q {
                        j < i
                    } else {
                        self.leq(q, r)
                    }
                });
                if dominated {
                    maximal.copy_within(i + 1..count, i);
                    count -= 1;
                } else {
                    i += 1;
                }
            }
            &maximal[..count]
        } else {
            many.extend(all);
            &many
        };
        match *preds {
            [one] => {
                // One list (most new events): copied, with the own
                // object's frontier updated in place.
                let base = &self.get(one).frontiers;
                self.frontiers_after_one(pool, base, id, own, record)
            }
            [a, b] => {
                // Two lists (nearly every other new event): a plain
                // two-cursor merge, without the general one's bookkeeping
                // per cursor.
                let lists = [&self.get(a).frontiers, &self.get(b).frontiers];
                self.merge_two(builder, reads, lists, id, own, record);
                builder.finish_in(pool)
            }
            _ => {
                self.merge_many(builder, reads, preds, id, own, record);
                builder.finish_in(pool)
            }
        }
    }

    /// [`joined_frontiers`](Self::joined_frontiers) of the frontiers of
    /// `preds` (none, or three or more), pushed to `builder` (`reads`: a
    /// buffer), a cursor each: on the stack up to `FEW_PREDS`.
    // Rare: out of line (fewer instruction-cache misses in cachegrind's
    // model on the three benchmarks' first executions, 8-12 %).
    #[inline(never)]
    fn merge_many(
        &self,
        builder: &mut FrontiersBuilder,
        reads: &mut Vec<EventId>,
        preds: &[EventId],
        id: EventId,
        own: Option<Name>,
        record: impl FnOnce(&Self, FrontierView<'_>) -> Access,
    ) {
        let empty = &self.no_frontiers;
        let (mut few_lists, mut few_at) = ([empty; FEW_PREDS], [0usize; FEW_PREDS]);
        let (mut many_lists, mut many_at) = (Vec::new(), Vec::new());
        let (lists, at): (&mut [&Frontiers], &mut [usize]) = if preds.len() <= FEW_PREDS {
            (&mut few_lists[..preds.len()], &mut few_at[..preds.len()])
        } else {
            many_lists.resize(preds.len(), empty);
            many_at.resize(preds.len(), 0);
            (&mut many_lists[..], &mut many_at[..])
        };
        for (slot, &q) in lists.iter_mut().zip(preds) {
            *slot = &self.get(q).frontiers;
        }
        let lists: &[&Frontiers] = lists;
        let mut record = Some(record);
        loop {
            // The next name: the own object's comes in its place, touched
            // by a predecessor or not.
            let next = (0..lists.len())
                .filter(|&k| at[k] < lists[k].len())
                .map(|k| lists[k].name_at(at[k]))
                .min();
            let pending_own = own.filter(|_| record.is_some());
            let name = match (next, pending_own) {
                (Some(n), Some(o)) => n.min(o),
                (Some(n), None) | (None, Some(n)) => n,
                (None, None) => break,
            };
            // Histories of a configuration: their writes lie on one chain,
            // the deepest is the join's, and its reads are the union of
            // those of the frontiers that have it. Most predecessors share
            // most frontiers (the same write, the same reads): depths are
            // looked up (a load from the links of an event made long ago)
            // only for two different writes, and reads are merged only if
            // they differ.
            let mut write: Option<EventId> = None;
            let mut depth: Option<u32> = None;
            let mut first: Option<FrontierView<'_>> = None;
            let mut shared = false;
            for (list, cursor) in lists.iter().zip(at.iter_mut()) {
                if *cursor >= list.len() || list.name_at(*cursor) != name {
                    continue;
                }
                let f = list.at(*cursor).1;
                *cursor += 1;
                match first {
                    None => (write, first) = (f.write, Some(f)),
                    Some(g) if f.write == write => shared |= f.reads != g.reads,
                    Some(_) => {
                        let d = self.wdepth(f.write);
                        if d > *depth.get_or_insert_with(|| self.wdepth(write)) {
                            (write, depth, first, shared) = (f.write, Some(d), Some(f), false);
                        }
                    }
                }
            }
            let first_reads = first.map_or(&[][..], |f| f.reads);
            if shared {
                reads.clear();
                reads.extend_from_slice(first_reads);
                for (list, cursor) in lists.iter().zip(at.iter()) {
                    let Some(i) = cursor.checked_sub(1) else {
                        continue;
                    };
                    let (n, f) = list.at(i);
                    if n == name && f.write == write {
                        add_reads(reads, f.reads);
                    }
                }
            }
            let merged: &[EventId] = if shared { reads } else { first_reads };
            let own = Some(name) == pending_own;
            let slot = (name, write, merged);
            self.push_merged(builder, slot, id, own, &mut record);
        }
    }

    /// Pushes one object's merged frontier, `(name, write, reads)`, to
    /// `builder`. For the new event's own object (`own`), the pending
    /// `record` sees it first and says how the event accesses it, which is
    /// recorded in it. Inlined: it runs for every
    /// slot of every merge.
    #[inline(always)]
    fn push_merged(
        &self,
        builder: &mut FrontiersBuilder,
        (name, write, reads): (Name, Option<EventId>, &[EventId]),
        id: EventId,
        own: bool,
        record: &mut Option<impl FnOnce(&Self, FrontierView<'_>) -> Access>,
    ) {
        if own {
            let record = record.take().expect("pending");
            let before = FrontierView { write, reads };
            let access = record(self, before);
            builder.push_access(name, before, id, access);
        } else {
            builder.push(name, write, reads.iter().copied());
        }
    }

    /// [`joined_frontiers`](Self::joined_frontiers) of two predecessors'
    /// frontiers `[a, b]`, pushed to `builder` (`reads`: a buffer). As the
    /// general merge: a name in one list is copied; in both, the deeper
    /// write wins (they lie on one chain), and the same write takes the
    /// union of the reads.
    fn merge_two(
        &self,
        builder: &mut FrontiersBuilder,
        reads: &mut Vec<EventId>,
        [a, b]: [&Frontiers; 2],
        id: EventId,
        own: Option<Name>,
        record: impl FnOnce(&Self, FrontierView<'_>) -> Access,
    ) {
        let (mut i, mut j) = (0, 0);
        let mut record = Some(record);
        loop {
            let x = (i < a.len()).then(|| a.name_at(i));
            let y = (j < b.len()).then(|| b.name_at(j));
            let pending_own = own.filter(|_| record.is_some());
            let next = match (x, y) {
                (Some(p), Some(q)) => Some(p.min(q)),
                (p, q) => p.or(q),
            };
            let name = match (next, pending_own) {
                (Some(n), Some(o)) => n.min(o),
                (Some(n), None) | (None, Some(n)) => n,
                (None, None) => break,
            };
            let fa = (x == Some(name)).then(|| a.at(i).1);
            let fb = (y == Some(name)).then(|| b.at(j).1);
            i += usize::from(fa.is_some());
            j += usize::from(fb.is_some());
            let (write, merged): (Option<EventId>, &[EventId]) = match (fa, fb) {
                (Some(f), None) | (None, Some(f)) => (f.write, f.reads),
                (None, None) => (None, &[]),
                (Some(f), Some(g)) if f.write == g.write => {
                    if f.reads == g.reads {
                        (f.write, f.reads)
                    } else {
                        reads.clear();
                        reads.extend_from_slice(f.reads);
                        add_reads(reads, g.reads);
                        (f.write, &reads[..])
                    }
                }
                (Some(f), Some(g)) => {
                    if self.wdepth(g.write) > self.wdepth(f.write) {
                        (g.write, g.reads)
                    } else {
                        (f.write, f.reads)
                    }
                }
            };
            let own = Some(name) == pending_own;
            let slot = (name, write, merged);
            self.push_merged(builder, slot, id, own, &mut record);
        }
    }

    /// [`joined_frontiers`](Self::joined_frontiers) of new event `id`
    /// whose history's frontiers are `base` (one predecessor, or all but
    /// one in its history): `base`'s, with the event's access of `own`
    /// recorded, made in one copy of `base`.
    fn frontiers_after_one(
        &self,
        pool: &mut WordPool,
        base: &Frontiers,
        id: EventId,
        own: Option<Name>,
        record: impl FnOnce(&Self, FrontierView<'_>) -> Access,
    ) -> Frontiers {
        let Some(own) = own else {
            return base.copy_in(pool);
        };
        // The own object's slot: in place of its old frontier if the
        // history touched it, else inserted in name order.
        let (at, before) = match base.search(own) {
            Ok(i) => (i, Some(base.at(i).1)),
            Err(i) => (i, None),
        };
        let before = before.unwrap_or(FrontierView {
            write: None,
            reads: &[],
        });
        match record(self, before) {
            Access::Write => base.with_slot(pool, at, own, Some(id), &[], None),
            Access::Read => base.with_slot(pool, at, own, before.write, before.reads, Some(id)),
        }
    }

    /// Joins two frontiers of one object from consistent histories.
    fn join_frontier(&self, mine: &mut Frontier, theirs: FrontierView<'_>) {
        if mine.write == theirs.write {
            for &r in theirs.reads {
                if !mine.reads.contains(&r) {
                    mine.reads.push(r);
                }
            }
        } else if self.wdepth(theirs.write) > self.wdepth(mine.write) {
            *mine = theirs.to_frontier();
        }
    }

    /// For a read, the write it reads (`None`: the initial value).
    #[cfg(test)]
    pub(crate) fn reads_from(&self, e: EventId) -> Option<EventId> {
        self.link(e).write.get()
    }

    fn wdepth(&self, w: Option<EventId>) -> u32 {
        w.map_or(0, |w| self.link(w).write_depth)
    }

    /// The chain links of live event `e`.
    fn link(&self, e: EventId) -> &Links {
        // Under self-check only: in a user's debug build (debug assertions
        // on) the record's load was a cache miss on the hottest path.
        self_check!(assert!(
            self.events[e as usize].is_some(),
            "a pruned event was used"
        ));
        &self.links[e as usize]
    }

    /// The frontier of object `name` in `[e]`, if `[e]` touches it.
    pub(crate) fn frontier(&self, e: EventId, name: Name) -> Option<Frontier> {
        self.frontier_ref(e, name).map(FrontierView::to_frontier)
    }

    /// The write of [`frontier`](Self::frontier) alone (`Some(None)`: the
    /// initial value), without copying its reads.
    pub(crate) fn frontier_write(&self, e: EventId, name: Name) -> Option<Option<EventId>> {
        self.frontier_ref(e, name).map(|f| f.write)
    }

    /// Like [`frontier`](Self::frontier), borrowed.
    fn frontier_ref(&self, e: EventId, name: Name) -> Option<FrontierView<'_>> {
        self.get(e).frontiers.get(self.names.find(name))
    }

    /// The maximal event of `thread` in `[e]`.
    pub(crate) fn tmax(&self, e: EventId, thread: ThreadIdx) -> Option<EventId> {
        self.get(e).tmax_at(thread.index())
    }

    /// Whether `a` is `x` or an earlier event of the same thread below `x`.
    fn thread_ancestor(&self, a: EventId, mut x: EventId) -> bool {
        let da = self.link(a).depth;
        while self.link(x).depth > da {
            let l = self.link(x);
            let up = match l.thread_jump.get() {
                Some(j) if self.link(j).depth >= da => Some(j),
                _ => l.thread_parent.get(),
            };
            match up {
                Some(p) => x = p,
                None => return false,
            }
        }
        x == a
    }

    /// Whether two events of one thread lie on one branch of it (one is
    /// the other or below it); otherwise they conflict.
    fn same_branch(&self, a: EventId, b: EventId) -> bool {
        self.thread_ancestor(a, b) || self.thread_ancestor(b, a)
    }

    /// Causality: `a ∈ [b]`.
    pub(crate) fn leq(&self, a: EventId, b: EventId) -> bool {
        match self.tmax(b, self.get(a).thread) {
            Some(x) => self.thread_ancestor(a, x),
            None => false,
        }
    }

    /// The ancestor of write `w` at write depth `depth` (`None`: the root).
    fn write_ancestor(&self, mut w: Option<EventId>, depth: u32) -> Option<EventId> {
        while let Some(x) = w {
            let l = self.link(x);
            if l.write_depth <= depth {
                break;
            }
            w = match l.write_jump.get() {
                Some(j) if self.link(j).write_depth >= depth => Some(j),
                _ => l.write.get(),
            };
        }
        w
    }

    /// Whether two frontiers of one object can belong to one configuration.
    fn compatible(&self, a: FrontierView<'_>, b: FrontierView<'_>) -> bool {
        if a.write == b.write {
            return true;
        }
        let (short, long) = if self.wdepth(a.write) <= self.wdepth(b.write) {
            (a, b)
        } else {
            (b, a)
        };
        let d = self.wdepth(short.write);
        if self.wdepth(long.write) == d || self.write_ancestor(long.write, d) != short.write {
            return false;
        }
        // The write after `short.write` on the longer chain must come after
        // every read of `short.write` on the shorter side.
        let next = self
            .write_ancestor(long.write, d + 1)
            .expect("deeper chain has a next write");
        short.reads.iter().all(|&r| self.leq(r, next))
    }

    /// Conflict: `[a] ∪ [b]` is not a configuration.
    pub(crate) fn conflict(&self, a: EventId, b: EventId) -> bool {
        let (ea, eb) = (self.get(a), self.get(b));
        for (&x, &y) in ea.tmax_raw().iter().zip(eb.tmax_raw()) {
            if x != NO_EVENT && y != NO_EVENT && !self.same_branch(x, y) {
                return true;
            }
        }
        self.any_incompatible(&ea.frontiers, &eb.frontiers)
    }

    /// Whether an object both lists hold has frontiers that cannot belong
    /// to one configuration. Both are sorted by canonical name: they are
    /// walked together.
    fn any_incompatible(&self, a: &(impl ByName + ?Sized), b: &(impl ByName + ?Sized)) -> bool {
        let (mut i, mut j) = (0, 0);
        while i < a.count() && j < b.count() {
            match a.name_at(i).cmp(&b.name_at(j)) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    if !self.compatible(a.view_at(i), b.view_at(j)) {
                        return true;
                    }
                    i += 1;
                    j += 1;
                }
            }
        }
        false
    }

    /// Conflict of `x` with a configuration `C` given by what changed in it
    /// since a prefix `P` that `x` is known not to conflict with: the last
    /// event in `C` of each thread that moved since `P` (`threads`, with
    /// the thread's index), and
    /// `C`'s frontier of each object touched since `P` (`objects`, sorted
    /// by canonical name).
    ///
    /// [`conflict`](Self::conflict) is a conjunction of checks, one per
    /// thread and one per object, each between the two sides' summaries of
    /// that thread or object; `C`'s summary is the join of its maximal
    /// events' ones, and the parts that did not move since `P` are `P`'s,
    /// which `x` passes. So only the moved parts are checked, once each,
    /// instead of a whole [`conflict`](Self::conflict) per maximal event.
    pub(crate) fn conflicts_with_moved(
        &self,
        x: EventId,
        threads: &[(usize, EventId)],
        objects: &Frontiers,
    ) -> bool {
        let ex = self.get(x);
        for &(t, m) in threads {
            self_check!(assert_eq!(
                self.get(m).thread.index(),
                t,
                "a moved event's thread"
            ));
            if let Some(y) = ex.tmax_at(t) {
                if !self.same_branch(y, m) {
                    return true;
                }
            }
        }
        self.any_incompatible(&ex.frontiers, objects)
    }

    /// Immediate conflict: `a # b`, but neither's strict history conflicts
    /// with the other. Every conflict of an alternative with an event of `D`
    /// goes through one of these, so they are all the comb and pruning need.
    ///
    /// The comb asks this of each neighbour of each target, and nearly all
    /// of them lie in branches whose histories part from the target's
    /// before the two events: so cheap tests that find such a parting come
    /// first, and only what they leave is decided by the definition (kase's
    /// own debug builds, with `self-check`, check that they never refute an
    /// immediate conflict).
    pub(crate) fn immediate_conflict(&self, a: EventId, b: EventId) -> bool {
        let refuted = self.parts_refute_immediate_conflict(a, b);
        self_check!(assert!(
            !refuted || !self.immediate_conflict_by_definition(a, b),
            "a cheap part refuted the immediate conflict {a} #i {b}"
        ));
        !refuted && self.immediate_conflict_by_definition(a, b)
    }

    /// Parts of [`immediate_conflict`](Self::immediate_conflict) that
    /// refute it cheaply: true only if `a` and `b` are not in immediate
    /// conflict (false decides nothing).
    fn parts_refute_immediate_conflict(&self, a: EventId, b: EventId) -> bool {
        let (ea, eb) = (self.get(a), self.get(b));
        if ea.thread == eb.thread {
            // Two events of one thread after different predecessors: if
            // neither lies below the other, their branches of the thread's
            // chain part below one of them, whose history then holds an
            // event in conflict with the other (the first of its branch),
            // or they are first events after different spawns, which
            // conflict. Either way the conflict is inherited. Most pairs a
            // neighbour list offers are of this kind (mpat(6): 99 %).
            if ea.pred != eb.pred {
                return true;
            }
            // Two events of one thread after the same predecessor perform
            // the same action on the same object (the label is a function of
            // the history). If their object predecessors differ, their
            // histories of the object differ: one holds an access of it the
            // other lacks, and one of the two writes (a read's predecessor is
            // its write, a write's the reads of its write, or that write), so
            // the other event is in conflict with that access: the conflict
            // between the two is inherited, not immediate.
            if !same_ids(ea.obj_preds(), eb.obj_preds()) {
                return true;
            }
        }
        // `x`'s thread predecessor must be the last event of `x`'s thread
        // in `y`'s strict history, or below it. Above it, that history
        // holds another event of the thread right after `x`'s predecessor,
        // a sibling of `x` in the thread tree, so `[x] ∪ [y)` is no
        // configuration; on another branch, `[x) ∪ [y]` is none.
        let thread_parts = |x: EventId, ex: &Event, y: EventId, ey: &Event| {
            let last = if ex.thread == ey.thread {
                self.link(y).thread_parent.get()
            } else {
                self.tmax(y, ex.thread)
            };
            let Some(last) = last else {
                return false;
            };
            match self.link(x).thread_parent.get() {
                Some(p) => !self.thread_ancestor(last, p),
                None => true,
            }
        };
        if thread_parts(a, ea, b, eb) || thread_parts(b, eb, a, ea) {
            return true;
        }
        // A predecessor `p` of one (not in the other's history) against the
        // other, `y`, on the objects of the two events.
        let names = [ea.name, eb.name].map(|n| n.map(|n| self.names.find(n)));
        let object_parts = |p: EventId, y: EventId| {
            names.iter().flatten().any(|&n| {
                match (self.get(p).frontiers.get(n), self.get(y).frontiers.get(n)) {
                    (Some(f), Some(g)) => !self.compatible(f, g),
                    _ => false,
                }
            })
        };
        preds(ea).any(|p| !self.leq(p, b) && object_parts(p, b))
            || preds(eb).any(|q| !self.leq(q, a) && object_parts(a, q))
    }

    /// Immediate conflict from its definition: `a # b`, and no immediate
    /// predecessor of one (outside the other's history) conflicts with the
    /// other.
    fn immediate_conflict_by_definition(&self, a: EventId, b: EventId) -> bool {
        let (ea, eb) = (self.get(a), self.get(b));
        // Two events of one thread after one predecessor are two branches
        // of its chain; a predecessor of one in the other's history cannot
        // conflict with it.
        let siblings = a != b && ea.thread == eb.thread && ea.pred == eb.pred;
        (siblings || self.conflict(a, b))
            && preds(ea).all(|p| self.leq(p, b) || !self.conflict(p, b))
            && preds(eb).all(|q| self.leq(q, a) || !self.conflict(a, q))
    }

    /// The union of the histories of `seeds`, not entering events `stop`
    /// says to skip (nor their histories).
    pub(crate) fn closure(
        &self,
        seeds: impl IntoIterator<Item = EventId>,
        stop: impl Fn(EventId) -> bool,
    ) -> Set<EventId> {
        let mut out = Set::default();
        let mut stack: Vec<EventId> = seeds.into_iter().collect();
        while let Some(x) = stack.pop() {
            if stop(x) || !out.insert(x) {
                continue;
            }
            stack.extend(preds(self.get(x)));
        }
        out
    }

    /// Marks in `marked` (by id, as long as [`id_bound`](Self::id_bound))
    /// the union of the histories of `seeds`: [`closure`](Self::closure)
    /// into a dense table, for a pruning, which keeps most of `U`.
    pub(crate) fn mark_closure(&self, seeds: Vec<EventId>, marked: &mut [bool]) {
        let mut stack = seeds;
        while let Some(x) = stack.pop() {
            if std::mem::replace(&mut marked[x as usize], true) {
                continue;
            }
            stack.extend(preds(self.get(x)));
        }
    }

    /// The frontier of `name` in the union of the histories of `events`
    /// (which must be a configuration).
    pub(crate) fn joined_frontier(&self, name: Name, events: &[EventId]) -> Frontier {
        let mut out: Option<Frontier> = None;
        for &e in events {
            if let Some(f) = self.frontier_ref(e, name) {
                match &mut out {
                    None => out = Some(f.to_frontier()),
                    Some(o) => self.join_frontier(o, f),
                }
            }
        }
        out.unwrap_or_default()
    }

    /// The thread tree parent of `e` (its previous event in its thread).
    pub(crate) fn thread_parent(&self, e: EventId) -> Option<EventId> {
        self.link(e).thread_parent.get()
    }
}

/// The jump pointer of a tree node whose parent is `parent` (skew-binary
/// jump pointers, E. W. Myers, "An applicative random-access stack", 1983):
/// the parent, or the parent's jump's jump when the two jumps below span
/// equal depths. `at(e)` gives a node's depth and jump pointer. Jumping
/// from a node to an ancestor at a given depth then takes O(log depth)
/// steps: take the jump while it does not overshoot, else the parent.
fn jump_for(
    parent: Option<EventId>,
    at: impl Fn(EventId) -> (u32, Option<EventId>),
) -> Option<EventId> {
    let p = parent?;
    let (dp, jp) = at(p);
    if let Some(j) = jp {
        let (dj, jj) = at(j);
        if let Some(jj) = jj {
            if dp - dj == dj - at(jj).0 {
                return Some(jj);
            }
        }
    }
    Some(p)
}

/// An event's immediate predecessors: its thread's, its object's and the
/// extra ones of peeking.
fn preds(ev: &Event) -> impl Iterator<Item = EventId> + '_ {
    ev.pred
        .into_iter()
        .chain(ev.obj_preds().iter().copied())
        .chain(ev.extra().iter().copied())
}

#[cfg(test)]
mod id_list_tests {
    use super::IdList;

    #[test]
    fn an_id_list_keeps_pushes_in_order_inline_or_not_and_retains() {
        let mut list = IdList::default();
        assert!(list.is_empty());
        list.push(7);
        assert!(matches!(list, IdList::One([7])));
        list.push(3);
        list.push(9);
        assert_eq!(list.as_slice(), &[7, 3, 9]);
        list.retain(|&e| e != 3);
        assert_eq!(list.as_slice(), &[7, 9]);
        let mut one = IdList::default();
        one.push(5);
        one.retain(|&e| e == 5);
        assert_eq!(one.as_slice(), &[5]);
        one.retain(|_| false);
        assert!(one.is_empty());
        // Emptied, it starts over inline.
        one.push(6);
        assert!(matches!(one, IdList::One([6])));
    }
}

//! Rust's memory model (RC11) in one execution: which store each atomic
//! read reads, and where each store goes in its location's modification
//! order — the choices an explorer makes
//! ([`Scheduler::choose_weak`](crate::exec::Scheduler::choose_weak)) — and
//! happens-before through the stores' release sequences.
//!
//! Coherence and atomicity hold by construction (`history.rs`); the
//! SeqCst axiom (`psc` acyclic) is checked on the graph so far for every
//! candidate once the execution has a `SeqCst` event, so every execution
//! that runs on is consistent.

use std::sync::atomic::Ordering;

use super::consistency;
use super::graph::{Access, Graph, Node};
use super::history::{HistoryPool, LocationHistory, Rmw, StoreRecord};
use super::pool::GraphPool;
use crate::exec::action::{ObjectIdx, OpKind, ThreadIdx};
use crate::exec::clock::VectorClock;
use crate::exec::error::OrInternal;
use crate::exec::execution::Execution;
use crate::exec::object::ObjectDetail;

/// What a thread's next atomic access is, told before it runs, so that the
/// explorer can be offered exactly its consistent choices.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AtomicIntent {
    /// Its ordering (a compare-exchange's success ordering).
    pub order: Ordering,
    /// A compare-exchange: its failure ordering and the bits it expects.
    pub cas: Option<(Ordering, u64)>,
    /// A load the interleaving explorers let read the modification-order-
    /// latest store only (`WeakPoint::latest_only`): the fast path of
    /// kase's `Once` (`shim/once.rs`). Its other options are still offered,
    /// so schedules record and replay the same choices whoever explores.
    pub latest_only: bool,
    /// Its location is accessed in an order that matters both ways
    /// (`Execution::mark_strict`): kase's `Once` state.
    pub strict: bool,
}

impl AtomicIntent {
    /// An access with `order` (and, for a compare-exchange, `cas`), neither
    /// latest-only nor strict: every access but kase's `Once` state's.
    pub(crate) fn new(order: Ordering, cas: Option<(Ordering, u64)>) -> Self {
        AtomicIntent {
            order,
            cas,
            latest_only: false,
            strict: false,
        }
    }
}

/// One way an access can go: read store `id`, or store right after mo
/// position `p`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Candidate {
    Read(usize),
    Place(usize),
}

/// A location's history and its name in the graph.
#[derive(Clone, Debug)]
pub(super) struct Located {
    history: LocationHistory,
    graph_location: u32,
}

/// Which store each read read and each location's modification order, as
/// events of the execution: what tells two executions' graphs apart.
#[derive(Clone, Debug, Default)]
pub(crate) struct WeakSummary {
    /// For each atomic read (or read-modify-write) event: the event whose
    /// store it read (`None`: the location's initial value).
    pub rf: Vec<(usize, Option<usize>)>,
    /// Per location: its store events in modification order.
    pub mo: Vec<Vec<usize>>,
    /// The execution graph itself, for explorers that build other graphs
    /// from it (`explore/revisit`).
    pub graph: Graph,
    /// Per graph location: the bits it held before its first store.
    pub initial: Vec<u64>,
    /// Per graph node: the event it is, and what a revisit needs to know
    /// to make it read another store.
    pub nodes: Vec<NodeFacts>,
}

/// What one graph node is beyond its [`Node`]: the event, the bits it
/// stored, and, for a compare-exchange, what decides whether it writes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NodeFacts {
    /// The event it is.
    pub event: usize,
    /// The bits a store or read-modify-write stored.
    pub written: Option<u64>,
    /// A compare-exchange: the bits it expects and its success and failure
    /// orderings.
    pub cas: Option<(u64, Ordering, Ordering)>,
}

/// The RC11 state of one execution.
#[derive(Debug, Default)]
pub(crate) struct WeakMemory {
    /// By object index; `None` until its first atomic access (or after a
    /// `&mut` access, which starts it afresh).
    locations: Vec<Option<Located>>,
    graph: Graph,
    /// Per graph node: the event it is, and more (`NodeFacts`).
    node_facts: Vec<NodeFacts>,
    /// Per graph location: its bits before the first store.
    initial: Vec<u64>,
    /// Per thread: its nodes in program order, with its happens-before
    /// epoch at each.
    thread_nodes: Vec<Vec<(u32, usize)>>,
    /// The graph has a `SeqCst` fence: then any access's candidates must
    /// keep `psc` acyclic, not only a `SeqCst` access's (`candidates`).
    seq_cst_fence: bool,
    /// The `SeqCst` fences' happens-before clocks joined (what happens
    /// before some `SeqCst` fence), and per thread the epoch of its first
    /// one (whether one happens before a new access).
    seq_cst_fences_clock: VectorClock,
    first_seq_cst_fence: VectorClock,
    /// Per thread: its announced atomic access.
    intents: Vec<Option<AtomicIntent>>,
    /// The explorer's choice for the access about to run.
    choice: Option<usize>,
    /// The thread whose next access `offer` holds the candidates of
    /// (`weak_sources`): that access then takes from them (nothing runs in
    /// between, so they are still exact; computing them again would redo
    /// the `psc` checks).
    offered: Option<ThreadIdx>,
    /// The candidates offered to the explorer, and the sources and places
    /// shown to it, in buffers reused from access to access (an atomic
    /// access allocates none of them).
    offer: Offer,
    /// The synchronises-with edges of the node being added, reused.
    sw_buf: Vec<(usize, usize)>,
    /// The running access's chosen candidate, between read and commit.
    prepared: Option<Candidate>,
    /// The store each thread read last from each location (store id).
    last_read: crate::fast_hash::Map<(ThreadIdx, ObjectIdx), usize>,
    /// A hash of the graph: of every node added, with its place in
    /// modification order and its edges (the graph is their sequence).
    graph_key: GraphKey,
    /// The exploration's `psc` verdicts so far (`PscMemo`).
    psc_memo: PscMemo,
    /// Where its locations' histories come from and go back to.
    history_pool: HistoryPool,
    /// Where its other buffers come from and go back to.
    graph_pool: GraphPool,
    /// The offers of the previous execution's accesses, and how many of its
    /// first events this one repeats (`OfferCache`; `None`: the explorer
    /// replays no prefix, so nothing is kept).
    offer_cache: OfferCache,
    replay_prefix: Option<usize>,
    /// Emptied lists for new locations' modification orders and new
    /// threads' nodes, from the pool.
    spare_lists: Vec<Vec<usize>>,
    spare_node_lists: Vec<Vec<(u32, usize)>>,
    /// The summary's reads-from list, from the pool.
    summary_rf: Vec<(usize, Option<usize>)>,
}

/// The ways an access can go, as offered to the explorer (`weak_sources`).
#[derive(Debug, Default)]
struct Offer {
    candidates: Vec<Candidate>,
    sources: Vec<usize>,
    after: Vec<usize>,
    /// Scratch for the synchronises-with edges the `psc` checks add.
    sw: Vec<(usize, usize)>,
}

/// A 128-bit hash of a graph as the sequence of its additions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
struct GraphKey(u64, u64);

impl GraphKey {
    /// The key of the graph after adding `node` at `mo_index` with `sw`.
    fn with(self, node: &Node, mo_index: Option<usize>, sw: &[(usize, usize)]) -> GraphKey {
        let (location, rf, kind) = match node.access {
            Access::Read { location, rf } => (location, rf, 0),
            Access::Write { location } => (location, None, 1),
            Access::Rmw { location, rf } => (location, rf, 2),
            Access::Fence => (0, None, 3),
            Access::Other => (0, None, 4),
        };
        let option = |x: Option<usize>| x.map_or(u64::MAX, |x| x as u64);
        let words = [
            u64::from(node.thread),
            kind | (u64::from(location) << 8) | ((node.order as u64) << 40),
            option(rf),
            option(mo_index),
            sw.len() as u64,
        ];
        let pairs = sw.iter().flat_map(|&(a, b)| [a as u64, b as u64]);
        let mix = |h: u64, w: u64, k: u64| (h.rotate_left(23) ^ w).wrapping_mul(k);
        let (mut a, mut b) = (self.0, self.1);
        for w in words.into_iter().chain(pairs) {
            a = mix(a, w, 0x9e37_79b9_7f4a_7c15);
            b = mix(b, w, 0xc2b2_ae3d_27d4_eb4f);
        }
        GraphKey(a, b)
    }
}

/// Whether adding a node keeps `psc` acyclic, by graph and node
/// (`GraphKey`), for one exploration: executions replay their prefixes,
/// and each replayed `SeqCst` access asked the same questions of the same
/// graphs, each a full `psc` computation. Cleared when it grows past
/// `MAX_PSC_VERDICTS`.
#[derive(Clone, Debug, Default)]
pub(crate) struct PscMemo(std::rc::Rc<std::cell::RefCell<crate::fast_hash::Map<GraphKey, bool>>>);

/// Verdicts a `PscMemo` keeps at most (about 40 bytes each).
const MAX_PSC_VERDICTS: usize = 1 << 22;

impl PscMemo {
    fn decide(&self, key: GraphKey, check: impl FnOnce() -> bool) -> bool {
        if let Some(&verdict) = self.0.borrow().get(&key) {
            return verdict;
        }
        let verdict = check();
        let mut map = self.0.borrow_mut();
        if map.len() >= MAX_PSC_VERDICTS {
            map.clear();
        }
        map.insert(key, verdict);
        verdict
    }
}

/// The offers (`weak_sources`) of the previous execution's atomic accesses,
/// by event index, shared by the executions of an exploration. Where the
/// explorer replays a prefix of the previous execution
/// (`Scheduler::replay_prefix`), the accesses there run in the same states,
/// so their offers are taken from here instead of computed again: under a
/// preemption bound most of an execution is such a prefix, and the
/// coherence floors and `psc` checks of its accesses were a tenth of
/// concurrent-queue's instructions.
#[derive(Clone, Debug, Default)]
pub(crate) struct OfferCache(std::rc::Rc<std::cell::RefCell<Vec<CachedOffer>>>);

/// An access an offer is for: thread, object, kind, and how many stores the
/// object's history held.
type OfferKey = (ThreadIdx, ObjectIdx, OpKind, usize);

#[derive(Clone, Debug, Default)]
struct CachedOffer {
    /// The access it was made for, with the number of stores its location
    /// had. Another one at its index (only a model that depends on
    /// something besides the schedule makes one) computes its offer afresh,
    /// so that such a model is still reported as one, not given stores
    /// that do not exist.
    access: Option<OfferKey>,
    candidates: Vec<Candidate>,
    sources: Vec<usize>,
    after: Vec<usize>,
}

impl OfferCache {
    /// Puts the offer kept for event `event` into `offer`, if it was made
    /// for `access`.
    fn restore(&self, event: usize, access: OfferKey, offer: &mut Offer) -> bool {
        let cache = self.0.borrow();
        let Some(cached) = cache.get(event).filter(|c| c.access == Some(access)) else {
            return false;
        };
        // (`clone_from` keeps the lists' allocations.)
        offer.candidates.clone_from(&cached.candidates);
        offer.sources.clone_from(&cached.sources);
        offer.after.clone_from(&cached.after);
        true
    }

    /// Keeps `offer`, made for `access`, as event `event`'s.
    fn keep(&self, event: usize, access: OfferKey, offer: &Offer) {
        let mut cache = self.0.borrow_mut();
        if cache.len() <= event {
            cache.resize_with(event + 1, CachedOffer::default);
        }
        let cached = &mut cache[event];
        cached.access = Some(access);
        cached.candidates.clone_from(&offer.candidates);
        cached.sources.clone_from(&offer.sources);
        cached.after.clone_from(&offer.after);
    }
}

/// Graphs up to this many events are checked for consistency at every event
/// with the `self-check` feature (`WeakMemory::push`).
#[cfg(all(debug_assertions, any(test, feature = "self-check")))]
const CHECKED_GRAPH_EVENTS: usize = 64;

fn is_seq_cst(intent: &AtomicIntent) -> bool {
    intent.order == Ordering::SeqCst || matches!(intent.cas, Some((Ordering::SeqCst, _)))
}

impl WeakMemory {
    /// The RC11 state of a new execution, sharing the exploration's `psc`
    /// verdicts.
    pub(crate) fn new(
        psc_memo: PscMemo,
        history_pool: HistoryPool,
        graph_pool: GraphPool,
        offer_cache: OfferCache,
    ) -> Self {
        let spare = graph_pool.take();
        WeakMemory {
            psc_memo,
            offer_cache,
            history_pool,
            locations: spare.locations,
            graph: Graph {
                events: spare.events,
                mo: spare.mo,
                sw: spare.sw,
            },
            node_facts: spare.node_facts,
            initial: spare.initial,
            thread_nodes: spare.thread_nodes,
            intents: spare.intents,
            last_read: spare.last_read,
            spare_lists: spare.lists,
            spare_node_lists: spare.node_lists,
            summary_rf: spare.rf,
            graph_pool,
            ..WeakMemory::default()
        }
    }

    fn located(&self, object: ObjectIdx) -> Option<&Located> {
        self.locations.get(object.0 as usize)?.as_ref()
    }

    /// Synchronises-with edges standing for what `clock` (a thread's
    /// happens-before before its new node) has seen of other threads'
    /// nodes: locks, spawns, joins, and atomics' synchronisation so far;
    /// into `edges` (cleared first, a buffer reused from node to node).
    fn edges_into_buf(
        &self,
        thread: ThreadIdx,
        clock: &VectorClock,
        to: usize,
        edges: &mut Vec<(usize, usize)>,
    ) {
        edges.clear();
        for (u, nodes) in self.thread_nodes.iter().enumerate() {
            if u == thread.index() {
                continue;
            }
            let seen = clock.get(ThreadIdx(u as u32));
            // A thread's epochs grow in program order: the last node seen
            // is found by bisection (a scan back from the newest made a
            // long run of unsynchronised accesses quadratic).
            let n = nodes.partition_point(|&(epoch, _)| epoch <= seen);
            if let Some(&(_, node)) = n.checked_sub(1).map(|i| &nodes[i]) {
                edges.push((node, to));
            }
        }
    }

    /// The node `candidate` makes, and where its store goes in its
    /// location's graph modification order.
    fn node_for(
        &self,
        thread: ThreadIdx,
        located: &Located,
        kind: OpKind,
        intent: &AtomicIntent,
        candidate: Candidate,
    ) -> (Node, Option<usize>) {
        let location = located.graph_location;
        let history = &located.history;
        let (access, order, mo_index) = match candidate {
            Candidate::Place(p) => (Access::Write { location }, intent.order, Some(p)),
            Candidate::Read(id) => {
                let rf = history.store(id).event;
                let writes = match (kind, intent.cas) {
                    (OpKind::Load, _) => false,
                    (OpKind::CompareExchange, Some((_, expected))) => {
                        history.store(id).bits == expected
                    }
                    _ => true,
                };
                if writes {
                    let at = history.position(id);
                    (Access::Rmw { location, rf }, intent.order, Some(at))
                } else {
                    let order = intent.cas.map_or(intent.order, |(failure, _)| failure);
                    (Access::Read { location, rf }, order, None)
                }
            }
        };
        let node = Node {
            thread: thread.0,
            access,
            order,
        };
        (node, mo_index)
    }

    /// Adds `node` to `graph` with its store at `mo_index` of its
    /// location's order.
    fn add(graph: &mut Graph, node: Node, mo_index: Option<usize>, sw: &[(usize, usize)]) {
        let index = graph.events.len();
        if let (Some(at), Access::Write { location } | Access::Rmw { location, .. }) =
            (mo_index, node.access)
        {
            graph.mo[location as usize].insert(at, index);
        }
        graph.events.push(node);
        graph.sw.extend_from_slice(sw);
    }
}

impl Execution {
    fn weak(&self) -> &WeakMemory {
        self.weak.as_ref().or_internal("RC11 state without RC11")
    }

    fn weak_mut(&mut self) -> &mut WeakMemory {
        self.weak.as_mut().or_internal("RC11 state without RC11")
    }

    /// Whether thread `t`'s access to `object` that just ran saw the newest
    /// store: a read read the last store in modification order, a store or
    /// read-modify-write went last (a read-modify-write that goes last read
    /// the store that was last before it).
    pub(crate) fn weak_access_latest(&self, t: ThreadIdx, object: ObjectIdx, writes: bool) -> bool {
        let weak = self.weak();
        let Some(located) = weak.located(object) else {
            return true;
        };
        let Some(&last) = located.history.mo().last() else {
            return true;
        };
        if writes {
            let own = weak.thread_nodes.get(t.index()).and_then(|n| n.last());
            own.is_some_and(|&(_, node)| located.history.store(last).event == Some(node))
        } else {
            weak.last_read.get(&(t, object)) == Some(&last)
        }
    }

    /// Whether atomics follow RC11 in this execution.
    pub(crate) fn weak_on(&self) -> bool {
        self.weak.is_some()
    }

    /// Whether the running access follows RC11: the model runs under it and
    /// the execution is not being torn down (unwound threads' accesses run
    /// plainly).
    pub(crate) fn weak_active(&self) -> bool {
        self.weak.is_some() && !self.teardown
    }

    /// Notes, under sequential consistency, an atomic access or fence with
    /// `order` at `location`: the first one weaker than `SeqCst` while
    /// another thread may run concurrently means the program may have
    /// behaviours sequential consistency does not show.
    ///
    /// One made while the current thread runs alone (every other thread has
    /// finished and its whole history happens before this point, as after
    /// a join, and none is waiting to start) is not one: every event of the
    /// execution is then ordered with it by happens-before (earlier threads'
    /// through their joins, later ones through their spawns), so coherence
    /// leaves a load one store to read, the mo-latest of those before it,
    /// and the orderings it would add are already there. An RC11 graph with
    /// a weak access that is not alone has an SC prefix, up to the first
    /// such access, that the interleavings reach, and there the access is
    /// not alone either (POR-DESIGN.md, "Weak accesses made alone").
    pub(crate) fn note_ordering(
        &mut self,
        order: Ordering,
        what: &str,
        location: &'static std::panic::Location<'static>,
    ) {
        if order != Ordering::SeqCst
            && self.weaker_ordering.is_none()
            && !self.teardown
            && !self.runs_alone()
        {
            self.weaker_ordering = Some(format!("{what} with {order:?} at {location}"));
        }
    }

    /// Whether every thread but the current one has finished with all its
    /// events happening before the current thread's next one, and no
    /// spawned thread waits to start.
    fn runs_alone(&self) -> bool {
        if !self.unstarted.is_empty() {
            return false;
        }
        let t = self.current;
        let clock = &self.thread(t).hb.clock;
        self.threads.iter().flatten().all(|u| {
            // A thread's visible operation releases its clock, then moves
            // its own entry on (`perform`): a joiner holds its last
            // operation's, one less than the thread's final entry.
            u.idx == t || (u.finished && clock.get(u.idx) + 1 >= u.hb.clock.get(u.idx))
        })
    }

    /// Whether thread `t`'s pending atomic access may read the latest store
    /// only (`WeakPoint::latest_only`).
    pub(crate) fn latest_only(&self, t: ThreadIdx) -> bool {
        !self.every_read
            && self
                .weak()
                .intents
                .get(t.index())
                .copied()
                .flatten()
                .is_some_and(|intent| intent.latest_only)
    }

    /// The current thread's next visible operation is an atomic access with
    /// `intent`.
    pub(crate) fn weak_intent(&mut self, intent: AtomicIntent) {
        let t = self.current.index();
        let weak = self.weak_mut();
        if weak.intents.len() <= t {
            weak.intents.resize(t + 1, None);
        }
        weak.intents[t] = Some(intent);
    }

    /// The consistent ways an access `kind` to `object` by thread `t` can
    /// go, the one a sequentially consistent run takes first.
    fn candidates(&self, t: ThreadIdx, object: ObjectIdx, kind: OpKind, offer: &mut Offer) {
        let Offer {
            candidates: out,
            sw,
            ..
        } = offer;
        out.clear();
        let weak = self.weak();
        let atomic = matches!(
            self.objects[object.0 as usize].detail,
            ObjectDetail::Atomic(_)
        );
        let intent = weak.intents.get(t.index()).copied().flatten();
        let (true, Some(intent), Some(located)) = (atomic, intent, weak.located(object)) else {
            // A first access has one way to go: the initial value is the
            // only store (and a graph cannot become inconsistent through
            // an event no other one reaches).
            out.push(match kind {
                OpKind::Store => Candidate::Place(0),
                _ => Candidate::Read(0),
            });
            return;
        };
        let history = &located.history;
        let clock = &self.thread(t).hb.clock;
        let floor = history.floor(t, clock);
        match kind {
            OpKind::Store => out.extend(history.placements(floor).map(Candidate::Place)),
            OpKind::Load => out.extend(history.readable(floor, None).map(Candidate::Read)),
            OpKind::Rmw => {
                out.extend(
                    history
                        .readable(floor, Some(Rmw::Always))
                        .map(Candidate::Read),
                );
            }
            OpKind::CompareExchange => {
                let expected = intent.cas.map_or(0, |(_, bits)| bits);
                let readable = history.readable(floor, Some(Rmw::IfEquals(expected)));
                out.extend(readable.map(Candidate::Read));
            }
            _ => {
                out.push(Candidate::Read(0));
                return;
            }
        }
        // The new event has no outgoing po, rf, hb or mo edge, so it leaves
        // the relations among the events before it as they were: a `psc`
        // cycle must run through it. Without SeqCst fences `psc` only
        // relates SeqCst accesses directly, so a weaker access is never on
        // one. Nor is the latest candidate (reading the last store, or
        // going last): it has no outgoing fr or mo edge either.
        if !(is_seq_cst(&intent) || weak.seq_cst_fence) {
            return;
        }
        let latest = |c: Candidate| match c {
            Candidate::Place(p) => p + 1 == history.mo().len(),
            Candidate::Read(id) => history.mo().last() == Some(&id),
        };
        // A new `psc` edge leaves the access only if it is `SeqCst` or a
        // `SeqCst` fence happens before it, and only towards a `SeqCst`
        // store after its place in modification order or a `SeqCst` fence
        // that such a store (or a read of one) happens before: without
        // both, no cycle can run through it.
        let fence_before = clock
            .as_slice()
            .iter()
            .zip(weak.first_seq_cst_fence.as_slice())
            .any(|(&seen, &first)| first > 0 && seen >= first);
        let from = is_seq_cst(&intent) || fence_before;
        let towards = |c: Candidate| {
            let after = match c {
                Candidate::Place(p) => p,
                Candidate::Read(id) => history.position(id),
            };
            history.seq_cst_after(after)
                || history.latest_seen_within(&weak.seq_cst_fences_clock) > after
        };
        let to = weak.graph.events.len();
        // The new node's synchronises-with edges, made for the first
        // candidate that needs the check (most need none).
        let mut edges_made = false;
        out.retain(|&c| {
            if latest(c) || !from || !towards(c) {
                return true;
            }
            if !std::mem::replace(&mut edges_made, true) {
                weak.edges_into_buf(t, clock, to, sw);
            }
            let sw = &*sw;
            let (node, mo_index) = weak.node_for(t, located, kind, &intent, c);
            let key = weak.graph_key.with(&node, mo_index, sw);
            weak.psc_memo.decide(key, || {
                let mut graph = weak.graph.clone();
                WeakMemory::add(&mut graph, node, mo_index, sw);
                consistency::seq_cst_consistent_with_newest(&graph)
            })
        });
    }

    /// If thread `t`'s pending operation is an atomic access, the
    /// consistent ways it can go, each as the source it reads: the event
    /// index of the store plus one, 0 for the initial value, `usize::MAX`
    /// for a store's placement (it reads nothing); and each as where it
    /// leaves the access in modification order (a placement: the store it
    /// goes right after, numbered the same way; a read: its source). Empty:
    /// no way is consistent, the execution cannot go on.
    pub(crate) fn weak_sources(&mut self, t: ThreadIdx) -> Option<(&[usize], &[usize])> {
        let pending = self.thread(t).pending?;
        let object = pending.action.object?;
        let kind = pending.action.kind;
        let atomic = matches!(
            self.objects[object.0 as usize].detail,
            ObjectDetail::Atomic(_)
        );
        if !atomic || !kind.is_atomic_access() {
            return None;
        }
        let mut offer = std::mem::take(&mut self.weak_mut().offer);
        let weak = self.weak();
        let stores = weak.located(object).map_or(0, |l| l.history.mo().len());
        let (event, access) = (self.events.len(), (t, object, kind, stores));
        if weak.replay_prefix.is_some_and(|prefix| event < prefix)
            && weak.offer_cache.restore(event, access, &mut offer)
        {
            crate::exec::error::self_check! {
                let mut fresh = Offer::default();
                self.candidates(t, object, kind, &mut fresh);
                assert_eq!(
                    fresh.candidates, offer.candidates,
                    "a replayed access's offer is the one computed for it before"
                );
            }
            let weak = self.weak_mut();
            weak.offer = offer;
            weak.offered = Some(t);
            return Some((&weak.offer.sources, &weak.offer.after));
        }
        self.candidates(t, object, kind, &mut offer);
        let weak = self.weak();
        let located = weak.located(object);
        let numbered = |id: usize| match located {
            Some(located) => located
                .history
                .store(id)
                .event
                .map_or(0, |node| weak.node_facts[node].event + 1),
            None => 0,
        };
        let Offer {
            candidates,
            sources,
            after,
            ..
        } = &mut offer;
        sources.clear();
        sources.extend(candidates.iter().map(|&c| match c {
            Candidate::Place(_) => usize::MAX,
            Candidate::Read(id) => numbered(id),
        }));
        after.clear();
        after.extend(candidates.iter().map(|&c| match (c, located) {
            (Candidate::Place(p), Some(located)) => numbered(located.history.mo()[p]),
            (Candidate::Place(_), None) => 0,
            (Candidate::Read(id), _) => numbered(id),
        }));
        let weak = self.weak_mut();
        if weak.replay_prefix.is_some() {
            weak.offer_cache.keep(event, access, &offer);
        }
        weak.offer = offer;
        weak.offered = Some(t);
        Some((&weak.offer.sources, &weak.offer.after))
    }

    /// The explorer replays the previous execution's first `events` events
    /// (`Scheduler::replay_prefix`): their accesses' offers are reused;
    /// `None`: it replays none, so none is kept either.
    pub(crate) fn set_replay_prefix(&mut self, events: Option<usize>) {
        if let Some(weak) = self.weak.as_mut() {
            weak.replay_prefix = events;
        }
    }

    /// The explorer chose option `k` of the next access.
    pub(crate) fn set_weak_choice(&mut self, k: usize) {
        self.weak_mut().choice = Some(k);
    }

    /// The read part of the running atomic access to `object` (`kind`, the
    /// announced one): the bits it reads (`None` for a store), chosen as the
    /// explorer said. `current` is the location's value now, its initial
    /// value if this is its first access.
    pub(crate) fn weak_read(
        &mut self,
        object: ObjectIdx,
        kind: OpKind,
        current: u64,
    ) -> Option<u64> {
        let index = object.0 as usize;
        let weak = self.weak_mut();
        if weak.locations.len() <= index {
            weak.locations.resize(index + 1, None);
        }
        if weak.locations[index].is_none() {
            let graph_location = weak.graph.mo.len() as u32;
            let list = weak.spare_lists.pop().unwrap_or_default();
            weak.graph.mo.push(list);
            weak.initial.push(current);
            weak.locations[index] = Some(Located {
                history: weak.history_pool.take(current),
                graph_location,
            });
        }
        let t = self.current;
        if self.weak_mut().offered.take() != Some(t) {
            // An access without a choice point (a thread unwinding).
            let mut offer = std::mem::take(&mut self.weak_mut().offer);
            self.candidates(t, object, kind, &mut offer);
            self.weak_mut().offer = offer;
        }
        let weak = self.weak_mut();
        let k = weak.choice.take().unwrap_or(0);
        let candidate = *weak
            .offer
            .candidates
            .get(k)
            .or_internal("the explorer chose an access option that does not exist");
        weak.prepared = Some(candidate);
        match (kind, candidate) {
            (OpKind::Store, _) | (_, Candidate::Place(_)) => None,
            (_, Candidate::Read(id)) => {
                let located = weak.located(object).or_internal("a location just made");
                Some(located.history.store(id).bits)
            }
        }
    }

    /// The rest of the running atomic access to `object`, which happened as
    /// `as_kind` with `order` (a compare-exchange as what it turned out to
    /// be) and stored `written`: happens-before, the history and the graph
    /// move past it. Returns the bits of the location's mo-latest store,
    /// which non-atomic accesses see.
    pub(crate) fn weak_commit(
        &mut self,
        object: ObjectIdx,
        as_kind: OpKind,
        order: Ordering,
        written: Option<u64>,
    ) -> u64 {
        let t = self.current;
        let event = self.events.len() - 1;
        let thread = self.threads[t.index()]
            .as_mut()
            .or_internal("unknown thread");
        let before = thread.hb.clock.clone();
        let epoch = before.get(t);
        let hb = &mut thread.hb;
        let weak = self.weak.as_mut().or_internal("RC11 state without RC11");
        let candidate = weak
            .prepared
            .take()
            .or_internal("an access without its read");
        let node_index = weak.graph.events.len();
        let mut sw = std::mem::take(&mut weak.sw_buf);
        weak.edges_into_buf(t, &before, node_index, &mut sw);
        let located = weak.locations[object.0 as usize]
            .as_mut()
            .or_internal("an unknown location");
        let location = located.graph_location;
        let history = &mut located.history;
        let (access, mo_index) = match candidate {
            Candidate::Read(id) => {
                let mut message = history.store(id).message.clone();
                let rf = history.store(id).event;
                hb.atomic(as_kind, order, &mut message);
                history.read(t, epoch, id);
                weak.last_read.insert((t, object), id);
                if as_kind == OpKind::Load {
                    (Access::Read { location, rf }, None)
                } else {
                    history.take(id);
                    let at = history.position(id);
                    let own = history.insert(
                        at,
                        StoreRecord {
                            bits: written.or_internal("a read-modify-write stored nothing"),
                            event: Some(node_index),
                            by: Some((t, epoch)),
                            message,
                            taken: false,
                            seq_cst: order == Ordering::SeqCst,
                        },
                    );
                    // What the thread last saw here is its own store: stale
                    // only if a store was placed after it (`weak_stale_spin`).
                    weak.last_read.insert((t, object), own);
                    (Access::Rmw { location, rf }, Some(at))
                }
            }
            Candidate::Place(p) => {
                let mut message = VectorClock::new();
                hb.atomic(OpKind::Store, order, &mut message);
                history.insert(
                    p,
                    StoreRecord {
                        bits: written.or_internal("a store stored nothing"),
                        event: Some(node_index),
                        by: Some((t, epoch)),
                        message,
                        taken: false,
                        seq_cst: order == Ordering::SeqCst,
                    },
                );
                (Access::Write { location }, Some(p))
            }
        };
        let latest = history.latest_bits();
        let cas = weak
            .intents
            .get(t.index())
            .copied()
            .flatten()
            .and_then(|intent| {
                let (failure, expected) = intent.cas?;
                Some((expected, intent.order, failure))
            });
        let facts = NodeFacts {
            event,
            written,
            cas,
        };
        weak.push(
            t,
            epoch,
            facts,
            Node {
                thread: t.0,
                access,
                order,
            },
            mo_index,
            &sw,
        );
        weak.sw_buf = sw;
        latest
    }

    /// Whether one of `spinning` (threads in a spin that changes nothing,
    /// with the objects they wait on) last read a store of one of them that
    /// is not its location's latest: it need not wait, it can read the
    /// newer one (another branch of the exploration does). Such a spin is
    /// no deadlock: RC11 promises that stores become visible.
    pub(crate) fn weak_stale_spin(&self, spinning: &[(ThreadIdx, Vec<ObjectIdx>)]) -> bool {
        let weak = self.weak();
        spinning.iter().any(|(t, objects)| {
            objects.iter().any(|&object| {
                let (Some(&id), Some(located)) =
                    (weak.last_read.get(&(*t, object)), weak.located(object))
                else {
                    return false;
                };
                located.history.mo().last() != Some(&id)
            })
        })
    }

    /// A fence by the current thread (its happens-before is `fence_hb`'s).
    pub(crate) fn weak_fence(&mut self, order: Ordering) {
        let t = self.current;
        let event = self.events.len() - 1;
        let before = self.thread(t).hb.clock.clone();
        let weak = self.weak_mut();
        let mut sw = std::mem::take(&mut weak.sw_buf);
        weak.edges_into_buf(t, &before, weak.graph.events.len(), &mut sw);
        let node = Node {
            thread: t.0,
            access: Access::Fence,
            order,
        };
        let facts = NodeFacts {
            event,
            written: None,
            cas: None,
        };
        if order == Ordering::SeqCst {
            weak.seq_cst_fences_clock.join(&before);
        }
        weak.push(t, before.get(t), facts, node, None, &sw);
        weak.sw_buf = sw;
    }

    /// `object` was reached through `&mut` (`get_mut`, `into_inner`): every
    /// access to it so far happens before whatever follows, so its next
    /// access starts a new history from the value it then holds.
    pub(crate) fn weak_restart(&mut self, object: ObjectIdx) {
        let weak = self.weak_mut();
        if let Some(slot) = weak.locations.get_mut(object.0 as usize) {
            // Its buffers go back to the pool (a model's drops restart
            // every location they reach through `&mut`).
            if let Some(located) = slot.take() {
                weak.history_pool.give(located.history);
            }
        }
    }
}

impl WeakMemory {
    /// The execution's reads-from and modification orders, by event, and
    /// its graph (taken, not copied: the execution is over).
    pub(crate) fn into_summary(mut self) -> WeakSummary {
        for located in self.locations.drain(..).flatten() {
            self.history_pool.give(located.history);
        }
        let event = |node: usize| self.node_facts[node].event;
        let mut rf = std::mem::take(&mut self.summary_rf);
        rf.extend(
            self.graph
                .events
                .iter()
                .enumerate()
                .filter_map(|(i, node)| match node.access {
                    Access::Read { rf, .. } | Access::Rmw { rf, .. } => {
                        Some((event(i), rf.map(event)))
                    }
                    _ => None,
                }),
        );
        let mut mo = Vec::with_capacity(self.graph.mo.len());
        for stores in &self.graph.mo {
            let mut list = self.spare_lists.pop().unwrap_or_default();
            list.extend(stores.iter().map(|&n| event(n)));
            mo.push(list);
        }
        self.graph_pool.give_state(
            std::mem::take(&mut self.locations),
            std::mem::take(&mut self.thread_nodes),
            std::mem::take(&mut self.intents),
            std::mem::take(&mut self.last_read),
            std::mem::take(&mut self.spare_lists),
            std::mem::take(&mut self.spare_node_lists),
        );
        WeakSummary {
            rf,
            mo,
            graph: self.graph,
            initial: self.initial,
            nodes: self.node_facts,
        }
    }

    /// Records a new node of `thread` (epoch `epoch`; its event in `facts`).
    fn push(
        &mut self,
        thread: ThreadIdx,
        epoch: u32,
        facts: NodeFacts,
        node: Node,
        mo_index: Option<usize>,
        sw: &[(usize, usize)],
    ) {
        let index = self.graph.events.len();
        self.seq_cst_fence |= node.is_sc_fence();
        // Epochs start at 1: 0 is "none yet".
        if node.is_sc_fence() && self.first_seq_cst_fence.get(thread) == 0 {
            self.first_seq_cst_fence.set(thread, epoch.max(1));
        }
        self.graph_key = self.graph_key.with(&node, mo_index, sw);
        Self::add(&mut self.graph, node, mo_index, sw);
        self.node_facts.push(facts);
        if self.thread_nodes.len() <= thread.index() {
            let spare = &mut self.spare_node_lists;
            self.thread_nodes
                .resize_with(thread.index() + 1, || spare.pop().unwrap_or_default());
        }
        self.thread_nodes[thread.index()].push((epoch, index));
        // A self-check of the exploration, for kase's own tests (the
        // `self-check` feature, which kase's own dev-dependency turns on): a
        // full consistency check costs a cube of the graph per event, so
        // only small graphs, and never in a user's build (a debug build of
        // sharded-slab's `take_local` spent 83 % of its time here).
        #[cfg(all(debug_assertions, any(test, feature = "self-check")))]
        if self.graph.events.len() <= CHECKED_GRAPH_EVENTS {
            if let Err(violation) = consistency::check(&self.graph) {
                crate::exec::error::internal_error!(
                    "the RC11 exploration made an inconsistent graph ({violation:?})"
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(thread: u32, access: Access) -> Node {
        Node {
            thread,
            access,
            order: Ordering::SeqCst,
        }
    }

    #[test]
    fn a_graph_key_tells_graphs_apart_and_a_verdict_is_computed_once() {
        let write = node(1, Access::Write { location: 0 });
        let read = |rf| node(2, Access::Read { location: 0, rf });
        let base = GraphKey::default().with(&write, Some(0), &[]);
        assert_eq!(base, GraphKey::default().with(&write, Some(0), &[]));
        let keys = [
            base.with(&read(Some(0)), None, &[]),
            base.with(&read(None), None, &[]),
            base.with(&read(Some(0)), None, &[(0, 1)]),
            base.with(
                &node(
                    3,
                    Access::Read {
                        location: 0,
                        rf: Some(0),
                    },
                ),
                None,
                &[],
            ),
            base.with(&node(2, Access::Write { location: 0 }), Some(0), &[]),
            base.with(&node(2, Access::Write { location: 0 }), Some(1), &[]),
        ];
        for (i, a) in keys.iter().enumerate() {
            for b in &keys[i + 1..] {
                assert_ne!(a, b);
            }
        }
        let memo = PscMemo::default();
        let mut checks = 0;
        for _ in 0..3 {
            assert!(!memo.decide(keys[0], || {
                checks += 1;
                false
            }));
        }
        assert_eq!(checks, 1);
        assert!(memo.decide(keys[1], || true));
    }
}

//! One execution as the revisit explorer sees it: its events in the order
//! they were added to the graph (*stamps*), the `porf` edges between them,
//! reads-from and modification orders; and the graphs one step away from it
//! (`alternatives`): another store for a read, another place for a store,
//! backward revisits (TruSt, POPL 2022; WEAK-MEMORY.md), and a new lock of
//! a mutex taking an earlier one's place.

use std::collections::HashMap;

use crate::exec::error::self_check;
use crate::exec::weak::consistency;
use crate::exec::weak::graph::{Access, Graph};
use crate::exec::weak::WeakSummary;
use crate::exec::{ObjectKind, OpKind, Outcome, ThreadIdx};

use super::plan::{Key, Offered, Plan, Step};

/// Revisits taken as consistent without the full check are checked fully
/// anyway in kase's own debug builds (`self-check`) up to this many events
/// (its cost is quadratic).
#[cfg(all(debug_assertions, any(test, feature = "self-check")))]
const CHECKED_REVISIT_EVENTS: usize = 64;

/// What an event does to memory; `rf` and the stores are stamps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mem {
    Read {
        location: u32,
        rf: Option<usize>,
    },
    Write {
        location: u32,
    },
    Rmw {
        location: u32,
        rf: Option<usize>,
    },
    /// A fence, or no memory access.
    Other,
}

impl Mem {
    fn location(self) -> Option<usize> {
        match self {
            Mem::Read { location, .. } | Mem::Write { location } | Mem::Rmw { location, .. } => {
                Some(location as usize)
            }
            Mem::Other => None,
        }
    }

    /// The store it reads (`Some(None)`: the initial value); `None` if it
    /// reads nothing.
    fn reads(self) -> Option<Option<usize>> {
        match self {
            Mem::Read { rf, .. } | Mem::Rmw { rf, .. } => Some(rf),
            _ => None,
        }
    }

    fn writes(self) -> bool {
        matches!(self, Mem::Write { .. } | Mem::Rmw { .. })
    }
}

/// One event.
struct Added {
    key: Key,
    /// Its node in the execution's graph (memory accesses and fences).
    node: Option<usize>,
    mem: Mem,
    /// It locks a mutex.
    lock: bool,
    /// A spin's yield, waiting for the write it "reads" (not a choice).
    waits: bool,
    /// The model wanted its choices explored (loom's exploration controls).
    explore: bool,
    /// Its `porf` predecessors other than the store it reads: the previous
    /// event of its thread, and its thread's spawn (a first event) or the
    /// joined thread's exit (a join).
    before: [Option<usize>; 2],
}

/// One execution's graph, by stamp.
pub(super) struct Grown<'a> {
    events: Vec<Added>,
    /// Stamp of each event of the execution, by event index.
    stamp_of: Vec<usize>,
    /// Per graph location: its stores' stamps in modification order.
    mo: Vec<Vec<usize>>,
    weak: &'a WeakSummary,
    /// Stamps below this were replayed from the plan; the rest are new.
    replayed: usize,
    /// Per stamp: it was added maximally (`Step::maximal`).
    added_max: Vec<bool>,
    /// Locations from this one on are mutexes: each lock and unlock a
    /// read-modify-write reading the mutex's previous operation.
    mutexes: usize,
    /// Per stamp: its `porf` prefix as, per thread, how many of the
    /// thread's events are in it (prefixes are closed under program order).
    views: Vec<Vec<u32>>,
    /// Per location: the stamps of the events that access it, by thread.
    accesses: Vec<Accesses>,
    /// Per stamp: its place in its location's `mo`, if it is a store.
    mo_rank: Vec<Option<usize>>,
    /// Per location, per place in `mo`: the least stamp from that place on
    /// (is a store added before `x` later in `mo`?).
    mo_suffix_min: Vec<Vec<usize>>,
    /// Per location and store read (`None`: the initial value): the
    /// read-modify-writes reading it.
    rmw_readers: HashMap<(usize, Option<usize>), Vec<usize>>,
    /// The graph has a `SeqCst` fence (`psc` may then order any events).
    sc_fence: bool,
}

/// A location's accesses, per thread, each list ascending.
#[derive(Clone, Default)]
struct Accesses(Vec<(ThreadIdx, Vec<usize>)>);

impl Accesses {
    fn push(&mut self, t: ThreadIdx, s: usize) {
        match self.0.iter_mut().find(|(u, _)| *u == t) {
            Some((_, list)) => list.push(s),
            None => self.0.push((t, vec![s])),
        }
    }

    /// Those below stamp `until` of threads other than `t`, and `t`'s own
    /// after stamp `after`, ascending: `t`'s earlier ones are in the `porf`
    /// prefix of its event `after`, so never revisited, taken over or
    /// replaced by it. (A long run of one thread's accesses costs nothing
    /// per access this way: neither its earlier nor its later ones are
    /// looked at.)
    fn beyond(&self, t: ThreadIdx, after: usize, until: usize) -> Vec<usize> {
        let mut out: Vec<usize> = self
            .0
            .iter()
            .flat_map(|(u, list)| {
                let from = if *u == t {
                    list.partition_point(|&x| x <= after)
                } else {
                    0
                };
                let to = list.partition_point(|&x| x < until).max(from);
                list[from..to].iter().copied()
            })
            .collect();
        out.sort_unstable();
        out
    }
}

/// A read that now reads another store (`None`: the initial value).
#[derive(Clone, Copy)]
struct Reread {
    at: usize,
    rf: Option<usize>,
}

impl<'a> Grown<'a> {
    /// The graph of `outcome`, whose events have `keys`; the plan's steps
    /// are `planned` (by key: the step's index, its stamp). `None` if the
    /// execution has no RC11 graph or stopped before its plan ran out.
    pub(super) fn new(
        outcome: &'a Outcome,
        keys: &[Key],
        plan: &Plan,
        planned: &HashMap<Key, usize>,
    ) -> Option<Self> {
        let weak = outcome.weak.as_ref()?;
        let n = outcome.events.len();
        let replayed = planned.len();
        let mut stamp_of = Vec::with_capacity(n);
        let mut fresh = replayed;
        for key in keys {
            stamp_of.push(match planned.get(key) {
                Some(&s) => s,
                None => {
                    fresh += 1;
                    fresh - 1
                }
            });
        }
        if fresh - replayed + planned.len() != n {
            return None; // some planned events did not run
        }
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&i| stamp_of[i]);
        let mut node_of = vec![None; n];
        for (node, facts) in weak.nodes.iter().enumerate() {
            node_of[facts.event] = Some(node);
        }
        let node_stamp = |node: usize| stamp_of[weak.nodes[node].event];
        let owner = |object: Option<crate::exec::ObjectIdx>| {
            object.and_then(|o| outcome.owners.get(o.0 as usize).copied().flatten())
        };
        let (mut spawned, mut exited) = (HashMap::new(), HashMap::new());
        for (i, e) in outcome.events.iter().enumerate() {
            match e.action.kind {
                // A spawn's value is the child's index.
                OpKind::Spawn => {
                    if let Some(child) = e.value {
                        spawned.insert(ThreadIdx(child as u32), stamp_of[i]);
                    }
                }
                OpKind::Exit => {
                    exited.insert(e.action.thread, stamp_of[i]);
                }
                _ => {}
            }
        }
        // What each spin's yield waits for: the latest write to its object
        // by another thread when it ran, in the order the events ran (a
        // revisited read runs after its store, which has a later stamp).
        let mut waited_for = vec![None; n];
        let mut location_of_write = HashMap::new();
        let mut latest_write: HashMap<_, [Option<(usize, ThreadIdx)>; 2]> = HashMap::new();
        for (i, e) in outcome.events.iter().enumerate() {
            let (t, object) = (e.action.thread, e.action.object);
            let Some(object) = object else { continue };
            let access = node_of[i].map(|node| weak.graph.events[node].access);
            match access {
                Some(Access::Write { location } | Access::Rmw { location, .. }) => {
                    // The latest write, and the latest by another thread
                    // than the one before it.
                    let entry = latest_write.entry(object).or_default();
                    if entry[0].is_some_and(|(_, by)| by != t) {
                        entry[1] = entry[0];
                    }
                    entry[0] = Some((stamp_of[i], t));
                    location_of_write.insert(object, location);
                }
                _ if e.action.kind == OpKind::Yield => {
                    waited_for[i] = latest_write.get(&object).and_then(|writes| {
                        writes
                            .iter()
                            .flatten()
                            .find(|(_, by)| *by != t)
                            .map(|&(w, _)| w)
                    });
                }
                _ => {}
            }
        }
        // Mutexes: locations after the atomics', in order of first use.
        let mutexes = weak.graph.mo.len();
        let mut mutex_of = HashMap::new();
        let mut previous_op: HashMap<usize, usize> = HashMap::new();
        let mut last = HashMap::new();
        let events: Vec<Added> = order
            .iter()
            .map(|&i| {
                let action = outcome.events[i].action;
                let t = action.thread;
                let po = last.insert(t, stamp_of[i]);
                let other = match (po, action.kind) {
                    (None, _) => spawned.get(&t).copied(),
                    (_, OpKind::Join) => owner(action.object).and_then(|u| exited.get(&u).copied()),
                    _ => None,
                };
                let mem = match node_of[i].map(|node| weak.graph.events[node].access) {
                    Some(Access::Read { location, rf }) => Mem::Read {
                        location,
                        rf: rf.map(node_stamp),
                    },
                    Some(Access::Write { location }) => Mem::Write { location },
                    Some(Access::Rmw { location, rf }) => Mem::Rmw {
                        location,
                        rf: rf.map(node_stamp),
                    },
                    _ => Mem::Other,
                };
                let mem = match (action.kind, action.object) {
                    // A spin's yield waits for another thread's write to
                    // what it read: it depends on the latest such write.
                    (OpKind::Yield, Some(object)) => {
                        match (location_of_write.get(&object), waited_for[i]) {
                            (Some(&location), Some(write)) => Mem::Read {
                                location,
                                rf: Some(write),
                            },
                            _ => mem,
                        }
                    }
                    (OpKind::Lock | OpKind::Unlock, Some(object))
                        if outcome.objects.get(object.0 as usize) == Some(&ObjectKind::Mutex) =>
                    {
                        let next = mutexes + mutex_of.len();
                        let location = *mutex_of.entry(object).or_insert(next);
                        Mem::Rmw {
                            location: location as u32,
                            rf: previous_op.insert(location, stamp_of[i]),
                        }
                    }
                    _ => mem,
                };
                Added {
                    key: keys[i],
                    node: node_of[i],
                    waits: action.kind == OpKind::Yield && mem.reads().is_some(),
                    explore: outcome.events[i].explore,
                    mem,
                    lock: action.kind == OpKind::Lock
                        && mem.location().is_some_and(|l| l >= mutexes),
                    before: [po, other],
                }
            })
            .collect();
        let mut mo: Vec<Vec<usize>> = weak
            .graph
            .mo
            .iter()
            .map(|nodes| nodes.iter().map(|&node| node_stamp(node)).collect())
            .collect();
        mo.resize(mutexes + mutex_of.len(), Vec::new());
        for (s, event) in events.iter().enumerate() {
            if let Some(location) = event.mem.location().filter(|&l| l >= mutexes) {
                mo[location].push(s);
            }
        }
        let mut grown = Grown {
            events,
            stamp_of,
            mo,
            weak,
            replayed,
            added_max: plan.steps.iter().map(|step| step.maximal).collect(),
            mutexes,
            views: Vec::new(),
            accesses: Vec::new(),
            mo_rank: vec![None; n],
            mo_suffix_min: Vec::new(),
            rmw_readers: HashMap::new(),
            sc_fence: weak.graph.events.iter().any(|node| node.is_sc_fence()),
        };
        grown.views = grown.porf_views();
        grown.accesses = vec![Accesses::default(); grown.mo.len()];
        for (s, event) in grown.events.iter().enumerate() {
            if let Some(location) = event.mem.location() {
                grown.accesses[location].push(event.key.0, s);
            }
            if let Mem::Rmw { location, rf } = event.mem {
                let readers = grown.rmw_readers.entry((location as usize, rf));
                readers.or_default().push(s);
            }
        }
        for stores in &grown.mo {
            for (place, &z) in stores.iter().enumerate() {
                grown.mo_rank[z] = Some(place);
            }
            let mut least = usize::MAX;
            let mut suffix: Vec<usize> = stores
                .iter()
                .rev()
                .map(|&z| {
                    least = least.min(z);
                    least
                })
                .collect();
            suffix.reverse();
            grown.mo_suffix_min.push(suffix);
        }
        for s in replayed..n {
            let maximal = match grown.events[s].mem.reads() {
                _ if grown.events[s].waits => true,
                Some(rf) => grown.latest_before(s, rf),
                None => grown.latest_before(s, Some(s)),
            };
            grown.added_max.push(maximal);
        }
        Some(grown)
    }

    /// Every graph one step away from this one that this execution is the
    /// one to find: the other options of its new accesses (`offered`, by
    /// key), and the backward revisits of its new stores (and of the
    /// planned store `flagged`); and whether the model's exploration
    /// controls left some out (events added while it turned exploring off
    /// offer none).
    pub(super) fn alternatives(
        &self,
        offered: &HashMap<Key, Offered>,
        flagged: &[usize],
        budget: &crate::explore::budget::Budget,
    ) -> (Vec<Plan>, bool) {
        let last = self.replayed.saturating_sub(1);
        // Any order is complete; this one tries the other stores a read can
        // read (where weak behaviours show) before revisits, and the last
        // events' options first (they change the least).
        let (mut forward, mut revisits) = (Vec::new(), Vec::new());
        let mut cut = false;
        for s in (0..self.events.len()).rev() {
            if budget.expired_now() {
                break; // the caller sees it and stops
            }
            let new = s >= self.replayed;
            let event = &self.events[s];
            if new && !event.explore {
                let skipped = (event.mem.writes() && !self.backward(s, s, None).is_empty())
                    || !self.take_over(s).is_empty()
                    || !self.lock_first(s).is_empty();
                cut |= skipped;
                continue;
            }
            if new {
                if let Some(options) = offered.get(&event.key) {
                    for j in 1..options.sources.len() {
                        let plan = if options.sources[j] == usize::MAX {
                            self.placed(s, self.stamp(options.after[j]))
                        } else {
                            let rf = self.stamp(options.sources[j]);
                            self.reread(s, rf)
                        };
                        forward.extend(plan);
                    }
                }
            }
            if event.mem.writes() {
                if new {
                    revisits.extend(self.backward(s, s, None));
                } else if flagged.contains(&s) {
                    revisits.extend(self.backward(s, last, None));
                }
            }
            if new {
                revisits.extend(self.take_over(s));
                revisits.extend(self.lock_first(s));
            }
        }
        forward.append(&mut revisits);
        (forward, cut)
    }

    /// The stamp of the store an option names (event index plus one; 0 is
    /// the initial value).
    fn stamp(&self, numbered: usize) -> Option<usize> {
        numbered.checked_sub(1).map(|event| self.stamp_of[event])
    }

    /// The events `porf`-before `of` (and `of`), with `of` reading `rf`
    /// instead of its store if given.
    fn prefix(&self, of: usize, rf: Option<Option<usize>>) -> Vec<bool> {
        let view = self.view_of(of, rf);
        (0..self.events.len())
            .map(|x| {
                let (t, k) = self.events[x].key;
                view.get(t.index()).is_some_and(|&count| count > k)
            })
            .collect()
    }

    /// The `porf` prefix of `of` (with `of` reading `rf` instead of its
    /// store if given) as, per thread, how many of its events are in it.
    fn view_of(&self, of: usize, rf: Option<Option<usize>>) -> Vec<u32> {
        match rf {
            None => self.views[of].clone(),
            // Its other predecessors' views and the other store's.
            Some(rf) => {
                let event = &self.events[of];
                let mut view = vec![0u32; self.views[of].len()];
                for p in event.before.into_iter().flatten().chain(rf) {
                    join(&mut view, &self.views[p]);
                }
                let (t, k) = event.key;
                view[t.index()] = view[t.index()].max(k + 1);
                view
            }
        }
    }

    /// Every event's `porf` prefix (`views`), computed once: each event's
    /// after those it depends on (a revisited read's store comes later in
    /// stamp order, so not in stamp order).
    fn porf_views(&self) -> Vec<Vec<u32>> {
        let threads = self
            .events
            .iter()
            .map(|e| e.key.0.index() + 1)
            .max()
            .unwrap_or(0);
        let depends_on = |s: usize| {
            let event = &self.events[s];
            event
                .before
                .into_iter()
                .flatten()
                .chain(event.mem.reads().flatten())
        };
        let mut views: Vec<Option<Vec<u32>>> = vec![None; self.events.len()];
        for start in 0..self.events.len() {
            let mut todo = vec![(start, false)];
            while let Some((s, ready)) = todo.pop() {
                if views[s].is_some() {
                    continue;
                }
                if !ready {
                    todo.push((s, true));
                    todo.extend(
                        depends_on(s)
                            .filter(|&p| views[p].is_none())
                            .map(|p| (p, false)),
                    );
                    continue;
                }
                let mut view = vec![0u32; threads];
                for p in depends_on(s) {
                    join(&mut view, views[p].as_deref().unwrap_or_default());
                }
                let (t, k) = self.events[s].key;
                view[t.index()] = view[t.index()].max(k + 1);
                views[s] = Some(view);
            }
        }
        views.into_iter().map(Option::unwrap_or_default).collect()
    }

    /// Whether event `x` is in event `z`'s `porf` prefix.
    fn depends(&self, z: usize, x: usize) -> bool {
        let (t, k) = self.events[x].key;
        self.views[z].get(t.index()).is_some_and(|&count| count > k)
    }

    /// Whether event `x`, to be deleted (or revisited: `r`) by a revisit
    /// from store `w` that keeps `kept`, was added *maximally*: as the
    /// exploration adds it by default (a read reading the latest store, a
    /// store going latest), with no store kept after what it read or wrote
    /// that does not depend on it, and not reading a deleted store added
    /// after it. Only then may the revisit delete it: it is what makes each
    /// graph reached once.
    fn maximal(&self, x: usize, w: usize, kept: &[bool]) -> bool {
        if !self.added_max[x] {
            return false;
        }
        let event = &self.events[x];
        if event.waits {
            return true;
        }
        let Some(location) = event.mem.location() else {
            return true;
        };
        if let Some(Some(rf)) = event.mem.reads() {
            if rf > x && !kept[rf] {
                return false; // it was revisited by a store that goes
            }
        }
        let stored = match event.mem.reads() {
            Some(rf) => rf,
            None => Some(x),
        };
        let mo = &self.mo[location];
        let later = match stored {
            Some(s) => self.mo_rank[s].map_or(&[][..], |p| &mo[p + 1..]),
            None => &mo[..],
        };
        !later
            .iter()
            .any(|&z| z != w && z != x && z < kept.len() && kept[z] && !self.depends(z, x))
    }

    /// A store's backward revisits: each read of its location not in its
    /// prefix (and, for a read-modify-write that reads a store another one
    /// took, added no later than that one) reads it instead, and what was
    /// added after that read and is not in the prefix goes. `upto`: the
    /// last event of the graph (the store itself if it is new; a planned
    /// store is added anew after the whole plan). `reread`: the store's own
    /// read, if it reads another store than it did.
    fn backward(&self, w: usize, upto: usize, reread: Option<Reread>) -> Vec<Plan> {
        let Some(location) = self.events[w].mem.location().filter(|&l| l < self.mutexes) else {
            return Vec::new();
        };
        // What it is with its own read changed (a compare-exchange may then
        // succeed).
        let mem = match reread {
            Some(r) => self.reading(r.at, r.rf).0,
            None => self.events[w].mem,
        };
        let own_rf = mem.reads().flatten();
        // Two read-modify-writes cannot read one store: if another one took
        // what this one reads, only reads up to it may be revisited (one of
        // which must make room).
        let conflict = match mem {
            Mem::Rmw { .. } => self
                .rmw_readers
                .get(&(location, own_rf))
                .and_then(|readers| readers.iter().copied().find(|&b| b <= upto && b != w)),
            _ => None,
        };
        if reread.is_some() && conflict.is_none() {
            return Vec::new(); // the forward option covers it
        }
        let last = conflict.unwrap_or(upto);
        let candidates = self.accesses[location].beyond(self.events[w].key.0, w, last + 1);
        if candidates.is_empty() {
            return Vec::new();
        }
        let prefix = self.prefix(w, reread.map(|r| r.rf));
        // A store's place is its own choice: a revisit that deletes the
        // store right after it would repeat another placement's revisit.
        let successor = match mem {
            Mem::Write { .. } => {
                let mo = &self.mo[location];
                let p = self.mo_rank[w];
                p.and_then(|p| mo[p + 1..].iter().copied().find(|&z| z <= upto))
            }
            _ => None,
        };
        let mut plans = Vec::new();
        for r in candidates {
            let read = self.events[r].mem;
            if prefix[r] || read.reads().is_none() || self.events[r].waits {
                continue;
            }
            if read.reads() == Some(Some(w)) {
                continue;
            }
            let mut rereads: Vec<Reread> = reread.into_iter().collect();
            rereads.push(Reread { at: r, rf: Some(w) });
            plans.extend(self.revisit(r, w, upto, &prefix, successor, &rereads));
        }
        plans
    }

    /// A new read-modify-write `e` reading a store `s` another one took:
    /// no forward option (two read-modify-writes cannot read one store),
    /// but its backward revisits may make room.
    fn take_over(&self, e: usize) -> Vec<Plan> {
        let event = &self.events[e];
        let (Some(location), Some(node)) = (event.mem.location(), event.node) else {
            return Vec::new();
        };
        let facts = &self.weak.nodes[node];
        if facts.cas.is_none() && !matches!(event.mem, Mem::Rmw { .. }) {
            return Vec::new();
        }
        // The store `s` a read-modify-write `b` took; if `b` would be in
        // `e`'s prefix reading `s`, it stays, and two would read `s`.
        let stays = |b: usize, s: Option<usize>| {
            event
                .before
                .into_iter()
                .flatten()
                .chain(s)
                .any(|p| p == b || self.depends(p, b))
        };
        let mut taken: Vec<Option<usize>> = self.accesses[location]
            .beyond(event.key.0, e, e)
            .into_iter()
            .filter_map(|b| match self.events[b].mem {
                Mem::Rmw { rf, .. } if !stays(b, rf) => Some(rf),
                _ => None,
            })
            .filter(|&s| Some(s) != event.mem.reads())
            .filter(|&s| {
                facts
                    .cas
                    .map_or(true, |(expected, _, _)| self.bits(location, s) == expected)
            })
            .collect();
        taken.dedup();
        let mut plans = Vec::new();
        for s in taken {
            plans.extend(self.backward(e, e, Some(Reread { at: e, rf: s })));
        }
        plans
    }

    /// A new lock `l` of a mutex taking the place of an earlier lock `k`
    /// that is not in its prefix: it reads what `k` read, and `k`, with
    /// what was added after it and is not in `l`'s prefix, goes (its thread
    /// locks again later, after `l`'s unlock).
    fn lock_first(&self, l: usize) -> Vec<Plan> {
        let Mem::Rmw { location, .. } = self.events[l].mem else {
            return Vec::new();
        };
        let location = location as usize;
        if location < self.mutexes || !self.events[l].lock {
            return Vec::new();
        }
        let mut plans = Vec::new();
        for k in self.accesses[location].beyond(self.events[l].key.0, l, l) {
            let (true, Mem::Rmw { rf, .. }) = (self.events[k].lock, self.events[k].mem) else {
                continue;
            };
            let reread = Reread { at: l, rf };
            let prefix = self.prefix(l, Some(rf));
            if prefix[k] {
                continue;
            }
            plans.extend(self.replace(k, l, &prefix, reread));
        }
        plans
    }

    /// Lock `k` replaced by the new lock `l` (`reread`): as a revisit, but
    /// `k` goes too.
    fn replace(&self, k: usize, l: usize, prefix: &[bool], reread: Reread) -> Option<Plan> {
        let kept: Vec<bool> = (0..=l).map(|x| x < k || prefix[x]).collect();
        if !(k..=l)
            .filter(|&x| !kept[x])
            .all(|x| self.maximal(x, l, &kept))
        {
            return None;
        }
        let dangling = (0..=l).any(|x| {
            kept[x]
                && x != l
                && self.events[x]
                    .mem
                    .reads()
                    .flatten()
                    .is_some_and(|s| !kept[s])
        });
        if dangling {
            return None;
        }
        let kept: Vec<usize> = (0..=l).filter(|&x| kept[x]).collect();
        let (mut plan, _) = self.build(&kept, &[reread], None, false)?;
        let at = plan.steps.len() - 1;
        plan.steps[at].maximal = false;
        Some(plan)
    }

    /// Read `r` revisited by store `w` (whose prefix is `prefix`), with
    /// `rereads`: the plan, if the deleted events were all added maximally,
    /// `keep` (the store right after `w`, if it matters) stays, no kept
    /// read reads a deleted store, and the graph is consistent.
    fn revisit(
        &self,
        r: usize,
        w: usize,
        upto: usize,
        prefix: &[bool],
        keep: Option<usize>,
        rereads: &[Reread],
    ) -> Option<Plan> {
        let kept: Vec<bool> = (0..=upto).map(|x| x <= r || prefix[x]).collect();
        if keep.is_some_and(|k| !kept[k]) {
            return None;
        }
        let deleted = (r + 1..=upto).filter(|&x| !kept[x]);
        if !std::iter::once(r)
            .chain(deleted)
            .all(|x| self.maximal(x, w, &kept))
        {
            return None;
        }
        // A kept read may not read a deleted store, nor the store of a
        // revisited read-modify-write (it is deleted and added anew after
        // its read).
        let rereads_at = |s: usize| rereads.iter().any(|reread| reread.at == s);
        let dangling = (0..=upto).any(|x| {
            kept[x]
                && !rereads_at(x)
                && self.events[x]
                    .mem
                    .reads()
                    .flatten()
                    .is_some_and(|s| !kept[s] || rereads_at(s))
        });
        if dangling {
            return None;
        }
        let check = !self.plainly_coherent(r, w, rereads, &kept);
        let kept: Vec<usize> = (0..=upto).filter(|&x| kept[x]).collect();
        let (mut plan, mo) = self.build(&kept, rereads, None, check)?;
        self_check!(assert!(
            check
                || kept.len() > CHECKED_REVISIT_EVENTS
                || self.build(&kept, rereads, None, true).is_some(),
            "a revisit taken as consistent without a check is not"
        ));
        // The revisited read is added maximally iff it reads the latest
        // store (a revisited read-modify-write's store, added anew, aside).
        let rereads_at = |s: usize| rereads.iter().any(|reread| reread.at == s && s != w);
        let latest = self.events[w].mem.location().is_some_and(|location| {
            let stores = &mo[location];
            stores
                .iter()
                .position(|&z| z == w)
                .is_some_and(|p| stores[p + 1..].iter().all(|&z| rereads_at(z)))
        });
        for reread in rereads {
            let at = kept.iter().position(|&x| x == reread.at)?;
            plan.steps[at].maximal = reread.at == r && latest;
        }
        plan.revisits_of = rereads
            .iter()
            .filter(|reread| reread.at != w)
            .filter_map(|reread| kept.iter().position(|&x| x == reread.at))
            .collect();
        Some(plan)
    }

    /// Whether plain read `r` revisited by `w` alone (`rereads`), keeping
    /// `kept`, is consistent by a check linear in its location's accesses
    /// instead of the full one (quadratic in the graph). The kept graph is
    /// a `porf`-closed part of a consistent graph, so consistent itself,
    /// and `r` is `porf`-maximal in it: it is the last kept event of its
    /// thread (anything after it would be in `w`'s prefix, so would `r`)
    /// and no kept event reads it. A new violation must then run through
    /// `r`. Thin air cannot: nothing comes after `r`. Atomicity cannot: `r`
    /// writes nothing. Nor `psc`: without `SeqCst` fences it orders only
    /// `SeqCst` accesses, `r` is none, and the edges into `r` are the only
    /// new ones. What is left is coherence, `hb ; eco?` through `r`: an
    /// event that happens before `r` is, or reads, a store after `w` in
    /// modification order. `hb` is within `porf`, so it holds if nothing
    /// in `r`'s `porf` prefix is or reads such a store. `false`: not shown
    /// this way (the full check decides).
    fn plainly_coherent(&self, r: usize, w: usize, rereads: &[Reread], kept: &[bool]) -> bool {
        let (Mem::Read { location, .. }, [only]) = (self.events[r].mem, rereads) else {
            return false;
        };
        if self.sc_fence || only.at != r || self.events[r].waits {
            return false;
        }
        match self.reading(r, Some(w)) {
            (Mem::Read { .. }, order) if order != std::sync::atomic::Ordering::SeqCst => {}
            _ => return false,
        }
        let Some(w_rank) = self.mo_rank[w] else {
            return false;
        };
        let view = self.view_of(r, Some(Some(w)));
        let in_view = |x: usize| {
            let (t, k) = self.events[x].key;
            view.get(t.index()).is_some_and(|&count| count > k)
        };
        let after_w =
            |s: Option<usize>| s.is_some_and(|s| self.mo_rank[s].map_or(true, |p| p > w_rank));
        self.accesses[location as usize].0.iter().all(|(_, list)| {
            list.iter().all(|&z| {
                let event = &self.events[z];
                if z == r
                    || event.node.is_none()
                    || !kept.get(z).copied().unwrap_or(false)
                    || !in_view(z)
                {
                    return true;
                }
                let seen = match event.mem {
                    Mem::Read { rf, .. } => rf,
                    _ => Some(z),
                };
                !after_w(seen)
            })
        })
    }

    /// Whether `store` (`None`: the initial value) is the latest store of
    /// event `x`'s location among those added before `x` (`x` itself, if
    /// it stores, aside).
    fn latest_before(&self, x: usize, store: Option<usize>) -> bool {
        let Some(location) = self.events[x].mem.location() else {
            return true;
        };
        let from = match store {
            Some(s) => match self.mo_rank[s] {
                Some(p) => p + 1,
                None => return false,
            },
            None => 0,
        };
        self.mo_suffix_min[location]
            .get(from)
            .map_or(true, |&least| least >= x)
    }

    /// Store `s` (new) placed right after `after` (`None`: the initial
    /// value) instead; its revisits are computed when it runs again.
    fn placed(&self, s: usize, after: Option<usize>) -> Option<Plan> {
        let kept: Vec<usize> = (0..=s).collect();
        let (mut plan, _) = self.build(&kept, &[], Some((s, after)), false)?;
        plan.steps[s].maximal = false;
        plan.revisits_of = vec![s];
        Some(plan)
    }

    /// Everything up to new read `s`, which reads `rf` instead (an option
    /// the executor offered: consistent).
    fn reread(&self, s: usize, rf: Option<usize>) -> Option<Plan> {
        let kept: Vec<usize> = (0..=s).collect();
        let (mut plan, _) = self.build(&kept, &[Reread { at: s, rf }], None, false)?;
        plan.steps[s].maximal = self.latest_before(s, rf);
        // A read-modify-write's store is added after its read: anew.
        plan.revisits_of = vec![s];
        Some(plan)
    }

    /// The bits store `s` wrote (`None`: the location's initial value).
    fn bits(&self, location: usize, s: Option<usize>) -> u64 {
        match s {
            Some(s) => self.events[s]
                .node
                .and_then(|node| self.weak.nodes[node].written)
                .unwrap_or_default(),
            None => self.weak.initial[location],
        }
    }

    /// What event `x` becomes when it reads `rf`, with its ordering: a
    /// compare-exchange succeeds or fails by the bits it reads.
    fn reading(&self, x: usize, rf: Option<usize>) -> (Mem, std::sync::atomic::Ordering) {
        let event = &self.events[x];
        let Some(node) = event.node else {
            // A mutex operation.
            let location = event.mem.location().expect("a mutex operation") as u32;
            return (
                Mem::Rmw { location, rf },
                std::sync::atomic::Ordering::SeqCst,
            );
        };
        let order = self.weak.graph.events[node].order;
        let location = event.mem.location().expect("a read has a location");
        let l = location as u32;
        match self.weak.nodes[node].cas {
            Some((expected, success, failure)) => {
                if self.bits(location, rf) == expected {
                    (Mem::Rmw { location: l, rf }, success)
                } else {
                    (Mem::Read { location: l, rf }, failure)
                }
            }
            None => match event.mem {
                Mem::Rmw { .. } => (Mem::Rmw { location: l, rf }, order),
                _ => (Mem::Read { location: l, rf }, order),
            },
        }
    }

    /// The plan of the graph made of the events `kept` (ascending stamps),
    /// with `rereads` applied in order and store `placed.0` moved right
    /// after `placed.1`; `None` if `check` finds it inconsistent.
    fn build(
        &self,
        kept: &[usize],
        rereads: &[Reread],
        placed: Option<(usize, Option<usize>)>,
        check: bool,
    ) -> Option<(Plan, Vec<Vec<usize>>)> {
        let last = *kept.last()?;
        let mut inside = vec![false; last + 1];
        for &x in kept {
            inside[x] = true;
        }
        let mut mem: HashMap<usize, (Mem, std::sync::atomic::Ordering)> = HashMap::new();
        let mut mo: Vec<Vec<usize>> = self
            .mo
            .iter()
            .map(|stores| {
                stores
                    .iter()
                    .copied()
                    .filter(|&z| z <= last && inside[z])
                    .collect()
            })
            .collect();
        for reread in rereads {
            let (new, order) = self.reading(reread.at, reread.rf);
            let location = new.location().expect("a read has a location");
            mo[location].retain(|&z| z != reread.at);
            if let Mem::Rmw { rf, .. } = new {
                move_to(&mut mo, reread.at, location, rf);
            }
            mem.insert(reread.at, (new, order));
        }
        if let Some((s, after)) = placed {
            let location = self.events[s].mem.location()?;
            move_to(&mut mo, s, location, after);
        }
        let mem_of = |x: usize| mem.get(&x).map_or(self.events[x].mem, |&(m, _)| m);
        if check && !self.consistent(kept, &mem, &mo) {
            return None;
        }
        let mut rank = HashMap::new();
        for stores in &mo {
            for (i, &z) in stores.iter().enumerate() {
                rank.insert(z, i as u32);
            }
        }
        let steps = kept
            .iter()
            .map(|&x| Step {
                key: self.events[x].key,
                reads: mem_of(x).reads().map(|rf| rf.map(|s| self.events[s].key)),
                rank: rank.get(&x).copied(),
                maximal: self.added_max[x],
            })
            .collect();
        let plan = Plan {
            steps,
            revisits_of: Vec::new(),
        };
        Some((plan, mo))
    }

    /// Whether the graph of `kept` events, with the accesses in `changed`
    /// and modification orders `mo`, satisfies RC11's axioms.
    fn consistent(
        &self,
        kept: &[usize],
        changed: &HashMap<usize, (Mem, std::sync::atomic::Ordering)>,
        mo: &[Vec<usize>],
    ) -> bool {
        let mut index = HashMap::new();
        let mut graph = Graph::default();
        let mut by_node = HashMap::new();
        for &x in kept {
            let Some(node) = self.events[x].node else {
                continue;
            };
            index.insert(x, graph.events.len());
            by_node.insert(node, graph.events.len());
            graph.events.push(self.weak.graph.events[node].clone());
        }
        for (&x, &(m, order)) in changed {
            let Some(&at) = index.get(&x) else {
                continue; // a mutex operation: not a memory event
            };
            graph.events[at].order = order;
            graph.events[at].access = match m {
                Mem::Read { location, rf } => Access::Read {
                    location,
                    rf: rf.map(|s| index[&s]),
                },
                Mem::Rmw { location, rf } => Access::Rmw {
                    location,
                    rf: rf.map(|s| index[&s]),
                },
                _ => unreachable!("a reread is a read"),
            };
        }
        for &x in kept {
            if changed.contains_key(&x) {
                continue;
            }
            if let Some(at) = index.get(&x) {
                let access = &mut graph.events[*at].access;
                if let Access::Read { rf, .. } | Access::Rmw { rf, .. } = access {
                    *rf = rf.map(|node| by_node[&node]);
                }
            }
        }
        graph.mo = mo[..self.mutexes]
            .iter()
            .map(|stores| stores.iter().map(|z| index[z]).collect())
            .collect();
        graph.sw = self
            .weak
            .graph
            .sw
            .iter()
            .filter_map(|(a, b)| Some((*by_node.get(a)?, *by_node.get(b)?)))
            .collect();
        consistency::check(&graph).is_ok()
    }
}

/// Widens `view` to include `other` (per thread, the longer prefix).
fn join(view: &mut [u32], other: &[u32]) {
    for (mine, theirs) in view.iter_mut().zip(other) {
        *mine = (*mine).max(*theirs);
    }
}

/// Moves store `x` of `location` right after `after` (`None`: first).
fn move_to(mo: &mut [Vec<usize>], x: usize, location: usize, after: Option<usize>) {
    let stores = &mut mo[location];
    stores.retain(|&z| z != x);
    let at = after.map_or(0, |a| {
        stores.iter().position(|&z| z == a).map_or(0, |p| p + 1)
    });
    stores.insert(at, x);
}

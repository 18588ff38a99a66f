//! Alternatives through a comb ([QPOR, §5, Def. 6]: *Quasi-Optimal Partial
//! Order Reduction*, Nguyen, Rodríguez, Sousa, Coti and Petrucci, CAV 2018).

use std::collections::hash_map::Entry;

use crate::exec::error::self_check;
use crate::fast_hash::{Map, Set};

use super::frontiers::Frontiers;
use super::pool::{ListPool, NO_POOLED};
use super::state::ObjState;
use super::unfolding::EventId;
use super::{Alternatives, Por};

impl Por {
    /// A clue to explore at node `i` without its unit `event` (by its last
    /// event): `J \ C` for a k-partial (or full) alternative `J` to
    /// `D ∪ {event}` after `C`, or `None` if there is none.
    pub(super) fn alternative(&self, i: usize, event: EventId) -> Option<Set<EventId>> {
        let config_len = self.tree.nodes[i].config_len;
        let in_c = |x: EventId| self.run.pos.get(x).is_some_and(|p| p < config_len);
        // The lists are built in buffers kept between calls: an alternative
        // is sought at every node a backtrack passes, and its own vectors
        // (`D` listed, the targets, a spike each) were a tenth of what an
        // execution allocated.
        let mut scratch = self.alt_scratch.borrow_mut();
        let AltScratch {
            targets,
            spikes,
            ranges,
            chosen,
        } = &mut *scratch;
        spikes.clear();
        ranges.clear();
        chosen.clear();
        // `event`'s own spike first: most nodes a backtrack passes have no
        // alternative because `event` has no immediate conflict left to
        // take, and that is then known before `D` is even listed.
        if !self.spike(i, event, event, spikes) {
            return None;
        }
        let event_spike = (0, spikes.len());
        targets.clear();
        targets.extend(self.tree.d_units.iter().copied().filter(|&x| x != event));
        self_check!(assert_eq!(
            self.tree.d_units.len(),
            self.tree.in_d.len(),
            "D listed as it is"
        ));
        targets.sort_unstable();
        targets.push(event);
        if let Alternatives::KPartial(k) = self.alternatives {
            // `event` (last) first, then the most recently added.
            targets.reverse();
            targets.truncate(k.max(1));
        }
        for &target in targets.iter() {
            if target == event {
                ranges.push((target, event_spike.0, event_spike.1));
                continue;
            }
            let start = spikes.len();
            if !self.spike(i, event, target, spikes) {
                return None;
            }
            ranges.push((target, start, spikes.len()));
        }
        let mut found = None;
        let mut accept = |chosen: &[EventId]| {
            let clue = self.u.closure(chosen.iter().copied(), in_c);
            if self.startable(&clue, config_len) {
                found = Some(clue);
                true
            } else {
                false
            }
        };
        self.combine(ranges, spikes, chosen, &mut accept);
        found
    }

    /// Appends to `spikes` the spike of `target` at node `i`, whose unit
    /// `event` is being added to `D`: the immediate conflicts of the
    /// target's unit that a clue may take, sorted. Returns false (and
    /// appends nothing) if there is none (or the deadline passed, which
    /// `advance` then sees).
    fn spike(&self, i: usize, event: EventId, target: EventId, spikes: &mut Vec<EventId>) -> bool {
        if self.budget.expired() {
            return false;
        }
        // A unit (a pure part of a critical section) conflicts with
        // whatever conflicts with one of its events. Node `i`'s lists avoid
        // its configuration and D but for `event`, which joins D only when
        // a clue is found.
        let start = spikes.len();
        self.spike_candidates(i, target, |candidates| {
            spikes.extend(
                candidates
                    .iter()
                    .copied()
                    .filter(|&x| !self.u.leq(event, x)),
            )
        });
        spikes[start..].sort_unstable();
        let mut kept = start;
        for k in start..spikes.len() {
            if kept == start || spikes[k] != spikes[kept - 1] {
                spikes[kept] = spikes[k];
                kept += 1;
            }
        }
        spikes.truncate(kept);
        kept > start
    }

    /// The maximal events of the first `config_len` events of `C` that are
    /// not among its first `since`: each thread's last one, if it came
    /// after those. An event that does not conflict with the shorter
    /// prefix conflicts with the longer one iff it conflicts with one of
    /// these (conflict is inherited upwards, and a thread's events before
    /// its last in the shorter prefix lie below its maximal one there).
    /// Each with its thread's index: the comb tests many events against
    /// the same few, and looking the thread up in each one's record was a
    /// cache miss per test.
    pub(super) fn maximal_since(&self, config_len: usize, since: usize) -> Vec<(usize, EventId)> {
        self.run
            .positions
            .iter()
            .enumerate()
            .filter_map(|(thread, events)| {
                let n = events.partition_point(|&(pos, _)| pos < config_len);
                let (pos, event) = events[n.checked_sub(1)?];
                (pos >= since).then_some((thread, event))
            })
            .collect()
    }

    /// What moved in the first `config_len` events of `C` since its first
    /// `since`: the threads' last events ([`maximal_since`](Self::maximal_since))
    /// and the frontiers of the objects touched since, by canonical name.
    fn moved_since(&self, config_len: usize, since: usize) -> Moved {
        let threads = self.maximal_since(config_len, since);
        // The objects with an access at a position in `since..config_len`
        // (a model has few objects, a configuration many events).
        let moved_in = |o: &ObjState| {
            let first = o.accesses.partition_point(|&(pos, ..)| pos < since);
            o.accesses
                .get(first)
                .is_some_and(|&(pos, ..)| pos < config_len)
        };
        // Listed by index into a buffer kept between calls (a vector each
        // was one of the comb's most frequent allocations).
        let mut moved = self.moved_buf.borrow_mut();
        moved.clear();
        moved.extend(
            self.run
                .objects
                .iter()
                .enumerate()
                .filter_map(|(i, o)| o.as_ref().map(|o| (i, o)))
                .filter(|&(_, o)| moved_in(o))
                .map(|(i, o)| (self.u.names.find(o.name), i)),
        );
        moved.sort_unstable_by_key(|&(name, _)| name);
        let object = |i: usize| self.run.objects[i].as_ref().expect("listed above");
        // Flat, as an event's frontiers are: one allocation, not one per
        // object (a mutex's reads under peeking are many).
        let mut builder = self.moved_builder.borrow_mut();
        if self.names_shared() {
            // A name may denote several objects, moved or not: each name's
            // frontier from all of them.
            moved.dedup_by_key(|&mut (name, _)| name);
            for &(name, _) in moved.iter() {
                let f = self.frontier_at(name, Some(config_len));
                builder.push(name, f.write, f.reads);
            }
        } else {
            for &(name, i) in moved.iter() {
                let (write, reads) = object(i).frontier_parts_at(config_len);
                builder.push(name, write, reads.map(|&(_, e, _)| e));
            }
        }
        let objects = builder.finish();
        Moved { threads, objects }
    }

    /// The events in immediate conflict with an event of the unit `rep`
    /// (by its last event) that a spike at node `n` or deeper can take:
    /// those that do not conflict with `n`'s configuration and whose
    /// history has no unit that `n` or a shallower node put in `D`. An
    /// event in immediate conflict with several of the unit's events may
    /// be listed more than once.
    ///
    /// They are handed to `visit` in place: an alternative asks for them per
    /// unit of `D`, too often for a copy each time.
    pub(super) fn spike_candidates<R>(
        &self,
        n: usize,
        rep: EventId,
        visit: impl FnOnce(&[EventId]) -> R,
    ) -> R {
        let Some(list) = self.refresh_spikes(n, rep) else {
            self_check!(self.check_spike_candidates(n, rep, &[]));
            return visit(&[]);
        };
        let cache = self.tree.spikes[n].borrow();
        let candidates = cache.lists.get(list);
        self_check!(assert_eq!(
            candidates,
            cache.candidates(rep),
            "the list refreshed"
        ));
        self_check!(self.check_spike_candidates(n, rep, candidates));
        visit(candidates)
    }

    /// Self-check: `candidates` are node `n`'s spike candidates of the
    /// unit `rep` by their definition, found without any cache: every
    /// event that the neighbour lists of the unit's events give, in
    /// immediate conflict with one of them, in no conflict with `n`'s
    /// configuration, and with no unit that `n` or a shallower node put in
    /// `D` in its history. Checks the caches through prunings, merges and
    /// nodes' sources.
    #[cfg(all(debug_assertions, any(test, feature = "self-check")))]
    fn check_spike_candidates(&self, n: usize, rep: EventId, candidates: &[EventId]) {
        let config = &self.run.config[..self.tree.nodes[n].config_len];
        let added: Vec<EventId> = self.tree.nodes[..=n]
            .iter()
            .flat_map(|node| node.added.iter().copied())
            .collect();
        let mut expected: Vec<EventId> = Vec::new();
        for &b in self.unit_chain(rep).iter() {
            let (same_thread, same_object) = self.u.neighbour_lists(b);
            let b_writes = self.u.get(b).kind.writes();
            // As `immediate_conflicts`: two reads met through their object
            // alone are never in conflict.
            let on_object = same_object
                .iter()
                .filter(|&&x| b_writes || self.u.get(x).kind.writes());
            for &x in same_thread.iter().chain(on_object) {
                if self.u.immediate_conflict(x, b)
                    && !config.iter().any(|&c| self.u.conflict(x, c))
                    && !added.iter().any(|&y| self.u.leq(y, x))
                {
                    expected.push(x);
                }
            }
        }
        expected.sort_unstable();
        expected.dedup();
        let mut found = candidates.to_vec();
        found.sort_unstable();
        found.dedup();
        assert_eq!(
            found, expected,
            "the cached spike candidates of unit {rep} at node {n} differ from their definition"
        );
    }

    /// Brings node `n`'s list of [`spike_candidates`](Self::spike_candidates)
    /// of the unit `rep` up to date (one list per unit, not per event: a pure
    /// part of a critical section is several events). A node's list is the list
    /// of the nearest shallower node that put units in `D` (its *source*),
    /// filtered by what the node adds: its longer configuration and its own
    /// units of `D` (both only narrow going deeper). Nodes between add no unit,
    /// and their configurations lie between, so they are skipped. A node adds
    /// to `D` only while it is the deepest, when no list is built on its own,
    /// so a source's list only grows while it is one, and each immediate
    /// conflict is tested once per node. Testing all of a target's immediate
    /// conflicts against `C` and `D` at every alternative made the cost per
    /// execution grow with the executions so far (POR-DESIGN.md, "Cost per
    /// execution over a long run"). A list that is current for the unit's
    /// neighbour lists needs nothing from its source.
    ///
    /// The lists are visited from the top of the chain of sources down, and
    /// an empty list (it has only empty lists below it) ends the refresh,
    /// which returns false: node `n` has no candidates, and no list below
    /// that one is brought up to date (one that is read later is refreshed
    /// then). Most lists are empty, and most nodes are asked once per unit:
    /// walking up from `n` and creating a list at every node of the chain,
    /// to say it is empty, was most of the comb's time on mpat(6) (lookups
    /// and insertions in cold tables; POR-DESIGN.md, "The comb's lists, top
    /// first"). Returns the index of `n`'s own list (in its cache's
    /// `lists`) if it is current: the caller reads it without looking the
    /// unit up in the table again (a cold slot).
    fn refresh_spikes(&self, n: usize, rep: EventId) -> Option<u32> {
        let nodes = &self.tree.nodes;
        let unit = self.unit_chain(rep);
        // A list refreshed while the unit's neighbour lists were as long as
        // now holds every candidate there is. The chain of sources is
        // listed from the node structs alone; the lists are then looked at
        // top first, so that an empty one ends the walk before the tables
        // of deeper nodes (mostly without a list for the unit) are touched.
        // The first event's neighbour lists serve both the stamp and the
        // scan below (most units are that one event).
        let first_lists = self.u.conflict_lists(unit[0]);
        // Every node's list is a filter of the unit's immediate conflicts:
        // a unit without any has only empty lists, known from the
        // conflicts found so far (brought up to date here) without the
        // nodes' tables. On mpat(6) 72 % of the calls are for such units
        // (disp(5,4) 19 %, pol(12,3) 27 %), and the lookup in the top
        // node's table was most of their cost (cache misses).
        let mut conflicts = false;
        for (i, &b) in unit.iter().enumerate() {
            let lists = if i == 0 {
                first_lists
            } else {
                self.u.conflict_lists(b)
            };
            if self.immediate_conflicts(b, lists, usize::MAX, |_| {}) > 0 {
                conflicts = true;
                break;
            }
        }
        if !conflicts {
            return None;
        }
        let stamp = self.neighbour_stamp(&unit, first_lists);
        let mut chain = self.chain_buf.borrow_mut();
        chain.clear();
        let mut at = Some(n);
        while let Some(k) = at {
            chain.push(k);
            at = nodes[k].source;
        }
        // The source just brought up to date, and how long its list is.
        let mut source: Option<(usize, usize)> = None;
        for &k in chain.iter().rev() {
            let node = &nodes[k];
            let mut cache = self.tree.spikes[k].borrow_mut();
            self.validate_spikes(k, &mut cache);
            let SpikeCache {
                moved,
                entries,
                lists,
                unit_seen: seen_lists,
                ..
            } = &mut *cache;
            // A new entry is built aside and stored once it is done: built
            // in the table, its fields were read back right after their
            // stores into a cold slot, and waited for them.
            let (mut vacant, mut fresh) = (None, None);
            let entry = match entries.entry(rep) {
                Entry::Occupied(occupied) => occupied.into_mut(),
                Entry::Vacant(slot) => {
                    vacant = Some(slot);
                    fresh.insert(SpikeEntry {
                        stamp: NeighbourStamp::default(),
                        seen: 0,
                        list: lists.take(),
                        unit_seen: NO_POOLED,
                    })
                }
            };
            if entry.stamp != stamp {
                // Built on first use: most lists a node refreshes have
                // nothing new to filter.
                let since = source.map_or(0, |(s, _)| nodes[s].config_len);
                let moved = &*moved;
                let keep = |x: EventId| {
                    let moved = moved.get_or_init(|| self.moved_since(node.config_len, since));
                    let conflicts = self
                        .u
                        .conflicts_with_moved(x, &moved.threads, &moved.objects);
                    self_check!(assert_eq!(
                        conflicts,
                        moved.threads.iter().any(|&(_, m)| self.u.conflict(x, m)),
                        "the moved parts of a configuration decide conflict with it"
                    ));
                    !node.added.iter().any(|&y| self.u.leq(y, x)) && !conflicts
                };
                match source {
                    None => {
                        let candidates = lists.get_mut(entry.list);
                        // Most units are one event: its count is `seen`.
                        let seen: &mut [usize] = if unit.len() == 1 {
                            std::slice::from_mut(&mut entry.seen)
                        } else {
                            if entry.unit_seen == NO_POOLED {
                                entry.unit_seen = seen_lists.take();
                            }
                            // A unit's events are fixed: sized once.
                            let counts = seen_lists.get_mut(entry.unit_seen);
                            if counts.len() != unit.len() {
                                counts.clear();
                                counts.resize(unit.len(), 0);
                            }
                            counts
                        };
                        for (i, (&b, seen)) in unit.iter().zip(seen).enumerate() {
                            let lists = if i == 0 {
                                first_lists
                            } else {
                                self.u.conflict_lists(b)
                            };
                            *seen = self.immediate_conflicts(b, lists, *seen, |new| {
                                candidates.extend(new.iter().copied().filter(|&x| keep(x)))
                            });
                        }
                    }
                    Some((s, len)) if entry.seen < len => {
                        let from = self.tree.spikes[s].borrow();
                        let new = &from.candidates(rep)[entry.seen..];
                        lists
                            .get_mut(entry.list)
                            .extend(new.iter().copied().filter(|&x| keep(x)));
                        entry.seen = len;
                    }
                    Some(_) => {}
                }
                entry.stamp = stamp;
            }
            let (list, len) = (entry.list, lists.get(entry.list).len());
            if let Some(slot) = vacant {
                slot.insert(fresh.take().expect("built aside"));
            }
            if k == n {
                return Some(list);
            }
            if len == 0 {
                return None;
            }
            source = Some((k, len));
        }
        unreachable!("the chain of sources starts at node {n}")
    }

    /// What [`immediate_conflicts`](Self::immediate_conflicts) of the
    /// events of `unit` depend on: the unfolding's generation and prunings,
    /// and the lengths of their neighbour lists (summed: they only grow
    /// between two prunings).
    fn neighbour_stamp(
        &self,
        unit: &[EventId],
        first_lists: (&[EventId], &[EventId]),
    ) -> NeighbourStamp {
        let (mut thread_len, mut object_len) = (0, 0);
        for (i, &b) in unit.iter().enumerate() {
            let (same_thread, same_object) = if i == 0 {
                first_lists
            } else {
                self.u.conflict_lists(b)
            };
            thread_len += same_thread.len();
            object_len += same_object.len();
        }
        NeighbourStamp {
            // Both counters only grow, so their sum changes whenever one
            // does; from 1, as 0 stands for no stamp.
            epoch: self.u.generation() + self.u.prunings() + 1,
            thread_len: thread_len as u64,
            object_len: object_len as u64,
        }
    }

    /// Clears node `k`'s lists if `U` changed its neighbour lists, and
    /// drops from them what depends on units the node put in `D` since.
    fn validate_spikes(&self, k: usize, cache: &mut SpikeCache) {
        let node = &self.tree.nodes[k];
        if cache.generation != self.u.generation() || !cache.valid {
            cache.recycle_entries();
            cache.generation = self.u.generation();
            cache.valid = true;
            // Merged names reorder its objects: built again when needed.
            cache.moved = std::cell::OnceCell::new();
            cache.d_applied = node.added.len();
        }
        if cache.d_applied < node.added.len() {
            let newly = &node.added[cache.d_applied..];
            for entry in cache.entries.values() {
                cache
                    .lists
                    .get_mut(entry.list)
                    .retain(|&x| !newly.iter().any(|&y| self.u.leq(y, x)));
            }
            cache.d_applied = node.added.len();
        }
    }

    /// The events of `U` in immediate conflict with `b`. Immediate conflict
    /// between two events never changes, and `b`'s neighbour lists only
    /// grow (a pruning moves the positions, `carry_caches_over_pruning`),
    /// so each list is scanned once per new entry:
    /// the same events of `D` are targets of many alternatives. Hands those
    /// after the first `from` to `visit` (in the order found: new ones are
    /// appended, and a pruning only drops some) and returns how many there
    /// are. `lists` are `b`'s conflict lists (`Unfolding::conflict_lists`).
    fn immediate_conflicts(
        &self,
        b: EventId,
        (same_thread, same_object): (&[EventId], &[EventId]),
        from: usize,
        visit: impl FnOnce(&[EventId]),
    ) -> usize {
        if same_object.is_empty() && (same_thread.is_empty() || !self.u.siblings_may_conflict()) {
            // No neighbour that could be one, so none was found before
            // either (the cache lists neighbours only, and a pruning drops
            // both): answered without the cache's entry, a cold slot of a
            // hash table.
            self_check!({
                let cache = self.conflict_cache.borrow();
                if cache.generation == self.u.generation() {
                    assert!(
                        cache
                            .entries
                            .get(&b)
                            .map_or(true, |e| e.conflicts.is_empty()),
                        "an event without neighbours has cached immediate conflicts"
                    );
                }
            });
            visit(&[]);
            return 0;
        }
        let mut cache = self.conflict_cache.borrow_mut();
        if cache.generation != self.u.generation() {
            cache.entries.clear();
            cache.generation = self.u.generation();
        }
        match cache.entries.entry(b) {
            Entry::Occupied(occupied) => {
                let entry = occupied.into_mut();
                self.scan_for_conflicts(entry, b, (same_thread, same_object));
                visit(entry.conflicts.get(from..).unwrap_or_default());
                entry.conflicts.len()
            }
            Entry::Vacant(vacant) => {
                // A first scan builds the entry aside and stores it once:
                // built in the table, its fields were read back right after
                // their stores into a cold slot, and waited for them.
                let mut entry = ConflictEntry::default();
                self.scan_for_conflicts(&mut entry, b, (same_thread, same_object));
                visit(entry.conflicts.get(from..).unwrap_or_default());
                let count = entry.conflicts.len();
                vacant.insert(entry);
                count
            }
        }
    }

    /// Brings `entry`, `b`'s immediate conflicts, up to date with `b`'s
    /// conflict lists (see [`immediate_conflicts`](Self::immediate_conflicts)).
    fn scan_for_conflicts(
        &self,
        entry: &mut ConflictEntry,
        b: EventId,
        (same_thread, same_object): (&[EventId], &[EventId]),
    ) {
        // Between two prunings the lists only grow: what is new starts where
        // the last scan ended. After one, it is found by birth (a search
        // that loads an event's birth per step, most of the comb's cache
        // misses on mpat(6) when it ran on every call).
        let prunings = self.u.prunings();
        let (new_in_thread, new_on_object) = if entry.scanned_at == prunings + 1 {
            (
                &same_thread[entry.thread_len..],
                &same_object[entry.object_len..],
            )
        } else {
            (
                self.u.made_after(same_thread, entry.thread_seen),
                self.u.made_after(same_object, entry.object_seen),
            )
        };
        self_check!(assert!(
            new_in_thread == self.u.made_after(same_thread, entry.thread_seen)
                && new_on_object == self.u.made_after(same_object, entry.object_seen),
            "a neighbour list changed other than by growing between prunings"
        ));
        entry.thread_seen = new_in_thread
            .last()
            .map_or(entry.thread_seen, |&x| self.u.born(x));
        entry.object_seen = new_on_object
            .last()
            .map_or(entry.object_seen, |&x| self.u.born(x));
        (entry.thread_len, entry.object_len) = (same_thread.len(), same_object.len());
        entry.scanned_at = prunings + 1;
        let new_in_thread = if self.u.siblings_may_conflict() {
            new_in_thread
        } else {
            self_check!(assert!(
                new_in_thread
                    .iter()
                    .all(|&x| !self.u.immediate_conflict(x, b)),
                "siblings in immediate conflict though no event has extra predecessors"
            ));
            &[]
        };
        // A read's object list holds only writes (`Unfolding::conflict_lists`).
        // Two events of one thread after different events of it are never
        // in immediate conflict, and most of what is left (mpat(6)).
        self_check!(assert!(
            new_on_object
                .iter()
                .all(|&x| !self.u.thread_branches_apart(x, b) || !self.u.immediate_conflict(x, b)),
            "events of one thread after different predecessors in immediate conflict"
        ));
        let new_on_object = new_on_object
            .iter()
            .filter(|&&x| !self.u.thread_branches_apart(x, b));
        for &x in new_in_thread.iter().chain(new_on_object) {
            if self.u.immediate_conflict(x, b) {
                entry.conflicts.push(x);
            }
        }
    }

    /// Keeps the comb's caches across a pruning of `U` that keeps the
    /// events `kept` accepts; runs before [`Unfolding::retain`](super::unfolding::Unfolding::retain),
    /// while the lists it drops entries from are whole. Emptying them
    /// instead (as a new generation does) scanned every target's neighbour
    /// lists again after each pruning: mpat(5) prunes 186 times in 3 840
    /// executions, and immediate-conflict tests were 7.7 % of its
    /// instructions.
    ///
    /// Every list a cache holds a position in (an event's immediate
    /// conflicts, a source node's candidates) keeps the order of what it
    /// keeps, so a position becomes the number of kept entries before it;
    /// how far a neighbour list was scanned is an event's `born` count,
    /// which needs no change. Entries of pruned events go: their ids are
    /// free for new events. Stamps need no change: they hold the count of
    /// prunings, so each is refreshed once after it.
    ///
    /// Lists of units that are no longer a target of a node on the stack
    /// (`targets`) go too: a node near the root lives for the whole run,
    /// and would otherwise keep a list for every unit ever refreshed
    /// through it (mpat(6)'s memory grew from 18.6 to 24 MiB with them).
    /// The immediate conflicts of kept events stay: dropping those of
    /// events of no target's unit saved 0.5 MiB of mpat(6)'s 21 for 1.5–
    /// 3.5 % more instructions, finding them again.
    pub(super) fn carry_caches_over_pruning(
        &self,
        kept: &dyn Fn(EventId) -> bool,
        targets: &Set<EventId>,
    ) {
        let kept_before = |list: &[EventId], seen: usize| {
            list[..seen.min(list.len())]
                .iter()
                .filter(|&&x| kept(x))
                .count()
        };
        let generation = self.u.generation();
        let mut conflicts = self.conflict_cache.borrow_mut();
        if conflicts.generation != generation {
            // Emptied at its next use anyway.
            conflicts.entries.clear();
            conflicts.generation = generation;
        }
        let nodes = &self.tree.nodes;
        let current = |cache: &SpikeCache| cache.valid && cache.generation == generation;
        // Positions first, from the lists as they are; then the lists.
        for (node, spikes) in nodes.iter().zip(&self.tree.spikes) {
            let mut cache = spikes.borrow_mut();
            if !current(&cache) {
                continue;
            }
            let source = node.source.map(|s| self.tree.spikes[s].borrow());
            let SpikeCache {
                entries,
                unit_seen: seen_lists,
                ..
            } = &mut *cache;
            for (&rep, entry) in entries.iter_mut() {
                if !kept(rep) || !targets.contains(&rep) {
                    continue; // dropped below
                }
                match &source {
                    Some(source) => {
                        // A missing list (never expected) reads as empty:
                        // candidates are then listed again, which a spike
                        // tolerates (it deduplicates).
                        let list = source
                            .entries
                            .get(&rep)
                            .filter(|_| current(source))
                            .map_or(&[][..], |e| source.lists.get(e.list));
                        entry.seen = kept_before(list, entry.seen);
                    }
                    None => {
                        let unit = self.unit_chain(rep);
                        let seen: &mut [usize] = if unit.len() == 1 {
                            std::slice::from_mut(&mut entry.seen)
                        } else if entry.unit_seen == NO_POOLED {
                            &mut []
                        } else {
                            seen_lists.get_mut(entry.unit_seen)
                        };
                        for (b, seen) in unit.iter().zip(seen) {
                            let list = conflicts
                                .entries
                                .get(b)
                                .map_or(&[][..], |e| &e.conflicts[..]);
                            *seen = kept_before(list, *seen);
                        }
                    }
                }
            }
        }
        for spikes in &self.tree.spikes[..nodes.len()] {
            let mut cache = spikes.borrow_mut();
            if current(&cache) {
                let SpikeCache {
                    entries,
                    lists,
                    unit_seen,
                    ..
                } = &mut *cache;
                entries.retain(|&rep, entry| {
                    let keep = kept(rep) && targets.contains(&rep);
                    if keep {
                        lists.get_mut(entry.list).retain(|&x| kept(x));
                    } else {
                        lists.give(entry.list);
                        unit_seen.give(entry.unit_seen);
                    }
                    keep
                });
            }
        }
        conflicts.entries.retain(|&b, entry| {
            entry.conflicts.retain(|&x| kept(x));
            kept(b)
        });
    }

    /// Depth-first search for one pairwise conflict-free combination that
    /// `accept` takes.
    fn combine(
        &self,
        ranges: &[(EventId, usize, usize)],
        spikes: &[EventId],
        chosen: &mut Vec<EventId>,
        accept: &mut dyn FnMut(&[EventId]) -> bool,
    ) -> bool {
        if self.budget.expired() {
            return true; // stop searching: `advance` sees the deadline
        }
        let Some((&(target, from, to), rest)) = ranges.split_first() else {
            return accept(chosen);
        };
        // A pick for an earlier spike may already conflict with this target.
        if chosen.iter().any(|&c| self.u.conflict(c, target)) {
            return self.combine(rest, spikes, chosen, accept);
        }
        for &x in &spikes[from..to] {
            if chosen.iter().all(|&c| !self.u.conflict(c, x)) {
                chosen.push(x);
                if self.combine(rest, spikes, chosen, accept) {
                    return true;
                }
                chosen.pop();
            }
        }
        false
    }
}

/// [`Por::alternative`]'s buffers, kept between calls.
#[derive(Default)]
pub(super) struct AltScratch {
    /// The units of `D` whose spikes are combined, `event`'s among them.
    targets: Vec<EventId>,
    /// The spikes, one after the other.
    spikes: Vec<EventId>,
    /// Each target and its spike's range in `spikes`, in `targets`' order.
    ranges: Vec<(EventId, usize, usize)>,
    /// The combination being built.
    chosen: Vec<EventId>,
}

/// Immediate conflicts found so far, per event (see
/// [`Por::immediate_conflicts`]).
#[derive(Default)]
pub(super) struct ConflictCache {
    /// The unfolding's generation the entries were built in.
    generation: u64,
    entries: Map<EventId, ConflictEntry>,
}

#[derive(Default)]
struct ConflictEntry {
    /// How much of the same-thread and same-object neighbour lists was
    /// scanned: up to the event made at this [`born`](super::unfolding::Unfolding::born)
    /// count (0: none). A count, unlike a position, stays true when a
    /// pruning drops entries of the lists.
    thread_seen: u64,
    object_seen: u64,
    /// The same as the lists' lengths then, true while `U` has had no
    /// pruning since the one counted here. (Converting these positions at
    /// each pruning instead, as `carry_caches_over_pruning` does the other
    /// caches', and dropping the births, ran 5 % more instructions on
    /// mpat(6): each pruning then walked every entry's lists.)
    thread_len: usize,
    object_len: usize,
    /// The count of prunings at the last scan, plus one (0: never).
    scanned_at: u64,
    conflicts: Vec<EventId>,
}

/// Per node of the tree: for each event of a unit it put in `D`, its
/// immediate conflicts that do not conflict with the node's configuration
/// (see [`Por::spike_candidates`]).
#[derive(Default)]
pub(super) struct SpikeCache {
    /// The unfolding's generation the entries were built in.
    generation: u64,
    /// Whether the entries were set up for this node (a fresh cache has
    /// none, and its generation may look current).
    valid: bool,
    /// What moved in the node's configuration since its source's
    /// (`Por::moved_since`): what its lists must avoid beyond what the
    /// source's already do (the source's list already avoids the source's
    /// configuration, a prefix of this one).
    moved: std::cell::OnceCell<Moved>,
    /// How many of the node's added units the entries were filtered by.
    d_applied: usize,
    /// By unit: what its list was refreshed against, and which list it is.
    /// The entries own nothing: emptying the table (for every node a
    /// backtrack pops) then only resets its control bytes. With a vector
    /// in each entry, it read every entry to drop it, a cold line each
    /// (2.7 % of mpat(6)'s time in `perf` samples).
    entries: Map<EventId, SpikeEntry>,
    /// The entries' candidate lists.
    lists: ListPool<EventId>,
    /// The entries' per-event counts, for units of several events.
    unit_seen: ListPool<usize>,
}

/// A recycled node's table keeps room for at least this many entries.
const SPARE_ENTRIES: usize = 16;

impl SpikeCache {
    /// The candidate list of the unit `rep` (which has an entry).
    fn candidates(&self, rep: EventId) -> &[EventId] {
        self.lists.get(self.entries[&rep].list)
    }

    /// Drops every entry; the lists are emptied in place, for new entries.
    fn recycle_entries(&mut self) {
        self.entries.clear();
        self.lists.clear();
        self.unit_seen.clear();
    }

    /// Empties it for another node, keeping its table's allocation sized
    /// to what this node used: a table keeps its capacity when cleared, so
    /// recycled tables would each grow to the most units any node ever
    /// listed, and memory with the exploration (disp(5,4): 3 MB of its 10
    /// MB peak). Dropping large tables instead cost 1.5 % more instructions
    /// on mpat(5), growing them again. The pools of lists likewise.
    pub(super) fn reset(&mut self) {
        let used = self.entries.len().max(SPARE_ENTRIES);
        self.recycle_entries();
        if self.entries.capacity() > 4 * used {
            self.entries.shrink_to(used);
        }
        self.lists.keep_at_most(4 * used);
        self.unit_seen.keep_at_most(4 * used);
        // Field by field, in place (see `Tree::spikes`).
        self.generation = 0;
        self.valid = false;
        self.moved = std::cell::OnceCell::new();
        self.d_applied = 0;
    }
}

/// The parts of a configuration that moved since a prefix of it (see
/// [`Unfolding::conflicts_with_moved`](super::unfolding::Unfolding::conflicts_with_moved)).
struct Moved {
    /// Each moved thread's index and last event.
    threads: Vec<(usize, EventId)>,
    /// The frontier of each object touched since the prefix, sorted by
    /// canonical name.
    objects: Frontiers,
}

/// See [`Por::neighbour_stamp`]. The default (epoch 0) is no stamp. An
/// entry of the comb's tables per unit and node: packed so that an entry
/// takes 72 bytes, not 104 (the tables outgrow the L2 on mpat(6)).
#[derive(Clone, Copy, Default, PartialEq, Eq)]
struct NeighbourStamp {
    epoch: u64,
    thread_len: u64,
    object_len: u64,
}

#[derive(Clone, Copy)]
struct SpikeEntry {
    /// The neighbour lists of the unit's events the list was last
    /// refreshed against (none yet): the list holds every candidate those
    /// lists give.
    stamp: NeighbourStamp,
    /// How much of the source's list was filtered; without a source, how
    /// much of the immediate conflicts of the unit's event, if it is one.
    seen: usize,
    /// Its candidates: a list of `SpikeCache::lists`.
    list: u32,
    /// Without a source, for a unit of several events: how much of each
    /// one's immediate conflicts was filtered (a list of
    /// `SpikeCache::unit_seen`; `NO_POOLED` until then).
    unit_seen: u32,
}

//! Alternatives through a comb ([QPOR, §5, Def. 6]: *Quasi-Optimal Partial
//! Order Reduction*, Nguyen, Rodríguez, Sousa, Coti and Petrucci, CAV 2018).

use super::fast_hash::{Map, Set};

use super::unfolding::EventId;
use super::{Alternatives, Por};

impl Por {
    /// A clue to explore at node `i` without its unit `event` (by its last
    /// event): `J \ C` for a k-partial (or full) alternative `J` to
    /// `D ∪ {event}` after `C`, or `None` if there is none.
    pub(super) fn alternative(&self, i: usize, event: EventId) -> Option<Set<EventId>> {
        let config_len = self.tree.nodes[i].config_len;
        let in_c = |x: EventId| self.run.pos.get(&x).is_some_and(|&p| p < config_len);
        let mut d: Vec<EventId> = self
            .tree
            .in_d
            .keys()
            .copied()
            .filter(|&x| x != event)
            .collect();
        d.sort_unstable();
        d.push(event);
        let maximal = self.maximal(config_len);
        let targets: Vec<EventId> = match self.alternatives {
            Alternatives::Optimal => d.clone(),
            // `event` (last in `d`) first, then the most recently added.
            Alternatives::KPartial(k) => d.iter().rev().take(k.max(1)).copied().collect(),
        };
        let mut spikes = Vec::with_capacity(targets.len());
        for &target in &targets {
            if self.budget.expired() {
                return None;
            }
            // The node that put `target` in D (the deepest, if several):
            // its configuration is a prefix of this one's, so what conflicts
            // with it conflicts here too, and is filtered out once there.
            let owner = if target == event {
                i
            } else {
                (0..=i)
                    .rev()
                    .find(|&n| self.tree.nodes[n].added.contains(&target))
                    .unwrap_or(i)
            };
            let refilter = self.tree.nodes[owner].config_len != config_len;
            // A unit (a pure part of a critical section) conflicts with
            // whatever conflicts with one of its events.
            let mut spike: Vec<EventId> = Vec::new();
            for b in self.unit_chain(target) {
                let clashes = |x: EventId| maximal.iter().any(|&m| self.u.conflict(x, m));
                spike.extend(self.spike_candidates(owner, b).into_iter().filter(|&x| {
                    !d.iter().any(|&y| self.u.leq(y, x)) && (!refilter || !clashes(x))
                }));
            }
            spike.sort_unstable();
            spike.dedup();
            if spike.is_empty() {
                return None;
            }
            spikes.push((target, spike));
        }
        let mut chosen = Vec::new();
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
        self.combine(&spikes, &mut chosen, &mut accept);
        found
    }

    /// The maximal events of the first `config_len` events of `C`: each
    /// thread's last one (an event conflicts with that prefix iff it
    /// conflicts with one of them).
    fn maximal(&self, config_len: usize) -> Vec<EventId> {
        self.run
            .positions
            .iter()
            .filter_map(|events| {
                let n = events.partition_point(|&(pos, _)| pos < config_len);
                n.checked_sub(1).map(|i| events[i].1)
            })
            .collect()
    }

    /// The events in immediate conflict with `b` that do not conflict with
    /// the configuration of node `n`. `b`'s immediate conflicts pile up over
    /// the whole exploration (pruning keeps those of every event of
    /// `C ∪ D`), and nearly all of them conflict with the current branch;
    /// testing each against `C` at every alternative made the cost per
    /// execution grow with the executions so far (POR-DESIGN.md, "Cost per
    /// execution over a long run"). The node's configuration stays the same
    /// while it is on the stack, so each conflict is tested against it once.
    fn spike_candidates(&self, n: usize, b: EventId) -> Vec<EventId> {
        let node = &self.tree.nodes[n];
        let mut cache = node.spikes.borrow_mut();
        if cache.generation != self.u.generation() || cache.maximal.is_none() {
            cache.entries.clear();
            cache.generation = self.u.generation();
            cache.maximal = Some(self.maximal(node.config_len));
        }
        let SpikeCache {
            maximal, entries, ..
        } = &mut *cache;
        let maximal = maximal.as_deref().expect("set above");
        let entry = entries.entry(b).or_default();
        let (new, seen) = self.immediate_conflicts(b, entry.seen);
        entry.candidates.extend(
            new.into_iter()
                .filter(|&x| !maximal.iter().any(|&m| self.u.conflict(x, m))),
        );
        entry.seen = seen;
        entry.candidates.clone()
    }

    /// The events of `U` in immediate conflict with `b`. Immediate conflict
    /// between two events never changes, and `b`'s neighbour lists only
    /// grow between prunings, so each list is scanned once per new entry:
    /// the same events of `D` are targets of many alternatives. Returns those
    /// after the first `from` (in the order found, which only appends within
    /// a generation) and how many there are.
    fn immediate_conflicts(&self, b: EventId, from: usize) -> (Vec<EventId>, usize) {
        let mut cache = self.conflict_cache.borrow_mut();
        if cache.generation != self.u.generation() {
            cache.entries.clear();
            cache.generation = self.u.generation();
        }
        let (same_thread, same_object) = self.u.neighbour_lists(b);
        let entry = cache.entries.entry(b).or_default();
        for &x in same_thread[entry.thread_seen..]
            .iter()
            .chain(&same_object[entry.object_seen..])
        {
            if self.u.immediate_conflict(x, b) {
                entry.conflicts.push(x);
            }
        }
        entry.thread_seen = same_thread.len();
        entry.object_seen = same_object.len();
        (
            entry.conflicts.get(from..).unwrap_or_default().to_vec(),
            entry.conflicts.len(),
        )
    }

    /// Depth-first search for one pairwise conflict-free combination that
    /// `accept` takes.
    fn combine(
        &self,
        spikes: &[(EventId, Vec<EventId>)],
        chosen: &mut Vec<EventId>,
        accept: &mut dyn FnMut(&[EventId]) -> bool,
    ) -> bool {
        if self.budget.expired() {
            return true; // stop searching: `advance` sees the deadline
        }
        let Some(((target, spike), rest)) = spikes.split_first() else {
            return accept(chosen);
        };
        // A pick for an earlier spike may already conflict with this target.
        if chosen.iter().any(|&c| self.u.conflict(c, *target)) {
            return self.combine(rest, chosen, accept);
        }
        for &x in spike {
            if chosen.iter().all(|&c| !self.u.conflict(c, x)) {
                chosen.push(x);
                if self.combine(rest, chosen, accept) {
                    return true;
                }
                chosen.pop();
            }
        }
        false
    }
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
    /// scanned.
    thread_seen: usize,
    object_seen: usize,
    conflicts: Vec<EventId>,
}

/// Per node of the tree: for each event of a unit it put in `D`, its
/// immediate conflicts that do not conflict with the node's configuration
/// (see [`Por::spike_candidates`]).
#[derive(Default)]
pub(super) struct SpikeCache {
    /// The unfolding's generation the entries were built in.
    generation: u64,
    /// The maximal events of the node's configuration.
    maximal: Option<Vec<EventId>>,
    entries: Map<EventId, SpikeEntry>,
}

#[derive(Default)]
struct SpikeEntry {
    /// How much of the event's immediate conflicts was filtered.
    seen: usize,
    candidates: Vec<EventId>,
}

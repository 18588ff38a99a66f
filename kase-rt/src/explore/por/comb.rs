//! Alternatives through a comb (quasi-optimal-por.txt, §5, Definition 6).

use std::collections::HashSet;

use super::unfolding::EventId;
use super::{Alternatives, Por};

impl Por {
    /// A clue to explore at node `i` without its unit `event` (by its last
    /// event): `J \ C` for a k-partial (or full) alternative `J` to
    /// `D ∪ {event}` after `C`, or `None` if there is none.
    pub(super) fn alternative(&self, i: usize, event: EventId) -> Option<HashSet<EventId>> {
        let config_len = self.nodes[i].config_len;
        let in_c = |x: EventId| self.pos.get(&x).is_some_and(|&p| p < config_len);
        let mut d: Vec<EventId> = self.in_d.keys().copied().filter(|&x| x != event).collect();
        d.sort_unstable();
        d.push(event);
        // The maximal events of C: each thread's last one.
        let maximal: Vec<EventId> = self
            .positions
            .iter()
            .filter_map(|events| {
                let n = events.partition_point(|&(pos, _)| pos < config_len);
                n.checked_sub(1).map(|i| events[i].1)
            })
            .collect();
        let targets: Vec<EventId> = match self.alternatives {
            Alternatives::Optimal => d.clone(),
            // `event` (last in `d`) first, then the most recently added.
            Alternatives::KPartial(k) => d.iter().rev().take(k.max(1)).copied().collect(),
        };
        let mut spikes = Vec::with_capacity(targets.len());
        for &target in &targets {
            // A unit (a pure part of a critical section) conflicts with
            // whatever conflicts with one of its events.
            let mut spike: Vec<EventId> = self
                .unit_chain(target)
                .into_iter()
                .flat_map(|b| {
                    self.u
                        .neighbours(b)
                        .filter(move |&x| self.u.immediate_conflict(x, b))
                })
                .filter(|&x| {
                    !maximal.iter().any(|&m| self.u.conflict(x, m))
                        && !d.iter().any(|&y| self.u.leq(y, x))
                })
                .collect();
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

    /// Depth-first search for one pairwise conflict-free combination that
    /// `accept` takes.
    fn combine(
        &self,
        spikes: &[(EventId, Vec<EventId>)],
        chosen: &mut Vec<EventId>,
        accept: &mut dyn FnMut(&[EventId]) -> bool,
    ) -> bool {
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

//! Line 13 of Algorithm 1: forget events that can no longer matter, so memory
//! follows the explored branch and its conflicts, not the executions so far.

use super::unfolding::EventId;
use super::Por;

/// `U` is not pruned below this many events (pruning has a cost).
const MIN_PRUNE: usize = 64;

impl Por {
    /// After returning from the node whose configuration is the first
    /// `config_len` events: keep `C ∪ D`, the events in immediate conflict
    /// with one of them (the comb needs no others: see comb.rs), and the
    /// histories of those; drop the rest. Runs only once
    /// `U` doubled since the last pruning, so its cost is amortised.
    pub(super) fn maybe_prune(&mut self, config_len: usize) {
        if self.u.len() < MIN_PRUNE.max(2 * self.stats.pruned_at) {
            return;
        }
        let c = &self.run.config[..config_len];
        // Immediate conflicts arise only between events of one thread or on
        // one object: look among the neighbours of each event of C ∪ D.
        let mut seeds: Vec<EventId> = c.to_vec();
        let d: Vec<EventId> = self.tree.in_d.keys().copied().collect();
        for rep in d {
            // Every event of a unit of D: spikes look at each (comb.rs).
            seeds.extend(self.unit_chain(rep));
        }
        let anchors = seeds.clone();
        for y in anchors {
            seeds.extend(
                self.u
                    .neighbours(y)
                    .filter(|&x| self.u.immediate_conflict(x, y)),
            );
        }
        let kept = self.u.closure(seeds, |_| false);
        let is_kept = |x: EventId| kept.contains(&x);
        self.u.retain(is_kept);
        // A label describes what follows a kept event only.
        self.labels
            .retain(|(_, pred), _| pred.map_or(true, is_kept));
        self.stats.pruned_at = self.u.len();
    }
}

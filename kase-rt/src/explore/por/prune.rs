//! Line 13 of Algorithm 1: forget events that can no longer matter, so memory
//! follows the explored branch and its conflicts, not the executions so far.

use super::unfolding::EventId;
use super::Por;
use crate::fast_hash::Set;

/// `U` is not pruned below this many events. A pruning walks all of `U`
/// and its tables, and from 64 events on it ran every dozen executions of
/// disp(5,4) (241 times in the first 3 000), 3 % of the instructions;
/// from 4 096 the first executions of mpat(6), disp(5,4) and pol(12,3)
/// ran 1.1–3.5 % fewer instructions (1 024: up to 2.3 %; 16 384: more than
/// at 64, a bigger `U` being slower to search). Under `self-check` (kase's
/// own tests) pruning starts at 64, so that small models exercise it.
const MIN_PRUNE: usize = if cfg!(feature = "self-check") {
    64
} else {
    4096
};

impl Por {
    /// After returning from the node whose configuration is the first
    /// `config_len` events: keep `C ∪ D`, the immediate conflicts that a
    /// spike of a node still on the stack can take, and the histories of
    /// those; drop the rest. Runs only once `U` doubled since the last
    /// pruning, so its cost is amortised.
    ///
    /// The spikes (comb.rs) of the nodes on the stack target the units of
    /// `D` and each node's own event (its unit joins `D` when its left
    /// branch is done). A target owned by node `n` (which put it in `D`, or
    /// whose event it is) is only a target at `n` and at deeper nodes, whose
    /// configurations contain `n`'s and whose `D` contains what `n` and
    /// shallower nodes added: an immediate conflict of it that conflicts
    /// with `n`'s configuration or lies after such a unit is never a
    /// candidate ([`Por::spike_candidates`]), so it is not kept. Keeping every immediate conflict of `C`'s events, as `Q(C, D)`
    /// of the paper does, kept one per order of the other threads explored
    /// so far, and `U` grew with the executions (POR-DESIGN.md, "Cost per
    /// execution over a long run"). A target of a node created later is
    /// that node's event; its candidates are found again in its left
    /// subtree (`cex`), as they are after any pruning.
    /// Returns whether it pruned.
    pub(super) fn maybe_prune(&mut self, config_len: usize) -> bool {
        if self.u.len() < MIN_PRUNE.max(2 * self.stats.pruned_at) {
            return false;
        }
        let mut seeds: Vec<EventId> = self.run.config[..config_len].to_vec();
        for &rep in &self.tree.d_units {
            seeds.extend_from_slice(&self.unit_chain(rep));
        }
        let mut all_targets = Set::default();
        for n in 0..self.tree.nodes.len() {
            let node = &self.tree.nodes[n];
            let own = node.event.map(|e| self.unit_rep(e));
            for &rep in node.added.iter().chain(own.iter()) {
                seeds.extend_from_slice(&self.unit_chain(rep));
                self.spike_candidates(n, rep, |candidates| seeds.extend(candidates));
                all_targets.insert(rep);
            }
        }
        let mut kept = vec![false; self.u.id_bound()];
        self.u.mark_closure(seeds, &mut kept);
        let is_kept = |x: EventId| kept[x as usize];
        self.carry_caches_over_pruning(&is_kept, &all_targets);
        self.u.retain(is_kept);
        // A label describes what follows a kept event only.
        self.labels.retain(is_kept);
        self.stats.pruned_at = self.u.len();
        true
    }
}

//! Line 13 of Algorithm 1: forget events that can no longer matter, so memory
//! follows the explored branch and its conflicts, not the executions so far.

use std::collections::{HashMap, HashSet};

use crate::exec::ThreadIdx;

use super::names::Name;
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
        if self.u.len() < MIN_PRUNE.max(2 * self.pruned_at) {
            return;
        }
        let c = &self.config[..config_len];
        // Immediate conflicts arise only between events of one thread or on
        // one object, so each event is compared with those of C sharing its
        // thread or object, and with D.
        let mut by_thread: HashMap<ThreadIdx, Vec<EventId>> = HashMap::new();
        let mut by_object: HashMap<Name, Vec<EventId>> = HashMap::new();
        for &e in c {
            let ev = self.u.get(e);
            by_thread.entry(ev.thread).or_default().push(e);
            if let Some(n) = ev.name {
                by_object.entry(self.u.names.find(n)).or_default().push(e);
            }
        }
        let in_c: HashSet<EventId> = c.iter().copied().collect();
        let d: Vec<EventId> = self.in_d.keys().copied().collect();
        let immediate = |x: EventId| {
            let ev = self.u.get(x);
            let same_thread = by_thread.get(&ev.thread).into_iter().flatten();
            let same_object = ev
                .name
                .and_then(|n| by_object.get(&self.u.names.find(n)))
                .into_iter()
                .flatten();
            d.iter()
                .chain(same_thread)
                .chain(same_object)
                .any(|&y| self.u.immediate_conflict(x, y))
        };
        let mut seeds: Vec<EventId> = c.to_vec();
        seeds.extend(d.iter().copied());
        seeds.extend(self.u.ids().filter(|x| !in_c.contains(x) && immediate(*x)));
        let kept = self.u.closure(seeds, |_| false);
        let is_kept = |x: EventId| kept.contains(&x);
        self.u.retain(is_kept);
        // Labels and actions describe what follows a kept event only.
        self.labels
            .retain(|(_, pred), _| pred.map_or(true, is_kept));
        self.actions
            .retain(|(_, pred), _| pred.map_or(true, is_kept));
        self.pruned_at = self.u.len();
    }
}

//! The POR explorer's hot paths on a real unfolding, for the criterion
//! benchmarks of `kase-bench/benches/engine.rs` (through the hidden
//! `kase_rt::__bench`): causality (`≤`) and conflict queries between its
//! events, and the search for alternatives through the comb. Not public API.

use super::unfolding::EventId;
use super::Por;
use crate::explore::{Explorer, Runner, Settings, Trail};

/// A POR explorer stopped in the middle of an exploration, right where it
/// searches for alternatives after an execution.
pub struct UnfoldingProbe {
    por: Por,
    events: Vec<EventId>,
}

impl UnfoldingProbe {
    /// Explores `model` with `config`'s alternatives for `executions`
    /// executions (fewer if it has fewer traces); the last one is processed
    /// up to the search for alternatives (Algorithm 1, line 11).
    pub(crate) fn new(config: &Settings, model: &(dyn Fn() + Sync), executions: u64) -> Self {
        let trail = Trail::default();
        let mut runner = Runner::new(config, model, &trail);
        let mut por = Por::new(config.alternatives);
        for _ in 1..executions.max(1) {
            let outcome = runner.execute(&mut por);
            let more = por
                .advance(&outcome)
                .expect("kase: the benchmark model is not deterministic");
            runner.reclaim(outcome);
            if !more {
                break;
            }
        }
        let outcome = runner.execute(&mut por);
        por.absorb(&outcome)
            .expect("kase: the benchmark model is not deterministic");
        runner.reclaim(outcome);
        let events = por.u.ids().collect();
        UnfoldingProbe { por, events }
    }

    /// Events in the unfolding.
    pub fn events(&self) -> usize {
        self.events.len()
    }

    /// Asks `a ≤ b` for every ordered pair of events; how many hold.
    pub fn causality_queries(&self) -> usize {
        let u = &self.por.u;
        let mut n = 0;
        for &a in &self.events {
            n += self.events.iter().filter(|&&b| u.leq(a, b)).count();
        }
        n
    }

    /// Asks `a # b` for every pair of distinct events; how many hold.
    pub fn conflict_queries(&self) -> usize {
        let u = &self.por.u;
        let mut n = 0;
        for (i, &a) in self.events.iter().enumerate() {
            n += self.events[i + 1..]
                .iter()
                .filter(|&&b| u.conflict(a, b))
                .count();
        }
        n
    }

    /// Searches an alternative at every choice point of the last execution,
    /// deepest first, with `D` as Algorithm 1 has it when it backtracks to
    /// that point (the units deeper points added are gone); how many have
    /// one. `D` is restored afterwards.
    pub fn alternative_search(&mut self) -> usize {
        let por = &mut self.por;
        let mut found = 0;
        let mut forgotten = Vec::new();
        for i in (0..por.tree.nodes.len()).rev() {
            if let Some(event) = por.tree.nodes[i].event {
                let unit = por.unit_rep(event);
                por.add_to_d(unit);
                found += usize::from(por.alternative(i, unit).is_some());
                por.remove_from_d(unit);
            }
            // Backtracking above node `i` forgets the units it added.
            let added = std::mem::take(&mut por.tree.nodes[i].added);
            for &e in &added {
                por.remove_from_d(e);
            }
            forgotten.push((i, added));
        }
        for (i, added) in forgotten {
            for &e in &added {
                por.add_to_d(e);
            }
            por.tree.nodes[i].added = added;
        }
        found
    }
}

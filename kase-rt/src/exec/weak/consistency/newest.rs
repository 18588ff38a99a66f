//! `psc` after one more event, cheaply when it cannot close a cycle.
//!
//! The explorer adds events one at a time to a graph whose `psc` is
//! acyclic, and asks of each candidate `SeqCst` access whether `psc` stays
//! acyclic. Every part of `psc` (`hb`, `scb`, `eco`, and so `psc` itself)
//! is contained in the transitive closure of the *steps* `S = po ∪ rf ∪ sw
//! ∪ mo ∪ fr` (`sw` of atomics is `po`, `rf` and release-sequence `rf`
//! chains). The new event `n` comes last: it has no outgoing `po`, `rf` or
//! `sw` step, and on the events before it every relation is what it was
//! (a path through `n` between two of them, `mo ; mo` or `fr ; mo`, is
//! already an edge). So a `psc` edge the new graph has and the old one did
//! not is witnessed by an `S`-path through `n`, and a new `psc` cycle runs
//! through `n` in `S`. When `n` lies on no `S`-cycle, the new graph is as
//! consistent as the old one; only otherwise is `psc` computed.

use super::super::graph::Graph;

/// Whether `graph` satisfies the SC axiom, given that it does without its
/// last event.
pub(crate) fn seq_cst_consistent_with_newest(graph: &Graph) -> bool {
    let settled = !newest_on_a_cycle(graph);
    super::self_check! {
        if settled {
            assert!(super::seq_cst_consistent(graph), "a psc cycle the step filter missed");
        }
    }
    settled || super::seq_cst_consistent(graph)
}

/// Whether the last event of `graph` lies on a cycle of `po ∪ rf ∪ sw ∪ mo
/// ∪ fr`.
fn newest_on_a_cycle(graph: &Graph) -> bool {
    let events = &graph.events;
    let Some(newest) = events.len().checked_sub(1) else {
        return false;
    };
    let n = events.len();
    // Each write's place in its location's modification order.
    let mut mo_place = vec![u32::MAX; n];
    for writes in &graph.mo {
        for (i, &w) in writes.iter().enumerate() {
            mo_place[w] = i as u32;
        }
    }
    // Each event's next in its thread.
    let mut po_next = vec![u32::MAX; n];
    let mut last_of_thread: Vec<u32> = Vec::new();
    for (e, node) in events.iter().enumerate() {
        let t = node.thread as usize;
        if last_of_thread.len() <= t {
            last_of_thread.resize(t + 1, u32::MAX);
        }
        let previous = std::mem::replace(&mut last_of_thread[t], e as u32);
        if previous != u32::MAX {
            po_next[previous as usize] = e as u32;
        }
    }
    // Readers of each write and `sw` targets, as adjacency lists in one
    // buffer each (start offsets by event).
    let out_of = |edges: &mut dyn Iterator<Item = (usize, usize)>| {
        let pairs: Vec<(usize, usize)> = edges.collect();
        let mut start = vec![0u32; n + 1];
        for &(from, _) in &pairs {
            start[from + 1] += 1;
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut to = vec![0u32; pairs.len()];
        for &(from, target) in &pairs {
            to[fill[from] as usize] = target as u32;
            fill[from] += 1;
        }
        (start, to)
    };
    let (rf_start, rf_to) = out_of(
        &mut events
            .iter()
            .enumerate()
            .filter_map(|(r, node)| node.access.reads_from().flatten().map(|w| (w, r))),
    );
    let (sw_start, sw_to) = out_of(&mut graph.sw.iter().copied());
    let mut seen = vec![false; n];
    let mut stack: Vec<usize> = Vec::new();
    let mut push = |e: usize, stack: &mut Vec<usize>| {
        if !seen[e] {
            seen[e] = true;
            stack.push(e);
        }
    };
    // The steps out of `e`.
    let steps = |e: usize, out: &mut dyn FnMut(usize)| {
        if po_next[e] != u32::MAX {
            out(po_next[e] as usize);
        }
        for &r in &rf_to[rf_start[e] as usize..rf_start[e + 1] as usize] {
            out(r as usize);
        }
        for &b in &sw_to[sw_start[e] as usize..sw_start[e + 1] as usize] {
            out(b as usize);
        }
        let node = &events[e];
        let Some(location) = node.access.location() else {
            return;
        };
        let writes = graph.mo_of(location);
        if node.access.is_write() {
            if let Some(&next) = writes.get(mo_place[e] as usize + 1) {
                out(next);
            }
        }
        if let Some(source) = node.access.reads_from() {
            let later = source.map_or(0, |w| mo_place[w] as usize + 1);
            if let Some(w) = super::first_write_from(writes, later, e) {
                out(w);
            }
        }
    };
    steps(newest, &mut |b| push(b, &mut stack));
    while let Some(e) = stack.pop() {
        if e == newest {
            return true;
        }
        steps(e, &mut |b| push(b, &mut stack));
    }
    false
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering::{self, Acquire, Relaxed, Release, SeqCst};

    use super::super::{check, seq_cst_consistent};
    use super::seq_cst_consistent_with_newest;
    use crate::exec::weak::graph::{Access, Graph, Node};

    /// xorshift64*: a deterministic stream for the generator.
    struct Stream(u64);

    impl Stream {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n
        }
    }

    /// A random next event for `graph` (three threads, two locations, every
    /// ordering, fences and other events with `sw` edges into them).
    fn extend(graph: &Graph, s: &mut Stream) -> Graph {
        const ORDERS: [Ordering; 4] = [Relaxed, Acquire, Release, SeqCst];
        let mut next = graph.clone();
        let e = next.events.len();
        let thread = s.below(3) as u32;
        let location = s.below(2) as u32;
        if next.mo.len() < 2 {
            next.mo.resize(2, Vec::new());
        }
        let writes = next.mo[location as usize].clone();
        let source = |s: &mut Stream| match s.below(writes.len() + 1) {
            0 => None,
            i => Some(writes[i - 1]),
        };
        let order = ORDERS[s.below(4)];
        let access = match s.below(5) {
            0 | 1 => Access::Read {
                location,
                rf: source(s),
            },
            2 => {
                let at = s.below(writes.len() + 1);
                next.mo[location as usize].insert(at, e);
                Access::Write { location }
            }
            3 => {
                // Right after what it reads (atomicity).
                let rf = source(s);
                let at = rf.map_or(0, |w| writes.iter().position(|&x| x == w).unwrap() + 1);
                next.mo[location as usize].insert(at, e);
                Access::Rmw { location, rf }
            }
            _ if s.below(2) == 0 => Access::Fence,
            _ => {
                if e > 0 {
                    next.sw.push((s.below(e), e));
                }
                Access::Other
            }
        };
        next.events.push(Node {
            thread,
            access,
            order,
        });
        next
    }

    #[test]
    fn the_step_filter_agrees_with_psc_on_generated_graphs() {
        let mut s = Stream(0x9e37_79b9_7f4a_7c15);
        let (mut settled, mut cycles) = (0, 0);
        for _ in 0..400 {
            let mut graph = Graph::default();
            for _ in 0..14 {
                // Every candidate next event of a consistent graph.
                for _ in 0..8 {
                    let candidate = extend(&graph, &mut s);
                    let verdict = seq_cst_consistent(&candidate);
                    assert_eq!(seq_cst_consistent_with_newest(&candidate), verdict);
                    settled += usize::from(!super::newest_on_a_cycle(&candidate));
                    cycles += usize::from(!verdict);
                }
                let consistent = (0..20)
                    .map(|_| extend(&graph, &mut s))
                    .find(|g| check(g).is_ok());
                match consistent {
                    Some(g) => graph = g,
                    None => break,
                }
            }
        }
        // Both ways are exercised: graphs the filter settles, and psc
        // cycles it must leave to the full check.
        assert!(settled > 1000, "{settled} settled");
        assert!(cycles > 50, "{cycles} psc cycles");
    }
}

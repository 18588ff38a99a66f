//! Canonical identity of a Mazurkiewicz trace.

use crate::exec::weak::WeakSummary;
use crate::exec::Event;

/// A 128-bit fingerprint of the execution's trace: two executions get the
/// same fingerprint iff they order every pair of dependent events the same
/// way (up to hash collisions, ~2^-64 for realistic counts).
///
/// Each event is named by its thread and its position in that thread, and
/// carries its dependence clock (how many events of each thread precede it in
/// the trace). Listing the events thread by thread in program order with
/// their kinds and clocks is therefore independent of the interleaving and of
/// the order in which objects happened to be first used. Each thread's list
/// is hashed as the execution goes (its events come in program order), so
/// nothing is sorted or allocated but a chain per thread.
pub(crate) fn fingerprint(events: &[Event]) -> u128 {
    let mut chains: Vec<Chain> = Vec::new();
    for e in events {
        let t = e.action.thread.index();
        if chains.len() <= t {
            chains.resize(t + 1, Chain::new(0));
        }
        let clock = e.clock.as_slice();
        let chain = &mut chains[t];
        chain.absorb(e.action.kind as u64 | ((clock.len() as u64) << 32));
        for &c in clock {
            chain.absorb(u64::from(c));
        }
    }
    let mut total = Chain::new(chains.len() as u64);
    for chain in &chains {
        let (low, high) = chain.finish();
        total.absorb(low);
        total.absorb(high);
    }
    let (low, high) = total.finish();
    (u128::from(high) << 64) | u128::from(low)
}

/// Two independent hash chains over a stream of words, each step a
/// full-avalanche 64-bit mixer (SplitMix64's finaliser): as random as a
/// fingerprint needs, and much cheaper than SipHash per word.
#[derive(Clone, Copy)]
struct Chain {
    low: u64,
    high: u64,
}

impl Chain {
    fn new(seed: u64) -> Chain {
        Chain {
            low: mix(seed ^ 0x243f_6a88_85a3_08d3),
            high: mix(seed ^ 0x1319_8a2e_0370_7344),
        }
    }

    fn absorb(&mut self, w: u64) {
        self.low = mix(self.low ^ w);
        self.high = mix(self.high.wrapping_add(w).rotate_left(17) ^ 0x6b61_7365);
    }

    fn finish(self) -> (u64, u64) {
        (self.low, self.high)
    }
}

fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// A 128-bit fingerprint of an RC11 execution's graph: its events thread by
/// thread in program order (kind and object), which store each read read,
/// each atomic location's modification order, and the order of every other
/// object's operations (locks, joins: the total orders the shims keep).
/// Events are named by thread and position in it, objects by the least
/// name among their events, so the fingerprint does not depend on the
/// interleaving.
pub(crate) fn graph_fingerprint(events: &[Event], weak: &WeakSummary) -> u128 {
    // Each event's name: its thread and its position in that thread.
    let mut counts: Vec<u32> = Vec::new();
    let name: Vec<(u32, u32)> = events
        .iter()
        .map(|e| {
            let t = e.action.thread.0 as usize;
            if counts.len() <= t {
                counts.resize(t + 1, 0);
            }
            counts[t] += 1;
            (t as u32, counts[t] - 1)
        })
        .collect();
    let objects = events
        .iter()
        .filter_map(|e| e.action.object)
        .map(|o| o.0 as usize + 1)
        .max()
        .unwrap_or(0);
    // Per object: its event with the least name, and whether it is ordered
    // by `mo` and `rf` (atomic) rather than by the order its events ran in.
    let mut first = vec![usize::MAX; objects];
    let mut atomic_object = vec![false; objects];
    let mut rf: Vec<Option<Option<usize>>> = vec![None; events.len()];
    for &(read, source) in &weak.rf {
        rf[read] = Some(source);
    }
    let mut stores = vec![false; events.len()];
    for &w in weak.mo.iter().flatten() {
        stores[w] = true;
    }
    for (i, e) in events.iter().enumerate() {
        if let Some(object) = e.action.object {
            let o = object.0 as usize;
            if first[o] == usize::MAX || name[i] < name[first[o]] {
                first[o] = i;
            }
            atomic_object[o] |= stores[i] || rf[i].is_some();
        }
    }
    // The fingerprint is the sum of its items' hashes: a multiset, so
    // independent of the order events ran in.
    let mut total = 0u128;
    let mut words: Vec<u64> = Vec::with_capacity(16);
    for (i, e) in events.iter().enumerate() {
        let (thread, at) = name[i];
        words.clear();
        words.extend([0, u64::from(thread), u64::from(at), e.action.kind as u64]);
        if let Some(object) = e.action.object {
            let (t, p) = name[first[object.0 as usize]];
            words.extend([u64::from(t), u64::from(p)]);
        }
        match rf[i] {
            Some(Some(w)) => {
                let (t, p) = name[w];
                words.extend([1, u64::from(t), u64::from(p)]);
            }
            Some(None) => words.push(2),
            None => {}
        }
        total = total.wrapping_add(item_hash(&words));
    }
    for location in &weak.mo {
        words.clear();
        words.push(1);
        for &w in location {
            let (t, p) = name[w];
            words.extend([u64::from(t), u64::from(p)]);
        }
        total = total.wrapping_add(item_hash(&words));
    }
    // Every other object: its operations in the order they ran.
    let mut orders: Vec<Vec<u64>> = vec![Vec::new(); objects];
    for (i, e) in events.iter().enumerate() {
        if let Some(object) = e.action.object {
            let o = object.0 as usize;
            if !atomic_object[o] {
                let order = &mut orders[o];
                if order.is_empty() {
                    let (t, p) = name[first[o]];
                    order.extend([2, u64::from(t), u64::from(p)]);
                }
                let (t, p) = name[i];
                order.extend([u64::from(t), u64::from(p)]);
            }
        }
    }
    for order in orders.iter().filter(|order| !order.is_empty()) {
        total = total.wrapping_add(item_hash(order));
    }
    total
}

/// A 128-bit hash of one item of a fingerprint (`Chain` over its words,
/// seeded with their number).
fn item_hash(words: &[u64]) -> u128 {
    let mut chain = Chain::new(words.len() as u64);
    for &w in words {
        chain.absorb(w);
    }
    let (low, high) = chain.finish();
    (u128::from(high) << 64) | u128::from(low)
}

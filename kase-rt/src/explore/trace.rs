//! Canonical identity of a Mazurkiewicz trace.

use crate::exec::clock::VectorClock;
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
pub(crate) fn fingerprint(events: &[Event], clocks: &[VectorClock]) -> u128 {
    debug_assert_eq!(events.len(), clocks.len(), "a dependence clock per event");
    let mut chains: Vec<Chain> = Vec::new();
    for (e, clock) in events.iter().zip(clocks) {
        let t = e.action.thread.index();
        if chains.len() <= t {
            chains.resize(t + 1, Chain::new(0));
        }
        let clock = clock.as_slice();
        let chain = &mut chains[t];
        chain.absorb(e.action.kind as u64 | ((clock.len() as u64) << 32));
        for &c in clock {
            chain.absorb(u64::from(c));
        }
    }
    let mut total = Chain::new(chains.len() as u64);
    for chain in &chains {
        let hash = chain.finish();
        total.absorb(hash as u64);
        total.absorb((hash >> 64) as u64);
    }
    total.finish()
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

    fn finish(self) -> u128 {
        (u128::from(self.high) << 64) | u128::from(self.low)
    }
}

fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Buffers for [`GraphFingerprinter::fingerprint`], reused from execution
/// to execution (it runs after every one under RC11).
#[derive(Default)]
pub(crate) struct GraphFingerprinter {
    counts: Vec<u32>,
    name: Vec<(u32, u32)>,
    first: Vec<u32>,
    atomic_object: Vec<bool>,
    rf: Vec<u32>,
    orders: Vec<Option<(Chain, u64)>>,
}

impl GraphFingerprinter {
    /// A 128-bit fingerprint of an RC11 execution's graph: its events
    /// thread by thread in program order (kind and object), which store
    /// each read read, each atomic location's modification order, and the
    /// order of every other object's operations (locks, joins: the total
    /// orders the shims keep). Events are named by thread and position in
    /// it, objects by the least name among their events, so the
    /// fingerprint does not depend on the interleaving.
    pub(crate) fn fingerprint(&mut self, events: &[Event], weak: &WeakSummary) -> u128 {
        const NO_READ: u32 = u32::MAX;
        const READS_INITIAL: u32 = u32::MAX - 1;
        let GraphFingerprinter {
            counts,
            name,
            first,
            atomic_object,
            rf,
            orders,
        } = self;
        // Each event's name: its thread and its position in that thread.
        counts.clear();
        name.clear();
        name.extend(events.iter().map(|e| {
            let t = e.action.thread.0 as usize;
            if counts.len() <= t {
                counts.resize(t + 1, 0);
            }
            counts[t] += 1;
            (t as u32, counts[t] - 1)
        }));
        let name = &*name;
        let object_of = |i: usize| events[i].action.object.map(|o| o.0 as usize);
        let objects = crate::exec::scheduler::objects_touched(events);
        // Per object: its event with the least name, and whether it is
        // ordered by `mo` and `rf` (atomic) rather than by the order its
        // events ran in.
        first.clear();
        first.resize(objects, u32::MAX);
        atomic_object.clear();
        atomic_object.resize(objects, false);
        // Per event: the event whose store it read, `READS_INITIAL`, or
        // `NO_READ` for an event that reads no atomic.
        rf.clear();
        rf.resize(events.len(), NO_READ);
        for &(read, source) in &weak.rf {
            rf[read] = source.map_or(READS_INITIAL, |w| w as u32);
            if let Some(o) = object_of(read) {
                atomic_object[o] = true;
            }
        }
        for &w in weak.mo.iter().flatten() {
            if let Some(o) = object_of(w) {
                atomic_object[o] = true;
            }
        }
        for (i, e) in events.iter().enumerate() {
            if let Some(object) = e.action.object {
                let o = object.0 as usize;
                if first[o] == u32::MAX || name[i] < name[first[o] as usize] {
                    first[o] = i as u32;
                }
            }
        }
        // The fingerprint is the sum of its items' hashes: a multiset, so
        // independent of the order events ran in. A name is one word, and
        // an event's second word says which of the optional words follow.
        let packed = |i: usize| {
            let (t, p) = name[i];
            u64::from(t) << 32 | u64::from(p)
        };
        let mut total = 0u128;
        let mut add = |chain: Chain| total = total.wrapping_add(chain.finish());
        // Every other object: its operations in the order they ran, each
        // object's chain closed with their number.
        orders.clear();
        orders.resize(objects, None);
        for (i, e) in events.iter().enumerate() {
            let object = e.action.object.map(|o| o.0 as usize);
            let read = rf[i];
            let shape = match read {
                NO_READ => 0,
                READS_INITIAL => 1,
                _ => 2,
            } << 1
                | u64::from(object.is_some());
            let mut chain = Chain::new(0);
            chain.absorb(packed(i));
            chain.absorb(e.action.kind as u64 | shape << 32);
            if let Some(o) = object {
                let first = packed(first[o] as usize);
                chain.absorb(first);
                if !atomic_object[o] {
                    let (order, n) = orders[o].get_or_insert_with(|| (Chain::new(2), 0));
                    if *n == 0 {
                        order.absorb(first);
                    }
                    order.absorb(packed(i));
                    *n += 1;
                }
            }
            if read != NO_READ && read != READS_INITIAL {
                chain.absorb(packed(read as usize));
            }
            add(chain);
        }
        for location in &weak.mo {
            let mut chain = Chain::new(1);
            for &w in location {
                chain.absorb(packed(w));
            }
            chain.absorb(location.len() as u64);
            add(chain);
        }
        for &(mut order, n) in orders.iter().flatten() {
            order.absorb(n);
            add(order);
        }
        total
    }
}

//! Canonical identity of a Mazurkiewicz trace.

use std::hash::{DefaultHasher, Hash, Hasher};

use crate::exec::Event;

/// A 128-bit fingerprint of the execution's trace: two executions get the
/// same fingerprint iff they order every pair of dependent events the same
/// way (up to hash collisions, ~2^-64 for realistic counts).
///
/// Each event is named by its thread and its position in that thread, and
/// carries its dependence clock (how many events of each thread precede it in
/// the trace). Listing the events thread by thread in program order with
/// their kinds and clocks is therefore independent of the interleaving and of
/// the order in which objects happened to be first used.
pub(crate) fn fingerprint(events: &[Event]) -> u128 {
    let mut order: Vec<usize> = (0..events.len()).collect();
    order.sort_by_key(|&i| events[i].action.thread); // stable: keeps program order
    let mut low = DefaultHasher::new();
    let mut high = DefaultHasher::new();
    0x6b61_7365_u32.hash(&mut high); // a different prefix makes the two hashes independent
    for i in order {
        let e = &events[i];
        for h in [&mut low, &mut high] {
            e.action.thread.hash(h);
            e.action.kind.hash(h);
            e.clock.as_slice().hash(h);
        }
    }
    (u128::from(high.finish()) << 64) | u128::from(low.finish())
}

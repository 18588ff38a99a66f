//! Canonical identity of a Mazurkiewicz trace.

use std::hash::{DefaultHasher, Hash, Hasher};

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

/// A 128-bit fingerprint of an RC11 execution's graph: its events thread by
/// thread in program order (kind and object), which store each read read,
/// each atomic location's modification order, and the order of every other
/// object's operations (locks, joins: the total orders the shims keep).
/// Events are named by thread and position in it, objects by the least
/// name among their events, so the fingerprint does not depend on the
/// interleaving.
pub(crate) fn graph_fingerprint(events: &[Event], weak: &WeakSummary) -> u128 {
    let mut position = vec![0u32; events.len()];
    let mut per_thread = std::collections::HashMap::new();
    for (i, e) in events.iter().enumerate() {
        let next = per_thread.entry(e.action.thread).or_insert(0u32);
        position[i] = *next;
        *next += 1;
    }
    let name = |i: usize| (events[i].action.thread, position[i]);
    let mut first_event = std::collections::HashMap::new();
    let mut object_events: std::collections::HashMap<_, Vec<usize>> = Default::default();
    for (i, e) in events.iter().enumerate() {
        if let Some(object) = e.action.object {
            let least = first_event.entry(object).or_insert(i);
            if name(i) < name(*least) {
                *least = i;
            }
            object_events.entry(object).or_default().push(i);
        }
    }
    let rf: std::collections::HashMap<usize, Option<usize>> = weak.rf.iter().copied().collect();
    let mut items: Vec<Vec<u64>> = Vec::new();
    for (i, e) in events.iter().enumerate() {
        let (thread, at) = name(i);
        let mut item = vec![0, u64::from(thread.0), u64::from(at), e.action.kind as u64];
        if let Some(object) = e.action.object {
            let (t, p) = name(first_event[&object]);
            item.extend([u64::from(t.0), u64::from(p)]);
        }
        if let Some(read) = rf.get(&i) {
            match read {
                Some(w) => {
                    let (t, p) = name(*w);
                    item.extend([1, u64::from(t.0), u64::from(p)]);
                }
                None => item.push(2),
            }
        }
        items.push(item);
    }
    let atomic: std::collections::HashSet<usize> = weak.mo.iter().flatten().copied().collect();
    for stores in &weak.mo {
        let mut item = vec![1];
        for &w in stores {
            let (t, p) = name(w);
            item.extend([u64::from(t.0), u64::from(p)]);
        }
        items.push(item);
    }
    for (object, list) in &object_events {
        // Atomic locations are ordered by `mo` alone; every other object
        // by the order its operations ran in.
        if list
            .iter()
            .any(|i| atomic.contains(i) || rf.contains_key(i))
        {
            continue;
        }
        let (t, p) = name(first_event[object]);
        let mut item = vec![2, u64::from(t.0), u64::from(p)];
        for &i in list {
            let (t, p) = name(i);
            item.extend([u64::from(t.0), u64::from(p)]);
        }
        items.push(item);
    }
    items.sort_unstable();
    let mut low = DefaultHasher::new();
    let mut high = DefaultHasher::new();
    0x6b61_7365_u32.hash(&mut high);
    items.hash(&mut low);
    items.hash(&mut high);
    (u128::from(high.finish()) << 64) | u128::from(low.finish())
}

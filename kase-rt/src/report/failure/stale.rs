//! Under RC11, which store each load read: a load's row says which step
//! stored what it read and, if a store later in the location's
//! modification order had already run, that the load was stale and which
//! step stored the newer value (the table shows where both were written).

use crate::exec::weak::WeakSummary;
use crate::exec::Event;

use super::types::Step;

/// Adds to each reading row of `steps` (built from `events`, one row per
/// event but exits, `row_of_step`) which store it read, and whether a newer
/// one existed then.
pub(super) fn annotate(
    steps: &mut [Step],
    row_of_step: &[usize],
    events: &[Event],
    weak: &WeakSummary,
) {
    let row_of_event = super::rows_of_events(events, row_of_step);
    // Each store's list and place in modification order.
    let mut placed: Vec<Option<(usize, usize)>> = vec![None; events.len()];
    for (list, stores) in weak.mo.iter().enumerate() {
        for (at, &s) in stores.iter().enumerate() {
            placed[s] = Some((list, at));
        }
    }
    let list_of = |object| {
        weak.mo.iter().position(|list| {
            list.first()
                .is_some_and(|&w| events[w].action.object == object)
        })
    };
    // Reads in the order they ran; per list, the latest place in it of a
    // store that has run so far (what a stale read missed). One pass
    // over the events: a long execution's report must not take a scan of
    // the location's stores per read.
    let mut reads: Vec<(usize, Option<usize>)> = weak.rf.clone();
    reads.sort_unstable_by_key(|&(read, _)| read);
    let mut newest: Vec<Option<usize>> = vec![None; weak.mo.len()];
    let mut ran = 0;
    let mut lists = crate::fast_hash::Map::default();
    for (read, source) in reads {
        while ran < read {
            if let Some((list, at)) = placed[ran] {
                newest[list] = Some(newest[list].map_or(at, |n: usize| n.max(at)));
            }
            ran += 1;
        }
        let Some(row) = row_of_event[read] else {
            continue;
        };
        let object = events[read].action.object;
        let list = *lists.entry(object).or_insert_with(|| list_of(object));
        let read_from = match source {
            // A call's row (a `LazyLock` forced, a channel used) reading a
            // store of the same call: its own bookkeeping.
            Some(w) if row_of_event[w] == Some(row) => continue,
            Some(w) => match row_of_event[w] {
                Some(r) => format!("reads step {r}"),
                None => continue,
            },
            None => "reads the initial value".to_owned(),
        };
        // The store latest in modification order that had already run when
        // the load did, if it comes after the one read.
        let newer = list.and_then(|list| {
            let after = match source {
                Some(w) => placed[w]?.1 + 1,
                None => 0,
            };
            let at = newest[list].filter(|&at| at >= after)?;
            Some(weak.mo[list][at])
        });
        let note = match newer.and_then(|s| Some((row_of_event[s]?, events[s].value))) {
            Some((r, Some(v))) => {
                format!(" ({read_from}; stale: step {r} had stored {v}, later in its order)")
            }
            Some((r, None)) => format!(" ({read_from}; stale: step {r} had stored a newer value)"),
            None => format!(" ({read_from})"),
        };
        if let Some(step) = steps.get_mut(row - 1) {
            // A call's row shows each distinct note once.
            if !step.operation.contains(&note) {
                step.operation.push_str(&note);
            }
        }
    }
}

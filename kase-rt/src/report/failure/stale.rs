//! Under RC11, which store each load read: a load's row says which step
//! stored what it read and, if a store later in the location's
//! modification order had already run, that the load was stale and which
//! step stored the newer value (the table shows where both were written).

use crate::exec::weak::WeakSummary;
use crate::exec::{Event, OpKind};

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
    // Event index -> 1-based row, for the events that have a row.
    let mut row_of_event = vec![None; events.len()];
    let mut step = 0;
    for (i, e) in events.iter().enumerate() {
        if e.action.kind == OpKind::Exit {
            continue;
        }
        row_of_event[i] = row_of_step.get(step).map(|&r| r + 1);
        step += 1;
    }
    for &(read, source) in &weak.rf {
        let Some(row) = row_of_event[read] else {
            continue;
        };
        let object = events[read].action.object;
        let stores = weak.mo.iter().find(|list| {
            list.first()
                .is_some_and(|&w| events[w].action.object == object)
        });
        let read_from = match source {
            Some(w) => match row_of_event[w] {
                Some(r) => format!("reads step {r}"),
                None => continue,
            },
            None => "reads the initial value".to_owned(),
        };
        // Stores after the one read in modification order that had already
        // run when the load did.
        let newer = stores.and_then(|list| {
            let after = match source {
                Some(w) => list.iter().position(|&s| s == w)? + 1,
                None => 0,
            };
            list[after..].iter().rev().find(|&&s| s < read).copied()
        });
        let note = match newer.and_then(|s| Some((row_of_event[s]?, events[s].value))) {
            Some((r, Some(v))) => {
                format!(" ({read_from}; stale: step {r} had stored {v}, later in its order)")
            }
            Some((r, None)) => format!(" ({read_from}; stale: step {r} had stored a newer value)"),
            None => format!(" ({read_from})"),
        };
        if let Some(step) = steps.get_mut(row - 1) {
            step.operation.push_str(&note);
        }
    }
}

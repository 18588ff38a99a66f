//! A failing execution, rendered for a person: what went wrong, the
//! interleaving step by step, and the schedule that replays it.
//!
//! `types` holds the [`Failure`] value and its accessors, `build` makes one
//! from an execution's fault, `fold` says how events fold into its rows
//! (also for a replay's messages), `names` names threads and operations,
//! and `render` writes the report.

mod build;
mod fold;
mod kind;
mod names;
mod render;
mod stale;
mod types;

pub(crate) use fold::{rows_of, Fold, RowFolder};
pub use kind::FailureKind;
pub(crate) use names::{location, Names, Renumbering};
pub use types::Failure;
pub(crate) use types::{FirstFound, Saved};

/// Event index → 1-based row of the report, for the events that have a
/// row (every event but a thread's exit; `row_of_step` maps steps to rows).
fn rows_of_events(events: &[crate::exec::Event], row_of_step: &[usize]) -> Vec<Option<usize>> {
    let mut rows = vec![None; events.len()];
    let mut step = 0;
    for (i, e) in events.iter().enumerate() {
        if e.action.kind == crate::exec::OpKind::Exit {
            continue;
        }
        rows[i] = row_of_step.get(step).map(|&r| r + 1);
        step += 1;
    }
    rows
}

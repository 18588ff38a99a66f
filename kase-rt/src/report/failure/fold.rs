//! How events fold into the rows of a report: the one rule both the
//! report's table and a replay's divergence message number steps by.
//!
//! Exits are not steps. The events of one call of a shim (`exec/call.rs`)
//! in a row make one row, at the user's line; the end of a pure part of a
//! critical section (`Upgrade`, peeking's bookkeeping, never a choice
//! point) has no row of its own: the user sees the lock and the unlock
//! already.

use crate::exec::{Event, OpKind, ThreadIdx};

/// Where one event goes in the report's table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fold {
    /// Not a step (an exit): no row, and not counted by schedules.
    NotAStep,
    /// A step shown by the latest row (peeking's bookkeeping).
    Hidden,
    /// The call of the latest row goes on: the same row.
    SameRow,
    /// A row of its own; `continued` if its call had a row before (another
    /// thread ran in between).
    NewRow { continued: bool },
}

/// Folds events one by one, counting rows.
#[derive(Debug, Default)]
pub(crate) struct RowFolder {
    rows: usize,
    /// The call of the latest row, if it shows one.
    last_call: Option<(ThreadIdx, u32)>,
    /// Calls that have a row so far.
    calls: Vec<(ThreadIdx, u32)>,
}

impl RowFolder {
    /// Where `event`, the next event of the execution, goes.
    pub(crate) fn push(&mut self, event: &Event) -> Fold {
        let kind = event.action.kind;
        if kind == OpKind::Exit {
            return Fold::NotAStep;
        }
        if matches!(kind, OpKind::Upgrade | OpKind::ReadUpgrade) {
            return Fold::Hidden;
        }
        let call = event.call.as_ref().map(|c| (event.action.thread, c.id));
        if call.is_some() && call == self.last_call {
            return Fold::SameRow;
        }
        self.rows += 1;
        self.last_call = call;
        let continued = match call {
            Some(call) if self.calls.contains(&call) => true,
            Some(call) => {
                self.calls.push(call);
                false
            }
            None => false,
        };
        Fold::NewRow { continued }
    }

    /// Rows so far.
    pub(crate) fn rows(&self) -> usize {
        self.rows
    }
}

/// The rows `events` make in a report.
pub(crate) fn rows_of(events: &[Event]) -> usize {
    let mut folder = RowFolder::default();
    for e in events {
        folder.push(e);
    }
    folder.rows()
}

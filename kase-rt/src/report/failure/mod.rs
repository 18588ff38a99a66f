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

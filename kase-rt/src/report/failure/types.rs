//! The [`Failure`] value: what it holds, its accessors, and what the
//! explorer adds to it after the execution.

use std::any::Any;
use std::path::{Path, PathBuf};

use super::FailureKind;
use crate::report::Schedule;

/// One row of the interleaving.
#[derive(Clone, Debug)]
pub(super) struct Step {
    pub(super) thread: String,
    pub(super) operation: String,
    pub(super) location: String,
    /// User-code frames of the stack at the step (`KASE_BACKTRACE=1`).
    pub(super) frames: Vec<String>,
    /// Whether an earlier row showed the beginning of the same call.
    pub(super) continued: bool,
}

/// The first failing interleaving found, when a simpler one replaced it.
#[derive(Clone, Debug)]
pub(crate) struct FirstFound {
    pub schedule: Schedule,
    pub preemptions: usize,
    pub steps: usize,
    /// Executions the search for a simpler interleaving ran.
    pub searched: u64,
}

/// Where the failure was written for the next runs.
#[derive(Clone, Debug)]
pub(crate) enum Saved {
    /// Appended (or already present) in this regression file.
    File(PathBuf),
    /// `KASE_PERSIST=print`: the line to add to this file, not written.
    Printed { path: PathBuf, line: String },
}

/// A failure found by kase, with everything needed to understand and replay it.
///
/// `Display` renders the full human report.
pub struct Failure {
    pub(super) kind: FailureKind,
    pub(super) headline: String,
    pub(super) details: Vec<String>,
    pub(super) steps: Vec<Step>,
    /// For each step as schedules count them (every event but exits), the
    /// row of `steps` (0-based) showing it.
    pub(super) row_of_step: Vec<usize>,
    pub(super) schedule: Schedule,
    pub(super) message: Option<String>,
    /// `file:line:column` of the panic, for [`FailureKind::Panic`].
    pub(super) panic_location: Option<String>,
    pub(super) payload: Option<Box<dyn Any + Send>>,
    /// The steps (1-based) that preempted another thread, once counted.
    pub(super) preempted: Option<Vec<usize>>,
    pub(super) first_found: Option<FirstFound>,
    pub(super) notes: Vec<String>,
    pub(super) origin: Option<(PathBuf, usize)>,
    pub(super) saved: Option<Saved>,
    pub(super) replay_command: Option<String>,
}

impl Failure {
    /// What went wrong.
    pub fn kind(&self) -> FailureKind {
        self.kind
    }

    /// The schedule that replays this failure with [`crate::Builder::replay`]
    /// or `KASE_REPLAY`.
    pub fn schedule(&self) -> &Schedule {
        &self.schedule
    }

    /// The panic message, for [`FailureKind::Panic`] (and kase's own, for
    /// [`FailureKind::Internal`]).
    pub fn message(&self) -> Option<&str> {
        self.message.as_deref()
    }

    /// The original panic payload, for [`FailureKind::Panic`].
    pub fn panic_payload(&self) -> Option<&(dyn Any + Send)> {
        self.payload.as_deref()
    }

    pub(crate) fn take_payload(&mut self) -> Option<Box<dyn Any + Send>> {
        self.payload.take()
    }

    /// Number of steps of the failing interleaving as the report shows them:
    /// the visible operations, with those a shim makes for one call of the
    /// user (a channel's `recv`: locks and waits of its own) counted as one.
    pub fn steps(&self) -> usize {
        self.steps.len()
    }

    /// Preemptions in the failing interleaving: switches away from a thread
    /// that could have gone on. `None` if they were not counted (for a
    /// nondeterminism failure, or when counting was not possible).
    pub fn preemptions(&self) -> Option<usize> {
        self.preempted.as_ref().map(Vec::len)
    }

    /// When kase replaced the first failing interleaving it found by one
    /// with fewer preemptions (the one this report shows): the first one's
    /// schedule and preemption count.
    pub fn first_found(&self) -> Option<(&Schedule, usize)> {
        self.first_found
            .as_ref()
            .map(|f| (&f.schedule, f.preemptions))
    }

    /// The regression file this failure's schedule came from, if it was
    /// found by replaying a saved schedule before exploration.
    pub fn regression_file(&self) -> Option<&Path> {
        self.origin.as_ref().map(|(path, _)| path.as_path())
    }

    /// The regression file the schedule was saved to (or, with
    /// `KASE_PERSIST=print`, the file it should be added to).
    pub fn saved_to(&self) -> Option<&Path> {
        match &self.saved {
            Some(Saved::File(path) | Saved::Printed { path, .. }) => Some(path),
            None => None,
        }
    }

    /// The shell command that replays this failure, when the test's name is
    /// known (`#[kase::test]` or [`crate::Builder::name`]).
    pub fn replay_command(&self) -> Option<&str> {
        self.replay_command.as_deref()
    }

    /// Whether `other` is the same failure for the purpose of finding a
    /// simpler interleaving: the same kind, and a panic at the same place.
    pub(crate) fn same_failure(&self, other: &Failure) -> bool {
        self.kind == other.kind && self.panic_location == other.panic_location
    }

    /// Records which steps (1-based, as schedules count them) preempted
    /// another thread; the report marks the rows showing them.
    pub(crate) fn set_preempted(&mut self, steps: Vec<usize>) {
        let (counted, rows) = (self.row_of_step.len(), self.steps.len());
        let mut marked: Vec<usize> = steps
            .into_iter()
            .map(|step| match self.row_of_step.get(step.wrapping_sub(1)) {
                Some(row) => row + 1,
                // Past the end (the failure came before the step ran).
                None => rows + step.saturating_sub(counted),
            })
            .collect();
        marked.dedup();
        self.preempted = Some(marked);
    }

    pub(crate) fn set_first_found(&mut self, first: FirstFound) {
        self.first_found = Some(first);
    }

    pub(crate) fn add_note(&mut self, note: String) {
        self.notes.push(note);
    }

    pub(crate) fn set_origin(&mut self, path: PathBuf, line: usize) {
        self.origin = Some((path, line));
    }

    pub(crate) fn set_saved(&mut self, saved: Saved) {
        self.saved = Some(saved);
    }

    pub(crate) fn set_replay_command(&mut self, command: String) {
        self.replay_command = Some(command);
    }

    /// One line for a regression file's comment: kind, where, and the first
    /// line of the message or description.
    pub(crate) fn summary(&self) -> String {
        let mut s = format!("{}: {}", self.kind, self.headline.trim_end_matches(':'));
        if let Some(first) = self.details.first().and_then(|d| d.lines().next()) {
            s.push_str(": ");
            s.push_str(first.trim());
        }
        let s = s.replace(['\r', '\n'], " ");
        if s.chars().count() > 160 {
            let cut: String = s.chars().take(157).collect();
            format!("{cut}...")
        } else {
            s
        }
    }
}

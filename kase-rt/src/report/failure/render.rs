//! The human report: `Display` (headline, details, the interleaving and
//! how to replay it) and a short `Debug`.

use std::fmt;

use super::types::Saved;
use super::{Failure, FailureKind};
use crate::report::persist::shown;

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

impl fmt::Debug for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Failure")
            .field("kind", &self.kind)
            .field("headline", &self.headline)
            .field("schedule", &self.schedule.to_string())
            .finish_non_exhaustive()
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.kind == FailureKind::Internal {
            writeln!(f, "kase internal error (a bug in kase): {}", self.headline)?;
        } else {
            writeln!(f, "kase found a {}: {}", self.kind, self.headline)?;
        }
        for line in &self.details {
            for part in line.lines() {
                writeln!(f, "    {part}")?;
            }
        }
        for note in &self.notes {
            writeln!(f, "note: {note}")?;
        }
        if let Some((path, line)) = &self.origin {
            writeln!(
                f,
                "note: this schedule was saved in {}:{line} and replayed before exploring; the failure \
                 is still there",
                shown(path)
            )?;
        }
        writeln!(f)?;
        if self.steps.is_empty() && self.kind == FailureKind::Internal {
            return write!(
                f,
                "Choices made until then: {}\nReplay them with KASE_REPLAY='{}' (it should reach the same \
                 internal error).",
                self.schedule, self.schedule
            );
        }
        write!(
            f,
            "Interleaving ({}",
            plural(self.steps.len(), "step", "steps")
        )?;
        if let Some(p) = self.preemptions() {
            write!(f, ", {}", plural(p, "preemption", "preemptions"))?;
        }
        writeln!(f, "):")?;
        let tw = self
            .steps
            .iter()
            .map(|s| s.thread.len())
            .max()
            .unwrap_or(6)
            .max(6);
        let ow = self
            .steps
            .iter()
            .map(|s| s.operation.len())
            .max()
            .unwrap_or(9)
            .max(9);
        writeln!(
            f,
            "  {:>4}  {:tw$}  {:ow$}  location",
            "step", "thread", "operation"
        )?;
        let preempted = self.preempted.as_deref().unwrap_or_default();
        for (i, s) in self.steps.iter().enumerate() {
            let mark = if preempted.contains(&(i + 1)) {
                '*'
            } else {
                ' '
            };
            writeln!(
                f,
                "  {:>4}{mark} {:tw$}  {:ow$}  {}",
                i + 1,
                s.thread,
                s.operation,
                s.location
            )?;
            for frame in &s.frames {
                writeln!(f, "          at {frame}")?;
            }
        }
        if preempted.iter().any(|&step| step <= self.steps.len()) {
            writeln!(
                f,
                "  (* a preemption: the thread before could have gone on)"
            )?;
        }
        writeln!(f)?;
        if self.kind == FailureKind::Nondeterminism {
            // Replaying cannot be relied on to reproduce this one.
            return write!(f, "Choices made until then: {}", self.schedule);
        }
        write!(f, "Schedule: {}", self.schedule)?;
        if let Some(first) = &self.first_found {
            let now = self.preemptions().unwrap_or(0);
            write!(
                f,
                "\nSimplified: the first failing interleaving kase found had {} and {} ({}); \
                 this one has {} ({} searched).",
                plural(first.preemptions, "preemption", "preemptions"),
                plural(first.steps, "step", "steps"),
                first.schedule,
                plural(now, "preemption", "preemptions"),
                plural(first.searched as usize, "execution", "executions"),
            )?;
        }
        match &self.saved {
            Some(Saved::File(path)) => write!(
                f,
                "\nSaved to {} (check it in): kase replays it before exploring this test.",
                shown(path)
            )?,
            Some(Saved::Printed { path, line }) => write!(
                f,
                "\nKASE_PERSIST=print: add this line to {} to replay it before exploring this test:\n    {line}",
                shown(path)
            )?,
            None => {}
        }
        match &self.replay_command {
            Some(command) => write!(f, "\nReplay it with:\n    {command}"),
            None => write!(
                f,
                "\nReplay it with KASE_REPLAY='{}' or `Builder::replay(\"{}\")`.",
                self.schedule, self.schedule
            ),
        }
    }
}

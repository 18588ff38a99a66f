//! A failing execution, rendered for a person: what went wrong, the
//! interleaving step by step, and the schedule that replays it.

use std::any::Any;
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::exec::panic::is_internal;
use crate::exec::{Action, Event, Fault, ObjectKind, OpKind, ThreadIdx};
use crate::report::persist::shown;
use crate::report::Schedule;

/// What kind of failure kase found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FailureKind {
    /// A model thread panicked (an assertion failed, an `unwrap` on `None`, ...).
    Panic,
    /// No thread could run, yet some had not finished.
    Deadlock,
    /// An execution exceeded `max_steps` visible operations.
    Livelock,
    /// The model did not behave the same way when re-run with the same
    /// schedule: it depends on something other than the schedule (time,
    /// randomness, `HashMap` order, uninstrumented synchronisation), or a
    /// replayed schedule no longer fits the code.
    Nondeterminism,
    /// Two accesses to a tracked `UnsafeCell`, at least one a write, were
    /// not ordered by happens-before.
    DataRace,
    /// The model closure returned while threads it spawned were still
    /// running, or every thread finished but an `Arc` created in the model
    /// (by `Arc::new` or `Arc::new_cyclic` in code that `#[kase::test]` or
    /// `#[kase::instrument]` rewrote) is still alive: a reference cycle.
    Leak,
    /// kase itself failed: one of its internal invariants did not hold. A
    /// bug in kase, not in the code under test; the report says so, asks
    /// for it to be reported, and carries the schedule of the execution
    /// so far.
    Internal,
}

impl fmt::Display for FailureKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FailureKind::Panic => "panic",
            FailureKind::Deadlock => "deadlock",
            FailureKind::Livelock => "livelock",
            FailureKind::Nondeterminism => "nondeterminism",
            FailureKind::DataRace => "data race",
            FailureKind::Leak => "leak",
            FailureKind::Internal => "internal error",
        })
    }
}

/// One row of the interleaving.
#[derive(Clone, Debug)]
struct Step {
    thread: String,
    operation: String,
    location: String,
    /// User-code frames of the stack at the step (`KASE_BACKTRACE=1`).
    frames: Vec<String>,
}

/// The frames of `backtrace` in user code, innermost first: kase's own,
/// std's and the coroutine library's frames are left out.
fn user_frames(backtrace: &backtrace::Backtrace) -> Vec<String> {
    const NOT_USER: &[&str] = &[
        "kase_rt::",
        "<kase_rt::",
        "std::",
        "<std::",
        "core::",
        "<core::",
        "alloc::",
        "<alloc::",
        "corosensei::",
        "<corosensei::",
        "backtrace::",
        "<backtrace::",
        "__rust",
        "rust_",
    ];
    let mut resolved = backtrace.clone();
    resolved.resolve();
    let mut frames = Vec::new();
    for symbol in resolved.frames().iter().flat_map(|f| f.symbols()) {
        let Some(name) = symbol.name().map(|n| format!("{n:#}")) else {
            continue;
        };
        if NOT_USER.iter().any(|p| name.starts_with(p)) {
            continue;
        }
        let at = match (symbol.filename(), symbol.lineno()) {
            (Some(file), Some(line)) => format!(" ({}:{line})", file.display()),
            _ => String::new(),
        };
        frames.push(format!("{name}{at}"));
        if frames.len() == 8 {
            break;
        }
    }
    frames
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
    kind: FailureKind,
    headline: String,
    details: Vec<String>,
    steps: Vec<Step>,
    schedule: Schedule,
    message: Option<String>,
    /// `file:line:column` of the panic, for [`FailureKind::Panic`].
    panic_location: Option<String>,
    payload: Option<Box<dyn Any + Send>>,
    /// The steps (1-based) that preempted another thread, once counted.
    preempted: Option<Vec<usize>>,
    first_found: Option<FirstFound>,
    notes: Vec<String>,
    origin: Option<(PathBuf, usize)>,
    saved: Option<Saved>,
    replay_command: Option<String>,
}

/// Thread numbers as a fresh run of the same execution assigns them: `main`
/// is 0 and the others are numbered in the order this execution spawned them.
/// The explorer's own numbering depends on the executions it ran before, so
/// reports and schedules use this one, which replays from scratch.
pub(crate) struct Renumbering(HashMap<ThreadIdx, ThreadIdx>);

impl Renumbering {
    pub(crate) fn of(events: &[Event]) -> Self {
        let mut map = HashMap::new();
        let spawns = events.iter().filter(|e| e.action.kind == OpKind::Spawn);
        for (next, e) in (1..).zip(spawns) {
            let Some(child) = e.value else {
                // A spawn that does not say which thread it created: keep
                // the explorer's numbers rather than guess.
                return Renumbering(HashMap::new());
            };
            map.insert(ThreadIdx(child as u32), ThreadIdx(next));
        }
        Renumbering(map)
    }

    pub(crate) fn get(&self, t: ThreadIdx) -> ThreadIdx {
        self.0.get(&t).copied().unwrap_or(t)
    }
}

/// How objects and threads are named in a report.
pub(crate) struct Names<'a> {
    pub objects: &'a [ObjectKind],
    pub thread_name: &'a dyn Fn(ThreadIdx) -> Option<String>,
    pub renumbering: &'a Renumbering,
}

impl Names<'_> {
    pub(crate) fn thread(&self, t: ThreadIdx) -> String {
        let shown = self.renumbering.get(t);
        match (self.thread_name)(t) {
            Some(name) if t != ThreadIdx::MAIN => format!("{shown} ({name})"),
            _ => shown.to_string(),
        }
    }

    fn object(&self, action: &Action) -> String {
        match action.object {
            None => String::new(),
            Some(o) => match self.objects.get(o.0 as usize) {
                Some(ObjectKind::Cell) => format!("cell#{}", o.0),
                Some(ObjectKind::Thread) | None => format!("object#{}", o.0),
                Some(kind) => format!("{}#{}", format!("{kind:?}").to_ascii_lowercase(), o.0),
            },
        }
    }

    pub(crate) fn operation(&self, action: &Action, value: Option<u64>) -> String {
        let object = self.object(action);
        match (action.kind, value) {
            (OpKind::Spawn, Some(child)) => {
                format!("spawn {}", self.thread(ThreadIdx(child as u32)))
            }
            (OpKind::Join | OpKind::IsFinished, _) | (OpKind::Exit, _) => {
                action.kind.name().to_owned()
            }
            (OpKind::Load, Some(v)) => format!("load {object} -> {v}"),
            (OpKind::Store, Some(v)) => format!("store {object} <- {v}"),
            (OpKind::Rmw | OpKind::CompareExchange, Some(v)) => {
                format!("{} {object} (read {v})", action.kind.name())
            }
            (OpKind::TryLock | OpKind::TryReadLock | OpKind::SharedTryLock, Some(ok)) => {
                format!(
                    "{} {object} -> {}",
                    action.kind.name(),
                    if ok == 1 { "acquired" } else { "busy" }
                )
            }
            _ if object.is_empty() => action.kind.name().to_owned(),
            _ => format!("{} {object}", action.kind.name()),
        }
    }
}

pub(crate) fn location(l: &std::panic::Location<'_>) -> String {
    format!("{}:{}:{}", l.file(), l.line(), l.column())
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

impl Failure {
    pub(crate) fn new(
        fault: Fault,
        events: &[Event],
        schedule: Schedule,
        names: &Names<'_>,
    ) -> Self {
        let steps = events
            .iter()
            .filter(|e| e.action.kind != OpKind::Exit)
            .map(|e| Step {
                thread: names.thread(e.action.thread),
                operation: names.operation(&e.action, e.value),
                location: location(e.location),
                frames: e.backtrace.as_deref().map(user_frames).unwrap_or_default(),
            })
            .collect();
        let mut panic_location = None;
        let (kind, headline, details, message, payload) = match fault {
            Fault::Panic { thread, info, .. } if is_internal(&info.message) => {
                // kase's own code panicked while it ran for a model thread
                // (inside a shim): not the model's failure.
                let at = info.location.as_ref().map(|l| format!(" at {l}")).unwrap_or_default();
                let headline = format!("kase failed while running {}{at}:", names.thread(thread));
                let details = internal_details(&info.message);
                (FailureKind::Internal, headline, details, Some(info.message), None)
            }
            Fault::Panic { thread, info, payload } => {
                let at = info.location.as_ref().map(|l| format!(" at {l}")).unwrap_or_default();
                panic_location = info.location;
                let headline = format!("{} panicked{at}:", names.thread(thread));
                (FailureKind::Panic, headline, vec![info.message.clone()], Some(info.message), Some(payload))
            }
            Fault::Deadlock { blocked } => {
                let details = blocked
                    .iter()
                    .map(|(action, at)| {
                        let op = names.operation(action, None);
                        format!("{} is blocked: waits to {op} at {}", names.thread(action.thread), location(at))
                    })
                    .collect();
                (FailureKind::Deadlock, "no thread can run, but not all have finished:".into(), details, None, None)
            }
            Fault::Livelock { steps } => (
                FailureKind::Livelock,
                format!("an execution exceeded {steps} visible operations"),
                vec![
                    "a thread may be spinning forever; if the model is just long, raise the bound with \
                     `Builder::max_steps` or KASE_MAX_STEPS"
                        .into(),
                ],
                None,
                None,
            ),
            Fault::DataRace { earlier, later } => {
                let access = |a: &crate::exec::CellAccess| {
                    let op = if a.write { "writes" } else { "reads" };
                    format!("{} {op} the cell at {}", names.thread(a.thread), location(a.location))
                };
                (
                    FailureKind::DataRace,
                    "data race: two accesses to one cell, at least one a write, not ordered by happens-before:"
                        .into(),
                    vec![
                        access(&earlier),
                        access(&later),
                        "order them with a lock, a Release store read by an Acquire load, or a join".into(),
                    ],
                    None,
                    None,
                )
            }
            Fault::Leak { running } => {
                let mut details: Vec<String> = running
                    .iter()
                    .map(|(t, at)| match at {
                        Some(at) => format!("{} (spawned at {}) is still running", names.thread(*t), location(at)),
                        None => format!("{} is still running", names.thread(*t)),
                    })
                    .collect();
                details.push("join every thread before the model closure returns (or use thread::scope)".into());
                (
                    FailureKind::Leak,
                    "the model closure returned while threads it spawned were still running:".into(),
                    details,
                    None,
                    None,
                )
            }
            Fault::LeakedArcs { arcs } => {
                let mut details: Vec<String> = arcs
                    .iter()
                    .map(|(t, at)| format!("the Arc {} created at {} was never freed", names.thread(*t), location(at)))
                    .collect();
                details.push(
                    "a reference cycle keeps it alive (make one direction a `Weak`), or it was forgotten \
                     (`mem::forget`, `Box::leak`) or stored in a `static` that outlives the model"
                        .into(),
                );
                (
                    FailureKind::Leak,
                    "every thread finished, but Arcs created in the model are still alive:".into(),
                    details,
                    None,
                    None,
                )
            }
            Fault::Divergence { message } => (
                FailureKind::Nondeterminism,
                "the model did not follow the schedule it was given:".into(),
                vec![message],
                None,
                None,
            ),
            // An exploration explores again without peeking instead; only a
            // replay of a `kase1p:` schedule or the search for a simpler
            // failure can end here.
            Fault::PeekingUnsound { reason } => (
                FailureKind::DataRace,
                "a possible data race (found with critical-section peeking; replay without peeking to \
                 confirm it):"
                    .into(),
                vec![reason],
                None,
                None,
            ),
        };
        Failure {
            kind,
            headline,
            details,
            steps,
            schedule,
            message,
            panic_location,
            payload,
            preempted: None,
            first_found: None,
            notes: Vec::new(),
            origin: None,
            saved: None,
            replay_command: None,
        }
    }

    /// A panic of kase's own code (an internal invariant failed) during the
    /// execution whose choices so far are `schedule`, after `executions`
    /// executions: a report that says it is a bug in kase.
    pub(crate) fn internal(
        message: String,
        location: Option<String>,
        schedule: Schedule,
        executions: u64,
    ) -> Self {
        let at = location.map(|l| format!(" at {l}")).unwrap_or_default();
        let mut details = internal_details(&message);
        details.push(format!(
            "it happened in execution {} of this exploration, after the choices in the schedule below \
             (the interleaving was lost with the execution)",
            executions.max(1)
        ));
        Failure {
            kind: FailureKind::Internal,
            headline: format!("kase failed while exploring{at}:"),
            details,
            steps: Vec::new(),
            schedule,
            message: Some(message),
            panic_location: None,
            payload: None,
            preempted: None,
            first_found: None,
            notes: Vec::new(),
            origin: None,
            saved: None,
            replay_command: None,
        }
    }

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

    /// Number of visible operations in the failing interleaving.
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

    /// Records which steps (1-based) preempted another thread.
    pub(crate) fn set_preempted(&mut self, steps: Vec<usize>) {
        self.preempted = Some(steps);
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

/// What an internal error's report says besides where it happened.
fn internal_details(message: &str) -> Vec<String> {
    vec![
        message.to_owned(),
        format!(
            "This is a bug in kase, not in the code under test. Please report it at {}/issues with \
             this whole report (the schedule replays the execution up to the failure), the kase \
             version ({}) and, if you can, the test.",
            env!("CARGO_PKG_REPOSITORY"),
            env!("CARGO_PKG_VERSION")
        ),
    ]
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

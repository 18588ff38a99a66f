//! A failing execution, rendered for a person: what went wrong, the
//! interleaving step by step, and the schedule that replays it.

use std::any::Any;
use std::fmt;

use crate::exec::{Action, Event, Fault, ObjectKind, OpKind, ThreadIdx};
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
}

impl fmt::Display for FailureKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FailureKind::Panic => "panic",
            FailureKind::Deadlock => "deadlock",
            FailureKind::Livelock => "livelock",
            FailureKind::Nondeterminism => "nondeterminism",
            FailureKind::DataRace => "data race",
        })
    }
}

/// One row of the interleaving.
#[derive(Clone, Debug)]
struct Step {
    thread: String,
    operation: String,
    location: String,
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
    payload: Option<Box<dyn Any + Send>>,
}

/// How objects and threads are named in a report.
pub(crate) struct Names<'a> {
    pub objects: &'a [ObjectKind],
    pub thread_name: &'a dyn Fn(ThreadIdx) -> Option<String>,
}

impl Names<'_> {
    fn thread(&self, t: ThreadIdx) -> String {
        match (self.thread_name)(t) {
            Some(name) if t != ThreadIdx::MAIN => format!("{t} ({name})"),
            _ => t.to_string(),
        }
    }

    fn object(&self, action: &Action) -> String {
        match action.object {
            None => String::new(),
            Some(o) => match self.objects.get(o.0 as usize) {
                Some(ObjectKind::Atomic) => format!("atomic#{}", o.0),
                Some(ObjectKind::Mutex) => format!("mutex#{}", o.0),
                Some(ObjectKind::RwLock) => format!("rwlock#{}", o.0),
                Some(ObjectKind::Condvar) => format!("condvar#{}", o.0),
                Some(ObjectKind::Park) => format!("park#{}", o.0),
                Some(ObjectKind::Cell) => format!("cell#{}", o.0),
                Some(ObjectKind::Thread) | None => format!("object#{}", o.0),
            },
        }
    }

    fn operation(&self, action: &Action, value: Option<u64>) -> String {
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
            (OpKind::TryLock, Some(ok)) => {
                format!(
                    "try_lock {object} -> {}",
                    if ok == 1 { "acquired" } else { "busy" }
                )
            }
            _ if object.is_empty() => action.kind.name().to_owned(),
            _ => format!("{} {object}", action.kind.name()),
        }
    }
}

fn location(l: &std::panic::Location<'_>) -> String {
    format!("{}:{}:{}", l.file(), l.line(), l.column())
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
            })
            .collect();
        let (kind, headline, details, message, payload) = match fault {
            Fault::Panic { thread, info, payload } => {
                let at = info.location.map(|l| format!(" at {l}")).unwrap_or_default();
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
            Fault::Divergence { message } => (
                FailureKind::Nondeterminism,
                "the model did not follow the schedule it was given:".into(),
                vec![message],
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
            payload,
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

    /// The panic message, for [`FailureKind::Panic`].
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
        writeln!(f, "kase found a {}: {}", self.kind, self.headline)?;
        for line in &self.details {
            for part in line.lines() {
                writeln!(f, "    {part}")?;
            }
        }
        writeln!(f)?;
        writeln!(f, "Interleaving ({} steps):", self.steps.len())?;
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
        for (i, s) in self.steps.iter().enumerate() {
            writeln!(
                f,
                "  {:>4}  {:tw$}  {:ow$}  {}",
                i + 1,
                s.thread,
                s.operation,
                s.location
            )?;
        }
        writeln!(f)?;
        writeln!(f, "Schedule: {}", self.schedule)?;
        write!(
            f,
            "Replay it with KASE_REPLAY='{}' or `Builder::replay(\"{}\")`.",
            self.schedule, self.schedule
        )
    }
}

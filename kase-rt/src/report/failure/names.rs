//! How threads, objects and operations are named in a report.

use std::collections::HashMap;

use crate::exec::action::woke;
use crate::exec::{Action, Call, Event, ObjectIdx, ObjectKind, OpKind, ThreadIdx};

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
        action
            .object
            .map(|o| self.object_name(o))
            .unwrap_or_default()
    }

    /// An object's name in a report (`atomic#3`).
    pub(crate) fn object_name(&self, o: ObjectIdx) -> String {
        match self.objects.get(o.0 as usize) {
            Some(kind) => kind.label(o),
            None => format!("object#{}", o.0),
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
            (OpKind::CondvarWake | OpKind::CondvarWakeOrTimeout, Some(how)) => {
                let how = match how {
                    woke::NOTIFIED => "notified",
                    woke::TIMED_OUT => "timed out",
                    _ => "spurious wakeup",
                };
                format!("wake {object} -> {how}")
            }
            // Peeking's bookkeeping (no row of its own in an interleaving,
            // but a divergence may name it).
            (OpKind::Upgrade | OpKind::ReadUpgrade, _) => {
                format!("{} ({object} held)", action.kind.name())
            }
            _ if object.is_empty() => action.kind.name().to_owned(),
            _ => format!("{} {object}", action.kind.name()),
        }
    }
}

impl Names<'_> {
    /// A call of a shim (`exec/call.rs`) as the user made it: `recv_timeout
    /// channel#2 -> timed out`. Its object is named by the first object the
    /// call touched (`fallback` if it touched none yet).
    pub(crate) fn call(&self, call: &Call, fallback: Option<ObjectIdx>) -> String {
        let mut s = format!("{} {}", call.name, call.noun);
        if let Some(o) = call.object.or(fallback) {
            s.push_str(&format!("#{}", o.0));
        }
        if let Some(outcome) = call.outcome {
            s.push_str(" -> ");
            s.push_str(outcome);
        }
        s
    }
}

pub(crate) fn location(l: &std::panic::Location<'_>) -> String {
    format!("{}:{}:{}", l.file(), l.line(), l.column())
}

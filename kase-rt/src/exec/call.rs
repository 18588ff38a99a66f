//! Calls: a user-level operation that a shim builds from several visible
//! operations on objects of its own (a channel's `recv_timeout` is a lock,
//! a wait, a wake and an unlock of the channel's internal mutex and
//! condvar). The execution tags the events of a call with it, so reports
//! show them as one step at the user's line, named as the user called it.
//! Nothing else looks at it: exploration and schedules are unchanged.

use std::panic::Location;

use super::{in_model, with, ObjectIdx};

/// The user-level operation an event is part of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Call {
    /// What the user called: `recv_timeout`.
    pub name: &'static str,
    /// What it is called on: `channel`.
    pub noun: &'static str,
    /// Where the user called it.
    pub location: &'static Location<'static>,
    /// The thread's event count when the call began: tells two calls of one
    /// thread apart.
    pub id: u32,
    /// The first object the call touched, which names what it is called on
    /// (for a channel, its internal mutex: every operation locks it first).
    pub object: Option<ObjectIdx>,
    /// How it ended, once the shim said so (`timed out`).
    pub outcome: Option<&'static str>,
}

/// While alive, the current thread's visible operations are part of one
/// call; dropping it ends the call. Inert outside a model and inside
/// another call (the outer call is what the user made). Never hold one
/// while user code runs (a closure, a `Drop` of user data).
#[must_use]
pub(crate) struct CallGuard {
    id: Option<u32>,
}

/// Begins a call named `name` on a `noun`, at the caller's location.
#[track_caller]
pub(crate) fn call(name: &'static str, noun: &'static str) -> CallGuard {
    call_at(name, noun, Location::caller())
}

/// Begins a call at `location` (for a `Drop`, which cannot see its caller).
pub(crate) fn call_at(
    name: &'static str,
    noun: &'static str,
    location: &'static Location<'static>,
) -> CallGuard {
    if !in_model() {
        return CallGuard { id: None };
    }
    let id = with(|e| {
        let thread = e.thread_mut(e.current());
        if thread.call.is_some() {
            return None;
        }
        let id = thread.events;
        thread.call = Some(Call {
            name,
            noun,
            location,
            id,
            object: None,
            outcome: None,
        });
        Some(id)
    });
    CallGuard { id }
}

impl CallGuard {
    /// Records how the call ended (shown as `-> outcome`).
    pub(crate) fn outcome(&self, outcome: &'static str) {
        let Some(id) = self.id else { return };
        with(|e| {
            let t = e.current();
            if let Some(call) = e.thread_mut(t).call.as_mut() {
                call.outcome = Some(outcome);
            }
            // Its last event so far carries the outcome to the report.
            if let Some(event) = e.events.iter_mut().rev().find(|ev| ev.action.thread == t) {
                if let Some(call) = event.call.as_mut().filter(|c| c.id == id) {
                    call.outcome = Some(outcome);
                }
            }
        });
    }
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        if self.id.is_some() && in_model() {
            with(|e| e.thread_mut(e.current()).call = None);
        }
    }
}

/// Runs `f`, user code called from inside a call (a `Once`'s initialiser),
/// outside it: its operations are the user's own steps. The call goes on
/// afterwards (its later steps are shown as continued), also if `f` unwinds.
pub(crate) fn user_code<R>(f: impl FnOnce() -> R) -> R {
    struct Resume(Option<Call>);
    impl Drop for Resume {
        fn drop(&mut self) {
            if self.0.is_some() {
                let call = self.0;
                with(|e| e.thread_mut(e.current()).call = call);
            }
        }
    }
    let suspended = if in_model() {
        with(|e| e.thread_mut(e.current()).call.take())
    } else {
        None
    };
    let _resume = Resume(suspended);
    f()
}

//! A park token of its own, not a thread's: what kase-loom's `Notify` is
//! made of. `give` makes the token available (like `Thread::unpark`),
//! `take` waits for it and consumes it (like `thread::park`), or, where
//! the caller and the model allow a spurious wakeup, returns at once either
//! way, both outcomes explored (like `park` under
//! `Builder::spurious_wakeups(true)`).
//!
//! Outside a model: a `parking_lot` mutex over the token and a condvar.

use std::fmt;
use std::panic::Location;

use crate::exec::object::{ObjectDetail, ObjectHandle};
use crate::exec::{self, ObjectIdx, OpKind};

/// A token one thread gives and another takes; see the module doc.
#[doc(hidden)]
pub struct Token {
    handle: ObjectHandle,
    real: parking_lot::Mutex<bool>,
    given: parking_lot::Condvar,
}

impl Token {
    /// A token not yet given.
    #[must_use]
    pub const fn new() -> Self {
        Token {
            handle: ObjectHandle::new(),
            real: parking_lot::Mutex::new(false),
            given: parking_lot::Condvar::new(),
        }
    }

    fn model_object(&self) -> ObjectIdx {
        exec::with(|e| e.object(&self.handle, || ObjectDetail::Park, || {}))
    }

    /// Makes the token available; a waiting `take` returns.
    #[track_caller]
    pub fn give(&self) {
        if !exec::in_model() {
            *self.real.lock() = true;
            self.given.notify_all();
            return;
        }
        let object = self.model_object();
        exec::visible(Some(object), OpKind::Unpark, Location::caller(), |_, _| {
            ((), None)
        });
    }

    /// Consumes the token, waiting for it; with `may_wake_spuriously`, in
    /// a model built with `spurious_wakeups(true)`, it may also return at
    /// once without it (outside a model, `take` always waits). Returns
    /// whether it took the token.
    #[track_caller]
    pub fn take(&self, may_wake_spuriously: bool) -> bool {
        if !exec::in_model() {
            let mut token = self.real.lock();
            while !*token {
                self.given.wait(&mut token);
            }
            *token = false;
            return true;
        }
        let object = self.model_object();
        let spurious = may_wake_spuriously && exec::with(|e| e.spurious_wakeups());
        let kind = if spurious {
            OpKind::ParkTimeout
        } else {
            OpKind::Park
        };
        exec::visible(Some(object), kind, Location::caller(), |e, _| {
            let took = e.object_mut(object).gate_token();
            (took, Some(u64::from(took)))
        })
    }
}

impl Default for Token {
    fn default() -> Self {
        Token::new()
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Token").finish_non_exhaustive()
    }
}

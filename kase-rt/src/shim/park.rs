//! `thread::park`, `park_timeout` and `Thread::unpark`.
//!
//! Each model thread has a park token object: `unpark` makes the token
//! available (a write), `park` waits for it and consumes it, `park_timeout`
//! consumes it if present and never waits — returning early is exactly what
//! a timeout looks like when time does not pass. As in std, a token given
//! before `park` makes the next `park` return at once. With
//! `Builder::spurious_wakeups(true)`, `park` may also return without a token.

use std::panic::Location;
use std::time::Duration;

use crate::exec::{self, OpKind};

use super::thread::Thread;

/// Blocks the current thread until its token is made available by
/// [`Thread::unpark`], consuming it; like [`std::thread::park`].
///
/// ```
/// # extern crate kase_rt as kase;
/// use kase::thread;
///
/// kase::model(|| {
///     let main = thread::current();
///     let t = thread::spawn(move || main.unpark());
///     thread::park(); // returns once the token is there
///     t.join().unwrap();
/// });
/// ```
#[track_caller]
pub fn park() {
    if !exec::in_model() {
        return std::thread::park();
    }
    let spurious = exec::with(|e| e.spurious_wakeups());
    park_model(if spurious {
        OpKind::ParkTimeout
    } else {
        OpKind::Park
    });
}

/// Like [`park`] but gives up after `dur`; in a model it either consumes a
/// token or returns as if the time ran out (both are explored).
#[track_caller]
pub fn park_timeout(dur: Duration) {
    if !exec::in_model() {
        return std::thread::park_timeout(dur);
    }
    park_model(OpKind::ParkTimeout);
}

/// Like [`park_timeout`] with a timeout in milliseconds.
#[deprecated(since = "1.6.0", note = "replaced by `std::thread::park_timeout`")]
#[track_caller]
pub fn park_timeout_ms(ms: u32) {
    park_timeout(Duration::from_millis(u64::from(ms)));
}

#[track_caller]
fn park_model(kind: OpKind) {
    let object = exec::with(|e| {
        let me = e.current();
        e.park_object(me)
    });
    exec::visible(Some(object), kind, Location::caller(), |_, _| ((), None));
}

impl Thread {
    /// Makes this thread's park token available: its next (or current)
    /// [`park`] returns.
    #[track_caller]
    pub fn unpark(&self) {
        match (self.std_thread(), self.model_idx()) {
            (Some(t), _) => t.unpark(),
            (None, Some(idx)) if exec::in_model() => {
                let object = exec::with(|e| e.park_object(idx));
                exec::visible(Some(object), OpKind::Unpark, Location::caller(), |_, _| {
                    ((), None)
                });
            }
            (None, _) => {
                // A model thread's handle used after its execution ended:
                // nothing is parked any more.
            }
        }
    }
}

//! `future::block_on`, like loom's: runs a future to completion on the
//! current thread.
//!
//! The future is polled on the calling thread with a waker that unparks it;
//! while it is pending the thread parks. Both go through kase's park shims,
//! so in a model a wake-up is a visible operation (an `unpark`) and a
//! future nobody wakes leaves its thread parked for good: a deadlock.
//! Outside a model the same code parks the OS thread, as a minimal std
//! executor does.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use super::park::park;
use super::thread::{current, Thread};

/// Wakes the thread blocked in [`block_on`] by unparking it.
struct Unparker(Thread);

impl Wake for Unparker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

/// Polls `f` on the current thread until it is ready, parking the thread
/// while it is pending; returns its output. Like loom's
/// `loom::future::block_on`.
///
/// The waker unparks this thread, so in a model each wake-up is a visible
/// operation, and a future that is never woken is reported as a
/// [`Deadlock`](crate::FailureKind::Deadlock) (a lost wake-up). Outside a
/// model it parks the OS thread.
///
/// ```
/// # extern crate kase_rt as kase;
/// kase::model(|| {
///     assert_eq!(kase::future::block_on(async { 1 + 1 }), 2);
/// });
/// ```
#[track_caller]
pub fn block_on<F: Future>(f: F) -> F::Output {
    let mut f = pin!(f);
    let waker = Waker::from(Arc::new(Unparker(current())));
    let mut cx = Context::from_waker(&waker);
    loop {
        if let Poll::Ready(output) = f.as_mut().poll(&mut cx) {
            return output;
        }
        // A wake-up before this returns at once (the token is kept), and a
        // spurious return just polls again.
        park();
    }
}

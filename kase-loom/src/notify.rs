//! `loom::sync::Notify`: one waiter parks until another thread notifies.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use kase_rt::__private::Token;

/// loom's park / unpark pattern on an object of its own: [`notify`]
/// leaves a notification that the next [`wait`] consumes, with
/// release / acquire synchronisation between the two. As in loom, only one
/// thread may wait at a time, and `wait` may return once per execution
/// without a notification (a spurious wakeup): both are explored, so the
/// caller must check its condition in a loop.
///
/// [`notify`]: Notify::notify
/// [`wait`]: Notify::wait
///
/// ```
/// use kase_loom as loom;
/// use loom::sync::atomic::{AtomicBool, Ordering::{Acquire, Release}};
/// use loom::sync::{Arc, Notify};
/// use loom::thread;
///
/// loom::model(|| {
///     let ready = Arc::new((AtomicBool::new(false), Notify::new()));
///     let r = ready.clone();
///     let t = thread::spawn(move || {
///         r.0.store(true, Release);
///         r.1.notify();
///     });
///     while !ready.0.load(Acquire) {
///         ready.1.wait();
///     }
///     t.join().unwrap();
/// });
/// ```
#[derive(Debug, Default)]
pub struct Notify {
    token: Token,
    /// Whether a thread is in `wait` (the single-waiter rule). Kase runs one
    /// model thread at a time, so plain atomics see every change.
    waiting: AtomicBool,
    /// Whether a `wait` already returned without a notification in this
    /// execution: loom allows one per object.
    woke_spuriously: AtomicBool,
}

impl Notify {
    /// A `Notify` with no notification pending.
    #[must_use]
    pub fn new() -> Notify {
        Notify::default()
    }

    /// Leaves a notification: a waiting or the next [`wait`](Self::wait)
    /// returns, acquiring what this thread did before.
    #[track_caller]
    pub fn notify(&self) {
        self.token.give();
    }

    /// Waits for a notification and consumes it; may return once without
    /// one where the model allows spurious wakeups (see the type's doc).
    ///
    /// # Panics
    ///
    /// If another thread is waiting on this `Notify`, as loom does.
    #[track_caller]
    pub fn wait(&self) {
        let other = self.waiting.swap(true, Relaxed);
        assert!(!other, "only a single thread may wait on `Notify`");
        let may_wake_spuriously = !self.woke_spuriously.load(Relaxed);
        if !self.token.take(may_wake_spuriously) {
            self.woke_spuriously.store(true, Relaxed);
        }
        self.waiting.store(false, Relaxed);
    }
}

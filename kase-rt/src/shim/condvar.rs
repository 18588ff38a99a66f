//! `Condvar` with std's signatures.
//!
//! Inside a model a wait is three visible operations: joining the condvar's
//! waiters, releasing the mutex, and waking — which for `wait` is enabled
//! only once a notification chose this thread (`notify_one` picks the
//! longest waiting thread), and for `wait_timeout*` is always enabled: waking
//! before any notification *is* the timeout, so both outcomes are explored.
//! Then the mutex is locked again. With `Builder::spurious_wakeups(true)`
//! plain waits may wake unnotified too. Time does not pass in a model.
//!
//! Outside a model: a `parking_lot` condvar paired with a private mutex that
//! the waiter takes before releasing the user's mutex, so no notification
//! can slip between the release and the sleep.

use std::fmt;
use std::panic::Location;
use std::sync::LockResult;
use std::time::Duration;

use crate::exec::action::woke;
use crate::exec::object::{ObjectDetail, ObjectHandle};
use crate::exec::{self, ObjectIdx, OpKind};

use super::mutex::{Mutex, MutexGuard};

/// A condition variable, a drop-in for [`std::sync::Condvar`].
///
/// ```
/// # extern crate kase_rt as kase;
/// use kase::sync::{Arc, Condvar, Mutex};
/// use kase::thread;
///
/// kase::model(|| {
///     let pair = Arc::new((Mutex::new(false), Condvar::new()));
///     let pair2 = Arc::clone(&pair);
///     let t = thread::spawn(move || {
///         let (ready, cvar) = &*pair2;
///         *ready.lock().unwrap() = true;
///         cvar.notify_one();
///     });
///     let (ready, cvar) = &*pair;
///     let guard = cvar.wait_while(ready.lock().unwrap(), |ready| !*ready).unwrap();
///     assert!(*guard);
///     drop(guard);
///     t.join().unwrap();
/// });
/// ```
pub struct Condvar {
    handle: ObjectHandle,
    real: parking_lot::Condvar,
    /// Taken by a real waiter before it releases the user's mutex and by
    /// notifiers around a notification.
    gate: parking_lot::Mutex<()>,
}

/// Whether a timed wait returned because its time ran out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WaitTimeoutResult(bool);

impl WaitTimeoutResult {
    /// Whether the wait timed out rather than being notified. In a model,
    /// true when the waiter woke before any notification chose it.
    #[must_use]
    pub fn timed_out(&self) -> bool {
        self.0
    }
}

impl Condvar {
    /// Creates a condition variable with no waiters.
    #[must_use]
    pub const fn new() -> Self {
        Condvar {
            handle: ObjectHandle::new(),
            real: parking_lot::Condvar::new(),
            gate: parking_lot::Mutex::new(()),
        }
    }

    fn model_object(&self) -> ObjectIdx {
        exec::with(|e| e.object(&self.handle, || ObjectDetail::Condvar, || {}))
    }

    /// The model part of a wait: returns whether a notification woke it.
    #[track_caller]
    fn model_wait<'a, T: ?Sized>(
        &self,
        guard: MutexGuard<'a, T>,
        timed: bool,
    ) -> (&'a Mutex<T>, bool) {
        let location = Location::caller();
        let object = self.model_object();
        exec::visible(Some(object), OpKind::CondvarWait, location, |_, _| {
            ((), None)
        });
        let lock = guard.release_for_wait();
        let may_wake_unnotified = timed || exec::with(|e| e.spurious_wakeups());
        let kind = if may_wake_unnotified {
            OpKind::CondvarWakeOrTimeout
        } else {
            OpKind::CondvarWake
        };
        let notified = exec::visible(Some(object), kind, location, |e, action| {
            let notified = e.object_mut(object).gate_notified(action.thread);
            // For reports (`report/failure/names.rs`): notified, timed out,
            // or woken spuriously.
            let how = match (notified, timed) {
                (true, _) => woke::NOTIFIED,
                (false, true) => woke::TIMED_OUT,
                (false, false) => woke::SPURIOUSLY,
            };
            (notified, Some(how))
        });
        (lock, notified)
    }

    /// Releases `guard`'s mutex, blocks until notified, and locks it again.
    /// `Err` (with the relocked guard) if the mutex is poisoned.
    #[track_caller]
    pub fn wait<'a, T: ?Sized>(&self, guard: MutexGuard<'a, T>) -> LockResult<MutexGuard<'a, T>> {
        if guard.model_object().is_some() {
            return self.model_wait(guard, false).0.lock();
        }
        let mut gate = self.gate.lock();
        let lock = guard.release_for_wait();
        self.real.wait(&mut gate);
        drop(gate);
        lock.lock()
    }

    /// Waits while `condition` holds: returns once it is false, with the
    /// lock held.
    #[track_caller]
    pub fn wait_while<'a, T, F>(
        &self,
        mut guard: MutexGuard<'a, T>,
        mut condition: F,
    ) -> LockResult<MutexGuard<'a, T>>
    where
        F: FnMut(&mut T) -> bool,
    {
        while condition(&mut *guard) {
            guard = self.wait(guard)?;
        }
        Ok(guard)
    }

    /// Like [`wait`](Self::wait), but gives up after `dur`. In a model both
    /// endings are explored: woken by a notification, or timed out.
    #[track_caller]
    pub fn wait_timeout<'a, T: ?Sized>(
        &self,
        guard: MutexGuard<'a, T>,
        dur: Duration,
    ) -> LockResult<(MutexGuard<'a, T>, WaitTimeoutResult)> {
        let (lock, notified) = if guard.model_object().is_some() {
            self.model_wait(guard, true)
        } else {
            let mut gate = self.gate.lock();
            let lock = guard.release_for_wait();
            let result = self.real.wait_for(&mut gate, dur);
            drop(gate);
            (lock, !result.timed_out())
        };
        let timeout = WaitTimeoutResult(!notified);
        match lock.lock() {
            Ok(guard) => Ok((guard, timeout)),
            Err(poisoned) => Err(std::sync::PoisonError::new((
                poisoned.into_inner(),
                timeout,
            ))),
        }
    }

    /// Like [`wait_timeout`](Self::wait_timeout) with a timeout in
    /// milliseconds; returns whether it timed out.
    #[deprecated(
        since = "1.6.0",
        note = "replaced by `std::sync::Condvar::wait_timeout`"
    )]
    #[track_caller]
    pub fn wait_timeout_ms<'a, T>(
        &self,
        guard: MutexGuard<'a, T>,
        ms: u32,
    ) -> LockResult<(MutexGuard<'a, T>, bool)> {
        match self.wait_timeout(guard, Duration::from_millis(u64::from(ms))) {
            Ok((guard, r)) => Ok((guard, r.timed_out())),
            Err(e) => {
                let (guard, r) = e.into_inner();
                Err(std::sync::PoisonError::new((guard, r.timed_out())))
            }
        }
    }

    /// Waits while `condition` holds, for at most `dur`. Timed out means the
    /// condition still held when the time ran out.
    #[track_caller]
    pub fn wait_timeout_while<'a, T, F>(
        &self,
        mut guard: MutexGuard<'a, T>,
        dur: Duration,
        mut condition: F,
    ) -> LockResult<(MutexGuard<'a, T>, WaitTimeoutResult)>
    where
        F: FnMut(&mut T) -> bool,
    {
        let start = std::time::Instant::now();
        loop {
            if !condition(&mut *guard) {
                return Ok((guard, WaitTimeoutResult(false)));
            }
            // In a model time stands still: the deadline has passed exactly
            // when a wait timed out.
            let left = if guard.model_object().is_some() {
                dur
            } else {
                match dur.checked_sub(start.elapsed()) {
                    Some(left) => left,
                    None => return Ok((guard, WaitTimeoutResult(true))),
                }
            };
            let (next, result) = self.wait_timeout(guard, left)?;
            guard = next;
            if result.timed_out() && guard.model_object().is_some() {
                let still = condition(&mut *guard);
                return Ok((guard, WaitTimeoutResult(still)));
            }
        }
    }

    /// Wakes the thread that has waited longest, if any.
    #[track_caller]
    pub fn notify_one(&self) {
        self.notify(OpKind::NotifyOne);
    }

    /// Wakes every waiting thread.
    #[track_caller]
    pub fn notify_all(&self) {
        self.notify(OpKind::NotifyAll);
    }

    #[track_caller]
    fn notify(&self, kind: OpKind) {
        if exec::in_model() {
            let object = self.model_object();
            exec::visible(Some(object), kind, Location::caller(), |_, _| ((), None));
            return;
        }
        let _gate = self.gate.lock();
        match kind {
            OpKind::NotifyOne => {
                self.real.notify_one();
            }
            _ => {
                self.real.notify_all();
            }
        }
    }
}

impl Default for Condvar {
    fn default() -> Self {
        Condvar::new()
    }
}

impl fmt::Debug for Condvar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Condvar").finish_non_exhaustive()
    }
}

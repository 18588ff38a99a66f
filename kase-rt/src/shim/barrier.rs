//! `Barrier` and `BarrierWaitResult` with std's signatures.
//!
//! Built as std builds it: a count and a generation under a kase [`Mutex`],
//! and a kase [`Condvar`] the waiters sleep on.

use std::fmt;
use std::sync::PoisonError;

use super::condvar::Condvar;
use super::mutex::Mutex;

/// A barrier enables multiple threads to synchronise the beginning of some
/// computation, a drop-in for [`std::sync::Barrier`].
///
/// ```
/// # extern crate kase_rt as kase;
/// use kase::sync::{Arc, Barrier};
/// use kase::thread;
///
/// kase::model(|| {
///     let barrier = Arc::new(Barrier::new(2));
///     let b = barrier.clone();
///     let t = thread::spawn(move || b.wait().is_leader());
///     let leader = barrier.wait().is_leader();
///     assert!(leader ^ t.join().unwrap(), "exactly one leader");
/// });
/// ```
///
/// # How kase models it
///
/// Exactly as std: each `wait` locks a kase `Mutex` and counts itself in;
/// all but the last thread of a generation then wait on a kase `Condvar`
/// (each wait is a few visible operations), and the last one — the leader —
/// starts the next generation and notifies them all. So a barrier that too
/// few threads reach leaves its waiters blocked forever, which kase reports
/// as a deadlock. A `static` barrier restarts with every execution.
pub struct Barrier {
    lock: Mutex<BarrierState>,
    cvar: Condvar,
    num_threads: usize,
}

/// The count of the current generation and its number.
struct BarrierState {
    count: usize,
    generation_id: usize,
}

const INITIAL: BarrierState = BarrierState {
    count: 0,
    generation_id: 0,
};

/// Returned by [`Barrier::wait`] when all threads have met, like
/// [`std::sync::BarrierWaitResult`].
pub struct BarrierWaitResult(bool);

impl Barrier {
    /// Creates a barrier that blocks threads until `n` of them have called
    /// [`wait`](Self::wait). With `n` 0 or 1, `wait` returns at once.
    #[must_use]
    pub const fn new(n: usize) -> Barrier {
        Barrier {
            lock: Mutex::new(INITIAL),
            cvar: Condvar::new(),
            num_threads: n,
        }
    }

    /// Blocks until `n` threads have called `wait`, then wakes them all.
    /// Exactly one of them (the last to arrive) gets a result whose
    /// [`is_leader`](BarrierWaitResult::is_leader) is true. The barrier is
    /// reusable: the next `n` calls form the next generation.
    #[track_caller]
    pub fn wait(&self) -> BarrierWaitResult {
        // Reports show its locks and waits as this one call.
        let call = crate::exec::call("wait", "barrier");
        // A `static` barrier restarts with every execution.
        self.lock.restart_with(|state| *state = INITIAL);
        let mut lock = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
        let local_gen = lock.generation_id;
        lock.count += 1;
        if lock.count < self.num_threads {
            let _guard = self
                .cvar
                .wait_while(lock, |state| local_gen == state.generation_id)
                .unwrap_or_else(PoisonError::into_inner);
            BarrierWaitResult(false)
        } else {
            let waiting = lock.count - 1;
            lock.count = 0;
            lock.generation_id = lock.generation_id.wrapping_add(1);
            if waiting > 0 {
                self.cvar.notify_all();
            }
            call.outcome("leader");
            BarrierWaitResult(true)
        }
    }
}

impl BarrierWaitResult {
    /// Whether this thread is the leader of its generation: exactly one
    /// thread per generation is.
    #[must_use]
    pub fn is_leader(&self) -> bool {
        self.0
    }
}

impl fmt::Debug for Barrier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Barrier").finish_non_exhaustive()
    }
}

impl fmt::Debug for BarrierWaitResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BarrierWaitResult")
            .field("is_leader", &self.0)
            .finish()
    }
}

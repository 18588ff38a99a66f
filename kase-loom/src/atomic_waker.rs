//! `loom::future::AtomicWaker`: a waker slot that a task registers in and
//! a notifier takes from, racing as `futures`' and tokio's `AtomicWaker`
//! race.

use std::sync::PoisonError;
use std::task::Waker;

use kase_rt::sync::{Mutex, TryLockError};

/// loom's model of `AtomicWaker`: [`register`](Self::register) stores the
/// task's waker unless a [`wake`](Self::wake) is taking the slot at that
/// moment, in which case it wakes the task at once (so it polls again);
/// `wake` takes the registered waker and wakes it. The slot is a kase
/// mutex, so every order of a register and a wake is explored.
///
/// ```
/// use kase_loom as loom;
/// use loom::future::AtomicWaker;
/// use std::sync::Arc;
/// use std::task::{Wake, Waker};
///
/// struct Noop;
/// impl Wake for Noop {
///     fn wake(self: Arc<Self>) {}
/// }
///
/// loom::model(|| {
///     let slot = AtomicWaker::new();
///     slot.register_by_ref(&Waker::from(Arc::new(Noop)));
///     assert!(slot.take_waker().is_some());
///     slot.wake(); // nothing registered any more
/// });
/// ```
#[derive(Debug, Default)]
pub struct AtomicWaker {
    waker: Mutex<Option<Waker>>,
}

impl AtomicWaker {
    /// An empty slot.
    #[must_use]
    pub fn new() -> AtomicWaker {
        AtomicWaker::default()
    }

    /// Registers `waker` to be woken by the next [`wake`](Self::wake); if a
    /// `wake` holds the slot right now, wakes `waker` instead and yields.
    #[track_caller]
    pub fn register(&self, waker: Waker) {
        match self.waker.try_lock() {
            Ok(mut slot) => *slot = Some(waker),
            Err(TryLockError::Poisoned(poisoned)) => *poisoned.into_inner() = Some(waker),
            Err(TryLockError::WouldBlock) => {
                waker.wake();
                kase_rt::thread::yield_now();
            }
        }
    }

    /// [`register`](Self::register) with a clone of `waker`.
    #[track_caller]
    pub fn register_by_ref(&self, waker: &Waker) {
        self.register(waker.clone());
    }

    /// Wakes the registered waker, if any, and empties the slot.
    #[track_caller]
    pub fn wake(&self) {
        if let Some(waker) = self.take_waker() {
            waker.wake();
        }
    }

    /// Empties the slot, handing back the waker that was registered.
    #[track_caller]
    pub fn take_waker(&self) -> Option<Waker> {
        self.waker
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }
}

//! Poisoning, shared by `Mutex` and `RwLock`: outside a model a flag beside
//! the lock, as std; inside, the flag lives in the execution (so it restarts
//! with every execution) and reading or clearing it is a visible operation.

use std::panic::Location;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{LockResult, PoisonError};

use crate::exec::{self, ObjectIdx, OpKind};

/// The poison flag of a real (not modelled) lock.
#[derive(Debug)]
pub(crate) struct PoisonFlag(AtomicBool);

impl PoisonFlag {
    pub(crate) const fn new() -> Self {
        PoisonFlag(AtomicBool::new(false))
    }

    /// The real lock's flag.
    pub(crate) fn real(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// Poisons the real lock.
    pub(crate) fn set_real(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// `is_poisoned`: in a model a visible read of the lock `object`.
    #[track_caller]
    pub(crate) fn is_poisoned(&self, object: impl FnOnce() -> ObjectIdx) -> bool {
        if !exec::in_model() {
            return self.real();
        }
        let object = object();
        exec::visible(
            Some(object),
            OpKind::IsPoisoned,
            Location::caller(),
            |e, _| {
                let p = e.object_mut(object).lock().poisoned;
                (p, Some(u64::from(p)))
            },
        )
    }

    /// `clear_poison`: in a model a visible write of the lock `object`.
    #[track_caller]
    pub(crate) fn clear(&self, object: impl FnOnce() -> ObjectIdx) {
        if !exec::in_model() {
            return self.0.store(false, Ordering::Relaxed);
        }
        let object = object();
        exec::visible(
            Some(object),
            OpKind::ClearPoison,
            Location::caller(),
            |e, _| {
                e.object_mut(object).lock().poisoned = false;
                ((), None)
            },
        );
    }

    /// Releases a lock whose guard poisons it on a panic (a mutex's or a
    /// write lock's): as std, only a panic that started while the lock was
    /// held (`panicking`: whether the thread was already panicking when it
    /// locked) poisons it, and not kase's unwinding of a thread an early
    /// stop left unfinished. Outside a model (`object` is `None`),
    /// `unlock_real` releases the real lock; inside, the release is the
    /// visible operation `kind` at `location`.
    pub(crate) fn release(
        &self,
        object: Option<ObjectIdx>,
        panicking: bool,
        kind: OpKind,
        location: &'static Location<'static>,
        unlock_real: impl FnOnce(),
    ) {
        match object {
            None => {
                if !panicking && std::thread::panicking() {
                    self.set_real();
                }
                unlock_real();
            }
            Some(object) => exec::visible(Some(object), kind, location, |e, _| {
                // Unwinding a thread the execution stopped early is kase's
                // doing, not a panic of the program: a destructor that
                // locks again must not find the lock poisoned (its
                // `unwrap` would panic during the unwind and abort).
                let poison = !panicking && e.panicking() && !e.tearing_down();
                e.object_mut(object).lock().poisoned |= poison;
                ((), None)
            }),
        }
    }

    /// A try-lock: outside a model `try_real` (true if it took the real
    /// lock), inside the visible operation `kind` on the lock `object` at
    /// the caller's location. Returns the object (`None` outside a model)
    /// and, if the lock was taken, whether it is poisoned.
    #[track_caller]
    pub(crate) fn try_acquire(
        &self,
        try_real: impl FnOnce() -> bool,
        object: impl FnOnce() -> ObjectIdx,
        kind: OpKind,
    ) -> (Option<ObjectIdx>, Option<bool>) {
        if !exec::in_model() {
            return (None, try_real().then(|| self.real()));
        }
        let object = object();
        let acquired = exec::visible(
            Some(object),
            kind,
            Location::caller(),
            // The kind as performed (`TryReadLock` becomes `SharedTryLock`
            // with peeking).
            |e, action| try_outcome(e, object, action.kind),
        );
        (Some(object), acquired)
    }

    /// The flag without a scheduling point, for `&mut self` / `self`
    /// methods (exclusive access: nothing can run concurrently with them).
    pub(crate) fn state(&self, object: impl FnOnce() -> ObjectIdx) -> bool {
        if exec::in_model() {
            let object = object();
            exec::with(|e| e.object_mut(object).lock().poisoned)
        } else {
            self.real()
        }
    }
}

/// Takes the lock `object` in a model: the visible operation `kind` at the
/// caller's location; returns whether the lock is poisoned.
#[track_caller]
pub(crate) fn model_acquire(object: ObjectIdx, kind: OpKind) -> bool {
    exec::visible(Some(object), kind, Location::caller(), |e, _| {
        (e.object_mut(object).lock().poisoned, None)
    })
}

/// A try-lock's result inside the model (the visible operation `kind` on
/// `object`): `Some(poisoned)` if acquired, with the outcome as the
/// operation's value.
fn try_outcome(
    e: &mut exec::Execution,
    object: ObjectIdx,
    kind: OpKind,
) -> (Option<bool>, Option<u64>) {
    let state = e.object_mut(object);
    let acquired = state.try_succeeds(kind).then_some(state.lock().poisoned);
    (acquired, Some(u64::from(acquired.is_some())))
}

/// `Ok(guard)`, or `Err` carrying it if the lock is poisoned.
pub(crate) fn lock_result<G>(guard: G, poisoned: bool) -> LockResult<G> {
    if poisoned {
        Err(PoisonError::new(guard))
    } else {
        Ok(guard)
    }
}

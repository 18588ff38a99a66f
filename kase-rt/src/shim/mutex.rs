//! `Mutex` and `MutexGuard` with std's signatures and poisoning.
//!
//! Outside a model: a `parking_lot` raw mutex plus a poison flag, like std.
//! Inside: lock state and poison live in the execution (so they restart with
//! every execution), and lock / try_lock / unlock are visible operations.

use std::cell::UnsafeCell;
use std::fmt;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::panic::Location;
use std::sync::{LockResult, TryLockError, TryLockResult};

use parking_lot::lock_api::RawMutex as _;

use crate::exec::object::{LockState, ObjectDetail, ObjectHandle};
use crate::exec::{self, ObjectIdx, OpKind};

use super::guard::{self, DataAccess};
use super::poison::{lock_result, model_acquire, PoisonFlag};

/// A mutual exclusion primitive, a drop-in for [`std::sync::Mutex`].
///
/// ```
/// # extern crate kase_rt as kase;
/// use kase::sync::Mutex;
///
/// static COUNT: Mutex<u32> = Mutex::new(0); // `const fn new`, as in std
/// *COUNT.lock().unwrap() += 1;
/// assert!(*COUNT.lock().unwrap() >= 1);
/// ```
pub struct Mutex<T: ?Sized> {
    handle: ObjectHandle,
    raw: parking_lot::RawMutex,
    poisoned: PoisonFlag,
    /// Whether its critical sections may be peeked (`Builder::peeking`):
    /// only a mutex with no data of its own (`Mutex<()>`, a lock over other
    /// state). Any section that uses a `Mutex<T>`'s data is ordered against
    /// every other section of it (a `Cell` inside may change through `&T`),
    /// so peeking such a mutex could only reorder the sections that never
    /// use its data, and its sections' locks, reads of the mutex, would let
    /// the explorer propose orders no run completes (POR-DESIGN.md, "The
    /// guarded data"). False too for the internal mutexes of shims that
    /// read their state outside the lock, like std's (`Once`).
    peekable: bool,
    /// For a `static` rewritten by kase's attributes: puts the data back
    /// into its initial state at the first use in each execution
    /// (`static_restart.rs`).
    restart: Option<fn(&Mutex<T>)>,
    data: UnsafeCell<T>,
}

// SAFETY: as for std's Mutex: the lock hands out `&mut T` to one thread at a
// time (in a model, to one model thread at a time), so `T: Send` suffices.
unsafe impl<T: ?Sized + Send> Send for Mutex<T> {}
// SAFETY: as above.
unsafe impl<T: ?Sized + Send> Sync for Mutex<T> {}

// As std: poisoning makes the lock safe to observe after a panic.
impl<T: ?Sized> std::panic::UnwindSafe for Mutex<T> {}
impl<T: ?Sized> std::panic::RefUnwindSafe for Mutex<T> {}

/// RAII guard of a locked [`Mutex`]; unlocks when dropped.
#[must_use = "if unused the Mutex will immediately unlock"]
pub struct MutexGuard<'a, T: ?Sized> {
    lock: &'a Mutex<T>,
    /// The mutex's object in the model execution, or `None` for a real lock.
    object: Option<ObjectIdx>,
    /// Whether the thread was already panicking when it locked: as in std,
    /// only a panic that starts while the lock is held poisons it.
    panicking: bool,
    /// Where the lock was taken: reports show the unlock of a dropped guard
    /// there, since `Drop` cannot see its caller's location.
    locked_at: &'static Location<'static>,
    _not_send: PhantomData<*const ()>,
}

// SAFETY: as for std's MutexGuard: sharing the guard only shares `&T`.
unsafe impl<T: ?Sized + Sync> Sync for MutexGuard<'_, T> {}

impl<T> Mutex<T> {
    /// Creates an unlocked mutex.
    pub const fn new(t: T) -> Self {
        Mutex {
            handle: ObjectHandle::new(),
            raw: parking_lot::RawMutex::INIT,
            poisoned: PoisonFlag::new(),
            peekable: std::mem::size_of::<T>() == 0,
            restart: None,
            data: UnsafeCell::new(t),
        }
    }

    /// Written by `#[kase::test]` / `#[kase::instrument]` after the
    /// initializer of a `static` mutex: `restart` puts the data back into its
    /// initial state at the mutex's first use in each execution. Not public
    /// API.
    #[doc(hidden)]
    pub const fn __kase_static(mut self, restart: fn(&Mutex<T>)) -> Self {
        self.restart = Some(restart);
        self
    }

    /// Replaces the data with `fresh`'s, if kase is restarting this mutex at
    /// its first use in an execution; otherwise does nothing. Not public API.
    #[doc(hidden)]
    pub fn __kase_reset(&self, fresh: Mutex<T>) {
        let fresh = fresh.data.into_inner();
        // SAFETY: `data` is what this mutex guards, `raw` its real lock.
        unsafe {
            super::static_restart::swap_in(
                self,
                &self.data,
                fresh,
                || self.raw.try_lock(),
                || {
                    // SAFETY: taken by the `try_lock` just before.
                    self.raw.unlock()
                },
            )
        }
    }

    /// A mutex whose critical sections are never peeked, for shims whose
    /// state is also read outside the lock (peeking would be turned off for
    /// the whole model at the first such read).
    pub(crate) const fn unpeeked(t: T) -> Mutex<T> {
        let mut mutex = Mutex::new(t);
        mutex.peekable = false;
        mutex
    }

    /// Consumes the mutex, returning the data; `Err` if it is poisoned.
    pub fn into_inner(self) -> LockResult<T>
    where
        T: Sized,
    {
        let poisoned = self.poison_state();
        let data = self.data.into_inner();
        lock_result(data, poisoned)
    }
}

impl<T: ?Sized> Mutex<T> {
    fn model_object(&self) -> ObjectIdx {
        exec::object_then(
            &self.handle,
            || self.detail(),
            || super::static_restart::run(self, self.restart),
        )
    }

    /// What the execution keeps for it.
    fn detail(&self) -> ObjectDetail {
        ObjectDetail::Mutex(LockState {
            peekable: self.peekable,
            ..LockState::default()
        })
    }

    #[track_caller]
    fn guard(&self, object: Option<ObjectIdx>, poisoned: bool) -> LockResult<MutexGuard<'_, T>> {
        let panicking = exec::panicking();
        let guard = MutexGuard {
            lock: self,
            object,
            panicking,
            locked_at: Location::caller(),
            _not_send: PhantomData,
        };
        lock_result(guard, poisoned)
    }

    /// Acquires the mutex, blocking the current thread until it is able to do
    /// so. `Err` (still holding the lock) if a thread panicked while holding it.
    ///
    /// Locking a mutex the current thread already holds never returns: in a
    /// model that is reported as a deadlock.
    #[track_caller]
    pub fn lock(&self) -> LockResult<MutexGuard<'_, T>> {
        if !exec::in_model() {
            self.raw.lock();
            return self.guard(None, self.poisoned.real());
        }
        let object = self.model_object();
        let poisoned = model_acquire(object, OpKind::Lock);
        self.guard(Some(object), poisoned)
    }

    /// Attempts to acquire the mutex without blocking.
    #[track_caller]
    pub fn try_lock(&self) -> TryLockResult<MutexGuard<'_, T>> {
        let (object, acquired) = self.poisoned.try_acquire(
            || self.raw.try_lock(),
            || self.model_object(),
            OpKind::TryLock,
        );
        match acquired {
            None => Err(TryLockError::WouldBlock),
            Some(poisoned) => self.guard(object, poisoned).map_err(TryLockError::Poisoned),
        }
    }

    /// Whether a thread panicked while holding the lock.
    #[track_caller]
    pub fn is_poisoned(&self) -> bool {
        self.poisoned.is_poisoned(|| self.model_object())
    }

    /// Clears the poisoned state.
    #[track_caller]
    pub fn clear_poison(&self) {
        self.poisoned.clear(|| self.model_object());
    }

    /// Mutable access to the data; no locking needed since `&mut self` is
    /// exclusive. `Err` if the mutex is poisoned.
    pub fn get_mut(&mut self) -> LockResult<&mut T> {
        let poisoned = self.poison_state();
        let data = self.data.get_mut();
        lock_result(data, poisoned)
    }

    /// Poison state without a scheduling point, for `&mut self`/`self` methods
    /// (exclusive access: nothing can run concurrently with them).
    fn poison_state(&self) -> bool {
        self.poisoned.state(|| self.model_object())
    }
}

impl<'a, T: ?Sized> MutexGuard<'a, T> {
    /// Releases the lock on behalf of `Condvar::wait` (which relocks it
    /// later through [`Mutex::lock`]); returns the mutex.
    #[track_caller]
    pub(crate) fn release_for_wait(self) -> &'a Mutex<T> {
        let guard = std::mem::ManuallyDrop::new(self);
        guard.release(Location::caller());
        guard.lock
    }

    /// The mutex's object in the model execution (`None` for a real lock).
    pub(crate) fn model_object(&self) -> Option<ObjectIdx> {
        self.object
    }

    fn release(&self, location: &'static Location<'static>) {
        let lock = self.lock;
        lock.poisoned.release(
            self.object,
            self.panicking,
            OpKind::Unlock,
            location,
            || {
                // SAFETY: this guard holds the real lock (it was created by a
                // successful `lock`/`try_lock` outside a model), and releases
                // it once: from `drop` or from `release_for_wait`, which
                // forgets the guard.
                unsafe { lock.raw.unlock() }
            },
        );
    }
}

impl<T: ?Sized> Drop for MutexGuard<'_, T> {
    #[track_caller]
    fn drop(&mut self) {
        self.release(self.locked_at);
    }
}

/// With critical-section peeking, `Deref` and `DerefMut` both make the
/// section a writer of the guarded data: a `Mutex<T>` is shared with only
/// `T: Send`, so `&T` may change a `Cell` or a `RefCell` inside, which kase
/// cannot see. A section that never touches the data commutes with the
/// others (an `RwLock`, whose data must be `Sync`, lets readers commute).
impl<T: ?Sized> Deref for MutexGuard<'_, T> {
    type Target = T;

    #[track_caller]
    fn deref(&self) -> &T {
        // SAFETY: the guard holds the lock, so no one else accesses the data.
        unsafe { &*guard::data(self.object, DataAccess::MayWrite, &self.lock.data) }
    }
}

impl<T: ?Sized> DerefMut for MutexGuard<'_, T> {
    #[track_caller]
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the guard holds the lock, so no one else accesses the data.
        unsafe { &mut *guard::data(self.object, DataAccess::Write, &self.lock.data) }
    }
}

guard::guard_fmt!(MutexGuard);

impl<T: ?Sized + fmt::Debug> fmt::Debug for Mutex<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        guard::debug_lock(f, "Mutex", self.try_lock(), || self.is_poisoned())
    }
}

guard::lock_from!(Mutex);

/// For shims composed on a `Mutex` (`Barrier`): restarting guarded data.
impl<T> Mutex<T> {
    /// In a model, registers the mutex in the current execution; on its first
    /// use in each execution, `reset` puts the guarded data back into its
    /// initial state, so that a `static` composed on this mutex restarts with
    /// every execution as the mutex itself does. Outside a model: nothing.
    pub(crate) fn restart_with(&self, reset: impl FnOnce(&mut T)) {
        if !exec::in_model() {
            return;
        }
        exec::with(|e| {
            e.object(
                &self.handle,
                || self.detail(),
                || {
                    if !self.raw.is_locked() {
                        // SAFETY: this is the mutex's first use in this
                        // execution, so no model guard of this execution
                        // exists, and the real lock is free: nothing else
                        // can be accessing the data.
                        reset(unsafe { &mut *self.data.get() });
                    }
                },
            )
        });
    }
}

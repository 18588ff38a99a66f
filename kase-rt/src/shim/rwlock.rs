//! `RwLock` and its guards with std's signatures and poisoning.
//!
//! Outside a model: a `parking_lot` raw reader–writer lock plus a poison flag.
//! Inside: taking and releasing a read lock are *reads* of the lock object,
//! so readers commute (three readers are one trace); write locks are writes.

use std::cell::UnsafeCell;
use std::fmt;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::panic::Location;
use std::sync::{LockResult, TryLockError, TryLockResult};

use parking_lot::lock_api::{RawRwLock as _, RawRwLockDowngrade as _};

use crate::exec::object::{ObjectDetail, ObjectHandle};
use crate::exec::{self, ObjectIdx, OpKind};

use super::guard::{self, DataAccess};
use super::poison::{lock_result, model_acquire, PoisonFlag};

/// A reader–writer lock, a drop-in for [`std::sync::RwLock`].
///
/// ```
/// # extern crate kase_rt as kase;
/// use kase::sync::RwLock;
///
/// let lock = RwLock::new(5);
/// {
///     let r1 = lock.read().unwrap();
///     let r2 = lock.read().unwrap(); // many readers at once
///     assert_eq!(*r1 + *r2, 10);
/// }
/// *lock.write().unwrap() += 1;
/// assert_eq!(*lock.read().unwrap(), 6);
/// ```
pub struct RwLock<T: ?Sized> {
    handle: ObjectHandle,
    raw: parking_lot::RawRwLock,
    poisoned: PoisonFlag,
    /// For a `static` rewritten by kase's attributes: puts the data back
    /// into its initial state at the first use in each execution
    /// (`static_restart.rs`).
    restart: Option<fn(&RwLock<T>)>,
    data: UnsafeCell<T>,
}

// SAFETY: as for std's RwLock: writers get `&mut T` exclusively (needs
// `T: Send`), readers share `&T` across threads (needs `T: Sync`).
unsafe impl<T: ?Sized + Send> Send for RwLock<T> {}
// SAFETY: as above.
unsafe impl<T: ?Sized + Send + Sync> Sync for RwLock<T> {}

impl<T: ?Sized> std::panic::UnwindSafe for RwLock<T> {}
impl<T: ?Sized> std::panic::RefUnwindSafe for RwLock<T> {}

/// RAII guard of shared read access to an [`RwLock`].
#[must_use = "if unused the RwLock will immediately unlock"]
pub struct RwLockReadGuard<'a, T: ?Sized> {
    lock: &'a RwLock<T>,
    object: Option<ObjectIdx>,
    /// Where the lock was taken (reports show a dropped guard's unlock
    /// there: `Drop` cannot see its caller's location).
    locked_at: &'static Location<'static>,
    _not_send: PhantomData<*const ()>,
}

/// RAII guard of exclusive write access to an [`RwLock`].
#[must_use = "if unused the RwLock will immediately unlock"]
pub struct RwLockWriteGuard<'a, T: ?Sized> {
    lock: &'a RwLock<T>,
    object: Option<ObjectIdx>,
    /// Where the lock was taken (see [`RwLockReadGuard`]).
    locked_at: &'static Location<'static>,
    /// Whether the thread was already panicking when it locked (std's rule:
    /// only a panic that starts while the lock is held poisons it).
    panicking: bool,
    _not_send: PhantomData<*const ()>,
}

// SAFETY: as for std's guards: sharing a guard only shares `&T`.
unsafe impl<T: ?Sized + Sync> Sync for RwLockReadGuard<'_, T> {}
// SAFETY: as above.
unsafe impl<T: ?Sized + Sync> Sync for RwLockWriteGuard<'_, T> {}

impl<T> RwLock<T> {
    /// Creates an unlocked `RwLock`.
    pub const fn new(t: T) -> Self {
        RwLock {
            handle: ObjectHandle::new(),
            raw: parking_lot::RawRwLock::INIT,
            poisoned: PoisonFlag::new(),
            restart: None,
            data: UnsafeCell::new(t),
        }
    }

    /// Written by `#[kase::test]` / `#[kase::instrument]` after the
    /// initializer of a `static` lock: `restart` puts the data back into its
    /// initial state at the lock's first use in each execution. Not public
    /// API.
    #[doc(hidden)]
    pub const fn __kase_static(mut self, restart: fn(&RwLock<T>)) -> Self {
        self.restart = Some(restart);
        self
    }

    /// Replaces the data with `fresh`'s, if kase is restarting this lock at
    /// its first use in an execution; otherwise does nothing. Not public API.
    #[doc(hidden)]
    pub fn __kase_reset(&self, fresh: RwLock<T>) {
        let fresh = fresh.data.into_inner();
        // SAFETY: `data` is what this lock guards, `raw` its real lock.
        unsafe {
            super::static_restart::swap_in(
                self,
                &self.data,
                fresh,
                || self.raw.try_lock_exclusive(),
                || {
                    // SAFETY: taken exclusively by the `try_lock_exclusive`
                    // just before.
                    self.raw.unlock_exclusive()
                },
            )
        }
    }

    /// Consumes the lock, returning the data; `Err` if it is poisoned.
    pub fn into_inner(self) -> LockResult<T>
    where
        T: Sized,
    {
        let poisoned = self.poison_state();
        let data = self.data.into_inner();
        lock_result(data, poisoned)
    }
}

impl<T: ?Sized> RwLock<T> {
    fn model_object(&self) -> ObjectIdx {
        exec::object_then(
            &self.handle,
            || ObjectDetail::RwLock(Default::default()),
            || super::static_restart::run(self, self.restart),
        )
    }

    #[track_caller]
    fn read_guard(&self, object: Option<ObjectIdx>) -> RwLockReadGuard<'_, T> {
        RwLockReadGuard {
            lock: self,
            object,
            locked_at: Location::caller(),
            _not_send: PhantomData,
        }
    }

    #[track_caller]
    fn write_guard(&self, object: Option<ObjectIdx>) -> RwLockWriteGuard<'_, T> {
        RwLockWriteGuard {
            lock: self,
            object,
            locked_at: Location::caller(),
            panicking: exec::panicking(),
            _not_send: PhantomData,
        }
    }

    /// Locks with shared read access, blocking while a writer holds it.
    /// `Err` (still holding the read lock) if the lock is poisoned.
    #[track_caller]
    pub fn read(&self) -> LockResult<RwLockReadGuard<'_, T>> {
        if !exec::in_model() {
            self.raw.lock_shared();
            return lock_result(self.read_guard(None), self.poisoned.real());
        }
        let object = self.model_object();
        let poisoned = model_acquire(object, OpKind::ReadLock);
        lock_result(self.read_guard(Some(object)), poisoned)
    }

    /// Attempts to take a read lock without blocking.
    #[track_caller]
    pub fn try_read(&self) -> TryLockResult<RwLockReadGuard<'_, T>> {
        let (object, acquired) = self.poisoned.try_acquire(
            || self.raw.try_lock_shared(),
            || self.model_object(),
            OpKind::TryReadLock,
        );
        match acquired {
            None => Err(TryLockError::WouldBlock),
            Some(poisoned) => {
                lock_result(self.read_guard(object), poisoned).map_err(TryLockError::Poisoned)
            }
        }
    }

    /// Locks with exclusive write access, blocking while anyone holds it.
    /// `Err` (still holding the lock) if the lock is poisoned.
    ///
    /// Taking a write lock while the current thread holds the lock never
    /// returns: in a model that is reported as a deadlock.
    #[track_caller]
    pub fn write(&self) -> LockResult<RwLockWriteGuard<'_, T>> {
        if !exec::in_model() {
            self.raw.lock_exclusive();
            return lock_result(self.write_guard(None), self.poisoned.real());
        }
        let object = self.model_object();
        let poisoned = model_acquire(object, OpKind::Lock);
        lock_result(self.write_guard(Some(object)), poisoned)
    }

    /// Attempts to take the write lock without blocking.
    #[track_caller]
    pub fn try_write(&self) -> TryLockResult<RwLockWriteGuard<'_, T>> {
        let (object, acquired) = self.poisoned.try_acquire(
            || self.raw.try_lock_exclusive(),
            || self.model_object(),
            OpKind::TryLock,
        );
        match acquired {
            None => Err(TryLockError::WouldBlock),
            Some(poisoned) => {
                lock_result(self.write_guard(object), poisoned).map_err(TryLockError::Poisoned)
            }
        }
    }

    /// Whether a writer panicked while holding the lock.
    #[track_caller]
    pub fn is_poisoned(&self) -> bool {
        self.poisoned.is_poisoned(|| self.model_object())
    }

    /// Clears the poisoned state.
    #[track_caller]
    pub fn clear_poison(&self) {
        self.poisoned.clear(|| self.model_object());
    }

    /// Mutable access to the data; `&mut self` needs no locking. `Err` if
    /// the lock is poisoned.
    pub fn get_mut(&mut self) -> LockResult<&mut T> {
        let poisoned = self.poison_state();
        lock_result(self.data.get_mut(), poisoned)
    }

    /// Poison state without a scheduling point (exclusive access).
    fn poison_state(&self) -> bool {
        self.poisoned.state(|| self.model_object())
    }
}

impl<'a, T: ?Sized> RwLockWriteGuard<'a, T> {
    /// Turns the write lock into a read lock without letting a writer in.
    #[track_caller]
    pub fn downgrade(s: Self) -> RwLockReadGuard<'a, T> {
        let s = std::mem::ManuallyDrop::new(s);
        let (lock, object) = (s.lock, s.object);
        let location = Location::caller();
        lock.poisoned
            .release(object, s.panicking, OpKind::Downgrade, location, || {
                // SAFETY: the guard holds the real exclusive lock.
                unsafe { lock.raw.downgrade() }
            });
        lock.read_guard(object)
    }
}

impl<T: ?Sized> Drop for RwLockReadGuard<'_, T> {
    #[track_caller]
    fn drop(&mut self) {
        match self.object {
            // SAFETY: this guard holds a real shared lock.
            None => unsafe { self.lock.raw.unlock_shared() },
            Some(object) => {
                exec::visible(Some(object), OpKind::ReadUnlock, self.locked_at, |_, _| {
                    ((), None)
                })
            }
        }
    }
}

impl<T: ?Sized> Drop for RwLockWriteGuard<'_, T> {
    #[track_caller]
    fn drop(&mut self) {
        let lock = self.lock;
        lock.poisoned.release(
            self.object,
            self.panicking,
            OpKind::Unlock,
            self.locked_at,
            || {
                // SAFETY: this guard holds the real exclusive lock.
                unsafe { lock.raw.unlock_exclusive() }
            },
        );
    }
}

/// With critical-section peeking, `Deref` is a read and `DerefMut` a write
/// of the guarded data (an `RwLock<T>` is shared only if `T: Sync`, so
/// `&T` changes nothing kase cannot see): read sections, and write sections
/// that only read it, commute.
impl<T: ?Sized> Deref for RwLockReadGuard<'_, T> {
    type Target = T;

    #[track_caller]
    fn deref(&self) -> &T {
        // SAFETY: a read lock is held: no writer has `&mut T`.
        unsafe { &*guard::data(self.object, DataAccess::Read, &self.lock.data) }
    }
}

impl<T: ?Sized> Deref for RwLockWriteGuard<'_, T> {
    type Target = T;

    #[track_caller]
    fn deref(&self) -> &T {
        // SAFETY: the write lock is held: no one else accesses the data.
        unsafe { &*guard::data(self.object, DataAccess::Read, &self.lock.data) }
    }
}

impl<T: ?Sized> DerefMut for RwLockWriteGuard<'_, T> {
    #[track_caller]
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the write lock is held: no one else accesses the data.
        unsafe { &mut *guard::data(self.object, DataAccess::Write, &self.lock.data) }
    }
}

guard::guard_fmt!(RwLockReadGuard, RwLockWriteGuard);

impl<T: ?Sized + fmt::Debug> fmt::Debug for RwLock<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        guard::debug_lock(f, "RwLock", self.try_read(), || self.is_poisoned())
    }
}

guard::lock_from!(RwLock);

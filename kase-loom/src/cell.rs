//! `loom::cell`: an `UnsafeCell` whose accesses kase checks for data races,
//! with loom's `get` / `get_mut` guards.

/// loom's `UnsafeCell`: every `with`, `with_mut`, `get` and `get_mut` is an
/// access kase checks against happens-before (a read for `with` and `get`,
/// a write for `with_mut` and `get_mut`); two unordered accesses, one a
/// write, are a data race.
///
/// ```
/// use kase_loom as loom;
/// use loom::cell::UnsafeCell;
///
/// loom::model(|| {
///     let cell = UnsafeCell::new(1);
///     cell.with_mut(|p| unsafe { *p += 1 });
///     // SAFETY: no other access to the cell is alive.
///     assert_eq!(unsafe { *cell.get().deref() }, 2);
/// });
/// ```
#[derive(Debug, Default)]
pub struct UnsafeCell<T: ?Sized>(kase_rt::cell::UnsafeCell<T>);

/// A read access to an [`UnsafeCell`]'s value (loom's `ConstPtr`), checked
/// when it was taken.
#[derive(Debug)]
pub struct ConstPtr<T: ?Sized> {
    ptr: *const T,
}

/// A write access to an [`UnsafeCell`]'s value (loom's `MutPtr`), checked
/// when it was taken.
#[derive(Debug)]
pub struct MutPtr<T: ?Sized> {
    ptr: *mut T,
}

impl<T> UnsafeCell<T> {
    /// Wraps `data`.
    #[track_caller]
    pub fn new(data: T) -> Self {
        UnsafeCell(kase_rt::cell::UnsafeCell::new(data))
    }

    /// Unwraps the value.
    pub fn into_inner(self) -> T {
        self.0.into_inner()
    }
}

impl<T: ?Sized> UnsafeCell<T> {
    /// Reads through `*const T`: a read access.
    #[track_caller]
    pub fn with<F, R>(&self, f: F) -> R
    where
        F: FnOnce(*const T) -> R,
    {
        self.0.with(f)
    }

    /// Writes (or reads) through `*mut T`: a write access.
    #[track_caller]
    pub fn with_mut<F, R>(&self, f: F) -> R
    where
        F: FnOnce(*mut T) -> R,
    {
        self.0.with_mut(f)
    }

    /// A read access, held as a guard.
    #[track_caller]
    pub fn get(&self) -> ConstPtr<T> {
        ConstPtr {
            ptr: self.0.with(|ptr| ptr),
        }
    }

    /// A write access, held as a guard.
    #[track_caller]
    pub fn get_mut(&self) -> MutPtr<T> {
        MutPtr {
            ptr: self.0.with_mut(|ptr| ptr),
        }
    }
}

impl<T: ?Sized> ConstPtr<T> {
    /// The value.
    ///
    /// # Safety
    ///
    /// As dereferencing the raw pointer: no write to the value may happen
    /// while the reference lives.
    pub unsafe fn deref(&self) -> &T {
        // SAFETY: the caller's promise.
        unsafe { &*self.ptr }
    }

    /// Calls `f` with the raw pointer.
    pub fn with<F, R>(&self, f: F) -> R
    where
        F: FnOnce(*const T) -> R,
    {
        f(self.ptr)
    }
}

impl<T: ?Sized> MutPtr<T> {
    /// The value, mutably.
    ///
    /// # Safety
    ///
    /// As dereferencing the raw pointer: no other access to the value may
    /// happen while the reference lives.
    #[allow(clippy::mut_from_ref)] // loom's signature
    pub unsafe fn deref(&self) -> &mut T {
        // SAFETY: the caller's promise.
        unsafe { &mut *self.ptr }
    }

    /// Calls `f` with the raw pointer.
    pub fn with<F, R>(&self, f: F) -> R
    where
        F: FnOnce(*mut T) -> R,
    {
        f(self.ptr)
    }
}

/// `loom::cell::Cell`: std's, single-threaded (nothing to model).
pub use std::cell::Cell;

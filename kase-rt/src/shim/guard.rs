//! What `Mutex` and `RwLock` and their guards share beyond poisoning: access
//! to the guarded data (with critical-section peeking, a read or a write of
//! it in the model), the guards' formatting, and the locks' `Debug`,
//! `Default` and `From`, all as std's.

use std::cell::UnsafeCell;
use std::fmt;
use std::ops::Deref;
use std::sync::TryLockResult;

pub(crate) use crate::exec::DataAccess;
use crate::exec::{self, ObjectIdx};

/// The guarded `data` of a guard on the lock `object` (`None` for a real
/// lock), after telling the model of the `access`.
pub(crate) fn data<T: ?Sized>(
    object: Option<ObjectIdx>,
    access: DataAccess,
    data: &UnsafeCell<T>,
) -> *mut T {
    if let Some(object) = object {
        exec::data_access(object, access);
    }
    data.get()
}

/// `Debug` of a lock called `name`, as std's: the data if `attempt` (a try
/// lock) got it, and whether the lock `is_poisoned` (asked once the attempt's
/// guard is dropped).
pub(crate) fn debug_lock<G: Deref>(
    f: &mut fmt::Formatter<'_>,
    name: &str,
    attempt: TryLockResult<G>,
    is_poisoned: impl FnOnce() -> bool,
) -> fmt::Result
where
    G::Target: fmt::Debug,
{
    let mut d = f.debug_struct(name);
    match attempt {
        Ok(guard) => d.field("data", &&*guard),
        Err(std::sync::TryLockError::Poisoned(err)) => d.field("data", &&**err.get_ref()),
        Err(std::sync::TryLockError::WouldBlock) => d.field("data", &format_args!("<locked>")),
    };
    d.field("poisoned", &is_poisoned());
    d.finish_non_exhaustive()
}

/// `Debug` and `Display` of guards, which show the guarded data.
macro_rules! guard_fmt {
    ($($guard:ident),+) => {$(
        impl<T: ?Sized + std::fmt::Debug> std::fmt::Debug for $guard<'_, T> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                std::fmt::Debug::fmt(&**self, f)
            }
        }

        impl<T: ?Sized + std::fmt::Display> std::fmt::Display for $guard<'_, T> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                (**self).fmt(f)
            }
        }
    )+};
}
pub(crate) use guard_fmt;

/// `Default` and `From<T>` of a lock with a `new(T)`.
macro_rules! lock_from {
    ($lock:ident) => {
        impl<T: Default> Default for $lock<T> {
            fn default() -> Self {
                $lock::new(T::default())
            }
        }

        impl<T> From<T> for $lock<T> {
            fn from(t: T) -> Self {
                $lock::new(t)
            }
        }
    };
}
pub(crate) use lock_from;

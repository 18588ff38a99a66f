//! `OnceLock` with std's stable API.
//!
//! Built as std builds it: a kase [`Once`] guarding a cell. The cell is
//! kase's tracked `UnsafeCell`, so kase checks that the `Once` orders the
//! write of the value before every read of it.

use std::fmt;
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::panic::{RefUnwindSafe, UnwindSafe};

use super::cell::UnsafeCell;
use super::once::Once;
use crate::exec;

/// A synchronisation primitive which can be written to nominally only once,
/// a drop-in for [`std::sync::OnceLock`].
///
/// ```
/// # extern crate kase_rt as kase;
/// use kase::sync::OnceLock;
///
/// static CELL: OnceLock<u32> = OnceLock::new(); // `const fn new`, as in std
/// assert_eq!(CELL.get(), None);
/// assert_eq!(*CELL.get_or_init(|| 7), 7);
/// assert_eq!(CELL.set(8), Err(8));
/// assert_eq!(CELL.get(), Some(&7));
/// ```
///
/// # How kase models it
///
/// Exactly as std: a kase [`Once`] decides which thread initialises (see its
/// docs: one visible load on an initialised cell; a compare-exchange and a
/// swap to initialise; a `Condvar` wait for a thread that finds another
/// initialising), and the value lives in a tracked cell next to it. A
/// panicking initialiser leaves the cell empty and the panic propagates; the
/// next caller initialises instead. In a `static` (or any cell that outlives
/// an execution) the cell starts every execution empty; the value of the
/// earlier execution is leaked, as a `static`'s value is never dropped.
pub struct OnceLock<T> {
    once: Once,
    value: UnsafeCell<MaybeUninit<T>>,
    /// As std: tells dropck that a `T` may be dropped.
    _marker: PhantomData<T>,
}

// SAFETY: as std's: a `&OnceLock<T>` hands out `&T` (needs `T: Sync`) and
// lets any thread store a `T` that another may drop or take (needs `T: Send`).
unsafe impl<T: Sync + Send> Sync for OnceLock<T> {}
// SAFETY: as std's: sending the cell sends the `T`.
unsafe impl<T: Send> Send for OnceLock<T> {}

impl<T: RefUnwindSafe + UnwindSafe> RefUnwindSafe for OnceLock<T> {}
impl<T: UnwindSafe> UnwindSafe for OnceLock<T> {}

impl<T> OnceLock<T> {
    /// Creates a new empty cell.
    #[must_use]
    pub const fn new() -> OnceLock<T> {
        OnceLock {
            once: Once::new(),
            value: UnsafeCell::new(MaybeUninit::uninit()),
            _marker: PhantomData,
        }
    }

    /// The value, or `None` if the cell is empty or being initialised.
    /// Never blocks.
    #[track_caller]
    pub fn get(&self) -> Option<&T> {
        let _call = exec::call("get", "once_lock");
        if self.once.is_completed() {
            // SAFETY: the `Once` completed (Acquire), so the value is written.
            Some(unsafe { self.get_unchecked() })
        } else {
            None
        }
    }

    /// Mutable access to the value, or `None` if the cell is empty.
    pub fn get_mut(&mut self) -> Option<&mut T> {
        if self.once.is_completed_mut() {
            // SAFETY: the `Once` completed, so the value is written.
            Some(unsafe { self.value.get_mut().assume_init_mut() })
        } else {
            None
        }
    }

    /// Blocks until the cell is initialised, then returns the value.
    #[track_caller]
    pub fn wait(&self) -> &T {
        let _call = exec::call("wait", "once_lock");
        self.once.wait_force();
        // SAFETY: the `Once` completed, so the value is written.
        unsafe { self.get_unchecked() }
    }

    /// Initialises the cell with `value`; `Err(value)` if it was already
    /// initialised. Blocks while another thread initialises it.
    #[track_caller]
    pub fn set(&self, value: T) -> Result<(), T> {
        let call = exec::call("set", "once_lock");
        let mut value = Some(value);
        self.get_or_init(|| value.take().unwrap());
        call.outcome(if value.is_none() {
            "set"
        } else {
            "already set"
        });
        match value {
            None => Ok(()),
            Some(value) => Err(value),
        }
    }

    /// The value, initialising the cell with `f` if it is empty. Exactly one
    /// initialiser runs to completion across threads; the others block until
    /// it has and then see its value.
    ///
    /// # Panics
    ///
    /// If `f` panics, the panic propagates and the cell stays empty.
    #[track_caller]
    pub fn get_or_init<F>(&self, f: F) -> &T
    where
        F: FnOnce() -> T,
    {
        let _call = exec::call("get_or_init", "once_lock");
        let state = self.once.load_state();
        if !Once::is_complete(state) {
            self.initialize(f);
        }
        // SAFETY: the `Once` completed: `initialize` returns only then.
        unsafe { self.get_unchecked() }
    }

    /// Consumes the cell, returning the value if it was initialised.
    pub fn into_inner(mut self) -> Option<T> {
        self.take()
    }

    /// Takes the value out, leaving the cell empty.
    pub fn take(&mut self) -> Option<T> {
        if self.once.is_completed_mut() {
            self.once.reset_mut();
            // SAFETY: the value was written, and with the `Once` reset it is
            // no longer considered initialised, so it is read out once.
            Some(unsafe { self.value.get_mut().assume_init_read() })
        } else {
            None
        }
    }

    #[cold]
    #[track_caller]
    fn initialize<F: FnOnce() -> T>(&self, f: F) {
        let mut f = Some(f);
        // As `call_once_force`, once `get_or_init` found the `Once` incomplete.
        self.once.call(true, &mut |_| {
            let value = (f.take().unwrap())();
            // SAFETY: only the one thread running the `Once`'s initialiser
            // writes, and no one reads before it completes.
            self.value.with_mut(|slot| unsafe { (*slot).write(value) });
        });
    }

    /// # Safety
    ///
    /// The `Once` must have completed.
    #[track_caller]
    unsafe fn get_unchecked(&self) -> &T {
        // SAFETY: by the caller, the value was written, and it is never
        // written again while `&self` lives.
        self.value.with(|slot| unsafe { (*slot).assume_init_ref() })
    }
}

impl<T> Drop for OnceLock<T> {
    fn drop(&mut self) {
        if self.once.is_completed_mut() {
            // SAFETY: the value was written and is dropped once.
            unsafe { self.value.get_mut().assume_init_drop() };
        }
    }
}

impl<T> Default for OnceLock<T> {
    fn default() -> OnceLock<T> {
        OnceLock::new()
    }
}

impl<T: fmt::Debug> fmt::Debug for OnceLock<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_tuple("OnceLock");
        match self.get() {
            Some(v) => d.field(v),
            None => d.field(&format_args!("<uninit>")),
        };
        d.finish()
    }
}

impl<T: Clone> Clone for OnceLock<T> {
    fn clone(&self) -> OnceLock<T> {
        let cell = Self::new();
        if let Some(value) = self.get() {
            let _ = cell.set(value.clone());
        }
        cell
    }
}

impl<T> From<T> for OnceLock<T> {
    /// A cell initialised with `value`.
    fn from(value: T) -> Self {
        let cell = Self::new();
        let _ = cell.set(value);
        cell
    }
}

impl<T: PartialEq> PartialEq for OnceLock<T> {
    fn eq(&self, other: &OnceLock<T>) -> bool {
        self.get() == other.get()
    }
}

impl<T: Eq> Eq for OnceLock<T> {}

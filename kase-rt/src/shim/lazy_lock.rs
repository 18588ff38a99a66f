//! `LazyLock` with std's stable API.
//!
//! Built as std builds it: a kase [`Once`] guarding the initialiser and the
//! value (the value in kase's tracked `UnsafeCell`).

use std::cell::UnsafeCell as StdUnsafeCell;
use std::fmt;
use std::mem::{ManuallyDrop, MaybeUninit};
use std::ops::{Deref, DerefMut};
use std::panic::{RefUnwindSafe, UnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};

use super::cell::UnsafeCell;
use super::once::Once;
use crate::exec;
use crate::exec::error::usage_error;

/// A value initialised on first access, a drop-in for
/// [`std::sync::LazyLock`].
///
/// ```
/// # extern crate kase_rt as kase;
/// use kase::sync::LazyLock;
///
/// static ANSWER: LazyLock<String> = LazyLock::new(|| "42".repeat(2));
/// assert_eq!(*ANSWER, "4242");
/// assert_eq!(LazyLock::get(&ANSWER).map(String::as_str), Some("4242"));
/// ```
///
/// # How kase models it
///
/// Exactly as std: a kase [`Once`] decides which thread runs the
/// initialiser (one visible load once initialised; a compare-exchange and a
/// swap to initialise; a `Condvar` wait for a thread that finds another
/// initialising). A panicking initialiser poisons the `LazyLock`: every later
/// access panics, as in std.
///
/// A `static` `LazyLock` restarts with every execution: it is uninitialised
/// again, and the initialiser runs again. For that, kase calls a bitwise copy
/// of the initialiser and keeps the original, which is sound for the
/// initialisers a `static` can name (function pointers, and anything else
/// without drop glue). An initialiser that owns data (one that needs `Drop`,
/// say a boxed closure) cannot run twice, so a `LazyLock` holding one that
/// is reused by a later execution (only possible for one created outside the
/// model) panics with an explanation. The value of the earlier execution is
/// leaked, as a `static`'s value is never dropped.
pub struct LazyLock<T, F = fn() -> T> {
    once: Once,
    init: StdUnsafeCell<ManuallyDrop<F>>,
    /// Whether `init` was (bitwise) moved out, by an earlier execution or
    /// this one. Only the thread running the `Once`'s initialiser, or one
    /// with `&mut self`, touches it; an atomic only to keep `Sync` simple.
    init_taken: AtomicBool,
    value: UnsafeCell<MaybeUninit<T>>,
}

// SAFETY: as std's: any thread may run the initialiser (needs `F: Send`) and
// store a `T` that others read (`T: Sync`) or that another drops (`T: Send`).
unsafe impl<T: Sync + Send, F: Send> Sync for LazyLock<T, F> {}

impl<T: RefUnwindSafe + UnwindSafe, F: UnwindSafe> RefUnwindSafe for LazyLock<T, F> {}
impl<T: UnwindSafe, F: UnwindSafe> UnwindSafe for LazyLock<T, F> {}

impl<T, F: FnOnce() -> T> LazyLock<T, F> {
    /// Creates a new lazy value with the given initialiser.
    pub const fn new(f: F) -> LazyLock<T, F> {
        LazyLock {
            once: Once::new(),
            init: StdUnsafeCell::new(ManuallyDrop::new(f)),
            init_taken: AtomicBool::new(false),
            value: UnsafeCell::new(MaybeUninit::uninit()),
        }
    }

    /// Forces the evaluation of this lazy value and returns a reference to
    /// it; equivalent to `Deref`. Blocks while another thread initialises.
    ///
    /// # Panics
    ///
    /// If the initialiser panics (the panic propagates and poisons the
    /// `LazyLock`), or if it is poisoned.
    #[track_caller]
    pub fn force(this: &LazyLock<T, F>) -> &T {
        let _call = exec::call("force", "lazy_lock");
        let state = this.once.load_state();
        if !Once::is_complete(state) {
            this.initialize();
        }
        // SAFETY: the `Once` completed.
        unsafe { this.get_unchecked() }
    }

    /// Forces the evaluation of this lazy value and returns a mutable
    /// reference to it; no synchronisation is needed through `&mut`.
    ///
    /// # Panics
    ///
    /// As [`force`](Self::force).
    pub fn force_mut(this: &mut LazyLock<T, F>) -> &mut T {
        if !this.once.is_completed_mut() {
            if this.once.is_poisoned_mut() {
                panic_poisoned();
            }
            // Poisoned if the initialiser unwinds.
            this.once.set_mut(false);
            // SAFETY: not complete nor poisoned, so the initialiser is there.
            let f = unsafe { this.take_init() };
            this.value.get_mut().write(f());
            this.once.set_mut(true);
        }
        // SAFETY: the `Once` completed.
        unsafe { this.value.get_mut().assume_init_mut() }
    }

    #[cold]
    #[track_caller]
    fn initialize(&self) {
        // As `call_once_force`, once `force` found the `Once` incomplete.
        self.once.call(true, &mut |once_state| {
            if once_state.is_poisoned() {
                panic_poisoned();
            }
            // SAFETY: we run the `Once`'s initialiser, which has not run
            // (not complete, not poisoned) in this execution.
            let f = unsafe { self.take_init() };
            let value = f();
            // SAFETY: only the thread running the initialiser writes, and no
            // one reads before it completes.
            self.value.with_mut(|slot| unsafe { (*slot).write(value) });
        });
    }

    /// Moves the initialiser out (bitwise), leaving its bytes in place so a
    /// later execution can run it again.
    ///
    /// # Safety
    ///
    /// The caller runs the `Once`'s initialiser or holds `&mut self`, and
    /// the initialiser has not been taken in this execution.
    unsafe fn take_init(&self) -> F {
        let again = self.init_taken.swap(true, Ordering::Relaxed);
        if again && std::mem::needs_drop::<F>() {
            usage_error!(
                "this LazyLock was initialised by an earlier execution, and its initialiser \
                 (`{}`) owns data, so it cannot run a second time. Create the LazyLock inside the \
                 model closure, or use an initialiser without drop glue (a function pointer).",
                std::any::type_name::<F>()
            );
        }
        // SAFETY: by the caller no one else accesses `init` now. The bytes
        // were either never moved from, or `F` has no drop glue, so the
        // earlier copy released nothing this one still uses.
        unsafe { ManuallyDrop::take(&mut *self.init.get()) }
    }
}

impl<T, F> LazyLock<T, F> {
    /// The value if initialised, else `None`. Never blocks, never
    /// initialises.
    #[track_caller]
    pub fn get(this: &LazyLock<T, F>) -> Option<&T> {
        let _call = exec::call("get", "lazy_lock");
        if this.once.is_completed() {
            // SAFETY: the `Once` completed.
            Some(unsafe { this.get_unchecked() })
        } else {
            None
        }
    }

    /// The value mutably if initialised, else `None`.
    pub fn get_mut(this: &mut LazyLock<T, F>) -> Option<&mut T> {
        if this.once.is_completed_mut() {
            // SAFETY: the `Once` completed.
            Some(unsafe { this.value.get_mut().assume_init_mut() })
        } else {
            None
        }
    }

    /// Drops the value in place: kase-loom's `lazy_static!` drops the
    /// values a model's execution initialised when its main closure
    /// returns, as loom does (so they are no leak). A write of the value:
    /// a thread's access to it that is not ordered before the drop is a
    /// data race. Not part of the API.
    ///
    /// # Safety
    ///
    /// A [`force`](Self::force) of `this` returned in this execution, and
    /// nothing uses `this` again in this execution.
    #[doc(hidden)]
    #[track_caller]
    pub unsafe fn __drop_value(this: &LazyLock<T, F>) {
        // SAFETY: by the caller the value was written in this execution and
        // is not used after; the next execution initialises it anew.
        this.value
            .with_mut(|slot| unsafe { (*slot).assume_init_drop() });
    }

    /// # Safety
    ///
    /// The `Once` must have completed.
    #[track_caller]
    unsafe fn get_unchecked(&self) -> &T {
        // SAFETY: by the caller the value was written; it is never written
        // again while `&self` lives.
        self.value.with(|slot| unsafe { (*slot).assume_init_ref() })
    }
}

#[track_caller]
fn panic_poisoned() -> ! {
    panic!("LazyLock instance has previously been poisoned")
}

impl<T, F> Drop for LazyLock<T, F> {
    fn drop(&mut self) {
        if self.once.is_completed_mut() {
            // SAFETY: the value was written and is dropped once.
            unsafe { self.value.get_mut().assume_init_drop() };
        } else if !self.once.is_poisoned_mut() && !*self.init_taken.get_mut() {
            // SAFETY: the initialiser was never moved out.
            unsafe { ManuallyDrop::drop(self.init.get_mut()) };
        }
    }
}

impl<T, F: FnOnce() -> T> Deref for LazyLock<T, F> {
    type Target = T;

    #[track_caller]
    fn deref(&self) -> &T {
        LazyLock::force(self)
    }
}

impl<T, F: FnOnce() -> T> DerefMut for LazyLock<T, F> {
    fn deref_mut(&mut self) -> &mut T {
        LazyLock::force_mut(self)
    }
}

impl<T: Default> Default for LazyLock<T> {
    /// A `LazyLock` initialised with `T::default()`.
    fn default() -> LazyLock<T> {
        LazyLock::new(T::default)
    }
}

impl<T: fmt::Debug, F> fmt::Debug for LazyLock<T, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_tuple("LazyLock");
        match LazyLock::get(self) {
            Some(v) => d.field(v),
            None => d.field(&format_args!("<uninit>")),
        };
        d.finish()
    }
}

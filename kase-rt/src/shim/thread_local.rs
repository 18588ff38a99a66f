//! `thread_local!` and `LocalKey`: values per *model* thread.
//!
//! Outside a model a [`LocalKey`] is std's thread-local (the macro declares
//! one underneath). Inside, every model thread has its own value, created
//! lazily on the thread's first access and dropped when the thread's closure
//! returns — in that thread, before its exit event, so a destructor may use
//! shims and what it does is seen by whoever joins the thread. Each execution
//! starts with no values.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::error::Error;
use std::fmt;

use crate::exec::error::{usage_error, OrInternal};
use crate::exec::local::{self, Lookup};
use crate::exec::{self};

/// Declares a new thread-local storage key of type [`LocalKey`], like
/// [`std::thread_local!`].
///
/// The syntax is std's: any number of `static` declarations with optional
/// attributes and visibility, initialised lazily by an expression or eagerly
/// by a `const { ... }` block.
///
/// In a model each model thread gets its own value, initialised on its first
/// access and dropped when the thread's closure returns (in the thread, before
/// it exits). Outside a model it is std's thread-local.
///
/// `#[kase::test]` and `#[kase::instrument]` turn `thread_local!` and
/// `std::thread_local!` in the code they rewrite into this macro.
///
/// ```
/// # extern crate kase_rt as kase;
/// use std::cell::Cell;
/// use kase::thread;
///
/// kase::thread_local! {
///     static COUNT: Cell<u32> = const { Cell::new(0) };
///     /// Attributes and docs are kept.
///     pub static NAME: String = String::from("none");
/// }
///
/// kase::model(|| {
///     COUNT.set(1);
///     let t = thread::spawn(|| COUNT.get()); // a fresh value in each thread
///     assert_eq!(t.join().unwrap(), 0);
///     assert_eq!(COUNT.get(), 1);
///     NAME.with(|n| assert_eq!(n, "none"));
/// });
/// ```
#[macro_export]
macro_rules! thread_local {
    () => {};
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty = const $init:block; $($rest:tt)*) => {
        $crate::__kase_thread_local_inner!($(#[$attr])* $vis $name, $t, const $init);
        $crate::thread_local!($($rest)*);
    };
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty = const $init:block) => {
        $crate::__kase_thread_local_inner!($(#[$attr])* $vis $name, $t, const $init);
    };
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty = $init:expr; $($rest:tt)*) => {
        $crate::__kase_thread_local_inner!($(#[$attr])* $vis $name, $t, $init);
        $crate::thread_local!($($rest)*);
    };
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty = $init:expr) => {
        $crate::__kase_thread_local_inner!($(#[$attr])* $vis $name, $t, $init);
    };
}

/// One declaration of [`thread_local!`]; not public API.
#[doc(hidden)]
#[macro_export]
macro_rules! __kase_thread_local_inner {
    ($(#[$attr:meta])* $vis:vis $name:ident, $t:ty, const $init:block) => {
        $(#[$attr])* $vis const $name: $crate::thread::LocalKey<$t> = {
            ::std::thread_local!(static __KASE_STD_KEY: $t = const $init);
            fn __kase_init() -> $t {
                $init
            }
            fn __kase_key_id() -> usize {
                static __KASE_KEY: u8 = 0;
                ::core::ptr::addr_of!(__KASE_KEY) as usize
            }
            $crate::thread::LocalKey::__new(__KASE_STD_KEY, __kase_init, __kase_key_id)
        };
    };
    ($(#[$attr:meta])* $vis:vis $name:ident, $t:ty, $init:expr) => {
        $(#[$attr])* $vis const $name: $crate::thread::LocalKey<$t> = {
            ::std::thread_local!(static __KASE_STD_KEY: $t = $init);
            fn __kase_init() -> $t {
                $init
            }
            fn __kase_key_id() -> usize {
                static __KASE_KEY: u8 = 0;
                ::core::ptr::addr_of!(__KASE_KEY) as usize
            }
            $crate::thread::LocalKey::__new(__KASE_STD_KEY, __kase_init, __kase_key_id)
        };
    };
}

/// A thread local storage key which owns its contents, like
/// [`std::thread::LocalKey`]; declared with [`thread_local!`].
///
/// In a model, each model thread has its own value (see [`thread_local!`]);
/// outside, each OS thread, as in std.
pub struct LocalKey<T: 'static> {
    std: std::thread::LocalKey<T>,
    init: fn() -> T,
    id: fn() -> usize,
}

impl<T: 'static> LocalKey<T> {
    /// Used by [`thread_local!`]; not public API.
    #[doc(hidden)]
    pub const fn __new(std: std::thread::LocalKey<T>, init: fn() -> T, id: fn() -> usize) -> Self {
        LocalKey { std, init, id }
    }

    /// Acquires a reference to the value in this thread's slot, initialising
    /// it first if needed, like [`std::thread::LocalKey::with`].
    ///
    /// # Panics
    ///
    /// If the value is being or has been destroyed (an access from a
    /// thread-local's destructor), or if its initialiser accesses it.
    #[track_caller]
    pub fn with<F, R>(&'static self, f: F) -> R
    where
        F: FnOnce(&T) -> R,
    {
        match self.try_with(f) {
            Ok(r) => r,
            Err(err) => panic!(
                "cannot access a Thread Local Storage value during or after destruction: {err:?}"
            ),
        }
    }

    /// Like [`with`](Self::with), but returns an [`AccessError`] instead of
    /// panicking if the value is being or has been destroyed, like
    /// [`std::thread::LocalKey::try_with`].
    ///
    /// # Panics
    ///
    /// If the initialiser accesses the value it is initialising.
    #[track_caller]
    pub fn try_with<F, R>(&'static self, f: F) -> Result<R, AccessError>
    where
        F: FnOnce(&T) -> R,
    {
        if !exec::in_model() {
            return self
                .std
                .try_with(f)
                .map_err(|_| AccessError { _private: () });
        }
        let value = self.model_value(None)?;
        // A spin that reads a thread-local (a thread id, an epoch handle)
        // may still repeat itself: only a change ends the cycle.
        let before = local::in_place_state(value);
        // SAFETY: the value is boxed in this model thread's locals and
        // dropped only after the thread's closure returned (or once it was
        // unwound), so it outlives this call, which runs in this thread;
        // `f` cannot keep the reference beyond the call.
        let result = f(unsafe { &*value });
        local::note_access(before.is_none() || local::in_place_state(value) != before);
        Ok(result)
    }

    /// Where this model thread's value lives: the existing one; else `given`
    /// (if any) or the initialiser's, stored. `Err` if it was destroyed. The
    /// pointer is valid until the thread's locals are destroyed at its exit.
    #[track_caller]
    fn model_value(&'static self, given: Option<T>) -> Result<*const T, AccessError> {
        let key = (self.id)();
        let ptr = match local::with_current(|l| l.lookup(key)) {
            Lookup::Alive(ptr) => ptr,
            Lookup::Destroyed => return Err(AccessError { _private: () }),
            Lookup::Initializing => usage_error!(
                "a thread_local! value was accessed by its own initialiser \
                 (recursive initialisation)"
            ),
            Lookup::Absent => {
                let value = match given {
                    Some(value) => value,
                    None => {
                        // The initialiser may use shims (and switch threads):
                        // run it outside the execution's borrow.
                        struct Abort(usize);
                        impl Drop for Abort {
                            fn drop(&mut self) {
                                local::with_current(|l| l.abort_init(self.0));
                            }
                        }
                        local::with_current(|l| l.start_init(key));
                        let abort = Abort(key);
                        let value = (self.init)();
                        std::mem::forget(abort);
                        value
                    }
                };
                let boxed: Box<dyn Any> = Box::new(value);
                local::note_access(true);
                local::with_current(|l| l.finish_init(key, boxed))
            }
        };
        // SAFETY: the box is alive in this thread's locals (just looked up
        // or stored, and nothing ran in between).
        let value = unsafe { &*ptr }
            .downcast_ref::<T>()
            .or_internal("thread-local of another type");
        Ok(value as *const T)
    }

    /// Sets or initialises the value without running the initialiser if it
    /// was not initialised yet; `update` gets the value back if it was.
    #[track_caller]
    fn model_set_with(&'static self, value: T, update: impl FnOnce(T, &T)) {
        let key = (self.id)();
        match local::with_current(|l| l.lookup(key)) {
            Lookup::Absent => {
                self.model_value(Some(value))
                    .or_internal("an absent value is not destroyed");
            }
            _ => match self.model_value(None) {
                Ok(current) => {
                    local::note_access(true);
                    // SAFETY: as in `try_with`.
                    update(value, unsafe { &*current })
                }
                Err(err) => panic!(
                    "cannot access a Thread Local Storage value during or after destruction: \
                     {err:?}"
                ),
            },
        }
    }
}

impl<T: 'static> LocalKey<Cell<T>> {
    /// Sets or initialises the contained value, like
    /// [`std::thread::LocalKey::set`]: if the value was not initialised
    /// yet, it is initialised with `value` without running the initialiser.
    ///
    /// # Panics
    ///
    /// If the value is being or has been destroyed.
    #[track_caller]
    pub fn set(&'static self, value: T) {
        if !exec::in_model() {
            return self.std.set(value);
        }
        self.model_set_with(Cell::new(value), |value, cell| cell.set(value.into_inner()));
    }

    /// Returns a copy of the contained value, like
    /// [`std::thread::LocalKey::get`].
    ///
    /// # Panics
    ///
    /// If the value is being or has been destroyed.
    #[track_caller]
    pub fn get(&'static self) -> T
    where
        T: Copy,
    {
        self.with(Cell::get)
    }

    /// Takes the contained value, leaving `Default::default()` in its place,
    /// like [`std::thread::LocalKey::take`].
    ///
    /// # Panics
    ///
    /// If the value is being or has been destroyed.
    #[track_caller]
    pub fn take(&'static self) -> T
    where
        T: Default,
    {
        self.with(Cell::take)
    }

    /// Replaces the contained value, returning the old one, like
    /// [`std::thread::LocalKey::replace`].
    ///
    /// # Panics
    ///
    /// If the value is being or has been destroyed.
    #[track_caller]
    pub fn replace(&'static self, value: T) -> T {
        self.with(|cell| cell.replace(value))
    }
}

impl<T: 'static> LocalKey<RefCell<T>> {
    /// Acquires a reference to the contained value, like
    /// [`std::thread::LocalKey::with_borrow`].
    ///
    /// # Panics
    ///
    /// If the value is currently mutably borrowed, or is being or has been
    /// destroyed.
    #[track_caller]
    pub fn with_borrow<F, R>(&'static self, f: F) -> R
    where
        F: FnOnce(&T) -> R,
    {
        self.with(|cell| f(&cell.borrow()))
    }

    /// Acquires a mutable reference to the contained value, like
    /// [`std::thread::LocalKey::with_borrow_mut`].
    ///
    /// # Panics
    ///
    /// If the value is currently borrowed, or is being or has been
    /// destroyed.
    #[track_caller]
    pub fn with_borrow_mut<F, R>(&'static self, f: F) -> R
    where
        F: FnOnce(&mut T) -> R,
    {
        self.with(|cell| f(&mut cell.borrow_mut()))
    }

    /// Sets or initialises the contained value, like
    /// [`std::thread::LocalKey::set`]: if the value was not initialised
    /// yet, it is initialised with `value` without running the initialiser.
    ///
    /// # Panics
    ///
    /// If the value is currently borrowed, or is being or has been
    /// destroyed.
    #[track_caller]
    pub fn set(&'static self, value: T) {
        if !exec::in_model() {
            return self.std.set(value);
        }
        self.model_set_with(RefCell::new(value), |value, cell| {
            *cell.borrow_mut() = value.into_inner()
        });
    }

    /// Takes the contained value, leaving `Default::default()` in its place,
    /// like [`std::thread::LocalKey::take`].
    ///
    /// # Panics
    ///
    /// If the value is currently borrowed, or is being or has been
    /// destroyed.
    #[track_caller]
    pub fn take(&'static self) -> T
    where
        T: Default,
    {
        self.with(RefCell::take)
    }

    /// Replaces the contained value, returning the old one, like
    /// [`std::thread::LocalKey::replace`].
    ///
    /// # Panics
    ///
    /// If the value is currently borrowed, or is being or has been
    /// destroyed.
    #[track_caller]
    pub fn replace(&'static self, value: T) -> T {
        self.with(|cell| cell.replace(value))
    }
}

impl<T: 'static> fmt::Debug for LocalKey<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalKey").finish_non_exhaustive()
    }
}

/// An error returned by [`LocalKey::try_with`], like
/// [`std::thread::AccessError`]: the value was being or had been destroyed.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct AccessError {
    _private: (),
}

impl fmt::Debug for AccessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AccessError").finish()
    }
}

impl fmt::Display for AccessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt("already destroyed", f)
    }
}

impl Error for AccessError {}

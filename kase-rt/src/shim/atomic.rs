//! `std::sync::atomic` shims: every stable method of std's atomics, with
//! std's signatures.
//!
//! Each shim wraps the std atomic it mirrors, so outside a model it *is* that
//! atomic. Inside a model every access is a visible operation on the
//! location, explored under sequential consistency; the first access in each
//! execution resets the value to the one it was constructed with, so
//! `static`s restart with every execution. `compare_exchange_weak` never
//! fails spuriously in a model. `from_ptr` is not offered: a shim carries
//! more than the bare integer, so it cannot be overlaid on one.
//!
//! loom's `with_mut` and `unsync_load` are offered too; an `unsync_load` is
//! a non-atomic read, checked for races with atomic writes (`exec/unsync.rs`).

use std::fmt;
use std::panic::Location;

use crate::exec::object::{ObjectDetail, ObjectHandle};
use crate::exec::weak::AtomicIntent;
use crate::exec::{self, OpKind, Unmodified};

pub use std::sync::atomic::{compiler_fence, Ordering};

/// How an atomic shim's value is reached as bits, for the RC11 store
/// history (`exec/weak`): the location's current bits, and setting them.
struct Bits<'a> {
    get: &'a dyn Fn() -> u64,
    set: &'a dyn Fn(u64),
}

/// An atomic access: in a model, a visible operation of kind `kind` on the
/// location behind `handle`; outside, just `op`. Under RC11 the location
/// holds the value the access reads while `op` runs, then its mo-latest
/// value again (what non-atomic accesses see).
#[track_caller]
#[inline]
#[allow(clippy::too_many_arguments)] // one private funnel for every method
fn access<R>(
    handle: &ObjectHandle,
    reset: impl FnOnce(),
    kind: OpKind,
    intent: AtomicIntent,
    bits: Bits<'_>,
    op: impl FnOnce() -> R,
    shown: impl FnOnce(&R) -> u64,
    sync: impl FnOnce(&R) -> (OpKind, Ordering),
) -> R {
    if !exec::in_model() {
        return op();
    }
    let location = Location::caller();
    let object = exec::with(|e| {
        let object = e.object(handle, atomic_detail, reset);
        if intent.strict {
            e.mark_strict(object);
        }
        if e.weak_active() {
            e.weak_intent(intent);
        }
        object
    });
    exec::visible(Some(object), kind, location, |e, _| {
        let weak = e.weak_active();
        if weak {
            if let Some(read) = e.weak_read(object, kind, (bits.get)()) {
                (bits.set)(read);
            }
        }
        // A store of the value the location already holds changes nothing
        // a spin waits for (`exec/spin`): two threads spinning on
        // `swap(true)` while a third holds the lock wait for the release
        // instead of waking each other forever. (Under RC11 the bits are
        // those of the store a read-modify-write reads.)
        let before_bits = (bits.get)();
        let before = (kind != OpKind::Load).then_some(before_bits);
        let result = op();
        let value = shown(&result);
        let (as_kind, order) = sync(&result);
        if kind == OpKind::CompareExchange && as_kind == OpKind::Load {
            e.note_unmodified(Unmodified::NothingStored);
        } else if (as_kind == OpKind::Rmw || (as_kind == OpKind::Store && !weak))
            && before == Some((bits.get)())
        {
            // (An RC11 store may go anywhere in the modification order,
            // between stores of other values: only a read-modify-write,
            // right after the store it read, surely repeats a value.)
            e.note_unmodified(Unmodified::SameValue);
        }
        if weak {
            let written = (as_kind != OpKind::Load).then(|| (bits.get)());
            let latest = e.weak_commit(object, as_kind, order, written);
            (bits.set)(latest);
        } else {
            // The repeat rule compares the values locations hold
            // (`exec/spin/repeat.rs`).
            e.note_atomic_bits(before_bits, (bits.get)());
            e.atomic_hb(object, as_kind, order);
            e.note_ordering(intent.order, "an atomic access", location);
            if let Some((failure, _)) = intent.cas {
                e.note_ordering(failure, "a compare-exchange's failure ordering", location);
            }
        }
        if as_kind != OpKind::Load {
            // Checked against `unsync_load`s; a race has ended the execution,
            // which stops at this thread's next visible operation.
            e.atomic_race(object, true, location);
        }
        (result, Some(value))
    })
}

/// Happens-before of a compare-exchange: a read-modify-write with `success`
/// if it stored, a load with `failure` if not.
fn cas_sync<T>(
    success: Ordering,
    failure: Ordering,
) -> impl FnOnce(&Result<T, T>) -> (OpKind, Ordering) {
    move |r| match r {
        Ok(_) => (OpKind::Rmw, success),
        Err(_) => (OpKind::Load, failure),
    }
}

/// The per-execution state of a new atomic location.
fn atomic_detail() -> ObjectDetail {
    ObjectDetail::Atomic(Default::default())
}

/// An `unsync_load`: in a model, a non-atomic read of the location, checked
/// for data races with atomic writes (not a visible operation); then `op`.
#[track_caller]
fn unsync_read<R>(handle: &ObjectHandle, reset: impl FnOnce(), op: impl FnOnce() -> R) -> R {
    if exec::in_model() {
        let location = Location::caller();
        let (object, pure) =
            exec::with(|e| (e.object(handle, atomic_detail, reset), e.in_pure_part()));
        if pure {
            // Inside a pure part of a critical section (peeking) the read is
            // what orders the section with the location's writes, as a
            // cell's access is: an event, not a scheduling point.
            exec::visible(Some(object), OpKind::DataRead, location, |_, _| ((), None));
        }
        let raced = exec::with(|e| e.atomic_race(object, false, location));
        if raced {
            // As for a racing cell access: the read must not happen; the
            // execution has failed with the data race, which is reported.
            crate::shim::cell::stop_at_data_race();
        }
    }
    op()
}

/// Registers the location without a visible operation, for methods that take
/// `&mut self` or `self` (nothing can run concurrently with them).
fn touch(handle: &ObjectHandle, reset: impl FnOnce()) {
    if exec::in_model() {
        exec::with(|e| {
            let object = e.object(handle, atomic_detail, reset);
            if e.weak_active() {
                // Under RC11 its history starts again from what `&mut` leaves.
                e.weak_restart(object);
            }
        });
    }
}

/// An [`AtomicBool`] initialised to `false`, like std's deprecated
/// [`std::sync::atomic::ATOMIC_BOOL_INIT`] (kept so that rewritten code using
/// it compiles).
#[deprecated(since = "1.34.0", note = "the `new` function is now preferred")]
#[allow(clippy::declare_interior_mutable_const)] // as std's
pub const ATOMIC_BOOL_INIT: AtomicBool = AtomicBool::new(false);

/// An [`AtomicIsize`] initialised to `0`, like std's deprecated
/// [`std::sync::atomic::ATOMIC_ISIZE_INIT`].
#[deprecated(since = "1.34.0", note = "the `new` function is now preferred")]
#[allow(clippy::declare_interior_mutable_const)] // as std's
pub const ATOMIC_ISIZE_INIT: AtomicIsize = AtomicIsize::new(0);

/// An [`AtomicUsize`] initialised to `0`, like std's deprecated
/// [`std::sync::atomic::ATOMIC_USIZE_INIT`].
#[deprecated(since = "1.34.0", note = "the `new` function is now preferred")]
#[allow(clippy::declare_interior_mutable_const)] // as std's
pub const ATOMIC_USIZE_INIT: AtomicUsize = AtomicUsize::new(0);

/// Signals a spin-wait loop, like std's deprecated
/// [`std::sync::atomic::spin_loop_hint`]: kase's
/// [`hint::spin_loop`](crate::hint::spin_loop), a scheduling point in a model.
#[deprecated(since = "1.51.0", note = "use hint::spin_loop instead")]
#[track_caller]
#[inline(always)] // the spin rule fingerprints the caller's frame (exec/spin)
pub fn spin_loop_hint() {
    crate::shim::hint::spin_loop();
}

/// An atomic fence, like [`std::sync::atomic::fence`]. Under the sequentially
/// consistent exploration it adds no interleavings.
#[track_caller]
pub fn fence(order: Ordering) {
    std::sync::atomic::fence(order);
    if exec::in_model() {
        exec::visible(None, OpKind::Fence, Location::caller(), |e, _| {
            if e.weak_active() {
                e.weak_fence(order);
            } else {
                e.note_ordering(order, "a fence", Location::caller());
            }
            e.fence_hb(order);
            ((), None)
        });
    }
}

/// Methods shared by every atomic shim (`$int` is the value type).
macro_rules! atomic_common {
    ($(<$g:ident>)? $name:ident, $int:ty, $show:expr, $from:expr) => {
        impl$(<$g>)? $name$(<$g>)? {
            fn reset(&self) -> impl FnOnce() + '_ {
                move || self.inner.store(self.init, Ordering::Relaxed)
            }

            #[track_caller]
            #[inline]
            fn access<R>(&self, kind: OpKind, order: Ordering, op: impl FnOnce() -> R, shown: impl FnOnce(&R) -> u64) -> R {
                self.access_as(kind, AtomicIntent::new(order, None), op, shown)
            }

            #[track_caller]
            #[inline]
            fn access_as<R>(&self, kind: OpKind, intent: AtomicIntent, op: impl FnOnce() -> R, shown: impl FnOnce(&R) -> u64) -> R {
                let order = intent.order;
                let get = || $show(self.inner.load(Ordering::Relaxed));
                let set = |bits: u64| self.inner.store($from(bits), Ordering::Relaxed);
                let bits = Bits { get: &get, set: &set };
                access(&self.handle, self.reset(), kind, intent, bits, op, shown, |_| (kind, order))
            }

            #[track_caller]
            #[inline]
            fn access_cas(&self, current: $int, success: Ordering, failure: Ordering, op: impl FnOnce() -> Result<$int, $int>) -> Result<$int, $int> {
                let intent = AtomicIntent::new(success, Some((failure, $show(current))));
                let get = || $show(self.inner.load(Ordering::Relaxed));
                let set = |bits: u64| self.inner.store($from(bits), Ordering::Relaxed);
                let bits = Bits { get: &get, set: &set };
                access(
                    &self.handle,
                    self.reset(),
                    OpKind::CompareExchange,
                    intent,
                    bits,
                    op,
                    |r| match r {
                        Ok(v) | Err(v) => $show(*v),
                    },
                    cas_sync(success, failure),
                )
            }

            /// Mutable access to the value; no synchronisation needed.
            pub fn get_mut(&mut self) -> &mut $int {
                touch(&self.handle, self.reset());
                self.inner.get_mut()
            }

            /// Calls `f` with a mutable reference to the value, like loom's
            /// `with_mut`: `&mut self` excludes every other access, so it is
            /// not a visible operation (as [`get_mut`](Self::get_mut)).
            pub fn with_mut<R>(&mut self, f: impl FnOnce(&mut $int) -> R) -> R {
                f(self.get_mut())
            }

            /// Loads the value without any synchronisation, like loom's
            /// `unsync_load`. Outside a model it is a `Relaxed` load; in a
            /// model it is a non-atomic read, not a visible operation, and an
            /// atomic store or read-modify-write of the location that
            /// happens-before does not order with it is a data race.
            ///
            /// # Safety
            ///
            /// An unsynchronised load is sound only if no store to the
            /// location happens concurrently with it: every store
            /// happens-before the load, and none runs during it.
            #[track_caller]
            pub unsafe fn unsync_load(&self) -> $int {
                unsync_read(&self.handle, self.reset(), || self.inner.load(Ordering::Relaxed))
            }

            /// Consumes the atomic and returns the value.
            pub fn into_inner(self) -> $int {
                touch(&self.handle, self.reset());
                self.inner.into_inner()
            }

            /// A raw pointer to the value. Accesses through it are not seen by
            /// kase (as in std, they must not race with atomic accesses).
            pub const fn as_ptr(&self) -> *mut $int {
                self.inner.as_ptr()
            }

            /// Loads the value.
            ///
            /// # Panics
            ///
            /// If `order` is `Release` or `AcqRel`, as std does.
            #[track_caller]
            pub fn load(&self, order: Ordering) -> $int {
                self.access(OpKind::Load, order, || self.inner.load(order), |v| $show(*v))
            }

            /// Loads the value, offering every store coherence allows, of
            /// which the interleaving explorers take the latest only
            /// (`WeakPoint::latest_only`), and marks the location strict
            /// (`Execution::mark_strict`): kase's own `Once`, whose fast path
            /// reading an older state only takes its slow path to the same
            /// end.
            #[track_caller]
            #[allow(dead_code)] // used by some of the types only
            pub(crate) fn load_latest(&self, order: Ordering) -> $int {
                let intent = AtomicIntent { latest_only: true, strict: true, ..AtomicIntent::new(order, None) };
                self.access_as(OpKind::Load, intent, || self.inner.load(order), |v| $show(*v))
            }

            /// Loads the value (any store coherence allows, under RC11) and
            /// marks the location strict, as [`load_latest`](Self::load_latest).
            #[track_caller]
            #[allow(dead_code)] // used by some of the types only
            pub(crate) fn load_strict(&self, order: Ordering) -> $int {
                let intent = AtomicIntent { strict: true, ..AtomicIntent::new(order, None) };
                self.access_as(OpKind::Load, intent, || self.inner.load(order), |v| $show(*v))
            }

            /// Stores a value.
            ///
            /// # Panics
            ///
            /// If `order` is `Acquire` or `AcqRel`, as std does.
            #[track_caller]
            pub fn store(&self, val: $int, order: Ordering) {
                self.access(OpKind::Store, order, || self.inner.store(val, order), |_| $show(val))
            }

            /// Stores a value, returning the previous one.
            #[track_caller]
            pub fn swap(&self, val: $int, order: Ordering) -> $int {
                self.access(OpKind::Rmw, order, || self.inner.swap(val, order), |v| $show(*v))
            }

            /// Stores `new` if the value is `current`; returns the previous
            /// value, `Ok` if it was `current`.
            #[track_caller]
            pub fn compare_exchange(&self, current: $int, new: $int, success: Ordering, failure: Ordering) -> Result<$int, $int> {
                self.access_cas(current, success, failure, || self.inner.compare_exchange(current, new, success, failure))
            }

            /// Like [`compare_exchange`](Self::compare_exchange); std allows it
            /// to fail spuriously, kase's model never does.
            #[track_caller]
            pub fn compare_exchange_weak(&self, current: $int, new: $int, success: Ordering, failure: Ordering) -> Result<$int, $int> {
                self.access_cas(current, success, failure, || self.inner.compare_exchange_weak(current, new, success, failure))
            }

            /// Fetches the value and applies `f` to it, retrying with
            /// `compare_exchange_weak` as std does (each attempt is a load or a
            /// compare-exchange the scheduler can interleave).
            #[track_caller]
            pub fn fetch_update<F>(&self, set_order: Ordering, fetch_order: Ordering, mut f: F) -> Result<$int, $int>
            where
                F: FnMut($int) -> Option<$int>,
            {
                let mut prev = self.load(fetch_order);
                while let Some(next) = f(prev) {
                    match self.compare_exchange_weak(prev, next, set_order, fetch_order) {
                        Ok(x) => return Ok(x),
                        Err(next_prev) => prev = next_prev,
                    }
                }
                Err(prev)
            }

            /// Same as [`fetch_update`](Self::fetch_update) (std's newer name).
            #[track_caller]
            pub fn try_update(&self, set_order: Ordering, fetch_order: Ordering, f: impl FnMut($int) -> Option<$int>) -> Result<$int, $int> {
                self.fetch_update(set_order, fetch_order, f)
            }

            /// Applies `f` until the update succeeds; returns the previous value.
            #[track_caller]
            pub fn update(&self, set_order: Ordering, fetch_order: Ordering, mut f: impl FnMut($int) -> $int) -> $int {
                match self.fetch_update(set_order, fetch_order, |v| Some(f(v))) {
                    Ok(v) | Err(v) => v,
                }
            }
        }

        impl$(<$g>)? From<$int> for $name$(<$g>)? {
            fn from(v: $int) -> Self {
                Self::new(v)
            }
        }
    };
}

/// Read-modify-write methods taking an operand (`fetch_add`, ...).
macro_rules! fetch_ops {
    ($name:ident, $int:ty, $show:expr, $($op:ident: $doc:literal),*) => {
        impl $name {
            $(
                #[doc = $doc]
                #[doc = " Returns the previous value."]
                #[track_caller]
                pub fn $op(&self, val: $int, order: Ordering) -> $int {
                    self.access(OpKind::Rmw, order, || self.inner.$op(val, order), |v| $show(*v))
                }
            )*
        }
    };
}

macro_rules! atomic_int {
    ($($name:ident, $int:ty;)*) => {$(
        #[doc = concat!("An integer that can be shared between threads, like [`std::sync::atomic::", stringify!($name), "`].")]
        ///
        /// ```
        /// # extern crate kase_rt as kase;
        #[doc = concat!("use kase::sync::atomic::{", stringify!($name), ", Ordering};")]
        #[doc = concat!("static HITS: ", stringify!($name), " = ", stringify!($name), "::new(0);")]
        /// HITS.fetch_add(1, Ordering::Relaxed);
        /// assert!(HITS.load(Ordering::Relaxed) >= 1);
        /// ```
        pub struct $name {
            handle: ObjectHandle,
            init: $int,
            inner: std::sync::atomic::$name,
        }

        impl $name {
            /// Creates a new atomic integer.
            pub const fn new(v: $int) -> Self {
                $name { handle: ObjectHandle::new(), init: v, inner: std::sync::atomic::$name::new(v) }
            }
        }

        atomic_common!($name, $int, |v: $int| v as u64, |b: u64| b as $int);

        impl Default for $name {
            fn default() -> Self {
                Self::new(0)
            }
        }
        fetch_ops!($name, $int, |v: $int| v as u64,
            fetch_add: "Adds to the value, wrapping on overflow.",
            fetch_sub: "Subtracts from the value, wrapping on overflow.",
            fetch_and: "Bitwise and with the value.",
            fetch_nand: "Bitwise nand with the value.",
            fetch_or: "Bitwise or with the value.",
            fetch_xor: "Bitwise xor with the value.",
            fetch_max: "Maximum of the value and the argument.",
            fetch_min: "Minimum of the value and the argument.");

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&self.load(Ordering::Relaxed), f)
            }
        }
    )*};
}

atomic_int! {
    AtomicI8, i8;
    AtomicI16, i16;
    AtomicI32, i32;
    AtomicI64, i64;
    AtomicIsize, isize;
    AtomicU8, u8;
    AtomicU16, u16;
    AtomicU32, u32;
    AtomicU64, u64;
    AtomicUsize, usize;
}

/// A boolean that can be shared between threads, like [`std::sync::atomic::AtomicBool`].
///
/// ```
/// # extern crate kase_rt as kase;
/// use kase::sync::atomic::{AtomicBool, Ordering};
/// let flag = AtomicBool::new(false);
/// assert!(!flag.fetch_or(true, Ordering::AcqRel));
/// assert!(flag.load(Ordering::Acquire));
/// ```
pub struct AtomicBool {
    handle: ObjectHandle,
    init: bool,
    inner: std::sync::atomic::AtomicBool,
}

impl AtomicBool {
    /// Creates a new atomic boolean.
    pub const fn new(v: bool) -> Self {
        AtomicBool {
            handle: ObjectHandle::new(),
            init: v,
            inner: std::sync::atomic::AtomicBool::new(v),
        }
    }

    /// Logical not of the value. Returns the previous value.
    #[track_caller]
    pub fn fetch_not(&self, order: Ordering) -> bool {
        self.access(
            OpKind::Rmw,
            order,
            || self.inner.fetch_xor(true, order),
            |v| u64::from(*v),
        )
    }
}

atomic_common!(AtomicBool, bool, u64::from, |b: u64| b != 0);

impl Default for AtomicBool {
    fn default() -> Self {
        Self::new(false)
    }
}

impl<T> Default for AtomicPtr<T> {
    fn default() -> Self {
        AtomicPtr::new(std::ptr::null_mut())
    }
}
fetch_ops!(AtomicBool, bool, u64::from,
    fetch_and: "Logical and with the value.",
    fetch_nand: "Logical nand with the value.",
    fetch_or: "Logical or with the value.",
    fetch_xor: "Logical xor with the value.");

impl fmt::Debug for AtomicBool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.load(Ordering::Relaxed), f)
    }
}

/// A raw pointer that can be shared between threads, like [`std::sync::atomic::AtomicPtr`].
///
/// ```
/// # extern crate kase_rt as kase;
/// use kase::sync::atomic::{AtomicPtr, Ordering};
/// let mut value = 5;
/// let p = AtomicPtr::new(std::ptr::null_mut());
/// p.store(&mut value, Ordering::Release);
/// assert_eq!(unsafe { *p.load(Ordering::Acquire) }, 5);
/// ```
pub struct AtomicPtr<T> {
    handle: ObjectHandle,
    init: *mut T,
    inner: std::sync::atomic::AtomicPtr<T>,
}

// SAFETY: as std's AtomicPtr, which is Send and Sync for every T; `init` is
// only ever copied into `inner`, never dereferenced.
unsafe impl<T> Send for AtomicPtr<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for AtomicPtr<T> {}

impl<T> AtomicPtr<T> {
    /// Creates a new atomic pointer.
    pub const fn new(p: *mut T) -> Self {
        AtomicPtr {
            handle: ObjectHandle::new(),
            init: p,
            inner: std::sync::atomic::AtomicPtr::new(p),
        }
    }
}

atomic_common!(<T> AtomicPtr, *mut T, |p: *mut T| p as usize as u64, |b: u64| b as usize as *mut T);

/// The failure ordering std's `fetch_update` accepts for a read-modify-write
/// with ordering `order`.
fn load_part(order: Ordering) -> Ordering {
    match order {
        Ordering::Release => Ordering::Relaxed,
        Ordering::AcqRel => Ordering::Acquire,
        other => other,
    }
}

impl<T> AtomicPtr<T> {
    /// One read-modify-write computing the new pointer from the old one.
    #[track_caller]
    fn rmw_ptr(&self, order: Ordering, f: impl Fn(*mut T) -> *mut T) -> *mut T {
        self.access(
            OpKind::Rmw,
            order,
            || match self
                .inner
                .fetch_update(order, load_part(order), |p| Some(f(p)))
            {
                Ok(p) | Err(p) => p,
            },
            |p| *p as usize as u64,
        )
    }

    /// Offsets the pointer by `val` elements of `T` (wrapping); returns the
    /// previous pointer.
    #[track_caller]
    pub fn fetch_ptr_add(&self, val: usize, order: Ordering) -> *mut T {
        self.rmw_ptr(order, |p| p.wrapping_add(val))
    }

    /// Offsets the pointer back by `val` elements of `T` (wrapping).
    #[track_caller]
    pub fn fetch_ptr_sub(&self, val: usize, order: Ordering) -> *mut T {
        self.rmw_ptr(order, |p| p.wrapping_sub(val))
    }

    /// Offsets the pointer by `val` bytes (wrapping).
    #[track_caller]
    pub fn fetch_byte_add(&self, val: usize, order: Ordering) -> *mut T {
        self.rmw_ptr(order, |p| p.wrapping_byte_add(val))
    }

    /// Offsets the pointer back by `val` bytes (wrapping).
    #[track_caller]
    pub fn fetch_byte_sub(&self, val: usize, order: Ordering) -> *mut T {
        self.rmw_ptr(order, |p| p.wrapping_byte_sub(val))
    }

    /// Bitwise or of the address with `val`, keeping provenance.
    #[track_caller]
    pub fn fetch_or(&self, val: usize, order: Ordering) -> *mut T {
        self.rmw_ptr(order, |p| with_addr(p, p as usize | val))
    }

    /// Bitwise and of the address with `val`, keeping provenance.
    #[track_caller]
    pub fn fetch_and(&self, val: usize, order: Ordering) -> *mut T {
        self.rmw_ptr(order, |p| with_addr(p, p as usize & val))
    }

    /// Bitwise xor of the address with `val`, keeping provenance.
    #[track_caller]
    pub fn fetch_xor(&self, val: usize, order: Ordering) -> *mut T {
        self.rmw_ptr(order, |p| with_addr(p, p as usize ^ val))
    }
}

/// `p` moved to address `addr`, keeping its provenance.
fn with_addr<T>(p: *mut T, addr: usize) -> *mut T {
    p.wrapping_byte_add(addr.wrapping_sub(p as usize))
}

impl<T> fmt::Debug for AtomicPtr<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.load(Ordering::Relaxed), f)
    }
}

impl<T> fmt::Pointer for AtomicPtr<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Pointer::fmt(&self.load(Ordering::Relaxed), f)
    }
}

/// loom's extra atomic methods as a trait, so that generic code, and code
/// that must also build against std's atomics (the `kase` facade without
/// its `model` feature implements it for them), can name them. kase's atomics
/// have the same methods inherently; this trait forwards to them.
pub trait AtomicExt {
    /// The type of the value (`usize` for `AtomicUsize`, `*mut T` for
    /// `AtomicPtr<T>`).
    type Value;

    /// Calls `f` with a mutable reference to the value; see
    /// [`AtomicUsize::with_mut`].
    fn with_mut<R>(&mut self, f: impl FnOnce(&mut Self::Value) -> R) -> R;

    /// Loads the value without synchronisation; see
    /// [`AtomicUsize::unsync_load`].
    ///
    /// # Safety
    ///
    /// No store to the location may happen concurrently with the load.
    unsafe fn unsync_load(&self) -> Self::Value;
}

macro_rules! atomic_ext {
    ($([$($g:ident)?] $name:ty, $int:ty;)*) => {$(
        impl$(<$g>)? AtomicExt for $name {
            type Value = $int;

            fn with_mut<R>(&mut self, f: impl FnOnce(&mut $int) -> R) -> R {
                <$name>::with_mut(self, f)
            }

            #[track_caller]
            unsafe fn unsync_load(&self) -> $int {
                // SAFETY: the caller upholds the same contract.
                unsafe { <$name>::unsync_load(self) }
            }
        }
    )*};
}

atomic_ext! {
    [] AtomicBool, bool;
    [] AtomicI8, i8;
    [] AtomicI16, i16;
    [] AtomicI32, i32;
    [] AtomicI64, i64;
    [] AtomicIsize, isize;
    [] AtomicU8, u8;
    [] AtomicU16, u16;
    [] AtomicU32, u32;
    [] AtomicU64, u64;
    [] AtomicUsize, usize;
    [T] AtomicPtr<T>, *mut T;
}

//! loom's `Arc`: std's, with loom's API (`from_std` among it) and kase's
//! leak check.

use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;
use std::pin::Pin;

use kase_rt::__private::{TrackArc, Wrap};

/// loom's `Arc`: a shared, reference-counted value, with loom's methods
/// (`from_std` to convert std's `Arc`, for example one already coerced to
/// `Arc<dyn Trait>`, which this type cannot be coerced to itself).
///
/// Each one made inside a model by [`new`](Arc::new), [`pin`](Arc::pin) or
/// [`from_std`](Arc::from_std) is tracked: one still alive when the
/// execution has ended (a reference cycle, a forgotten one) fails the
/// model as a leak naming where it was made, as loom's does. Its reference
/// count is not modelled: `strong_count`, `get_mut` or `try_unwrap` racing
/// with another thread's `clone` or drop are not explored as separate
/// interleavings.
///
/// ```
/// use kase_loom as loom;
/// use loom::sync::Arc;
///
/// loom::model(|| {
///     let one = Arc::new(1);
///     let shared: Arc<dyn Fn() -> i32 + Send + Sync> =
///         Arc::from_std(std::sync::Arc::new(|| 7));
///     assert_eq!(*one + shared(), 8);
/// });
/// ```
pub struct Arc<T: ?Sized>(std::sync::Arc<T>);

impl<T> Arc<T> {
    /// Constructs a new `Arc<T>`.
    #[track_caller]
    pub fn new(value: T) -> Arc<T> {
        Arc::tracked(std::sync::Arc::new(value))
    }

    /// Constructs a new `Pin<Arc<T>>`.
    #[track_caller]
    pub fn pin(data: T) -> Pin<Arc<T>> {
        // SAFETY: the value lives in the `Arc`'s allocation and never moves
        // out of it while pinned: this type offers no way to move it out but
        // `try_unwrap`, which needs the `Arc` itself, not the `Pin`.
        unsafe { Pin::new_unchecked(Arc::new(data)) }
    }

    /// The inner value, if the `Arc` has exactly one strong reference.
    pub fn try_unwrap(this: Arc<T>) -> Result<T, Arc<T>> {
        std::sync::Arc::try_unwrap(this.0).map_err(Arc)
    }
}

impl<T: ?Sized> Arc<T> {
    /// Converts a `std::sync::Arc` with no other reference into a loom
    /// `Arc`.
    ///
    /// # Panics
    ///
    /// If `std` has other strong or weak references, as loom does.
    #[track_caller]
    pub fn from_std(mut std: std::sync::Arc<T>) -> Self {
        assert!(
            std::sync::Arc::get_mut(&mut std).is_some(),
            "Arc provided to `from_std` is not unique"
        );
        Arc::tracked(std)
    }

    /// `std` wrapped, and tracked for leaks when a model runs.
    #[track_caller]
    fn tracked(std: std::sync::Arc<T>) -> Self {
        Arc(Wrap::new(std).__kase_track())
    }

    /// The number of strong references to this allocation.
    pub fn strong_count(this: &Self) -> usize {
        std::sync::Arc::strong_count(&this.0)
    }

    /// Increments the strong count of the `Arc` behind `ptr`.
    ///
    /// # Safety
    ///
    /// As [`std::sync::Arc::increment_strong_count`]: `ptr` came from
    /// [`into_raw`](Arc::into_raw) and its `Arc` is still alive.
    pub unsafe fn increment_strong_count(ptr: *const T) {
        // SAFETY: the caller's contract is std's.
        unsafe { std::sync::Arc::increment_strong_count(ptr) }
    }

    /// Decrements the strong count of the `Arc` behind `ptr`.
    ///
    /// # Safety
    ///
    /// As [`std::sync::Arc::decrement_strong_count`]: `ptr` came from
    /// [`into_raw`](Arc::into_raw) and the count is at least 1.
    pub unsafe fn decrement_strong_count(ptr: *const T) {
        // SAFETY: the caller's contract is std's.
        unsafe { std::sync::Arc::decrement_strong_count(ptr) }
    }

    /// A mutable reference to the value, if this is its only `Arc` (the
    /// leak check's `Weak` aside).
    pub fn get_mut(this: &mut Self) -> Option<&mut T> {
        kase_rt::__private::arc_get_mut(&mut this.0)
    }

    /// Whether the two point to the same allocation.
    pub fn ptr_eq(this: &Self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&this.0, &other.0)
    }

    /// Consumes the `Arc`, returning the pointer to its value (see
    /// [`from_raw`](Arc::from_raw)).
    pub fn into_raw(this: Self) -> *const T {
        std::sync::Arc::into_raw(this.0)
    }

    /// A pointer to the value.
    pub fn as_ptr(this: &Self) -> *const T {
        std::sync::Arc::as_ptr(&this.0)
    }

    /// The `Arc` that [`into_raw`](Arc::into_raw) returned `ptr` of.
    ///
    /// # Safety
    ///
    /// As [`std::sync::Arc::from_raw`].
    pub unsafe fn from_raw(ptr: *const T) -> Self {
        // SAFETY: the caller's contract is std's.
        Arc(unsafe { std::sync::Arc::from_raw(ptr) })
    }
}

impl<T: ?Sized> Deref for Arc<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: ?Sized> Clone for Arc<T> {
    fn clone(&self) -> Self {
        Arc(std::sync::Arc::clone(&self.0))
    }
}

impl<T: Default> Default for Arc<T> {
    #[track_caller]
    fn default() -> Self {
        Arc::new(T::default())
    }
}

impl<T> From<T> for Arc<T> {
    #[track_caller]
    fn from(value: T) -> Self {
        Arc::new(value)
    }
}

impl<T: ?Sized> AsRef<T> for Arc<T> {
    fn as_ref(&self) -> &T {
        &self.0
    }
}

impl<T: ?Sized> Borrow<T> for Arc<T> {
    fn borrow(&self) -> &T {
        &self.0
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for Arc<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

//! `loom::alloc`: allocation functions with loom's signatures. They are
//! std's allocator here: an allocation a model leaks is not reported yet.

pub use std::alloc::Layout;

/// Allocates memory as described by `layout` (std's `alloc`).
///
/// # Safety
///
/// As [`std::alloc::alloc`]: `layout` has a non-zero size.
pub unsafe fn alloc(layout: Layout) -> *mut u8 {
    // SAFETY: the caller's promise.
    unsafe { std::alloc::alloc(layout) }
}

/// Allocates zeroed memory as described by `layout` (std's `alloc_zeroed`).
///
/// # Safety
///
/// As [`std::alloc::alloc_zeroed`]: `layout` has a non-zero size.
pub unsafe fn alloc_zeroed(layout: Layout) -> *mut u8 {
    // SAFETY: the caller's promise.
    unsafe { std::alloc::alloc_zeroed(layout) }
}

/// Frees memory allocated with `layout` (std's `dealloc`).
///
/// # Safety
///
/// As [`std::alloc::dealloc`]: `ptr` came from [`alloc`] or
/// [`alloc_zeroed`] with the same `layout`, and is freed once.
pub unsafe fn dealloc(ptr: *mut u8, layout: Layout) {
    // SAFETY: the caller's promise.
    unsafe { std::alloc::dealloc(ptr, layout) }
}

/// loom's `Track`: a value loom would check for leaks (here just the value).
#[derive(Debug)]
pub struct Track<T>(T);

impl<T> Track<T> {
    /// Tracks `value`.
    pub fn new(value: T) -> Self {
        Track(value)
    }

    /// The value.
    pub fn get_ref(&self) -> &T {
        &self.0
    }

    /// The value, mutably.
    pub fn get_mut(&mut self) -> &mut T {
        &mut self.0
    }

    /// Stops tracking; the value.
    pub fn into_inner(self) -> T {
        self.0
    }
}

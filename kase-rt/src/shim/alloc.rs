//! `alloc`, `alloc_zeroed` and `dealloc` with std's signatures, tracked in a
//! model (`exec/heap.rs`): freeing a block is a write to every atomic, cell
//! and lock in it, so an access that races with the free is a data race and
//! an access after it a use after free; a block never freed is a leak.
//!
//! Outside a model they are std's functions.

use std::panic::Location;

pub use std::alloc::Layout;

use crate::exec::{self, heap::Release};

/// Allocates memory as described by `layout`, as [`std::alloc::alloc`]; in
/// a model the block is tracked: kase reports it if it is never freed, and
/// any use of what it holds after [`dealloc`].
///
/// ```
/// # extern crate kase_rt as kase;
/// use kase::alloc::{alloc, dealloc, Layout};
/// use kase::sync::atomic::{AtomicUsize, Ordering};
///
/// let report = kase::Builder::new().explore(|| {
///     let layout = Layout::new::<AtomicUsize>();
///     // SAFETY: the layout is not zero-sized; the block holds an atomic,
///     // written before use and freed once.
///     unsafe {
///         let counter = alloc(layout).cast::<AtomicUsize>();
///         counter.write(AtomicUsize::new(0));
///         (*counter).fetch_add(1, Ordering::Relaxed);
///         dealloc(counter.cast(), layout);
///         // Reading it now is a use after free, which kase reports
///         // (the memory is still there until the execution ends).
///         (*counter).load(Ordering::Relaxed);
///     }
/// });
/// assert_eq!(report.failure().unwrap().kind(), kase::FailureKind::UseAfterFree);
/// ```
///
/// # Safety
///
/// As [`std::alloc::alloc`]: `layout` has a non-zero size.
#[track_caller]
pub unsafe fn alloc(layout: Layout) -> *mut u8 {
    // SAFETY: the caller's promise.
    let ptr = unsafe { std::alloc::alloc(layout) };
    track(ptr, layout, Location::caller());
    ptr
}

/// Allocates zeroed memory as described by `layout`, as
/// [`std::alloc::alloc_zeroed`]; tracked in a model like [`alloc`].
///
/// # Safety
///
/// As [`std::alloc::alloc_zeroed`]: `layout` has a non-zero size.
#[track_caller]
pub unsafe fn alloc_zeroed(layout: Layout) -> *mut u8 {
    // SAFETY: the caller's promise.
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
    track(ptr, layout, Location::caller());
    ptr
}

/// Frees memory allocated with `layout`, as [`std::alloc::dealloc`]. In a
/// model, a block from [`alloc`] stays allocated until the execution ends
/// (so no other allocation reuses its address), and every later access to
/// what it held is reported as a use after free.
///
/// # Safety
///
/// As [`std::alloc::dealloc`]: `ptr` came from [`alloc`] or
/// [`alloc_zeroed`] with the same `layout`, and is freed once.
#[track_caller]
pub unsafe fn dealloc(ptr: *mut u8, layout: Layout) {
    let location = Location::caller();
    let release = if exec::in_model() {
        exec::with(|e| e.freed(ptr, location))
    } else {
        Release::Now
    };
    if release == Release::Now {
        // SAFETY: the caller's promise; a tracked block is released when the
        // execution ends instead.
        unsafe { std::alloc::dealloc(ptr, layout) }
    }
}

fn track(ptr: *mut u8, layout: Layout, location: &'static Location<'static>) {
    if !ptr.is_null() && exec::in_model() {
        exec::with(|e| e.allocated(ptr, layout, location));
    }
}

//! `alloc`, `alloc_zeroed` and `dealloc` with std's signatures, tracked in a
//! model (`exec/heap.rs`): freeing a block is a write to every atomic, cell
//! and lock in it, so an access that races with the free is a data race and
//! an access after it a use after free; a block never freed is a leak.
//!
//! Outside a model they are std's functions.

use std::alloc::{GlobalAlloc, System};
use std::panic::Location;

pub use std::alloc::Layout;

use crate::exec::heap::{mode, slow_blocks};
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

/// A global allocator that tracks, in a model, what the model's own code
/// allocates through std (a `Box`, `Vec`, `Arc`, `String`, …) as
/// [`alloc`] does: dropping a `Box` that holds an atomic, a cell or a lock
/// is a write to it, so an access racing with the drop is a
/// [`DataRace`](crate::FailureKind::DataRace) and one after it a
/// [`UseAfterFree`](crate::FailureKind::UseAfterFree); such a block never
/// freed is a [`Leak`](crate::FailureKind::Leak) (a `Box` given to
/// `Box::leak` or kept in a `static` too, as for `Arc`s). Blocks that hold
/// no object the model used are never reported (a `String` a test keeps
/// in a `static` is none of kase's business).
///
/// Install it in the test binary (one global allocator per binary); outside
/// a model, and for kase's own allocations, it is std's
/// [`System`] allocator, except that while an exploration runs, up to 16
/// freed blocks of over-aligned or large layouts (which `System` is slow
/// to serve) are kept on its thread for the next allocations of exactly
/// those layouts, and released when it ends. `kase-loom` installs it
/// unless its default feature `std-heap` is off.
///
/// ```
/// # extern crate kase_rt as kase;
/// use kase::sync::atomic::{AtomicUsize, Ordering};
/// use kase::{thread, Builder, FailureKind};
///
/// #[global_allocator]
/// static ALLOCATOR: kase::alloc::TrackingAllocator = kase::alloc::TrackingAllocator;
///
/// # fn main() {
/// let report = Builder::new().explore(|| {
///     let counter = Box::new(AtomicUsize::new(0));
///     let addr = &*counter as *const AtomicUsize as usize;
///     // SAFETY: not for kase: whether this use is ordered before the
///     // `Box`'s drop is what it checks (the memory stays valid meanwhile).
///     let t = thread::spawn(move || unsafe { &*(addr as *const AtomicUsize) }.load(Ordering::SeqCst));
///     drop(counter); // Bug: the thread may still read it.
///     let _ = t.join();
/// });
/// let kind = report.failure().unwrap().kind();
/// assert!(matches!(kind, FailureKind::DataRace | FailureKind::UseAfterFree));
/// # }
/// ```
///
/// A freed block stays allocated until the execution ends (no other
/// allocation takes its address, so a late access is always found); std's
/// allocator names no caller, so a report names the thread's latest step
/// and, for a free, the frames of the call stack in the user's code.
#[derive(Clone, Copy, Debug, Default)]
pub struct TrackingAllocator;

// SAFETY: every block comes from `System` with the layout asked for and goes
// back to it with that layout: `dealloc` releases at once, or the model's
// `Heap` keeps a freed block, hands it out again only for exactly its
// layout (`mode::reuse`, which takes it out of the heap) and releases it
// when the execution ends (through
// `std::alloc::dealloc`, which is this allocator outside a model's code).
// `realloc` in a model is `alloc`, a copy and `dealloc`, as `GlobalAlloc`'s
// default; the bookkeeping never unwinds (it aborts on out-of-memory, as
// any allocation) and its own allocations pass straight to `System`
// (`Mode::Hook`).
unsafe impl GlobalAlloc for TrackingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if let Some(ptr) = mode::reuse(layout) {
            return ptr;
        }
        let ptr = match slow_blocks::take(layout) {
            Some(ptr) => ptr,
            // SAFETY: the caller's promise (a layout of non-zero size).
            None => unsafe { System.alloc(layout) },
        };
        mode::on_alloc(ptr, layout);
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if let Some(ptr) = mode::reuse(layout) {
            // SAFETY: a block of `layout`, allocated and not in use.
            unsafe { std::ptr::write_bytes(ptr, 0, layout.size()) };
            return ptr;
        }
        let ptr = match slow_blocks::take(layout) {
            Some(ptr) => {
                // SAFETY: as above.
                unsafe { std::ptr::write_bytes(ptr, 0, layout.size()) };
                ptr
            }
            // SAFETY: as for `alloc`.
            None => unsafe { System.alloc_zeroed(layout) },
        };
        mode::on_alloc(ptr, layout);
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // `ptr` came from this allocator (so from `System`) with `layout`
        // (the caller's promise), as `keep` requires.
        if mode::on_dealloc(ptr) == Release::Now && !slow_blocks::keep(ptr, layout) {
            // SAFETY: the caller's promise, as above.
            unsafe { System.dealloc(ptr, layout) }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if !mode::tracking() {
            // SAFETY: the caller's promise, passed on.
            return unsafe { System.realloc(ptr, layout, new_size) };
        }
        // In a model's code, a new block and a free of the old one: the old
        // block's objects are checked as at any free.
        // SAFETY: the caller promises that `new_size`, rounded up to the
        // alignment, does not overflow `isize`.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        // SAFETY: `new_size` is not zero (the caller's promise).
        let new = unsafe { self.alloc(new_layout) };
        if !new.is_null() {
            // SAFETY: both blocks are valid for the smaller size and distinct
            // (the old one is still allocated); the old one is freed once.
            unsafe {
                std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                self.dealloc(ptr, layout);
            }
        }
        new
    }
}

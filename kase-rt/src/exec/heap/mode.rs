//! Whose code runs on this OS thread, for `kase::alloc::TrackingAllocator`:
//! it tracks the allocations a model thread's own code makes (a `Box`, a
//! `Vec`, an `Arc`), never kase's.
//!
//! A model thread's code runs only inside its coroutine
//! (`continuation.rs` marks it [`Mode::Model`] there); kase's runtime code
//! inside it runs under the execution's borrow (`exec::with`), which the
//! allocator finds taken and so leaves alone, and the allocator's own
//! bookkeeping under [`Mode::Hook`], so that the allocations it makes
//! itself pass through. (Marking `with` itself would change the frames of
//! the shims inlined into user code, which spin fingerprints hash.)
//! Shim code between two `with` calls counts as the model's: what it
//! allocates (a spawned closure's box) belongs to the model's values.

use std::alloc::Layout;
use std::cell::Cell;

use super::Release;

/// Whose code runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// kase's (the explorer, the driver, a shim under the execution's
    /// borrow), or no model at all.
    Kase,
    /// A model thread's.
    Model,
    /// The tracking allocator's bookkeeping.
    Hook,
}

thread_local! {
    // A constant initialiser and no destructor: reading it never allocates,
    // so the allocator may read it, also while the thread's locals are torn
    // down.
    static MODE: Cell<Mode> = const { Cell::new(Mode::Kase) };
}

/// Puts the previous mode back when dropped (also on unwind).
#[must_use]
pub(crate) struct ModeGuard(Mode);

impl Drop for ModeGuard {
    fn drop(&mut self) {
        MODE.with(|m| m.set(self.0));
    }
}

impl Mode {
    /// Runs in this mode until the guard drops.
    pub(crate) fn enter(self) -> ModeGuard {
        ModeGuard(MODE.with(|m| m.replace(self)))
    }
}

/// Whether a model thread's own code runs: its allocations are tracked.
pub(crate) fn tracking() -> bool {
    MODE.with(Cell::get) == Mode::Model
}

/// std's allocator gave `ptr` for `layout`.
pub(crate) fn on_alloc(ptr: *mut u8, layout: Layout) {
    if ptr.is_null() || !tracking() {
        return;
    }
    let _hook = Mode::Hook.enter();
    crate::exec::try_with(|e| e.std_allocated(ptr, layout));
}

/// A block for `layout` that the model freed and kase kept, handed out
/// again (as std's allocator would hand it out), if there is one.
pub(crate) fn reuse(layout: Layout) -> Option<*mut u8> {
    if !tracking() {
        return None;
    }
    let _hook = Mode::Hook.enter();
    crate::exec::try_with(|e| e.std_reuse(layout)).flatten()
}

/// std's allocator is asked to free `ptr`: whether to release it now.
pub(crate) fn on_dealloc(ptr: *mut u8) -> Release {
    if !tracking() {
        return Release::Now;
    }
    let _hook = Mode::Hook.enter();
    crate::exec::try_with(|e| e.std_freed(ptr)).unwrap_or(Release::Now)
}

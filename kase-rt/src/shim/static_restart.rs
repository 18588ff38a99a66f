//! Restarting the data of a `static Mutex` / `static RwLock` with every
//! execution.
//!
//! A lock's own state lives in the execution and restarts by itself, but
//! the data it guards lives in the `static`. `#[kase::test]` and
//! `#[kase::instrument]` rewrite `static X: Mutex<T> = <init>;` into
//! `<init>.__kase_static(|lock| lock.__kase_reset(<init>))`: the static's
//! initializer is a constant expression, so evaluating it again gives the
//! initial value. On the static's first use in each execution the shim calls
//! that function, and `__kase_reset` swaps the fresh value in. It does so
//! only when called that way ([`run`] marks the lock on this thread), so
//! the hidden method is harmless when called from anywhere else.

use std::cell::{Cell, UnsafeCell};

thread_local! {
    /// The lock whose restart function is running on this thread.
    static RESTARTING: Cell<*const ()> = const { Cell::new(std::ptr::null()) };
}

/// Runs `lock`'s restart function, if it has one, with `lock` marked as
/// restarting on this thread.
pub(crate) fn run<L: ?Sized>(lock: &L, restart: Option<fn(&L)>) {
    let Some(restart) = restart else {
        return;
    };
    let me = std::ptr::from_ref(lock).cast::<()>();
    let previous = RESTARTING.with(|r| r.replace(me));
    restart(lock);
    RESTARTING.with(|r| r.set(previous));
}

/// Whether `lock`'s restart function is running on this thread (called by
/// [`run`] at the lock's first use in an execution).
pub(crate) fn allowed<L: ?Sized>(lock: &L) -> bool {
    let me = std::ptr::from_ref(lock).cast::<()>();
    RESTARTING.with(|r| r.get() == me)
}

/// Puts `fresh` in place of `data` if kase is restarting `lock` ([`run`])
/// and `try_lock` takes the real lock; the previous data is dropped after
/// `unlock` (its `Drop` may use shims).
///
/// # Safety
///
/// `data` must be the data `lock` guards; `try_lock` must take `lock`'s real
/// lock exclusively when it returns true, and `unlock` release it.
pub(crate) unsafe fn swap_in<L: ?Sized, T>(
    lock: &L,
    data: &UnsafeCell<T>,
    fresh: T,
    try_lock: impl FnOnce() -> bool,
    unlock: impl FnOnce(),
) {
    if !allowed(lock) || !try_lock() {
        return;
    }
    // SAFETY: we hold the real lock exclusively (the caller's promise), and
    // this is the lock's first use in the current execution (`allowed`), so
    // no guard of this execution exists either: nothing else can be
    // accessing the data.
    let old = std::mem::replace(unsafe { &mut *data.get() }, fresh);
    unlock();
    drop(old);
}

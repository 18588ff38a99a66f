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

use std::cell::Cell;

thread_local! {
    /// The lock whose restart function is running on this thread.
    static RESTARTING: Cell<*const ()> = const { Cell::new(std::ptr::null()) };
}

/// Runs `restart(lock)` with `lock` marked as restarting on this thread.
pub(crate) fn run<L: ?Sized>(lock: &L, restart: fn(&L)) {
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

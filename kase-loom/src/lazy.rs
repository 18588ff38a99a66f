//! The values of [`lazy_static!`](crate::lazy_static): initialised anew in
//! every execution and, as loom does, dropped when the model's main closure
//! returns (before the leak check: a lazy static holding an `Arc` or a
//! `Box` is no leak). Not part of loom's API.

use std::cell::RefCell;

use kase_rt::sync::LazyLock;

/// A static's value, to drop.
trait DropValue {
    /// # Safety
    ///
    /// As [`LazyLock::__drop_value`].
    unsafe fn drop_value(&self);
}

impl<T> DropValue for LazyLock<T> {
    unsafe fn drop_value(&self) {
        // SAFETY: by the caller.
        unsafe { LazyLock::__drop_value(self) }
    }
}

/// Where the current execution of a model is, for its lazy statics.
enum Phase {
    /// No model runs on this OS thread.
    Outside,
    /// The main closure runs: the statics forced so far, in order.
    Running(Vec<&'static dyn DropValue>),
    /// The main closure returned and the statics were dropped.
    Dropped,
}

std::thread_local! {
    /// Model threads are coroutines on the OS thread that checks the model,
    /// so this is the model's.
    static PHASE: RefCell<Phase> = const { RefCell::new(Phase::Outside) };
}

/// Starts an execution of the main closure: no static is forced yet (one
/// an earlier execution forced starts anew, and that execution's value, if
/// it ended early, is left as a `static`'s is).
pub(crate) fn begin_execution() {
    PHASE.with(|p| *p.borrow_mut() = Phase::Running(Vec::new()));
}

/// The main closure returned: drops what this execution forced, the last
/// forced first (it may use the earlier ones), as loom drops lazy statics.
pub(crate) fn end_execution() {
    loop {
        // Not borrowed while a value drops: its `Drop` may force a static.
        let next = PHASE.with(|p| match &mut *p.borrow_mut() {
            Phase::Running(forced) => forced.pop(),
            _ => None,
        });
        let Some(value) = next else { break };
        // SAFETY: it was forced in this execution (`force` registers only
        // after `LazyLock::force` returned), it is registered once, and
        // `force` refuses it from now on.
        unsafe { value.drop_value() };
    }
    PHASE.with(|p| *p.borrow_mut() = Phase::Dropped);
}

/// Leaves the model (the OS thread checks none any more).
pub(crate) fn leave() {
    PHASE.with(|p| *p.borrow_mut() = Phase::Outside);
}

/// The value of `lazy`, initialised in this execution if it was not (what
/// `Deref` of a `lazy_static!` does).
///
/// # Panics
///
/// After the model's main closure returned: loom drops lazy statics there.
#[doc(hidden)]
#[track_caller]
pub fn force<T: Send + Sync + 'static>(lazy: &'static LazyLock<T>, name: &str) -> &'static T {
    let dropped = PHASE.with(|p| matches!(*p.borrow(), Phase::Dropped));
    assert!(
        !dropped,
        "kase-loom: lazy static `{name}` used after the model's main closure returned: loom drops \
         lazy statics there (join the threads that use it before the closure returns)"
    );
    let value = LazyLock::force(lazy);
    PHASE.with(|p| {
        if let Phase::Running(forced) = &mut *p.borrow_mut() {
            let this: &'static dyn DropValue = lazy;
            if !forced.iter().any(|f| std::ptr::addr_eq(*f, this)) {
                forced.push(this);
            }
        }
    });
    value
}

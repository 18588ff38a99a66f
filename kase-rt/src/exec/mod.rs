//! One execution of a model: threads as continuations, objects, the event log
//! with dependence clocks, and the driver loop.
//!
//! Shims call [`visible`] for every visible operation; the explorer runs
//! executions through [`executor::Executor`], chooses threads as a
//! [`Scheduler`], and only ever sees [`Action`]s.

pub mod action;
pub(crate) mod arcs;
pub(crate) mod call;
pub mod clock;
pub(crate) mod continuation;
pub mod dependence;
pub(crate) mod driver;
pub(crate) mod error;
pub(crate) mod execution;
pub(crate) mod executor;
pub mod gate;
pub mod hb;
pub mod heap;
pub(crate) mod local;
pub mod object;
pub(crate) mod overflow;
pub mod panic;
pub(crate) mod peek;
pub(crate) mod scheduler;
pub(crate) mod spin;
pub(crate) mod thread;
pub(crate) mod unsync;
pub(crate) mod watchdog;
pub(crate) mod weak;

use std::cell::RefCell;
use std::panic::Location;

pub(crate) use action::ByObject;
pub use action::{Action, ObjectIdx, ObjectKind, OpKind, ThreadIdx};
pub(crate) use arcs::Alive;
pub use call::Call;
pub(crate) use call::{call, call_at, user_code};
pub use execution::Execution;
pub(crate) use execution::{Exploring, Unmodified};
pub use hb::CellAccess;
pub(crate) use scheduler::{ChoicePoint, Outcome, Scheduler, Stop, WeakPoint};
pub use scheduler::{Event, Fault};
pub(crate) use spin::fingerprint::CallerState;

scoped_tls::scoped_thread_local!(static EXECUTION: RefCell<Execution>);

/// Whether the calling code runs inside a model execution (on this OS thread).
/// `v` emptied, its capacity kept: an execution's buffer handed on to the
/// next one (its elements are dropped now).
pub(crate) fn cleared<T>(mut v: Vec<T>) -> Vec<T> {
    v.clear();
    v
}

pub(crate) fn in_model() -> bool {
    EXECUTION.is_set()
}

/// Runs `f` on the current execution. Must not be called re-entrantly, and
/// never across a suspension.
pub(crate) fn with<R>(f: impl FnOnce(&mut Execution) -> R) -> R {
    EXECUTION.with(|e| f(&mut e.borrow_mut()))
}

/// Runs `f` on the current execution if there is one and nothing borrows it
/// (for the tracking allocator, which may be called anywhere).
pub(crate) fn try_with<R>(f: impl FnOnce(&mut Execution) -> R) -> Option<R> {
    if !EXECUTION.is_set() {
        return None;
    }
    EXECUTION.with(|e| e.try_borrow_mut().ok().map(|mut e| f(&mut e)))
}

/// The object behind `handle` in the current execution, registered on its
/// first use in it; only then, and after the execution's borrow is released,
/// `on_first_use` runs, so it may run user code (a `static` lock's
/// initializer, the old data's `Drop`: `shim/static_restart.rs`).
pub(crate) fn object_then(
    handle: &object::ObjectHandle,
    detail: impl FnOnce() -> object::ObjectDetail,
    on_first_use: impl FnOnce(),
) -> ObjectIdx {
    let mut first_use = false;
    let object = with(|e| e.object(handle, detail, || first_use = true));
    if first_use {
        on_first_use();
    }
    object
}

/// How a guard reaches the data its lock guards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DataAccess {
    /// A shared reference to an `RwLock`'s data, which must be `Sync` for
    /// the lock to be shared: a read (what changes through `&T` there is an
    /// atomic or a lock of its own, with events of its own).
    Read,
    /// A shared reference to a `Mutex`'s data, which needs only `Send`: a
    /// `Cell`, a `RefCell` or a `OnceCell` inside may change through it, and
    /// kase cannot tell (no stable bound says "no interior mutability"), so
    /// for the order of sections it counts as a write. For spinning it is a
    /// read.
    MayWrite,
    /// A mutable reference: a write.
    Write,
}

/// An access to the data `lock` (a `Mutex` or an `RwLock`) guards, through
/// its guard. Never an event: only a holder of the lock reaches the data, so
/// the lock's own events order every access to it. With critical-section
/// peeking a write (or [`DataAccess::MayWrite`]) inside a pure part of
/// `lock` makes the part end with a write of the lock
/// ([`OpKind::PeekWriteUnlock`]), which orders it against every other
/// section of the lock; a pure part that only reads the data commutes with
/// the others that only read it.
pub(crate) fn data_access(lock: ObjectIdx, access: DataAccess) {
    with(|e| {
        if access == DataAccess::Write {
            // Not an event, but it ends any spin (exec/spin).
            e.note_unseen_write();
        }
        e.note_data_access(lock, access);
    });
}

/// A visible operation of the current model thread: a scheduling point (the
/// scheduler may run other threads first), then `effect` runs atomically and
/// the event is recorded. `effect` returns the result and a value for reports.
pub(crate) fn visible<R>(
    object: Option<ObjectIdx>,
    kind: OpKind,
    location: &'static Location<'static>,
    effect: impl FnOnce(&mut Execution, &Action) -> (R, Option<u64>),
) -> R {
    let suspender = with(|e| {
        let suspender = e.announce(object, kind, location)?;
        // A switch it may make: made here when it chose this thread.
        Some((suspender, e.step_in_place()))
    });
    match suspender {
        Some((_, true)) => {}
        // SAFETY: the pointer was set by this thread's body and stays valid
        // until the body returns; we are running inside that body.
        Some((suspender, false)) => unsafe { (*suspender).suspend() },
        None => wait_in_place(),
    }
    with(|e| e.perform(effect))
}

/// If the running thread's announced operation waits while it cannot switch
/// away (it unwinds from a panic: a destructor joins a worker, takes a lock
/// another thread holds), the other threads run in its place until it can
/// go on (`driver.rs`, `Settle`); if none can get it there, that is a
/// deadlock. Before, the operation went ahead as if it could, and a join
/// handed the destructor no value to unwrap: the process aborted.
fn wait_in_place() {
    let settler = with(|e| e.settler.filter(|_| e.waits_in_place()));
    if let Some(settler) = settler {
        // SAFETY: the driver sets `settler` while it runs the execution's
        // threads and clears it before what it points to goes away; this
        // operation is made by one of those threads.
        unsafe { (*settler).wait_in_place() };
        with(Execution::deadlock_unless_it_can_run);
    }
}

/// Whether the calling thread is unwinding from a panic: in a model, the
/// running model thread (`Execution::panicking`), outside `std`'s answer.
pub(crate) fn panicking() -> bool {
    if in_model() {
        with(|e| e.panicking())
    } else {
        std::thread::panicking()
    }
}

/// Before a join of `thread` while an early stop tears the execution down
/// (operations never wait then): lets `thread` run on from where it
/// stopped (`driver.rs`, `Settle`), so that a destructor that stops and
/// joins it gets its value. Otherwise nothing.
pub(crate) fn settle(thread: ThreadIdx) {
    let settler = with(|e| {
        let stuck = e.teardown && thread != e.current && !e.is_finished(thread);
        e.settler.filter(|_| stuck)
    });
    if let Some(settler) = settler {
        // SAFETY: the driver sets `settler` while it runs the execution's
        // threads and clears it before what it points to goes away; this
        // join is made by one of those threads.
        unsafe { (*settler).settle(thread) };
    }
}

/// A yield (`yield_now`, `spin_loop`, `sleep`) at `location`: a scheduling
/// point where a spinning thread may wait (`exec/spin`). `caller` is the
/// yielding frame's state, captured by an `#[inline(always)]` shim.
pub(crate) fn yield_point(
    caller: &spin::fingerprint::CallerState,
    location: &'static Location<'static>,
) {
    with(|e| e.set_fingerprint(caller, location));
    visible(None, OpKind::Yield, location, |_, _| ((), None));
}

//! The runtime of kase (the `kase` crate of its repository, not the
//! unrelated crates.io package of that name): instrumented drop-in
//! replacements for std's synchronisation primitives, a cooperative scheduler
//! that runs one model thread at a time, and the explorers that run a model
//! once per behaviour.
//!
//! Most users depend on the `kase` facade crate instead, which re-exports this
//! crate and adds `#[kase::test]`.
//!
//! Layout (data flows one way): `shim` (what user code calls) → `exec` (one
//! execution: threads, objects, events) → `explore` (which schedule next) →
//! `report` (failures and schedules).
//!
//! ```
//! # extern crate kase_rt as kase;
//! use kase::sync::atomic::{AtomicUsize, Ordering};
//! use kase::sync::Arc;
//! use kase::thread;
//!
//! // A lost update: both threads may read 0 before either writes.
//! let report = kase::Builder::new().explore(|| {
//!     let n = Arc::new(AtomicUsize::new(0));
//!     let m = n.clone();
//!     let t = thread::spawn(move || {
//!         let v = m.load(Ordering::SeqCst);
//!         m.store(v + 1, Ordering::SeqCst);
//!     });
//!     let v = n.load(Ordering::SeqCst);
//!     n.store(v + 1, Ordering::SeqCst);
//!     t.join().unwrap();
//!     assert_eq!(n.load(Ordering::SeqCst), 2, "lost update");
//! });
//! let failure = report.failure().expect("kase finds the lost update");
//! assert_eq!(failure.kind(), kase::FailureKind::Panic);
//! assert!(failure.message().unwrap().contains("lost update"));
//! ```
//!
//! ## Feature `tracing`
//!
//! Off by default. With it, every exploration also emits [`tracing`] events
//! under target `kase`, carrying the data of the progress lines and of the
//! summary line, and one event per failure found, for programs and test
//! harnesses that subscribe:
//!
//! | event name | level | when | fields |
//! |---|---|---|---|
//! | `progress` | `DEBUG` | every 3 s of an exploration, the first after 1 s (whatever `KASE_PROGRESS` says: it governs stderr only) | `test`, `executions`, `per_second`, `sleep_set_blocked`, `depth`, `max_depth`, `elapsed_secs` |
//! | `summary` | `INFO` | once at the end of every exploration | `test`, `executions`, `per_second`, `sleep_set_blocked`, `max_depth`, `elapsed_secs`, `complete`, `outcome` (`complete`, `incomplete` or `failure`), `stopped_by`, `failure` (its kind), `replayed` |
//! | `failure` | `WARN` | once per failure an exploration reports, after it was simplified and saved | `test`, `kind`, `schedule`, `panic_message`, `steps`, `preemptions`, `regression_file`, `saved_to`, `replay_command`, `report` (the whole human report) |
//!
//! The message of a `progress` or `summary` event is the text of the
//! corresponding stderr line without its `kase [test]:` label (that is the
//! `test` field: the full name given by `#[kase::test]` or
//! [`Builder::name`]); a `failure` event's is `found a <kind>: <headline>`,
//! the line a regression file keeps. Fields without a value (no name,
//! no budget hit, no panic message, ...) are absent. The events are emitted
//! on the thread that called `explore`/`check`, so a subscriber installed
//! for that thread alone sees its exploration's events. Without the feature
//! no `tracing` is compiled.
//!
//! [`tracing`]: https://docs.rs/tracing

mod builder;
mod exec;
mod explore;
mod fast_hash;
mod report;
mod settings;
mod shim;
mod stderr;

pub use builder::{model, Builder};
pub use explore::{Alternatives, GraphExplorer, MemoryModel, Strategy};
pub use report::{Failure, FailureKind, Persist, Report, Schedule, ScheduleParseError};
pub use settings::{DEFAULT_MAX_STEPS, DEFAULT_MINIMIZE, DEFAULT_STACK_SIZE, DEFAULT_WATCHDOG};

/// Drop-in replacements for `std::sync`.
///
/// [`Arc`](sync::Arc), [`Weak`](sync::Weak), [`LockResult`](sync::LockResult),
/// [`PoisonError`](sync::PoisonError), [`TryLockError`](sync::TryLockError)
/// and [`TryLockResult`](sync::TryLockResult) are std's own types, re-exported: every std method is
/// there, and `Arc<dyn Trait>` coercions work. `Arc`'s reference counts are
/// not modelled: cloning or dropping an `Arc` is not a visible operation and
/// adds no interleavings, so code whose outcome depends on the counts
/// (`Arc::strong_count`, `get_mut`, `try_unwrap` or `into_inner` racing with
/// another thread's `drop`) is explored only in the orders the visible
/// operations around it produce. `Arc::new` and `Arc::new_cyclic` calls in
/// code that `#[kase::test]` or `#[kase::instrument]` rewrote are tracked:
/// an `Arc` they created that is still alive when every thread has finished
/// (a reference cycle) is a [`FailureKind::Leak`].
pub mod sync {
    pub use crate::shim::barrier::{Barrier, BarrierWaitResult};
    pub use crate::shim::condvar::{Condvar, WaitTimeoutResult};
    pub use crate::shim::lazy_lock::LazyLock;
    pub use crate::shim::mutex::{Mutex, MutexGuard};
    #[allow(deprecated)] // std still has it, so rewritten code may name it
    pub use crate::shim::once::ONCE_INIT;
    pub use crate::shim::once::{Once, OnceState};
    pub use crate::shim::once_lock::OnceLock;
    pub use crate::shim::rwlock::{RwLock, RwLockReadGuard, RwLockWriteGuard};
    pub use std::sync::{Arc, LockResult, PoisonError, TryLockError, TryLockResult, Weak};

    /// Drop-in replacement for `std::sync::mpsc`: `channel`, `sync_channel`
    /// (bounded and rendezvous), senders, receiver, iterators, and std's own
    /// error types.
    pub mod mpsc {
        pub use crate::shim::mpsc::*;
    }

    /// Drop-in replacements for `std::sync::atomic`.
    pub mod atomic {
        pub use crate::shim::atomic::*;
    }
}

/// Drop-in replacements for `std::alloc`'s `alloc`, `alloc_zeroed` and
/// `dealloc`, tracked in a model: freeing a block is a write to every atomic,
/// cell and lock in it (an access racing with the free is a data race, one
/// after it a [`FailureKind::UseAfterFree`]), and a block never freed is a
/// [`FailureKind::Leak`]. Allocations made through std (a `Box`, a `Vec`,
/// std's own `alloc`) are tracked the same way in a test binary that
/// installs [`alloc::TrackingAllocator`] as its global allocator.
pub mod alloc {
    pub use crate::shim::alloc::{alloc, alloc_zeroed, dealloc, Layout, TrackingAllocator};
}

/// Drop-in replacement for `std::cell`: kase's `UnsafeCell`, with tracked
/// accesses, and std's own single-threaded cells (`Cell`, `RefCell`,
/// `OnceCell`, `LazyCell` and their guards and errors: they cannot be shared
/// between threads, so there is nothing to model), so that `kase::cell::…`
/// names what `std::cell::…` does whether the `model` feature is on or off.
pub mod cell {
    pub use crate::shim::cell::UnsafeCell;
    pub use std::cell::{
        BorrowError, BorrowMutError, Cell, LazyCell, OnceCell, Ref, RefCell, RefMut,
    };
}

/// Drop-in replacements for `std::thread`.
pub mod thread {
    #[allow(deprecated)] // std still has it, so rewritten code may call it
    pub use crate::shim::park::park_timeout_ms;
    pub use crate::shim::park::{park, park_timeout};
    pub use crate::shim::scope::{scope, Scope, ScopedJoinHandle};
    pub use crate::shim::thread::*;
    pub use crate::shim::thread_builder::Builder;
    pub use crate::shim::thread_local::{AccessError, LocalKey};
}

/// Running futures in a model, like loom's `loom::future`:
/// [`block_on`](future::block_on) polls a future on the current thread,
/// parking it while the future is pending.
pub mod future {
    pub use crate::shim::future::block_on;
}

/// Drop-in replacements for `std::hint`: kase's `spin_loop` (a scheduling
/// point in a model) and std's own `black_box` and `unreachable_unchecked`
/// (hints newer than kase's minimum Rust version are in `std::hint`).
pub mod hint {
    pub use crate::shim::hint::*;
    pub use std::hint::{black_box, unreachable_unchecked};
}

/// Support code for the expansion of `#[kase::test]` and
/// `#[kase::instrument]`, and for kase-loom; not public API (no stability
/// promise).
#[doc(hidden)]
pub mod __private {
    pub use crate::shim::arc::{
        arc_get_mut, ArcGetMut, ArcMakeMut, ArcWeakCount, PassThrough, PassThroughCall, TrackArc,
        Wrap,
    };
    pub use crate::shim::explore::{explore, skip_branch, stop_exploring};
    pub use crate::shim::token::Token;
}

/// The POR explorer's hot paths, for kase's own criterion benchmarks
/// (`kase-bench/benches/engine.rs`); not public API (no stability promise).
#[doc(hidden)]
pub mod __bench {
    pub use crate::explore::UnfoldingProbe;

    /// Explores `model` with optimal POR (peeking off) for `executions`
    /// executions and stops where the explorer searches for alternatives
    /// after the last one.
    pub fn unfold(model: impl Fn() + Sync, executions: u64) -> UnfoldingProbe {
        let settings = crate::Builder::new().peeking(false).settings;
        UnfoldingProbe::new(&settings, &model, executions)
    }
}

/// Entry points for the fuzz targets in the repository's `fuzz/` directory
/// and for tests; not part of the API (no stability promise).
#[doc(hidden)]
pub mod __fuzz {
    use crate::report::persist;
    use crate::Schedule;

    /// Reads the contents of a regression file as kase does before
    /// exploring the test `name`: the line number and schedule of each of
    /// the test's entries, in file order, and the warnings for the lines it
    /// skipped.
    pub fn regression_file(bytes: &[u8], name: &str) -> (Vec<(usize, Schedule)>, Vec<String>) {
        let (entries, warnings) = persist::parse(bytes, "fuzz.txt", name);
        let entries = entries.into_iter().map(|e| (e.line, e.schedule)).collect();
        (entries, warnings)
    }

    /// Raises kase's internal error with `message`, as a failed invariant
    /// of kase's own code does (to test how one is reported).
    #[track_caller]
    pub fn internal_error(message: &str) -> ! {
        crate::exec::error::internal(message)
    }
}

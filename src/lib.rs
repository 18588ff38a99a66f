//! # kase
//!
//! Model-check concurrent Rust code in place. Write an ordinary test against
//! `std::sync` / `std::thread` (or against kase's drop-in shims), run it
//! under kase, and kase runs it once per distinct interleaving behaviour —
//! one model thread at a time, switching only at visible operations (lock,
//! unlock, atomic accesses, spawn, join, yield, ...) — and reports panics,
//! deadlocks, data races, leaks and livelocks with a readable interleaving
//! and a schedule that replays exactly that execution. By default it uses
//! optimal, unfolding-based partial-order reduction: one execution per
//! Mazurkiewicz trace.
//!
//! ## Depending on kase
//!
//! kase is not on crates.io (the crates.io crate named `kase` is an
//! unrelated one). Its package is called `kase-check` and its library
//! `kase`, so your code writes `kase::`. Depend on a clone of the repository
//! by path, or on the repository by git:
//!
//! ```toml
//! [dev-dependencies]
//! kase = { package = "kase-check", path = "../kase" }  # where you cloned it
//! # kase = { package = "kase-check", git = "<the repository's URL>" }  # or by git
//! ```
//!
//! A library that wants kase's paths in its own code, with no runtime in its
//! normal build, uses feature `model` as in
//! [libraries and features](guide::libraries).
//!
//! ## A first model
//!
//! Use [`kase::sync`](sync), [`kase::thread`](thread) & co. in place of std
//! (outside a model they behave exactly like std) and hand the body to
//! [`kase::model`](model), or get a [`Report`] from
//! [`Builder::explore`]:
//!
//! ```
//! use kase::sync::atomic::{AtomicUsize, Ordering::SeqCst};
//! use kase::sync::Arc;
//! use kase::{thread, Builder, FailureKind};
//!
//! let report = Builder::new().explore(|| {
//!     let counter = Arc::new(AtomicUsize::new(0));
//!     let other = counter.clone();
//!     let t = thread::spawn(move || {
//!         let v = other.load(SeqCst); // load, then store: not one step
//!         other.store(v + 1, SeqCst);
//!     });
//!     let v = counter.load(SeqCst);
//!     counter.store(v + 1, SeqCst);
//!     t.join().unwrap();
//!     assert_eq!(counter.load(SeqCst), 2, "an increment was lost");
//! });
//! let failure = report.failure().expect("kase finds the lost update");
//! assert_eq!(failure.kind(), FailureKind::Panic);
//! println!("{failure}"); // the interleaving, with source locations
//! ```
//!
//! ## `#[kase::test]`
//!
//! [`#[kase::test]`](macro@test) model-checks a test written against `std`
//! as is: it rewrites the body's `std::sync` / `std::thread` paths (and
//! module-level imports of them) onto kase's shims and runs the body under
//! kase, with arguments such as `strategy`, `max_duration` or
//! `expect = "deadlock"`. [`#[kase::instrument]`](macro@instrument) applies
//! the same rewriting to an inline module, `impl` block or function holding
//! the code under test. See [the attributes chapter](guide::attributes).
//!
//! ```
//! # // `#[test]` functions are compiled only by `cargo test`, so as a
//! # // doctest this checks that the attribute accepts the function.
//! use std::sync::{Arc, Mutex};
//! use std::thread;
//!
//! #[kase::test]
//! fn two_increments() {
//!     let counter = Arc::new(Mutex::new(0));
//!     let c = counter.clone();
//!     let t = thread::spawn(move || *c.lock().unwrap() += 1);
//!     *counter.lock().unwrap() += 1;
//!     t.join().unwrap();
//!     assert_eq!(*counter.lock().unwrap(), 2);
//! }
//! ```
//!
//! ## Reading a report
//!
//! The same model in the repository's `examples/lost_update.rs`
//! (`cargo run --example lost_update`) prints this report:
//!
//! ```text
//! kase found a panic: main panicked at examples/lost_update.rs:32:5:
//!     assertion `left == right` failed: an increment was lost
//!       left: 1
//!      right: 2
//!
//! Interleaving (7 steps, 1 preemption):
//!   step  thread    operation            location
//!      1  main      spawn thread 1       examples/lost_update.rs:25:13
//!      2  main      load atomic#2 -> 0   examples/lost_update.rs:29:21
//!      3* thread 1  load atomic#2 -> 0   examples/lost_update.rs:26:23
//!      4  thread 1  store atomic#2 <- 1  examples/lost_update.rs:27:15
//!      5  main      store atomic#2 <- 1  examples/lost_update.rs:30:13
//!      6  main      join                 examples/lost_update.rs:31:7
//!      7  main      load atomic#2 -> 1   examples/lost_update.rs:32:24
//!   (* a preemption: the thread before could have gone on)
//!
//! Schedule: kase1:0.1.1.1
//! Simplified: the first failing interleaving kase found had 2 preemptions and 7 steps (kase1:1.0.0); this one has 1 preemption (3 executions searched).
//! Replay it with KASE_REPLAY='kase1:0.1.1.1' or `Builder::replay("kase1:0.1.1.1")`.
//! ```
//!
//! The headline says what failed; the table lists every visible operation
//! with its thread, the object and the value read or written, and the
//! location in your code; `*` marks a preemption. The schedule replays
//! exactly this execution (`KASE_REPLAY='kase1:0.1.1.1'`,
//! [`Builder::replay`] or `#[kase::test(replay = "…")]`); under
//! `#[kase::test]` it is also saved to a regression file that later runs
//! replay first. The details are in [failure reports](guide::failures).
//!
//! ## The guide
//!
//! 1. [Writing models](guide::writing_models): the shims, threads, what
//!    kase sees.
//! 2. [`#[kase::test]` and `#[kase::instrument]`](guide::attributes):
//!    rewriting, static locks, `Arc` leaks, the arguments, `Result` bodies.
//! 3. [Exploring](guide::exploring): [`Builder`], [`Strategy`],
//!    [`Alternatives`], the [`Report`] and [`Failure`].
//! 4. [Critical-section peeking](guide::peeking).
//! 5. [Failure reports](guide::failures): reading them, replay, simpler
//!    counterexamples, regression files, progress lines, `tracing` events.
//! 6. [Environment variables](guide::environment): every `KASE_*`.
//! 7. [Libraries and features](guide::libraries): features `model` and
//!    `tracing`.
//! 8. [What is modelled, robustness and limits](guide::limits).
//! 9. [Rust's memory model](guide::memory_model): [`MemoryModel::Rc11`].
//!
//! ## Features
//!
//! - `model` (default): kase's instrumented shims under `kase::sync`,
//!   `kase::thread`, `kase::cell`, `kase::hint`, `kase::future`,
//!   `kase::alloc` (they
//!   behave exactly like std outside a model run) and the model checker.
//!   Without it they are plain re-exports of std (plus a park-based
//!   `future::block_on` and `sync::atomic::AtomicExt` for loom's atomic
//!   methods) and nothing of the runtime is compiled.
//! - `tracing` (off): every exploration also emits `tracing` events under
//!   target `kase` (progress, summaries, failures); see
//!   [failure reports](guide::failures#tracing-events).

#[cfg(feature = "model")]
pub mod guide;

#[cfg(feature = "model")]
pub use kase_macros::{instrument, test};
/// Declares thread-local values, one per *model* thread in a model (std's
/// [`thread_local!`](std::thread_local) outside a model run); see
/// [writing models](guide::writing_models#threads).
#[cfg(feature = "model")]
pub use kase_rt::thread_local;
#[cfg(feature = "model")]
pub use kase_rt::{alloc, cell, future, hint, sync, thread};
#[cfg(feature = "model")]
pub use kase_rt::{
    model, Alternatives, Builder, Failure, FailureKind, GraphExplorer, MemoryModel, Persist,
    Report, Schedule, ScheduleParseError, Strategy,
};

#[cfg(not(feature = "model"))]
mod std_only;

/// `std::sync`, re-exported (the `model` feature is off).
#[cfg(not(feature = "model"))]
pub mod sync {
    pub use std::sync::*;

    /// `std::sync::atomic`, re-exported, and [`AtomicExt`](atomic::AtomicExt)
    /// giving std's atomics loom's `with_mut` and `unsync_load`.
    pub mod atomic {
        pub use crate::std_only::AtomicExt;
        pub use std::sync::atomic::*;
    }
}

/// A park-based [`block_on`](future::block_on) (the `model` feature is off).
#[cfg(not(feature = "model"))]
pub mod future {
    pub use crate::std_only::block_on;
}

/// `std::thread`, re-exported (the `model` feature is off).
#[cfg(not(feature = "model"))]
pub mod thread {
    pub use std::thread::*;
}

/// `std::alloc`'s `alloc`, `alloc_zeroed`, `dealloc` and `Layout`,
/// re-exported, and std's `System` allocator as `TrackingAllocator` (the
/// `model` feature is off).
#[cfg(not(feature = "model"))]
pub mod alloc {
    pub use std::alloc::System as TrackingAllocator;
    pub use std::alloc::{alloc, alloc_zeroed, dealloc, Layout};
}

/// `std::cell`, re-exported (the `model` feature is off): tracked
/// `with` / `with_mut` are not available on std's `UnsafeCell`.
#[cfg(not(feature = "model"))]
pub mod cell {
    pub use std::cell::*;
}

/// `std::hint`, re-exported (the `model` feature is off).
#[cfg(not(feature = "model"))]
pub mod hint {
    pub use std::hint::*;
}

/// `std::thread_local!`, re-exported (the `model` feature is off).
#[cfg(not(feature = "model"))]
pub use std::thread_local;

/// Support code for the expansion of `#[kase::test]`; not public API.
#[cfg(feature = "model")]
#[doc(hidden)]
pub mod __private {
    use crate::{FailureKind, Report};

    pub use kase_rt::__private::{
        ArcGetMut, ArcMakeMut, ArcWeakCount, PassThrough, PassThroughCall, TrackArc, Wrap,
    };

    /// What a `#[kase::test]` function may return: `()` or
    /// `Result<(), E: Debug>`.
    pub trait TestResult {
        /// The value the test function returns when the model passed.
        fn success() -> Self;
        /// Inside an execution: panics with `{e:?}` on `Err(e)`, so the
        /// execution fails (and `#[should_panic]` can match the error).
        fn fail_on_err(self);
    }

    impl TestResult for () {
        fn success() -> Self {}
        fn fail_on_err(self) {}
    }

    impl<E: core::fmt::Debug> TestResult for Result<(), E> {
        fn success() -> Self {
            Ok(())
        }
        #[track_caller]
        fn fail_on_err(self) {
            if let Err(e) = self {
                panic!("{e:?}");
            }
        }
    }

    /// `#[kase::test(expect = "...")]`: passes only if kase found a failure
    /// of `kind`; otherwise panics with what it found and the report.
    #[track_caller]
    pub fn expect(report: &Report, kind: FailureKind, name: &str) {
        let found = report.failure().map(|f| f.kind());
        if found != Some(kind) {
            let what = match found {
                None => "found no failure".to_string(),
                Some(other) => format!("found a {other} instead"),
            };
            panic!(
                "#[kase::test(expect = \"{name}\")]: expected kase to find a {name}, but it {what}\n\n{report}"
            );
        }
    }
}

//! # kase
//!
//! Model-check concurrent Rust code in place. Write an ordinary test against
//! `std::sync` / `std::thread`, run it under kase, and kase runs it once per
//! distinct interleaving behaviour, reporting panics and deadlocks with a
//! readable interleaving and a schedule that replays them.
//!
//! ```
//! use kase::sync::{Arc, Mutex};
//! use kase::thread;
//!
//! kase::model(|| {
//!     let data = Arc::new(Mutex::new(Vec::new()));
//!     let d = data.clone();
//!     let t = thread::spawn(move || d.lock().unwrap().push(1));
//!     data.lock().unwrap().push(2);
//!     t.join().unwrap();
//!     assert_eq!(data.lock().unwrap().len(), 2);
//! });
//! ```
//!
//! ## `#[kase::test]` and `#[kase::instrument]`
//!
//! [`#[kase::test]`](macro@test) model-checks a test written against `std`
//! as is: it rewrites the body's `std::sync` / `std::thread` paths (and
//! module-level imports of them) onto kase's shims and runs it as above, with
//! arguments such as `strategy`, `max_duration` or `expect = "deadlock"`.
//! [`#[kase::instrument]`](macro@instrument) applies the same rewriting to an
//! inline module, `impl` block or function holding the code under test.
//!
//! ## Feature `model` (default)
//!
//! With `model` on, `kase::sync`, `kase::thread` and `kase::hint` are kase's
//! instrumented shims (which behave exactly like std outside a model run) and
//! the model checker is available. With `default-features = false` they are
//! plain re-exports of std and nothing of the runtime is compiled, so a
//! library can use `kase::sync::…` in production code at zero cost and turn
//! `model` on for its tests through `[dev-dependencies]`.
//!
//! ## Feature `tracing`
//!
//! Off by default. With it (and `model`), every exploration also emits
//! `tracing` events under target `kase`: `progress` (`DEBUG`, every few
//! seconds), `summary` (`INFO`, at the end of each exploration) and
//! `failure` (`WARN`, per failure found), carrying the data of the progress
//! and summary lines and of the failure report. The events and their fields
//! are listed in the `kase_rt` crate documentation. Without it no `tracing`
//! is compiled.

#[cfg(feature = "model")]
pub use kase_macros::{instrument, test};
/// Declares thread-local values, per *model* thread in a model; see
/// [`kase_rt::thread_local!`] (std's [`thread_local!`](std::thread_local)
/// outside a model run).
#[cfg(feature = "model")]
pub use kase_rt::thread_local;
#[cfg(feature = "model")]
pub use kase_rt::{cell, hint, sync, thread};
#[cfg(feature = "model")]
pub use kase_rt::{
    model, Alternatives, Builder, Failure, FailureKind, Persist, Report, Schedule,
    ScheduleParseError, Strategy,
};

/// `std::sync`, re-exported (the `model` feature is off).
#[cfg(not(feature = "model"))]
pub mod sync {
    pub use std::sync::*;
}

/// `std::thread`, re-exported (the `model` feature is off).
#[cfg(not(feature = "model"))]
pub mod thread {
    pub use std::thread::*;
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

    pub use kase_rt::__private::{PassThrough, TrackArc, Wrap};

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

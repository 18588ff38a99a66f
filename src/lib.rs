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
//! ## Feature `model` (default)
//!
//! With `model` on, `kase::sync`, `kase::thread` and `kase::hint` are kase's
//! instrumented shims (which behave exactly like std outside a model run) and
//! the model checker is available. With `default-features = false` they are
//! plain re-exports of std and nothing of the runtime is compiled, so a
//! library can use `kase::sync::…` in production code at zero cost and turn
//! `model` on for its tests through `[dev-dependencies]`.

#[cfg(feature = "model")]
pub use kase_macros::test;
#[cfg(feature = "model")]
pub use kase_rt::{hint, sync, thread};
#[cfg(feature = "model")]
pub use kase_rt::{
    model, Alternatives, Builder, Failure, FailureKind, Report, Schedule, ScheduleParseError,
    Strategy,
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

/// `std::hint`, re-exported (the `model` feature is off).
#[cfg(not(feature = "model"))]
pub mod hint {
    pub use std::hint::*;
}

//! Benchmark programs for kase, with their known numbers of Mazurkiewicz
//! traces, and the same programs for loom and shuttle.
//!
//! The programs live in one source file (`src/programs.rs`) that is
//! included three times: in [`kase_models`] against `kase::sync` /
//! `kase::thread`, in [`loom_models`] against loom's, and in
//! [`shuttle_models`] against shuttle's. Each function is the body of one
//! execution, e.g. `kase::Builder::new().explore(|| mutex_counter(3, 2))`.
//! [`catalog`] lists them with their expected trace counts and the
//! parameters the comparison binary (`compare`) runs.
//!
//! The weak-memory programs (litmus tests and ordering bugs,
//! `src/weak_programs.rs`) are included the same way, in the `weak`
//! submodule of each: [`kase_models::weak`] (run them with
//! `MemoryModel::Rc11`), [`loom_models::weak`], [`shuttle_models::weak`];
//! [`catalog::WEAK_PROGRAMS`] says which outcome of each is the weak one.

pub mod catalog;

/// The benchmark programs on kase's shims.
pub mod kase_models {
    use kase::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    use kase::sync::{Arc, Mutex, RwLock};
    use kase::thread;

    include!("programs.rs");

    /// The weak-memory programs on kase's shims (run them with
    /// `kase::Builder::new().memory_model(kase::MemoryModel::Rc11)`).
    pub mod weak {
        use kase::sync::atomic::{fence, AtomicBool, AtomicUsize, Ordering, Ordering::*};
        use kase::sync::Arc;
        use kase::thread;

        include!("weak_programs.rs");
    }
}

/// The benchmark programs on loom's shims (run them inside `loom::model`).
pub mod loom_models {
    use loom::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    use loom::sync::{Arc, Mutex, RwLock};
    use loom::thread;

    include!("programs.rs");

    /// The weak-memory programs on loom's shims (run them inside
    /// `loom::model`, which explores loom's own weak-memory model).
    pub mod weak {
        use loom::sync::atomic::{fence, AtomicBool, AtomicUsize, Ordering, Ordering::*};
        use loom::sync::Arc;
        use loom::thread;

        include!("weak_programs.rs");
    }
}

/// The benchmark programs on shuttle's shims (run them inside
/// `shuttle::check_dfs`).
pub mod shuttle_models {
    use shuttle::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    use shuttle::sync::{Arc, Mutex, RwLock};
    use shuttle::thread;

    include!("programs.rs");

    /// The weak-memory programs on shuttle's shims (run them inside
    /// `shuttle::check_dfs`; shuttle runs every ordering as `SeqCst`).
    pub mod weak {
        use shuttle::sync::atomic::{fence, AtomicBool, AtomicUsize, Ordering, Ordering::*};
        use shuttle::sync::Arc;
        use shuttle::thread;

        include!("weak_programs.rs");
    }
}

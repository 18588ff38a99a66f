//! The benchmark programs of BENCHMARKS.md (store buffering, message
//! passing, 2+2W, IRIW, mutex counter, ...), included from kase-bench's
//! `src/programs.rs` on kase's shims: the tests check the trace counts of
//! the very code the benchmarks (and loom and shuttle) run.

use kase::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use kase::sync::{Arc, Mutex, RwLock};
use kase::thread;

include!("../../kase-bench/src/programs.rs");

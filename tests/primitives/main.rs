//! The std surface kase models (`kase::sync`, `kase::thread`, `kase::cell`):
//! each shim's semantics inside a model, trace counts against the exhaustive
//! oracle, and std behaviour outside a model. One test binary for all of
//! them, with std's allocator tracked (`ALLOCATOR`); each module's header
//! says what it checks.

#[path = "../common/mod.rs"]
mod common;

mod allocations;
mod arc_drops;
mod arc_leaks;
mod atomics_extras;
mod barrier_once_lazy_mpsc;
mod data_races;
mod runtime_limits_and_std_fallback;
mod rwlock_condvar;
mod seqcst_fences;
mod static_locks_restart;
mod threads;

/// Every model here also runs with std's allocator tracked (a `Box`, `Vec`
/// or `Arc` the model frees is a free of what it holds,
/// `kase::alloc::TrackingAllocator`): the std surface must keep its
/// verdicts and counts under it, as `tests/std_heap.rs` checks on its own.
#[global_allocator]
static ALLOCATOR: kase::alloc::TrackingAllocator = kase::alloc::TrackingAllocator;

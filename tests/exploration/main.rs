//! How kase explores: partial-order reduction against the exhaustive oracle,
//! critical-section peeking, spin loops. One test binary (one link) for all
//! of them; each module's header says what it checks.

#[path = "../common/mod.rs"]
mod common;

mod differential;
mod exhaustive_oracle;
mod livelock;
mod optimal_por;
mod peeking_mutex;
mod peeking_rwlock;
mod preemption_bound;
mod spin_loops;
mod spin_unrolled;
mod weak_memory;
mod weak_memory_bugs;

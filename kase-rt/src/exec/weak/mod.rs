//! Rust's memory model (RC11, `WEAK-MEMORY.md`): atomic reads that may read
//! older stores, per-location modification orders chosen by the explorer,
//! and the consistency axioms that decide which graphs are executions.
//!
//! `history.rs` keeps one location's stores and what coherence allows;
//! `memory.rs` is one execution's RC11 state and the operations shims call;
//! `graph.rs` and `consistency.rs` are the execution graph and the axioms,
//! pure, used to keep `SeqCst` consistent and to check the rest.

// Parts of the graph model only the tests use yet (happens-before as a
// relation, `Other` events) are kept for the revisit explorer.
#![cfg_attr(not(test), allow(dead_code))]

pub(crate) mod consistency;
pub(crate) mod graph;
pub(crate) mod history;
pub(crate) mod memory;
#[cfg(test)]
mod oracle;
mod pool;

pub(crate) use history::HistoryPool;
pub(crate) use memory::{AtomicIntent, OfferCache, PscMemo, WeakMemory, WeakSummary};
pub(crate) use pool::GraphPool;

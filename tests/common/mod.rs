//! Helpers and models shared by the integration-test harnesses, each of
//! which includes this module with `#[path = "../common/mod.rs"] mod common;`.

// Each harness uses only some of these items.
#![allow(dead_code)]

pub mod child;
pub mod models;
pub mod programs;
pub mod rng;

use std::path::PathBuf;

use kase::{Builder, Report, Strategy};

/// A fresh, empty directory for one test, named after `who` (module and
/// test) and this process, so tests running in parallel never share one.
pub fn temp_dir(who: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kase-{who}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A builder with preemption bound `bound` applied from the first
/// execution (no trial without it, `Builder::unbounded_trial`): what tests
/// of the bounded search itself explore with.
pub fn bounded(bound: usize) -> Builder {
    Builder::new().preemption_bound(bound).unbounded_trial(0)
}

/// Explores `model` with POR and with the exhaustive oracle (default
/// settings, so critical-section peeking on): they find the same failure
/// kind, and without a failure POR runs exactly one execution per trace of
/// the oracle and no redundant one. Executions of an exploration that was
/// discarded because peeking had to be turned off do not count (both
/// explorations then ran without peeking, which is checked too).
pub fn optimal<F: Fn() + Sync>(model: F) -> Report {
    let por = Builder::new().explore(&model);
    let oracle = Builder::new()
        .strategy(Strategy::Exhaustive)
        .explore(&model);
    assert_eq!(
        por.failure().map(|f| f.kind()),
        oracle.failure().map(|f| f.kind()),
        "POR: {por}\noracle: {oracle}"
    );
    if por.failure().is_none() {
        assert!(por.complete() && oracle.complete());
        assert_eq!(
            por.peeking(),
            oracle.peeking(),
            "peeking turned off by one exploration only"
        );
        assert_eq!(
            Some(por.executions() - por.discarded_executions()),
            oracle.traces(),
            "POR executions vs the oracle's traces"
        );
        assert_eq!(por.sleep_set_blocked(), 0);
    }
    por
}

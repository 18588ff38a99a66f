//! The probe behind the criterion benchmarks of the POR explorer's queries
//! (`benches/engine.rs`) answers from a real unfolding, and its alternative
//! search leaves the explorer as it found it (so each benchmark iteration
//! measures the same work).

use kase_bench::kase_models;

#[test]
fn the_unfolding_probe_answers_from_a_real_unfolding() {
    // Half-way through mpat(3)'s 48 traces.
    let mut probe = kase_rt::__bench::unfold(|| kase_models::mpat(3), 24);
    let n = probe.events();
    assert!(n > 10, "{n} events");
    // `≤` is reflexive, and events have histories.
    assert!(probe.causality_queries() > n);
    // Two threads locking the same mutexes: their lock events conflict.
    assert!(probe.conflict_queries() > 0);
    let found = probe.alternative_search();
    assert!(found > 0, "unexplored traces remain, so alternatives exist");
    let again: Vec<usize> = (0..4).map(|_| probe.alternative_search()).collect();
    assert!(
        again.iter().all(|&a| a == found),
        "D is left as it was: {found} then {again:?}"
    );
}

#[test]
fn a_finished_exploration_has_no_alternatives_left() {
    // store_buffering has 3 traces: at the third execution nothing is left.
    let mut probe = kase_rt::__bench::unfold(kase_models::store_buffering, 3);
    assert_eq!(probe.alternative_search(), 0);
}

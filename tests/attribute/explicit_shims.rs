//! `#[kase::test]` on bodies written against `kase::sync` / `kase::thread`
//! explicitly: it runs the body as a model and adds `#[test]`. (Bodies
//! written against `std` are in `std_rewrite.rs`.)

use kase::sync::{Arc, Mutex};
use kase::thread;

#[kase::test]
fn mutex_counter_with_two_threads() {
    let counter = Arc::new(Mutex::new(0));
    let handles: Vec<_> = (0..2)
        .map(|_| {
            let counter = counter.clone();
            thread::spawn(move || *counter.lock().unwrap() += 1)
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(*counter.lock().unwrap(), 2);
}

#[kase::test]
#[should_panic(expected = "an increment was lost")]
fn lost_update_fails_with_the_models_own_message() {
    crate::common::models::lost_update();
}

/// `preemption_bound = 0` applied at once (`unbounded_trial = 0`): the
/// lost update needs one preemption, so the bounded search finds nothing
/// and the test passes (with a note that the result holds only up to 0
/// preemptions) …
#[kase::test(preemption_bound = 0, unbounded_trial = 0)]
fn preemption_bound_zero_misses_the_lost_update() {
    crate::common::models::lost_update();
}

/// … while `preemption_bound = 1` finds it.
#[kase::test(preemption_bound = 1, unbounded_trial = 0, expect = "panic")]
fn preemption_bound_one_finds_the_lost_update() {
    crate::common::models::lost_update();
}

/// By default the search first tries the model without the bound: the lost
/// update is small, so it is explored whole and its bug found at bound 0.
#[kase::test(preemption_bound = 0, expect = "panic")]
fn a_small_model_is_explored_whole_despite_the_bound() {
    crate::common::models::lost_update();
}

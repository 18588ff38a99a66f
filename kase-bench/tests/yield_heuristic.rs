//! A bug that loom's yield heuristic skips and kase finds.
//!
//! After a thread yields, loom never lets it read again a store it had
//! seen before the yield once a newer one exists (`loom/src/rt/atomic.rs`,
//! `is_seen_before_yield`): a spin loop then makes progress. Rust's memory
//! model allows that read whenever nothing orders the newer store before
//! it, so behaviours are lost. Here a producer fills a slot and raises a
//! flag (`Release`); a consumer reads the slot, waits for the flag in a
//! loop that yields before each check, and reads the slot again. The flag is read `Relaxed`
//! where `Acquire` was needed, so the second read may still see the empty
//! slot and the assertion can fail. kase finds it, with or without a
//! preemption bound; loom passes the model. Without the yield (the
//! consumer checks the flag once) loom finds it too: the heuristic is what
//! hides it. (Had the consumer checked the flag before its first yield,
//! loom would find it in the executions where the flag was already up.)
//!
//! This is also why kase runs more executions than loom on spin loops
//! under RC11 (concurrent-queue's loom suite, BENCHMARKS.md): every stale
//! re-read after a yield is a behaviour it explores.

use std::sync::atomic::Ordering::{Relaxed, Release};

const FILLED: usize = 42;

/// The model over either tool's `sync` and `thread`; `$polls`: the
/// consumer waits for the flag in a yielding loop, else checks it once.
macro_rules! fill_then_poll {
    ($sync:path, $thread:path, $polls:expr) => {{
        use $sync::{
            atomic::{AtomicBool, AtomicUsize},
            Arc,
        };
        use $thread as thread;
        let slot = Arc::new(AtomicUsize::new(0));
        let ready = Arc::new(AtomicBool::new(false));
        let producer = {
            let (slot, ready) = (slot.clone(), ready.clone());
            thread::spawn(move || {
                slot.store(FILLED, Relaxed);
                ready.store(true, Release);
            })
        };
        let first = slot.load(Relaxed);
        // The bug: `Relaxed` where `Acquire` pairs with the `Release`.
        let raised = if $polls {
            loop {
                thread::yield_now();
                if ready.load(Relaxed) {
                    break true;
                }
            }
        } else {
            ready.load(Relaxed)
        };
        if raised {
            let after = slot.load(Relaxed);
            assert_eq!(
                after, FILLED,
                "the slot was read empty after the flag (first read: {first})"
            );
        }
        producer.join().unwrap();
    }};
}

/// Whether loom's model (unbounded) panics.
fn loom_fails(polls: bool) -> bool {
    std::panic::catch_unwind(|| {
        let mut builder = loom::model::Builder::new();
        builder.preemption_bound = None;
        builder.check(move || fill_then_poll!(loom::sync, loom::thread, polls));
    })
    .is_err()
}

#[test]
fn kase_finds_the_stale_read_after_a_yield() {
    for bound in [None, Some(2)] {
        let mut builder = kase::Builder::new();
        if let Some(bound) = bound {
            builder = builder.preemption_bound(bound);
        }
        let report = builder.explore(|| fill_then_poll!(kase::sync, kase::thread, true));
        let failure = report
            .failure()
            .unwrap_or_else(|| panic!("bound {bound:?}: the stale read was not found: {report}"));
        assert!(
            failure
                .message()
                .is_some_and(|m| m.contains("the slot was read empty")),
            "bound {bound:?}: {report}"
        );
    }
}

#[test]
fn loom_misses_it_behind_a_yield_and_finds_it_without() {
    assert!(
        !loom_fails(true),
        "loom found the stale read behind the yield: its heuristic changed, update the comparison"
    );
    assert!(
        loom_fails(false),
        "loom finds it when the flag is checked once"
    );
}

//! `#[kase::test]` composes with parametrised tests: placed above
//! test-case's `#[test_case(…)]` (or rstest's `#[rstest]`), it rewrites and
//! wraps the function's body, adds no `#[test]` of its own, and the cases
//! that attribute generates each run the model with their arguments.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;

use test_case::test_case;

/// `threads` threads each add 1 with `fetch_add`: nothing is lost.
#[kase::test]
#[test_case(1 ; "one thread")]
#[test_case(2 ; "two threads")]
#[test_case(3 ; "three threads")]
fn fetch_add_never_loses_an_increment(threads: usize) {
    let n = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let n = n.clone();
            thread::spawn(move || {
                n.fetch_add(1, Ordering::SeqCst);
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(n.load(Ordering::SeqCst), threads);
}

/// The same with a load and then a store: kase finds the lost update in
/// each case, which it can only do if the body it runs is the rewritten one
/// (std's atomics would give one execution and pass).
#[kase::test(expect = "panic")]
#[test_case(2 ; "two threads")]
#[test_case(3 ; "three threads")]
fn load_then_store_loses_an_update(threads: usize) {
    let n = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let n = n.clone();
            thread::spawn(move || {
                let v = n.load(Ordering::SeqCst);
                n.store(v + 1, Ordering::SeqCst);
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(n.load(Ordering::SeqCst), threads);
}

//! The exhaustive oracle: exact trace counts and outcome sets on the small
//! programs of BENCHMARKS.md.

use std::collections::BTreeSet;

use kase::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use kase::sync::Arc;
use kase::{thread, Builder, Strategy};

use crate::common::programs;

fn exhaustive() -> Builder {
    Builder::new().strategy(Strategy::Exhaustive)
}

#[test]
fn store_buffering_has_three_traces_and_three_outcomes() {
    let outcomes = std::sync::Mutex::new(BTreeSet::new());
    let report = exhaustive().explore(|| {
        let x = Arc::new(AtomicUsize::new(0));
        let y = Arc::new(AtomicUsize::new(0));
        let (x1, y1) = (x.clone(), y.clone());
        let t1 = thread::spawn(move || {
            x1.store(1, SeqCst);
            y1.load(SeqCst)
        });
        let (x2, y2) = (x.clone(), y.clone());
        let t2 = thread::spawn(move || {
            y2.store(1, SeqCst);
            x2.load(SeqCst)
        });
        let r1 = t1.join().unwrap();
        let r2 = t2.join().unwrap();
        outcomes.lock().unwrap().insert((r1, r2));
    });
    assert!(report.complete());
    assert!(report.failure().is_none());
    assert_eq!(report.traces(), Some(3));
    let expected: BTreeSet<_> = [(0, 1), (1, 0), (1, 1)].into_iter().collect();
    assert_eq!(*outcomes.lock().unwrap(), expected);
    assert!(report.executions() > 3, "the oracle does not reduce");
}

fn mutex_counter(threads: usize, increments: usize) -> kase::Report {
    let report = exhaustive().explore(|| programs::mutex_counter(threads, increments));
    assert!(report.complete());
    assert!(report.failure().is_none(), "{report}");
    report
}

#[test]
fn mutex_counter_traces_are_multinomial() {
    // (t·k)! / (k!)^t orders of the critical sections.
    assert_eq!(mutex_counter(2, 2).traces(), Some(6));
    assert_eq!(mutex_counter(3, 2).traces(), Some(90));
}

#[test]
fn independent_threads_have_one_trace() {
    let report = exhaustive().explore(|| {
        let handles: Vec<_> = (0..3)
            .map(|_| {
                thread::spawn(|| {
                    let own = AtomicUsize::new(0);
                    own.fetch_add(1, SeqCst);
                    own.fetch_add(1, SeqCst);
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
    });
    assert_eq!(report.traces(), Some(1));
    assert!(
        report.executions() > 1,
        "the oracle does not reduce: {}",
        report.executions()
    );
}

#[test]
fn readers_of_one_write_see_it_or_not() {
    // readers(n): one writer, n readers of x: 2^n traces.
    for n in 1..=3u32 {
        let report = exhaustive().explore(|| programs::readers(n as usize));
        assert_eq!(report.traces(), Some(2u64.pow(n)), "n = {n}");
    }
}

#[test]
fn shared_fetch_add_has_factorial_traces() {
    let report = exhaustive().explore(|| {
        static X: AtomicUsize = AtomicUsize::new(0);
        let handles: Vec<_> = (0..3)
            .map(|_| thread::spawn(|| X.fetch_add(1, SeqCst)))
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        // The static restarts from 0 in every execution.
        assert_eq!(X.load(SeqCst), 3);
    });
    assert!(report.failure().is_none(), "{report}");
    assert_eq!(report.traces(), Some(6));
}

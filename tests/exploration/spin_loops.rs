//! Spin loops end: a thread that yields after only reading one object waits
//! until another thread modifies it, so spin locks and flag waits are
//! explored completely instead of running into `max_steps`.

use kase::hint::spin_loop;
use kase::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use kase::sync::Arc;
use kase::{thread, Builder, FailureKind, Report};

use crate::common::optimal;

struct SpinLock(AtomicBool);

impl SpinLock {
    fn lock(&self) {
        while self
            .0
            .compare_exchange(false, true, SeqCst, SeqCst)
            .is_err()
        {
            spin_loop();
        }
    }

    /// The broken version: test, then set, in two steps.
    fn lock_test_then_set(&self) {
        while self.0.load(SeqCst) {
            spin_loop();
        }
        self.0.store(true, SeqCst);
    }

    fn unlock(&self) {
        self.0.store(false, SeqCst);
    }
}

fn counter_under(lock_fn: fn(&SpinLock)) -> Report {
    optimal(move || {
        let lock = Arc::new(SpinLock(AtomicBool::new(false)));
        let n = Arc::new(AtomicUsize::new(0));
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let (lock, n) = (lock.clone(), n.clone());
                thread::spawn(move || {
                    lock_fn(&lock);
                    let v = n.load(SeqCst);
                    n.store(v + 1, SeqCst);
                    lock.unlock();
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(n.load(SeqCst), 2, "lost update under the lock");
    })
}

#[test]
fn cas_spinlock_completes_and_is_correct() {
    let report = counter_under(SpinLock::lock);
    assert!(report.failure().is_none(), "{report}");
    // Nothing came near the step bound: each execution is short.
    assert!(report.executions() < 100, "{report}");
}

#[test]
fn test_then_set_lock_is_caught() {
    let report = counter_under(SpinLock::lock_test_then_set);
    let failure = report.failure().expect("two threads in the section");
    assert_eq!(failure.kind(), FailureKind::Panic);
    assert!(failure.message().unwrap().contains("lost update"));
}

#[test]
fn flag_wait_with_yield_is_explored_exactly() {
    let report = optimal(|| {
        let flag = Arc::new(AtomicBool::new(false));
        let data = Arc::new(AtomicUsize::new(0));
        let (f, d) = (flag.clone(), data.clone());
        let t = thread::spawn(move || {
            d.store(42, SeqCst);
            f.store(true, SeqCst);
        });
        while !flag.load(SeqCst) {
            thread::yield_now();
        }
        assert_eq!(data.load(SeqCst), 42);
        t.join().unwrap();
    });
    assert!(report.failure().is_none(), "{report}");
}

#[test]
fn spinning_on_a_flag_nobody_sets_is_reported_not_run_forever() {
    let report = Builder::new().max_steps(1_000_000).explore(|| {
        let flag = AtomicBool::new(false);
        while !flag.load(SeqCst) {
            spin_loop();
        }
    });
    let failure = report.failure().expect("the spin never ends");
    assert_eq!(failure.kind(), FailureKind::Deadlock, "{failure}");
    assert_eq!(report.executions(), 1);
}

#[test]
fn a_backoff_loop_that_reads_nothing_still_finishes() {
    let report = optimal(|| {
        let n = Arc::new(AtomicUsize::new(0));
        let m = n.clone();
        let t = thread::spawn(move || {
            m.fetch_add(1, SeqCst);
        });
        for _ in 0..3 {
            spin_loop();
        }
        n.fetch_add(1, SeqCst);
        t.join().unwrap();
    });
    assert!(report.failure().is_none(), "{report}");
}

#[test]
fn two_spinners_wait_for_one_release() {
    optimal(|| {
        let go = Arc::new(AtomicUsize::new(0));
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let go = go.clone();
                thread::spawn(move || {
                    while go.load(SeqCst) == 0 {
                        spin_loop();
                    }
                })
            })
            .collect();
        go.store(1, SeqCst);
        for h in handles {
            h.join().unwrap();
        }
    });
}

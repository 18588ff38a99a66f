//! `RwLock` and `Condvar`: semantics in a model, exact trace counts against
//! the exhaustive oracle, and std behaviour outside a model.

use std::time::Duration;

use kase::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use kase::sync::{Arc, Condvar, Mutex, RwLock};
use kase::{thread, Builder, FailureKind, Report};

use crate::common::models::spawn_all;
use crate::common::optimal;

#[test]
fn three_readers_are_one_trace() {
    let report = optimal(|| {
        let lock = Arc::new(RwLock::new(7));
        spawn_all(3, move |_| assert_eq!(*lock.read().unwrap(), 7));
    });
    assert_eq!(report.executions(), 1);
}

#[test]
fn writer_and_readers_match_the_oracle() {
    let report = optimal(|| {
        let lock = Arc::new(RwLock::new(0));
        let w = lock.clone();
        let writer = thread::spawn(move || *w.write().unwrap() += 1);
        spawn_all(2, move |_| {
            let v = *lock.read().unwrap();
            assert!(v <= 1);
        });
        writer.join().unwrap();
    });
    // The writer goes before both readers, between them, or after both.
    assert_eq!(report.executions(), 3 + 1);
}

#[test]
fn try_read_and_try_write_see_the_holder() {
    let report = optimal(|| {
        let lock = Arc::new(RwLock::new(()));
        let l = lock.clone();
        let t = thread::spawn(move || {
            let _w = l.write().unwrap();
        });
        let r = lock.try_read().is_ok();
        let w = lock.try_write().is_ok();
        // Once main holds nothing, a try_write can only fail while the
        // writer holds the lock; a read that succeeded was released.
        let _ = (r, w);
        t.join().unwrap();
    });
    assert!(report.executions() >= 3, "{report}");
}

#[test]
fn downgrade_keeps_writers_out() {
    optimal(|| {
        let lock = Arc::new(RwLock::new(0));
        let l = lock.clone();
        let t = thread::spawn(move || {
            let mut w = l.write().unwrap();
            *w = 1;
            let r = kase::sync::RwLockWriteGuard::downgrade(w);
            assert_eq!(*r, 1, "a writer slipped in during downgrade");
        });
        *lock.write().unwrap() = 2;
        t.join().unwrap();
    });
}

#[test]
fn rwlock_read_then_write_in_one_thread_deadlocks() {
    let report = Builder::new().explore(|| {
        let lock = RwLock::new(0);
        let _r = lock.read().unwrap();
        let _w = lock.write().unwrap();
    });
    assert_eq!(
        report.failure().map(|f| f.kind()),
        Some(FailureKind::Deadlock)
    );
}

#[test]
fn rwlock_poisoning_follows_std() {
    Builder::new().check(|| {
        static LOCK: RwLock<u32> = RwLock::new(0);
        assert!(
            !LOCK.is_poisoned(),
            "poison from an earlier execution leaked"
        );
        let caught = std::panic::catch_unwind(|| {
            let _r = LOCK.read().unwrap();
            panic!("a reader does not poison");
        });
        assert!(caught.is_err());
        assert!(!LOCK.is_poisoned());
        let caught = std::panic::catch_unwind(|| {
            let _w = LOCK.write().unwrap();
            panic!("a writer does");
        });
        assert!(caught.is_err());
        assert!(LOCK.is_poisoned());
        assert!(LOCK.read().is_err());
        LOCK.clear_poison();
        assert!(LOCK.read().is_ok());
    });
}

/// The classic handshake: wait in a predicate loop.
fn handshake(check_outside_lock: bool) -> Report {
    Builder::new().explore(move || {
        let pair = Arc::new((Mutex::new(false), Condvar::new()));
        let p = pair.clone();
        let t = thread::spawn(move || {
            let (ready, cv) = &*p;
            *ready.lock().unwrap() = true;
            cv.notify_one();
        });
        let (ready, cv) = &*pair;
        if check_outside_lock {
            // Lost wakeup: the flag is read, then the lock is taken again
            // and the wait starts after the notification already happened.
            let seen = *ready.lock().unwrap();
            if !seen {
                let g = ready.lock().unwrap();
                drop(cv.wait(g).unwrap());
            }
        } else {
            let g = cv.wait_while(ready.lock().unwrap(), |r| !*r).unwrap();
            assert!(*g);
        }
        t.join().unwrap();
    })
}

#[test]
fn condvar_predicate_loop_is_clean() {
    let report = handshake(false);
    assert!(report.failure().is_none(), "{report}");
    assert!(report.complete());
}

#[test]
fn condvar_lost_wakeup_is_a_deadlock() {
    let report = handshake(true);
    let failure = report.failure().expect("the lost wakeup is found");
    assert_eq!(failure.kind(), FailureKind::Deadlock, "{failure}");
}

#[test]
fn condvar_counts_match_the_oracle() {
    optimal(|| {
        let pair = Arc::new((Mutex::new(0), Condvar::new()));
        let p = pair.clone();
        spawn_all(2, move |_| {
            let (n, cv) = &*p;
            *n.lock().unwrap() += 1;
            cv.notify_all();
        });
        let (n, cv) = &*pair;
        let g = cv.wait_while(n.lock().unwrap(), |n| *n < 2).unwrap();
        assert_eq!(*g, 2);
    });
}

#[test]
fn wait_timeout_explores_both_endings() {
    let outcomes = Arc::new(std::sync::Mutex::new(std::collections::BTreeSet::new()));
    let seen = outcomes.clone();
    let report = optimal(move || {
        let pair = Arc::new((Mutex::new(()), Condvar::new()));
        let p = pair.clone();
        let t = thread::spawn(move || p.1.notify_one());
        let (m, cv) = &*pair;
        let (_g, r) = cv
            .wait_timeout(m.lock().unwrap(), Duration::from_secs(1))
            .unwrap();
        seen.lock().unwrap().insert(r.timed_out());
        t.join().unwrap();
    });
    assert!(report.failure().is_none());
    assert_eq!(
        *outcomes.lock().unwrap(),
        [false, true].into_iter().collect(),
        "both a timeout and a notification are explored"
    );
}

#[test]
fn wait_timeout_while_times_out_only_while_the_condition_holds() {
    let outcomes = Arc::new(std::sync::Mutex::new(std::collections::BTreeSet::new()));
    let seen = outcomes.clone();
    let report = optimal(move || {
        let pair = Arc::new((Mutex::new(false), Condvar::new()));
        let p = pair.clone();
        let t = thread::spawn(move || {
            *p.0.lock().unwrap() = true;
            p.1.notify_one();
        });
        let (m, cv) = &*pair;
        let (ready, r) = cv
            .wait_timeout_while(m.lock().unwrap(), Duration::from_secs(1), |ready| !*ready)
            .unwrap();
        // std's contract: timed out means the condition still held.
        assert_eq!(r.timed_out(), !*ready, "timed out with the condition false");
        seen.lock().unwrap().insert((r.timed_out(), *ready));
        drop(ready);
        t.join().unwrap();
    });
    assert!(report.failure().is_none(), "{report}");
    assert_eq!(
        *outcomes.lock().unwrap(),
        [(false, true), (true, false)].into_iter().collect(),
        "both the timeout and the wake-up are explored"
    );

    // Outside a model: a real timeout, after at least the duration.
    let m = Mutex::new(0);
    let cv = Condvar::new();
    let start = std::time::Instant::now();
    let (g, r) = cv
        .wait_timeout_while(m.lock().unwrap(), Duration::from_millis(20), |n| *n == 0)
        .unwrap();
    assert!(r.timed_out() && *g == 0);
    assert!(start.elapsed() >= Duration::from_millis(20));
}

#[test]
fn wait_without_notifier_deadlocks_unless_spurious_wakeups_are_on() {
    let model = || {
        let m = Mutex::new(());
        let cv = Condvar::new();
        drop(cv.wait(m.lock().unwrap()).unwrap());
    };
    let report = Builder::new().explore(model);
    assert_eq!(
        report.failure().map(|f| f.kind()),
        Some(FailureKind::Deadlock)
    );
    let report = Builder::new().spurious_wakeups(true).explore(model);
    assert!(report.failure().is_none(), "{report}");
}

#[test]
fn notify_one_wakes_one_waiter() {
    let report = Builder::new().explore(|| {
        // state: (waiters registered, condvar they wait on, condvar for main)
        let state = Arc::new((Mutex::new(0u32), Condvar::new(), Condvar::new()));
        let woken = Arc::new(AtomicUsize::new(0));
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let (s, w) = (state.clone(), woken.clone());
                thread::spawn(move || {
                    let (m, cv, registered) = &*s;
                    let mut g = m.lock().unwrap();
                    *g += 1;
                    registered.notify_one();
                    drop(cv.wait(g).unwrap());
                    w.fetch_add(1, SeqCst);
                })
            })
            .collect();
        let (m, cv, registered) = &*state;
        let g = registered
            .wait_while(m.lock().unwrap(), |n| *n < 2)
            .unwrap();
        cv.notify_one();
        drop(g);
        // Only one waiter wakes; the other stays blocked, so joining both
        // deadlocks in every execution.
        for h in handles {
            h.join().unwrap();
        }
    });
    let failure = report.failure().expect("one waiter is never woken");
    assert_eq!(failure.kind(), FailureKind::Deadlock);
}

#[test]
fn outside_a_model_they_behave_like_std() {
    let lock = Arc::new(RwLock::new(0));
    let pair = Arc::new((Mutex::new(false), Condvar::new()));
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let (lock, pair) = (lock.clone(), pair.clone());
            std::thread::spawn(move || {
                *lock.write().unwrap() += 1;
                let _r = lock.read().unwrap();
                let (m, cv) = &*pair;
                let _g = cv.wait_while(m.lock().unwrap(), |go| !*go).unwrap();
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(20));
    *pair.0.lock().unwrap() = true;
    pair.1.notify_all();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(*lock.read().unwrap(), 4);
    let (m, cv) = &*pair;
    let (_g, r) = cv
        .wait_timeout(m.lock().unwrap(), Duration::from_millis(5))
        .unwrap();
    assert!(r.timed_out());
}

#[test]
fn unpark_before_park_is_not_lost() {
    let report = optimal(|| {
        let main = thread::current();
        let t = thread::spawn(move || main.unpark());
        thread::park();
        t.join().unwrap();
    });
    // The token is given before or after the park starts waiting: one trace
    // (park waits for the unpark either way).
    assert_eq!(report.executions(), 1);
}

#[test]
fn park_without_unpark_deadlocks_and_park_timeout_returns() {
    let report = Builder::new().explore(thread::park);
    assert_eq!(
        report.failure().map(|f| f.kind()),
        Some(FailureKind::Deadlock)
    );
    let report = optimal(|| {
        let main = thread::current();
        let t = thread::spawn(move || main.unpark());
        thread::park_timeout(Duration::from_millis(1));
        t.join().unwrap();
    });
    // Timed out before the token came, or consumed it.
    assert_eq!(report.executions(), 2);
}

#[test]
fn park_outside_a_model_is_std() {
    let main = std::thread::current();
    let handle = kase::thread::current();
    let t = std::thread::spawn(move || {
        handle.unpark();
        drop(main);
    });
    thread::park();
    t.join().unwrap();
}

//! Critical-section peeking on `RwLock` (issue 4): write sections of one lock
//! commute when their footprints do, read sections commute with each other,
//! and a read section and a write section are ordered only by what they
//! access. Readers that hold the lock across other synchronisation share it
//! (no deadlock that the program does not have), and accesses that could
//! interleave inside two read sections make kase explore without peeking.

use std::collections::BTreeSet;
use std::sync::Mutex as StdMutex;

use kase::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use kase::sync::{Arc, Barrier, RwLock};
use kase::{thread, Builder, FailureKind, Report, Strategy};

/// Explores `model` under `builder`, collecting the strings it returns.
fn outcomes(builder: Builder, model: impl Fn() -> String + Sync) -> (Report, BTreeSet<String>) {
    let seen = StdMutex::new(BTreeSet::new());
    let report = builder.explore(|| {
        let outcome = model();
        seen.lock().unwrap().insert(outcome);
    });
    (report, seen.into_inner().unwrap())
}

/// Checks POR with peeking against both oracles: the outcomes of the real
/// program (exhaustive, peeking off) and one execution per trace of the
/// program with pure sections atomic (exhaustive, peeking on). Returns the
/// POR report with peeking and the trace count without it.
fn against_the_oracles(model: impl Fn() -> String + Sync) -> (Report, u64) {
    let exhaustive = || Builder::new().strategy(Strategy::Exhaustive);
    let (real, expected) = outcomes(exhaustive().peeking(false), &model);
    assert!(real.complete() && real.failure().is_none(), "{real}");
    let (peeked, _) = outcomes(exhaustive().peeking(true), &model);
    assert!(peeked.complete() && peeked.failure().is_none(), "{peeked}");
    let (por, seen) = outcomes(Builder::new().peeking(true), &model);
    assert!(por.complete() && por.failure().is_none(), "{por}");
    assert_eq!(
        seen, expected,
        "peeking may only remove equivalent executions"
    );
    assert_eq!(por.sleep_set_blocked(), 0);
    assert_eq!(
        Some(por.executions() - por.discarded_executions()),
        peeked.traces(),
        "one execution per trace"
    );
    let (plain, _) = outcomes(Builder::new().peeking(false), &model);
    assert_eq!(Some(plain.executions()), real.traces());
    (por, plain.executions())
}

/// Two threads each take the write lock `sections` times; thread 1 bumps
/// cells `0..sections`, main cells `sections..2 * sections`.
fn disjoint_write_sections(sections: usize) -> impl Fn() -> String + Sync {
    move || {
        let lock = Arc::new(RwLock::new(()));
        let cells: Arc<Vec<AtomicUsize>> =
            Arc::new((0..2 * sections).map(|_| AtomicUsize::new(0)).collect());
        let (l, c) = (lock.clone(), cells.clone());
        let t = thread::spawn(move || {
            for cell in &c[..sections] {
                let _g = l.write().unwrap();
                cell.store(cell.load(SeqCst) + 1, SeqCst);
            }
        });
        for cell in &cells[sections..] {
            let _g = lock.write().unwrap();
            cell.store(cell.load(SeqCst) + 1, SeqCst);
        }
        t.join().unwrap();
        let total: usize = cells.iter().map(|c| c.load(SeqCst)).sum();
        total.to_string()
    }
}

#[test]
fn disjoint_write_sections_are_one_execution_with_peeking() {
    let (with, without) = against_the_oracles(disjoint_write_sections(4));
    assert_eq!(with.executions(), 1);
    assert!(with.peeking());
    assert_eq!(without, 70, "C(8, 4) orders of the sections");
    let big = Builder::new().peeking(true).explore(|| {
        disjoint_write_sections(8)();
    });
    assert_eq!(big.executions(), 1, "12 870 without peeking");
    assert_eq!(big.sleep_set_blocked(), 0);
}

#[test]
fn write_sections_that_write_the_data_keep_both_orders() {
    let (with, without) = against_the_oracles(|| {
        let lock = Arc::new(RwLock::new(1));
        let l = lock.clone();
        let t = thread::spawn(move || *l.write().unwrap() += 1);
        *lock.write().unwrap() *= 3;
        t.join().unwrap();
        let v = *lock.read().unwrap();
        v.to_string()
    });
    assert_eq!(with.executions(), 2);
    assert_eq!(without, 2);
}

#[test]
fn readers_commute_and_each_is_ordered_with_a_writer_of_the_data() {
    let model = |writer_writes: bool| {
        move || {
            let lock = Arc::new(RwLock::new(0));
            let readers: Vec<_> = (0..3)
                .map(|_| {
                    let l = lock.clone();
                    thread::spawn(move || *l.read().unwrap())
                })
                .collect();
            if writer_writes {
                *lock.write().unwrap() = 1;
            } else {
                let g = lock.write().unwrap();
                assert_eq!(*g, 0);
            }
            let seen: Vec<i32> = readers.into_iter().map(|r| r.join().unwrap()).collect();
            format!("{seen:?}")
        }
    };
    // Each reader before or after the writing section: 2³ traces either way.
    let (with, without) = against_the_oracles(model(true));
    assert_eq!((with.executions(), without), (8, 8));
    // A write section that only reads the data commutes with the readers;
    // without peeking the write lock still orders it with each of them.
    let (with, without) = against_the_oracles(model(false));
    assert_eq!((with.executions(), without), (1, 8));
}

#[test]
fn readers_that_wait_for_each_other_inside_their_sections_share_the_lock() {
    // Each reader holds the read lock across a barrier: both must be inside
    // at once. Peeking upgrades such a section; the upgraded readers still
    // share the lock, so this is no deadlock, and a writer waits for both.
    let (with, _) = against_the_oracles(|| {
        let lock = Arc::new(RwLock::new(0));
        let barrier = Arc::new(Barrier::new(2));
        let (l, b) = (lock.clone(), barrier.clone());
        let t = thread::spawn(move || {
            let g = l.read().unwrap();
            b.wait();
            *g
        });
        let writer = {
            let l = lock.clone();
            thread::spawn(move || *l.write().unwrap() += 1)
        };
        let mine = {
            let g = lock.read().unwrap();
            barrier.wait();
            *g
        };
        writer.join().unwrap();
        format!("{mine} {}", t.join().unwrap())
    });
    assert!(with.peeking(), "{:?}", with.warnings());
}

#[test]
fn an_upgraded_reader_keeps_pure_writers_out() {
    // The reader yields inside its section, so it holds the lock across a
    // choice point: a writer must not get in between its two reads.
    let (with, _) = against_the_oracles(|| {
        let lock = Arc::new(RwLock::new(0));
        let l = lock.clone();
        let t = thread::spawn(move || *l.write().unwrap() += 1);
        let g = lock.read().unwrap();
        let first = *g;
        thread::yield_now();
        assert_eq!(first, *g, "a writer ran inside a read section");
        drop(g);
        t.join().unwrap();
        first.to_string()
    });
    assert!(with.peeking());
}

/// Two threads each bump one atomic non-atomically (load, then store)
/// inside a read section (`read`) or a write section of one lock; returns
/// the final count.
fn bump_in_sections(read: bool) -> usize {
    let lock = Arc::new(RwLock::new(()));
    let count = Arc::new(AtomicUsize::new(0));
    let bump = move |l: &RwLock<()>, c: &AtomicUsize| {
        let _g = if read {
            Ok(l.read().unwrap())
        } else {
            Err(l.write().unwrap())
        };
        let v = c.load(SeqCst);
        c.store(v + 1, SeqCst);
    };
    let (l, c) = (lock.clone(), count.clone());
    let t = thread::spawn(move || bump(&l, &c));
    bump(&lock, &count);
    t.join().unwrap();
    count.load(SeqCst)
}

#[test]
fn a_lost_update_inside_two_read_sections_is_found() {
    // Readers may overlap, so two read sections that update one atomic
    // non-atomically lose an update; peeking would run each section whole,
    // so kase must notice and explore without it.
    let report = Builder::new().peeking(true).explore(|| {
        assert_eq!(bump_in_sections(true), 2, "lost update");
    });
    let failure = report.failure().expect("the lost update is found");
    assert_eq!(failure.kind(), FailureKind::Panic);
    assert!(!report.peeking(), "found by exploring without peeking");
    assert!(report
        .warnings()
        .iter()
        .any(|w| w.contains("without holding the RwLock read-locked")));
}

#[test]
fn write_sections_that_update_an_atomic_are_ordered_by_it() {
    // The same update inside write sections is atomic: no failure, and the
    // two sections conflict on the atomic, so both orders are explored.
    let (with, without) = against_the_oracles(|| bump_in_sections(false).to_string());
    assert_eq!((with.executions(), without), (2, 2));
    assert!(with.peeking());
}

#[test]
fn abba_over_two_rwlocks_is_still_a_deadlock() {
    let report = Builder::new().peeking(true).explore(|| {
        let a = Arc::new(RwLock::new(()));
        let b = Arc::new(RwLock::new(()));
        let (a2, b2) = (a.clone(), b.clone());
        let t = thread::spawn(move || {
            let _b = b2.read().unwrap();
            let _a = a2.write().unwrap();
        });
        {
            let _a = a.write().unwrap();
            let _b = b.write().unwrap();
        }
        t.join().unwrap();
    });
    let failure = report.failure().expect("ABBA deadlocks");
    assert_eq!(failure.kind(), FailureKind::Deadlock);
}

#[test]
fn try_read_and_downgrade_match_the_oracles() {
    against_the_oracles(|| {
        let lock = Arc::new(RwLock::new(0));
        let l = lock.clone();
        let t = thread::spawn(move || {
            let mut g = l.write().unwrap();
            *g += 1;
            let g = kase::sync::RwLockWriteGuard::downgrade(g);
            *g
        });
        let tried = match lock.try_read() {
            Ok(g) => format!("read {}", *g),
            Err(_) => "busy".to_owned(),
        };
        let after = *lock.write().unwrap();
        format!("{tried} {after} {}", t.join().unwrap())
    });
}

/// A read guard downgraded from a write guard and dropped before the first
/// spawn: its unlock ran before peeking started (a plain read unlock), and
/// the lock is free afterwards. The main thread's unlocked store can come
/// in the middle of the other thread's write section, and kase finds the
/// two loads that differ (peeking's records, built at that section, must
/// not count main as still holding the lock).
#[test]
fn a_downgrade_before_the_first_spawn_leaves_no_hold_behind() {
    let report = Builder::new().peeking(true).explore(|| {
        let rw = Arc::new(RwLock::new(()));
        let x = Arc::new(AtomicUsize::new(0));
        drop(kase::sync::RwLockWriteGuard::downgrade(rw.write().unwrap()));
        let (rw2, x2) = (rw.clone(), x.clone());
        let t = thread::spawn(move || {
            let _g = rw2.write().unwrap();
            let (a, b) = (x2.load(SeqCst), x2.load(SeqCst));
            assert_eq!(a, b, "a store came between the loads");
        });
        x.store(1, SeqCst);
        t.join().unwrap();
    });
    let failure = report.failure().expect("the store can come between");
    assert!(
        failure.message().unwrap().contains("came between"),
        "{failure}"
    );
    assert!(!report.peeking());
}
#[test]
fn outside_a_model_guards_still_reach_the_data() {
    let lock = RwLock::new(vec![1]);
    lock.write().unwrap().push(2);
    assert_eq!(*lock.read().unwrap(), [1, 2]);
}

/// The same guard, against a write section placed before another thread's
/// read section that holds the lock across a choice point: the explorer's placement of the write lock (under peeking
/// a read of the lock) must count the dropped guard's `ReadUnlock` in its
/// history, or the lock looks read-held and the order in which the write
/// section reads the initial value is never explored (found by the
/// differential test, seed 2840).
#[test]
fn a_write_section_after_a_downgraded_guard_is_placed_before_a_reader() {
    let (por, _) = against_the_oracles(|| {
        let rw = Arc::new(RwLock::new(0));
        let x = Arc::new(AtomicUsize::new(0));
        drop(kase::sync::RwLockWriteGuard::downgrade(rw.write().unwrap()));
        let cv = Arc::new(kase::sync::Condvar::new());
        let (rw2, x2, cv2) = (rw.clone(), x.clone(), cv.clone());
        let t = thread::spawn(move || {
            let _r = rw2.read().unwrap();
            // Not a memory access: the read section holds the lock across a
            // choice point from here on (a write of the lock).
            cv2.notify_one();
            x2.swap(2, SeqCst);
        });
        let seen = {
            let _w = rw.write().unwrap();
            x.load(SeqCst)
        };
        t.join().unwrap();
        format!("{seen}")
    });
    assert!(por.peeking());
    assert_eq!(por.executions(), 2, "either section first");
}

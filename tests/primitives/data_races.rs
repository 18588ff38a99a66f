//! Happens-before and data races on tracked `UnsafeCell`s.

// Every unsafe block here dereferences the pointer a cell's `with` /
// `with_mut` hands out; whether those accesses are ordered is exactly what
// these tests ask kase.
#![allow(clippy::undocumented_unsafe_blocks)]

use kase::cell::UnsafeCell;
use kase::sync::atomic::{fence, AtomicBool, Ordering};
use kase::sync::{Arc, Mutex, RwLock};
use kase::{thread, Builder, FailureKind, Report};

/// A cell shared without a lock; the tests decide what orders its accesses.
struct Shared {
    data: UnsafeCell<u32>,
    flag: AtomicBool,
}

// SAFETY: test fixture; kase checks whether the accesses are ordered.
unsafe impl Sync for Shared {}

fn shared() -> Arc<Shared> {
    Arc::new(Shared {
        data: UnsafeCell::new(0),
        flag: AtomicBool::new(false),
    })
}

fn kind(report: &Report) -> Option<FailureKind> {
    report.failure().map(|f| f.kind())
}

/// Message passing through `flag` with the given orderings (and fences).
fn publish(store: Ordering, load: Ordering, fences: bool) -> Report {
    Builder::new().explore(move || {
        let s = shared();
        let p = s.clone();
        let t = thread::spawn(move || {
            p.data.with_mut(|d| unsafe { *d = 42 });
            if fences {
                fence(Ordering::Release);
            }
            p.flag.store(true, store);
        });
        if s.flag.load(load) {
            if fences {
                fence(Ordering::Acquire);
            }
            assert_eq!(s.data.with(|d| unsafe { *d }), 42);
        }
        t.join().unwrap();
    })
}

#[test]
fn relaxed_publication_is_a_data_race() {
    let report = publish(Ordering::Relaxed, Ordering::Relaxed, false);
    assert_eq!(kind(&report), Some(FailureKind::DataRace), "{report}");
    let text = report.failure().unwrap().to_string();
    assert!(text.contains("data race"), "{text}");
    assert!(
        text.contains("tests/primitives/data_races.rs"),
        "both locations are reported: {text}"
    );
    assert_eq!(
        kind(&publish(Ordering::Release, Ordering::Relaxed, false)),
        Some(FailureKind::DataRace)
    );
    assert_eq!(
        kind(&publish(Ordering::Relaxed, Ordering::Acquire, false)),
        Some(FailureKind::DataRace)
    );
}

#[test]
fn release_acquire_publication_is_clean() {
    for (store, load) in [
        (Ordering::Release, Ordering::Acquire),
        (Ordering::SeqCst, Ordering::SeqCst),
    ] {
        let report = publish(store, load, false);
        assert!(report.failure().is_none(), "{store:?}/{load:?}: {report}");
        assert!(report.complete());
    }
}

#[test]
fn fences_order_relaxed_accesses() {
    let report = publish(Ordering::Relaxed, Ordering::Relaxed, true);
    assert!(report.failure().is_none(), "{report}");
}

#[test]
fn spawn_and_join_order_accesses() {
    let report = Builder::new().explore(|| {
        let s = shared();
        s.data.with_mut(|d| unsafe { *d = 1 });
        let p = s.clone();
        let t = thread::spawn(move || p.data.with_mut(|d| unsafe { *d += 1 }));
        t.join().unwrap();
        assert_eq!(s.data.with(|d| unsafe { *d }), 2);
    });
    assert!(report.failure().is_none(), "{report}");
}

#[test]
fn unsynchronised_writers_race_and_a_mutex_fixes_it() {
    let racy = Builder::new().explore(|| {
        let s = shared();
        let p = s.clone();
        let t = thread::spawn(move || p.data.with_mut(|d| unsafe { *d += 1 }));
        s.data.with_mut(|d| unsafe { *d += 1 });
        t.join().unwrap();
    });
    assert_eq!(kind(&racy), Some(FailureKind::DataRace));

    let locked = Builder::new().explore(|| {
        let s = shared();
        let m = Arc::new(Mutex::new(()));
        let (p, m2) = (s.clone(), m.clone());
        let t = thread::spawn(move || {
            let _g = m2.lock().unwrap();
            p.data.with_mut(|d| unsafe { *d += 1 });
        });
        {
            let _g = m.lock().unwrap();
            s.data.with_mut(|d| unsafe { *d += 1 });
        }
        t.join().unwrap();
    });
    assert!(locked.failure().is_none(), "{locked}");
}

#[test]
fn rwlock_orders_writer_after_readers_but_not_readers_among_themselves() {
    let model = |reader_writes: bool| {
        Builder::new().explore(move || {
            let s = shared();
            let lock = Arc::new(RwLock::new(()));
            let handles: Vec<_> = (0..2)
                .map(|_| {
                    let (s, lock) = (s.clone(), lock.clone());
                    thread::spawn(move || {
                        let _r = lock.read().unwrap();
                        if reader_writes {
                            s.data.with_mut(|d| unsafe { *d += 1 });
                        } else {
                            s.data.with(|d| unsafe { *d });
                        }
                    })
                })
                .collect();
            {
                let _w = lock.write().unwrap();
                s.data.with_mut(|d| unsafe { *d = 7 });
            }
            for h in handles {
                h.join().unwrap();
            }
        })
    };
    let clean = model(false);
    assert!(clean.failure().is_none(), "{clean}");
    assert_eq!(kind(&model(true)), Some(FailureKind::DataRace));
}

#[test]
fn cells_outside_a_model_are_plain_cells() {
    let mut c = UnsafeCell::new(5);
    c.with_mut(|p| unsafe { *p += 1 });
    assert_eq!(c.with(|p| unsafe { *p }), 6);
    *c.get_mut() += 1;
    assert_eq!(unsafe { *c.get() }, 7);
    assert_eq!(c.into_inner(), 7);
}

#[test]
fn raw_get_points_at_the_value() {
    let c = UnsafeCell::new(9u64);
    let p = UnsafeCell::raw_get(&c);
    assert_eq!(p, c.get());
    assert_eq!(unsafe { *p }, 9);
}

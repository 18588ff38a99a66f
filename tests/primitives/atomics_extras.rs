//! loom's extras in kase's own API: atomics' `with_mut` and `unsync_load`
//! (a non-atomic read, checked for data races against atomic writes), and
//! `future::block_on` (wake-ups are `unpark`s, so a lost one is a deadlock).

// The unsafe blocks call `unsync_load`; whether its contract holds is
// exactly what these tests ask kase.
#![allow(clippy::undocumented_unsafe_blocks)]

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use kase::future::block_on;
use kase::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use kase::sync::{Arc, Mutex};
use kase::{thread, Builder, FailureKind, MemoryModel, Report};

fn kind(report: &Report) -> Option<FailureKind> {
    report.failure().map(|f| f.kind())
}

#[test]
fn with_mut_reads_and_writes_the_value_in_a_model_and_outside() {
    let body = || {
        let mut n = AtomicUsize::new(1);
        let old = n.with_mut(|v| std::mem::replace(v, 5));
        assert_eq!(old, 1);
        assert_eq!(n.load(Ordering::SeqCst), 5);
        let mut flag = AtomicBool::new(false);
        flag.with_mut(|b| *b = true);
        assert!(flag.load(Ordering::SeqCst));
        let mut x = 7;
        let mut p = AtomicPtr::new(std::ptr::null_mut());
        p.with_mut(|q| *q = &mut x);
        assert_eq!(unsafe { *p.load(Ordering::SeqCst) }, 7);
    };
    body();
    let report = Builder::new().explore(body);
    assert!(report.failure().is_none(), "{report}");
    assert_eq!(report.executions(), 1, "with_mut is no visible operation");
}

#[test]
fn unsync_load_outside_a_model_is_a_plain_load() {
    let n = AtomicUsize::new(3);
    n.store(4, Ordering::Relaxed);
    assert_eq!(unsafe { n.unsync_load() }, 4);
}

#[test]
fn unsync_load_ordered_by_join_is_clean() {
    let report = Builder::new().explore(|| {
        let n = Arc::new(AtomicUsize::new(0));
        let m = n.clone();
        let t = thread::spawn(move || m.fetch_add(1, Ordering::Relaxed));
        n.fetch_add(1, Ordering::Relaxed);
        t.join().unwrap();
        assert_eq!(unsafe { n.unsync_load() }, 2);
    });
    assert!(report.failure().is_none(), "{report}");
    assert!(report.complete());
}

#[test]
fn unsync_load_racing_a_store_is_a_data_race_either_way_round() {
    for load_first in [false, true] {
        let report = Builder::new().explore(move || {
            let n = Arc::new(AtomicUsize::new(0));
            let m = n.clone();
            if load_first {
                let _ = unsafe { n.unsync_load() };
            }
            let t = thread::spawn(move || {
                if load_first {
                    m.store(1, Ordering::Release);
                } else {
                    let _ = unsafe { m.unsync_load() };
                }
            });
            if !load_first {
                n.store(1, Ordering::Release);
            }
            t.join().unwrap();
        });
        if load_first {
            // The load happens-before the spawn, so before the store.
            assert!(report.failure().is_none(), "{report}");
        } else {
            assert_eq!(kind(&report), Some(FailureKind::DataRace), "{report}");
            let text = report.failure().unwrap().to_string();
            assert!(text.contains("atomics_extras.rs"), "{text}");
        }
    }
}

#[test]
fn unsync_load_after_an_acquire_of_the_store_is_clean_and_a_relaxed_one_races() {
    for (order, racy) in [(Ordering::Acquire, false), (Ordering::Relaxed, true)] {
        let report = Builder::new().explore(move || {
            let n = Arc::new(AtomicUsize::new(0));
            let m = n.clone();
            let t = thread::spawn(move || m.store(1, Ordering::Release));
            if n.load(order) == 1 {
                assert_eq!(unsafe { n.unsync_load() }, 1);
            }
            t.join().unwrap();
        });
        let expected = racy.then_some(FailureKind::DataRace);
        assert_eq!(kind(&report), expected, "{order:?}: {report}");
    }
}

/// A oneshot channel: a flag and the receiver's waker, which the sender
/// wakes after setting the flag (unless it `forgets` to).
struct Oneshot {
    ready: AtomicBool,
    waker: Mutex<Option<Waker>>,
}

struct Recv(Arc<Oneshot>);

impl Future for Recv {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        *self.0.waker.lock().unwrap() = Some(cx.waker().clone());
        if self.0.ready.load(Ordering::Acquire) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

fn oneshot(forgets_to_wake: bool) -> Report {
    Builder::new().explore(move || {
        let chan = Arc::new(Oneshot {
            ready: AtomicBool::new(false),
            waker: Mutex::new(None),
        });
        let tx = chan.clone();
        let t = thread::spawn(move || {
            tx.ready.store(true, Ordering::Release);
            if !forgets_to_wake {
                if let Some(w) = tx.waker.lock().unwrap().take() {
                    w.wake();
                }
            }
        });
        block_on(Recv(chan));
        t.join().unwrap();
    })
}

#[test]
fn block_on_returns_a_ready_future_in_a_model_and_outside() {
    // The atomic gives the model a visible operation to explore.
    let answer = || block_on(async { AtomicUsize::new(6).load(Ordering::SeqCst) * 7 });
    assert_eq!(answer(), 42);
    let report = Builder::new().explore(move || assert_eq!(answer(), 42));
    assert!(report.failure().is_none(), "{report}");
}

#[test]
fn block_on_waits_for_a_wake_from_another_model_thread() {
    let report = oneshot(false);
    assert!(report.failure().is_none(), "{report}");
    assert!(report.complete());
    assert!(report.executions() > 1, "{report}");
}

#[test]
fn a_lost_wake_up_under_block_on_is_a_deadlock() {
    let report = oneshot(true);
    assert_eq!(kind(&report), Some(FailureKind::Deadlock), "{report}");
}

#[test]
fn block_on_outside_a_model_is_woken_by_another_thread() {
    let chan = std::sync::Arc::new((
        std::sync::atomic::AtomicBool::new(false),
        std::sync::Mutex::new(None::<Waker>),
    ));
    struct Wait(
        std::sync::Arc<(
            std::sync::atomic::AtomicBool,
            std::sync::Mutex<Option<Waker>>,
        )>,
    );
    impl Future for Wait {
        type Output = ();
        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            *self.0 .1.lock().unwrap() = Some(cx.waker().clone());
            if self.0 .0.load(Ordering::Acquire) {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        }
    }
    let tx = chan.clone();
    let t = std::thread::spawn(move || {
        tx.0.store(true, Ordering::Release);
        if let Some(w) = tx.1.lock().unwrap().take() {
            w.wake();
        }
    });
    block_on(Wait(chan));
    t.join().unwrap();
}

/// Inside critical sections, with peeking, an `unsync_load` orders its
/// section with another section's store to the location (an event, like a
/// cell's access): both values it can read are explored in one execution
/// each, as without peeking. (Without the event the sections looked
/// independent; the D1 check caught it and the exploration was redone
/// without peeking: 3 executions.)
#[test]
fn an_unsync_load_in_a_critical_section_orders_it_with_peeking() {
    for peeking in [true, false] {
        let seen = std::sync::Mutex::new(std::collections::BTreeSet::new());
        // Peeking is a reduction of the interleaving explorer: checked
        // under sequential consistency (under RC11 the Relaxed store would
        // move the model to execution graphs, where peeking is off).
        let report = Builder::new()
            .memory_model(MemoryModel::SequentiallyConsistent)
            .peeking(peeking)
            .explore(|| {
                let shared = Arc::new((Mutex::new(()), AtomicUsize::new(0)));
                let other = shared.clone();
                let t = thread::spawn(move || {
                    let _g = other.0.lock().unwrap();
                    other.1.store(1, Ordering::Relaxed);
                });
                let value = {
                    let _g = shared.0.lock().unwrap();
                    // SAFETY: the mutex orders it with the store.
                    unsafe { shared.1.unsync_load() }
                };
                seen.lock().unwrap().insert(value);
                t.join().unwrap();
            });
        assert!(report.failure().is_none(), "peeking {peeking}: {report}");
        assert_eq!(
            *seen.lock().unwrap(),
            [0, 1].into(),
            "peeking {peeking}: {report}"
        );
        assert_eq!(report.executions(), 2, "peeking {peeking}: {report}");
    }
}

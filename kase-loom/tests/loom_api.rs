//! Code written against loom's API, as a crate's `cfg(loom)` tests are,
//! run by kase through kase-loom.

// The unsafe blocks dereference a cell's pointer; whether those accesses
// are ordered is exactly what these tests ask kase.
#![allow(clippy::undocumented_unsafe_blocks)]

use kase_loom as loom;

use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::{Arc, Condvar, Mutex};
use loom::thread;

/// A one-slot mailbox in the style loom suites test: the cell holds the
/// message, the flag says it is there (`ordering` is the flag's).
struct Mailbox {
    full: AtomicUsize,
    message: UnsafeCell<usize>,
}

// SAFETY: the flag orders the accesses to the cell (that is what the
// models check).
unsafe impl Sync for Mailbox {}

impl Drop for Mailbox {
    fn drop(&mut self) {
        // loom's `with_mut` on an atomic through `&mut self`, as
        // concurrent-queue's `Drop` impls do.
        self.full.with_mut(|full| *full = 0);
    }
}

fn mailbox(store: Ordering, load: Ordering) {
    let mailbox = Arc::new(Mailbox {
        full: AtomicUsize::new(0),
        message: UnsafeCell::new(0),
    });
    let sender = mailbox.clone();
    let t = thread::spawn(move || {
        sender.message.with_mut(|m| unsafe { *m = 42 });
        sender.full.store(1, store);
    });
    if mailbox.full.load(load) == 1 {
        // SAFETY: what the model checks.
        let got = unsafe { *mailbox.message.get().deref() };
        assert_eq!(got, 42);
    }
    t.join().unwrap();
}

#[test]
fn release_acquire_handover_passes() {
    loom::model(|| mailbox(Ordering::Release, Ordering::Acquire));
}

#[test]
#[should_panic(expected = "data race")]
fn a_relaxed_handover_is_a_data_race() {
    loom::model(|| mailbox(Ordering::Relaxed, Ordering::Relaxed));
}

#[test]
fn a_condvar_handshake_with_builder_fields() {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(2);
    builder.max_branches = 10_000;
    builder.check(|| {
        let pair = Arc::new((Mutex::new(false), Condvar::new()));
        let other = pair.clone();
        thread::spawn(move || {
            *other.0.lock().unwrap() = true;
            other.1.notify_one();
        });
        let mut ready = pair.0.lock().unwrap();
        while !*ready {
            ready = pair.1.wait(ready).unwrap();
        }
    });
}

loom::lazy_static! {
    static ref COUNTER: AtomicUsize = AtomicUsize::new(0);
}

loom::thread_local! {
    static CALLS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

#[test]
fn lazy_statics_and_thread_locals_start_afresh_in_every_execution() {
    loom::model(|| {
        let t = thread::spawn(|| COUNTER.fetch_add(1, Ordering::SeqCst));
        COUNTER.fetch_add(1, Ordering::SeqCst);
        t.join().unwrap();
        // Two increments in this execution, whatever the earlier ones did.
        assert_eq!(COUNTER.load(Ordering::SeqCst), 2);
        CALLS.with(|c| c.set(c.get() + 1));
        assert_eq!(CALLS.with(|c| c.get()), 1);
    });
}

loom::lazy_static! {
    /// Held for the process's life under std; under loom dropped when the
    /// model's main closure returns, so neither is a leak.
    static ref SHARED_ARC: Arc<AtomicUsize> = Arc::new(AtomicUsize::new(0));
    static ref SHARED_BOX: Box<AtomicUsize> = Box::new(AtomicUsize::new(0));
    static ref USES_SHARED_ARC: usize = SHARED_ARC.load(Ordering::SeqCst) + 1;
}

/// crossbeam-epoch's default collector is an `Arc` in a `lazy_static!`:
/// reported as a leak until lazy statics were dropped as loom drops them.
#[test]
fn a_lazy_static_holding_an_arc_or_a_box_is_no_leak() {
    loom::model(|| {
        let t = thread::spawn(|| {
            SHARED_ARC.fetch_add(1, Ordering::SeqCst);
            SHARED_BOX.fetch_add(1, Ordering::SeqCst);
        });
        // Forced after `SHARED_ARC`, which it uses: dropped before it.
        assert!(*USES_SHARED_ARC <= 2);
        SHARED_ARC.fetch_add(1, Ordering::SeqCst);
        t.join().unwrap();
        assert_eq!(SHARED_ARC.load(Ordering::SeqCst), 2);
        assert_eq!(SHARED_BOX.load(Ordering::SeqCst), 1);
    });
}

loom::lazy_static! {
    static ref LATE: AtomicUsize = AtomicUsize::new(0);
}

/// A thread that first uses a lazy static after the main closure returned
/// (when loom drops them) is told so.
#[test]
#[should_panic(expected = "lazy static `LATE` used after the model's main closure returned")]
fn a_lazy_static_used_after_the_main_closure_returned_panics() {
    loom::model(|| {
        let done = Arc::new(AtomicUsize::new(0));
        let seen = done.clone();
        thread::spawn(move || {
            while seen.load(Ordering::SeqCst) == 0 {
                thread::yield_now();
            }
            LATE.fetch_add(1, Ordering::SeqCst);
        });
        done.store(1, Ordering::SeqCst);
    });
}

#[test]
fn block_on_runs_a_future() {
    loom::model(|| {
        let ready = async { COUNTER.fetch_add(7, Ordering::SeqCst) + 7 };
        assert_eq!(loom::future::block_on(ready), 7);
    });
}

/// `loom::alloc` is tracked: a `Track` never dropped and a block never freed
/// are leaks, and a use of a freed block is reported with the free.
#[test]
fn alloc_tracks_leaks_and_uses_after_free() {
    use loom::alloc::{alloc, dealloc, Layout, Track};

    let forgotten = kase_rt::Builder::new().explore(|| {
        let track = Track::new(AtomicUsize::new(1));
        assert_eq!(track.get_ref().load(Ordering::SeqCst), 1);
        std::mem::forget(track);
    });
    let failure = forgotten.failure().expect("a forgotten Track is a leak");
    assert_eq!(failure.kind(), kase_rt::FailureKind::Leak);
    assert!(failure.to_string().contains("loom_api.rs"), "{failure}");

    loom::model(|| {
        let mut track = Track::new(0);
        *track.get_mut() += 1;
        assert_eq!(track.into_inner(), 1);
    });

    let used_after_free = kase_rt::Builder::new().explore(|| {
        let layout = Layout::new::<AtomicUsize>();
        // SAFETY: not zero-sized; written before use; the use after the
        // free is what kase reports (the memory stays valid until the end
        // of the execution).
        unsafe {
            let p = alloc(layout).cast::<AtomicUsize>();
            p.write(AtomicUsize::new(0));
            dealloc(p.cast(), layout);
            (*p).store(1, Ordering::SeqCst);
        }
    });
    let failure = used_after_free.failure().expect("a store after the free");
    assert_eq!(failure.kind(), kase_rt::FailureKind::UseAfterFree);
}

/// With the default feature `std-heap`, dropping a `Box` is a free too: a
/// reader the drop does not wait for is reported (loom misses it).
#[test]
fn dropping_a_box_under_a_reader_is_reported() {
    let report = kase_rt::Builder::new().explore(|| {
        let boxed = Box::into_raw(Box::new(AtomicUsize::new(0)));
        let addr = boxed as usize;
        let reader = kase_rt::thread::spawn(move || unsafe {
            (*(addr as *const AtomicUsize)).load(Ordering::SeqCst)
        });
        // The reader is not joined first: the bug.
        drop(unsafe { Box::from_raw(boxed) });
        let _ = reader.join();
    });
    let failure = report.failure().expect("the drop races with the read");
    assert!(
        matches!(
            failure.kind(),
            kase_rt::FailureKind::DataRace | kase_rt::FailureKind::UseAfterFree
        ),
        "{failure}"
    );
    assert!(
        failure.to_string().contains("through std's allocator"),
        "{failure}"
    );

    // Joined first, it is fine.
    loom::model(|| {
        let boxed = Box::into_raw(Box::new(AtomicUsize::new(0)));
        let addr = boxed as usize;
        let reader = thread::spawn(move || unsafe {
            (*(addr as *const AtomicUsize)).load(Ordering::SeqCst)
        });
        reader.join().unwrap();
        drop(unsafe { Box::from_raw(boxed) });
    });
}

/// loom's `thread::spawn` asks for no `Send`: sharded-slab's tests share
/// loom `UnsafeCell`s (not `Sync`) through a `std::sync::Arc`, and an `Rc`
/// may cross too.
#[allow(clippy::arc_with_non_send_sync)] // as sharded-slab's tests do
fn share_cells_through_std_arc(same_cell: bool) {
    let cells = std::sync::Arc::new([UnsafeCell::new(0), UnsafeCell::new(0)]);
    let shared = cells.clone();
    let rc = std::rc::Rc::new(5);
    let t = thread::spawn(move || {
        shared[0].with_mut(|p| unsafe { *p = 1 });
        std::rc::Rc::new(*rc)
    });
    cells[usize::from(!same_cell)].with_mut(|p| unsafe { *p = 2 });
    assert_eq!(*t.join().unwrap(), 5);
}

#[test]
fn spawn_takes_closures_that_are_not_send() {
    loom::model(|| share_cells_through_std_arc(false));
}

#[test]
#[should_panic(expected = "data race")]
fn unordered_writes_in_a_closure_that_is_not_send_race() {
    loom::model(|| share_cells_through_std_arc(true));
}

#[test]
fn a_named_thread_from_the_builder() {
    loom::model(|| {
        let t = thread::Builder::new()
            .name("worker".into())
            .spawn(|| thread::current().name().map(str::to_owned))
            .unwrap();
        assert_eq!(t.thread().name(), Some("worker"));
        assert_eq!(t.join().unwrap().as_deref(), Some("worker"));
    });
}

#[test]
#[should_panic(expected = "outside loom::model")]
fn spawn_outside_a_model_panics_as_loom_does() {
    let _ = thread::spawn(|| ());
}

/// loom's `Notify`: a notification hands over what the notifier did before
/// it; with spurious wakeups a `wait` may return once without one, so a
/// waiter that does not check its condition again fails; by default a
/// second wait that nobody notifies is a deadlock.
mod notify {
    use super::loom;
    use loom::sync::atomic::{AtomicBool, Ordering::Acquire, Ordering::Release};
    use loom::sync::{Arc, Notify};
    // kase's own spawn, so that the tests can read kase's report.
    use kase_rt::thread;

    fn handshake(recheck: bool) {
        let shared = Arc::new((AtomicBool::new(false), Notify::new()));
        let notifier = shared.clone();
        let t = thread::spawn(move || {
            notifier.0.store(true, Release);
            notifier.1.notify();
        });
        if recheck {
            while !shared.0.load(Acquire) {
                shared.1.wait();
            }
        } else {
            shared.1.wait();
            assert!(shared.0.load(Acquire), "woke without the flag");
        }
        t.join().unwrap();
    }

    #[test]
    fn a_waiter_that_rechecks_passes() {
        for spurious in [false, true] {
            let report = kase_rt::Builder::new()
                .spurious_wakeups(spurious)
                .explore(|| handshake(true));
            assert!(report.failure().is_none(), "{report}");
            assert!(report.complete());
        }
    }

    #[test]
    fn a_waiter_that_trusts_one_wakeup_fails_with_spurious_wakeups() {
        let blocking = kase_rt::Builder::new().explore(|| handshake(false));
        assert!(blocking.failure().is_none(), "{blocking}");
        let report = kase_rt::Builder::new()
            .spurious_wakeups(true)
            .explore(|| handshake(false));
        let failure = report.failure().expect("a spurious wakeup");
        assert_eq!(failure.kind(), kase_rt::FailureKind::Panic);
        assert!(failure.to_string().contains("woke without the flag"));
    }

    #[test]
    fn two_waits_for_one_notification_deadlock() {
        let report = kase_rt::Builder::new().explore(|| {
            let notify = Arc::new(Notify::new());
            let notifier = notify.clone();
            let t = thread::spawn(move || notifier.notify());
            notify.wait();
            notify.wait();
            t.join().unwrap();
        });
        let failure = report.failure().expect("the second wait never returns");
        assert_eq!(failure.kind(), kase_rt::FailureKind::Deadlock);
    }

    #[test]
    #[should_panic(expected = "only a single thread may wait on `Notify`")]
    fn two_waiters_at_once_panic_as_in_loom() {
        loom::model(|| {
            let notify = Arc::new(Notify::new());
            let other = notify.clone();
            let t = loom::thread::spawn(move || other.wait());
            notify.wait();
            notify.notify();
            t.join().unwrap();
        });
    }
}

/// loom's `AtomicWaker`: registering before checking the condition never
/// loses a wakeup; checking before registering does, in the interleaving
/// where the notifier runs in between.
mod atomic_waker {
    use super::loom;
    use loom::future::AtomicWaker;
    use loom::sync::atomic::{AtomicBool, Ordering::Acquire, Ordering::Release};
    use loom::sync::Arc;
    // kase's own spawn, so that the tests can read kase's report.
    use kase_rt::thread;
    use std::sync::atomic::{AtomicBool as StdBool, Ordering::Relaxed};
    use std::task::{Wake, Waker};

    struct Woken(StdBool);

    impl Wake for Woken {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.store(true, Relaxed);
        }
    }

    fn poll_once(register_first: bool) {
        let shared = Arc::new((AtomicBool::new(false), AtomicWaker::new()));
        let notifier = shared.clone();
        let t = thread::spawn(move || {
            notifier.0.store(true, Release);
            notifier.1.wake();
        });
        let woken = std::sync::Arc::new(Woken(StdBool::new(false)));
        let waker = Waker::from(woken.clone());
        let ready = if register_first {
            shared.1.register_by_ref(&waker);
            shared.0.load(Acquire)
        } else {
            let ready = shared.0.load(Acquire);
            shared.1.register_by_ref(&waker);
            ready
        };
        t.join().unwrap();
        assert!(ready || woken.0.load(Relaxed), "lost wakeup");
    }

    #[test]
    fn registering_before_checking_never_loses_a_wakeup() {
        let report = kase_rt::Builder::new().explore(|| poll_once(true));
        assert!(report.failure().is_none(), "{report}");
        assert!(report.complete());
    }

    #[test]
    fn checking_before_registering_loses_one() {
        let report = kase_rt::Builder::new().explore(|| poll_once(false));
        let failure = report.failure().expect("the notifier runs in between");
        assert!(failure.to_string().contains("lost wakeup"), "{failure}");
    }
}

/// loom's exploration controls: choices made while exploring is off go one
/// way only, under every explorer, and the report says so.
mod exploration_controls {
    use super::loom;
    use kase_rt::sync::atomic::{AtomicUsize, Ordering};
    use kase_rt::sync::Arc;
    use kase_rt::thread;
    use kase_rt::{Builder, Strategy};

    /// Two racing increments of `a` (joined), then two of `b`; `pause`
    /// runs before the first race and `resume` between the two.
    fn two_races(pause: fn(), resume: fn()) {
        pause();
        let a = Arc::new(AtomicUsize::new(0));
        let a1 = a.clone();
        let t = thread::spawn(move || a1.fetch_add(1, Ordering::SeqCst));
        let first = a.fetch_add(1, Ordering::SeqCst);
        t.join().unwrap();
        resume();
        let b = Arc::new(AtomicUsize::new(first));
        let b1 = b.clone();
        let u = thread::spawn(move || b1.fetch_add(1, Ordering::SeqCst));
        b.fetch_add(1, Ordering::SeqCst);
        u.join().unwrap();
    }

    #[test]
    fn choices_made_while_stopped_go_one_way() {
        // Distinct traces: the exhaustive search runs several interleavings
        // of each (the spawns and exits move too).
        let count = |r: &kase_rt::Report| r.traces().unwrap_or(r.executions());
        // The optimal explorers: 2 × 2 traces, 2 with the first race cut.
        for (name, builder) in [
            ("por", Builder::new()),
            ("exhaustive", Builder::new().strategy(Strategy::Exhaustive)),
        ] {
            let all = builder.clone().explore(|| two_races(|| {}, || {}));
            assert_eq!(count(&all), 4, "{name}: {all}");
            assert!(all.complete(), "{name}");

            let paused = builder
                .clone()
                .explore(|| two_races(loom::stop_exploring, loom::explore));
            assert_eq!(count(&paused), 2, "{name}: {paused}");
            assert!(!paused.complete(), "{name}: the model cut it short");
            assert!(paused.to_string().contains("skipped choices"), "{paused}");
            assert!(paused.failure().is_none());

            let skipped = builder.explore(|| two_races(loom::skip_branch, loom::explore));
            assert_eq!(count(&skipped), 1, "{name}: {skipped}");
            assert!(!skipped.complete(), "{name}");
        }
        // The bounded reduction is not optimal (it reorders spawns and
        // exits too), so only fewer, and one when nothing is explored.
        let bounded = Builder::new().preemption_bound(2);
        let all = bounded.clone().explore(|| two_races(|| {}, || {}));
        let paused = bounded
            .clone()
            .explore(|| two_races(loom::stop_exploring, loom::explore));
        let skipped = bounded.explore(|| two_races(loom::skip_branch, loom::explore));
        assert!(paused.executions() < all.executions(), "{paused} / {all}");
        assert_eq!(skipped.executions(), 1, "{skipped}");
        assert!(!paused.complete() && !paused.complete_within_bound());
    }

    #[test]
    fn a_bug_behind_stop_exploring_is_missed_but_not_called_complete() {
        let lost_update = || {
            let n = Arc::new(AtomicUsize::new(0));
            let n1 = n.clone();
            let t = thread::spawn(move || {
                let v = n1.load(Ordering::SeqCst);
                n1.store(v + 1, Ordering::SeqCst);
            });
            let v = n.load(Ordering::SeqCst);
            n.store(v + 1, Ordering::SeqCst);
            t.join().unwrap();
            assert_eq!(n.load(Ordering::SeqCst), 2, "lost update");
        };
        let found = Builder::new().explore(lost_update);
        assert!(found.failure().is_some());
        let missed = Builder::new().explore(move || {
            loom::stop_exploring();
            lost_update();
        });
        assert!(missed.failure().is_none());
        assert!(!missed.complete());
    }

    /// Under RC11: a relaxed flag's reads of an older store are choices too.
    #[test]
    fn under_rc11_a_read_takes_one_store_while_stopped() {
        let message = |pause: bool| {
            move || {
                if pause {
                    loom::stop_exploring();
                }
                let flag = Arc::new(AtomicUsize::new(0));
                let data = Arc::new(AtomicUsize::new(0));
                let (f1, d1) = (flag.clone(), data.clone());
                let t = thread::spawn(move || {
                    d1.store(1, Ordering::Relaxed);
                    f1.store(1, Ordering::Relaxed);
                });
                if flag.load(Ordering::Relaxed) == 1 {
                    assert_eq!(data.load(Ordering::Relaxed), 1, "stale data");
                }
                t.join().unwrap();
            }
        };
        for builder in [Builder::new(), Builder::new().preemption_bound(2)] {
            let found = builder.clone().explore(message(false));
            assert!(found.failure().is_some(), "{found}");
            let missed = builder.explore(message(true));
            assert!(missed.failure().is_none(), "{missed}");
            // The first run, under sequential consistency, met the relaxed
            // access and was discarded for the graph exploration.
            let explored = missed.executions() - missed.discarded_executions();
            assert_eq!(explored, 1, "{missed}");
            assert!(!missed.complete());
        }
    }
}

/// loom's `Arc`: its methods, `from_std` for a trait object, and a leak
/// check (a reference cycle outlives the execution).
mod arc {
    use super::*;

    trait Shape: Send + Sync {
        fn sides(&self) -> usize;
    }

    struct Square;

    impl Shape for Square {
        fn sides(&self) -> usize {
            4
        }
    }

    #[test]
    fn loom_methods_work_in_a_model() {
        loom::model(|| {
            let shape: Arc<dyn Shape> = Arc::from_std(std::sync::Arc::new(Square));
            let other = shape.clone();
            let t = thread::spawn(move || other.sides());
            assert_eq!(t.join().unwrap(), 4);
            assert_eq!(Arc::strong_count(&shape), 1);

            let mut n = Arc::new(AtomicUsize::new(1));
            *Arc::get_mut(&mut n).expect("unique").get_mut() += 1;
            let raw = Arc::into_raw(n.clone());
            // SAFETY: `raw` came from `into_raw`; its `Arc` is alive.
            unsafe { Arc::increment_strong_count(raw) };
            assert_eq!(Arc::strong_count(&n), 3);
            // SAFETY: the count was raised above; `from_raw` takes back the
            // reference `into_raw` gave up.
            unsafe { Arc::decrement_strong_count(raw) };
            let back = unsafe { Arc::from_raw(raw) };
            assert!(Arc::ptr_eq(&n, &back));
            assert!(Arc::get_mut(&mut n).is_none(), "shared");
            drop(back);
            let inner = Arc::try_unwrap(n).expect("unique again");
            assert_eq!(inner.into_inner(), 2);
        });
    }

    #[test]
    #[should_panic(expected = "not unique")]
    fn from_std_of_a_shared_arc_panics_as_in_loom() {
        loom::model(|| {
            let std = std::sync::Arc::new(1);
            let _keep = std.clone();
            let _ = Arc::from_std(std);
        });
    }

    /// A node that can point at another.
    struct Node {
        next: Mutex<Option<Arc<Node>>>,
    }

    #[test]
    fn a_reference_cycle_is_a_leak_naming_where_the_arc_was_made() {
        let report = kase_rt::Builder::new().explore(|| {
            let a = Arc::new(Node {
                next: Mutex::new(None),
            });
            let b = Arc::new(Node {
                next: Mutex::new(Some(a.clone())),
            });
            *a.next.lock().unwrap() = Some(b.clone());
        });
        let failure = report.failure().expect("the cycle outlives the execution");
        assert_eq!(failure.kind(), kase_rt::FailureKind::Leak, "{report}");
        assert!(failure.to_string().contains("loom_api.rs"), "{failure}");

        let fine = kase_rt::Builder::new().explore(|| {
            let a = Arc::new(Node {
                next: Mutex::new(None),
            });
            let b = Arc::new(Node {
                next: Mutex::new(Some(a.clone())),
            });
            drop(b);
            assert_eq!(Arc::strong_count(&a), 1);
        });
        assert!(fine.failure().is_none(), "{fine}");
    }
}

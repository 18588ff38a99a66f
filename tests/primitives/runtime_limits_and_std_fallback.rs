//! The runtime itself: many threads, budgets, shims outside a model.

use std::time::Duration;

use kase::sync::atomic::{
    AtomicBool, AtomicI64, AtomicPtr, AtomicU8, AtomicUsize, Ordering, Ordering::*,
};
use kase::sync::{Arc, Mutex, TryLockError};
use kase::{thread, Builder};

#[test]
fn sixty_four_threads_run_in_one_model() {
    let report = Builder::new().max_executions(3).explore(|| {
        let sum = Arc::new(AtomicUsize::new(0));
        let handles: Vec<_> = (0..63)
            .map(|i| {
                let sum = sum.clone();
                thread::spawn(move || sum.fetch_add(i, Relaxed))
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(sum.load(Relaxed), (0..63).sum());
    });
    assert!(report.failure().is_none(), "{report}");
    assert_eq!(report.executions(), 3);
}

/// Twenty threads, more than a dependence clock holds inline: eighteen
/// touch atomics of their own, two store to a shared one. The two orders of
/// those stores are the model's only traces, in every execution the clocks
/// (reused across executions once on the heap) say so.
fn twenty_threads_two_racing(final_value: Option<usize>) -> kase::Report {
    Builder::new().explore(move || {
        let shared = Arc::new(AtomicUsize::new(0));
        let handles: Vec<_> = (0..20)
            .map(|i| {
                let shared = shared.clone();
                thread::spawn(move || {
                    if i < 18 {
                        AtomicUsize::new(0).store(i, SeqCst);
                    } else {
                        shared.store(i, SeqCst);
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        if let Some(expected) = final_value {
            assert_eq!(shared.load(SeqCst), expected);
        }
    })
}

#[test]
fn more_threads_than_a_clock_holds_inline_keep_their_races() {
    let report = twenty_threads_two_racing(None);
    assert!(report.failure().is_none(), "{report}");
    assert_eq!(report.executions(), 2, "{report}");
    let report = twenty_threads_two_racing(Some(19));
    assert!(report.failure().is_some(), "{report}");
}

#[test]
fn max_executions_makes_the_report_incomplete() {
    let model = three_increments;
    let cut = Builder::new().max_executions(2).explore(model);
    assert!(!cut.complete());
    assert_eq!(cut.executions(), 2);
    assert!(
        cut.to_string()
            .contains("INCOMPLETE: stopped by max_executions = 2"),
        "{cut}"
    );
    let full = Builder::new().explore(model);
    assert!(full.complete());
    assert!(full.executions() > 2);
}

#[test]
fn budgets_are_named_as_set_when_an_exploration_is_redone() {
    // A Relaxed access discards the interleaving exploration (one
    // execution) and explores graphs: the budget holds for both, and the
    // report names it as the user set it, not what was left of it.
    let model = || increments(Relaxed);
    let cut = Builder::new().max_executions(3).explore(model);
    assert_eq!(cut.discarded_executions(), 1, "{cut}");
    assert_eq!(cut.executions(), 3);
    let text = cut.to_string();
    assert!(text.contains("stopped by max_executions = 3"), "{text}");
    assert!(
        cut.warnings()
            .iter()
            .any(|w| w.contains("stopped by max_executions = 3 after 3 executions")),
        "{:?}",
        cut.warnings()
    );
    // What to do: under Rust's memory model, exploring interleavings alone
    // is the faster (and weaker) check; an interleaving search is told no
    // such thing.
    assert!(
        cut.warnings()
            .iter()
            .any(|w| w.contains("memory model (RC11)") && w.contains("KASE_MEMORY_MODEL=sc")),
        "{:?}",
        cut.warnings()
    );
    let sc = Builder::new().max_executions(2).explore(three_increments);
    assert!(!sc.complete());
    assert!(
        sc.warnings()
            .iter()
            .all(|w| !w.contains("KASE_MEMORY_MODEL")),
        "{:?}",
        sc.warnings()
    );
}

/// Three threads incrementing one atomic with `order`.
fn increments(order: Ordering) {
    let x = Arc::new(AtomicUsize::new(0));
    let hs: Vec<_> = (0..3)
        .map(|_| {
            let x = x.clone();
            thread::spawn(move || x.fetch_add(1, order))
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
}

/// Three threads incrementing one atomic: six executions.
fn three_increments() {
    increments(SeqCst);
}

/// The two modes of an incomplete exploration: `check` (so `kase::model`
/// and `#[kase::test]` too) fails it by default, naming the budget and how
/// to accept it; with `allow_incomplete(true)` it passes. `explore` only
/// reports it.
#[test]
fn check_fails_an_incomplete_exploration_unless_allowed() {
    let failed =
        std::panic::catch_unwind(|| Builder::new().max_executions(2).check(three_increments))
            .expect_err("an incomplete exploration is not a pass");
    let message = failed.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        message.contains("INCOMPLETE: it was stopped by max_executions = 2 after 2 executions"),
        "{message}"
    );
    for how in [
        "Builder::allow_incomplete(true)",
        "#[kase::test(allow_incomplete = true)]",
        "KASE_ALLOW_INCOMPLETE=1",
    ] {
        assert!(message.contains(how), "{message}");
    }

    Builder::new()
        .max_executions(2)
        .allow_incomplete(true)
        .check(three_increments);
    // A complete exploration passes either way.
    Builder::new()
        .allow_incomplete(false)
        .check(three_increments);
    let report = Builder::new().max_executions(2).explore(three_increments);
    assert!(!report.complete());
}

#[test]
fn max_duration_makes_the_report_incomplete() {
    let report = Builder::new().max_duration(Duration::ZERO).explore(|| {});
    assert!(!report.complete());
    assert_eq!(report.executions(), 0);
}

#[test]
fn thread_handles_and_ids_in_a_model() {
    let seen = std::sync::Mutex::new(Vec::new());
    let report = Builder::new().explore(|| {
        let main_id = thread::current().id();
        let t = thread::spawn(move || {
            assert_ne!(thread::current().id(), main_id);
            thread::current().id()
        });
        let child_id = t.thread().id();
        let finished_early = t.is_finished();
        let returned = t.join().unwrap();
        assert_eq!(returned, child_id);
        seen.lock().unwrap().push(finished_early);
    });
    assert!(report.failure().is_none(), "{report}");
    // is_finished reads the child's exit: before or after it.
    assert_eq!(report.executions(), 2);
    let mut seen = seen.into_inner().unwrap();
    seen.sort();
    assert_eq!(seen, [false, true]);
}

#[test]
fn try_lock_fails_while_another_thread_holds_the_lock() {
    let seen = std::sync::Mutex::new(Vec::new());
    let report = Builder::new().explore(|| {
        let m = Arc::new(Mutex::new(0));
        let m2 = m.clone();
        let t = thread::spawn(move || {
            let _g = m2.lock().unwrap();
        });
        let busy = matches!(m.try_lock(), Err(TryLockError::WouldBlock));
        seen.lock().unwrap().push(busy);
        t.join().unwrap();
    });
    assert!(report.complete());
    let seen = seen.lock().unwrap();
    assert!(seen.contains(&true) && seen.contains(&false), "{seen:?}");
}

#[test]
fn poisoning_is_per_execution_and_as_in_std() {
    let report = Builder::new().explore(|| {
        static M: Mutex<u32> = Mutex::new(0);
        assert!(!M.is_poisoned(), "poison from an earlier execution leaked");
        let caught = std::panic::catch_unwind(|| {
            let _g = M.lock().unwrap();
            panic!("poison it");
        });
        assert!(caught.is_err());
        assert!(M.is_poisoned());
        assert!(M.lock().is_err());
        M.clear_poison();
        assert!(M.lock().is_ok());
    });
    assert!(report.failure().is_none(), "{report}");
}

// ---- outside a model, every shim is std ------------------------------------

#[test]
fn shims_outside_a_model_behave_like_std_under_real_threads() {
    let counter = Arc::new(Mutex::new(0u64));
    let hits = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..8)
        .map(|_| {
            let (counter, hits) = (counter.clone(), hits.clone());
            thread::spawn(move || {
                for _ in 0..1000 {
                    *counter.lock().unwrap() += 1;
                    hits.fetch_add(1, Relaxed);
                    thread::yield_now();
                }
                thread::current().id()
            })
        })
        .collect();
    let ids: std::collections::HashSet<_> =
        handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert_eq!(ids.len(), 8);
    assert_eq!(*counter.lock().unwrap(), 8000);
    assert_eq!(hits.load(SeqCst), 8000);
}

#[test]
fn atomics_outside_a_model_match_std() {
    let a = AtomicI64::new(5);
    assert_eq!(a.fetch_add(3, SeqCst), 5);
    assert_eq!(a.fetch_sub(10, SeqCst), 8);
    assert_eq!(a.fetch_max(7, SeqCst), -2);
    assert_eq!(a.fetch_min(-9, SeqCst), 7);
    assert_eq!(a.compare_exchange(-9, 1, SeqCst, SeqCst), Ok(-9));
    assert_eq!(a.compare_exchange(-9, 2, SeqCst, SeqCst), Err(1));
    assert_eq!(a.fetch_update(SeqCst, SeqCst, |v| Some(v * 10)), Ok(1));
    assert_eq!(a.fetch_update(SeqCst, SeqCst, |_| None), Err(10));
    assert_eq!(a.swap(4, SeqCst), 10);
    assert_eq!(format!("{a:?}"), "4");
    let mut b = AtomicU8::new(0b1100);
    assert_eq!(b.fetch_and(0b1010, SeqCst), 0b1100);
    assert_eq!(b.fetch_or(0b0001, SeqCst), 0b1000);
    assert_eq!(b.fetch_xor(0b1111, SeqCst), 0b1001);
    assert_eq!(b.fetch_nand(0b0110, SeqCst), 0b0110);
    *b.get_mut() = 9;
    assert_eq!(b.into_inner(), 9);
    let flag = AtomicBool::default();
    assert!(!flag.fetch_not(SeqCst));
    assert!(flag.load(SeqCst));
    let mut x = 1;
    let p = AtomicPtr::new(&mut x as *mut i32);
    assert_eq!(p.swap(std::ptr::null_mut(), SeqCst), &mut x as *mut i32);
    assert!(p.load(SeqCst).is_null());
}

#[test]
#[should_panic(expected = "there is no such thing as a release load")]
fn invalid_orderings_panic_like_std() {
    AtomicUsize::new(0).load(Release);
}

#[test]
fn mutex_outside_a_model_poisons_like_std() {
    let m = Arc::new(Mutex::new(1));
    let m2 = m.clone();
    let _ = std::thread::spawn(move || {
        let _g = m2.lock().unwrap();
        panic!("poison");
    })
    .join();
    assert!(m.is_poisoned());
    let err = m.lock().unwrap_err();
    assert_eq!(**err.get_ref(), 1);
    drop(err);
    m.clear_poison();
    assert_eq!(*m.lock().unwrap(), 1);
    let m = Arc::try_unwrap(m).unwrap();
    assert_eq!(m.into_inner().unwrap(), 1);
}

#[test]
fn newer_std_atomic_methods_match_std() {
    let a = AtomicUsize::new(3);
    assert_eq!(a.update(SeqCst, SeqCst, |v| v * 2), 3);
    assert_eq!(
        a.try_update(SeqCst, SeqCst, |v| (v < 5).then_some(0)),
        Err(6)
    );
    let mut buf = [0u32; 4];
    let p = AtomicPtr::new(buf.as_mut_ptr());
    assert_eq!(p.fetch_ptr_add(2, SeqCst), buf.as_mut_ptr());
    assert_eq!(p.load(SeqCst), buf.as_mut_ptr().wrapping_add(2));
    p.fetch_ptr_sub(1, SeqCst);
    p.fetch_byte_add(4, SeqCst);
    p.fetch_byte_sub(4, SeqCst);
    assert_eq!(p.load(SeqCst), buf.as_mut_ptr().wrapping_add(1));
    let base = p.load(SeqCst) as usize;
    assert_eq!(p.fetch_or(1, SeqCst) as usize, base);
    assert_eq!(p.fetch_xor(1, SeqCst) as usize, base | 1);
    assert_eq!(p.fetch_and(!0, SeqCst) as usize, base);
}

#[test]
fn locking_while_already_panicking_does_not_poison_like_std() {
    struct LockOnDrop<'a>(&'a Mutex<u32>);
    impl Drop for LockOnDrop<'_> {
        fn drop(&mut self) {
            *self.0.lock().unwrap() += 1;
        }
    }
    let m = Mutex::new(0);
    let _ = std::panic::catch_unwind(|| {
        let _d = LockOnDrop(&m);
        panic!("unwinding");
    });
    assert!(
        !m.is_poisoned(),
        "std poisons only for panics that start while locked"
    );
    assert_eq!(*m.lock().unwrap(), 1);
}

#[test]
fn kase_cell_and_hint_name_what_std_cell_and_hint_do() {
    // With `model` on too, `kase::cell::…` and `kase::hint::…` name std's
    // single-threaded cells and hints (with `model` off they are std's
    // modules), so facade code compiles either way.
    let c: std::cell::Cell<u8> = kase::cell::Cell::new(1);
    let r: std::cell::RefCell<u8> = kase::cell::RefCell::new(2);
    let o: std::cell::OnceCell<u8> = kase::cell::OnceCell::new();
    let l: std::cell::LazyCell<u8> = kase::cell::LazyCell::new(|| 4);
    {
        let borrowed: kase::cell::Ref<'_, u8> = r.borrow();
        let refused: Result<kase::cell::RefMut<'_, u8>, kase::cell::BorrowMutError> =
            r.try_borrow_mut();
        assert!(refused.is_err());
        drop(borrowed);
    }
    let _: Result<kase::cell::Ref<'_, u8>, kase::cell::BorrowError> = r.try_borrow();
    let sum = c.get() + *r.borrow() + *o.get_or_init(|| 3) + *l;
    assert_eq!(kase::hint::black_box(sum), 10);
}

#[test]
#[allow(deprecated)]
fn deprecated_std_items_exist_and_work_in_a_model() {
    use kase::sync::atomic::{AtomicUsize, ATOMIC_USIZE_INIT};
    static HITS: AtomicUsize = ATOMIC_USIZE_INIT;
    let report = Builder::new().explore(|| {
        let t = thread::spawn(|| {
            HITS.fetch_add(1, SeqCst);
            kase::sync::atomic::spin_loop_hint();
        });
        thread::sleep_ms(10); // a scheduling point, no time passes
        HITS.fetch_add(1, SeqCst);
        t.join().unwrap();
        assert_eq!(HITS.load(SeqCst), 2, "the static restarts every execution");
    });
    assert!(report.failure().is_none(), "{report}");
    assert!(report.executions() > 1, "{report}");
    let flag = kase::sync::atomic::ATOMIC_BOOL_INIT;
    let int = kase::sync::atomic::ATOMIC_ISIZE_INIT;
    assert!(!flag.load(SeqCst));
    assert_eq!(int.load(SeqCst), 0);
}

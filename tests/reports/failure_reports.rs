//! Failures: panics, deadlocks, livelocks, and what their reports say.

use kase::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use kase::sync::{Arc, Mutex};
use kase::{thread, Builder, FailureKind, Strategy};

use crate::common::models::{abba, lost_update, split_lost_update};

#[test]
fn panic_in_spawned_thread_is_reported_with_message_and_location() {
    let report = Builder::new().explore(|| {
        let x = Arc::new(AtomicUsize::new(0));
        let x2 = x.clone();
        let t = thread::spawn(move || {
            let v = x2.load(SeqCst);
            assert_eq!(v, 0, "the writer got there first");
        });
        x.store(1, SeqCst);
        t.join().unwrap();
    });
    let failure = report.failure().expect("the assertion can fail");
    assert_eq!(failure.kind(), FailureKind::Panic);
    assert!(failure
        .message()
        .unwrap()
        .contains("the writer got there first"));
    let text = failure.to_string();
    assert!(text.contains("the writer got there first"), "{text}");
    assert!(
        text.contains("tests/reports/failure_reports.rs:"),
        "report names the test file: {text}"
    );
    assert!(
        text.contains("thread 1 panicked at tests/reports/failure_reports.rs:"),
        "{text}"
    );
    assert!(text.contains("store atomic#"), "{text}");
    assert!(text.contains(&failure.schedule().to_string()), "{text}");
    assert!(!report.complete());
}

#[test]
fn abba_lock_order_is_a_deadlock_naming_both_threads() {
    let report = Builder::new().explore(abba);
    let failure = report.failure().expect("ABBA deadlocks");
    assert_eq!(failure.kind(), FailureKind::Deadlock);
    let text = failure.to_string();
    assert!(
        text.contains("main is blocked: waits to lock mutex#"),
        "{text}"
    );
    assert!(
        text.contains("thread 1 is blocked: waits to lock mutex#"),
        "{text}"
    );
    assert!(text.matches("common/models.rs:").count() >= 2, "{text}");
}

#[test]
fn relocking_a_held_mutex_is_a_deadlock() {
    let report = Builder::new().explore(|| {
        let m = Mutex::new(0);
        let _g = m.lock().unwrap();
        let _h = m.lock().unwrap();
    });
    assert_eq!(
        report.failure().map(|f| f.kind()),
        Some(FailureKind::Deadlock)
    );
}

#[test]
fn endless_spinning_is_a_livelock_at_max_steps() {
    // A spin that repeats its state waits or is a deadlock at once
    // (tests/exploration/spin_loops.rs); one whose state keeps changing is
    // bounded by max_steps only.
    let report = Builder::new().max_steps(200).explore(|| {
        let a = AtomicUsize::new(0);
        let mut rounds = 0u64;
        while a.load(SeqCst) == 0 {
            rounds += 1;
            thread::yield_now();
        }
        std::hint::black_box(rounds);
    });
    let failure = report.failure().expect("spins forever");
    assert_eq!(failure.kind(), FailureKind::Livelock);
    assert!(failure
        .to_string()
        .contains("exceeded 200 visible operations"));
}

#[test]
#[should_panic(expected = "an increment was lost")]
fn check_reraises_the_original_panic_payload() {
    kase::model(lost_update);
}

#[test]
fn the_failing_schedule_replays_the_failure_in_one_execution() {
    let model = lost_update;
    let report = Builder::new().strategy(Strategy::Exhaustive).explore(model);
    let schedule = report.failure().unwrap().schedule().to_string();
    for _ in 0..3 {
        let replayed = Builder::new().replay(&schedule).explore(model);
        assert_eq!(replayed.executions(), 1);
        let failure = replayed.failure().expect("the replay fails the same way");
        assert_eq!(failure.kind(), FailureKind::Panic);
        assert_eq!(failure.schedule().to_string(), schedule);
    }
}

#[test]
fn a_schedule_that_does_not_fit_is_reported_not_ignored() {
    let report = Builder::new().replay("kase1:7.7.7").explore(|| {
        let t = thread::spawn(thread::yield_now);
        thread::yield_now();
        t.join().unwrap();
    });
    let failure = report.failure().expect("thread 7 does not exist");
    assert_eq!(failure.kind(), FailureKind::Nondeterminism);
    assert!(
        failure.to_string().contains("schedule picks thread 7"),
        "{failure}"
    );
}

#[test]
#[should_panic(expected = "does not start with \"kase1:\"")]
fn a_garbage_schedule_is_a_clear_error() {
    let _ = Builder::new().replay("0.1.2");
}

#[test]
fn nondeterministic_models_are_reported() {
    let runs = std::sync::atomic::AtomicUsize::new(0);
    let report = Builder::new().strategy(Strategy::Exhaustive).explore(|| {
        // Depends on something outside the schedule: how often it ran.
        let spawn_second = runs.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % 2 == 0;
        let a = thread::spawn(|| thread::yield_now());
        if spawn_second {
            thread::yield_now();
        }
        a.join().unwrap();
    });
    let failure = report
        .failure()
        .expect("the model behaves differently on re-runs");
    assert_eq!(failure.kind(), FailureKind::Nondeterminism);
}

/// A model that changes from run to run (`run` counts from 0): from the
/// third run on, main reads less; with `shifted`, from the second run on it
/// makes one more access before any choice (the same choices, at other
/// events).
fn changing_model(run: usize, order: std::sync::atomic::Ordering, shifted: bool) {
    let x = Arc::new(AtomicUsize::new(0));
    if shifted && run >= 1 {
        x.load(order);
    }
    let x2 = x.clone();
    let t = thread::spawn(move || {
        x2.store(1, order);
        x2.store(2, order);
    });
    for _ in 0..if run >= 2 { 1 } else { 3 } {
        x.load(order);
    }
    t.join().unwrap();
}

/// The kind and text of the failure POR reports on [`changing_model`]
/// (with `shifted`, as there).
fn por_on_changing_model(shifted: bool) -> (FailureKind, String) {
    let runs = std::sync::atomic::AtomicUsize::new(0);
    let report = Builder::new().strategy(Strategy::Por).explore(|| {
        let run = runs.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        changing_model(run, SeqCst, shifted);
    });
    let failure = report.failure().expect("the model changed between runs");
    (failure.kind(), failure.to_string())
}

#[test]
fn a_model_that_runs_shorter_on_a_replayed_schedule_is_nondeterminism_under_por() {
    // From its third run on, main reads less: POR's replay of a schedule
    // prefix meets a model that has changed. It used to crash the explorer
    // (an internal error) instead of saying so.
    let (kind, failure) = por_on_changing_model(false);
    assert_eq!(kind, FailureKind::Nondeterminism, "{failure}");
}

#[test]
fn a_model_that_changes_inside_a_replayed_prefix_is_nondeterminism_under_por() {
    // From its second run on, main makes one more access before any choice.
    // POR keeps what it derived from the events a run replays (it does not
    // process them again): that must not stand once the run differs.
    let (kind, failure) = por_on_changing_model(true);
    assert_eq!(kind, FailureKind::Nondeterminism, "{failure}");
    assert!(
        failure.contains("depends on something other than the schedule"),
        "{failure}"
    );
}

#[test]
fn a_model_that_changes_under_a_preemption_bound_is_nondeterminism() {
    // The bounded search replays a prefix from its frames alone and
    // restores its state where the prefix ends: a model that runs
    // differently on a re-run must still be reported as such (not crash
    // the search), under sequential consistency and under RC11.
    for order in [SeqCst, std::sync::atomic::Ordering::Relaxed] {
        let runs = std::sync::atomic::AtomicUsize::new(0);
        let report = Builder::new()
            .preemption_bound(2)
            .unbounded_trial(0)
            .explore(|| {
                let run = runs.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                changing_model(run, order, true);
            });
        let failure = report.failure().expect("the model changed between runs");
        assert_eq!(
            failure.kind(),
            FailureKind::Nondeterminism,
            "{order:?}: {failure}"
        );
    }
}

/// Sets a flag when dropped.
struct SetOnDrop<'a>(&'a std::sync::atomic::AtomicBool);

impl Drop for SetOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

#[test]
fn threads_left_unfinished_by_a_failure_are_unwound() {
    let dropped = std::sync::atomic::AtomicBool::new(false);
    let real = std::sync::Mutex::new(());
    let report = Builder::new().explore(|| {
        let _flag = SetOnDrop(&dropped);
        let _real_guard = real.lock().unwrap();
        let m = Arc::new(Mutex::new(()));
        let m2 = m.clone();
        let _t = thread::spawn(move || {
            let _held = m2.lock().unwrap();
            thread::yield_now();
        });
        let _a = m.lock().unwrap();
        let _b = m.lock().unwrap(); // deadlocks: main already holds it
    });
    assert_eq!(
        report.failure().map(|f| f.kind()),
        Some(FailureKind::Deadlock)
    );
    assert!(
        dropped.load(std::sync::atomic::Ordering::SeqCst),
        "destructors of the stuck thread ran"
    );
    // Released (poisoned, since it was dropped while unwinding), not held.
    assert!(
        !matches!(real.try_lock(), Err(std::sync::TryLockError::WouldBlock)),
        "a std guard held by the stuck thread was released"
    );
}

#[test]
fn scoped_os_threads_inside_a_failing_model_are_joined_before_explore_returns() {
    let finished = std::sync::atomic::AtomicBool::new(false);
    let report = Builder::new().explore(|| {
        let data = [1, 2, 3];
        std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(std::time::Duration::from_millis(20));
                assert_eq!(data.iter().sum::<i32>(), 6);
                finished.store(true, std::sync::atomic::Ordering::SeqCst);
            });
            let m = Mutex::new(());
            let _a = m.lock().unwrap();
            let _b = m.lock().unwrap();
        });
    });
    assert_eq!(
        report.failure().map(|f| f.kind()),
        Some(FailureKind::Deadlock)
    );
    assert!(finished.load(std::sync::atomic::Ordering::SeqCst));
}

#[test]
fn a_resumed_panic_is_reported_with_its_own_message() {
    let report = Builder::new().explore(|| {
        let caught = std::panic::catch_unwind(|| panic!("caught and handled"));
        assert!(caught.is_err());
        std::panic::resume_unwind(Box::new("the real failure"));
    });
    assert_eq!(
        report.failure().and_then(|f| f.message()),
        Some("the real failure")
    );
}

#[test]
fn a_rerun_about_to_do_something_else_is_nondeterminism() {
    let runs = std::sync::atomic::AtomicUsize::new(0);
    let report = Builder::new().strategy(Strategy::Exhaustive).explore(|| {
        let x = Arc::new(AtomicUsize::new(0));
        let x2 = x.clone();
        let t = thread::spawn(move || x2.load(SeqCst));
        // Same threads runnable on every run, but a different operation.
        if runs.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % 2 == 0 {
            x.load(SeqCst);
        } else {
            x.store(1, SeqCst);
        }
        t.join().unwrap();
    });
    let failure = report.failure().expect("the re-run differs");
    assert_eq!(failure.kind(), FailureKind::Nondeterminism);
    assert!(
        failure.to_string().contains("different operations"),
        "{failure}"
    );
    // It says what usually causes this and what to do.
    assert!(
        failure.to_string().contains("wall-clock time")
            && failure.to_string().contains("a function of the schedule"),
        "{failure}"
    );
}

#[test]
fn por_notices_a_thread_doing_something_else_after_the_same_history() {
    let runs = std::sync::atomic::AtomicUsize::new(0);
    let report = Builder::new().explore(|| {
        let x = Arc::new(AtomicUsize::new(0));
        let x2 = x.clone();
        let t = thread::spawn(move || x2.store(1, SeqCst));
        // After the same history, main loads on even runs and stores on odd.
        if runs.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % 2 == 0 {
            x.load(SeqCst);
        } else {
            x.store(2, SeqCst);
        }
        t.join().unwrap();
    });
    let failure = report.failure().expect("POR notices the difference");
    assert_eq!(failure.kind(), FailureKind::Nondeterminism);
    let text = failure.to_string();
    assert!(
        text.contains("an earlier execution performed load at tests/reports/failure_reports.rs:"),
        "{text}"
    );
}

/// A thread whose handle the model dropped runs to completion after the
/// model closure returns (as under std and loom): no failure, and what it
/// does is explored like any thread's.
#[test]
fn a_detached_thread_runs_to_completion_after_the_model_returns() {
    let report = crate::common::optimal(|| {
        let x = std::sync::Arc::new(AtomicUsize::new(0));
        let y = x.clone();
        thread::spawn(move || {
            y.store(1, SeqCst);
            y.store(2, SeqCst);
        }); // never joined
        x.load(SeqCst);
    });
    assert!(report.failure().is_none(), "{report}");
    // main's load reads 0, 1 or 2: three traces.
    assert_eq!(report.executions(), 3, "{report}");

    // Its failures are found, even those after main returned.
    let report = Builder::new().explore(|| {
        let x = std::sync::Arc::new(AtomicUsize::new(0));
        let y = x.clone();
        thread::spawn(move || {
            y.store(1, SeqCst);
            assert_eq!(y.load(SeqCst), 1, "main wrote in between");
        });
        x.store(2, SeqCst);
    });
    let failure = report.failure().expect("the detached thread's assertion");
    assert_eq!(failure.kind(), FailureKind::Panic, "{failure}");
}

/// A detached thread that can never finish is a deadlock naming it.
#[test]
fn a_detached_thread_that_never_finishes_is_a_deadlock() {
    let report = Builder::new().explore(|| {
        let m = Arc::new(Mutex::new(()));
        let guard = m.lock().unwrap();
        std::mem::forget(guard); // main leaves the mutex locked forever
        let m2 = m.clone();
        thread::spawn(move || drop(m2.lock().unwrap()));
    });
    let failure = report.failure().expect("the thread waits forever");
    assert_eq!(failure.kind(), FailureKind::Deadlock, "{failure}");
    let text = failure.to_string();
    assert!(
        text.contains("thread 1") && text.contains("tests/reports/failure_reports.rs"),
        "{text}"
    );
}

#[test]
fn joined_and_scoped_threads_do_not_leak() {
    let report = Builder::new().explore(|| {
        let n = AtomicUsize::new(0);
        thread::scope(|s| {
            s.spawn(|| n.fetch_add(1, SeqCst));
        });
        let h = thread::spawn(|| ());
        h.join().unwrap();
    });
    assert!(report.failure().is_none(), "{report}");
}

#[kase::test(expect = "leak")]
fn expect_leak_passes_when_kase_finds_one() {
    // A reference cycle: two nodes that own each other.
    struct Node(std::sync::Mutex<Option<std::sync::Arc<Node>>>);
    let a = std::sync::Arc::new(Node(std::sync::Mutex::new(None)));
    let b = std::sync::Arc::new(Node(std::sync::Mutex::new(Some(a.clone()))));
    *a.0.lock().unwrap() = Some(b);
}

#[test]
fn backtraces_add_user_frames_to_each_step() {
    let with = Builder::new().backtraces(true).explore(lost_update);
    let text = with.failure().expect("lost update").to_string();
    assert!(
        text.contains("at reports::common::models::lost_update"),
        "{text}"
    );
    let without = Builder::new()
        .explore(lost_update)
        .failure()
        .unwrap()
        .to_string();
    assert!(!without.contains("at reports::"), "{without}");
}

#[test]
fn a_dropped_guard_unlocks_at_a_user_location() {
    let report = Builder::new().explore(split_lost_update);
    let text = report
        .failure()
        .expect("the split update loses one")
        .to_string();
    assert!(text.contains("unlock"), "{text}");
    assert!(
        !text.contains("/rustc/"),
        "every step is located in user code: {text}"
    );
}

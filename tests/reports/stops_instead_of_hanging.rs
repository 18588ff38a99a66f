//! Situations where kase must stop with a message rather than hang. Each runs
//! in a child process (the same test binary), since the right outcome may be
//! to end that process.

use kase::sync::atomic::{AtomicBool, Ordering::SeqCst};
use kase::sync::Arc;
use kase::{thread, Builder};

use crate::common::child::{self, in_child};

/// Runs this binary's test `name` in a child process with `KASE_CHILD` set,
/// returning its exit status and stderr.
fn run_child(name: &str) -> (std::process::ExitStatus, String) {
    let out = child::command(module_path!(), name)
        .env(child::VAR, "1")
        .output()
        .unwrap();
    child::assert_ran_one_test(&out);
    (
        out.status,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Spins in its destructor until a flag no one sets.
struct SpinOnDrop(Arc<AtomicBool>);

impl Drop for SpinOnDrop {
    fn drop(&mut self) {
        while !self.0.load(SeqCst) {
            thread::yield_now();
        }
    }
}

#[test]
fn a_drop_spinning_while_unwinding_ends_with_a_message_not_a_hang() {
    if in_child() {
        Builder::new().max_steps(1_000).explore(|| {
            let _spin = SpinOnDrop(Arc::new(AtomicBool::new(false)));
            panic!("the original failure");
        });
        return;
    }
    let (status, stderr) =
        run_child("a_drop_spinning_while_unwinding_ends_with_a_message_not_a_hang");
    assert!(!status.success());
    assert!(
        stderr.contains("keeps performing visible operations while unwinding"),
        "{stderr}"
    );
    assert!(stderr.contains("Aborting instead of hanging"), "{stderr}");
}

#[test]
fn check_determinism_reports_a_model_that_changes_between_runs() {
    // A counter kase cannot see (a std atomic outside the model) decides
    // what the model does: the same schedule runs differently twice.
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let model = || {
        let x = kase::sync::atomic::AtomicUsize::new(0);
        if RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % 2 == 0 {
            x.load(kase::sync::atomic::Ordering::SeqCst);
        } else {
            x.store(1, kase::sync::atomic::Ordering::SeqCst);
        }
    };
    let report = kase::Builder::new().check_determinism(true).explore(model);
    let failure = report.failure().expect("the second run differs");
    assert_eq!(failure.kind(), kase::FailureKind::Nondeterminism);
    // The first difference, with both runs' operations and locations: the
    // load (line 63) in one run, the store (line 65) in the other.
    let text = failure.to_string();
    assert!(
        text.contains("check_determinism: the same schedule ran differently twice. At step 1,"),
        "{text}"
    );
    let load = text.find("load").expect("the load is named");
    let store = text.find("store").expect("the store is named");
    assert!(load < store, "the first run loaded: {text}");
    assert!(
        text.contains("tests/reports/stops_instead_of_hanging.rs:63:"),
        "{text}"
    );
    assert!(
        text.contains("tests/reports/stops_instead_of_hanging.rs:65:"),
        "{text}"
    );
}

#[test]
fn check_determinism_passes_a_deterministic_model() {
    let report = kase::Builder::new().check_determinism(true).explore(|| {
        let x = kase::sync::Arc::new(kase::sync::atomic::AtomicUsize::new(0));
        let y = x.clone();
        let t = kase::thread::spawn(move || y.fetch_add(1, kase::sync::atomic::Ordering::SeqCst));
        x.fetch_add(1, kase::sync::atomic::Ordering::SeqCst);
        t.join().unwrap();
    });
    assert!(report.failure().is_none(), "{report}");
    assert_eq!(report.executions(), 2);
}

/// The child half of the watchdog test: a model thread blocks on a std
/// mutex another model thread holds across a scheduling point, which stops
/// the cooperative scheduler for good. Only runs in the child process.
fn blocked_on_std_mutex() {
    let report = kase::Builder::new().explore(|| {
        let std_lock = std::sync::Arc::new(std::sync::Mutex::new(()));
        let other = std_lock.clone();
        let _held = std_lock.lock().unwrap();
        let t = kase::thread::spawn(move || {
            let _g = other.lock().unwrap(); // blocks this OS thread forever
        });
        kase::thread::yield_now(); // lets the child run while the lock is held
        drop(_held);
        t.join().unwrap();
    });
    println!("unreachable: {report}");
}

#[test]
fn the_watchdog_ends_a_run_blocked_outside_kase_with_a_message() {
    if std::env::var_os("KASE_WATCHDOG_CHILD").is_some() {
        blocked_on_std_mutex();
        return;
    }
    watchdog_fires_in_child("the_watchdog_ends_a_run_blocked_outside_kase_with_a_message");
}

/// The process's first exploration has its own watching thread, which ends
/// with it; a later one starts another, which must fire all the same.
#[test]
fn the_watchdog_watches_an_exploration_after_a_finished_one() {
    if std::env::var_os("KASE_WATCHDOG_CHILD").is_some() {
        let report = kase::Builder::new().explore(|| {
            kase::thread::spawn(|| {}).join().unwrap();
        });
        assert!(report.failure().is_none(), "{report}");
        // Time for the first watching thread to see it is done and end.
        std::thread::sleep(std::time::Duration::from_millis(50));
        blocked_on_std_mutex();
        return;
    }
    watchdog_fires_in_child("the_watchdog_watches_an_exploration_after_a_finished_one");
}

/// Until a model spawns, nothing can hold a std resource across a switch:
/// a block outside kase is the model's own (it would hang without kase
/// too), and the watchdog starts only at the first spawn. A one-thread
/// model that waits past the limit is not ended.
#[test]
fn the_watchdog_starts_at_the_first_spawn() {
    if in_child() {
        let report = Builder::new()
            .watchdog(Some(std::time::Duration::from_millis(50)))
            .explore(|| {
                let flag = AtomicBool::new(false);
                std::thread::sleep(std::time::Duration::from_millis(400));
                flag.store(true, SeqCst);
            });
        assert!(report.failure().is_none(), "{report}");
        return;
    }
    let (status, stderr) = run_child("the_watchdog_starts_at_the_first_spawn");
    assert!(status.success(), "{stderr}");
    assert!(!stderr.contains("watchdog"), "{stderr}");
}

/// Runs test `name` as a child that blocks a model thread outside kase,
/// and checks that the watchdog ends it with its message.
fn watchdog_fires_in_child(name: &str) {
    let start = std::time::Instant::now();
    // Without `--nocapture`, as plain `cargo test` runs: the message must
    // get past the capture, since the process ends before it is shown.
    let mut command = child::command_captured(module_path!(), name);
    command
        .env("KASE_WATCHDOG_CHILD", "1")
        .env("KASE_WATCHDOG", "1");
    let out = output_within(command, std::time::Duration::from_secs(60));
    child::assert_ran_one_test(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the child must not pass: {stderr}");
    // Named after the test (the model has no `name`: libtest's thread name).
    let label = format!(
        "kase [{}]: watchdog: no progress",
        child::test_path(module_path!(), name)
    );
    assert!(stderr.contains(&label), "{stderr}");
    // What blocked: the spawned thread, before any visible operation.
    assert!(
        stderr.contains("thread 1 is blocked since it started"),
        "{stderr}"
    );
    assert!(
        stderr.contains("blocked outside kase's control"),
        "{stderr}"
    );
    assert!(
        stderr.contains("tests/reports/stops_instead_of_hanging.rs"),
        "names the last location: {stderr}"
    );
    assert!(start.elapsed() < std::time::Duration::from_secs(30));
}

#[test]
fn an_execution_with_a_hundred_thousand_visible_operations_completes() {
    let report = Builder::new().explore(|| {
        let mine = kase::sync::atomic::AtomicUsize::new(0);
        let t = thread::spawn(|| {
            let theirs = kase::sync::atomic::AtomicUsize::new(0);
            for _ in 0..50_000 {
                theirs.fetch_add(1, SeqCst);
            }
        });
        for _ in 0..50_000 {
            mine.fetch_add(1, SeqCst);
        }
        t.join().unwrap();
        assert_eq!(mine.load(SeqCst), 50_000);
    });
    assert!(report.failure().is_none(), "{report}");
    // The two threads touch nothing in common: one trace.
    assert_eq!(report.executions(), 1);
}

/// Recursion `depth` deep with a 512-byte frame that the optimiser keeps.
fn recurse(depth: u64, limit: u64) -> u64 {
    let frame = std::hint::black_box([depth as u8; 512]);
    if depth >= limit {
        return u64::from(frame[0]);
    }
    recurse(depth + 1, limit) + u64::from(std::hint::black_box(frame)[1])
}

#[test]
fn a_model_thread_overflowing_its_stack_names_the_knob_to_turn() {
    if in_child() {
        Builder::new().stack_size(64 * 1024).explore(|| {
            let t = thread::spawn(|| {
                recurse(0, u64::MAX);
            });
            t.join().unwrap();
        });
        return;
    }
    let (status, stderr) = run_child("a_model_thread_overflowing_its_stack_names_the_knob_to_turn");
    assert!(!status.success(), "{stderr}");
    assert!(
        stderr.contains("kase: model thread 1 overflowed its stack of 65536 bytes"),
        "{stderr}"
    );
    for knob in [
        "Builder::stack_size",
        "KASE_STACK_SIZE",
        "#[kase::test(stack_size = ",
    ] {
        assert!(stderr.contains(knob), "{knob}: {stderr}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(6), "ends with SIGABRT: {status:?}");
    }
}

#[test]
fn an_overflow_of_the_main_model_thread_is_explained_too() {
    if in_child() {
        Builder::new().stack_size(64 * 1024).explore(|| {
            recurse(0, u64::MAX);
        });
        return;
    }
    let (status, stderr) = run_child("an_overflow_of_the_main_model_thread_is_explained_too");
    assert!(!status.success(), "{stderr}");
    assert!(
        stderr.contains("kase: model thread main overflowed its stack of 65536 bytes"),
        "{stderr}"
    );
}

#[test]
fn an_os_thread_overflowing_after_a_model_ran_still_gets_std_s_message() {
    if in_child() {
        // Installs kase's handler, which must pass other faults on.
        Builder::new().explore(|| {});
        std::thread::Builder::new()
            .stack_size(64 * 1024)
            .spawn(|| recurse(0, u64::MAX))
            .unwrap()
            .join()
            .unwrap();
        return;
    }
    let (status, stderr) =
        run_child("an_os_thread_overflowing_after_a_model_ran_still_gets_std_s_message");
    assert!(!status.success(), "{stderr}");
    assert!(stderr.contains("has overflowed its stack"), "{stderr}");
    assert!(!stderr.contains("kase: model thread"), "{stderr}");
}

#[test]
fn stack_size_gives_model_threads_the_stack_they_need() {
    // About 1 MiB of frames: more than a 256 KiB stack, less than 4 MiB.
    let report = Builder::new().stack_size(4 << 20).explore(|| {
        let t = thread::spawn(|| recurse(0, 2_000));
        assert!(recurse(0, 2_000) > 0);
        t.join().unwrap();
    });
    assert!(report.failure().is_none(), "{report}");
}

/// Two threads with two dependent operations each after a spawn.
fn two_by_two() {
    let x = Arc::new(kase::sync::atomic::AtomicUsize::new(0));
    let y = x.clone();
    let t = thread::spawn(move || {
        y.store(1, SeqCst);
        y.store(2, SeqCst);
    });
    x.load(SeqCst);
    x.load(SeqCst);
    t.join().unwrap();
}

#[test]
fn a_panic_inside_kase_is_reported_as_a_kase_bug_with_the_schedule_so_far() {
    // The hook panics in kase's scheduler at step 4 of the first execution:
    // after three real choices (spawning is not a scheduling point, so
    // each step so far was a choice between the two threads).
    let report = Builder::new().__internal_error_at(1, 4).explore(two_by_two);
    let failure = report.failure().expect("reported, not unwound");
    assert_eq!(failure.kind(), kase::FailureKind::Internal);
    assert!(!report.complete());
    assert_eq!(report.executions(), 1);
    assert_eq!(failure.schedule().len(), 3, "{failure}");
    let text = failure.to_string();
    for expected in [
        "kase internal error (a bug in kase)",
        "not in the code under test",
        "Please report it",
        "`Builder::__internal_error_at` fired at step 4",
        "kase-rt/src/explore/runner.rs",
        "execution 1 of this exploration",
        &format!("KASE_REPLAY='{}'", failure.schedule()),
    ] {
        assert!(text.contains(expected), "{expected:?} in:\n{text}");
    }

    // The schedule is a real one: replaying it reaches the same point.
    let replayed = Builder::new()
        .replay(&failure.schedule().to_string())
        .__internal_error_at(1, 4)
        .explore(two_by_two);
    let again = replayed.failure().expect("the same internal error");
    assert_eq!(again.kind(), kase::FailureKind::Internal);
    assert_eq!(again.schedule(), failure.schedule());
    // Without the hook it is an ordinary execution.
    let plain = Builder::new()
        .replay(&failure.schedule().to_string())
        .explore(two_by_two);
    assert!(plain.failure().is_none(), "{plain}");

    // The thread can explore again afterwards, and all of it.
    let report = Builder::new().explore(two_by_two);
    assert!(report.complete() && report.failure().is_none(), "{report}");
    assert_eq!(report.executions(), 6);
}

/// Spawn orders that differ between executions: main spawns `a` and `b`,
/// `a` spawns `c`, so `b` and `c` are spawned in either order.
fn nested_spawns() {
    let x = Arc::new(kase::sync::atomic::AtomicUsize::new(0));
    let (xa, xb) = (x.clone(), x.clone());
    let a = thread::spawn(move || {
        xa.fetch_add(1, SeqCst);
        let xc = xa.clone();
        let c = thread::spawn(move || xc.fetch_add(10, SeqCst));
        xa.load(SeqCst);
        c.join().unwrap();
    });
    x.load(SeqCst);
    let b = thread::spawn(move || xb.fetch_add(100, SeqCst));
    x.load(SeqCst);
    a.join().unwrap();
    b.join().unwrap();
}

#[test]
fn an_internal_error_in_a_later_execution_carries_a_schedule_that_replays_it() {
    let all = Builder::new().explore(nested_spawns);
    assert!(all.complete() && all.executions() > 8, "{all}");
    // In some executions `b` and `c` are spawned in the other order than in
    // the first, so the explorer's thread numbers differ from a fresh run's.
    for execution in 1..=all.executions() {
        let report = Builder::new()
            .__internal_error_at(execution, 8)
            .explore(nested_spawns);
        let failure = report.failure().expect("reported");
        assert_eq!(failure.kind(), kase::FailureKind::Internal);
        assert_eq!(report.executions(), execution);
        assert!(
            failure
                .to_string()
                .contains(&format!("execution {execution} of this exploration")),
            "{failure}"
        );
        // Threads are numbered as a fresh replay numbers them, so the
        // schedule leads a replay to the same choices.
        let replayed = Builder::new()
            .replay(&failure.schedule().to_string())
            .__internal_error_at(1, 8)
            .explore(nested_spawns);
        let again = replayed.failure().expect("the same point");
        assert_eq!(again.kind(), kase::FailureKind::Internal, "{again}");
        assert_eq!(
            again.schedule(),
            failure.schedule(),
            "execution {execution}"
        );
    }
}

#[test]
fn a_model_that_catches_panics_does_not_catch_kase_s_own() {
    // The choice at a thread's scheduling point is made on that thread's
    // stack: a panic of kase's there must reach the driver, not the
    // model's `catch_unwind` around the operation. Each of main's
    // scheduling points in the first execution, in turn.
    for step in 1..=6 {
        let caught = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let seen = caught.clone();
        let report = Builder::new()
            .__internal_error_at(1, step)
            .explore(move || {
                let x = Arc::new(kase::sync::atomic::AtomicUsize::new(0));
                let y = x.clone();
                let t = thread::spawn(move || {
                    y.store(1, SeqCst);
                    y.store(2, SeqCst);
                });
                let swallowed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    for _ in 0..4 {
                        x.load(SeqCst);
                    }
                }));
                if swallowed.is_err() {
                    seen.store(true, SeqCst);
                }
                t.join().unwrap();
            });
        let failure = report.failure().expect("reported");
        assert_eq!(
            failure.kind(),
            kase::FailureKind::Internal,
            "step {step}: {failure}"
        );
        assert!(
            !caught.load(SeqCst),
            "step {step}: the model caught kase's panic"
        );
    }
}

#[test]
fn check_panics_with_the_internal_error_report() {
    let payload = std::panic::catch_unwind(|| {
        Builder::new().__internal_error_at(1, 2).check(two_by_two);
    })
    .expect_err("check fails");
    let message = payload
        .downcast_ref::<String>()
        .expect("a report, not kase's own payload");
    assert!(
        message.starts_with("kase internal error (a bug in kase)"),
        "{message}"
    );
}

#[test]
fn an_internal_error_raised_inside_a_model_thread_is_not_the_model_s_failure() {
    // What a failed invariant in a shim (running on a model thread) raises.
    let report = Builder::new().explore(|| {
        let t = thread::spawn(|| kase_rt::__fuzz::internal_error("a shim's invariant"));
        let _ = t.join();
    });
    let failure = report.failure().expect("reported");
    assert_eq!(failure.kind(), kase::FailureKind::Internal);
    let text = failure.to_string();
    assert!(
        text.contains("kase failed while running thread 1"),
        "{text}"
    );
    assert!(text.contains("a bug in kase"), "{text}");
    assert!(failure.panic_payload().is_none());
}

/// One execution of ten million visible operations (far longer than the
/// budgets below), on an atomic only this thread touches.
fn ten_million_steps() {
    let x = kase::sync::atomic::AtomicUsize::new(0);
    for _ in 0..10_000_000 {
        x.fetch_add(1, SeqCst);
    }
}

#[test]
fn max_duration_stops_a_single_long_execution_within_a_second() {
    let budget = std::time::Duration::from_millis(300);
    let start = std::time::Instant::now();
    let report = Builder::new()
        .max_steps(100_000_000)
        .max_duration(budget)
        .explore(ten_million_steps);
    let took = start.elapsed();
    assert!(
        took < budget + std::time::Duration::from_secs(1),
        "took {took:?} for a budget of {budget:?}"
    );
    assert!(report.failure().is_none(), "{report}");
    assert!(!report.complete());
    assert_eq!(report.executions(), 0, "the cut execution does not count");
    assert!(
        report.warnings().iter().any(|w| w.contains("max_duration")),
        "{:?}",
        report.warnings()
    );
    assert!(report.to_string().contains("INCOMPLETE"), "{report}");
}

#[test]
fn a_model_panic_that_merely_reads_like_an_internal_error_is_the_model_s_failure() {
    // kase tells its own errors by the payload's type, not by the text.
    let report = Builder::new().explore(|| {
        let t = thread::spawn(|| panic!("kase internal error: not really"));
        let _ = t.join();
    });
    let failure = report.failure().expect("reported");
    assert_eq!(failure.kind(), kase::FailureKind::Panic);
    assert_eq!(failure.message(), Some("kase internal error: not really"));
    let text = failure.to_string();
    assert!(
        text.starts_with("kase found a panic: thread 1 panicked"),
        "{text}"
    );
    assert!(!text.contains("a bug in kase"), "{text}");
    let payload = failure.panic_payload().expect("the model's own payload");
    assert_eq!(
        payload.downcast_ref::<&str>(),
        Some(&"kase internal error: not really")
    );
}

#[test]
fn a_real_internal_error_in_a_model_thread_keeps_its_old_text_and_location() {
    let line = line!() + 2;
    let report = Builder::new().explore(|| {
        let t = thread::spawn(|| kase_rt::__fuzz::internal_error("a shim's invariant"));
        let _ = t.join();
    });
    let failure = report.failure().expect("reported");
    assert_eq!(failure.kind(), kase::FailureKind::Internal);
    assert_eq!(
        failure.message(),
        Some("kase internal error: a shim's invariant")
    );
    let text = failure.to_string();
    assert!(
        text.starts_with(&format!(
            "kase internal error (a bug in kase): kase failed while running thread 1 at {}:{line}:",
            file!()
        )),
        "{text}"
    );
}

/// `command`'s output, or a panic if it has not ended after `limit` (a
/// watchdog that never fires would otherwise hang the suite).
fn output_within(
    mut command: std::process::Command,
    limit: std::time::Duration,
) -> std::process::Output {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            pipe.read_to_end(&mut bytes).unwrap();
            bytes
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the child still ran after {limit:?}: the watchdog never fired");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    std::process::Output {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    }
}

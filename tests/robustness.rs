//! Situations where kase must stop with a message rather than hang. Each runs
//! in a child process (the same test binary), since the right outcome may be
//! to end that process.

use std::process::Command;

use kase::sync::atomic::{AtomicBool, Ordering::SeqCst};
use kase::sync::Arc;
use kase::{thread, Builder};

/// Runs this binary's test `name` in a child process with `KASE_CHILD` set,
/// returning its exit status and stderr.
fn run_child(name: &str) -> (std::process::ExitStatus, String) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env("KASE_CHILD", "1")
        .output()
        .unwrap();
    (
        out.status,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn in_child() -> bool {
    std::env::var_os("KASE_CHILD").is_some()
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
    assert!(
        failure.to_string().contains("check_determinism"),
        "{failure}"
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
    let start = std::time::Instant::now();
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "the_watchdog_ends_a_run_blocked_outside_kase_with_a_message",
            "--nocapture",
        ])
        .env("KASE_WATCHDOG_CHILD", "1")
        .env("KASE_WATCHDOG", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the child must not pass: {stderr}");
    assert!(stderr.contains("watchdog: no progress"), "{stderr}");
    assert!(
        stderr.contains("blocked outside kase's control"),
        "{stderr}"
    );
    assert!(
        stderr.contains("tests/robustness.rs"),
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
    let (status, stderr) =
        run_child("a_model_thread_overflowing_its_stack_names_the_knob_to_turn");
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

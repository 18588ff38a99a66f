//! Models kase cannot see into. Code compiled against real std — typically a
//! library's `#[cfg_attr(test, kase::instrument)]` code used from an
//! integration test, where the library is built without `cfg(test)` — gives
//! the explorer nothing to interleave, so even a racy method passes after one
//! execution. kase says so: a warning in the report and on stderr, past the
//! harness's capture. An ordinary model gets no such warning.

use std::sync::atomic::{AtomicUsize as StdAtomicUsize, Ordering::SeqCst};

use kase::sync::atomic::AtomicUsize;
use kase::sync::{Arc, Mutex};
use kase::{thread, Builder};

use crate::common::child::{self, in_child};

/// A racy counter on std's atomic, as a library's instrumented code is when
/// the instrumentation is compiled out.
struct StdCounter(StdAtomicUsize);

impl StdCounter {
    fn increment(&self) {
        let v = self.0.load(SeqCst);
        self.0.store(v + 1, SeqCst);
    }
}

/// kase threads (spawn and join are visible) racing on the std counter.
fn racy_on_std() {
    let counter = Arc::new(StdCounter(StdAtomicUsize::new(0)));
    let c = counter.clone();
    let t = thread::spawn(move || c.increment());
    counter.increment();
    t.join().unwrap();
    assert_eq!(counter.0.load(SeqCst), 2);
}

#[test]
fn a_model_on_real_std_passes_with_a_warning_saying_what_to_do() {
    let report = Builder::new().explore(racy_on_std);
    assert!(report.failure().is_none(), "{report}");
    assert_eq!(report.executions(), 1);
    let warning = report
        .warnings()
        .iter()
        .find(|w| w.contains("made no visible operation on shared state"))
        .unwrap_or_else(|| panic!("{:?}", report.warnings()));
    assert!(
        warning.contains("`#[kase::instrument]` (not `#[cfg_attr(test, kase::instrument)]`")
            && warning.contains("`use kase::sync` in the library"),
        "{warning}"
    );
}

#[test]
fn a_model_starting_os_threads_is_reported_past_the_capture() {
    let name = "a_model_starting_os_threads_is_reported_past_the_capture";
    if in_child() {
        // The std thread waits until the exploration is over, so it is alive
        // when kase looks after the first execution.
        let (done, wait) = std::sync::mpsc::channel::<()>();
        let wait = std::sync::Mutex::new(Some(wait));
        let report = Builder::new().explore(|| {
            // A visible operation: only the OS thread is out of sight.
            AtomicUsize::new(0).store(1, SeqCst);
            if let Some(wait) = wait.lock().unwrap().take() {
                std::thread::spawn(move || wait.recv());
            }
        });
        drop(done);
        assert!(
            report
                .warnings()
                .iter()
                .any(|w| w.contains("the model started 1 OS thread")),
            "{:?}",
            report.warnings()
        );
        return;
    }
    // Without `--nocapture`, as plain `cargo test` runs.
    let out = child::command_captured(module_path!(), name)
        .env(child::VAR, "1")
        .output()
        .unwrap();
    child::assert_ran_one_test(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let label = format!(
        "kase [{}]: warning: the model started 1 OS thread",
        child::test_path(module_path!(), name)
    );
    assert!(stderr.contains(&label), "{stderr}");
}

#[test]
fn ordinary_models_get_no_such_warning() {
    let threads = Builder::new().explore(|| {
        let x = Arc::new(AtomicUsize::new(0));
        let y = x.clone();
        let t = thread::spawn(move || y.fetch_add(1, SeqCst));
        x.fetch_add(1, SeqCst);
        t.join().unwrap();
    });
    assert!(threads.warnings().is_empty(), "{:?}", threads.warnings());
    // One thread, one execution, but a kase lock: kase sees it.
    let single = Builder::new().explore(|| {
        *Mutex::new(0).lock().unwrap() += 1;
    });
    assert_eq!(single.executions(), 1);
    assert!(single.warnings().is_empty(), "{:?}", single.warnings());
}

//! Progress lines on stderr: with `KASE_PROGRESS=1` a line every few
//! seconds (the first after one) and a summary line at the end of each
//! exploration; with `KASE_PROGRESS=0` none. The lines go to the process's
//! stderr past the test harness's capture, so each case runs in a child
//! process (this binary) with the variable set, and reads its stderr.

use std::time::Duration;

use kase::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use kase::{thread, Builder};

use crate::common::child::{self, in_child};
use crate::common::models::many_traces;

/// Runs this binary's test `name` in a child process with `KASE_CHILD` and
/// `KASE_PROGRESS=progress`; its stderr.
fn run_child(name: &str, progress: &str) -> String {
    let out = child::command(module_path!(), name)
        .env(child::VAR, "1")
        .env("KASE_PROGRESS", progress)
        .output()
        .unwrap();
    child::assert_ran_one_test(&out);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "the child failed:\n{stderr}");
    stderr
}

/// Explores four threads adding four times to one atomic (millions of
/// traces) for 1.5 s, then a two-execution model.
fn explorations() {
    let report = Builder::new()
        .name("progress::big")
        .max_duration(Duration::from_millis(1_500))
        .explore(many_traces);
    assert!(!report.complete());
    let report = Builder::new().name("progress::small").explore(two_adds);
    assert!(report.complete());
    let report = Builder::new()
        .name("progress::bounded")
        .preemption_bound(1)
        .unbounded_trial(0)
        .explore(two_adds);
    assert_eq!(report.traces(), Some(2));
}

/// Two threads add to one atomic: two traces.
fn two_adds() {
    let n = AtomicUsize::new(0);
    thread::scope(|s| {
        s.spawn(|| n.fetch_add(1, SeqCst));
        n.fetch_add(1, SeqCst);
    });
}

#[test]
fn kase_progress_1_prints_progress_and_a_summary_per_exploration() {
    if in_child() {
        return explorations();
    }
    let stderr = run_child(
        "kase_progress_1_prints_progress_and_a_summary_per_exploration",
        "1",
    );
    let lines: Vec<&str> = stderr.lines().filter(|l| l.starts_with("kase [")).collect();
    let progress: Vec<&&str> = lines
        .iter()
        .filter(|l| {
            l.starts_with("kase [progress::big]: ")
                && !l.contains(": done: ")
                && l.contains(" elapsed")
        })
        .collect();
    assert!(!progress.is_empty(), "a progress line after 1 s:\n{stderr}");
    assert!(
        progress[0].contains(" executions (")
            && progress[0].contains("/s), 0 sleep-set-blocked, depth ")
            && progress[0].contains(" elapsed"),
        "{stderr}"
    );
    // How far it got, estimated from the search tree: the part explored,
    // the executions in all and the time left.
    let estimate = progress.last().unwrap();
    assert!(
        estimate.contains("% explored (estimate: ~")
            && estimate.contains(" executions in all, ~")
            && estimate.ends_with(" left)"),
        "{stderr}"
    );
    // Once, what to do about it: here, the budget that will stop it.
    let hints: Vec<&&str> = lines
        .iter()
        .filter(|l| l.starts_with("kase [progress::big]: still exploring: "))
        .collect();
    assert_eq!(hints.len(), 1, "{stderr}");
    assert!(
        hints[0].contains("it stops at max_duration = 1.5s, INCOMPLETE")
            && hints[0].contains("allow_incomplete"),
        "{stderr}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("kase [progress::big]: done: ")
                // The deadline may pass between executions, during one,
                // or while the explorer computes the next one.
                && l.contains("INCOMPLETE (stopped by max_duration = 1.5s")),
        "the big exploration's summary:\n{stderr}"
    );
    assert!(
        lines.iter().any(
            |l| l.starts_with("kase [progress::small]: done: 2 executions in ")
                && l.ends_with(": complete")
        ),
        "a summary for the small one too:\n{stderr}"
    );
    // The optimal reduction's executions are its traces; a bounded one
    // says how many distinct traces its executions had.
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("kase [progress::bounded]: done: ")
                && l.ends_with(", 2 distinct traces: complete")),
        "the bounded exploration's summary:\n{stderr}"
    );
    assert!(
        !lines
            .iter()
            .any(|l| l.starts_with("kase [progress::small]: done: ") && l.contains("distinct")),
        "{stderr}"
    );
}

#[test]
fn kase_progress_0_prints_no_lines() {
    if in_child() {
        return explorations();
    }
    let stderr = run_child("kase_progress_0_prints_no_lines", "0");
    assert!(
        !stderr.lines().any(|l| l.starts_with("kase [")
            && (l.contains(" elapsed")
                || l.contains(": done: ")
                || l.contains(": still exploring: "))),
        "no progress, hint or summary lines:\n{stderr}"
    );
    // The control: the explorations did run (the budget warning is not a
    // progress line, and is still printed, labelled with the model's name).
    assert!(
        stderr
            .contains("kase [progress::big]: WARNING: exploration stopped by max_duration = 1.5s"),
        "{stderr}"
    );
}

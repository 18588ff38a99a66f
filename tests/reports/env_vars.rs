//! The environment variables that steer replay and regression files
//! (`KASE_REPLAY`, `KASE_PERSIST`, `KASE_REGRESSIONS_DIR`), read by
//! `Builder::new()`. Environment variables are process-wide and tests run in
//! parallel, so each case runs in a child process (this binary) with the
//! variables set; the child asserts what it sees and the parent checks the
//! child passed and what it left on disk.

use std::fs;

use kase::{Builder, Report};

use crate::common::child::{self, in_child};
use crate::common::models::lost_update;
use crate::common::temp_dir;

/// Runs this binary's test `name` alone in a child process with `KASE_CHILD`
/// and `vars` set; panics with its output unless it passed. Its stderr.
fn run_child(name: &str, vars: &[(&str, &str)]) -> String {
    let out = child::command(module_path!(), name)
        .env(child::VAR, "1")
        .envs(vars.iter().copied())
        .output()
        .unwrap();
    child::assert_ran_one_test(&out);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "the child {name} with {vars:?} failed:\n{}\n{stderr}",
        String::from_utf8_lossy(&out.stdout)
    );
    stderr
}

/// A named exploration of [`lost_update`] with `Builder::new()` (so with
/// whatever the environment says).
fn explore_named() -> Report {
    Builder::new().name("env::counter").explore(lost_update)
}

#[test]
fn kase_replay_runs_exactly_the_schedule_it_names() {
    if in_child() {
        let schedule = std::env::var("KASE_REPLAY").unwrap();
        let report = Builder::new().explore(lost_update);
        assert_eq!(report.executions(), 1, "{report}");
        let failure = report.failure().expect("the replayed failure");
        assert_eq!(failure.schedule().to_string(), schedule);
        return;
    }
    let explored = Builder::new().explore(lost_update);
    let failure = explored.failure().expect("kase finds the lost update");
    assert!(
        explored.executions() > 1,
        "the control: exploring runs more"
    );
    let schedule = failure.schedule().to_string();
    run_child(
        "kase_replay_runs_exactly_the_schedule_it_names",
        &[("KASE_REPLAY", &schedule)],
    );
}

#[test]
fn a_bad_kase_replay_is_an_error_naming_the_variable() {
    if in_child() {
        let result = std::panic::catch_unwind(Builder::new);
        let payload = result.expect_err("a garbage KASE_REPLAY panics");
        let message = payload
            .downcast_ref::<String>()
            .cloned()
            .unwrap_or_default();
        assert!(message.contains("KASE_REPLAY"), "{message}");
        return;
    }
    run_child(
        "a_bad_kase_replay_is_an_error_naming_the_variable",
        &[("KASE_REPLAY", "kase1:1..x")],
    );
}

#[test]
fn kase_regressions_dir_and_kase_persist_steer_the_regression_file() {
    const NAME: &str = "kase_regressions_dir_and_kase_persist_steer_the_regression_file";
    if in_child() {
        let report = explore_named();
        assert!(report.failure().is_some(), "{report}");
        let replayed = std::env::var("EXPECT_REPLAYED").unwrap();
        assert_eq!(report.replayed().to_string(), replayed, "{report}");
        return;
    }
    let dir = temp_dir("env-persist");
    let file = dir.join("env.txt");
    let dir_var = dir.to_str().unwrap();

    // KASE_PERSIST=off: nothing written.
    run_child(
        NAME,
        &[
            ("KASE_REGRESSIONS_DIR", dir_var),
            ("KASE_PERSIST", "off"),
            ("EXPECT_REPLAYED", "0"),
        ],
    );
    assert!(!file.exists(), "off writes nothing");

    // KASE_PERSIST=print: the line to add is printed, nothing written.
    let stderr = run_child(
        NAME,
        &[
            ("KASE_REGRESSIONS_DIR", dir_var),
            ("KASE_PERSIST", "print"),
            ("EXPECT_REPLAYED", "0"),
        ],
    );
    assert!(
        stderr.contains("kase [env::counter]: add this line to") && stderr.contains("env.txt"),
        "{stderr}"
    );
    assert!(!file.exists(), "print writes nothing");

    // KASE_PERSIST=file (the default): saved in KASE_REGRESSIONS_DIR.
    run_child(
        NAME,
        &[("KASE_REGRESSIONS_DIR", dir_var), ("EXPECT_REPLAYED", "0")],
    );
    let saved = fs::read_to_string(&file).expect("the regression file was written");
    let lines: Vec<&str> = saved.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(lines.len(), 1, "{saved}");
    assert!(lines[0].starts_with("counter kase1:"), "{saved}");

    // KASE_PERSIST=print with a saved line: it is replayed first (and fails
    // again, so there is nothing new to print); the file is unchanged.
    run_child(
        NAME,
        &[
            ("KASE_REGRESSIONS_DIR", dir_var),
            ("KASE_PERSIST", "print"),
            ("EXPECT_REPLAYED", "1"),
        ],
    );
    assert_eq!(fs::read_to_string(&file).unwrap(), saved);

    // KASE_PERSIST=off again: the saved line is not replayed either.
    run_child(
        NAME,
        &[
            ("KASE_REGRESSIONS_DIR", dir_var),
            ("KASE_PERSIST", "off"),
            ("EXPECT_REPLAYED", "0"),
        ],
    );
    let _ = fs::remove_dir_all(&dir);
}

/// `KASE_ALLOW_INCOMPLETE=1` lets `check` pass an exploration a budget cut
/// short (`KASE_MAX_EXECUTIONS` here); without it the same run fails.
#[test]
fn kase_allow_incomplete_accepts_an_exploration_a_budget_cut_short() {
    let name = "kase_allow_incomplete_accepts_an_exploration_a_budget_cut_short";
    if in_child() {
        Builder::new().check(lost_update_fixed);
        return;
    }
    run_child(
        name,
        &[("KASE_MAX_EXECUTIONS", "1"), ("KASE_ALLOW_INCOMPLETE", "1")],
    );
    let out = child::command(module_path!(), name)
        .env(child::VAR, "1")
        .env("KASE_MAX_EXECUTIONS", "1")
        .output()
        .unwrap();
    child::assert_ran_one_test(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "incomplete must fail:\n{stderr}");
    assert!(
        stderr.contains("INCOMPLETE: it was stopped by max_executions = 1"),
        "{stderr}"
    );
}

/// `KASE_MAX_PREEMPTIONS` sets the preemption bound and
/// `KASE_UNBOUNDED_TRIAL=0` applies it at once: at 0 the lost update (one
/// preemption away) is not found, `check` passes and the labelled note says
/// the result holds only up to the bound; at 1 it is found. With the
/// default trial the small model is explored whole, bug included.
#[test]
fn kase_max_preemptions_bounds_the_search() {
    let name = "kase_max_preemptions_bounds_the_search";
    if in_child() {
        let bound: usize = std::env::var("KASE_MAX_PREEMPTIONS")
            .unwrap()
            .parse()
            .unwrap();
        let report = Builder::new().explore(lost_update);
        if std::env::var_os("KASE_UNBOUNDED_TRIAL").is_none() {
            assert_eq!(report.preemption_bound(), None, "{report}");
            assert!(report.failure().is_some(), "{report}");
            return;
        }
        assert_eq!(report.preemption_bound(), Some(bound), "{report}");
        assert_eq!(report.failure().is_some(), bound >= 1, "{report}");
        if bound == 0 {
            Builder::new().check(lost_update);
        }
        return;
    }
    let stderr = run_child(
        name,
        &[("KASE_MAX_PREEMPTIONS", "0"), ("KASE_UNBOUNDED_TRIAL", "0")],
    );
    assert!(
        stderr.contains("note: no failure in any execution with at most 0 preemptions")
            && stderr.contains("holds only up to it"),
        "{stderr}"
    );
    run_child(
        name,
        &[("KASE_MAX_PREEMPTIONS", "1"), ("KASE_UNBOUNDED_TRIAL", "0")],
    );
    run_child(name, &[("KASE_MAX_PREEMPTIONS", "0")]);
}

/// Two threads adding to one atomic: no failure, two executions.
fn lost_update_fixed() {
    use kase::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    let n = kase::sync::Arc::new(AtomicUsize::new(0));
    let m = n.clone();
    let t = kase::thread::spawn(move || m.fetch_add(1, SeqCst));
    n.fetch_add(1, SeqCst);
    t.join().unwrap();
}

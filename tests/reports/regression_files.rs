//! Regression files: a failure is saved to `<dir>/<module>.txt`, and saved
//! schedules are replayed before exploring. Each test uses its own
//! directory under the system's temporary directory (tests run in parallel
//! and environment variables are process-wide, so none are set here).

use std::fs;
use std::path::Path;

use kase::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use kase::sync::Arc;
use kase::{thread, Builder, FailureKind, Persist};

use crate::common::temp_dir;

/// A lost update; with `fixed`, the increments are atomic.
fn counter(fixed: bool) -> impl Fn() + Sync {
    checked_counter(fixed, true)
}

/// The same; without `strict`, a lost update is tolerated.
fn checked_counter(fixed: bool, strict: bool) -> impl Fn() + Sync {
    move || {
        let n = Arc::new(AtomicUsize::new(0));
        let m = n.clone();
        let t = thread::spawn(move || {
            if fixed {
                m.fetch_add(1, SeqCst);
            } else {
                let v = m.load(SeqCst);
                m.store(v + 1, SeqCst);
            }
        });
        if fixed {
            n.fetch_add(1, SeqCst);
        } else {
            let v = n.load(SeqCst);
            n.store(v + 1, SeqCst);
        }
        t.join().unwrap();
        let total = n.load(SeqCst);
        assert!(!strict || total == 2, "an increment was lost");
    }
}

fn builder(dir: &Path, name: &str) -> Builder {
    Builder::new()
        .name(name)
        .regressions_dir(dir)
        .persist(Persist::File)
}

/// The line of this file holding `code` (first occurrence).
fn line_of(code: &str) -> usize {
    let source = include_str!("regression_files.rs");
    source
        .lines()
        .position(|l| l.trim() == code)
        .map(|i| i + 1)
        .unwrap_or_else(|| panic!("{code:?} is not in regression_files.rs"))
}

/// The lines of `path` that are not comments.
fn entries(path: &Path) -> Vec<String> {
    fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_failure_is_saved_once_and_replayed_first() {
    let dir = temp_dir("persist-round_trip");
    let file = dir.join("my_crate.counters.txt");

    let first = builder(&dir, "my_crate::counters::lost_update").explore(counter(false));
    let failure = first.failure().expect("the lost update is found");
    assert_eq!(failure.saved_to(), Some(file.as_path()));
    assert_eq!(first.replayed(), 0);
    let text = fs::read_to_string(&file).unwrap();
    assert!(
        text.starts_with("# kase regression file for the tests in `my_crate::counters`."),
        "{text}"
    );
    assert!(text.contains("Check this file in"), "{text}");
    let schedule = failure.schedule().to_string();
    let line = line_of(r#"assert!(!strict || total == 2, "an increment was lost");"#);
    assert_eq!(
        entries(&file),
        [format!(
            "lost_update {schedule}  # panic: main panicked at tests/reports/regression_files.rs:{line}:9: an increment was lost"
        )]
    );
    let report = failure.to_string();
    assert!(
        report.contains(&format!("Saved to {} (check it in)", file.display())),
        "{report}"
    );

    // The next run replays the saved schedule before exploring: one
    // execution, and the report says where the schedule came from.
    for _ in 0..2 {
        let again = builder(&dir, "my_crate::counters::lost_update").explore(counter(false));
        assert_eq!(again.executions(), 1);
        assert_eq!(again.replayed(), 1);
        let failure = again.failure().expect("still fails");
        assert_eq!(failure.kind(), FailureKind::Panic);
        assert_eq!(failure.regression_file(), Some(file.as_path()));
        assert_eq!(failure.schedule().to_string(), schedule);
        let report = failure.to_string();
        assert!(
            report.contains(&format!(
                "note: this schedule was saved in {}:5 and replayed before exploring",
                file.display()
            )),
            "{report}"
        );
    }
    // Not saved twice.
    assert_eq!(entries(&file).len(), 1);
    let _ = fs::remove_dir_all(&dir);
}

/// Fails when main reads `bad` (0: before the other thread's store, 1:
/// after it). One of the two variants passes in the first execution of an
/// exploration and fails in a later one.
fn racy_read(bad: usize) -> impl Fn() + Sync {
    move || {
        let x = Arc::new(AtomicUsize::new(0));
        let x2 = x.clone();
        let t = thread::spawn(move || x2.store(1, SeqCst));
        let seen = x.load(SeqCst);
        t.join().unwrap();
        assert_ne!(seen, bad, "main read {bad}");
    }
}

#[test]
fn saved_schedules_run_before_exploration_and_outside_its_budget() {
    let dir = temp_dir("persist-order");
    let name = "order::racy_read";

    // With a budget of one execution, exploring alone does not find the
    // failure of one of the variants...
    let bad = (0..2)
        .find(|&bad| {
            Builder::new()
                .max_executions(1)
                .explore(racy_read(bad))
                .failure()
                .is_none()
        })
        .expect("the first execution passes for one of the variants");
    let budgeted = builder(&dir, name)
        .max_executions(1)
        .explore(racy_read(bad));
    assert!(budgeted.failure().is_none());
    assert!(!budgeted.complete());

    // ...a full exploration does, and saves it...
    let full = builder(&dir, name).explore(racy_read(bad));
    assert!(full.failure().is_some());

    // ...and from then on, even a budget of one execution finds it: the
    // saved schedule is replayed first.
    let replayed = builder(&dir, name)
        .max_executions(1)
        .explore(racy_read(bad));
    let failure = replayed.failure().expect("the saved schedule still fails");
    assert!(failure.regression_file().is_some());
    assert_eq!(replayed.executions(), 1);
    assert_eq!(replayed.replayed(), 1);
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn unreadable_lines_are_skipped_with_a_warning_and_the_file_is_only_appended_to() {
    let dir = temp_dir("persist-unreadable");
    let file = dir.join("hand.txt");
    let original = "# written by hand\n\
                    fails_late kase1:1.x  # a typo\n\
                    fails_late kase1:0 kase1:1  # two schedules\n\
                    other_test kase1:1.1.1  # another test's line is left alone\n\
                    kase1:1\n\
                    some words that are not a schedule line";
    fs::write(&file, original).unwrap();

    let report = builder(&dir, "hand::fails_late").explore(|| {
        racy_read(0)();
        racy_read(1)();
    });
    assert!(report.failure().is_some());
    let warnings = report.warnings().join("\n");
    assert!(
        warnings.contains("hand.txt:2: cannot read the schedule: unexpected 'x' at column 9"),
        "{warnings}"
    );
    assert!(
        warnings.contains("hand.txt:3: expected one schedule after the test name"),
        "{warnings}"
    );
    assert!(
        warnings.contains("hand.txt:5: expected `<test name> <schedule>  # comment`"),
        "{warnings}"
    );
    assert!(!warnings.contains("hand.txt:4"), "{warnings}");
    assert!(!warnings.contains("hand.txt:6"), "{warnings}");
    assert_eq!(report.replayed(), 0);

    // The existing text is kept byte for byte; the new line is appended
    // after a newline the file lacked.
    let text = fs::read_to_string(&file).unwrap();
    let added = text
        .strip_prefix(&format!("{original}\n"))
        .expect("the file is appended to, never rewritten");
    assert!(added.starts_with("fails_late kase1:"), "{added}");
    assert_eq!(added.lines().count(), 1);
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn stale_schedules_are_warnings_not_failures() {
    let dir = temp_dir("persist-stale");
    let name = "stale::counter";
    let saved = builder(&dir, name).explore(counter(false));
    assert!(saved.failure().is_some());

    // Fixed: the saved schedule still fits the code but no longer fails.
    let fixed = builder(&dir, name).explore(checked_counter(false, false));
    assert!(fixed.failure().is_none(), "{fixed}");
    assert!(fixed.complete());
    assert_eq!(fixed.replayed(), 1);
    let warnings = fixed.warnings().join("\n");
    assert!(
        warnings.contains("stale.txt:5: the saved schedule kase1:"),
        "{warnings}"
    );
    assert!(
        warnings.contains("no longer fails (when saved: panic: main panicked at tests/reports/regression_files.rs:"),
        "{warnings}"
    );

    // Changed: the schedule no longer fits.
    let other = builder(&dir, name).explore(counter(true));
    assert!(other.failure().is_none(), "{other}");
    let warnings = other.warnings().join("\n");
    assert!(
        warnings.contains("is stale (when saved: panic:"),
        "{warnings}"
    );
    assert!(warnings.contains("no longer fits the code"), "{warnings}");
    assert!(warnings.contains("the model finished after"), "{warnings}");
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn print_mode_prints_the_line_and_writes_nothing() {
    let dir = temp_dir("persist-print");
    let report = builder(&dir, "print::counter")
        .persist(Persist::Print)
        .explore(counter(false));
    let failure = report.failure().unwrap();
    let file = dir.join("print.txt");
    assert_eq!(failure.saved_to(), Some(file.as_path()));
    assert!(!file.exists());
    let text = failure.to_string();
    assert!(
        text.contains(&format!(
            "KASE_PERSIST=print: add this line to {} to replay it before exploring this test:\n    counter {}  # panic:",
            file.display(),
            failure.schedule()
        )),
        "{text}"
    );
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn nothing_is_saved_when_off_or_unnamed() {
    let dir = temp_dir("persist-off");
    let off = builder(&dir, "off::counter")
        .persist(Persist::Off)
        .explore(counter(false));
    assert_eq!(off.failure().unwrap().saved_to(), None);
    let unnamed = Builder::new()
        .regressions_dir(&dir)
        .persist(Persist::File)
        .explore(counter(false));
    assert_eq!(unnamed.failure().unwrap().saved_to(), None);
    assert_eq!(fs::read_dir(&dir).unwrap().count(), 0);
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn an_explicit_replay_neither_reads_nor_writes_the_file() {
    let dir = temp_dir("persist-explicit");
    let saved = builder(&dir, "explicit::counter").explore(counter(false));
    let schedule = saved.failure().unwrap().schedule().to_string();
    let before = fs::read_to_string(dir.join("explicit.txt")).unwrap();
    let replayed = builder(&dir, "explicit::counter")
        .replay(&schedule)
        .explore(counter(false));
    assert_eq!(replayed.executions(), 1);
    assert_eq!(replayed.replayed(), 0);
    let failure = replayed.failure().unwrap();
    assert_eq!(failure.regression_file(), None);
    assert_eq!(failure.saved_to(), None);
    assert_eq!(
        fs::read_to_string(dir.join("explicit.txt")).unwrap(),
        before
    );
    let _ = fs::remove_dir_all(&dir);
}

/// Saved (by the attribute) to this crate's `kase-regressions/reports.regression_files.txt`,
/// which is checked in: every run replays it first.
#[kase::test(expect = "panic", persist = true)]
fn attribute_saves_to_the_crates_regression_directory() {
    counter(false)();
}

#[test]
fn the_attribute_names_the_file_after_the_module_and_the_line_after_the_test() {
    attribute_saves_to_the_crates_regression_directory();
    let file =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("kase-regressions/reports.regression_files.txt");
    let lines = entries(&file);
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("attribute_saves_to_the_crates_regression_directory kase1:")),
        "{lines:?}"
    );
}

#[kase::test(persist = false)]
fn the_attribute_accepts_persist_false() {
    counter(true)();
}

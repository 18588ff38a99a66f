//! Replay: a failure's schedule reproduces it exactly, a schedule that does
//! not fit the code says where and why, and the report is one a person can
//! act on. (Regression files are in `regression_files.rs`.)

use kase::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use kase::sync::mpsc;
use kase::sync::{Arc, Mutex};
use kase::{thread, Builder, FailureKind, Persist, Strategy};

use crate::common::models::{abba, lost_update};

/// The table part of a report: what must be identical between replays.
fn interleaving(text: &str) -> &str {
    let start = text.find("Interleaving (").expect("a table");
    let end = text.find("\nSchedule: ").expect("a schedule");
    &text[start..end]
}

#[test]
fn a_failing_schedule_replays_to_the_same_failure_in_one_execution_every_time() {
    for strategy in [Strategy::Por, Strategy::Exhaustive] {
        let report = Builder::new().strategy(strategy).explore(lost_update);
        let failure = report.failure().expect("the lost update is found");
        let schedule = failure.schedule().to_string();
        let table = interleaving(&failure.to_string()).to_owned();
        for _ in 0..5 {
            let replayed = Builder::new().replay(&schedule).explore(lost_update);
            assert_eq!(replayed.executions(), 1);
            let again = replayed.failure().expect("the replay fails the same way");
            assert_eq!(again.kind(), FailureKind::Panic);
            assert_eq!(again.message(), failure.message());
            assert_eq!(again.schedule().to_string(), schedule);
            assert_eq!(again.preemptions(), failure.preemptions());
            assert_eq!(interleaving(&again.to_string()), table);
        }
    }
}

#[test]
fn a_deadlock_replays_as_the_same_deadlock() {
    let report = Builder::new().explore(abba);
    let failure = report.failure().expect("ABBA deadlocks");
    assert_eq!(failure.kind(), FailureKind::Deadlock);
    let replayed = Builder::new()
        .replay(&failure.schedule().to_string())
        .explore(abba);
    assert_eq!(replayed.executions(), 1);
    let again = replayed.failure().unwrap();
    assert_eq!(again.kind(), FailureKind::Deadlock);
    assert_eq!(again.to_string(), {
        // Identical except for the "Simplified" line of the first report.
        let text = failure.to_string();
        text.lines()
            .filter(|l| !l.starts_with("Simplified:"))
            .collect::<Vec<_>>()
            .join("\n")
    });
}

#[test]
fn the_report_shows_the_table_message_source_file_schedule_and_replay_command() {
    let report = Builder::new()
        .name("replay::lost_update_report")
        .persist(Persist::Off)
        .minimize(1000)
        .explore(lost_update);
    let failure = report.failure().unwrap();
    let text = failure.to_string();
    assert!(text.contains("kase found a panic: "), "{text}");
    assert!(text.contains("an increment was lost"), "{text}");
    assert!(text.contains("common/models.rs:"), "{text}");
    assert!(
        text.contains("  step  thread    operation            location"),
        "{text}"
    );
    assert!(text.contains("spawn thread 1"), "{text}");
    assert!(text.contains("store atomic#"), "{text}");
    let schedule = failure.schedule().to_string();
    assert!(text.contains(&format!("Schedule: {schedule}")), "{text}");
    assert_eq!(
        failure.replay_command(),
        Some(format!("KASE_REPLAY='{schedule}' cargo test lost_update_report").as_str())
    );
    assert!(text.contains(failure.replay_command().unwrap()), "{text}");
    // One preemption is needed, and that is what the report shows.
    assert_eq!(failure.preemptions(), Some(1));
    assert!(text.contains(", 1 preemption):"), "{text}");
}

#[test]
fn without_a_name_the_report_says_how_to_replay_with_the_builder() {
    let report = Builder::new().explore(lost_update);
    let failure = report.failure().unwrap();
    assert_eq!(failure.replay_command(), None);
    assert!(failure
        .to_string()
        .contains("Replay it with KASE_REPLAY='kase1:"));
}

fn replay_error(schedule: &str) -> String {
    let caught = std::panic::catch_unwind(|| Builder::new().replay(schedule));
    let payload = caught.expect_err("a bad schedule is refused");
    payload
        .downcast_ref::<String>()
        .cloned()
        .expect("a message")
}

#[test]
fn garbage_and_truncated_schedules_are_clear_errors() {
    let e = replay_error("0.1.2");
    assert!(e.contains("does not start with \"kase1:\""), "{e}");
    let e = replay_error("kase1:1.0.");
    assert!(e.contains("ends with `.` at column 10"), "{e}");
    assert!(e.contains("cut off"), "{e}");
    let e = replay_error("kase1:1.z.0");
    assert!(e.contains("unexpected 'z' at column 9"), "{e}");
    assert!(e.contains("expected a thread number"), "{e}");
    assert!(e.contains("kase1:1.z.0\n            ^"), "{e}");
    let e = replay_error("kase7:1");
    assert!(e.contains("unsupported schedule version `kase7`"), "{e}");
    let e = replay_error("");
    assert!(e.contains("the schedule is empty"), "{e}");
}

#[test]
fn a_schedule_too_short_or_too_long_for_the_code_is_reported_with_the_step() {
    // Truncated: the model reaches choice points the schedule does not have.
    let report = Builder::new().replay("kase1:").explore(lost_update);
    let failure = report.failure().expect("the schedule is too short");
    assert_eq!(failure.kind(), FailureKind::Nondeterminism);
    let text = failure.to_string();
    assert!(
        text.contains("the schedule has 0 choices, but at step 2 the model reached choice point 1"),
        "{text}"
    );
    assert!(text.contains("what could run:"), "{text}");
    assert!(text.contains("main: load atomic#"), "{text}");

    // Too long: the model finishes first.
    let report = Builder::new()
        .replay("kase1:0.0.0.0.0.0.0.0")
        .explore(lost_update);
    let text = report
        .failure()
        .expect("the schedule is too long")
        .to_string();
    assert!(
        text.contains("the model finished after")
            && text.contains("but the schedule has 8 choices"),
        "{text}"
    );
}

/// `changed == false`: thread 1 stores while main reads, which can fail.
/// `changed == true`: main now holds a lock that thread 1 takes first, and
/// spawns a second thread.
fn evolving(changed: bool) -> impl Fn() + Sync {
    move || {
        let x = Arc::new(AtomicUsize::new(0));
        let m = Arc::new(Mutex::new(()));
        let guard = if changed {
            Some(m.lock().unwrap())
        } else {
            None
        };
        let (x1, m1) = (x.clone(), m.clone());
        let t1 = thread::spawn(move || {
            if changed {
                let _g = m1.lock().unwrap();
                x1.store(1, SeqCst);
            } else {
                x1.store(1, SeqCst);
            }
        });
        let t2 = changed.then(|| {
            let y = Arc::new(AtomicUsize::new(0));
            thread::spawn(move || y.store(1, SeqCst))
        });
        let seen = x.load(SeqCst);
        drop(guard);
        t1.join().unwrap();
        if let Some(t2) = t2 {
            t2.join().unwrap();
        }
        assert_eq!(seen, 0, "thread 1 ran first");
    }
}

#[test]
fn a_changed_program_gets_a_divergence_message_with_both_locations() {
    let report = Builder::new().explore(evolving(false));
    let failure = report.failure().expect("the original program fails");
    let schedule = failure.schedule().to_string();
    assert!(schedule.starts_with("kase1:1"), "{schedule}");

    let report = Builder::new().replay(&schedule).explore(evolving(true));
    let failure = report
        .failure()
        .expect("the schedule does not fit any more");
    assert_eq!(failure.kind(), FailureKind::Nondeterminism);
    let text = failure.to_string();
    assert!(
        text.contains("at step 4 (choice point 1 of ")
            && text.contains("the schedule picks thread 1, which cannot run there"),
        "{text}"
    );
    // Where the picked thread is stuck, and what could run instead.
    let lock_line = line_of("let _g = m1.lock().unwrap();");
    let load_line = line_of("let seen = x.load(SeqCst);");
    assert!(
        text.contains(&format!(
            "thread 1 waits to lock mutex#1 at tests/reports/replay.rs:{lock_line}:"
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "main: load atomic#4 at tests/reports/replay.rs:{load_line}:"
        )),
        "{text}"
    );
    assert!(text.contains("thread 2: store atomic#"), "{text}");
    assert!(
        text.contains("the step before: main spawn thread 2"),
        "{text}"
    );
    assert!(
        text.contains("The code no longer follows this schedule"),
        "{text}"
    );
    assert!(!text.contains("Replay it with"), "{text}");
}

/// The line of this file holding `code` (first occurrence).
fn line_of(code: &str) -> usize {
    let source = include_str!("replay.rs");
    source
        .lines()
        .position(|l| l.trim() == code)
        .map(|i| i + 1)
        .unwrap_or_else(|| panic!("{code:?} is not in replay.rs"))
}

#[test]
fn a_schedule_naming_a_thread_that_does_not_exist_says_so() {
    let report = Builder::new().replay("kase1:7.7.7").explore(|| {
        let t = thread::spawn(thread::yield_now);
        thread::yield_now();
        t.join().unwrap();
    });
    let text = report.failure().unwrap().to_string();
    assert!(
        text.contains("the schedule picks thread 7, which does not exist at that point (threads so far: main, thread 1)"),
        "{text}"
    );
}

/// Grandchildren: which of them is spawned first depends on the
/// interleaving, so the explorer's thread numbers (first seen in any
/// execution) differ from a fresh replay's in some executions. Reports and
/// schedules use the replay's numbering.
fn grandchildren() {
    let order = Arc::new(AtomicUsize::new(0));
    let x = Arc::new(AtomicUsize::new(0));
    let spawner = |id: usize| {
        let (order, x) = (order.clone(), x.clone());
        thread::spawn(move || {
            let _ = order.compare_exchange(0, id, SeqCst, SeqCst);
            let inner = x.clone();
            let t = thread::spawn(move || inner.store(id, SeqCst));
            t.join().unwrap();
        })
    };
    let a = spawner(1);
    let b = spawner(2);
    a.join().unwrap();
    b.join().unwrap();
    // Fails only if b's child was spawned first yet a's child wrote last.
    let bad = order.load(SeqCst) == 2 && x.load(SeqCst) == 1;
    assert!(!bad, "b went first but a's child wrote last");
}

#[test]
fn schedules_with_grandchildren_replay_from_scratch() {
    for strategy in [Strategy::Exhaustive, Strategy::Por] {
        for minimize in [0, 1000] {
            let report = Builder::new()
                .strategy(strategy)
                .minimize(minimize)
                .explore(grandchildren);
            let failure = report.failure().expect("the bad order is found");
            assert_eq!(failure.kind(), FailureKind::Panic, "{failure}");
            let replayed = Builder::new()
                .replay(&failure.schedule().to_string())
                .explore(grandchildren);
            let again = replayed.failure().expect("the replay fails too");
            assert_eq!(again.kind(), FailureKind::Panic, "{again}");
            assert_eq!(
                interleaving(&again.to_string()),
                interleaving(&failure.to_string())
            );
        }
    }
}

/// Three threads each increment twice with a load and a store; the final
/// check fails whenever any update is lost. A failure needs just one
/// preemption, but the first one an explorer finds may have more.
fn three_counters() {
    let n = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..2)
        .map(|_| {
            let n = n.clone();
            thread::spawn(move || {
                for _ in 0..2 {
                    let v = n.load(SeqCst);
                    n.store(v + 1, SeqCst);
                }
            })
        })
        .collect();
    for _ in 0..2 {
        let v = n.load(SeqCst);
        n.store(v + 1, SeqCst);
    }
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(n.load(SeqCst), 6, "an increment was lost");
}

#[test]
fn the_simplified_failure_has_no_more_preemptions_than_the_first_one() {
    let mut simplified_any = false;
    for strategy in [Strategy::Por, Strategy::Exhaustive] {
        let first = Builder::new()
            .strategy(strategy)
            .minimize(0)
            .explore(three_counters);
        let first = first.failure().expect("an update is lost");
        let first_preemptions = first.preemptions().expect("counted");
        assert!(first.first_found().is_none());

        let report = Builder::new()
            .strategy(strategy)
            .minimize(1000)
            .explore(three_counters);
        let best = report.failure().expect("an update is lost");
        assert_eq!(best.kind(), FailureKind::Panic);
        let best_preemptions = best.preemptions().expect("counted");
        assert!(best_preemptions <= first_preemptions);
        assert_eq!(best.preemptions(), Some(1), "one preemption suffices");
        if let Some((schedule, preemptions)) = best.first_found() {
            simplified_any = true;
            assert_eq!(schedule, first.schedule());
            assert_eq!(preemptions, first_preemptions);
            assert!(best_preemptions < preemptions);
            let text = best.to_string();
            assert!(
                text.contains(&format!(
                    "Simplified: the first failing interleaving kase found had {preemptions} preemptions"
                )),
                "{text}"
            );
            assert!(text.contains("this one has 1 preemption"), "{text}");
        }
        // The simplified schedule replays to the same failure.
        let replayed = Builder::new()
            .replay(&best.schedule().to_string())
            .explore(three_counters);
        let again = replayed.failure().unwrap();
        assert_eq!(again.kind(), FailureKind::Panic);
        assert_eq!(again.preemptions(), Some(1));
    }
    assert!(
        simplified_any,
        "the sample should make at least one explorer find a failure with more than one preemption first"
    );
}

/// `changed == false`: main sends, then thread 1 stores while main reads,
/// which can fail. `changed == true`: thread 1 first receives twice, the
/// second time what main sends only after its read. Each channel call is
/// several events on the channel's own mutex and condvar, one row.
fn evolving_channel(changed: bool) -> impl Fn() + Sync {
    move || {
        let (tx, rx) = mpsc::channel::<u32>();
        let x = Arc::new(AtomicUsize::new(0));
        tx.send(1).unwrap();
        let x1 = x.clone();
        let t1 = thread::spawn(move || {
            if changed {
                assert_eq!(rx.recv(), Ok(1));
                assert_eq!(rx.recv(), Ok(2));
            }
            x1.store(1, SeqCst);
        });
        let read = x.load(SeqCst);
        if changed {
            tx.send(2).unwrap();
        }
        t1.join().unwrap();
        assert_eq!(read, 0, "thread 1 ran first");
    }
}

/// The nondeterminism report of replaying `evolving_channel(false)`'s
/// failure on `evolving_channel(true)`, with `extra` choices appended: its
/// rows and its text.
fn channel_divergence(extra: &str) -> (usize, String) {
    let report = Builder::new().explore(evolving_channel(false));
    let failure = report.failure().expect("the original program fails");
    let schedule = format!("{}{extra}", failure.schedule());
    let report = Builder::new()
        .replay(&schedule)
        .explore(evolving_channel(true));
    let failure = report
        .failure()
        .expect("the schedule does not fit any more");
    assert_eq!(failure.kind(), FailureKind::Nondeterminism, "{failure}");
    (failure.steps(), failure.to_string())
}

#[test]
fn a_divergence_among_channel_calls_names_the_users_calls_at_the_users_lines() {
    let (_, text) = channel_divergence("");
    let second = line_of("assert_eq!(rx.recv(), Ok(2));");
    let load = line_of("let read = x.load(SeqCst);");
    assert!(text.contains("what could run:"), "{text}");
    assert!(
        text.contains(&format!(
            "main: load atomic#3 at tests/reports/replay.rs:{load}:"
        )),
        "{text}"
    );
    // Thread 1 is inside its second `recv` (it locked the channel's own
    // mutex): shown as the user's call at the user's line.
    assert!(
        text.contains(&format!(
            "thread 1: recv channel#1 at tests/reports/replay.rs:{second}:"
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "the step before: thread 1 recv channel#1 at tests/reports/replay.rs:{second}:"
        )),
        "{text}"
    );
    for internal in ["kase-rt/src", "mutex#", "condvar#", "data#"] {
        assert!(!text.contains(internal), "{internal}: {text}");
    }
}

#[test]
fn a_divergence_numbers_its_step_as_the_report_numbers_rows() {
    // Before the divergence: main's send, its spawn, thread 1's first
    // recv and the beginning of its second: 4 rows, so the divergence is
    // at step 5. Counted as events (each call is several), it was step 16.
    let (rows, text) = channel_divergence("");
    assert_eq!(rows, 4, "{text}");
    // (Which choice point that is depends on how many steps the channel's
    // own lock takes: its mutex holds the queue, so it is not peeked.)
    assert!(
        text.contains("at step 5 the model reached choice point 5"),
        "{text}"
    );
    assert!(!text.contains("at step 16"), "{text}");
    assert!(text.contains("     4  thread 1  recv channel#1 "), "{text}");

    // A schedule too long: the steps it finished after are the report's rows.
    let (rows, text) = channel_divergence(".1.1.1.1.1.1");
    assert!(
        text.contains(&format!("the model finished after {rows} steps and")),
        "{text}"
    );
    assert!(
        text.contains("recv channel#1 -> message (continued)"),
        "{text}"
    );
}

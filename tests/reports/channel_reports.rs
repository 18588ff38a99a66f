//! Failures in models built on primitives kase makes from its own locks,
//! condvars and atomics (channels, `Barrier`, `Once`, `OnceLock`): the
//! report shows the user's calls at the user's lines, with how they ended,
//! not kase's internal steps.

use std::time::Duration;

use kase::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use kase::sync::mpsc;
use kase::sync::{Arc, Barrier, Condvar, Mutex, Once, OnceLock};
use kase::{thread, Builder, Failure, FailureKind, Report};

/// The failure of `report`, checked to show only the user's lines: no step,
/// and no blocked thread, is located in kase's own source.
fn user_only(report: &Report) -> &Failure {
    let failure = report.failure().expect("the model fails");
    let text = failure.to_string();
    assert!(
        !text.contains("kase-rt/src") && !text.contains("/rustc/"),
        "{text}"
    );
    assert!(text.contains("tests/reports/channel_reports.rs:"), "{text}");
    failure
}

/// Receives with a timeout what another thread sends: the timeout can win.
fn recv_timeout_races_send(rendezvous: bool) {
    let (tx, rx) = if rendezvous {
        let (tx, rx) = mpsc::sync_channel(0);
        (
            Box::new(move |v: u32| tx.send(v).unwrap()) as Box<dyn FnOnce(u32) + Send>,
            rx,
        )
    } else {
        let (tx, rx) = mpsc::channel();
        (
            Box::new(move |v: u32| tx.send(v).unwrap()) as Box<dyn FnOnce(u32) + Send>,
            rx,
        )
    };
    let t = thread::spawn(move || tx(1));
    let got = rx.recv_timeout(Duration::from_millis(10));
    assert_eq!(got, Ok(1u32), "no message in time");
    drop(rx);
    t.join().unwrap();
}

#[test]
fn recv_timeout_is_one_step_that_says_it_timed_out() {
    let report = Builder::new().explore(|| recv_timeout_races_send(false));
    let failure = user_only(&report);
    let text = failure.to_string();
    assert_eq!(failure.kind(), FailureKind::Panic);
    assert!(text.contains("recv_timeout channel#"), "{text}");
    assert!(text.contains(" -> timed out "), "{text}");
    // Steps were 19 before calls were folded (locks, waits, data accesses
    // of the channel's own mutex and condvar). Now at most one per call the
    // user made that ran — spawn, send, the sender's drop, recv_timeout
    // (twice if another thread ran while it waited), the receiver's drop,
    // join — is 7.
    assert!(failure.steps() <= 7, "{} steps: {text}", failure.steps());
    for internal in ["mutex#", "condvar#", "data#", "wait ", "continues"] {
        assert!(!text.contains(internal), "{internal}: {text}");
    }
    // The schedule is what it was: it replays the same failure.
    let replayed = Builder::new()
        .replay(&failure.schedule().to_string())
        .explore(|| recv_timeout_races_send(false));
    let again = replayed
        .failure()
        .expect("the schedule replays the failure");
    assert_eq!(again.to_string(), text);
}

#[test]
fn rendezvous_recv_timeout_names_the_timeout_at_the_users_line() {
    let report = Builder::new().explore(|| recv_timeout_races_send(true));
    let failure = user_only(&report);
    let text = failure.to_string();
    assert!(text.contains("recv_timeout channel#"), "{text}");
    assert!(text.contains(" -> timed out "), "{text}");
    assert!(failure.steps() <= 7, "{} steps: {text}", failure.steps());
}

#[test]
fn condvar_wait_timeout_says_timed_out() {
    let report = Builder::new().explore(|| {
        let pair = Arc::new((Mutex::new(false), Condvar::new()));
        let pair2 = pair.clone();
        let t = thread::spawn(move || {
            *pair2.0.lock().unwrap() = true;
            pair2.1.notify_one();
        });
        let (ready, cvar) = &*pair;
        let guard = ready.lock().unwrap();
        let guard = if *guard {
            guard
        } else {
            cvar.wait_timeout(guard, Duration::from_millis(10))
                .unwrap()
                .0
        };
        assert!(*guard, "woke before the flag was set");
        drop(guard);
        t.join().unwrap();
    });
    let failure = user_only(&report);
    let text = failure.to_string();
    // The user's own condvar: its wait is steps on the user's objects, and
    // the wake names how it ended.
    assert!(
        text.contains("wake condvar#") && text.contains(" -> timed out "),
        "{text}"
    );
    assert!(!text.contains("wake or time out"), "{text}");
    // spawn, lock, wait, unlock, wake, lock, (unlock on panic): 7, plus the
    // data accesses of the guard with peeking.
    assert!(failure.steps() <= 10, "{} steps: {text}", failure.steps());
}

#[test]
fn a_recv_nobody_serves_is_a_deadlock_in_recv() {
    let report = Builder::new().explore(|| {
        let (tx, rx) = mpsc::channel::<u32>();
        let t = thread::spawn(move || rx.recv());
        // The sender stays alive while the receiver waits: nothing comes.
        t.join().unwrap().unwrap();
        drop(tx);
    });
    let failure = user_only(&report);
    assert_eq!(failure.kind(), FailureKind::Deadlock);
    let text = failure.to_string();
    assert!(
        text.contains("thread 1 is blocked in recv channel#"),
        "{text}"
    );
    assert!(failure.steps() <= 4, "{} steps: {text}", failure.steps());
}

#[test]
fn a_barrier_too_few_threads_reach_is_a_deadlock_in_wait() {
    let report = Builder::new().explore(|| {
        let barrier = Arc::new(Barrier::new(3));
        let b = barrier.clone();
        let t = thread::spawn(move || b.wait().is_leader());
        barrier.wait();
        t.join().unwrap();
    });
    let failure = user_only(&report);
    assert_eq!(failure.kind(), FailureKind::Deadlock);
    let text = failure.to_string();
    assert!(text.contains("is blocked in wait barrier#"), "{text}");
    assert!(failure.steps() <= 4, "{} steps: {text}", failure.steps());
}

/// The rows of a report's interleaving: (thread, operation and location).
fn rows(text: &str) -> Vec<(String, String)> {
    text.lines()
        .skip_while(|l| !l.starts_with("Interleaving"))
        .skip(2)
        .take_while(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .map(|l| {
            let rest = l
                .trim_start()
                .trim_start_matches(|c: char| c.is_ascii_digit());
            let mut words = rest.trim_start_matches(['*', ' ']).splitn(2, "  ");
            let thread = words.next().unwrap_or_default().to_owned();
            (
                format!("{}{thread}", if rest.starts_with('*') { "*" } else { "" }),
                words.next().unwrap_or_default().trim().to_owned(),
            )
        })
        .collect()
}

#[test]
fn preemption_marks_stay_on_the_rows_of_the_preempting_thread() {
    // Fails when the message arrives, which takes a preemption: the
    // sender must run before the receiver gives up. Preemptions are counted
    // in steps as schedules count them; the marks go on the rows showing
    // them.
    let report = Builder::new().minimize(0).explore(|| {
        let (tx, rx) = mpsc::channel();
        let t = thread::spawn(move || tx.send(1u32).unwrap());
        let got = rx.recv_timeout(Duration::from_millis(10));
        assert_eq!(
            got,
            Err(mpsc::RecvTimeoutError::Timeout),
            "the message came"
        );
        t.join().unwrap();
    });
    // The receiver, dropped while main unwinds, locks the channel without
    // peeking; it still cannot run inside the sender's sections (it waits
    // for their lock), so peeking stays on.
    assert!(report.peeking(), "{:?}", report.warnings());
    assert_eq!(report.discarded_executions(), 0);
    let failure = user_only(&report);
    let text = failure.to_string();
    let rows = rows(&text);
    assert_eq!(rows.len(), failure.steps(), "{text}");
    assert!(text.contains("-> message"), "{text}");
    // A preemption mark stays on a row of the thread that preempted.
    let marked: Vec<usize> = (0..rows.len())
        .filter(|&i| rows[i].0.starts_with('*'))
        .collect();
    assert_eq!(Some(marked.len()), failure.preemptions(), "{text}");
    for i in marked {
        assert!(
            i > 0 && rows[i].0.trim_start_matches('*') != rows[i - 1].0.trim_start_matches('*'),
            "{text}"
        );
    }
}

#[test]
fn peekings_bookkeeping_has_no_row_and_preemptions_stay_on_their_rows() {
    // A lock taken inside another's section ends the outer pure part with
    // an event of its own (peeking's bookkeeping), which the report leaves
    // out: without it, the rows are the same as without peeking.
    let model = || {
        let a = Mutex::new(0);
        let b = Mutex::new(0);
        {
            let mut ga = a.lock().unwrap();
            *b.lock().unwrap() += 1;
            *ga += 1;
        }
        panic!("after the sections");
    };
    let report = Builder::new().explore(model);
    let failure = report.failure().expect("it panics");
    let text = failure.to_string();
    assert!(
        !text.contains("keep locked") && !text.contains("continues"),
        "{text}"
    );
    let rows = rows(&text);
    assert_eq!(rows.len(), failure.steps(), "{text}");
    let user_ops = ["lock mutex#", "unlock mutex#", "write data#"];
    assert!(
        rows.iter()
            .all(|(_, op)| user_ops.iter().any(|u| op.starts_with(u))),
        "{text}"
    );
}

#[test]
fn once_calls_are_steps_and_the_initialisers_own_steps_stay_visible() {
    let report = Builder::new().explore(|| {
        let once = Arc::new(Once::new());
        let hits = Arc::new(AtomicUsize::new(0));
        let (once2, hits2) = (once.clone(), hits.clone());
        let t = thread::spawn(move || {
            once2.call_once(|| {
                hits2.fetch_add(1, SeqCst);
            })
        });
        let cell = OnceLock::new();
        assert_eq!(*cell.get_or_init(|| 1), 1);
        once.call_once(|| {
            hits.fetch_add(1, SeqCst);
        });
        t.join().unwrap();
        panic!("hits: {}", hits.load(SeqCst));
    });
    let failure = user_only(&report);
    let text = failure.to_string();
    assert!(text.contains("call_once once#"), "{text}");
    assert!(text.contains("get_or_init once_lock#"), "{text}");
    // The initialiser's fetch_add is the user's own step, not folded.
    assert!(text.contains("read-modify-write atomic#"), "{text}");
    assert!(!text.contains("compare_exchange"), "{text}");
}

/// A `recv` made inside a critical section of the user's own mutex (a
/// receiver shared behind a `Mutex`, as thread pools do) is named after the
/// channel, not after that mutex: with peeking, the call's first event
/// ends the section's pure part on the user's lock.
#[test]
fn a_recv_behind_a_users_mutex_names_the_channel() {
    let report = Builder::new().explore(|| {
        let (tx, rx) = mpsc::channel::<u32>();
        let rx = Arc::new(Mutex::new(rx));
        let rx2 = rx.clone();
        let t = thread::spawn(move || {
            let _ = rx2.lock().unwrap().recv();
        });
        drop(tx);
        t.join().unwrap();
        panic!("show the report");
    });
    let failure = user_only(&report);
    let text = failure.to_string();
    let rows = rows(&text);
    let channel = |op: &str| {
        rows.iter()
            .find(|(_, row)| row.starts_with(op))
            .and_then(|(_, row)| row.split_whitespace().find(|w| w.starts_with("channel#")))
            .map(str::to_owned)
    };
    let (dropped, received) = (channel("drop sender"), channel("recv"));
    assert!(dropped.is_some(), "{text}");
    assert_eq!(received, dropped, "one channel: {text}");
}

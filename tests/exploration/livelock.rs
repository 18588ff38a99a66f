//! Livelocks found by the repeat rule (`exec/spin/repeat.rs`): threads that
//! undo what they did and retry can bring the whole state back to one it
//! had, with every thread able to run taking part; repeating those steps
//! forever starves no thread and ends nothing. Such a cycle is reported at
//! once, by every explorer, rather than cut as redundant (which left the
//! search running with no verdict) or run to `max_steps`. A cycle that
//! leaves out a thread that could run (the one that would end the loop) is
//! no livelock.

use kase::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use kase::sync::Arc;
use kase::{thread, Builder, FailureKind, Strategy};

/// Two pollers each flip their own bit of one word and flip it back until
/// bit 0 is set; `release`: main sets it.
fn togglers(release: bool) {
    let word = Arc::new(AtomicUsize::new(0));
    let pollers: Vec<_> = [2, 4]
        .into_iter()
        .map(|bit| {
            let w = word.clone();
            thread::spawn(move || loop {
                let seen = w.fetch_xor(bit, SeqCst);
                w.fetch_xor(bit, SeqCst);
                if seen & 1 == 1 {
                    break;
                }
                kase::hint::spin_loop();
            })
        })
        .collect();
    if release {
        word.fetch_or(1, SeqCst);
    }
    for p in pollers {
        p.join().unwrap();
    }
}

/// Two polite threads: each raises its flag, and lowers it again and
/// retries if the other's is up. Either gets through when it runs alone,
/// but in lockstep neither ever does.
fn polite() {
    let mine = Arc::new(AtomicBool::new(false));
    let theirs = Arc::new(AtomicBool::new(false));
    let (a, b) = (theirs.clone(), mine.clone());
    let other = thread::spawn(move || back_off_until_clear(&a, &b));
    back_off_until_clear(&mine, &theirs);
    other.join().unwrap();
}

/// One polite thread's loop: raise `mine`, and get through if `theirs` is
/// down; lower `mine` either way.
fn back_off_until_clear(mine: &AtomicBool, theirs: &AtomicBool) {
    loop {
        mine.store(true, SeqCst);
        let clear = !theirs.load(SeqCst);
        mine.store(false, SeqCst);
        if clear {
            break;
        }
        thread::yield_now();
    }
}

fn builders() -> Vec<(&'static str, Builder)> {
    vec![
        ("por", Builder::new()),
        ("exhaustive", Builder::new().strategy(Strategy::Exhaustive)),
        ("bounded", Builder::new().preemption_bound(2)),
    ]
}

#[test]
fn threads_that_keep_undoing_each_other_are_a_livelock_naming_them() {
    for (name, builder) in builders() {
        let report = builder.explore(|| togglers(false));
        let failure = report
            .failure()
            .unwrap_or_else(|| panic!("{name}: {report}"));
        assert_eq!(failure.kind(), FailureKind::Livelock, "{name}: {failure}");
        let text = failure.to_string();
        for thread in ["thread 1 goes round", "thread 2 goes round"] {
            assert!(text.contains(thread), "{name}: {text}");
        }
        assert!(
            text.contains("every thread that could run took part"),
            "{name}: {text}"
        );
        // Found at the first cycle, not at `max_steps`.
        assert!(failure.steps() < 100, "{name}: {failure}");
        // The schedule replays to the same livelock.
        let schedule = failure.schedule().to_string();
        let again = Builder::new().replay(&schedule).explore(|| togglers(false));
        let replayed = again.failure().unwrap_or_else(|| panic!("{name}: {again}"));
        assert_eq!(replayed.kind(), FailureKind::Livelock, "{name}: {replayed}");
    }
}

#[test]
fn polite_threads_in_lockstep_are_a_livelock() {
    // Lockstep takes preemptions in the middle of every round: a search
    // bounded to two does not reach the cycle (and says it holds only up
    // to its bound).
    for (name, builder) in builders()
        .into_iter()
        .filter(|(name, _)| *name != "bounded")
    {
        let report = builder.explore(polite);
        let failure = report
            .failure()
            .unwrap_or_else(|| panic!("{name}: {report}"));
        assert_eq!(failure.kind(), FailureKind::Livelock, "{name}: {failure}");
        let text = failure.to_string();
        assert!(
            text.contains("main goes round") && text.contains("thread 1 goes round"),
            "{name}: {text}"
        );
    }
}

#[test]
fn a_cycle_that_leaves_out_the_thread_that_would_end_it_is_no_livelock() {
    // Main can set the bit at every point of the pollers' rounds: their
    // cycles starve it, so they are only states covered earlier.
    let report = Builder::new()
        .strategy(Strategy::Exhaustive)
        .preemption_bound(2)
        .explore(|| togglers(true));
    assert!(report.failure().is_none(), "{report}");
    assert!(report.complete_within_bound(), "{report}");
}

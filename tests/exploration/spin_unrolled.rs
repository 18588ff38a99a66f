//! The spin rules lose no outcome: a model whose loops spin (and so wait
//! under `exec/spin`'s rules) reaches exactly the outcomes of the same
//! model with each loop unrolled a few times and never yielding (so no
//! rule applies), keeping only the executions where every unrolled loop
//! got through. Under sequential consistency and under RC11, with the
//! partial-order explorers and the oracles.
//!
//! The loops here spin by writing the value they read (`swap(true)` on a
//! held lock, `fetch_add(0)`), which changes nothing a spin waits for, and
//! by writing then writing back (a flag toggled and restored), which waits
//! for another thread to run.

use kase::hint::spin_loop;
use kase::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use kase::sync::Arc;
use kase::{thread, Builder, Strategy};
use std::collections::BTreeSet;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release, SeqCst};
use std::sync::Mutex;

/// How a model's loops run: spinning until they get through, or tried
/// `n` times without a yield (false if they never got through).
#[derive(Clone, Copy, Debug)]
enum Loops {
    Spin,
    Unrolled(usize),
}

impl Loops {
    /// Runs `attempt` until it returns true.
    fn run(self, mut attempt: impl FnMut() -> bool) -> bool {
        match self {
            Loops::Spin => {
                while !attempt() {
                    spin_loop();
                }
                true
            }
            Loops::Unrolled(n) => (0..n).any(|_| attempt()),
        }
    }
}

/// The outcomes of `model` (`None`: an unrolled loop gave up) under
/// `builder`, asserting the exploration finished.
fn outcomes(
    builder: Builder,
    loops: Loops,
    model: fn(Loops) -> Option<String>,
) -> BTreeSet<String> {
    let seen = Mutex::new(BTreeSet::new());
    let report = builder.explore(|| {
        if let Some(outcome) = model(loops) {
            seen.lock().unwrap().insert(outcome);
        }
    });
    assert!(report.failure().is_none(), "{loops:?}: {report}");
    assert!(
        report.complete() || report.complete_within_bound(),
        "{loops:?}: {report}"
    );
    seen.into_inner().unwrap()
}

/// The spinning model's outcomes equal the unrolled model's, for each
/// explorer (the default and the oracle, with and without peeking).
fn assert_spins_lose_nothing(model: fn(Loops) -> Option<String>, tries: usize) {
    assert_spins_lose_nothing_under(&[Strategy::Por, Strategy::Exhaustive], model, tries);
}

/// [`assert_spins_lose_nothing`] for the explorers of `strategies`.
fn assert_spins_lose_nothing_under(
    strategies: &[Strategy],
    model: fn(Loops) -> Option<String>,
    tries: usize,
) {
    let unrolled = outcomes(Builder::new(), Loops::Unrolled(tries), model);
    assert!(!unrolled.is_empty());
    for &strategy in strategies {
        for peeking in [false, true] {
            let builder = Builder::new().strategy(strategy).peeking(peeking);
            let spun = outcomes(builder, Loops::Spin, model);
            assert_eq!(
                spun, unrolled,
                "{strategy:?}, peeking {peeking}: spinning vs unrolled {tries} times"
            );
        }
    }
}

/// Threads `1..=threads` each take a test-and-set lock (`swap(true)` with
/// `acquire`) and append their number to a log under it; the outcome is
/// the log.
fn tas_log(loops: Loops, threads: usize, acquire: Ordering, release: Ordering) -> Option<String> {
    let lock = Arc::new(AtomicBool::new(false));
    let log = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (1..=threads)
        .map(|i| {
            let (lock, log) = (lock.clone(), log.clone());
            thread::spawn(move || {
                if !loops.run(|| !lock.swap(true, acquire)) {
                    return false;
                }
                let v = log.load(Relaxed);
                log.store(v * 4 + i, Relaxed);
                lock.store(false, release);
                true
            })
        })
        .collect();
    let through = handles.into_iter().all(|h| h.join().unwrap());
    through.then(|| log.load(Relaxed).to_string())
}

#[test]
fn three_threads_on_a_test_and_set_lock() {
    // Three threads are too many for the oracle's interleavings.
    assert_spins_lose_nothing_under(
        &[Strategy::Por],
        |loops| tas_log(loops, 3, SeqCst, SeqCst),
        2,
    );
}

#[test]
fn two_threads_on_a_test_and_set_lock_under_rc11() {
    assert_spins_lose_nothing(|loops| tas_log(loops, 2, Acquire, Release), 4);
}

#[test]
fn a_test_and_set_lock_with_relaxed_orderings_loses_entries_alike() {
    assert_spins_lose_nothing(|loops| tas_log(loops, 2, Relaxed, Relaxed), 4);
}

/// Two threads wait for a flag with `fetch_add(0)` (a write of the value
/// already there); main sets it after a store the waiters read.
fn fetch_add_zero_waiters(loops: Loops, set: Ordering, wait: Ordering) -> Option<String> {
    let flag = Arc::new(AtomicUsize::new(0));
    let data = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..2)
        .map(|_| {
            let (flag, data) = (flag.clone(), data.clone());
            thread::spawn(move || {
                let through = loops.run(|| flag.fetch_add(0, wait) == 1);
                through.then(|| data.load(Relaxed))
            })
        })
        .collect();
    data.store(7, Relaxed);
    flag.store(1, set);
    let seen: Option<Vec<usize>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    seen.map(|s| format!("{s:?}"))
}

#[test]
fn two_threads_wait_with_fetch_add_zero() {
    assert_spins_lose_nothing(|loops| fetch_add_zero_waiters(loops, SeqCst, SeqCst), 4);
}

#[test]
fn two_threads_wait_with_fetch_add_zero_under_rc11() {
    assert_spins_lose_nothing(|loops| fetch_add_zero_waiters(loops, Release, Acquire), 4);
    assert_spins_lose_nothing(|loops| fetch_add_zero_waiters(loops, Relaxed, Relaxed), 4);
}

/// A thread polls a flag by setting a "busy" bit and clearing it again
/// (iterations that write, then write back); main sets the flag.
fn toggling_poller(loops: Loops, order: Ordering) -> Option<String> {
    let word = Arc::new(AtomicUsize::new(0));
    let w = word.clone();
    let poller = thread::spawn(move || {
        loops.run(|| {
            let before = w.fetch_or(2, order);
            w.fetch_and(!2, order);
            before & 1 == 1
        })
    });
    word.fetch_or(1, order);
    let through = poller.join().unwrap();
    through.then(|| word.load(Relaxed).to_string())
}

#[test]
fn a_poller_that_writes_and_writes_back() {
    assert_spins_lose_nothing(|loops| toggling_poller(loops, SeqCst), 4);
    assert_spins_lose_nothing(|loops| toggling_poller(loops, Relaxed), 4);
}

/// A toggling poller (`fetch_xor(2)` and back) and a `fetch_add(0)` reader
/// wait for main's `fetch_add(1)`: the poller's writes wake the reader and
/// the reader's steps keep the poller from running alone, so only the
/// repeat rule (`exec/spin/repeat.rs`) ends their rounds. The outcome is what
/// each saw when it got through.
fn toggler_and_reader(loops: Loops) -> Option<String> {
    let word = Arc::new(AtomicUsize::new(0));
    let w = word.clone();
    let toggler = thread::spawn(move || {
        let mut seen = 0;
        let through = loops.run(|| {
            seen = w.fetch_xor(2, SeqCst);
            w.fetch_xor(2, SeqCst);
            seen & 1 == 1
        });
        through.then_some(seen)
    });
    let r = word.clone();
    let reader = thread::spawn(move || {
        let mut seen = 0;
        let through = loops.run(|| {
            seen = r.fetch_add(0, SeqCst);
            seen & 1 == 1
        });
        through.then_some(seen)
    });
    word.fetch_add(1, SeqCst);
    let toggler = toggler.join().unwrap()?;
    let reader = reader.join().unwrap()?;
    Some(format!("{toggler} {reader}"))
}

/// Spinners that keep each other going, against the same model unrolled
/// `tries` times without yields: every interleaving of the spinning model is
/// too many for a test (rounds end, but paths through a few dozen states
/// are many), so it runs under preemption bounds `0..=complete_at` with
/// each of `strategies`, reaching only outcomes of the unrolled model, and
/// all of them at `complete_at`. POR hands it over to the bounded oracle,
/// which ends rounds that brought the state back (`exec/spin/repeat.rs`).
/// Returns that report.
fn assert_bounded_spins_lose_nothing(
    strategies: &[Strategy],
    model: fn(Loops) -> Option<String>,
    tries: usize,
    complete_at: usize,
) -> kase::Report {
    let unrolled = outcomes(Builder::new(), Loops::Unrolled(tries), model);
    assert!(unrolled.len() > 1, "{unrolled:?}");
    for bound in 0..=complete_at {
        for &strategy in strategies {
            let builder = Builder::new().strategy(strategy).preemption_bound(bound);
            let spun = outcomes(builder, Loops::Spin, model);
            assert!(
                spun.is_subset(&unrolled),
                "bound {bound}, {strategy:?}: {spun:?} of {unrolled:?}"
            );
            if bound == complete_at {
                assert_eq!(spun, unrolled, "bound {bound}, {strategy:?}");
            }
        }
    }
    let report = Builder::new().preemption_bound(complete_at).explore(|| {
        model(Loops::Spin);
    });
    assert!(
        report
            .warnings()
            .iter()
            .any(|w| w.contains("bring the state back to where it was")),
        "{report}"
    );
    report
}

#[test]
fn a_toggling_poller_and_a_reader_that_keep_each_other_going() {
    let report = assert_bounded_spins_lose_nothing(
        &[Strategy::Por, Strategy::Exhaustive],
        toggler_and_reader,
        3,
        2,
    );
    assert!(report.sleep_set_blocked() > 0, "{report}");
}

/// Two pollers toggle their own bit of one word (`fetch_xor` and back)
/// until main sets bit 1; each reports the whole word it saw when it got
/// through, so the other's bit shows whether it was mid-toggle. Each one's
/// writes wake the other: only the repeat rule ends their rounds.
fn two_togglers(loops: Loops) -> Option<String> {
    let word = Arc::new(AtomicUsize::new(0));
    let pollers: Vec<_> = [2, 4]
        .into_iter()
        .map(|bit| {
            let w = word.clone();
            thread::spawn(move || {
                let mut seen = 0;
                let through = loops.run(|| {
                    seen = w.fetch_xor(bit, SeqCst);
                    w.fetch_xor(bit, SeqCst);
                    seen & 1 == 1
                });
                through.then_some(seen)
            })
        })
        .collect();
    word.fetch_or(1, SeqCst);
    let seen: Option<Vec<usize>> = pollers.into_iter().map(|h| h.join().unwrap()).collect();
    seen.map(|s| format!("{s:?}"))
}

#[test]
fn two_togglers_that_wake_each_other_lose_no_outcome() {
    // `[5, 3]` (each saw the other mid-toggle) takes three preemptions.
    assert_bounded_spins_lose_nothing(&[Strategy::Exhaustive], two_togglers, 3, 3);
}

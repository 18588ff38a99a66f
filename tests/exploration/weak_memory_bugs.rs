//! Bugs that live in atomics' orderings, found only under Rust's memory
//! model (`MemoryModel::Rc11`): each program fails there and passes under
//! sequential consistency, and its corrected version passes under both.

use kase::sync::atomic::{fence, AtomicBool, AtomicUsize, Ordering, Ordering::*};
use kase::sync::Arc;
use kase::{thread, Builder, FailureKind, MemoryModel, Report};

fn explore(model: &(dyn Fn() + Sync), memory_model: MemoryModel) -> Report {
    Builder::new().memory_model(memory_model).explore(model)
}

/// Fails under RC11 with a panic whose message contains `message`, and
/// passes under sequential consistency.
fn only_rc11_fails(model: impl Fn() + Sync, message: &str) {
    let sc = explore(&model, MemoryModel::SequentiallyConsistent);
    assert!(sc.failure().is_none() && sc.complete(), "{sc}");
    let rc11 = explore(&model, MemoryModel::Rc11);
    let failure = rc11
        .failure()
        .unwrap_or_else(|| panic!("not found under RC11: {rc11}"));
    assert_eq!(failure.kind(), FailureKind::Panic, "{rc11}");
    assert!(failure.message().unwrap_or("").contains(message), "{rc11}");
}

/// Passes under both memory models, exploring everything.
fn passes(model: impl Fn() + Sync) {
    for memory_model in [MemoryModel::SequentiallyConsistent, MemoryModel::Rc11] {
        let report = explore(&model, memory_model);
        assert!(
            report.failure().is_none() && report.complete(),
            "{memory_model:?}: {report}"
        );
    }
}

/// Dekker's entry protocol: raise my flag, enter if the other's is down.
/// Both threads entering breaks mutual exclusion.
fn dekker(store: Ordering, load: Ordering) -> impl Fn() + Sync {
    move || {
        let flags = Arc::new([AtomicBool::new(false), AtomicBool::new(false)]);
        let inside = Arc::new(AtomicUsize::new(0));
        let enter = move |me: usize, flags: &[AtomicBool; 2], inside: &AtomicUsize| {
            flags[me].store(true, store);
            if !flags[1 - me].load(load) {
                inside.fetch_add(1, Relaxed);
            }
        };
        let (f, i) = (flags.clone(), inside.clone());
        let t = thread::spawn(move || enter(1, &f, &i));
        enter(0, &flags, &inside);
        t.join().unwrap();
        assert!(
            inside.load(Relaxed) < 2,
            "both threads in the critical section"
        );
    }
}

#[test]
fn dekker_needs_seq_cst() {
    only_rc11_fails(
        dekker(Release, Acquire),
        "both threads in the critical section",
    );
    passes(dekker(SeqCst, SeqCst));
}

/// Peterson's entry protocol, checked once: raise my flag, give the turn
/// away, enter unless the other wants in and has the turn.
fn peterson(order: Ordering) -> impl Fn() + Sync {
    move || {
        let flags = Arc::new([AtomicBool::new(false), AtomicBool::new(false)]);
        let turn = Arc::new(AtomicUsize::new(0));
        let inside = Arc::new(AtomicUsize::new(0));
        let store = if order == SeqCst { SeqCst } else { Release };
        let load = if order == SeqCst { SeqCst } else { Acquire };
        let enter =
            move |me: usize, flags: &[AtomicBool; 2], turn: &AtomicUsize, inside: &AtomicUsize| {
                let other = 1 - me;
                flags[me].store(true, store);
                turn.store(other, store);
                if !(flags[other].load(load) && turn.load(load) == other) {
                    inside.fetch_add(1, Relaxed);
                }
            };
        let (f, t2, i) = (flags.clone(), turn.clone(), inside.clone());
        let t = thread::spawn(move || enter(1, &f, &t2, &i));
        enter(0, &flags, &turn, &inside);
        t.join().unwrap();
        assert!(
            inside.load(Relaxed) < 2,
            "both threads in the critical section"
        );
    }
}

#[test]
fn peterson_needs_seq_cst() {
    only_rc11_fails(peterson(AcqRel), "both threads in the critical section");
    passes(peterson(SeqCst));
}

/// A seqlock over two atomic words: the writer makes the sequence odd,
/// writes, makes it even; a reader keeps what it read only if the sequence
/// was even and unchanged. `fenced`: the fences a correct seqlock needs.
fn seqlock(fenced: bool) -> impl Fn() + Sync {
    move || {
        let seq = Arc::new(AtomicUsize::new(0));
        let data = Arc::new([AtomicUsize::new(0), AtomicUsize::new(0)]);
        let (s, d) = (seq.clone(), data.clone());
        let writer = thread::spawn(move || {
            s.store(1, Relaxed);
            if fenced {
                fence(Release);
            }
            d[0].store(1, Relaxed);
            d[1].store(1, Relaxed);
            s.store(2, Release);
        });
        let before = seq.load(Acquire);
        let words = [data[0].load(Relaxed), data[1].load(Relaxed)];
        if fenced {
            fence(Acquire);
        }
        let after = seq.load(Relaxed);
        if before == after && before % 2 == 0 {
            assert_eq!(words[0], words[1], "torn read accepted");
        }
        writer.join().unwrap();
    }
}

#[test]
fn a_seqlock_needs_its_fences() {
    only_rc11_fails(seqlock(false), "torn read accepted");
    passes(seqlock(true));
}

/// Message passing of atomic data behind a flag.
fn message_passing(flag_store: Ordering, flag_load: Ordering) -> impl Fn() + Sync {
    move || {
        let data = Arc::new(AtomicUsize::new(0));
        let flag = Arc::new(AtomicBool::new(false));
        let (d, f) = (data.clone(), flag.clone());
        let t = thread::spawn(move || {
            d.store(42, Relaxed);
            f.store(true, flag_store);
        });
        if flag.load(flag_load) {
            assert_eq!(data.load(Relaxed), 42, "flag seen, data stale");
        }
        t.join().unwrap();
    }
}

#[test]
fn message_passing_needs_release_acquire() {
    only_rc11_fails(message_passing(Relaxed, Relaxed), "flag seen, data stale");
    only_rc11_fails(message_passing(Release, Relaxed), "flag seen, data stale");
    passes(message_passing(Release, Acquire));
}

#[test]
fn a_weak_failure_replays_from_its_schedule() {
    let model = message_passing(Relaxed, Relaxed);
    let report = explore(&model, MemoryModel::Rc11);
    let failure = report.failure().expect("the stale read is found");
    let schedule = failure.schedule().clone();
    assert!(
        schedule.rc11(),
        "an RC11 failure has an RC11 schedule: {schedule}"
    );
    assert!(schedule.to_string().starts_with("kase1w:"), "{schedule}");
    // The schedule string alone replays it, under RC11 whatever the builder
    // says (as `kase1p:` replays with peeking).
    let again = Builder::new().replay(&schedule.to_string()).explore(&model);
    let replayed = again.failure().expect("the replay fails the same way");
    assert_eq!(replayed.message(), failure.message(), "{again}");
    assert_eq!(replayed.schedule(), &schedule);
    // The same thread choices as a `kase1:` schedule replay an interleaving
    // (every load reads the latest store): the stale read is not in it.
    let text = schedule.to_string();
    let threads = text["kase1w:".len()..].split('/').next().unwrap();
    let interleaving = Builder::new()
        .replay(&format!("kase1:{threads}"))
        .explore(&model);
    assert!(interleaving.failure().is_none(), "{interleaving}");
}

#[test]
fn a_weak_failure_is_saved_and_replayed_first() {
    let dir = crate::common::temp_dir("weak_memory_bugs_saved");
    let builder = || {
        Builder::new()
            .name("weak_memory_bugs::saved")
            .regressions_dir(&dir)
            .persist(kase::Persist::File)
            .memory_model(MemoryModel::Rc11)
    };
    let model = message_passing(Relaxed, Relaxed);
    let first = builder().explore(&model);
    let schedule = first.failure().expect("found").schedule().to_string();
    assert!(schedule.starts_with("kase1w:"), "{schedule}");
    let saved = std::fs::read_dir(&dir).unwrap().count();
    assert_eq!(saved, 1, "one regression file");
    let second = builder().explore(&model);
    assert_eq!(second.replayed(), 1, "{second}");
    let failure = second.failure().expect("the saved schedule fails again");
    assert_eq!(failure.schedule().to_string(), schedule);
    assert_eq!(
        second.executions(),
        1,
        "found by the replay, before exploring"
    );
}

#[test]
fn a_stale_load_is_shown_with_the_store_it_read_and_the_newer_one() {
    let report = explore(&message_passing(Relaxed, Relaxed), MemoryModel::Rc11);
    let text = report.failure().expect("found").to_string();
    // The flag's load read the spawned thread's store; the data's load read
    // the initial value although the store of 42 had run.
    assert!(text.contains("load atomic#"), "{text}");
    let stale = text
        .lines()
        .find(|l| l.contains("-> 0 (reads the initial value; stale: step"))
        .unwrap_or_else(|| panic!("no stale load shown:\n{text}"));
    assert!(stale.contains("had stored 42"), "{stale}");
    assert!(text.contains("-> 1 (reads step"), "{text}");
}

/// A flag handed over with Release/Acquire, awaited in a spin loop.
/// A row that stands for a whole call (a `LazyLock` forced: several reads
/// and a store of its state) says which store it read once, and not that
/// it read its own store.
#[test]
fn a_calls_row_names_what_it_read_once() {
    let report = Builder::new().memory_model(MemoryModel::Rc11).explore(|| {
        let lazy = Arc::new(kase::sync::LazyLock::new(|| 5u32));
        assert_eq!(**lazy, 5);
        let data = Arc::new(AtomicUsize::new(0));
        let flag = Arc::new(AtomicUsize::new(0));
        let (d, f) = (data.clone(), flag.clone());
        let t = thread::spawn(move || {
            d.store(1, Relaxed);
            f.store(1, Relaxed);
        });
        if flag.load(Relaxed) == 1 {
            assert_eq!(data.load(Relaxed), 1, "stale data");
        }
        t.join().unwrap();
    });
    let text = report
        .failure()
        .expect("the stale read is found")
        .to_string();
    let force = text
        .lines()
        .find(|l| l.contains("force lazy_lock#"))
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(force.matches("(reads").count(), 1, "{text}");
    assert!(!force.contains("reads step 1)"), "{text}");
}

fn spin_handover(check_data: bool) -> impl Fn() + Sync {
    move || {
        let data = Arc::new(AtomicUsize::new(0));
        let flag = Arc::new(AtomicBool::new(false));
        let (d, f) = (data.clone(), flag.clone());
        let t = thread::spawn(move || {
            d.store(42, Relaxed);
            f.store(true, Release);
        });
        while !flag.load(Acquire) {
            kase::hint::spin_loop();
        }
        if check_data {
            assert_eq!(data.load(Relaxed), 42);
        }
        t.join().unwrap();
    }
}

#[test]
fn a_spin_that_reads_a_stale_flag_is_no_deadlock() {
    // Under RC11 the loop may read `false` after the store of `true` ran;
    // a thread stuck on a stale value is not a deadlock (the model promises
    // stores become visible), and the handover passes.
    passes(spin_handover(true));
}

#[test]
fn a_weak_failure_is_simplified_to_fewer_preemptions() {
    // The revisit explorer's first failing execution of message passing
    // behind a Relaxed flag switches threads twice (its replay runs the
    // revisited load after the store); the search for a simpler one (every
    // store choice, preemptions bounded) finds one with fewer, which
    // replays.
    let model = message_passing(Relaxed, Relaxed);
    let first = Builder::new().minimize(0).explore(&model);
    let first = first.failure().expect("the stale read is found");
    let report = Builder::new().minimize(1000).explore(&model);
    let best = report.failure().expect("the stale read is found");
    let (schedule, preemptions) = best.first_found().expect("simplified");
    assert_eq!(schedule, first.schedule());
    assert_eq!(Some(preemptions), first.preemptions());
    assert!(best.preemptions() < first.preemptions(), "{best}");
    assert!(best.schedule().to_string().starts_with("kase1w:"));
    let replayed = Builder::new()
        .replay(&best.schedule().to_string())
        .explore(&model);
    let again = replayed.failure().expect("it replays");
    assert!(again
        .message()
        .unwrap_or("")
        .contains("flag seen, data stale"));
}

/// Two threads take a spinlock (a compare-exchange loop, Acquire; a Release
/// store to unlock) around a Relaxed increment; each returns how many times
/// its compare-exchange failed (counted up to 2) and what it read.
fn spinlock() -> Vec<(u8, usize)> {
    let lock = Arc::new(AtomicBool::new(false));
    let count = Arc::new(AtomicUsize::new(0));
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let (lock, count) = (lock.clone(), count.clone());
            thread::spawn(move || {
                let mut failed = 0u8;
                while lock
                    .compare_exchange(false, true, Acquire, Relaxed)
                    .is_err()
                {
                    failed = (failed + 1).min(2);
                    kase::hint::spin_loop();
                }
                let v = count.load(Relaxed);
                count.store(v + 1, Relaxed);
                lock.store(false, Release);
                (failed, v)
            })
        })
        .collect();
    threads.into_iter().map(|t| t.join().unwrap()).collect()
}

#[test]
fn a_spinlock_shows_every_behaviour_under_the_revisit_explorer() {
    let run = |strategy| {
        let seen = std::sync::Mutex::new(std::collections::BTreeSet::new());
        let report = Builder::new()
            .memory_model(MemoryModel::Rc11)
            .strategy(strategy)
            .explore(|| {
                let outcome = spinlock();
                seen.lock().unwrap().insert(outcome);
            });
        assert!(report.failure().is_none() && report.complete(), "{report}");
        (seen.into_inner().unwrap(), report)
    };
    let (seen, revisits) = run(kase::Strategy::Por);
    let (all, every) = run(kase::Strategy::Exhaustive);
    assert_eq!(
        revisits.graph_explorer(),
        Some(&kase::GraphExplorer::Revisits)
    );
    // Both sections in either order, with 0, 1 or 2 failed attempts of the
    // second thread in: the same behaviours.
    assert_eq!(seen, all);
    assert_eq!(seen.len(), 6, "{seen:?}");
    // The oracle counts one graph more: a third failed attempt that reads
    // what the second read, in the same state (a spin repetition, which the
    // revisit explorer, like the waiting rule, runs once).
    assert_eq!(revisits.traces(), Some(7), "{revisits}");
    assert_eq!(every.traces(), Some(8), "{every}");
}

/// Two flags handed over with Release stores, awaited together in one spin
/// loop (as concurrent-queue's `pop` re-reads a slot's stamp and the head);
/// returns the data the waiter saw.
fn spin_over_two_flags() -> usize {
    spin_over_two_flags_with(Release, Acquire)
}

/// `spin_over_two_flags` with the flags stored with `store` and read with
/// `load`.
fn spin_over_two_flags_with(store: Ordering, load: Ordering) -> usize {
    let data = Arc::new(AtomicUsize::new(0));
    let flags = Arc::new([AtomicBool::new(false), AtomicBool::new(false)]);
    let (d, f) = (data.clone(), flags.clone());
    let t = thread::spawn(move || {
        d.store(42, Relaxed);
        f[0].store(true, store);
        f[1].store(true, store);
    });
    while !(flags[0].load(load) && flags[1].load(load)) {
        kase::hint::spin_loop();
    }
    let seen = data.load(Relaxed);
    t.join().unwrap();
    seen
}

/// Under RC11, with the exhaustive and the revisit explorer: `model`
/// passes, completely, and returns exactly `outcomes`.
fn passes_with_outcomes(model: impl Fn() -> usize + Sync, outcomes: &[usize]) {
    for strategy in [kase::Strategy::Exhaustive, kase::Strategy::Por] {
        let seen = std::sync::Mutex::new(std::collections::BTreeSet::new());
        let report = Builder::new()
            .memory_model(MemoryModel::Rc11)
            .strategy(strategy)
            .explore(|| {
                let data = model();
                seen.lock().unwrap().insert(data);
            });
        assert!(
            report.failure().is_none() && report.complete(),
            "{strategy:?}: {report}"
        );
        let seen: Vec<usize> = seen.into_inner().unwrap().into_iter().collect();
        assert_eq!(seen, outcomes, "{strategy:?}");
    }
}

#[test]
fn a_spin_over_two_atomics_waits_under_rc11_instead_of_rereading_stale_values() {
    // A re-read that repeats an iteration with nothing new stored is the
    // earlier iteration again: the spinner waits for a store, so no
    // execution re-reads a stale value until `max_steps` (a false
    // livelock), under every explorer, and none loses an outcome.
    passes_with_outcomes(spin_over_two_flags, &[42]);
    let bounded = Builder::new()
        .memory_model(MemoryModel::Rc11)
        .preemption_bound(2)
        .explore(|| assert_eq!(spin_over_two_flags(), 42));
    assert!(bounded.failure().is_none(), "{bounded}");
}

#[test]
fn waiting_in_a_spin_over_two_atomics_keeps_the_stale_data_outcome() {
    // With Relaxed flags the data may still read 0 after the loop: the
    // wait must not hide that path under any explorer.
    passes_with_outcomes(|| spin_over_two_flags_with(Relaxed, Relaxed), &[0, 42]);
}

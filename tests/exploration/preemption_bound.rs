//! The preemption bound (`Builder::preemption_bound`): the bounded DFS runs
//! exactly the interleavings with at most n preemptions (counted against a
//! brute-force enumeration of the same programs), a bug that needs one
//! preemption is missed at 0 and found at 1, its schedule replays, the
//! report says how far the result holds, and `check` passes a search that
//! is complete within the bound.

use kase::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use kase::sync::Arc;
use kase::{thread, Builder, FailureKind, Strategy};

use crate::common::models::lost_update;

/// One step of a thread in the abstract programs the brute force
/// enumerates: what kase schedules.
#[derive(Clone, Copy)]
enum Op {
    /// An operation that is always enabled (an atomic access).
    Step,
    /// Spawns thread `n` (enabled at once). Not a scheduling point: the
    /// spawner goes on to its next operation without a choice.
    Spawn(usize),
    /// Waits until thread `n` has finished.
    Join(usize),
}

/// Counts the interleavings of `threads` (thread 0 runs first, the others
/// start when spawned) with at most `bound` preemptions, by enumerating
/// them all. A preemption is running a thread other than the one that ran
/// last while that one is enabled; every thread ends with its exit, which
/// is a step of its own; a spawn is done silently with the step before it.
fn brute_force(threads: &[Vec<Op>], bound: usize) -> u64 {
    fn enabled(threads: &[Vec<Op>], pc: &[usize], live: &[bool], t: usize) -> bool {
        if !live[t] || pc[t] > threads[t].len() {
            return false;
        }
        match threads[t].get(pc[t]) {
            Some(Op::Join(n)) => pc[*n] > threads[*n].len(),
            _ => true,
        }
    }
    /// Runs `t`'s spawns up to its next scheduling point.
    fn spawns(threads: &[Vec<Op>], pc: &mut [usize], live: &mut [bool], t: usize) {
        while let Some(Op::Spawn(n)) = threads[t].get(pc[t]) {
            live[*n] = true;
            pc[t] += 1;
        }
    }
    fn go(
        threads: &[Vec<Op>],
        pc: &mut Vec<usize>,
        live: &mut Vec<bool>,
        last: usize,
        used: usize,
        bound: usize,
    ) -> u64 {
        let enabled: Vec<usize> = (0..threads.len())
            .filter(|&t| enabled(threads, pc, live, t))
            .collect();
        if enabled.is_empty() {
            return 1;
        }
        let mut count = 0;
        for &t in &enabled {
            let cost = usize::from(enabled.len() > 1 && t != last && enabled.contains(&last));
            if used + cost > bound {
                continue;
            }
            let (saved_pc, saved_live) = (pc.clone(), live.clone());
            pc[t] += 1;
            spawns(threads, pc, live, t);
            count += go(threads, pc, live, t, used + cost, bound);
            (*pc, *live) = (saved_pc, saved_live);
        }
        count
    }
    let mut pc = vec![0; threads.len()];
    let mut live = vec![false; threads.len()];
    live[0] = true;
    spawns(threads, &mut pc, &mut live, 0);
    go(threads, &mut pc, &mut live, 0, 0, bound)
}

/// Main spawns one thread; each does `mine` / `theirs` stores to one atomic;
/// main then joins.
fn two_threads(mine: usize, theirs: usize) -> impl Fn() + Sync {
    move || {
        let x = Arc::new(AtomicUsize::new(0));
        let x2 = x.clone();
        let t = thread::spawn(move || {
            for i in 0..theirs {
                x2.store(i, SeqCst);
            }
        });
        for i in 0..mine {
            x.store(i, SeqCst);
        }
        t.join().unwrap();
    }
}

/// The abstract program of [`two_threads`].
fn two_threads_program(mine: usize, theirs: usize) -> Vec<Vec<Op>> {
    let mut main = vec![Op::Spawn(1)];
    main.extend(std::iter::repeat(Op::Step).take(mine));
    main.push(Op::Join(1));
    vec![main, vec![Op::Step; theirs]]
}

/// Main spawns two threads doing one store each, then joins both.
fn three_threads() {
    let x = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..2)
        .map(|i| {
            let x = x.clone();
            thread::spawn(move || x.store(i, SeqCst))
        })
        .collect();
    x.store(9, SeqCst);
    for h in handles {
        h.join().unwrap();
    }
}

fn three_threads_program() -> Vec<Vec<Op>> {
    vec![
        vec![
            Op::Spawn(1),
            Op::Spawn(2),
            Op::Step,
            Op::Join(1),
            Op::Join(2),
        ],
        vec![Op::Step],
        vec![Op::Step],
    ]
}

use crate::common::bounded;

#[test]
fn bound_zero_runs_only_the_non_preemptive_interleaving() {
    // Two threads × two stores: main runs until its join blocks, then the
    // thread runs to its end and main joins. Every other interleaving
    // switches away from a thread that could go on.
    let report = bounded(0).explore(two_threads(2, 2));
    assert_eq!(report.executions(), 1, "{report}");
    assert!(report.failure().is_none());
    assert!(
        report.complete_within_bound() && !report.complete(),
        "{report}"
    );
    assert_eq!(report.preemption_bound(), Some(0));
}

#[test]
fn brute_force_agrees_with_the_oracle_unbounded() {
    // The event model of the brute force is kase's: with a bound no
    // execution exceeds, both count every interleaving.
    for (mine, theirs) in [(1, 1), (2, 2), (3, 2)] {
        let oracle = Builder::new()
            .strategy(Strategy::Exhaustive)
            .explore(two_threads(mine, theirs));
        assert!(oracle.complete());
        assert_eq!(
            oracle.executions(),
            brute_force(&two_threads_program(mine, theirs), usize::MAX),
            "{mine}×{theirs}: {oracle}"
        );
    }
    let oracle = Builder::new()
        .strategy(Strategy::Exhaustive)
        .explore(three_threads);
    assert_eq!(
        oracle.executions(),
        brute_force(&three_threads_program(), usize::MAX),
        "{oracle}"
    );
}

#[test]
fn bounds_zero_to_three_match_the_brute_force_count() {
    for bound in 0..=3 {
        for strategy in [Strategy::Exhaustive, Strategy::Por] {
            for (mine, theirs) in [(1, 1), (2, 2), (3, 2)] {
                let report = bounded(bound)
                    .strategy(strategy)
                    .explore(two_threads(mine, theirs));
                let expected = brute_force(&two_threads_program(mine, theirs), bound);
                if strategy == Strategy::Exhaustive {
                    assert_eq!(
                        report.executions(),
                        expected,
                        "bound {bound}, {strategy:?}, {mine}×{theirs}: {report}"
                    );
                    assert!(!report.reduction(), "the bounded oracle");
                } else {
                    // The bounded reduction: interleavings that differ
                    // only in the order of independent steps run once.
                    assert!(
                        report.executions() <= expected,
                        "bound {bound}, {strategy:?}, {mine}×{theirs}: {report}"
                    );
                    assert!(report.reduction(), "the bounded reduction");
                }
                assert!(report.complete_within_bound(), "{report}");
                let all = brute_force(&two_threads_program(mine, theirs), usize::MAX);
                if strategy == Strategy::Exhaustive {
                    // Complete outright exactly when the bound left no
                    // interleaving out.
                    assert_eq!(report.complete(), expected == all, "{report}");
                } else if expected == all {
                    // The reduction may also be complete when the bound
                    // left out interleavings but no trace (two stores of
                    // one thread each fit in one preemption either way).
                    assert!(report.complete(), "{report}");
                }
            }
            let report = bounded(bound).strategy(strategy).explore(three_threads);
            let expected = brute_force(&three_threads_program(), bound);
            if strategy == Strategy::Exhaustive {
                assert_eq!(
                    report.executions(),
                    expected,
                    "bound {bound}, {strategy:?}, three threads: {report}"
                );
            } else {
                assert!(report.executions() <= expected, "{report}");
            }
        }
    }
}

#[test]
fn the_lost_update_needs_one_preemption() {
    let report = bounded(0).explore(lost_update);
    assert!(report.failure().is_none(), "{report}");
    assert!(
        report.complete_within_bound() && !report.complete(),
        "{report}"
    );
    assert!(
        report.to_string().contains("complete up to 0 preemptions"),
        "{report}"
    );
    assert!(
        report.warnings().iter().any(|w| w.contains("only up to")),
        "{:?}",
        report.warnings()
    );

    let report = bounded(1).explore(lost_update);
    let failure = report.failure().expect("one preemption finds it");
    assert_eq!(failure.kind(), FailureKind::Panic);
    assert_eq!(report.preemption_bound(), Some(1));
    assert!(!report.complete() && !report.complete_within_bound());

    // Its schedule replays the same failure.
    let schedule = failure.schedule().to_string();
    let replayed = Builder::new().replay(&schedule).explore(lost_update);
    assert_eq!(replayed.executions(), 1);
    assert_eq!(
        replayed.failure().map(|f| f.kind()),
        Some(FailureKind::Panic),
        "{replayed}"
    );
}

#[test]
fn check_passes_a_search_complete_within_its_bound() {
    // The lost update fails with one preemption, but the user asked for 0:
    // no failure there, so check passes (printing a note).
    bounded(0).check(lost_update);
    // A bound that leaves nothing out is simply complete.
    let report = bounded(10).explore(two_threads(1, 1));
    assert!(
        report.complete() && report.complete_within_bound(),
        "{report}"
    );
    assert!(report.warnings().is_empty(), "{:?}", report.warnings());
}

#[test]
fn a_budget_deepens_the_bound_from_zero() {
    // With a time budget, bounds 0, 1, 2 are explored in turn and all
    // their executions counted; the lost update is found in round 1.
    let report = bounded(2)
        .max_duration(std::time::Duration::from_secs(60))
        .explore(lost_update);
    assert!(report.failure().is_some(), "{report}");
    assert_eq!(report.preemption_bound(), Some(1), "{report}");
    let round0 = bounded(0).explore(lost_update).executions();
    assert!(report.executions() > round0, "{report}");

    // Without a failure: the deepest bound is the one asked for, and the
    // executions of every round are counted.
    let model = two_threads(2, 2);
    let report = bounded(2)
        .max_duration(std::time::Duration::from_secs(60))
        .explore(&model);
    let rounds: u64 = (0..=2)
        .map(|b| bounded(b).explore(&model).executions())
        .sum();
    assert_eq!(report.executions(), rounds, "{report}");
    assert_eq!(report.preemption_bound(), Some(2));
    assert!(report.complete_within_bound(), "{report}");

    // A budget met in round 2, after round 1 finished: the result holds up
    // to 1 preemption, and the budget's warning says so.
    let first_two: u64 = (0..=1)
        .map(|b| bounded(b).explore(&model).executions())
        .sum();
    assert!(rounds > first_two + 1);
    let report = bounded(2)
        .max_duration(std::time::Duration::from_secs(60))
        .max_executions(first_two + 1)
        .allow_incomplete(true)
        .explore(&model);
    assert_eq!(report.preemption_bound(), Some(1), "{report}");
    assert!(
        report.complete_within_bound() && !report.complete(),
        "{report}"
    );
    assert!(
        report.warnings().iter().any(|w| w.contains(
            "INCOMPLETE (behaviours may be left unexplored). Every execution with at most \
             1 preemption was explored before"
        )),
        "{:?}",
        report.warnings()
    );
}

#[test]
fn the_bounded_reduction_runs_independent_threads_once() {
    // Two threads storing to atomics of their own: every interleaving is
    // one trace, which the bounded oracle runs once per interleaving
    // within the bound and the bounded reduction once.
    let model = || {
        let (x, y) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let y2 = y.clone();
        let t = thread::spawn(move || {
            for i in 0..3 {
                y2.store(i, SeqCst);
            }
        });
        for i in 0..3 {
            x.store(i, SeqCst);
        }
        t.join().unwrap();
    };
    let oracle = bounded(2).strategy(Strategy::Exhaustive).explore(model);
    let reduced = bounded(2).explore(model);
    assert!(oracle.executions() > 10, "{oracle}");
    assert_eq!(reduced.executions(), 1, "{reduced}");
    assert!(reduced.reduction() && reduced.complete(), "{reduced}");
}

/// Thread 1 locks, stores `a`, unlocks, then stores `b` and `c`; thread 2
/// reads `a` and `b`, takes the lock, then reads `c`. Reading `a == 1`,
/// `b == 0`, `c == 1` takes one preemption only when thread 2 blocks on the
/// lock thread 1 still holds: preempted after storing `a`, thread 1 goes on
/// for free once thread 2 blocks. Had thread 1 unlocked first, thread 2
/// could go on and switching back would cost a second preemption. So a
/// reduction that moved the unlock back (a sleep set holding a release)
/// would lose this outcome at bound 1.
fn blocked_on_a_held_lock() -> (usize, usize, usize) {
    let shared = Arc::new((
        kase::sync::Mutex::new(()),
        AtomicUsize::new(0),
        AtomicUsize::new(0),
        AtomicUsize::new(0),
    ));
    let theirs = shared.clone();
    let writer = thread::spawn(move || {
        let (m, a, b, c) = &*theirs;
        let guard = m.lock().unwrap();
        a.store(1, SeqCst);
        drop(guard);
        b.store(1, SeqCst);
        c.store(1, SeqCst);
    });
    let theirs = shared.clone();
    let reader = thread::spawn(move || {
        let (m, a, b, c) = &*theirs;
        let seen = (a.load(SeqCst), b.load(SeqCst));
        drop(m.lock().unwrap());
        (seen.0, seen.1, c.load(SeqCst))
    });
    writer.join().unwrap();
    reader.join().unwrap()
}

#[test]
fn a_thread_blocked_on_a_held_lock_keeps_its_outcomes_at_bound_one() {
    let outcomes = |strategy: Strategy| {
        let seen = std::sync::Mutex::new(std::collections::BTreeSet::new());
        let report = bounded(1).strategy(strategy).explore(|| {
            let outcome = blocked_on_a_held_lock();
            seen.lock().unwrap().insert(outcome);
        });
        assert!(report.complete_within_bound(), "{report}");
        seen.into_inner().unwrap()
    };
    let oracle = outcomes(Strategy::Exhaustive);
    assert!(oracle.contains(&(1, 0, 1)), "{oracle:?}");
    assert_eq!(outcomes(Strategy::Por), oracle);
}

/// Three threads each storing three times to one atomic: 1 680 traces, far
/// more than the default trial without the bound.
fn three_times_three() {
    let x = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..2)
        .map(|t| {
            let x = x.clone();
            thread::spawn(move || (0..3).for_each(|i| x.store(10 * t + i, SeqCst)))
        })
        .collect();
    (0..3).for_each(|i| x.store(20 + i, SeqCst));
    handles.into_iter().for_each(|h| h.join().unwrap());
}

#[test]
fn a_small_model_is_explored_whole_before_any_bound() {
    // The lost update needs one preemption, but the trial without the bound
    // explores all of it: the bug is found at bound 0, and the report holds
    // no bound.
    let report = Builder::new().preemption_bound(0).explore(lost_update);
    assert_eq!(
        report.failure().map(|f| f.kind()),
        Some(FailureKind::Panic),
        "{report}"
    );
    assert_eq!(report.preemption_bound(), None, "{report}");
    // Without a bug: complete outright, in the executions of the search
    // without a bound, none discarded, and no note about the bound.
    let model = two_threads(2, 2);
    let report = Builder::new().preemption_bound(0).explore(&model);
    let unbounded = Builder::new().explore(&model);
    assert!(report.complete() && report.failure().is_none(), "{report}");
    assert_eq!(report.preemption_bound(), None, "{report}");
    assert_eq!(report.executions(), unbounded.executions(), "{report}");
    assert_eq!(report.discarded_executions(), 0, "{report}");
    assert!(report.warnings().is_empty(), "{:?}", report.warnings());
    // The bounded oracle is never given a trial: it is what the bounded
    // reduction is checked against.
    let oracle = Builder::new()
        .preemption_bound(0)
        .strategy(Strategy::Exhaustive)
        .explore(lost_update);
    assert!(oracle.failure().is_none(), "{oracle}");
}

#[test]
fn a_model_beyond_the_trial_is_explored_again_with_the_bound() {
    // A trial of 10 executions cannot finish 1 680 traces: it is discarded
    // and the bounded search runs as it would have alone.
    let alone = bounded(1).explore(three_times_three);
    let report = Builder::new()
        .preemption_bound(1)
        .unbounded_trial(10)
        .explore(three_times_three);
    assert_eq!(report.discarded_executions(), 10, "{report}");
    assert_eq!(
        report.executions(),
        alone.executions() + 10,
        "{report}\n{alone}"
    );
    assert_eq!(report.preemption_bound(), Some(1), "{report}");
    assert!(
        report.complete_within_bound() && !report.complete(),
        "{report}"
    );
    // The default trial gives up before its 256 executions once the
    // search tree says the model needs many times that.
    let report = Builder::new()
        .preemption_bound(1)
        .explore(three_times_three);
    let discarded = report.discarded_executions();
    assert!((32..256).contains(&discarded), "{report}");
    assert_eq!(report.executions(), alone.executions() + discarded);
    // Under a time budget the bound is deepened after the trial: 0, then 1.
    let report = Builder::new()
        .preemption_bound(1)
        .unbounded_trial(10)
        .max_duration(std::time::Duration::from_secs(60))
        .explore(three_times_three);
    let rounds = bounded(0).explore(three_times_three).executions() + alone.executions();
    assert_eq!(report.executions(), 10 + rounds, "{report}");
    assert_eq!(report.discarded_executions(), 10, "{report}");
    assert_eq!(report.preemption_bound(), Some(1), "{report}");
}

#[test]
fn the_budgets_hold_for_the_trial_and_the_bounded_search_together() {
    let report = Builder::new()
        .preemption_bound(1)
        .unbounded_trial(10)
        .max_executions(25)
        .allow_incomplete(true)
        .explore(three_times_three);
    assert_eq!(report.executions(), 25, "{report}");
    assert!(
        !report.complete() && !report.complete_within_bound(),
        "{report}"
    );
    // Stopped during the trial: the budget's message, not a bound's.
    let report = Builder::new()
        .preemption_bound(1)
        .max_executions(5)
        .allow_incomplete(true)
        .explore(three_times_three);
    assert_eq!(report.executions(), 5, "{report}");
    assert_eq!(report.preemption_bound(), None, "{report}");
    assert!(
        report
            .warnings()
            .iter()
            .any(|w| w.contains("max_executions = 5")),
        "{:?}",
        report.warnings()
    );
}

/// The producer reads `ack`, then publishes `flag`; the consumer spins
/// until it sees `flag`, then stores `ack`. The consumer's store comes
/// after the producer's read of `ack` only through the flag it read, so a
/// bounded search that did not count a read as coming after the store it
/// read would take them for a race, run the consumer at the producer's
/// read, and end there with the consumer back in its spin and the
/// producer asleep (sleep-set-blocked).
#[test]
fn a_read_comes_after_the_store_it_read_in_the_bounded_search() {
    use kase::sync::atomic::Ordering::{Acquire, Relaxed, Release};
    let model = || {
        let (flag, ack) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let (flag2, ack2) = (flag.clone(), ack.clone());
        let consumer = thread::spawn(move || {
            while flag2.load(Acquire) == 0 {
                thread::yield_now();
            }
            ack2.store(1, Relaxed);
        });
        let seen = ack.load(Relaxed);
        flag.store(1, Release);
        consumer.join().unwrap();
        assert_eq!(seen, 0, "the ack came before the flag");
    };
    // Executions and sleep-set-blocked ones per bound: without the edge,
    // (4, 1), (7, 3) and (8, 3).
    for (bound, counts) in [(0, (4, 1)), (1, (6, 2)), (2, (7, 2))] {
        let oracle = bounded(bound).strategy(Strategy::Exhaustive).explore(model);
        let reduced = bounded(bound).explore(model);
        assert!(
            reduced.complete_within_bound() && oracle.complete_within_bound(),
            "{reduced}"
        );
        assert_eq!(reduced.traces(), oracle.traces(), "{reduced}\n{oracle}");
        assert_eq!(
            (reduced.executions(), reduced.sleep_set_blocked()),
            counts,
            "{reduced}"
        );
    }
}

//! Spin loops end without losing a path: a thread that yields in a state it
//! was in at an earlier yield, having only read one object since, waits
//! until another thread modifies it, so spin locks and flag waits are
//! explored completely instead of running into `max_steps`; a yield outside
//! a loop never waits, and a loop whose state changes (a bounded spin) is
//! explored iteration by iteration (`kase-rt/src/exec/spin`).

use kase::hint::spin_loop;
use kase::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use kase::sync::{Arc, Mutex, RwLock};
use kase::{thread, Builder, FailureKind, Report, Strategy};
use std::collections::BTreeSet;
use std::time::Duration;

use crate::common::{bounded, optimal};

struct SpinLock(AtomicBool);

impl SpinLock {
    fn lock(&self) {
        while self
            .0
            .compare_exchange(false, true, SeqCst, SeqCst)
            .is_err()
        {
            spin_loop();
        }
    }

    /// The broken version: test, then set, in two steps.
    fn lock_test_then_set(&self) {
        while self.0.load(SeqCst) {
            spin_loop();
        }
        self.0.store(true, SeqCst);
    }

    fn unlock(&self) {
        self.0.store(false, SeqCst);
    }
}

fn counter_under(lock_fn: fn(&SpinLock)) -> Report {
    optimal(move || {
        let lock = Arc::new(SpinLock(AtomicBool::new(false)));
        let n = Arc::new(AtomicUsize::new(0));
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let (lock, n) = (lock.clone(), n.clone());
                thread::spawn(move || {
                    lock_fn(&lock);
                    let v = n.load(SeqCst);
                    n.store(v + 1, SeqCst);
                    lock.unlock();
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(n.load(SeqCst), 2, "lost update under the lock");
    })
}

#[test]
fn cas_spinlock_completes_and_is_correct() {
    let report = counter_under(SpinLock::lock);
    assert!(report.failure().is_none(), "{report}");
    // Nothing came near the step bound: each execution is short.
    assert!(report.executions() < 100, "{report}");
}

#[test]
fn test_then_set_lock_is_caught() {
    let report = counter_under(SpinLock::lock_test_then_set);
    let failure = report.failure().expect("two threads in the section");
    assert_eq!(failure.kind(), FailureKind::Panic);
    assert!(failure.message().unwrap().contains("lost update"));
}

#[test]
fn flag_wait_with_yield_is_explored_exactly() {
    let report = optimal(|| {
        let flag = Arc::new(AtomicBool::new(false));
        let data = Arc::new(AtomicUsize::new(0));
        let (f, d) = (flag.clone(), data.clone());
        let t = thread::spawn(move || {
            d.store(42, SeqCst);
            f.store(true, SeqCst);
        });
        while !flag.load(SeqCst) {
            thread::yield_now();
        }
        assert_eq!(data.load(SeqCst), 42);
        t.join().unwrap();
    });
    assert!(report.failure().is_none(), "{report}");
}

#[test]
fn spinning_on_a_flag_nobody_sets_is_reported_not_run_forever() {
    let report = Builder::new().max_steps(1_000_000).explore(|| {
        let flag = AtomicBool::new(false);
        while !flag.load(SeqCst) {
            spin_loop();
        }
    });
    let failure = report.failure().expect("the spin never ends");
    assert_eq!(failure.kind(), FailureKind::Deadlock, "{failure}");
    assert_eq!(report.executions(), 1);
}

#[test]
fn a_backoff_loop_that_reads_nothing_still_finishes() {
    let report = optimal(|| {
        let n = Arc::new(AtomicUsize::new(0));
        let m = n.clone();
        let t = thread::spawn(move || {
            m.fetch_add(1, SeqCst);
        });
        for _ in 0..3 {
            spin_loop();
        }
        n.fetch_add(1, SeqCst);
        t.join().unwrap();
    });
    assert!(report.failure().is_none(), "{report}");
}

#[test]
fn two_spinners_wait_for_one_release() {
    optimal(|| {
        let go = Arc::new(AtomicUsize::new(0));
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let go = go.clone();
                thread::spawn(move || {
                    while go.load(SeqCst) == 0 {
                        spin_loop();
                    }
                })
            })
            .collect();
        go.store(1, SeqCst);
        for h in handles {
            h.join().unwrap();
        }
    });
}

/// Runs `model` under POR and the oracle, with and without peeking: all four
/// find the same failure kind (or none), and every exploration completes.
fn everywhere<F: Fn() + Sync>(model: F) -> Option<FailureKind> {
    let mut kinds = Vec::new();
    for strategy in [Strategy::Por, Strategy::Exhaustive] {
        for peeking in [false, true] {
            let report = Builder::new()
                .strategy(strategy)
                .peeking(peeking)
                .max_steps(5_000)
                .explore(&model);
            if report.failure().is_none() {
                assert!(
                    report.complete(),
                    "{strategy:?} peeking {peeking}: {report}"
                );
            }
            kinds.push((strategy, peeking, report.failure().map(|f| f.kind())));
        }
    }
    let first = kinds[0].2;
    assert!(
        kinds.iter().all(|k| k.2 == first),
        "explorers disagree: {kinds:?}"
    );
    first
}

#[test]
fn a_yield_sleep_or_hint_outside_a_loop_never_waits() {
    // Nobody ever writes what main read before it yields: the yield
    // returns all the same (a first yield has no earlier state to repeat).
    assert_eq!(
        everywhere(|| {
            let x = AtomicUsize::new(0);
            x.load(SeqCst);
            thread::yield_now();
        }),
        None
    );
    assert_eq!(
        everywhere(|| {
            let m = Mutex::new(1);
            let v = *m.lock().unwrap();
            thread::yield_now();
            assert_eq!(v, 1);
        }),
        None
    );
    assert_eq!(
        everywhere(|| {
            let r = RwLock::new(1);
            let _ = *r.read().unwrap();
            thread::sleep(Duration::from_millis(1));
            spin_loop();
        }),
        None
    );
}

#[test]
fn a_bounded_spins_give_up_path_is_explored() {
    // The spinner tries three times, then gives up, although the flag will
    // be set: its counter changes, so no iteration is a repetition.
    for pause in [spin_loop as fn(), thread::yield_now, || {
        thread::sleep(Duration::from_millis(1))
    }] {
        let kind = everywhere(move || {
            let flag = Arc::new(AtomicBool::new(false));
            let f = flag.clone();
            let t = thread::spawn(move || f.store(true, SeqCst));
            let mut saw = false;
            for _ in 0..3 {
                if flag.load(SeqCst) {
                    saw = true;
                    break;
                }
                pause();
            }
            t.join().unwrap();
            assert!(saw, "gave up before the flag was set");
        });
        assert_eq!(kind, Some(FailureKind::Panic));
    }
}

#[test]
fn the_lost_wakeup_behind_a_spin_then_park_is_found() {
    // An event: the waiter spins a little, then parks. The notifier sets
    // the flag and unparks only if the waiter announced itself; the waiter
    // announces itself *after* checking the flag, so the wakeup can be lost
    // (the fix is to announce, then re-check). Finding it takes the spin's
    // give-up path while the notifier could still run.
    let kind = everywhere(|| {
        let flag = Arc::new(AtomicBool::new(false));
        let waiting = Arc::new(AtomicBool::new(false));
        let (f, w) = (flag.clone(), waiting.clone());
        let waiter = thread::current();
        let notifier = thread::spawn(move || {
            f.store(true, SeqCst);
            if w.load(SeqCst) {
                waiter.unpark();
            }
        });
        let mut ready = false;
        for _ in 0..2 {
            if flag.load(SeqCst) {
                ready = true;
                break;
            }
            spin_loop();
        }
        if !ready && !flag.load(SeqCst) {
            waiting.store(true, SeqCst);
            thread::park();
        }
        notifier.join().unwrap();
    });
    assert_eq!(kind, Some(FailureKind::Deadlock));
}

#[test]
fn a_spin_over_a_mutex_ends_with_and_without_peeking() {
    let model = || {
        let ready = Arc::new(Mutex::new(false));
        let r = ready.clone();
        let t = thread::spawn(move || *r.lock().unwrap() = true);
        while !*ready.lock().unwrap() {
            thread::yield_now();
        }
        t.join().unwrap();
    };
    assert_eq!(everywhere(model), None);
    optimal(model);
    // The writer's section before the first read, after it, or after the
    // second: the state at the first yield may still differ from later ones
    // (what the code before the loop left in registers), so the wait can
    // start one iteration late.
    for peeking in [false, true] {
        let report = Builder::new().peeking(peeking).explore(model);
        assert!(report.executions() <= 4, "peeking {peeking}: {report}");
    }
}

#[test]
fn a_loop_that_writes_what_its_lock_guards_is_not_a_spin() {
    // Without peeking the writes through the guard are no events; they
    // still make each iteration new, so the loop runs to its end.
    assert_eq!(
        everywhere(|| {
            let m = Mutex::new(0);
            loop {
                let mut g = m.lock().unwrap();
                *g += 1;
                if *g > 3 {
                    break;
                }
                drop(g);
                thread::yield_now();
            }
        }),
        None
    );
}

/// A thread sets a flag; main runs `iteration` and yields until it sees it.
fn spin_until_set(mut iteration: impl FnMut()) {
    let flag = Arc::new(AtomicBool::new(false));
    let f = flag.clone();
    let t = thread::spawn(move || f.store(true, SeqCst));
    while !flag.load(SeqCst) {
        iteration();
        thread::yield_now();
    }
    t.join().unwrap();
}

kase::thread_local! {
    static THREAD_ID: std::cell::Cell<usize> = const { std::cell::Cell::new(7) };
    static TRIES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    static SCRATCH: std::cell::RefCell<Option<Box<u64>>> = const { std::cell::RefCell::new(None) };
}

#[test]
fn a_spin_that_reads_a_thread_local_still_waits() {
    // A thread id read in every iteration (as sharded-slab's `insert`
    // does) changes nothing: the spin waits for the flag under the
    // reduction, in as many executions as without the read.
    let spin = |read_local: bool| {
        optimal(move || {
            spin_until_set(|| {
                if read_local {
                    assert_eq!(THREAD_ID.with(|id| id.get()), 7);
                }
            })
        })
    };
    let (with_local, without) = (spin(true), spin(false));
    assert!(with_local.failure().is_none(), "{with_local}");
    assert!(with_local.reduction(), "{with_local}");
    assert_eq!(with_local.executions(), without.executions());
}

#[test]
fn a_spin_that_reallocates_a_thread_local_box_is_explored_deterministically() {
    // The box's address is held in place. Freed just before the next box
    // is made, with no kase code in between, its block comes back (glibc's
    // per-thread cache is last in, first out), so the spin repeats its
    // state within an execution. Across executions kase's own allocations
    // differ, and with them the address: the first answer after a thread
    // history is kept, so no replay diverges. (Made before the old box is
    // freed, the box would take whatever block kase freed last: a new
    // address each iteration in some builds, a state that never repeats,
    // and a loop run to `max_steps` like any loop whose state changes.)
    assert_eq!(
        everywhere(|| spin_until_set(|| {
            SCRATCH.with(|s| {
                let mut s = s.borrow_mut();
                *s = None;
                *s = Some(Box::new(1));
            });
        })),
        None
    );
}

#[test]
fn a_retry_budget_kept_in_a_thread_local_is_not_a_spin() {
    // The count lives only in the thread-local (nothing on the stack
    // changes between yields): each `with` that changes it ends the
    // cycle, so the give-up path is explored.
    let gave_up = std::sync::Mutex::new(BTreeSet::new());
    let report = Builder::new().explore(|| {
        let flag = Arc::new(AtomicBool::new(false));
        let f = flag.clone();
        let t = thread::spawn(move || f.store(true, SeqCst));
        TRIES.with(|n| n.set(0));
        let mut given_up = false;
        while !flag.load(SeqCst) {
            if TRIES.with(|n| {
                n.set(n.get() + 1);
                n.get() == 3
            }) {
                given_up = true;
                break;
            }
            thread::yield_now();
        }
        gave_up.lock().unwrap().insert(given_up);
        t.join().unwrap();
    });
    assert!(report.failure().is_none(), "{report}");
    assert_eq!(
        gave_up.into_inner().unwrap(),
        BTreeSet::from([false, true]),
        "{report}"
    );
}

#[test]
fn a_spin_nobody_can_end_is_reported_at_once_naming_what_it_waits_for() {
    // Two atomics per iteration: the yield waits for either to change, and
    // nothing else can run.
    let report = Builder::new().max_steps(1_000_000).explore(|| {
        let (a, b) = (AtomicUsize::new(0), AtomicUsize::new(0));
        while a.load(SeqCst) + b.load(SeqCst) == 0 {
            thread::yield_now();
        }
    });
    let failure = report.failure().expect("the spin never ends");
    assert_eq!(failure.kind(), FailureKind::Deadlock, "{failure}");
    let text = failure.to_string();
    assert!(text.contains("main spins at"), "{text}");
    assert!(
        text.contains("atomic#") && text.contains(" or atomic#"),
        "{text}"
    );
    assert!(failure.steps() < 20, "{failure}");

    // A loop that reads nothing at all can never end either.
    let report = Builder::new().explore(|| loop {
        thread::yield_now();
    });
    let failure = report.failure().expect("the loop never ends");
    assert_eq!(failure.kind(), FailureKind::Deadlock, "{failure}");
    assert!(
        failure.to_string().contains("it never leaves its loop"),
        "{failure}"
    );
}

#[test]
fn a_spin_that_allocates_in_each_iteration_still_ends() {
    // A fresh buffer per iteration: its address, left in a stack slot, is
    // part of the state the spin rule compares, and the allocator may hand
    // back another block while kase's own allocations come between. The
    // rule then waits an iteration or two later (so counts may differ
    // between explorations), but each exploration decides alike whenever
    // it replays a history (no nondeterminism), and every one completes.
    assert_eq!(
        everywhere(|| spin_until_set(|| {
            let buffer = vec![0u8; 64];
            std::hint::black_box(&buffer);
        })),
        None
    );
}

/// A writer stores `a`, then `b`; main spins reading both until it sees
/// `b`. Each iteration reads two atomics, so the spin waits until either
/// changes (under sequential consistency).
fn spin_over_two_atomics() {
    let (a, b) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (a1, b1) = (a.clone(), b.clone());
    let t = thread::spawn(move || {
        a1.store(1, SeqCst);
        b1.store(1, SeqCst);
    });
    let seen_a = loop {
        let seen_a = a.load(SeqCst);
        if b.load(SeqCst) == 1 {
            break seen_a;
        }
        thread::yield_now();
    };
    // `a` was stored first, but main may have read it just before.
    assert!(seen_a <= 1);
    t.join().unwrap();
}

#[test]
fn a_spin_over_several_atomics_waits_for_any_of_them_to_change() {
    // Before, the spinner (the thread running) went on spinning: a false
    // livelock at max_steps in the first execution of every explorer.
    let exhaustive = Builder::new()
        .strategy(Strategy::Exhaustive)
        .explore(spin_over_two_atomics);
    assert!(
        exhaustive.complete() && exhaustive.failure().is_none(),
        "{exhaustive}"
    );
    let bounded = bounded(2).explore(spin_over_two_atomics);
    assert!(
        bounded.complete_within_bound() && bounded.failure().is_none(),
        "{bounded:?}"
    );
    // The unfolding orders an event after one object's writes: POR gives
    // the model to the exhaustive search, says so, and counts what it
    // discarded.
    let por = Builder::new().explore(spin_over_two_atomics);
    assert!(por.complete() && por.failure().is_none(), "{por}");
    assert!(!por.reduction(), "{por}");
    assert!(
        por.warnings().iter().any(|w| w
            .contains("the partial-order reduction does not take this model (main spins at")
            && w.contains("waiting for any of atomic#")),
        "{:?}",
        por.warnings()
    );
    assert_eq!(
        por.executions() - por.discarded_executions(),
        exhaustive.executions()
    );
    assert_eq!(por.traces(), exhaustive.traces());
}

/// A bounded queue of `usize`s in the style of crossbeam's `ArrayQueue`
/// (Vyukov's): each slot's stamp says whether it is full for this lap. A
/// pop that finds its slot's stamp not yet written while `tail` moved
/// past it spins: the pusher is between its CAS and its stamp store.
struct StampedQueue {
    head: AtomicUsize,
    tail: AtomicUsize,
    slots: Vec<(AtomicUsize, AtomicUsize)>,
    one_lap: usize,
}

impl StampedQueue {
    fn new(capacity: usize) -> Self {
        StampedQueue {
            head: AtomicUsize::new(0),
            tail: AtomicUsize::new(0),
            slots: (0..capacity)
                .map(|i| (AtomicUsize::new(i), AtomicUsize::new(0)))
                .collect(),
            one_lap: (capacity + 1).next_power_of_two(),
        }
    }

    /// Where position `at` goes next: the next slot, or the next lap.
    fn after(&self, at: usize) -> usize {
        let (index, lap) = (at & (self.one_lap - 1), at & !(self.one_lap - 1));
        if index + 1 < self.slots.len() {
            at + 1
        } else {
            lap.wrapping_add(self.one_lap)
        }
    }

    fn push(&self, value: usize) -> Result<(), usize> {
        loop {
            let tail = self.tail.load(SeqCst);
            let (stamp, data) = &self.slots[tail & (self.one_lap - 1)];
            let seen = stamp.load(SeqCst);
            if seen == tail {
                if self
                    .tail
                    .compare_exchange(tail, self.after(tail), SeqCst, SeqCst)
                    .is_ok()
                {
                    data.store(value, SeqCst);
                    stamp.store(tail + 1, SeqCst);
                    return Ok(());
                }
            } else if seen.wrapping_add(self.one_lap) == tail + 1 {
                if self.head.load(SeqCst).wrapping_add(self.one_lap) == tail {
                    return Err(value); // full
                }
                thread::yield_now();
            } else {
                thread::yield_now();
            }
        }
    }

    fn pop(&self) -> Option<usize> {
        loop {
            let head = self.head.load(SeqCst);
            let (stamp, data) = &self.slots[head & (self.one_lap - 1)];
            let seen = stamp.load(SeqCst);
            if head + 1 == seen {
                if self
                    .head
                    .compare_exchange(head, self.after(head), SeqCst, SeqCst)
                    .is_ok()
                {
                    let value = data.load(SeqCst);
                    stamp.store(head.wrapping_add(self.one_lap), SeqCst);
                    return Some(value);
                }
            } else if seen == head {
                if self.tail.load(SeqCst) == head {
                    return None; // empty
                }
                // A push took the slot and has not stamped it yet.
                thread::yield_now();
            } else {
                thread::yield_now();
            }
        }
    }
}

/// One producer pushes 0..n, one consumer pops n values, each retrying
/// with a yield: every value arrives, in order.
fn spsc(capacity: usize, n: usize) {
    let q = Arc::new(StampedQueue::new(capacity));
    let producer = q.clone();
    let t = thread::spawn(move || {
        for i in 0..n {
            while producer.push(i).is_err() {
                thread::yield_now();
            }
        }
    });
    for i in 0..n {
        let got = loop {
            if let Some(v) = q.pop() {
                break v;
            }
            thread::yield_now();
        };
        assert_eq!(got, i);
    }
    t.join().unwrap();
}

#[test]
fn a_bounded_queues_spinning_pop_completes_within_a_preemption_bound() {
    // concurrent-queue's `Bounded::pop` spins over the slot's stamp, head
    // and tail while a push is between its CAS and its stamp store: it
    // used to end as a false livelock at max_steps.
    for (capacity, n) in [(1, 2), (2, 3)] {
        let report = Builder::new()
            .preemption_bound(2)
            .explore(|| spsc(capacity, n));
        assert!(
            report.complete_within_bound() && report.failure().is_none(),
            "bounded({capacity}) × {n}: {report}"
        );
    }
}

const EMPTY: usize = 0;
const RECEIVING: usize = 1;
const MESSAGE: usize = 2;

/// A receiver polling like a future with a no-op waker (oneshot's
/// `*_poll_to_completion`): each poll takes its registration back and
/// registers again (two writes that restore the state), then spins; the
/// sender swaps the message in. Returns what the sender saw and how many
/// polls saw the message.
fn poll_to_completion(order: kase::sync::atomic::Ordering) -> (usize, usize) {
    use kase::sync::atomic::Ordering::{Acquire, Relaxed};
    let state = Arc::new(AtomicUsize::new(RECEIVING));
    let s = state.clone();
    let sender = thread::spawn(move || s.swap(MESSAGE, order));
    let mut polls_with_message = 0;
    loop {
        match state.compare_exchange(RECEIVING, EMPTY, Acquire, Relaxed) {
            Ok(_) => {
                // Re-register; the sender may have come in between.
                if state
                    .compare_exchange(EMPTY, RECEIVING, Acquire, Relaxed)
                    .is_err()
                {
                    polls_with_message += 1;
                    break;
                }
            }
            Err(_) => {
                polls_with_message += 1;
                break;
            }
        }
        spin_loop();
    }
    (sender.join().unwrap(), polls_with_message)
}

fn outcomes(
    builder: Builder,
    order: kase::sync::atomic::Ordering,
) -> (Report, Vec<(usize, usize)>) {
    let seen = std::sync::Mutex::new(std::collections::BTreeSet::new());
    let report = builder.explore(|| {
        let outcome = poll_to_completion(order);
        seen.lock().unwrap().insert(outcome);
    });
    (report, seen.into_inner().unwrap().into_iter().collect())
}

#[test]
fn a_poll_loop_that_writes_back_what_it_read_waits_for_the_sender() {
    // Two polls alone that change nothing make the third wait for another
    // thread, so no execution polls until `max_steps`; the sender seeing
    // the poll between its two writes (EMPTY) is still explored.
    use kase::sync::atomic::Ordering::{Relaxed, SeqCst};
    let expected = vec![(EMPTY, 1), (RECEIVING, 1)];
    for (order, model) in [
        (SeqCst, kase::MemoryModel::SequentiallyConsistent),
        (Relaxed, kase::MemoryModel::Rc11),
    ] {
        for strategy in [Strategy::Exhaustive, Strategy::Por] {
            let builder = Builder::new().memory_model(model).strategy(strategy);
            let (report, seen) = outcomes(builder, order);
            assert!(
                report.failure().is_none() && report.complete(),
                "{model:?} {strategy:?}: {report}"
            );
            assert_eq!(seen, expected, "{model:?} {strategy:?}");
        }
        let bounded = Builder::new().memory_model(model).preemption_bound(1);
        let (report, seen) = outcomes(bounded, order);
        assert!(report.failure().is_none(), "{model:?} bounded: {report}");
        assert_eq!(seen, expected, "{model:?} bounded");
    }
}

#[test]
fn a_poll_loop_no_other_thread_can_end_is_a_spin_without_progress() {
    let report = Builder::new().explore(|| {
        let state = AtomicUsize::new(RECEIVING);
        while state
            .compare_exchange(RECEIVING, EMPTY, SeqCst, SeqCst)
            .is_ok()
        {
            state.store(RECEIVING, SeqCst);
            spin_loop();
        }
    });
    let failure = report.failure().expect("the loop never ends");
    assert_eq!(failure.kind(), FailureKind::Deadlock);
    let text = failure.to_string();
    assert!(
        text.contains("ran alone and wrote back what they read"),
        "{text}"
    );
}

#[test]
fn the_bounded_reduction_takes_a_spin_over_several_atomics() {
    // Which value of `a` main saw when it left the spin, under the bounded
    // reduction (no fallback) and the bounded oracle, bounds 0–2: the same.
    let seen = |builder: Builder| {
        let outcomes = std::sync::Mutex::new(std::collections::BTreeSet::new());
        let report = builder.explore(|| {
            let (a, b) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
            let (a1, b1) = (a.clone(), b.clone());
            let t = thread::spawn(move || {
                a1.store(1, SeqCst);
                b1.store(1, SeqCst);
            });
            let seen_a = loop {
                let seen_a = a.load(SeqCst);
                if b.load(SeqCst) == 1 {
                    break seen_a;
                }
                thread::yield_now();
            };
            outcomes.lock().unwrap().insert(seen_a);
            t.join().unwrap();
        });
        assert!(
            report.failure().is_none() && report.complete_within_bound(),
            "{report}"
        );
        (report, outcomes.into_inner().unwrap())
    };
    for bound in 0..=2 {
        let (reduced, reduced_seen) = seen(bounded(bound));
        let (oracle, oracle_seen) = seen(
            Builder::new()
                .strategy(Strategy::Exhaustive)
                .preemption_bound(bound),
        );
        let gave_up = reduced
            .warnings()
            .iter()
            .any(|w| w.contains("does not take this model"));
        assert!(reduced.reduction() && !gave_up, "{reduced:?}");
        assert_eq!(reduced_seen, oracle_seen, "bound {bound}");
        assert!(reduced.executions() <= oracle.executions(), "bound {bound}");
    }
}

#[test]
fn the_bounded_reduction_takes_a_spin_that_waits_for_another_thread() {
    // The poll loop's iterations write back what they read, so its third
    // poll waits for the sender to run (`exec/spin/alone.rs`): the bounded
    // reduction then orders yields with every step and keeps the model,
    // with the bounded oracle's outcomes in no more executions.
    use kase::sync::atomic::Ordering::{Relaxed, SeqCst};
    for (order, model) in [
        (SeqCst, kase::MemoryModel::SequentiallyConsistent),
        (Relaxed, kase::MemoryModel::Rc11),
    ] {
        for bound in 0..=3 {
            let builder = bounded(bound).memory_model(model);
            let (reduced, reduced_seen) = outcomes(builder.clone(), order);
            let (oracle, oracle_seen) = outcomes(builder.strategy(Strategy::Exhaustive), order);
            let context = format!("{model:?}, bound {bound}: {reduced}");
            assert!(reduced.failure().is_none(), "{context}");
            assert!(reduced.reduction(), "no fallback to the oracle; {context}");
            assert!(
                reduced
                    .warnings()
                    .iter()
                    .any(|w| w.contains("now orders every yield")),
                "{context}"
            );
            assert_eq!(reduced_seen, oracle_seen, "{context}");
            let explored = reduced.executions() - reduced.discarded_executions();
            assert!(explored <= oracle.executions(), "{context} / {oracle}");
        }
    }
}

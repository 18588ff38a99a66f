//! The unfolding and the explorer on small examples ([QPOR, …] is *Quasi-Optimal
//! Partial Order Reduction*, Nguyen, Rodríguez, Sousa, Coti and Petrucci,
//! CAV 2018): the relations of
//! [QPOR, §2] (`≤`, `#`, `ex`/`en`/`cex`) built event by event with
//! [`Unfolding::intern`], `cexp` through one real execution, and the number
//! of executions against the exhaustive oracle's count of traces, including
//! the program of [QPOR, Fig. 1] (2n traces for n writers).

use std::sync::atomic::Ordering::SeqCst;

use super::unfolding::{EventId, Unfolding};
use super::{Alternatives, Por};
use crate::exec::{ObjectKind, OpKind, ThreadIdx};
use crate::explore::{Explorer, Runner, Trail};
use crate::sync::atomic::AtomicUsize;
use crate::sync::{Arc, Mutex};
use crate::{thread, Builder, Strategy};

const T0: ThreadIdx = ThreadIdx(0);
const T1: ThreadIdx = ThreadIdx(1);
const T2: ThreadIdx = ThreadIdx(2);

/// A fresh name in `u` for an object of `kind`.
fn object(u: &mut Unfolding, kind: ObjectKind) -> super::names::Name {
    let name = u.names.fresh();
    u.set_kind(name, kind);
    name
}

/// Whether `events` is a configuration: causally closed and conflict-free.
fn is_configuration(u: &Unfolding, events: &[EventId]) -> bool {
    let closed = u
        .closure(events.iter().copied(), |_| false)
        .iter()
        .all(|e| events.contains(e));
    let free = events
        .iter()
        .all(|&a| events.iter().all(|&b| a == b || !u.conflict(a, b)));
    closed && free
}

/// `ex(C)`, `en(C)`, `cex(C)` restricted to `candidates` ([QPOR, §2]):
/// extensions have their strict history in `C`; the enabled ones also
/// extend it to a configuration.
fn extensions(
    u: &Unfolding,
    c: &[EventId],
    candidates: &[EventId],
) -> (Vec<EventId>, Vec<EventId>, Vec<EventId>) {
    let ex: Vec<EventId> = candidates
        .iter()
        .copied()
        .filter(|&e| {
            !c.contains(&e)
                && u.closure([e], |_| false)
                    .iter()
                    .all(|&h| h == e || c.contains(&h))
        })
        .collect();
    let (en, cex) = ex
        .iter()
        .partition(|&&e| c.iter().all(|&x| !u.conflict(e, x)));
    (ex, en, cex)
}

#[test]
fn two_writers_on_one_location() {
    // T1 and T2 store to x: each store may come first.
    let mut u = Unfolding::default();
    let x = object(&mut u, ObjectKind::Atomic);
    let (a, _) = u.intern(T1, OpKind::Store, Some(x), None, &[], &[]);
    let (b, _) = u.intern(T2, OpKind::Store, Some(x), None, &[], &[]);
    let (b_after_a, _) = u.intern(T2, OpKind::Store, Some(x), None, &[a], &[]);
    let (a_after_b, _) = u.intern(T1, OpKind::Store, Some(x), None, &[b], &[]);

    // An event is identified by its key: interning it again finds it.
    assert_eq!(
        u.intern(T2, OpKind::Store, Some(x), None, &[a], &[]),
        (b_after_a, false)
    );
    assert_eq!(u.len(), 4);

    // Causality: an event's object predecessor is in its history.
    assert!(u.leq(a, b_after_a) && u.leq(a, a) && !u.leq(b_after_a, a));
    assert!(!u.leq(a, b) && !u.leq(b, a));
    // Two first writes are in immediate conflict: neither's strict history
    // conflicts with the other.
    assert!(u.immediate_conflict(a, b));
    // Conflict is inherited along causality: b # b_after_a (one thread,
    // the thread tree branches) and b_after_a # a_after_b, but only
    // because a ≤ b_after_a and a # b: not immediately.
    assert!(u.conflict(b, b_after_a) && !u.immediate_conflict(b, b_after_a));
    assert!(u.conflict(a, a_after_b) && !u.immediate_conflict(a, a_after_b));
    assert!(u.conflict(b_after_a, a_after_b));
    assert!(!u.immediate_conflict(b_after_a, a_after_b));
    assert!(!u.conflict(a, b_after_a));

    // Two maximal configurations: the two traces.
    assert!(is_configuration(&u, &[a, b_after_a]));
    assert!(is_configuration(&u, &[b, a_after_b]));
    assert!(!is_configuration(&u, &[a, b]));
    assert!(!is_configuration(&u, &[b_after_a]));

    // ex({a}) = {b, b_after_a}, en = {b_after_a}, cex = {b}.
    let all = [a, b, b_after_a, a_after_b];
    let (ex, en, cex) = extensions(&u, &[a], &all);
    assert_eq!(
        (ex, en, cex),
        (vec![b, b_after_a], vec![b_after_a], vec![b])
    );
}

#[test]
fn a_reader_and_two_writers() {
    // T0 loads x; T1 and T2 store to it.
    let mut u = Unfolding::default();
    let x = object(&mut u, ObjectKind::Atomic);
    let (r_init, _) = u.intern(T0, OpKind::Load, Some(x), None, &[], &[]);
    let (w1, _) = u.intern(T1, OpKind::Store, Some(x), None, &[], &[]);
    let (w1_after_r, _) = u.intern(T1, OpKind::Store, Some(x), None, &[r_init], &[]);
    let (r_w1, _) = u.intern(T0, OpKind::Load, Some(x), None, &[w1], &[]);
    let (w2_after_w1, _) = u.intern(T2, OpKind::Store, Some(x), None, &[w1], &[]);
    let (w2_after_r_w1, _) = u.intern(T2, OpKind::Store, Some(x), None, &[r_w1], &[]);

    // A read reads from its object predecessor; a write after reads has
    // them all in its history.
    assert_eq!(u.reads_from(r_w1), Some(w1));
    assert_eq!(u.reads_from(r_init), None);
    assert!(u.leq(w1, r_w1) && u.leq(r_w1, w2_after_r_w1) && u.leq(w1, w2_after_r_w1));
    assert!(u.leq(r_init, w1_after_r));

    // Reading the initial value conflicts with a write not after the read.
    assert!(u.immediate_conflict(r_init, w1));
    assert!(!u.conflict(r_init, w1_after_r));
    // Two reads of one thread after the same predecessor conflict, through
    // w1 (r_init # w1 ≤ r_w1).
    assert!(u.conflict(r_init, r_w1) && !u.immediate_conflict(r_init, r_w1));
    // A write after w1 that did not see the read of w1 is placed before the
    // read: the read can no longer read w1 (frontier rule of POR-DESIGN.md).
    assert!(u.immediate_conflict(r_w1, w2_after_w1));
    assert!(!u.conflict(r_w1, w2_after_r_w1));
    // Writes after the same write conflict (here through the read).
    assert!(u.conflict(w2_after_w1, w2_after_r_w1));
    assert!(is_configuration(&u, &[w1, r_w1, w2_after_r_w1]));
    assert!(!is_configuration(&u, &[w1, r_w1, w2_after_w1]));

    // The neighbours of an event hold all its immediate conflicts.
    let all = [r_init, w1, w1_after_r, r_w1, w2_after_w1, w2_after_r_w1];
    for &e in &all {
        for &f in &all {
            if u.immediate_conflict(e, f) {
                assert!(u.neighbours(e).any(|n| n == f), "{e} # {f}");
            }
        }
    }
}

#[test]
fn conflicting_extension_of_a_lock_as_in_the_paper() {
    // [QPOR, Fig. 2] in kase's terms: T0 does something independent (a
    // store to its own y, event 1), then locks m (2); T1 locks m (8), then
    // stores z (9); T2 stores w (15). The paper's ex({1, 8}) = {2, 9, 15},
    // en({1, 8}) = {9, 15}, cex({1, 8}) = {2}.
    let mut u = Unfolding::default();
    let [y, z, w] = [(); 3].map(|()| object(&mut u, ObjectKind::Atomic));
    let m = object(&mut u, ObjectKind::Mutex);
    let (e1, _) = u.intern(T0, OpKind::Store, Some(y), None, &[], &[]);
    let (e2, _) = u.intern(T0, OpKind::Lock, Some(m), Some(e1), &[], &[]);
    let (e8, _) = u.intern(T1, OpKind::Lock, Some(m), None, &[], &[]);
    let (e9, _) = u.intern(T1, OpKind::Store, Some(z), Some(e8), &[], &[]);
    let (e15, _) = u.intern(T2, OpKind::Store, Some(w), None, &[], &[]);
    assert!(u.immediate_conflict(e2, e8));
    assert!(u.leq(e1, e2) && u.leq(e8, e9));
    assert!(!u.conflict(e1, e8) && !u.conflict(e15, e8) && !u.conflict(e2, e15));
    let (ex, en, cex) = extensions(&u, &[e1, e8], &[e1, e2, e8, e9, e15]);
    assert_eq!(ex, vec![e2, e9, e15]);
    assert_eq!(en, vec![e9, e15]);
    assert_eq!(cex, vec![e2]);
}

#[test]
fn cexp_adds_the_other_order_of_two_writers() {
    // One real execution of two writers, taken into `U` with its
    // conflicting extensions (line 4 of Algorithm 1): the second store is
    // re-placed before the first, in immediate conflict with it.
    let settings = Builder::new().settings;
    let model = || {
        let x = Arc::new(AtomicUsize::new(0));
        let handles: Vec<_> = (1..=2)
            .map(|v| {
                let x = x.clone();
                thread::spawn(move || x.store(v, SeqCst))
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
    };
    let trail = Trail::default();
    let mut runner = Runner::new(&settings, &model, &trail);
    let mut por = Por::new(Alternatives::Optimal);
    let outcome = runner.execute(&mut por);
    por.absorb(&outcome).expect("deterministic");
    runner.reclaim(outcome);

    let u = &por.u;
    let stores: Vec<EventId> = u
        .ids()
        .filter(|&e| u.get(e).kind == OpKind::Store)
        .collect();
    let ran: Vec<EventId> = por
        .run
        .config
        .iter()
        .copied()
        .filter(|e| stores.contains(e))
        .collect();
    let [first, second] = ran[..] else {
        panic!("two stores ran: {ran:?}")
    };
    assert!(u.leq(first, second));
    let placed: Vec<EventId> = stores
        .iter()
        .copied()
        .filter(|e| !ran.contains(e))
        .collect();
    let [before] = placed[..] else {
        panic!("one store re-placed: {placed:?}")
    };
    assert_eq!(u.get(before).thread, u.get(second).thread);
    assert!(u.immediate_conflict(before, first));
    // ... and in conflict, not immediately, with the store that ran after
    // the first (it has the first in its history).
    assert!(u.conflict(before, second) && !u.immediate_conflict(before, second));
    // It extends C minus the first store's successors: ex, not en.
    assert!(u.get(before).obj_preds().is_empty());
}

/// A model that never starts a thread has one execution, which the
/// explorer takes without building `U`: the same verdict and the same
/// peak of events as with the unfolding built (`Por::solo`), and with it
/// the first spawn brings the held-back events in (the rest of this file's
/// models, and every differential test, spawn after main's own events).
#[test]
fn a_model_on_one_thread_is_one_execution_without_an_unfolding() {
    let settings = Builder::new().settings;
    let model = || {
        let x = Arc::new(AtomicUsize::new(0));
        let m = Mutex::new(0);
        for i in 0..3 {
            x.fetch_add(i, SeqCst);
            *m.lock().unwrap() += x.load(SeqCst);
        }
        thread::yield_now();
        assert_eq!(*m.lock().unwrap(), 4);
    };
    let trail = Trail::default();
    let mut runner = Runner::new(&settings, &model, &trail);
    let mut solo = Por::new(Alternatives::Optimal);
    let outcome = runner.execute(&mut solo);
    assert!(outcome.fault.is_none());
    assert_eq!(solo.advance(&outcome), Ok(false));
    assert_eq!(solo.u.len(), 0, "no event was interned");
    runner.reclaim(outcome);

    let mut built = Por::new(Alternatives::Optimal);
    built.solo = None;
    let outcome = runner.execute(&mut built);
    assert_eq!(built.advance(&outcome), Ok(false));
    assert!(built.u.len() > 10, "{} events", built.u.len());
    assert_eq!(solo.peak_events(), built.peak_events());
    assert_eq!(solo.run.chosen, built.run.chosen);
}

/// A deadline that passes while the explorer computes the next alternative
/// stops it there: `advance` says "no more" and `interrupted` says why (the
/// exploration is then reported incomplete, `explore/search.rs`).
#[test]
fn a_passed_deadline_interrupts_the_search_for_alternatives() {
    let settings = Builder::new().settings;
    let model = || {
        let x = Arc::new(AtomicUsize::new(0));
        let y = x.clone();
        let t = thread::spawn(move || y.store(1, SeqCst));
        x.store(2, SeqCst);
        t.join().unwrap();
    };
    let trail = Trail::default();
    let mut runner = Runner::new(&settings, &model, &trail);
    let mut por = Por::new(Alternatives::Optimal);
    let outcome = runner.execute(&mut por);
    let mut without = Por::new(Alternatives::Optimal);
    let again = runner.execute(&mut without);
    assert_eq!(without.advance(&again), Ok(true), "the other order is left");
    assert!(!without.interrupted());
    por.set_deadline(Some(std::time::Instant::now()));
    assert_eq!(por.advance(&outcome), Ok(false));
    assert!(por.interrupted());
}

/// `immediate_conflict` tries cheap refutations before whole conflict
/// checks: on every pair of events of the unfoldings a real exploration
/// builds (locks, loads, stores, peeking off and on), its answer is the
/// definition's: `a # b`, and no predecessor of either conflicts with the
/// other.
#[test]
fn immediate_conflict_is_the_definitions_on_every_pair() {
    let model = || {
        let m = Arc::new(Mutex::new(0));
        let x = Arc::new(AtomicUsize::new(0));
        let handles: Vec<_> = (1..=2)
            .map(|v| {
                let (m, x) = (m.clone(), x.clone());
                thread::spawn(move || {
                    *m.lock().unwrap() += v;
                    x.store(v, SeqCst);
                })
            })
            .collect();
        if x.load(SeqCst) == 0 {
            *m.lock().unwrap() += 10;
        }
        for h in handles {
            h.join().unwrap();
        }
    };
    for peeking in [false, true] {
        let settings = Builder::new().peeking(peeking).settings;
        let trail = Trail::default();
        let mut runner = Runner::new(&settings, &model, &trail);
        let mut por = Por::new(Alternatives::Optimal);
        let mut pairs = 0;
        loop {
            let outcome = runner.execute(&mut por);
            let more = por.advance(&outcome).expect("deterministic");
            runner.reclaim(outcome);
            let u = &por.u;
            let preds = |e: EventId| {
                let ev = u.get(e);
                let mut p: Vec<EventId> = ev.pred.into_iter().collect();
                p.extend(ev.obj_preds());
                p.extend(ev.extra());
                p
            };
            let ids: Vec<EventId> = u.ids().collect();
            for &a in &ids {
                for &b in &ids {
                    let definition = u.conflict(a, b)
                        && preds(a).iter().all(|&p| !u.conflict(p, b))
                        && preds(b).iter().all(|&q| !u.conflict(a, q));
                    assert_eq!(u.immediate_conflict(a, b), definition, "{a} #i {b}");
                    pairs += 1;
                }
            }
            if !more {
                break;
            }
        }
        assert!(pairs > 1000, "checked {pairs} pairs (peeking {peeking})");
    }
}

/// Executions of `model` by POR with `alternatives`, and how many of them
/// were sleep-set blocked.
fn por(alternatives: Alternatives, model: impl Fn() + Sync) -> (u64, u64) {
    let report = Builder::new().alternatives(alternatives).explore(model);
    assert!(report.complete());
    (report.executions(), report.sleep_set_blocked())
}

/// The Mazurkiewicz traces of `model`, as the exhaustive oracle counts them.
fn traces(model: impl Fn() + Sync) -> u64 {
    let report = Builder::new().strategy(Strategy::Exhaustive).explore(model);
    assert!(report.complete());
    report.traces().expect("the oracle counts traces")
}

fn two_writers() {
    let x = Arc::new(AtomicUsize::new(0));
    let x2 = x.clone();
    let t = thread::spawn(move || x2.store(1, SeqCst));
    x.store(2, SeqCst);
    t.join().unwrap();
}

fn reader_and_two_writers() {
    let x = Arc::new(AtomicUsize::new(0));
    let writers: Vec<_> = (1..=2)
        .map(|v| {
            let x = x.clone();
            thread::spawn(move || x.store(v, SeqCst))
        })
        .collect();
    let _ = x.load(SeqCst);
    for w in writers {
        w.join().unwrap();
    }
}

/// [QPOR, Fig. 1(a)]: writers `w_i` each store to their own `x_i`; `count`
/// increments `c` n − 1 times; the master (main) reads `c` into `i` and
/// stores to `x_i`. The read has n places among the increments, and the
/// master's store races with exactly one writer: 2n traces. [QPOR, §1]
/// shows source-set DPOR exploring O(2ⁿ) executions of it and 2-partial
/// alternatives being optimal (each race is coupled with at most one
/// other).
fn fig1(n: usize) {
    let xs: Arc<Vec<AtomicUsize>> = Arc::new((0..n).map(|_| AtomicUsize::new(0)).collect());
    let c = Arc::new(AtomicUsize::new(0));
    let mut threads: Vec<_> = (0..n)
        .map(|i| {
            let xs = xs.clone();
            thread::spawn(move || xs[i].store(7 + i, SeqCst))
        })
        .collect();
    let c2 = c.clone();
    threads.push(thread::spawn(move || {
        for _ in 1..n {
            c2.fetch_add(1, SeqCst);
        }
    }));
    let i = c.load(SeqCst);
    xs[i].store(0, SeqCst);
    for t in threads {
        t.join().unwrap();
    }
}

/// The same with a mutex around every access ([QPOR, §2]: "Fig. 1(a) can be
/// trivially modified" to synchronise with mutexes only).
fn fig1_with_mutexes(n: usize) {
    let xs: Arc<Vec<Mutex<usize>>> = Arc::new((0..n).map(|_| Mutex::new(0)).collect());
    let c = Arc::new(Mutex::new(0usize));
    let mut threads: Vec<_> = (0..n)
        .map(|i| {
            let xs = xs.clone();
            thread::spawn(move || *xs[i].lock().unwrap() = 7 + i)
        })
        .collect();
    let c2 = c.clone();
    threads.push(thread::spawn(move || {
        for _ in 1..n {
            *c2.lock().unwrap() += 1;
        }
    }));
    let i = *c.lock().unwrap();
    *xs[i].lock().unwrap() = 0;
    for t in threads {
        t.join().unwrap();
    }
}

#[test]
fn one_execution_per_trace_on_small_models() {
    assert_eq!(traces(two_writers), 2);
    assert_eq!(por(Alternatives::Optimal, two_writers), (2, 0));
    assert_eq!(traces(reader_and_two_writers), 6);
    assert_eq!(por(Alternatives::Optimal, reader_and_two_writers), (6, 0));
}

#[test]
fn the_papers_figure_1_has_2n_traces() {
    // The oracle confirms the count where it is fast (it takes tens of
    // seconds from n = 3 on); the paper gives 2n.
    assert_eq!(traces(|| fig1(2)), 4);
    for n in [2, 3, 4] {
        let model = move || fig1(n);
        let traces = 2 * n as u64;
        assert_eq!(por(Alternatives::Optimal, model), (traces, 0), "n = {n}");
        assert_eq!(
            por(Alternatives::KPartial(2), model),
            (traces, 0),
            "n = {n}"
        );
        // 1-partial alternatives may add sleep-set-blocked executions,
        // never lose a trace.
        let (executions, blocked) = por(Alternatives::KPartial(1), model);
        assert_eq!(executions - blocked, traces, "n = {n}");
    }
    assert_eq!(por(Alternatives::Optimal, || fig1_with_mutexes(3)), (6, 0));
}

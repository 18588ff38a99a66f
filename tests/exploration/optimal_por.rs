//! The partial-order explorer: exactly one execution per Mazurkiewicz trace on
//! the small programs of BENCHMARKS.md (kase-bench's own code, see
//! `common/programs.rs`), checked against the exhaustive oracle.

use kase::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use kase::sync::Arc;
use kase::{thread, Alternatives, Builder, Report, Strategy};

use crate::common::models::spawn_all;
use crate::common::programs;

/// Explores `model` optimally and exhaustively; asserts both agree on
/// `traces` and that POR wasted nothing.
fn optimal<F: Fn() + Sync>(traces: u64, model: F) -> Report {
    let por = por_only(traces, &model);
    let oracle = Builder::new()
        .strategy(Strategy::Exhaustive)
        .explore(&model);
    assert_eq!(oracle.traces(), Some(traces), "oracle traces");
    por
}

/// Like [`optimal`], for models too large for the exhaustive oracle.
fn por_only<F: Fn() + Sync>(traces: u64, model: F) -> Report {
    let por = Builder::new().explore(&model);
    assert!(por.failure().is_none(), "{por}");
    assert!(por.complete());
    assert_eq!(
        por.sleep_set_blocked(),
        0,
        "optimal POR explored a redundant execution"
    );
    assert_eq!(por.executions(), traces, "POR executions");
    por
}

#[test]
fn independent_threads() {
    optimal(1, || {
        spawn_all(3, |_| {
            let own = AtomicUsize::new(0);
            own.fetch_add(1, SeqCst);
            own.fetch_add(1, SeqCst);
        })
    });
}

#[test]
fn read_only() {
    optimal(1, || programs::read_only(3, 3));
}

#[test]
fn store_buffering() {
    optimal(3, programs::store_buffering);
}

#[test]
fn message_passing() {
    optimal(2, programs::message_passing);
}

#[test]
fn two_plus_two_writes() {
    optimal(3, programs::two_plus_two_w);
}

#[test]
fn iriw() {
    optimal(15, programs::iriw);
}

#[test]
fn mutex_counters() {
    optimal(6, || programs::mutex_counter(2, 2));
    optimal(90, || programs::mutex_counter(3, 2));
}

#[test]
fn shared_fetch_add() {
    for (t, traces) in [(2, 2), (3, 6), (4, 24)] {
        optimal(traces, move || programs::shared_fetch_add(t));
    }
}

#[test]
fn readers_of_one_write() {
    for n in 1..=4u32 {
        optimal(2u64.pow(n), move || {
            let x = Arc::new(AtomicUsize::new(0));
            let x2 = x.clone();
            let readers = thread::spawn(move || {
                spawn_all(n as usize, move |_| {
                    x2.load(SeqCst);
                })
            });
            x.store(42, SeqCst);
            readers.join().unwrap();
        });
    }
}

#[test]
fn account() {
    // n depositors `t = a; a = t + 100` and one withdrawer: ((n+1)!)^2.
    for (n, traces) in [(1, 4), (2, 36)] {
        optimal(traces, move || programs::account(n));
    }
}

#[test]
fn lastzero() {
    // (n+3)·2^(n-2) traces.
    for (n, traces) in [(3, 12), (5, 64)] {
        let check = if n <= 3 {
            optimal::<Box<dyn Fn() + Sync>>
        } else {
            por_only::<Box<dyn Fn() + Sync>>
        };
        check(traces, Box::new(move || programs::lastzero(n)));
    }
}

#[test]
fn sdpor_exponential_is_linear() {
    optimal(6, || programs::sdpor_exponential(3));
    for n in [5, 7] {
        por_only(2 * n as u64, move || programs::sdpor_exponential(n));
    }
    let k1 = Builder::new()
        .alternatives(Alternatives::KPartial(1))
        .explore(|| programs::sdpor_exponential(5));
    assert!(k1.complete() && k1.failure().is_none(), "{k1}");
    assert!(k1.executions() >= 10);
}

#[test]
fn compare_exchange_is_a_write() {
    // casrot(n) with CAS counted as a write: n! traces.
    for (n, traces) in [(2, 2), (3, 6)] {
        optimal(traces, move || programs::casrot(n));
    }
}

#[test]
fn k_partial_alternatives_find_every_trace() {
    for k in 1..=3 {
        let report = Builder::new()
            .alternatives(Alternatives::KPartial(k))
            .explore(|| programs::mutex_counter(3, 2));
        assert!(
            report.complete() && report.failure().is_none(),
            "k = {k}: {report}"
        );
        assert_eq!(
            report.executions() - report.sleep_set_blocked(),
            90,
            "k = {k}"
        );
    }
}

/// `rounds` sequential races, each with two traces: 2^rounds executions.
fn sequential_races(rounds: usize) -> impl Fn() + Sync {
    move || {
        for _ in 0..rounds {
            let x = Arc::new(AtomicUsize::new(0));
            let x2 = x.clone();
            let t = thread::spawn(move || x2.store(1, SeqCst));
            x.load(SeqCst);
            t.join().unwrap();
        }
    }
}

#[test]
fn pruning_keeps_the_unfolding_proportional_to_the_branch() {
    let mut peaks = Vec::new();
    for rounds in [6, 8, 10] {
        let report = por_only(1 << rounds, sequential_races(rounds));
        peaks.push(report.peak_events().expect("POR reports its peak"));
    }
    eprintln!("peak events for 6, 8, 10 rounds: {peaks:?}");
    // 16x the executions from 6 to 10 rounds; U may grow with the depth of
    // the branch (linear in rounds) but not with the number of executions.
    assert!(peaks[2] < 4 * peaks[0], "{peaks:?}");
}

//! The partial-order explorer: exactly one execution per Mazurkiewicz trace on
//! the small programs of BENCHMARKS.md, checked against the exhaustive oracle.

use kase::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use kase::sync::{Arc, Mutex};
use kase::{thread, Alternatives, Builder, Report, Strategy};

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

fn spawn_all(n: usize, f: impl Fn(usize) + Send + Sync + Clone + 'static) {
    let handles: Vec<_> = (0..n)
        .map(|i| {
            let f = f.clone();
            thread::spawn(move || f(i))
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
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
    optimal(1, || {
        let x = Arc::new(AtomicUsize::new(0));
        spawn_all(3, move |_| {
            for _ in 0..3 {
                x.load(SeqCst);
            }
        })
    });
}

#[test]
fn store_buffering() {
    optimal(3, || {
        let x = Arc::new(AtomicUsize::new(0));
        let y = Arc::new(AtomicUsize::new(0));
        let (x1, y1) = (x.clone(), y.clone());
        let t = thread::spawn(move || {
            x1.store(1, SeqCst);
            y1.load(SeqCst)
        });
        y.store(1, SeqCst);
        x.load(SeqCst);
        t.join().unwrap();
    });
}

#[test]
fn message_passing() {
    optimal(2, || {
        let d = Arc::new(AtomicUsize::new(0));
        let f = Arc::new(AtomicUsize::new(0));
        let (d1, f1) = (d.clone(), f.clone());
        let t = thread::spawn(move || {
            d1.store(42, SeqCst);
            f1.store(1, SeqCst);
        });
        if f.load(SeqCst) == 1 {
            assert_eq!(d.load(SeqCst), 42);
        }
        t.join().unwrap();
    });
}

#[test]
fn two_plus_two_writes() {
    optimal(3, || {
        let x = Arc::new(AtomicUsize::new(0));
        let y = Arc::new(AtomicUsize::new(0));
        let (x1, y1) = (x.clone(), y.clone());
        let t = thread::spawn(move || {
            x1.store(1, SeqCst);
            y1.store(2, SeqCst);
        });
        y.store(1, SeqCst);
        x.store(2, SeqCst);
        t.join().unwrap();
    });
}

#[test]
fn iriw() {
    optimal(15, || {
        let x = Arc::new(AtomicUsize::new(0));
        let y = Arc::new(AtomicUsize::new(0));
        let (xa, ya, xb, yb, xc, yc) = (
            x.clone(),
            y.clone(),
            x.clone(),
            y.clone(),
            x.clone(),
            y.clone(),
        );
        let w1 = thread::spawn(move || xa.store(1, SeqCst));
        let w2 = thread::spawn(move || ya.store(1, SeqCst));
        let r1 = thread::spawn(move || (xb.load(SeqCst), yb.load(SeqCst)));
        let r2 = thread::spawn(move || (yc.load(SeqCst), xc.load(SeqCst)));
        for h in [w1, w2] {
            h.join().unwrap();
        }
        for h in [r1, r2] {
            h.join().unwrap();
        }
    });
}

fn mutex_counter(threads: usize, k: usize) -> impl Fn() + Sync {
    move || {
        let m = Arc::new(Mutex::new(0));
        let m2 = m.clone();
        spawn_all(threads, move |_| {
            for _ in 0..k {
                *m2.lock().unwrap() += 1;
            }
        });
        assert_eq!(*m.lock().unwrap(), threads * k);
    }
}

#[test]
fn mutex_counters() {
    optimal(6, mutex_counter(2, 2));
    optimal(90, mutex_counter(3, 2));
}

#[test]
fn shared_fetch_add() {
    for (t, traces) in [(2, 2), (3, 6), (4, 24)] {
        optimal(traces, move || {
            let x = Arc::new(AtomicUsize::new(0));
            spawn_all(t, move |_| {
                x.fetch_add(1, SeqCst);
            })
        });
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
        optimal(traces, move || {
            let a = Arc::new(AtomicUsize::new(1000));
            spawn_all(n + 1, move |i| {
                let t = a.load(SeqCst);
                a.store(if i == 0 { t - 10 } else { t + 100 }, SeqCst);
            })
        });
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
        check(
            traces,
            Box::new(move || {
                let a: Arc<Vec<AtomicUsize>> =
                    Arc::new((0..=n).map(|_| AtomicUsize::new(0)).collect());
                let reader = {
                    let a = a.clone();
                    thread::spawn(move || {
                        let mut i = n;
                        while a[i].load(SeqCst) != 0 {
                            i -= 1;
                        }
                    })
                };
                let writers: Vec<_> = (1..=n)
                    .map(|j| {
                        let a = a.clone();
                        thread::spawn(move || {
                            let v = a[j - 1].load(SeqCst);
                            a[j].store(v + 1, SeqCst);
                        })
                    })
                    .collect();
                reader.join().unwrap();
                for w in writers {
                    w.join().unwrap();
                }
            }),
        );
    }
}

fn sdpor_exponential(n: usize) -> impl Fn() + Sync {
    move || {
        let x: Arc<Vec<AtomicUsize>> = Arc::new((0..n).map(|_| AtomicUsize::new(0)).collect());
        let c = Arc::new(AtomicUsize::new(0));
        let writers: Vec<_> = (0..n)
            .map(|j| {
                let x = x.clone();
                thread::spawn(move || x[j].store(j + 7, SeqCst))
            })
            .collect();
        let counter = {
            let c = c.clone();
            thread::spawn(move || {
                for v in 1..n {
                    c.store(v, SeqCst);
                }
            })
        };
        let i = c.load(SeqCst);
        x[i].store(0, SeqCst);
        for w in writers {
            w.join().unwrap();
        }
        counter.join().unwrap();
    }
}

#[test]
fn sdpor_exponential_is_linear() {
    optimal(6, sdpor_exponential(3));
    for n in [5, 7] {
        por_only(2 * n as u64, sdpor_exponential(n));
    }
    let k1 = Builder::new()
        .alternatives(Alternatives::KPartial(1))
        .explore(sdpor_exponential(5));
    assert!(k1.complete() && k1.failure().is_none(), "{k1}");
    assert!(k1.executions() >= 10);
}

#[test]
fn compare_exchange_is_a_write() {
    // casrot(n) with CAS counted as a write: n! traces.
    for (n, traces) in [(2, 2), (3, 6)] {
        optimal(traces, move || {
            let x = Arc::new(AtomicUsize::new(0));
            spawn_all(n, move |t| {
                let _ = x.compare_exchange(t, t + 1, SeqCst, SeqCst);
            })
        });
    }
}

#[test]
fn k_partial_alternatives_find_every_trace() {
    for k in 1..=3 {
        let report = Builder::new()
            .alternatives(Alternatives::KPartial(k))
            .explore(mutex_counter(3, 2));
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

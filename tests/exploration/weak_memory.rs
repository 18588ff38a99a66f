//! Rust's memory model (RC11): the outcomes of the classic litmus tests
//! under `MemoryModel::Rc11` equal the ones RC11 allows, and the graph
//! enumeration counts each consistent execution graph once (the counts
//! GenMC reports, `WEAK-MEMORY.md`).

use std::collections::BTreeSet;
use std::fmt::Debug;

use kase::sync::atomic::{AtomicUsize, Ordering, Ordering::*};
use kase::sync::Arc;
use kase::{thread, Builder, GraphExplorer, MemoryModel, Report, Strategy};

/// Every outcome `model` returns under RC11, and the report, explored with
/// the revisit explorer (exactly one execution per graph, checked) and, unless `oracle` is
/// false (too many interleavings), by the exhaustive enumeration too, which
/// must agree on outcomes and graphs.
fn explored<T: Ord + Debug + Send>(
    model: impl Fn() -> T + Sync,
    oracle: bool,
) -> (BTreeSet<T>, Report) {
    let run = |strategy| {
        let seen = std::sync::Mutex::new(BTreeSet::new());
        let report = Builder::new()
            .memory_model(MemoryModel::Rc11)
            .strategy(strategy)
            .explore(|| {
                let outcome = model();
                seen.lock().unwrap().insert(outcome);
            });
        assert!(report.failure().is_none(), "{report:?}");
        assert!(report.complete());
        (seen.into_inner().unwrap(), report)
    };
    let (seen, report) = run(Strategy::Por);
    if let Some(traces) = report.traces() {
        // The revisit explorer: exactly one execution per graph, none cut
        // short (beyond the interleavings discarded at the first weaker
        // ordering).
        assert_eq!(
            (
                report.executions() - report.discarded_executions(),
                report.sleep_set_blocked()
            ),
            (traces, 0),
            "one execution per graph: {report:?}"
        );
    }
    if oracle {
        let (all, every) = run(Strategy::Exhaustive);
        assert_eq!(
            seen, all,
            "the reduction and the oracle see the same outcomes"
        );
        assert_eq!(Some(graphs(&report)), every.traces(), "and the same graphs");
    }
    (seen, report)
}

/// The distinct behaviours explored: execution graphs, or (while every
/// atomic is `SeqCst`, explored as interleavings with an optimal
/// reduction) the executions that were not redundant.
fn graphs(report: &Report) -> u64 {
    report
        .traces()
        .unwrap_or(report.executions() - report.sleep_set_blocked())
}

/// As [`explored`], with the oracle.
fn outcomes<T: Ord + Debug + Send>(model: impl Fn() -> T + Sync) -> (BTreeSet<T>, Report) {
    explored(model, true)
}

fn atomics<const N: usize>() -> Arc<[AtomicUsize; N]> {
    Arc::new(std::array::from_fn(|_| AtomicUsize::new(0)))
}

/// Store buffering: `x = 1; r1 = y ‖ y = 1; r2 = x`.
fn sb(store: Ordering, load: Ordering) -> impl Fn() -> (usize, usize) + Sync {
    move || {
        let v = atomics::<2>();
        let w = v.clone();
        let t = thread::spawn(move || {
            w[1].store(1, store);
            w[0].load(load)
        });
        v[0].store(1, store);
        let r1 = v[1].load(load);
        (r1, t.join().unwrap())
    }
}

fn set<T: Ord + Clone>(items: &[T]) -> BTreeSet<T> {
    items.iter().cloned().collect()
}

#[test]
fn store_buffering_reads_both_initial_values_unless_seq_cst() {
    let all = set(&[(0, 0), (0, 1), (1, 0), (1, 1)]);
    for (store, load) in [(Relaxed, Relaxed), (Release, Acquire)] {
        let (seen, report) = outcomes(sb(store, load));
        assert_eq!(seen, all, "{store:?}/{load:?}");
        assert_eq!(Some(graphs(&report)), Some(4), "{store:?}/{load:?}");
    }
    let (seen, report) = outcomes(sb(SeqCst, SeqCst));
    assert_eq!(seen, set(&[(0, 1), (1, 0), (1, 1)]));
    assert_eq!(Some(graphs(&report)), Some(3));
}

/// A litmus thread's body: it gets the shared locations and returns what it
/// read.
type Body<const N: usize> = fn(&[AtomicUsize; N]) -> Vec<usize>;

/// Runs `threads` (each given the shared locations) as spawned threads and
/// returns what each returned, then the final value of every location.
fn litmus<const N: usize>(threads: &[Body<N>]) -> (Vec<Vec<usize>>, Vec<usize>) {
    let v = atomics::<N>();
    let handles: Vec<_> = threads
        .iter()
        .map(|&body| {
            let v = v.clone();
            thread::spawn(move || body(&v))
        })
        .collect();
    let results = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let finals = v.iter().map(|x| x.load(Relaxed)).collect();
    (results, finals)
}

#[test]
fn message_passing_is_ordered_only_by_release_acquire() {
    // data = 1; flag = 1 ‖ r1 = flag; r2 = data — r1 = 1, r2 = 0 is stale.
    let relaxed = || {
        litmus::<2>(&[
            |v| {
                v[0].store(1, Relaxed);
                v[1].store(1, Relaxed);
                vec![]
            },
            |v| vec![v[1].load(Relaxed), v[0].load(Relaxed)],
        ])
        .0
    };
    let (seen, report) = outcomes(relaxed);
    assert!(seen.contains(&vec![vec![], vec![1, 0]]), "{seen:?}");
    assert_eq!((seen.len(), Some(graphs(&report))), (4, Some(4)));
    let release_acquire = || {
        litmus::<2>(&[
            |v| {
                v[0].store(1, Relaxed);
                v[1].store(1, Release);
                vec![]
            },
            |v| vec![v[1].load(Acquire), v[0].load(Relaxed)],
        ])
        .0
    };
    let (seen, report) = outcomes(release_acquire);
    assert!(!seen.contains(&vec![vec![], vec![1, 0]]), "{seen:?}");
    assert_eq!((seen.len(), Some(graphs(&report))), (3, Some(3)));
}

#[test]
fn load_buffering_stays_forbidden() {
    // r1 = x; y = 1 ‖ r2 = y; x = 1 — r1 = r2 = 1 is out of thin air.
    let (seen, report) = outcomes(|| {
        litmus::<2>(&[
            |v| {
                let r = v[0].load(Relaxed);
                v[1].store(1, Relaxed);
                vec![r]
            },
            |v| {
                let r = v[1].load(Relaxed);
                v[0].store(1, Relaxed);
                vec![r]
            },
        ])
        .0
    });
    assert!(!seen.contains(&vec![vec![1], vec![1]]));
    assert_eq!((seen.len(), Some(graphs(&report))), (3, Some(3)));
}

/// 2+2W: `x = 1; y = 2 ‖ y = 1; x = 2`; the outcome is the final values.
fn two_plus_two_w(order: Ordering) -> impl Fn() -> Vec<usize> + Sync {
    move || {
        let v = atomics::<2>();
        let w = v.clone();
        let t = thread::spawn(move || {
            w[1].store(1, order);
            w[0].store(2, order);
        });
        v[0].store(1, order);
        v[1].store(2, order);
        t.join().unwrap();
        vec![v[0].load(Relaxed), v[1].load(Relaxed)]
    }
}

#[test]
fn two_plus_two_writes_disagree_unless_seq_cst() {
    for order in [Relaxed, Release] {
        let (seen, report) = outcomes(two_plus_two_w(order));
        assert!(seen.contains(&vec![1, 1]), "{order:?}");
        assert_eq!(
            (seen.len(), Some(graphs(&report))),
            (4, Some(4)),
            "{order:?}"
        );
    }
    let (seen, report) = outcomes(two_plus_two_w(SeqCst));
    assert!(!seen.contains(&vec![1, 1]));
    assert_eq!((seen.len(), Some(graphs(&report))), (3, Some(3)));
}

/// IRIW: `x = 1 ‖ y = 1 ‖ a = x; b = y ‖ c = y; d = x`, the readers'
/// loads with `order` and, if `fenced`, a SeqCst fence between them.
fn iriw(order: Ordering, fenced: bool) -> impl Fn() -> Vec<usize> + Sync {
    move || {
        let v = atomics::<2>();
        type Reader = Box<dyn Fn(&[AtomicUsize; 2]) -> Vec<usize> + Send>;
        let spawn = |f: Reader| {
            let v = v.clone();
            thread::spawn(move || f(&v))
        };
        let store = if order == SeqCst { SeqCst } else { Relaxed };
        let read = move |v: &[AtomicUsize; 2], first: usize| {
            let a = v[first].load(order);
            if fenced {
                kase::sync::atomic::fence(SeqCst);
            }
            vec![a, v[1 - first].load(order)]
        };
        let handles = [
            spawn(Box::new(move |v| {
                v[0].store(1, store);
                vec![]
            })),
            spawn(Box::new(move |v| {
                v[1].store(1, store);
                vec![]
            })),
            spawn(Box::new(move |v| read(v, 0))),
            spawn(Box::new(move |v| read(v, 1))),
        ];
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    }
}

#[test]
fn independent_reads_of_independent_writes_disagree_unless_seq_cst() {
    // a = 1, b = 0 (x before y) and c = 1, d = 0 (y before x).
    let disagree = vec![1, 0, 1, 0];
    for order in [Relaxed, Acquire] {
        let (seen, report) = explored(iriw(order, false), false);
        assert!(seen.contains(&disagree), "{order:?}");
        assert_eq!(
            (seen.len(), Some(graphs(&report))),
            (16, Some(16)),
            "{order:?}"
        );
    }
    for (order, fenced) in [(SeqCst, false), (Relaxed, true)] {
        let (seen, report) = explored(iriw(order, fenced), false);
        assert!(!seen.contains(&disagree), "{order:?} fenced {fenced}");
        assert_eq!((seen.len(), Some(graphs(&report))), (15, Some(15)));
    }
}

#[test]
fn store_buffering_with_seq_cst_fences_is_sequentially_consistent() {
    let (seen, report) = outcomes(|| {
        litmus::<2>(&[
            |v| {
                v[0].store(1, Relaxed);
                kase::sync::atomic::fence(SeqCst);
                vec![v[1].load(Relaxed)]
            },
            |v| {
                v[1].store(1, Relaxed);
                kase::sync::atomic::fence(SeqCst);
                vec![v[0].load(Relaxed)]
            },
        ])
        .0
    });
    assert!(!seen.contains(&vec![vec![0], vec![0]]));
    assert_eq!((seen.len(), Some(graphs(&report))), (3, Some(3)));
}

#[test]
fn write_to_read_causality_needs_release_acquire() {
    // WRC: x = 1 ‖ r1 = x; y = 1 ‖ r2 = y; r3 = x — r1 = r2 = 1, r3 = 0.
    let relaxed = || {
        litmus::<2>(&[
            |v| {
                v[0].store(1, Relaxed);
                vec![]
            },
            |v| {
                let r = v[0].load(Relaxed);
                v[1].store(1, Relaxed);
                vec![r]
            },
            |v| vec![v[1].load(Relaxed), v[0].load(Relaxed)],
        ])
        .0
    };
    let weak = vec![vec![], vec![1], vec![1, 0]];
    let (seen, report) = outcomes(relaxed);
    assert!(seen.contains(&weak));
    assert_eq!((seen.len(), Some(graphs(&report))), (8, Some(8)));
    let release_acquire = || {
        litmus::<2>(&[
            |v| {
                v[0].store(1, Release);
                vec![]
            },
            |v| {
                let r = v[0].load(Acquire);
                v[1].store(1, Release);
                vec![r]
            },
            |v| vec![v[1].load(Acquire), v[0].load(Relaxed)],
        ])
        .0
    };
    let (seen, report) = outcomes(release_acquire);
    assert!(!seen.contains(&weak));
    assert_eq!((seen.len(), Some(graphs(&report))), (7, Some(7)));
}

#[test]
fn isa2_is_transitive_under_release_acquire() {
    // x = 1; y = 1 ‖ r1 = y; z = 1 ‖ r2 = z; r3 = x — 1, 1, 0 is weak.
    let weak = vec![vec![], vec![1], vec![1, 0]];
    let relaxed = || {
        litmus::<3>(&[
            |v| {
                v[0].store(1, Relaxed);
                v[1].store(1, Relaxed);
                vec![]
            },
            |v| {
                let r = v[1].load(Relaxed);
                v[2].store(1, Relaxed);
                vec![r]
            },
            |v| vec![v[2].load(Relaxed), v[0].load(Relaxed)],
        ])
        .0
    };
    let (seen, report) = outcomes(relaxed);
    assert!(seen.contains(&weak));
    assert_eq!((seen.len(), Some(graphs(&report))), (8, Some(8)));
    let release_acquire = || {
        litmus::<3>(&[
            |v| {
                v[0].store(1, Relaxed);
                v[1].store(1, Release);
                vec![]
            },
            |v| {
                let r = v[1].load(Acquire);
                v[2].store(1, Release);
                vec![r]
            },
            |v| vec![v[2].load(Acquire), v[0].load(Relaxed)],
        ])
        .0
    };
    let (seen, report) = outcomes(release_acquire);
    assert!(!seen.contains(&weak));
    assert_eq!((seen.len(), Some(graphs(&report))), (7, Some(7)));
}

/// R: `x = 1; y = 1 ‖ y = 2; r = x`; the outcome is r and the final y.
fn r_litmus(order: Ordering) -> impl Fn() -> (Vec<Vec<usize>>, Vec<usize>) + Sync {
    move || {
        let v = atomics::<2>();
        let w = v.clone();
        let t = thread::spawn(move || {
            w[1].store(2, order);
            w[0].load(order)
        });
        v[0].store(1, order);
        v[1].store(1, order);
        let r = t.join().unwrap();
        (vec![vec![r]], vec![v[1].load(Relaxed)])
    }
}

#[test]
fn r_needs_seq_cst() {
    let weak = (vec![vec![0]], vec![2]);
    let (seen, report) = outcomes(r_litmus(Relaxed));
    assert!(seen.contains(&weak));
    assert_eq!((seen.len(), Some(graphs(&report))), (4, Some(4)));
    let (seen, report) = outcomes(r_litmus(SeqCst));
    assert!(!seen.contains(&weak));
    assert_eq!((seen.len(), Some(graphs(&report))), (3, Some(3)));
}

/// S: `x = 2; y = 1 ‖ r = y; x = 1`; the outcome is r and the final x.
fn s_litmus(store: Ordering, load: Ordering) -> impl Fn() -> (usize, usize) + Sync {
    move || {
        let v = atomics::<2>();
        let w = v.clone();
        let t = thread::spawn(move || {
            let r = w[1].load(load);
            w[0].store(1, Relaxed);
            r
        });
        v[0].store(2, Relaxed);
        v[1].store(1, store);
        let r = t.join().unwrap();
        (r, v[0].load(Relaxed))
    }
}

#[test]
fn s_is_forbidden_by_release_acquire() {
    let (seen, report) = outcomes(s_litmus(Relaxed, Relaxed));
    assert!(seen.contains(&(1, 2)));
    assert_eq!((seen.len(), Some(graphs(&report))), (4, Some(4)));
    let (seen, report) = outcomes(s_litmus(Release, Acquire));
    assert!(!seen.contains(&(1, 2)));
    assert_eq!((seen.len(), Some(graphs(&report))), (3, Some(3)));
}

#[test]
fn coherence_holds_for_relaxed_accesses() {
    // CoRR: x = 1 ‖ r1 = x; r2 = x — never 1 then 0.
    let (seen, report) = outcomes(|| {
        litmus::<1>(&[
            |v| {
                v[0].store(1, Relaxed);
                vec![]
            },
            |v| vec![v[0].load(Relaxed), v[0].load(Relaxed)],
        ])
        .0
    });
    assert_eq!(
        seen,
        set(&[
            vec![vec![], vec![0, 0]],
            vec![vec![], vec![0, 1]],
            vec![vec![], vec![1, 1]]
        ])
    );
    assert_eq!(Some(graphs(&report)), Some(3));
    // CoRR with two writers: two readers never see them in opposite orders.
    let (seen, _) = explored(
        || {
            litmus::<1>(&[
                |v| {
                    v[0].store(1, Relaxed);
                    vec![]
                },
                |v| {
                    v[0].store(2, Relaxed);
                    vec![]
                },
                |v| vec![v[0].load(Relaxed), v[0].load(Relaxed)],
                |v| vec![v[0].load(Relaxed), v[0].load(Relaxed)],
            ])
            .0
        },
        false,
    );
    let opposite = vec![vec![], vec![], vec![1, 2], vec![2, 1]];
    assert!(!seen.contains(&opposite));
    assert!(seen.contains(&vec![vec![], vec![], vec![1, 2], vec![1, 2]]));
    // CoWR: x = 1; r = x ‖ x = 2 — r is never the initial value, and is 2
    // only if x = 2 comes later in x's modification order.
    let (seen, report) = outcomes(|| {
        let (results, finals) = litmus::<1>(&[
            |v| {
                v[0].store(1, Relaxed);
                vec![v[0].load(Relaxed)]
            },
            |v| {
                v[0].store(2, Relaxed);
                vec![]
            },
        ]);
        (results[0][0], finals[0])
    });
    assert_eq!(seen, set(&[(1, 1), (1, 2), (2, 2)]));
    assert_eq!(Some(graphs(&report)), Some(3));
}

/// lastzero(n), loads with `load`, stores with `store`: a reader scans
/// `a[n..=0]` for the last zero while writer `j` stores `a[j] = a[j - 1] + 1`.
fn lastzero(n: usize, load: Ordering, store: Ordering) -> impl Fn() + Sync {
    move || {
        let a: Arc<Vec<AtomicUsize>> = Arc::new((0..=n).map(|_| AtomicUsize::new(0)).collect());
        let reader = {
            let a = a.clone();
            thread::spawn(move || {
                let mut i = n;
                while a[i].load(load) != 0 {
                    i -= 1;
                }
            })
        };
        let writers: Vec<_> = (1..=n)
            .map(|j| {
                let a = a.clone();
                thread::spawn(move || {
                    let v = a[j - 1].load(load);
                    a[j].store(v + 1, store);
                })
            })
            .collect();
        reader.join().unwrap();
        for w in writers {
            w.join().unwrap();
        }
    }
}

#[test]
fn lastzero_has_genmcs_graph_count() {
    // GenMC counts 64 graphs for lastzero(5) under RC11 and under SC: with
    // Release/Acquire every chain of writers the reader sees is ordered
    // before it, as under SC.
    let (_, release_acquire) = explored(lastzero(5, Acquire, Release), false);
    assert!(release_acquire.graph_exploration().is_some());
    assert_eq!(graphs(&release_acquire), 64, "{release_acquire}");
    let (_, seq_cst) = explored(lastzero(5, SeqCst, SeqCst), false);
    assert!(seq_cst.graph_exploration().is_none());
    assert_eq!(graphs(&seq_cst), 64, "{seq_cst}");
    // With Relaxed the reader may see a[j] written but a[j - 1] not yet:
    // more graphs than under SC.
    let (_, relaxed) = explored(lastzero(5, Relaxed, Relaxed), false);
    assert!(graphs(&relaxed) > 64, "{relaxed}");
}

/// GenMC's CoA(n): two threads store to `x` and read `y` (or `z`) and then
/// `x`; `n - 1` threads store to `y` and `z` (Release/Acquire).
fn coa(n: usize) -> impl Fn() + Sync {
    move || {
        let v = atomics::<3>();
        let mut threads = Vec::new();
        for (value, other) in [(1, 1), (2, 2)] {
            let v = v.clone();
            threads.push(thread::spawn(move || {
                v[0].store(value, Release);
                v[other].load(Acquire);
                v[0].load(Acquire);
            }));
        }
        for i in 0..n - 1 {
            let v = v.clone();
            threads.push(thread::spawn(move || {
                v[1].store(i, Release);
                v[2].store(i, Release);
            }));
        }
        for t in threads {
            t.join().unwrap();
        }
    }
}

/// GenMC's fib_bench(n): two threads add `x` and `y` into one of them `n`
/// times; a third reads both (Release/Acquire).
fn fib_bench(n: usize) -> impl Fn() + Sync {
    move || {
        let v = atomics::<2>();
        v[0].store(1, Relaxed);
        v[1].store(1, Relaxed);
        let mut threads = Vec::new();
        for target in 0..2 {
            let v = v.clone();
            threads.push(thread::spawn(move || {
                for _ in 0..n {
                    let sum = v[0].load(Acquire) + v[1].load(Acquire);
                    v[target].store(sum, Release);
                }
            }));
        }
        let reader = v.clone();
        threads.push(thread::spawn(move || {
            assert!(!(reader[0].load(Acquire) > 144 || reader[1].load(Acquire) > 144));
        }));
        for t in threads {
            t.join().unwrap();
        }
    }
}

#[test]
fn coa_has_genmcs_graph_counts() {
    // GenMC's RC11 counts for CoA(1..3); CoA(4) and CoA(5), 2 304 and
    // 57 600, are kase-bench rows (`counts.rs` checks them).
    for (n, want) in [(1, 4), (2, 16), (3, 144)] {
        let (_, report) = explored(coa(n), n == 1);
        assert_eq!(report.graph_explorer(), Some(&GraphExplorer::Revisits));
        assert_eq!(graphs(&report), want, "CoA({n}): {report}");
    }
}

#[test]
fn lastzero_10_has_genmcs_graph_count_in_as_many_executions() {
    let (_, report) = explored(lastzero(10, Acquire, Release), false);
    assert_eq!(graphs(&report), 3_328, "{report}");
    assert_eq!(report.executions() - report.discarded_executions(), 3_328);
}

#[test]
fn fib_bench_counts_agree_with_the_oracle() {
    // fib_bench(5) has GenMC's 525 630 graphs (kase-bench); fib_bench(1)
    // is small enough for every interleaving.
    let (_, report) = explored(fib_bench(1), true);
    assert!(graphs(&report) > 1, "{report}");
}

/// Two threads each take one lock `sections` times to add to their own cell
/// with `Relaxed`: the graphs are the orders of the sections.
fn locked_relaxed_adds(sections: usize) -> impl Fn() + Sync {
    move || {
        let lock = Arc::new(kase::sync::Mutex::new(()));
        let cells = atomics::<2>();
        let threads: Vec<_> = (0..2)
            .map(|i| {
                let (lock, cells) = (lock.clone(), cells.clone());
                thread::spawn(move || {
                    for _ in 0..sections {
                        let _held = lock.lock().unwrap();
                        cells[i].fetch_add(1, Relaxed);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
    }
}

#[test]
fn the_revisit_explorer_takes_locks() {
    // C(2n, n) orders of the sections, one execution each.
    let (_, report) = explored(locked_relaxed_adds(2), true);
    assert_eq!(report.graph_explorer(), Some(&GraphExplorer::Revisits));
    assert_eq!(graphs(&report), 6, "{report}");
    let (_, report) = explored(locked_relaxed_adds(8), false);
    assert_eq!(graphs(&report), 12_870, "{report}");
}

/// Three threads add to one counter (`SeqCst`), main joins them and reads
/// it with `final_load`, having set it up with `setup` before spawning.
fn joined_counter(setup: Ordering, final_load: Ordering) -> impl Fn() -> usize + Sync {
    move || {
        let v = atomics::<1>();
        v[0].store(10, setup);
        let threads: Vec<_> = (0..3)
            .map(|_| {
                let v = v.clone();
                thread::spawn(move || {
                    v[0].fetch_add(1, SeqCst);
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        v[0].load(final_load)
    }
}

#[test]
fn weak_accesses_made_alone_keep_the_interleavings() {
    // Before the spawns and after the joins main runs alone: every other
    // event happens before or after its accesses, so their orderings allow
    // nothing sequential consistency does not show, and the all-SeqCst
    // threads stay on the interleaving explorer (3! traces), nothing
    // discarded.
    let (seen, report) = outcomes(joined_counter(Relaxed, Relaxed));
    assert_eq!(seen, BTreeSet::from([13]));
    assert_eq!(report.graph_exploration(), None, "{report}");
    assert_eq!(report.discarded_executions(), 0, "{report}");
    assert_eq!(report.executions(), 6, "{report}");
    let (_, seq_cst) = outcomes(joined_counter(SeqCst, SeqCst));
    assert_eq!(seq_cst.executions(), report.executions());

    // A single thread: one execution, whatever its orderings.
    let single = Builder::new().explore(|| {
        let v = atomics::<2>();
        v[0].store(1, Release);
        v[1].fetch_add(v[0].load(Relaxed), AcqRel);
        kase::sync::atomic::fence(Acquire);
        kase::sync::atomic::fence(Release);
        assert_eq!(v[1].load(Acquire), 1);
    });
    assert!(single.failure().is_none(), "{single}");
    assert_eq!(
        (single.executions(), single.graph_exploration()),
        (1, None),
        "{single}"
    );
}

#[test]
fn a_weak_access_while_another_thread_may_run_moves_to_graphs() {
    // The same access while a thread is running, or has finished without
    // being joined, is concurrent with it: graphs.
    let unjoined = Builder::new().explore(|| {
        let v = atomics::<1>();
        let t = {
            let v = v.clone();
            thread::spawn(move || v[0].store(1, SeqCst))
        };
        while !t.is_finished() {
            thread::yield_now();
        }
        v[0].load(Relaxed);
        t.join().unwrap();
    });
    assert!(unjoined.failure().is_none(), "{unjoined}");
    assert!(
        unjoined.graph_exploration().is_some(),
        "finished but not joined: {unjoined}"
    );
    let running = Builder::new().explore(|| {
        let v = atomics::<1>();
        let t = {
            let v = v.clone();
            thread::spawn(move || v[0].load(Relaxed))
        };
        v[0].store(1, SeqCst);
        t.join().unwrap();
    });
    assert!(running.failure().is_none(), "{running}");
    assert!(running.graph_exploration().is_some(), "{running}");
    assert_eq!(running.traces(), Some(2), "{running}");
}

/// Main and `threads` threads race to initialise a `OnceLock` and (with
/// `lazy`) a `LazyLock` with their own number, under RC11 (a `Relaxed`
/// flag each thread sets); the outcome is who initialised each, and what
/// main's last load of the flag saw.
fn once_race(threads: usize, lazy: bool) -> (usize, usize, usize) {
    use kase::sync::{LazyLock, OnceLock};
    let cell = Arc::new(OnceLock::new());
    let flag = Arc::new(AtomicUsize::new(0));
    let first = Arc::new(AtomicUsize::new(usize::MAX));
    let lazy_first = {
        let first = first.clone();
        Arc::new(LazyLock::new(move || first.load(SeqCst)))
    };
    let handles: Vec<_> = (1..=threads)
        .map(|i| {
            let (cell, flag, first) = (cell.clone(), flag.clone(), first.clone());
            let lazy_first = lazy_first.clone();
            thread::spawn(move || {
                flag.store(i, Relaxed);
                let got = *cell.get_or_init(|| i);
                if !lazy {
                    return (got, 0);
                }
                let _ = first.compare_exchange(usize::MAX, i, SeqCst, SeqCst);
                (got, **lazy_first)
            })
        })
        .collect();
    let got = *cell.get_or_init(|| 0);
    let mine = if lazy {
        let _ = first.compare_exchange(usize::MAX, 0, SeqCst, SeqCst);
        (got, **lazy_first)
    } else {
        (got, 0)
    };
    for t in handles {
        assert_eq!(
            t.join().unwrap(),
            mine,
            "one initialisation each, seen by all"
        );
    }
    (mine.0, mine.1, flag.load(Relaxed))
}

#[test]
fn once_fast_paths_read_the_latest_state_and_lose_no_initialiser() {
    // kase's `Once` fast path reads only the latest state under the
    // explorers that try every order of the threads (an older state only
    // sends it the long way to the same end): the outcomes must be those
    // of the search where it may read any state, bound by bound, for the
    // reduction and the oracle, and every thread must get to initialise.
    let outcomes = |builder: Builder, threads: usize, lazy: bool| {
        let seen = std::sync::Mutex::new(BTreeSet::new());
        let report = builder.memory_model(MemoryModel::Rc11).explore(|| {
            let outcome = once_race(threads, lazy);
            seen.lock().unwrap().insert(outcome);
        });
        assert!(report.failure().is_none(), "{report}");
        assert!(report.graph_exploration().is_some(), "{report}");
        (seen.into_inner().unwrap(), report)
    };
    for bound in 0..=2 {
        let bounded = || crate::common::bounded(bound);
        let (reduced, _) = outcomes(bounded(), 2, true);
        let (oracle, _) = outcomes(bounded().strategy(Strategy::Exhaustive), 2, true);
        assert_eq!(
            reduced, oracle,
            "bound {bound}: the reduction and the oracle"
        );
        if bound < 2 {
            // (At bound 2 the search with every state readable runs two
            // million executions, against 4 767 with the latest only.)
            let every = bounded().strategy(Strategy::Exhaustive).__every_read();
            let (every, _) = outcomes(every, 2, true);
            assert_eq!(
                oracle, every,
                "bound {bound}: latest-only fast paths lose nothing"
            );
        }
        if bound == 2 {
            let who: BTreeSet<(usize, usize)> = reduced.iter().map(|o| (o.0, o.1)).collect();
            assert!(who.len() >= 3, "threads take turns initialising: {who:?}");
        }
    }
    // Without a bound (every graph: the revisit explorer, or the canonical
    // one once a waiter blocks), every thread may initialise.
    let (unbounded, report) = outcomes(Builder::new(), 1, false);
    assert!(report.complete(), "{report}");
    let (every, _) = outcomes(Builder::new().__every_read(), 1, false);
    assert_eq!(unbounded, every);
    let initialisers: BTreeSet<usize> = unbounded.iter().map(|o| o.0).collect();
    assert_eq!(initialisers, BTreeSet::from([0, 1]), "{unbounded:?}");
}

#[test]
fn failures_through_a_once_replay_from_their_schedules() {
    // A `Relaxed` message after a lazy static both threads read: the stale
    // read fails. The failing execution's schedule, found by the bounded
    // reduction (latest-only `Once` fast paths) or without a bound, replays
    // it: a `Once` fast path's choice is recorded whoever explores.
    use kase::sync::LazyLock;
    let model = || {
        static ANSWER: LazyLock<usize> = LazyLock::new(|| 42);
        let (data, flag) = (atomics::<1>(), atomics::<1>());
        let t = {
            let (data, flag) = (data.clone(), flag.clone());
            thread::spawn(move || {
                data[0].store(*ANSWER, Relaxed);
                flag[0].store(1, Relaxed);
            })
        };
        if flag[0].load(Relaxed) == 1 {
            assert_eq!(data[0].load(Relaxed), *ANSWER, "flag seen, data stale");
        }
        t.join().unwrap();
    };
    for builder in [Builder::new().preemption_bound(2), Builder::new()] {
        let report = builder.memory_model(MemoryModel::Rc11).explore(model);
        let failure = report.failure().expect("the stale read is found");
        let schedule = failure.schedule().to_string();
        let again = Builder::new().replay(&schedule).explore(model);
        let replayed = again.failure().expect("the replay fails the same way");
        assert_eq!(replayed.message(), failure.message(), "{schedule}: {again}");
    }
}

/// Two threads race to initialise one `OnceLock`, and one publishes what it
/// got through a `Relaxed` store. The thread that finds the initialiser
/// running blocks on the `Once`'s lock, which the revisit explorer takes (a
/// condvar there moved such models to the canonical reduction, whose runs
/// mostly ended sleep-set-blocked): one execution per graph.
#[test]
fn a_contended_once_lock_stays_with_the_revisit_explorer() {
    let model = || {
        let cell = Arc::new(kase::sync::OnceLock::new());
        let flag = atomics::<1>();
        let (cell2, flag2) = (cell.clone(), flag.clone());
        let t = thread::spawn(move || {
            let v = *cell2.get_or_init(|| 1);
            flag2[0].store(v, Relaxed);
        });
        let v = *cell.get_or_init(|| 2);
        let seen = flag[0].load(Relaxed);
        t.join().unwrap();
        (v, seen)
    };
    let (seen, report) = outcomes(model);
    assert_eq!(
        report.graph_explorer(),
        Some(&GraphExplorer::Revisits),
        "{report}"
    );
    assert_eq!(seen, set(&[(1, 0), (1, 1), (2, 0), (2, 2)]));
}

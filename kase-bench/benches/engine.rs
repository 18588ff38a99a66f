//! Micro-benchmarks of kase's engine, so that regressions in its hot paths
//! show up: whole explorations of small models (the per-execution cost of the
//! exhaustive explorer and of optimal POR, whose alternatives and conflict
//! queries dominate on longer executions), scheduling points (`yield_now`)
//! and raw visible operations, and the POR explorer's own queries on a real
//! unfolding: causality, conflict, and the search for alternatives.
//!
//! Run with `cargo bench -p kase-bench --bench engine`; `cargo test` does not
//! run them.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use kase::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use kase::sync::Arc;
use kase::{thread, Builder, Report, Strategy};
use kase_bench::kase_models;

/// Explores `model` once to learn how many executions an exploration makes
/// (criterion then reports executions per second).
fn executions(builder: &Builder, model: impl Fn() + Sync) -> u64 {
    let report = builder.explore(model);
    assert!(report.complete() && report.failure().is_none(), "{report}");
    report.executions()
}

fn checked(report: Report) -> Report {
    debug_assert!(report.failure().is_none());
    black_box(report)
}

/// Two threads, each doing `ops` `fetch_add`s on one shared atomic.
fn two_threads(ops: usize) {
    let x = Arc::new(AtomicUsize::new(0));
    let x2 = x.clone();
    let t = thread::spawn(move || {
        for _ in 0..ops {
            x2.fetch_add(1, SeqCst);
        }
    });
    for _ in 0..ops {
        x.fetch_add(1, SeqCst);
    }
    t.join().unwrap();
}

fn explorations(c: &mut Criterion) {
    let mut group = c.benchmark_group("exploration");

    let exhaustive = Builder::new().strategy(Strategy::Exhaustive);
    let model = || two_threads(2);
    group.throughput(Throughput::Elements(executions(&exhaustive, model)));
    group.bench_function("exhaustive 2 threads x 2 ops", |b| {
        b.iter(|| checked(exhaustive.explore(model)))
    });

    let por = Builder::new();
    let model = || kase_models::mutex_counter(2, 2);
    group.throughput(Throughput::Elements(executions(&por, model)));
    group.bench_function("por mutex counter 2x2", |b| {
        b.iter(|| checked(por.explore(model)))
    });

    let model = || kase_models::mutex_counter(3, 2);
    group.throughput(Throughput::Elements(executions(&por, model)));
    group.bench_function("por mutex counter 3x2", |b| {
        b.iter(|| checked(por.explore(model)))
    });

    // Longer executions with many lock events: alternatives and conflict
    // queries of the unfolding dominate.
    let model = || kase_models::disp(2, 2);
    group.throughput(Throughput::Elements(executions(&por, model)));
    group.bench_function("por disp(2, 2)", |b| b.iter(|| checked(por.explore(model))));
    group.finish();
}

fn scheduling(c: &mut Criterion) {
    let mut group = c.benchmark_group("scheduling");
    let por = Builder::new();

    // Context switches: every yield is a scheduling point.
    const YIELDS: usize = 200;
    let model = || {
        let handles: Vec<_> = (0..2)
            .map(|_| {
                thread::spawn(|| {
                    for _ in 0..YIELDS {
                        thread::yield_now();
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
    };
    let runs = executions(&por, model);
    group.throughput(Throughput::Elements(runs * 2 * YIELDS as u64));
    group.bench_function("yield_now, 2 threads x 200", |b| {
        b.iter(|| checked(por.explore(model)))
    });

    // Visible operations: atomic accesses on thread-private atomics (one
    // trace), counted per operation.
    const OPS: usize = 1000;
    let model = || kase_models::independent(2, OPS);
    let runs = executions(&por, model);
    group.throughput(Throughput::Elements(runs * 2 * OPS as u64));
    group.bench_function("fetch_add, 2 threads x 1000 own atomics", |b| {
        b.iter(|| checked(por.explore(model)))
    });

    let model = || {
        let x = AtomicUsize::new(0);
        for _ in 0..OPS {
            x.fetch_add(1, SeqCst);
        }
    };
    let runs = executions(&por, model);
    group.throughput(Throughput::Elements(runs * OPS as u64));
    group.bench_function("fetch_add, main only x 1000", |b| {
        b.iter(|| checked(por.explore(model)))
    });
    group.finish();
}

/// The explorer's queries on the unfolding it built for a model, stopped
/// mid-exploration where it searches for alternatives (the probe comes from
/// `kase_rt::__bench`, hidden API for these benchmarks).
fn unfolding(c: &mut Criterion) {
    let mut group = c.benchmark_group("unfolding");
    for (name, executions, model) in [
        ("mpat(3)", 24, (|| kase_models::mpat(3)) as fn()),
        ("disp(2, 2)", 16, || kase_models::disp(2, 2)),
    ] {
        let mut probe = kase_rt::__bench::unfold(model, executions);
        let n = probe.events() as u64;
        group.throughput(Throughput::Elements(n * n));
        group.bench_function(
            format!("causality, all pairs of {n} events of {name}"),
            |b| b.iter(|| black_box(probe.causality_queries())),
        );
        group.throughput(Throughput::Elements(n * (n - 1) / 2));
        group.bench_function(
            format!("conflict, all pairs of {n} events of {name}"),
            |b| b.iter(|| black_box(probe.conflict_queries())),
        );
        group.throughput(Throughput::Elements(1));
        group.bench_function(format!("alternatives at every choice point, {name}"), |b| {
            b.iter(|| black_box(probe.alternative_search()))
        });
    }
    group.finish();
}

/// The group `criterion_main!` runs (a module, so the generated function is
/// not public API).
mod groups {
    use super::*;

    criterion_group! {
        name = benches;
        config = Criterion::default()
            .sample_size(10)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(3));
        targets = explorations, scheduling, unfolding
    }
}
criterion_main!(groups::benches);

//! Cost per execution against execution length, for every explorer.
//!
//! One thread makes `n` accesses to an atomic of its own, then publishes a
//! flag; main reads the flag once (in the two-thread rows, two threads that
//! never synchronise make n/2 accesses each). Every execution has about `n` visible
//! operations, and the explorers run few of them (two traces; the DFS
//! searches are capped), so the time per execution divided by `n` should
//! not grow with `n` if the cost is linear in the length. The same program
//! runs under loom for scale.
//!
//! ```text
//! cargo run --release -p kase-bench --bin length [-- --lengths 1000,2000,4000,8000] [--only revisits] [--out BENCHMARKS.md]
//! ```
//!
//! With `--out FILE` the table replaces the section "Cost per execution
//! against length" of FILE (or is appended).
//!
//! Rows: kase's POR (`SeqCst`, the unfolding), the exhaustive DFS and the
//! preemption-bounded DFS (capped at `CAP` executions), the bounded
//! reduction (`Strategy::Por` with the same bound), the revisit
//! explorer (the same program with `Relaxed` accesses, under RC11), and
//! loom (`SeqCst`, its default settings). Each cell is the best of three
//! runs: µs per execution, and ns per visible operation in brackets. The
//! last column is the growth of the time per operation from the shortest
//! to the longest length (1.0 = linear).

use std::fmt::Write as _;

use kase::sync::atomic::{AtomicUsize, Ordering};
use kase::{thread, Builder, MemoryModel, Strategy};

const HEADING: &str = "## Cost per execution against length";

/// Executions the DFS searches run at most per measurement.
const CAP: u64 = 200;

/// The model: `n` private accesses, then one shared flag. With `threads`
/// above one, the accesses are shared out between that many threads that
/// never synchronise (each thread's new node under RC11 looks up what it
/// has seen of the others, which must not cost a scan of their nodes).
fn model(n: usize, ordering: Ordering, threads: usize) {
    let flag = kase::sync::Arc::new(AtomicUsize::new(0));
    let workers: Vec<_> = (0..threads)
        .map(|i| {
            let f = flag.clone();
            thread::spawn(move || {
                let own = AtomicUsize::new(0);
                for _ in 0..n / threads {
                    own.fetch_add(1, ordering);
                }
                if i == 0 {
                    f.store(1, ordering);
                }
            })
        })
        .collect();
    let _ = flag.load(ordering);
    for w in workers {
        w.join().unwrap();
    }
}

fn loom_model(n: usize) {
    use loom::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    let flag = loom::sync::Arc::new(AtomicUsize::new(0));
    let f = flag.clone();
    let t = loom::thread::spawn(move || {
        let own = AtomicUsize::new(0);
        for _ in 0..n {
            own.fetch_add(1, SeqCst);
        }
        f.store(1, SeqCst);
    });
    let _ = flag.load(SeqCst);
    t.join().unwrap();
}

/// One explorer: how to run the model of length `n`, giving executions.
struct Explorer {
    name: &'static str,
    run: fn(usize) -> u64,
}

fn kase_run(builder: Builder, n: usize, ordering: Ordering) -> u64 {
    kase_run_threads(builder, n, ordering, 1)
}

fn kase_run_threads(builder: Builder, n: usize, ordering: Ordering, threads: usize) -> u64 {
    let report = builder
        .max_steps(4 * n as u64 + 100)
        .allow_incomplete(true)
        .explore(move || model(n, ordering, threads));
    assert!(report.failure().is_none(), "{report}");
    report.executions()
}

const EXPLORERS: &[Explorer] = &[
    Explorer {
        name: "kase POR (SeqCst)",
        run: |n| kase_run(Builder::new(), n, Ordering::SeqCst),
    },
    Explorer {
        name: "kase exhaustive DFS",
        run: |n| {
            let builder = Builder::new()
                .strategy(Strategy::Exhaustive)
                .max_executions(CAP);
            kase_run(builder, n, Ordering::SeqCst)
        },
    },
    Explorer {
        name: "kase bounded DFS (2 preemptions)",
        run: |n| {
            let builder = Builder::new()
                .strategy(Strategy::Exhaustive)
                .preemption_bound(2)
                // The bounded search itself, not the unbounded trial run
                // first (which finishes these models).
                .unbounded_trial(0)
                .max_executions(CAP);
            kase_run(builder, n, Ordering::SeqCst)
        },
    },
    Explorer {
        name: "kase bounded POR (2 preemptions)",
        run: |n| {
            let builder = Builder::new().preemption_bound(2).unbounded_trial(0);
            kase_run(builder, n, Ordering::SeqCst)
        },
    },
    Explorer {
        name: "kase revisits (Relaxed, RC11)",
        run: |n| {
            let builder = Builder::new().memory_model(MemoryModel::Rc11);
            kase_run(builder, n, Ordering::Relaxed)
        },
    },
    Explorer {
        name: "kase POR, two threads (SeqCst)",
        run: |n| kase_run_threads(Builder::new(), n, Ordering::SeqCst, 2),
    },
    Explorer {
        name: "kase revisits, two threads (Relaxed, RC11)",
        run: |n| {
            let builder = Builder::new().memory_model(MemoryModel::Rc11);
            kase_run_threads(builder, n, Ordering::Relaxed, 2)
        },
    },
    Explorer {
        name: "loom (SeqCst)",
        run: |n| {
            let mut builder = loom::model::Builder::new();
            builder.max_branches = 4 * n + 100;
            let runs = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
            let counter = runs.clone();
            builder.check(move || {
                counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                loom_model(n);
            });
            runs.load(std::sync::atomic::Ordering::Relaxed)
        },
    },
];

fn main() {
    let mut lengths = vec![1000, 2000, 4000, 8000];
    let mut only = String::new();
    let mut out = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--lengths" => {
                lengths = args
                    .next()
                    .map(|v| v.split(',').map(|n| n.trim().parse().ok()).collect())
                    .and_then(|v: Option<Vec<usize>>| v)
                    .filter(|v| !v.is_empty())
                    .expect("--lengths needs numbers separated by commas");
            }
            "--only" => {
                only = args
                    .next()
                    .expect("--only needs part of an explorer's name")
            }
            "--out" => out = Some(args.next().expect("--out needs a file")),
            other => {
                eprintln!(
                    "usage: length [--lengths 1000,2000,...] [--only NAME] [--out FILE] (unknown \
                     argument {other})"
                );
                std::process::exit(2);
            }
        }
    }
    let mut md = String::new();
    let header: Vec<String> = lengths.iter().map(|n| format!("n = {n}")).collect();
    let _ = writeln!(md, "| explorer | {} | growth |", header.join(" | "));
    let _ = writeln!(md, "|---|{}---:|", "---:|".repeat(lengths.len()));
    for explorer in EXPLORERS.iter().filter(|e| e.name.contains(&only)) {
        let mut cells = Vec::new();
        let mut per_op = Vec::new();
        for &n in &lengths {
            let (executions, time) = kase_bench::fastest_of(3, || (explorer.run)(n));
            let per_execution = time.as_secs_f64() / executions.max(1) as f64;
            per_op.push(per_execution / n as f64);
            cells.push(format!(
                "{:.0} µs ({:.0} ns) ×{executions}",
                per_execution * 1e6,
                per_execution / n as f64 * 1e9
            ));
        }
        let growth = per_op.last().unwrap() / per_op.first().unwrap();
        let _ = writeln!(
            md,
            "| {} | {} | {growth:.2} |",
            explorer.name,
            cells.join(" | ")
        );
    }
    print!("{md}");
    if let Some(path) = out {
        let section = format!(
            "{HEADING}\n\nOne thread makes n accesses to an atomic of its own, then stores a flag \
             main loads once (`kase-bench/src/bin/length.rs`); in the *two threads* rows two \
             threads that never synchronise make n/2 each. Each cell: µs per execution \
             (ns per access), ×executions (the DFS searches capped at {CAP}); growth is the ns \
             per access at the longest length over the shortest (1.00 = linear). One run, best \
             of three per cell, release build:\n\n```text\ncargo run --release -p kase-bench \
             --bin length -- --out BENCHMARKS.md\n```\n\n{md}"
        );
        let old = std::fs::read_to_string(&path).unwrap_or_default();
        if let Err(e) = std::fs::write(&path, kase_bench::replace_section(&old, HEADING, &section))
        {
            eprintln!("length: cannot write {path}: {e}");
            std::process::exit(1);
        }
    }
}

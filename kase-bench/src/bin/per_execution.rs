//! Raw engine speed: the cost of one execution in kase and in shuttle.
//!
//! Runs each program below with kase's unreduced explorer
//! (`Strategy::Exhaustive`, the one closest to shuttle's DFS: every
//! interleaving at the visible operations, no reduction), with kase's default
//! POR, and with shuttle's `check_dfs`, in this one process, one after the
//! other, and prints executions, wall time and microseconds per execution.
//!
//! ```text
//! cargo run --release -p kase-bench --bin per_execution [-- --repeat N]
//! ```
//!
//! Each measurement is the fastest of `--repeat` runs (default 3). Both
//! tools run the same source (`src/programs.rs`). The two DFS explorers do
//! not schedule at exactly the same points (shuttle also switches at a
//! thread's start), so their execution counts differ slightly; the per-
//! execution time is the comparable figure.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use kase::Strategy;
use kase_bench::catalog;

/// `(program, parameters)`: instances that shuttle's DFS finishes in a few
/// seconds at most.
const ROWS: &[(&str, &[usize])] = &[
    ("store_buffering", &[]),
    ("mutex_counter", &[2, 2]),
    ("shared_fetch_add", &[4]),
    ("independent", &[4, 1]),
    ("readers", &[4]),
    ("casrot", &[4]),
    ("wcas", &[3]),
    ("account", &[2]),
    ("disjoint_sections", &[2]),
    ("pi", &[3]),
];

static INVOCATIONS: AtomicU64 = AtomicU64::new(0);

/// One measurement: executions (as the tool counts them) and wall time.
struct Run {
    executions: u64,
    time: Duration,
}

impl Run {
    fn per_execution_us(&self) -> f64 {
        self.time.as_secs_f64() * 1e6 / self.executions.max(1) as f64
    }
}

/// The fastest of `repeat` runs of `f`.
fn best(repeat: usize, f: impl FnMut() -> u64) -> Run {
    let (executions, time) = kase_bench::fastest_of(repeat, f);
    Run { executions, time }
}

fn kase(program: &'static catalog::Program, params: &'static [usize], strategy: Strategy) -> u64 {
    let report = kase::Builder::new()
        .strategy(strategy)
        .explore(move || (program.kase)(params));
    assert!(
        report.complete() && report.failure().is_none(),
        "{}: {report}",
        program.name
    );
    report.executions()
}

fn shuttle(program: &'static catalog::Program, params: &'static [usize]) -> u64 {
    INVOCATIONS.store(0, Ordering::Relaxed);
    shuttle::check_dfs(
        move || {
            INVOCATIONS.fetch_add(1, Ordering::Relaxed);
            (program.shuttle)(params)
        },
        None,
    );
    INVOCATIONS.load(Ordering::Relaxed)
}

fn main() {
    let mut repeat = 3;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--repeat" => {
                repeat = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .filter(|&n| n > 0)
                    .expect("--repeat needs a positive integer");
            }
            other => {
                eprintln!("usage: per_execution [--repeat N] (unknown argument {other})");
                std::process::exit(2);
            }
        }
    }
    println!(
        "| program | kase Exhaustive execs | µs/exec | shuttle DFS execs | µs/exec | kase/shuttle per exec | kase POR execs | POR µs/exec |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    let mut ratios = Vec::new();
    for &(name, params) in ROWS {
        let program = catalog::find(name).unwrap_or_else(|| panic!("no program {name}"));
        let exhaustive = best(repeat, || kase(program, params, Strategy::Exhaustive));
        let dfs = best(repeat, || shuttle(program, params));
        let por = best(repeat, || kase(program, params, Strategy::Por));
        let ratio = exhaustive.per_execution_us() / dfs.per_execution_us();
        ratios.push(ratio);
        let shown: Vec<String> = params.iter().map(|p| p.to_string()).collect();
        println!(
            "| {name}({}) | {} | {:.2} | {} | {:.2} | {ratio:.2}× | {} | {:.2} |",
            shown.join(", "),
            exhaustive.executions,
            exhaustive.per_execution_us(),
            dfs.executions,
            dfs.per_execution_us(),
            por.executions,
            por.per_execution_us(),
        );
    }
    ratios.sort_by(f64::total_cmp);
    println!(
        "\nkase Exhaustive / shuttle DFS, time per execution: median {:.2}×, worst {:.2}× over {} programs (best of {repeat} runs each).",
        ratios[ratios.len() / 2],
        ratios[ratios.len() - 1],
        ratios.len()
    );
}

//! Cost per execution over a long run: whether kase's rate stays flat.
//!
//! Runs one catalog program with kase's default POR and prints executions
//! per second in the first 10 %, the middle 10 % and the last 10 % of the
//! run, and the resident memory at the end of each of those tenths (a rate
//! or a memory that grows with the explored part shows up as a gap between
//! the first and the last tenth).
//!
//! ```text
//! cargo run --release -p kase-bench --bin rate_windows -- mpat 6 --no-peeking --max-secs 60
//! cargo run --release -p kase-bench --bin rate_windows -- disp 5 4 --no-peeking
//! cargo run --release -p kase-bench --bin rate_windows -- pol 12 3
//! ```
//!
//! `--window N` also prints the rate of every `N` executions;
//! `--exhaustive` runs the unreduced explorer instead (the per-execution
//! cost POR is measured against), best with `--max-executions N`.

use std::process::ExitCode;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use kase_bench::catalog;

/// Command-line options.
struct Options {
    program: &'static catalog::Program,
    params: Vec<usize>,
    peeking: bool,
    max_secs: Option<f64>,
    max_executions: Option<u64>,
    window: Option<usize>,
    exhaustive: bool,
}

impl Options {
    fn parse() -> Result<Options, String> {
        let mut args = std::env::args().skip(1);
        let name = args.next().ok_or(
            "usage: rate_windows PROGRAM PARAMS... [--no-peeking] [--max-secs S] [--max-executions N] [--exhaustive] [--window N]",
        )?;
        let program = catalog::find(&name).ok_or(format!("no program {name}"))?;
        let mut options = Options {
            program,
            params: Vec::new(),
            peeking: true,
            max_secs: None,
            max_executions: None,
            window: None,
            exhaustive: false,
        };
        while let Some(arg) = args.next() {
            let mut value = || args.next().ok_or(format!("{arg} needs a value"));
            match arg.as_str() {
                "--no-peeking" => options.peeking = false,
                "--max-secs" => {
                    options.max_secs = Some(value()?.parse().map_err(|e| format!("{e}"))?)
                }
                "--exhaustive" => options.exhaustive = true,
                "--max-executions" => {
                    options.max_executions = Some(value()?.parse().map_err(|e| format!("{e}"))?)
                }
                "--window" => options.window = Some(value()?.parse().map_err(|e| format!("{e}"))?),
                p => options
                    .params
                    .push(p.parse().map_err(|_| format!("bad parameter {p}"))?),
            }
        }
        if options.params.len() != program.arity {
            return Err(format!("{name} takes {} parameter(s)", program.arity));
        }
        Ok(options)
    }
}

/// A field of `/proc/self/status` in kB (`VmRSS`, `VmHWM`), if readable.
fn status_kb(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The executions' starts, in nanoseconds since the run's, and the
/// resident memory read at some of them (by execution index). Kept small
/// (8 bytes an execution): the record grows with the run, inside the
/// memory it measures.
#[derive(Default)]
struct Samples {
    at_ns: Vec<u64>,
    rss_kb: Vec<(usize, u64)>,
}

/// How often (in executions) the resident memory is read.
const RSS_EVERY: usize = 256;

fn main() -> ExitCode {
    let options = match Options::parse() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("rate_windows: {e}");
            return ExitCode::FAILURE;
        }
    };
    let samples: Mutex<Samples> = Mutex::new(Samples::default());
    let mut builder = kase::Builder::new().peeking(options.peeking);
    if let Some(s) = options.max_secs {
        builder = builder.max_duration(Duration::from_secs_f64(s));
    }
    if let Some(n) = options.max_executions {
        builder = builder.max_executions(n).allow_incomplete(true);
    }
    if options.exhaustive {
        builder = builder.strategy(kase::Strategy::Exhaustive);
    }
    let (program, params) = (options.program, &options.params[..]);
    let start = Instant::now();
    let report = builder.explore(|| {
        {
            let mut s = samples.lock().expect("not poisoned");
            let i = s.at_ns.len();
            if i % RSS_EVERY == 0 {
                if let Some(kb) = status_kb("VmRSS:") {
                    s.rss_kb.push((i, kb));
                }
            }
            s.at_ns.push(start.elapsed().as_nanos() as u64);
        }
        (program.kase)(params)
    });
    let total = start.elapsed();
    let samples = samples.into_inner().expect("not poisoned");
    let n = samples.at_ns.len();
    let expected = if options.peeking {
        program.expected_with_peeking(params)
    } else {
        (program.expected)(params)
    };
    println!(
        "{}({}) peeking {}: {} executions ({} runs of the model) in {:.2} s{}; expected {}",
        program.name,
        params
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(","),
        if options.peeking { "on" } else { "off" },
        report.executions(),
        n,
        total.as_secs_f64(),
        if report.complete() {
            ""
        } else {
            " (INCOMPLETE)"
        },
        expected.map_or("?".into(), |e| e.to_string()),
    );
    if let Some(events) = report.peak_events() {
        println!("peak events in the unfolding: {events}");
    }
    if n < 20 {
        return ExitCode::SUCCESS;
    }
    let rate = |from: usize, to: usize| {
        let span = (samples.at_ns[to - 1] - samples.at_ns[from]) as f64 / 1e9;
        (to - 1 - from) as f64 / span.max(1e-9)
    };
    let rss = |from: usize, to: usize| {
        samples
            .rss_kb
            .iter()
            .filter(|&&(i, _)| (from..to).contains(&i))
            .map(|&(_, kb)| kb)
            .max()
            .map_or("?".into(), |kb| format!("{:.1} MiB", kb as f64 / 1024.0))
    };
    if let Some(w) = options.window.filter(|&w| w > 1) {
        let mut from = 0;
        while from + w <= n {
            println!(
                "executions {:>7}..{:<7} {:>9.0} /s  rss {}",
                from,
                from + w,
                rate(from, from + w),
                rss(from, from + w)
            );
            from += w;
        }
    }
    let tenth = n / 10;
    println!("{:<12} {:>12} {:>12}", "part", "executions/s", "max RSS");
    for (part, from) in [
        ("first 10 %", 0),
        ("middle 10 %", n / 2 - tenth / 2),
        ("last 10 %", n - tenth),
    ] {
        println!(
            "{:<12} {:>12.0} {:>12}",
            part,
            rate(from, from + tenth),
            rss(from, from + tenth)
        );
    }
    if let Some(kb) = status_kb("VmHWM:") {
        println!("peak RSS {:.1} MiB", kb as f64 / 1024.0);
    }
    ExitCode::SUCCESS
}

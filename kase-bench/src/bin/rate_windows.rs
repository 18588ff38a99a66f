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
//!
//! `--table` runs the three long runs of the speed targets (mpat(6) and
//! disp(5,4) without peeking, pol(12,3) with it), each in a child process
//! of its own (so that one run's memory is not in another's), and the
//! unreduced explorer for the first 20 000 executions of each, the fastest
//! of three runs of each (`--repeats N`); it prints a Markdown table, and
//! with `--out FILE` puts it in the section "Rate over a long run" of
//! `FILE`:
//!
//! ```text
//! cargo run --release -p kase-bench --bin rate_windows -- --table --out BENCHMARKS.md
//! ```

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
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--table") {
        return table::run(&args[1..]);
    }
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
    // The most resident memory read in a span of executions.
    let rss_kb = |from: usize, to: usize| {
        samples
            .rss_kb
            .iter()
            .filter(|&&(i, _)| (from..to).contains(&i))
            .map(|&(_, kb)| kb)
            .max()
    };
    let rss = |from: usize, to: usize| rss_kb(from, to).map_or("?".into(), table::mib);
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
        println!("peak RSS {}", table::mib(kb));
    }
    // For `--table`, which runs this in a child: one line it parses.
    println!(
        "{} executions={} complete={} secs={:.4} first={:.1} middle={:.1} last={:.1} rss_first_kb={} rss_last_kb={}",
        table::MARK,
        report.executions(),
        report.complete(),
        total.as_secs_f64(),
        rate(0, tenth),
        rate(n / 2 - tenth / 2, n / 2 - tenth / 2 + tenth),
        rate(n - tenth, n),
        rss_kb(0, tenth).unwrap_or(0),
        rss_kb(n - tenth, n).unwrap_or(0),
    );
    ExitCode::SUCCESS
}

mod table {
    //! `--table`: the long runs of the speed targets side by side.

    use std::fmt::Write as _;
    use std::process::{Command, ExitCode};

    /// Starts the line a child prints for the table.
    pub const MARK: &str = "rate_windows:";

    const HEADING: &str = "## Rate over a long run";

    /// The runs: program, parameters, peeking, the target time in seconds
    /// (issue 17: a tenth of Dpu's time for mpat(6)).
    const RUNS: &[(&str, &[usize], bool, f64)] = &[
        ("mpat", &[6], false, 6.0),
        ("disp", &[5, 4], false, 0.75),
        ("pol", &[12, 3], true, 1.25),
    ];

    /// The unreduced explorer's executions per run: enough for a steady
    /// rate, few enough to finish in seconds.
    const UNREDUCED: u64 = 20_000;

    /// Runs of each measurement, the fastest kept: the host's wall times
    /// drift by up to a third, and the fastest of a few interleaved runs
    /// is the steadiest estimate of a run undisturbed.
    const DEFAULT_REPEATS: usize = 3;

    /// What a child reported.
    struct Measured {
        executions: u64,
        complete: bool,
        secs: f64,
        first: f64,
        middle: f64,
        last: f64,
        rss_first_kb: u64,
        rss_last_kb: u64,
    }

    /// The fastest of `repeats` runs of each of `a` and `b`, interleaved.
    fn fastest_pair(
        a: &[String],
        b: &[String],
        repeats: usize,
    ) -> Result<(Measured, Measured), String> {
        let keep_faster = |best: &mut Measured, next: Measured| {
            if next.secs < best.secs {
                *best = next;
            }
        };
        let (mut best_a, mut best_b) = (child(a)?, child(b)?);
        for _ in 1..repeats {
            keep_faster(&mut best_a, child(a)?);
            keep_faster(&mut best_b, child(b)?);
        }
        Ok((best_a, best_b))
    }

    fn child(args: &[String]) -> Result<Measured, String> {
        let exe = std::env::current_exe().map_err(|e| format!("cannot find myself: {e}"))?;
        let out = Command::new(exe)
            .args(args)
            .output()
            .map_err(|e| format!("cannot run a child: {e}"))?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        let line = stdout
            .lines()
            .find_map(|l| l.strip_prefix(MARK))
            .ok_or_else(|| {
                format!(
                    "`rate_windows {}` printed no result ({}): {}",
                    args.join(" "),
                    out.status,
                    String::from_utf8_lossy(&out.stderr)
                )
            })?;
        let field = |name: &str| -> Result<&str, String> {
            line.split_whitespace()
                .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
                .ok_or_else(|| format!("no {name} in `{line}`"))
        };
        let num = |name: &str| -> Result<f64, String> {
            field(name)?
                .parse()
                .map_err(|e| format!("{name} in `{line}`: {e}"))
        };
        Ok(Measured {
            executions: num("executions")? as u64,
            complete: field("complete")? == "true",
            secs: num("secs")?,
            first: num("first")?,
            middle: num("middle")?,
            last: num("last")?,
            rss_first_kb: num("rss_first_kb")? as u64,
            rss_last_kb: num("rss_last_kb")? as u64,
        })
    }

    /// Kilobytes as mebibytes, for a table.
    pub fn mib(kb: u64) -> String {
        format!("{:.1} MiB", kb as f64 / 1024.0)
    }

    pub fn run(args: &[String]) -> ExitCode {
        match table(args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("rate_windows: {e}");
                ExitCode::FAILURE
            }
        }
    }

    fn table(args: &[String]) -> Result<(), String> {
        let mut out = None;
        let mut repeats = DEFAULT_REPEATS;
        let usage = "usage: rate_windows --table [--out FILE] [--repeats N]";
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            match (arg.as_str(), args.next()) {
                ("--out", Some(path)) => out = Some(path.clone()),
                ("--repeats", Some(n)) => {
                    repeats = n.parse().ok().filter(|&n| n > 0).ok_or(format!(
                        "--repeats wants a positive number, not `{n}`; {usage}"
                    ))?;
                }
                _ => return Err(usage.into()),
            }
        }
        let mut md = String::new();
        let _ = writeln!(
            md,
            "| program | peeking | executions | time | target | first 10 % | middle 10 % | last 10 % | \
             last / first | RSS first 10 % | RSS last 10 % | RSS ratio | unreduced explorer | \
             cost per execution, POR / unreduced |"
        );
        let _ = writeln!(
            md,
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
        );
        for &(name, params, peeking, target) in RUNS {
            let mut args: Vec<String> = std::iter::once(name.to_string())
                .chain(params.iter().map(usize::to_string))
                .collect();
            if !peeking {
                args.push("--no-peeking".into());
            }
            let mut unreduced_args = args.clone();
            unreduced_args.extend([
                "--exhaustive".into(),
                "--max-executions".into(),
                UNREDUCED.to_string(),
            ]);
            let (por, unreduced) = fastest_pair(&args, &unreduced_args, repeats)?;
            let por_rate = por.executions as f64 / por.secs;
            let unreduced_rate = unreduced.executions as f64 / unreduced.secs;
            let params: Vec<String> = params.iter().map(usize::to_string).collect();
            let _ = writeln!(
                md,
                "| {name}({}) | {} | {}{} | {:.2} s | ≤ {target} s {} | {:.0}/s | {:.0}/s | {:.0}/s | {:.2} | {} | {} | {:.2} | {:.0}/s | {:.2}× |",
                params.join(", "),
                if peeking { "on" } else { "off" },
                por.executions,
                if por.complete { "" } else { " (incomplete)" },
                por.secs,
                if por.complete && por.secs <= target { "met" } else { "**missed**" },
                por.first,
                por.middle,
                por.last,
                por.last / por.first,
                mib(por.rss_first_kb),
                mib(por.rss_last_kb),
                por.rss_last_kb as f64 / por.rss_first_kb.max(1) as f64,
                unreduced_rate,
                unreduced_rate / por_rate,
            );
        }
        print!("{md}");
        if let Some(path) = out {
            let section = format!(
                "{HEADING}\n\nThe long runs of the speed targets (issue 17), each in a process \
                 of its own, with kase's default POR (`kase-bench/src/bin/rate_windows.rs`): \
                 executions per second in the first, middle and last tenth of the run, and the \
                 most resident memory (`VmRSS`, read every 256 executions, binary included) \
                 in the first and last tenth. *unreduced explorer*: `Strategy::Exhaustive` on \
                 the same program for its first {UNREDUCED} executions (every interleaving, \
                 no reduction), whose rate against POR's whole-run rate is the cost of POR's \
                 bookkeeping per execution. Each is the fastest of {repeats} runs, POR's and \
                 the unreduced explorer's interleaved (the machine's wall times vary by up to \
                 a third within a session; the windows and memory are the fastest run's):\
                 \n\n```text\ncargo run --release -p kase-bench --bin rate_windows -- --table \
                 --out BENCHMARKS.md\n```\n\n{md}"
            );
            let old = std::fs::read_to_string(&path).unwrap_or_default();
            std::fs::write(&path, kase_bench::replace_section(&old, HEADING, &section))
                .map_err(|e| format!("cannot write {path}: {e}"))?;
        }
        Ok(())
    }
}

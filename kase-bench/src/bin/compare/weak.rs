//! `compare --weak`: the weak-memory programs under kase with
//! `MemoryModel::Rc11` and loom (shuttle on request), side by side, as the
//! section "Weak memory (RC11)" of the benchmarks.
//!
//! Each cell runs in a child (`compare --weak-cell TOOL PROGRAM`) that
//! records the distinct outcomes the litmus programs return and the first
//! execution that showed the weak outcome or the bug.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use kase_bench::catalog::{find_weak, group, WeakKind, WeakProgram, WEAK_PROGRAMS};

use super::{
    commit_line, extra_field, loom_check, machine, peak_rss_kb, report_progress, run_cell,
    shuttle_check, time_cell, timeout_text, Options, Outcome, INVOCATIONS, START,
};

/// The tools of `--weak` unless `--tools` says otherwise (shuttle runs every
/// ordering as `SeqCst`, so it can find no weak behaviour).
pub(super) const DEFAULT_TOOLS: [&str; 2] = ["kase", "loom"];

/// The heading of the section; it is always the last of the file.
const HEADING: &str = "## Weak memory (RC11)";

// ---------------------------------------------------------------------------
// The child.

/// The distinct outcomes seen so far.
static SEEN: Mutex<BTreeSet<Vec<usize>>> = Mutex::new(BTreeSet::new());

/// `SEEN.len()`, for the progress lines.
static OUTCOMES: AtomicUsize = AtomicUsize::new(0);

/// The invocation that first returned the weak outcome (0: none yet).
static WEAK_AT: AtomicU64 = AtomicU64::new(0);

/// One invocation of the model closure: runs `body` and records what it
/// returned.
fn invoke(program: &WeakProgram, body: fn() -> Vec<usize>) {
    // The invocation counter is bumped by the tool's wrapper (loom, shuttle)
    // or here (kase) before the body runs.
    let outcome = body();
    if program.is_weak(&outcome) {
        let n = INVOCATIONS.load(Ordering::Relaxed);
        let _ = WEAK_AT.compare_exchange(0, n, Ordering::Relaxed, Ordering::Relaxed);
    }
    let mut seen = SEEN.lock().unwrap_or_else(PoisonError::into_inner);
    seen.insert(outcome);
    OUTCOMES.store(seen.len(), Ordering::Relaxed);
}

fn progress_fields() -> String {
    format!(
        "outcomes={} weak_at={}",
        OUTCOMES.load(Ordering::Relaxed),
        WEAK_AT.load(Ordering::Relaxed)
    )
}

/// `compare --weak-cell TOOL PROGRAM`: prints `RESULT execs=… blocked=…
/// secs=… rss_kb=… traces=… outcomes=… weak_at=… status=…`.
pub(super) fn cell(args: &[String]) -> ExitCode {
    let (Some(tool), Some(name)) = (args.first(), args.get(1)) else {
        eprintln!("{}", super::USAGE);
        return ExitCode::from(2);
    };
    let Some(program) = find_weak(name) else {
        eprintln!("compare --weak-cell: unknown program {name}");
        return ExitCode::from(2);
    };
    report_progress(progress_fields);
    let start = *START.get_or_init(Instant::now);
    let (executions, blocked, traces, status) = match tool.as_str() {
        "kase" => {
            let report = kase::Builder::new()
                .memory_model(kase::MemoryModel::Rc11)
                .explore(move || {
                    INVOCATIONS.fetch_add(1, Ordering::Relaxed);
                    invoke(program, program.kase)
                });
            let status = match report.failure() {
                Some(f) => format!("{}: {}", f.kind(), f.message().unwrap_or("")),
                None if report.complete() => "ok".to_string(),
                None => "incomplete".to_string(),
            };
            // All-SeqCst models are explored as interleavings (optimal, so
            // the executions that were not redundant are the behaviours).
            let traces = report
                .traces()
                .unwrap_or(report.executions() - report.sleep_set_blocked())
                .to_string();
            (
                report.executions(),
                report.sleep_set_blocked(),
                traces,
                status,
            )
        }
        "loom" => {
            let status = loom_check(move || invoke(program, program.loom));
            (INVOCATIONS.load(Ordering::Relaxed), 0, "?".into(), status)
        }
        "shuttle" => {
            let status = shuttle_check(move || invoke(program, program.shuttle));
            (INVOCATIONS.load(Ordering::Relaxed), 0, "?".into(), status)
        }
        other => {
            eprintln!("compare --weak-cell: unknown tool {other}");
            return ExitCode::from(2);
        }
    };
    let secs = start.elapsed().as_secs_f64();
    // A bug shows as the failure that ended the exploration.
    if let WeakKind::Bug { message } = program.kind {
        if status.contains(message) {
            WEAK_AT.store(executions, Ordering::Relaxed);
        }
    }
    println!(
        "RESULT execs={executions} blocked={blocked} secs={secs} rss_kb={} traces={traces} {} \
         status={}",
        peak_rss_kb().unwrap_or(0),
        progress_fields(),
        status.replace('\n', " ")
    );
    ExitCode::SUCCESS
}

// ---------------------------------------------------------------------------
// The parent.

struct Row {
    program: &'static WeakProgram,
    cells: Vec<(&'static str, Outcome)>,
}

/// `compare --weak`: runs every cell, prints the section and writes it into
/// `--out`.
pub(super) fn compare(options: &Options) -> ExitCode {
    let exe = match super::own_executable() {
        Ok(e) => e,
        Err(code) => return code,
    };
    let selected = super::matching(WEAK_PROGRAMS, |p| p.name, &options.filters);
    if selected.is_empty() {
        eprintln!(
            "compare: no weak-memory program matches {:?}",
            options.filters
        );
        return ExitCode::from(2);
    }
    let machine = machine();
    let started = Instant::now();
    let cells: Vec<(usize, &'static str)> = (0..selected.len())
        .flat_map(|p| options.tools.iter().map(move |&tool| (p, tool)))
        .collect();
    let next = AtomicUsize::new(0);
    let results = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..options.jobs {
            scope.spawn(|| {
                while let Some(&(p, tool)) = cells.get(next.fetch_add(1, Ordering::SeqCst)) {
                    let program = selected[p];
                    let args = ["--weak-cell", tool, program.name].map(String::from);
                    let outcome = run_cell(&exe, &args, options.timeout);
                    eprintln!(
                        "{:>26} {:<8} {}",
                        program.name,
                        tool,
                        super::describe(&outcome)
                    );
                    results.lock().unwrap().push((p, tool, outcome));
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    let rows: Vec<Row> = selected
        .iter()
        .enumerate()
        .map(|(p, &program)| Row {
            program,
            cells: options
                .tools
                .iter()
                .map(|&tool| {
                    let i = results.iter().position(|r| r.0 == p && r.1 == tool);
                    let outcome = i.map_or(Outcome::Crashed("not run".into()), |i| {
                        results.swap_remove(i).2
                    });
                    (tool, outcome)
                })
                .collect(),
        })
        .collect();
    let section = render(options, &rows, started.elapsed(), &machine);
    print!("{section}");
    if let Some(path) = &options.out {
        let old = std::fs::read_to_string(path).unwrap_or_default();
        let new = kase_bench::replace_section(&old, HEADING, &section);
        if let Err(e) = std::fs::write(path, new) {
            eprintln!("compare: cannot write {path}: {e}");
            return ExitCode::FAILURE;
        }
        eprintln!("wrote the weak-memory section of {path}");
    }
    ExitCode::SUCCESS
}

/// Where the section starts in `text`, if it has one.
fn section_start(text: &str) -> Option<usize> {
    if text.starts_with(HEADING) {
        return Some(0);
    }
    text.find(&format!("\n{HEADING}")).map(|i| i + 1)
}

/// `markdown` followed by the weak-memory section of the file at `path`, if
/// it has one (a run without `--weak` rewrites the rest of the file).
pub(super) fn keep_section(path: &str, markdown: &str) -> String {
    let old = std::fs::read_to_string(path).unwrap_or_default();
    match section_start(&old) {
        Some(i) => format!("{}\n\n{}", markdown.trim_end(), &old[i..]),
        None => markdown.to_string(),
    }
}

// ---------------------------------------------------------------------------
// Rendering.

/// What a cell counted: executions (so far, on a timeout), kase's blocked
/// executions and graphs, distinct outcomes, and the execution that first
/// showed the weak outcome or bug.
struct Seen {
    executions: u64,
    blocked: Option<u64>,
    graphs: Option<u64>,
    outcomes: Option<usize>,
    weak_at: Option<u64>,
    finished: bool,
}

fn seen(outcome: &Outcome) -> Option<Seen> {
    let (executions, blocked, extra, finished) = match outcome {
        Outcome::Done {
            executions,
            blocked,
            extra,
            status,
            ..
        } => (*executions, Some(*blocked), extra, status == "ok"),
        Outcome::TimedOut { progress, extra } => (*progress, None, extra, false),
        _ => return None,
    };
    Some(Seen {
        executions,
        blocked,
        graphs: extra_field(extra, "traces"),
        outcomes: extra_field(extra, "outcomes"),
        weak_at: extra_field(extra, "weak_at").filter(|&n: &u64| n > 0),
        finished,
    })
}

/// The executions cell: the count, `≥ n` on a timeout.
fn executions_text(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Done { executions, .. } => group(*executions),
        Outcome::TimedOut { progress, .. } => format!("≥ {}", group(*progress)),
        Outcome::Crashed(_) => "**crash**".to_string(),
        _ => "—".to_string(),
    }
}

/// Whether the weak outcome or bug was seen: `found @ n` (bold where RC11
/// forbids it), `no` (bold `missed` where RC11 allows it and the tool
/// finished).
fn found_text(program: &WeakProgram, outcome: &Outcome) -> String {
    let (Some(s), false) = (
        seen(outcome),
        matches!(program.kind, WeakKind::Count { .. }),
    ) else {
        return "—".to_string();
    };
    match (s.weak_at, program.allowed()) {
        (Some(n), true) => format!("found @ {}", group(n)),
        (Some(n), false) => format!("**found @ {}** (forbidden)", group(n)),
        (None, true) if s.finished => "**missed**".to_string(),
        (None, _) if s.finished => "no".to_string(),
        (None, _) => "not yet".to_string(),
    }
}

/// The outcomes cell: the count, bold and marked ≠ where it differs from
/// RC11's (litmus programs only).
fn outcomes_text(program: &WeakProgram, outcome: &Outcome) -> String {
    let (WeakKind::Litmus { outcomes, .. }, Some(s)) = (program.kind, seen(outcome)) else {
        return "—".to_string();
    };
    match s.outcomes {
        Some(n) if n != outcomes && s.finished => format!("**{n}** ≠"),
        Some(n) => n.to_string(),
        None => "?".to_string(),
    }
}

fn rc11_text(program: &WeakProgram) -> &'static str {
    match program.kind {
        WeakKind::Litmus { allowed: true, .. } => "allowed",
        WeakKind::Litmus { allowed: false, .. } => "forbidden",
        WeakKind::Bug { .. } => "bug",
        WeakKind::Count { .. } => "count",
    }
}

fn render(options: &Options, rows: &[Row], elapsed: Duration, machine: &str) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "{HEADING}\n");
    let _ = writeln!(
        md,
        "Generated by `cargo run --release -p kase-bench --bin compare -- {}` (per-cell \
         timeout {} s; {}; the whole run took {:.0} s).\n",
        options.command,
        options.timeout.as_secs_f64(),
        if options.jobs == 1 {
            "one cell at a time".to_string()
        } else {
            format!("{} cells at a time", options.jobs)
        },
        elapsed.as_secs_f64()
    );
    let _ = writeln!(
        md,
        "- Machine: {machine}; its cores are shared with other work, so times are indicative."
    );
    if let Some(commit) = commit_line() {
        let _ = writeln!(md, "{commit}");
    }
    let _ = writeln!(
        md,
        "- Tools: *kase* is `Builder::new().memory_model(MemoryModel::Rc11)`, otherwise the \
         defaults (`Strategy::Por`: the revisit explorer, exactly one execution per consistent \
         execution graph; executions that end early, e.g. a spin loop stuck on a stale value, \
         are counted as *blocked*); *loom* is loom 0.7 \
         `model::Builder` with its defaults (no `LOOM_*` variable is passed on, so no \
         preemption bound) but `max_branches` raised to 10^6, exploring loom's own \
         weak-memory model.{}\n",
        if options.tools.contains(&"shuttle") {
            " *shuttle* is shuttle 0.9 `check_dfs`, which runs every ordering as `SeqCst`."
        } else {
            ""
        }
    );
    let _ = writeln!(
        md,
        "Programs: `kase-bench/src/weak_programs.rs`, one source for every tool. A litmus \
         program returns its outcome (its loads' values in thread order, then the final value \
         of every location); *weak outcome* is the one that needs weak memory, *RC11* whether \
         Rust's memory model allows it. A *bug* program asserts, and RC11 lets the assertion \
         fail. A *count* program is one of GenMC's benchmarks, run for its number of graphs \
         (GenMC's RC11 count in the *graphs* column). Columns: *graphs* the consistent RC11 execution graphs (kase's \
         `Report::traces()`; for a bug, exploration stops at it); *outcomes* the distinct \
         outcomes a tool saw (RC11's count in the *RC11 outcomes* column; **bold ≠**: a \
         finished tool saw a different number); *weak?* `found @ n`: first seen on the n-th \
         execution (for a bug, the failing one, where the tool stopped); **found … \
         (forbidden)**: the tool reported an outcome RC11 forbids; **missed**: it finished \
         without the outcome RC11 allows; `≥ n` / `>T s`: timeout after n executions.\n"
    );
    let mut header = "| program | weak outcome / bug | RC11 | RC11 outcomes | graphs |".to_string();
    let mut rule = "|---|---|---|---:|---:|".to_string();
    for &tool in &options.tools {
        if tool == "kase" {
            header.push_str(
                " kase execs | blocked | kase graphs | kase outcomes | kase time | kase weak? |",
            );
            rule.push_str("---:|---:|---:|---:|---:|---|");
        } else {
            let _ = write!(
                header,
                " {tool} execs | {tool} outcomes | {tool} time | {tool} weak? |"
            );
            rule.push_str("---:|---:|---:|---|");
        }
    }
    let _ = writeln!(md, "{header}\n{rule}");
    for row in rows {
        let p = row.program;
        let rc11_outcomes = match p.kind {
            WeakKind::Litmus { outcomes, .. } => outcomes.to_string(),
            WeakKind::Bug { .. } | WeakKind::Count { .. } => "—".to_string(),
        };
        let graphs = p.graphs.map_or("—".to_string(), group);
        let _ = write!(
            md,
            "| {} | {} | {} | {rc11_outcomes} | {graphs} |",
            p.name,
            p.shows(),
            rc11_text(p)
        );
        for (tool, outcome) in &row.cells {
            let execs = executions_text(outcome);
            let outcomes = outcomes_text(p, outcome);
            let time = time_cell(outcome, options.timeout);
            let found = found_text(p, outcome);
            if *tool == "kase" {
                let s = seen(outcome);
                let blocked = s
                    .as_ref()
                    .and_then(|s| s.blocked)
                    .map_or("—".to_string(), group);
                let kase_graphs = match (s.and_then(|s| s.graphs), p.graphs) {
                    (Some(g), Some(e)) if g != e => format!("**{}** ≠", group(g)),
                    (Some(g), _) if p.graphs.is_some() => group(g),
                    _ => "—".to_string(),
                };
                let _ = write!(
                    md,
                    " {execs} | {blocked} | {kase_graphs} | {outcomes} | {time} | {found} |"
                );
            } else {
                let _ = write!(md, " {execs} | {outcomes} | {time} | {found} |");
            }
        }
        md.push('\n');
    }
    md.push_str(&summary(options, rows));
    md
}

fn summary(options: &Options, rows: &[Row]) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "\nSummary:\n");
    for &tool in &options.tools {
        let (mut found, mut allowed, mut missed, mut forbidden, mut unfinished) =
            (0, 0, Vec::new(), Vec::new(), Vec::new());
        let mut secs = 0.0;
        for row in rows {
            let Some((_, outcome)) = row.cells.iter().find(|(t, _)| *t == tool) else {
                continue;
            };
            let p = row.program;
            let Some(s) = seen(outcome) else {
                unfinished.push(format!("{} ({})", p.name, super::describe(outcome)));
                continue;
            };
            if let Outcome::Done { secs: t, .. } = outcome {
                secs += t;
            }
            if p.allowed() {
                allowed += 1;
                if s.weak_at.is_some() {
                    found += 1;
                } else if s.finished {
                    missed.push(p.name);
                }
            } else if let Some(n) = s.weak_at {
                forbidden.push(format!("{} (@ {})", p.name, group(n)));
            }
            if matches!(outcome, Outcome::TimedOut { .. }) {
                unfinished.push(format!(
                    "{} (≥ {} executions in {})",
                    p.name,
                    group(s.executions),
                    timeout_text(options.timeout)
                ));
            }
        }
        let _ =
            writeln!(
            md,
            "- {tool}: found the weak outcome or bug on {found} of the {allowed} programs where \
             RC11 allows it; {}; {}; {} in all (finished cells).",
            if missed.is_empty() {
                "missed none".to_string()
            } else {
                format!("missed {}", missed.join(", "))
            },
            if forbidden.is_empty() {
                "reported no outcome RC11 forbids".to_string()
            } else {
                format!("**reported an outcome RC11 forbids** on {}", forbidden.join(", "))
            },
            super::time_text(secs)
        );
        if !unfinished.is_empty() {
            let _ = writeln!(md, "  - did not finish: {}.", unfinished.join("; "));
        }
    }
    // IRIW: the program whose graphs are fewest relative to its interleavings.
    for row in rows.iter().filter(|r| r.program.name.starts_with("iriw")) {
        let cells: Vec<String> = row
            .cells
            .iter()
            .map(|(tool, outcome)| {
                let Some(s) = seen(outcome) else {
                    return format!("{tool}: {}", super::describe(outcome));
                };
                format!(
                    "{tool} {} executions{}, {} distinct outcomes, in {}",
                    if s.finished { "" } else { "≥ " }.to_string() + &group(s.executions),
                    s.graphs
                        .map(|g| format!(" ({} graphs)", group(g)))
                        .unwrap_or_default(),
                    s.outcomes.map_or("?".to_string(), |n| n.to_string()),
                    time_cell(outcome, options.timeout)
                )
            })
            .collect();
        let _ = writeln!(md, "- {}: {}.", row.program.name, cells.join("; "));
    }
    md
}

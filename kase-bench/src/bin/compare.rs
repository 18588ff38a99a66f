//! Runs the benchmark programs under kase (optimal POR, without and with
//! critical-section peeking), loom and shuttle's exhaustive DFS side by side
//! and writes a Markdown table.
//!
//! ```text
//! cargo run --release -p kase-bench --bin compare -- [--quick] [--timeout SECS]
//!     [--jobs N] [--out FILE] [--tools kase,kase-peek,loom,shuttle] [FILTER ...]
//! ```
//!
//! Tools: `kase` is kase with `Builder::peeking(false)` (the catalog's
//! expected counts are defined without peeking), `kase-peek` kase with
//! `peeking(true)`, checked against the catalog's counts with peeking.
//! Each cell runs in a child process of this binary
//! (`compare --cell TOOL PROGRAM PARAMS...`), killed after the timeout
//! (default 120 s). The child reports executions, sleep-set-blocked
//! executions, the exploration's wall time and its peak resident memory
//! (`VmHWM`). A `FILTER` keeps the programs whose name contains it.
//! `--jobs N` runs N cells at a time (default 1; each tool is
//! single-threaded, but concurrent cells share caches and memory bandwidth).
//!
//! `--weak` runs the weak-memory programs instead (`catalog::WEAK_PROGRAMS`)
//! under kase with `MemoryModel::Rc11` and loom (`--tools` may add shuttle)
//! and writes the section "Weak memory (RC11)"; with `--out FILE` it
//! replaces that section of FILE (or appends it). A run without `--weak`
//! keeps the section of the file it overwrites. See `compare/weak.rs`.

use std::collections::{HashMap, VecDeque};
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Write as _};
use std::process::{Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use kase_bench::catalog::{self, group, Expected, Program, LOOM_MAX_SPAWNED, PROGRAMS};

// A crate root's modules sit beside it; this one is the binary's own.
#[path = "compare/weak.rs"]
mod weak;

const TOOLS: [&str; 4] = ["kase", "kase-peek", "loom", "shuttle"];

const USAGE: &str = "\
usage: compare [--quick] [--timeout SECS] [--jobs N] [--out FILE] [--tools kase,kase-peek,loom,shuttle] [FILTER ...]
       compare --weak [--timeout SECS] [--jobs N] [--out FILE] [--tools kase,loom,shuttle] [FILTER ...]
       compare --cell TOOL PROGRAM [PARAMS ...]
       compare --weak-cell TOOL PROGRAM
       compare --list";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("--cell") => return cell(&args[1..]),
        Some("--weak-cell") => return weak::cell(&args[1..]),
        _ => {}
    }
    match Options::parse(&args) {
        Ok(Some(options)) if options.weak => weak::compare(&options),
        Ok(Some(options)) => compare(&options),
        Ok(None) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("compare: {e}\n{USAGE}");
            ExitCode::from(2)
        }
    }
}

// ---------------------------------------------------------------------------
// The child: one tool on one program.

/// Invocations of the model closure, for every tool (loom and shuttle do not
/// return a count).
static INVOCATIONS: AtomicU64 = AtomicU64::new(0);

/// Set once a `RESULT` line has been printed (by the panic hook).
static REPORTED: AtomicBool = AtomicBool::new(false);

/// When the exploration started.
static START: OnceLock<Instant> = OnceLock::new();

/// loom aborts the process when a deadlocked execution is torn down ("panic
/// in a destructor during cleanup"), so the result is printed from the panic
/// hook as soon as loom or shuttle reports the deadlock.
fn report_deadlocks_from_the_panic_hook() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let msg = payload
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("");
        if msg.contains("deadlock") && !REPORTED.swap(true, Ordering::SeqCst) {
            let secs = START.get().map_or(0.0, |s| s.elapsed().as_secs_f64());
            println!(
                "RESULT execs={} blocked=0 secs={secs} rss_kb={} status=deadlock",
                INVOCATIONS.load(Ordering::Relaxed),
                peak_rss_kb().unwrap_or(0)
            );
        }
        default(info);
    }));
}

/// Progress for the parent every half second, so a timed-out cell still says
/// how far it got: `PROGRESS <invocations> <extra()>`. It also ends the child
/// if the parent went away (the pipe is closed).
fn report_progress(extra: fn() -> String) {
    std::thread::spawn(move || loop {
        std::thread::sleep(Duration::from_millis(500));
        let mut out = std::io::stdout().lock();
        let line = format!(
            "PROGRESS {} {}\n",
            INVOCATIONS.load(Ordering::Relaxed),
            extra()
        );
        if out
            .write_all(line.as_bytes())
            .and_then(|()| out.flush())
            .is_err()
        {
            std::process::exit(3);
        }
    });
}

fn cell(args: &[String]) -> ExitCode {
    let (Some(tool), Some(name)) = (args.first(), args.get(1)) else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let Some(program) = catalog::find(name) else {
        eprintln!("compare --cell: unknown program {name}");
        return ExitCode::from(2);
    };
    let params: Vec<usize> = match args[2..].iter().map(|a| a.parse()).collect() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("compare --cell: bad parameter: {e}");
            return ExitCode::from(2);
        }
    };
    if params.len() != program.arity {
        eprintln!(
            "compare --cell: {name} takes {} parameter(s) ({})",
            program.arity, program.params
        );
        return ExitCode::from(2);
    }
    report_progress(String::new);
    if !is_kase(tool) {
        report_deadlocks_from_the_panic_hook();
    }
    let start = *START.get_or_init(Instant::now);
    let (counts, status) = match tool.as_str() {
        "kase" => run_kase(program, params, false),
        "kase-peek" => run_kase(program, params, true),
        "loom" => run_loom(program, params),
        "shuttle" => run_shuttle(program, params),
        other => {
            eprintln!("compare --cell: unknown tool {other}");
            return ExitCode::from(2);
        }
    };
    let secs = start.elapsed().as_secs_f64();
    if REPORTED.load(Ordering::SeqCst) {
        return ExitCode::SUCCESS;
    }
    let executions = if is_kase(tool) {
        counts.executions
    } else {
        INVOCATIONS.load(Ordering::Relaxed)
    };
    println!(
        "RESULT execs={executions} blocked={} discarded={} fell_back={} secs={secs} rss_kb={} \
         status={}",
        counts.blocked,
        counts.discarded,
        u8::from(counts.fell_back),
        peak_rss_kb().unwrap_or(0),
        status.replace('\n', " ")
    );
    ExitCode::SUCCESS
}

/// `kase` or `kase-peek`.
fn is_kase(tool: &str) -> bool {
    tool == "kase" || tool == "kase-peek"
}

/// What a kase report counted (zero for loom and shuttle).
#[derive(Default)]
struct Counts {
    executions: u64,
    blocked: u64,
    /// Executions of an exploration with peeking that kase abandoned.
    discarded: u64,
    /// Peeking was asked for, but kase explored again without it.
    fell_back: bool,
}

fn run_kase(program: &'static Program, params: Vec<usize>, peeking: bool) -> (Counts, String) {
    let report = kase::Builder::new().peeking(peeking).explore(move || {
        INVOCATIONS.fetch_add(1, Ordering::Relaxed);
        (program.kase)(&params)
    });
    let status = match report.failure() {
        Some(f) => f.kind().to_string(),
        None if report.complete() => "ok".to_string(),
        None => "incomplete".to_string(),
    };
    let counts = Counts {
        executions: report.executions(),
        blocked: report.sleep_set_blocked(),
        discarded: report.discarded_executions(),
        fell_back: peeking && !report.peeking(),
    };
    (counts, status)
}

fn run_loom(program: &'static Program, params: Vec<usize>) -> (Counts, String) {
    let status = loom_check(move || (program.loom)(&params));
    (Counts::default(), status)
}

/// Explores `model` with loom, counting invocations; the status as [`catch`]
/// gives it.
fn loom_check(model: impl Fn() + Sync + Send + 'static) -> String {
    let mut builder = loom::model::Builder::new();
    // Exhaustive: no preemption bound, no budget, room for long executions.
    builder.max_branches = 1_000_000;
    builder.preemption_bound = None;
    builder.max_permutations = None;
    builder.max_duration = None;
    builder.checkpoint_file = None;
    builder.log = false;
    builder.location = false;
    catch(move || {
        builder.check(move || {
            INVOCATIONS.fetch_add(1, Ordering::Relaxed);
            model()
        })
    })
}

fn run_shuttle(program: &'static Program, params: Vec<usize>) -> (Counts, String) {
    let status = shuttle_check(move || (program.shuttle)(&params));
    (Counts::default(), status)
}

/// Explores `model` with shuttle's exhaustive DFS, counting invocations.
fn shuttle_check(model: impl Fn() + Sync + Send + 'static) -> String {
    catch(move || {
        shuttle::check_dfs(
            move || {
                INVOCATIONS.fetch_add(1, Ordering::Relaxed);
                model()
            },
            None,
        )
    })
}

/// Runs `f`; `"ok"`, `"deadlock"`, or `"panic: <message>"`.
fn catch(f: impl FnOnce()) -> String {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(()) => "ok".to_string(),
        Err(payload) => {
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "(non-string payload)".to_string());
            if msg.to_lowercase().contains("deadlock") {
                "deadlock".to_string()
            } else {
                format!("panic: {}", msg.lines().next().unwrap_or(""))
            }
        }
    }
}

/// The process's peak resident set size, from `/proc/self/status`.
fn peak_rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

// ---------------------------------------------------------------------------
// The parent: run every cell, print the table.

struct Options {
    quick: bool,
    /// Run the weak-memory programs (`--weak`).
    weak: bool,
    timeout: Duration,
    jobs: usize,
    out: Option<String>,
    tools: Vec<&'static str>,
    filters: Vec<String>,
    command: String,
}

impl Options {
    fn parse(args: &[String]) -> Result<Option<Options>, String> {
        let mut options = Options {
            quick: false,
            weak: false,
            timeout: Duration::from_secs(120),
            jobs: 1,
            out: None,
            tools: TOOLS.to_vec(),
            filters: Vec::new(),
            command: args.join(" "),
        };
        let mut tools_given = false;
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            let mut value = |name: &str| {
                args.next()
                    .cloned()
                    .ok_or_else(|| format!("{name} needs a value"))
            };
            match arg.as_str() {
                "--quick" => options.quick = true,
                "--weak" => options.weak = true,
                "--timeout" => {
                    let v = value("--timeout")?;
                    let secs: f64 = v
                        .trim_end_matches('s')
                        .parse()
                        .map_err(|_| format!("--timeout: not a number of seconds: {v}"))?;
                    options.timeout = Duration::from_secs_f64(secs);
                }
                "--out" => options.out = Some(value("--out")?),
                "--jobs" => {
                    let v = value("--jobs")?;
                    options.jobs = v
                        .parse()
                        .ok()
                        .filter(|&n| n > 0)
                        .ok_or_else(|| format!("--jobs: not a positive number: {v}"))?;
                }
                "--tools" => {
                    tools_given = true;
                    let v = value("--tools")?;
                    options.tools = v
                        .split(',')
                        .map(|t| {
                            TOOLS
                                .iter()
                                .copied()
                                .find(|k| *k == t)
                                .ok_or_else(|| format!("--tools: unknown tool {t}"))
                        })
                        .collect::<Result<_, _>>()?;
                }
                "--list" => {
                    for p in PROGRAMS {
                        println!("{} ({})", p.name, p.params);
                    }
                    for p in catalog::WEAK_PROGRAMS {
                        println!("{} (--weak)", p.name);
                    }
                    return Ok(None);
                }
                "-h" | "--help" => {
                    println!("{USAGE}");
                    return Ok(None);
                }
                flag if flag.starts_with('-') => return Err(format!("unknown option {flag}")),
                filter => options.filters.push(filter.to_string()),
            }
        }
        if options.weak {
            if !tools_given {
                options.tools = weak::DEFAULT_TOOLS.to_vec();
            }
            if options.tools.contains(&"kase-peek") {
                return Err("--weak: the tools are kase (under RC11), loom and shuttle".into());
            }
        }
        Ok(Some(options))
    }
}

/// What one cell produced.
#[derive(Clone, Debug)]
enum Outcome {
    Done {
        executions: u64,
        blocked: u64,
        /// kase with peeking: executions of an abandoned exploration.
        discarded: u64,
        /// kase with peeking fell back to exploring without it.
        fell_back: bool,
        secs: f64,
        rss_kb: u64,
        status: String,
        /// Further `key=value` fields of the child's result (`--weak`).
        extra: Vec<(String, String)>,
    },
    TimedOut {
        progress: u64,
        /// `key=value` fields of the child's last progress line.
        extra: Vec<(String, String)>,
    },
    /// A smaller instance of the same program timed out with this tool.
    Skipped,
    /// The tool cannot run the program (loom's thread limit).
    NotApplicable,
    Crashed(String),
}

struct Row {
    program: &'static Program,
    params: Vec<usize>,
    cells: Vec<(&'static str, Outcome)>,
}

/// This binary's path, to run cells in child processes of it.
fn own_executable() -> Result<std::path::PathBuf, ExitCode> {
    std::env::current_exe().map_err(|e| {
        eprintln!("compare: cannot find my own executable: {e}");
        ExitCode::FAILURE
    })
}

/// The items whose name (`name`) contains one of `filters` (all without).
fn matching<T>(items: &'static [T], name: fn(&T) -> &str, filters: &[String]) -> Vec<&'static T> {
    items
        .iter()
        .filter(|p| filters.is_empty() || filters.iter().any(|f| name(p).contains(f.as_str())))
        .collect()
}

fn compare(options: &Options) -> ExitCode {
    let exe = match own_executable() {
        Ok(e) => e,
        Err(code) => return code,
    };
    let selected = matching(PROGRAMS, |p| p.name, &options.filters);
    if selected.is_empty() {
        eprintln!("compare: no program matches {:?}", options.filters);
        return ExitCode::from(2);
    }
    let machine = machine();
    let started = Instant::now();
    let sets = |program: &Program| {
        if options.quick {
            program.quick
        } else {
            program.rows
        }
    };
    // A lane is one tool on one program: its rows run in order, so that the
    // rows after a timeout can be skipped. `--jobs` lanes run at a time.
    let lanes: Vec<(usize, &'static str)> = (0..selected.len())
        .flat_map(|p| options.tools.iter().map(move |&tool| (p, tool)))
        .collect();
    let next_lane = AtomicUsize::new(0);
    let results = Mutex::new(HashMap::new());
    std::thread::scope(|scope| {
        for _ in 0..options.jobs {
            scope.spawn(|| {
                while let Some(&(p, tool)) = lanes.get(next_lane.fetch_add(1, Ordering::SeqCst)) {
                    let program = selected[p];
                    let mut timed_out = false;
                    for (r, params) in sets(program).iter().enumerate() {
                        let outcome =
                            if tool == "loom" && (program.threads)(params) > LOOM_MAX_SPAWNED {
                                Outcome::NotApplicable
                            } else if timed_out {
                                Outcome::Skipped
                            } else {
                                run_child(&exe, tool, program, params, options.timeout)
                            };
                        timed_out |= matches!(outcome, Outcome::TimedOut { .. });
                        eprintln!(
                            "{:>20} {:<8} {:<8} {}",
                            program.name,
                            params_text(params),
                            tool,
                            describe(&outcome)
                        );
                        results.lock().unwrap().insert((p, r, tool), outcome);
                    }
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    let mut rows = Vec::new();
    for (p, &program) in selected.iter().enumerate() {
        for (r, params) in sets(program).iter().enumerate() {
            let cells = options
                .tools
                .iter()
                .map(|&tool| {
                    let outcome = results
                        .remove(&(p, r, tool))
                        .unwrap_or_else(|| Outcome::Crashed("not run".to_string()));
                    (tool, outcome)
                })
                .collect();
            rows.push(Row {
                program,
                params: params.to_vec(),
                cells,
            });
        }
    }
    let markdown = render(options, &rows, started.elapsed(), &machine);
    print!("{markdown}");
    if let Some(path) = &options.out {
        if let Err(e) = std::fs::write(path, weak::keep_section(path, &markdown)) {
            eprintln!("compare: cannot write {path}: {e}");
            return ExitCode::FAILURE;
        }
        eprintln!("wrote {path}");
    }
    ExitCode::SUCCESS
}

fn run_child(
    exe: &std::path::Path,
    tool: &str,
    program: &Program,
    params: &[usize],
    timeout: Duration,
) -> Outcome {
    let mut args = vec![
        "--cell".to_string(),
        tool.to_string(),
        program.name.to_string(),
    ];
    args.extend(params.iter().map(|p| p.to_string()));
    run_cell(exe, &args, timeout)
}

/// Runs `compare ARGS` (a cell) as a child, killed after `timeout`.
fn run_cell(exe: &std::path::Path, args: &[String], timeout: Duration) -> Outcome {
    let mut command = Command::new(exe);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // Budgets or bounds from the environment would change what is measured.
    for (key, _) in std::env::vars() {
        if key.starts_with("KASE_") || key.starts_with("LOOM_") {
            command.env_remove(key);
        }
    }
    let mut child = match command.spawn() {
        Ok(c) => c,
        Err(e) => return Outcome::Crashed(format!("spawn failed: {e}")),
    };
    let (tx, rx) = mpsc::channel();
    let stdout = child.stdout.take().expect("piped stdout");
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let stderr_tail = Arc::new(Mutex::new(VecDeque::new()));
    // The first panic's message: why a crashed child crashed (the tail is
    // often the backtrace of a later abort).
    let first_panic = Arc::new(Mutex::new(None::<String>));
    let stderr = child.stderr.take().expect("piped stderr");
    let (tail, panic) = (stderr_tail.clone(), first_panic.clone());
    let stderr_reader = std::thread::spawn(move || {
        let mut after_panic = false;
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if after_panic {
                panic.lock().unwrap().get_or_insert_with(|| line.clone());
            }
            after_panic = line.contains("panicked at");
            let mut tail = tail.lock().unwrap();
            tail.push_back(line);
            if tail.len() > 8 {
                tail.pop_front();
            }
        }
    });
    let deadline = Instant::now() + timeout;
    let mut progress = 0;
    let mut progress_extra = Vec::new();
    let mut result = None;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) => {
                if let Some(fields) = line.strip_prefix("PROGRESS ") {
                    let mut fields = fields.split_whitespace();
                    progress = fields
                        .next()
                        .and_then(|n| n.parse().ok())
                        .unwrap_or(progress);
                    progress_extra = key_values(fields);
                } else if let Some(r) = line.strip_prefix("RESULT ") {
                    result = Some(r.to_string());
                }
            }
            Err(RecvTimeoutError::Disconnected) => break,
            Err(RecvTimeoutError::Timeout) => {
                let _ = child.kill();
                let _ = child.wait();
                return Outcome::TimedOut {
                    progress,
                    extra: progress_extra,
                };
            }
        }
    }
    let status = child.wait();
    let _ = stderr_reader.join();
    match result.as_deref().and_then(parse_result) {
        Some(outcome) => outcome,
        None => {
            let tail: Vec<String> = stderr_tail.lock().unwrap().iter().cloned().collect();
            let why = match status {
                Ok(s) => s.to_string(),
                Err(e) => e.to_string(),
            };
            match first_panic.lock().unwrap().take() {
                Some(message) => Outcome::Crashed(format!("{why}: panicked: {message}")),
                None => Outcome::Crashed(format!("{why}: {}", tail.join(" / "))),
            }
        }
    }
}

fn parse_result(line: &str) -> Option<Outcome> {
    let (fields, status) = line.split_once(" status=")?;
    let mut executions = None;
    let mut blocked = None;
    let mut discarded = 0;
    let mut fell_back = false;
    let mut secs = None;
    let mut rss_kb = None;
    let mut extra = Vec::new();
    for field in fields.split_whitespace() {
        let (key, value) = field.split_once('=')?;
        match key {
            "execs" => executions = value.parse().ok(),
            "blocked" => blocked = value.parse().ok(),
            "discarded" => discarded = value.parse().ok()?,
            "fell_back" => fell_back = value == "1",
            "secs" => secs = value.parse().ok(),
            "rss_kb" => rss_kb = value.parse().ok(),
            _ => extra.push((key.to_string(), value.to_string())),
        }
    }
    Some(Outcome::Done {
        executions: executions?,
        blocked: blocked?,
        discarded,
        fell_back,
        secs: secs?,
        rss_kb: rss_kb?,
        status: status.to_string(),
        extra,
    })
}

/// The `key=value` fields among `fields`.
fn key_values<'a>(fields: impl Iterator<Item = &'a str>) -> Vec<(String, String)> {
    fields
        .filter_map(|f| f.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The value of `key` among `extra`, parsed.
fn extra_field<T: std::str::FromStr>(extra: &[(String, String)], key: &str) -> Option<T> {
    extra
        .iter()
        .find(|(k, _)| k == key)
        .and_then(|(_, v)| v.parse().ok())
}

// ---------------------------------------------------------------------------
// Rendering.

/// Dpu's time in the quasi-optimal POR paper (optimal alternatives, no
/// peeking; Xeon 2.4 GHz, 2018), where it gives one for the row.
fn dpu_published(program: &str, params: &[usize]) -> Option<&'static str> {
    Some(match (program, params) {
        ("disp", [5, 3]) => "0.9 s",
        ("disp", [5, 4]) => "7.5 s",
        ("mpat", [5]) => "2.3 s",
        ("mpat", [6]) => "62.7 s",
        ("pi", [8]) => "41 s",
        ("pol", [7, 3]) => "1.9 s",
        _ => return None,
    })
}

fn params_text(params: &[usize]) -> String {
    params
        .iter()
        .map(|p| p.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn time_text(secs: f64) -> String {
    if secs < 0.001 {
        format!("{:.0} µs", secs * 1e6)
    } else if secs < 1.0 {
        format!("{:.1} ms", secs * 1e3)
    } else if secs < 100.0 {
        format!("{secs:.2} s")
    } else {
        format!("{secs:.0} s")
    }
}

fn describe(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Done {
            executions,
            blocked,
            discarded,
            fell_back,
            secs,
            rss_kb,
            status,
            ..
        } => format!(
            "{status}: {executions} executions ({blocked} blocked), {}, {} MiB{}",
            time_text(*secs),
            rss_kb / 1024,
            if *fell_back {
                format!(
                    "; peeking abandoned after {discarded} executions, explored again without it"
                )
            } else {
                String::new()
            }
        ),
        Outcome::TimedOut { progress, .. } => format!("timed out after {progress} executions"),
        Outcome::Skipped => "skipped (a smaller instance timed out)".to_string(),
        Outcome::NotApplicable => "n/a (more than 4 spawned threads)".to_string(),
        Outcome::Crashed(why) => format!("crashed: {why}"),
    }
}

/// The executions cell: the count, or how the tool stopped; with
/// `flag_mismatch`, a finished count that differs from `expected` is bold
/// and marked ≠, and a kase exploration that abandoned peeking is marked †.
fn executions_text(outcome: &Outcome, expected: Option<Expected>, flag_mismatch: bool) -> String {
    match outcome {
        Outcome::Done {
            executions,
            status,
            fell_back,
            ..
        } => {
            let n = group(*executions);
            let dagger = if *fell_back { " †" } else { "" };
            match status.as_str() {
                "ok" => match expected {
                    Some(Expected::Traces(e)) if flag_mismatch && e != *executions => {
                        format!("**{n}** ≠{dagger}")
                    }
                    _ => format!("{n}{dagger}"),
                },
                "deadlock" => match expected {
                    Some(Expected::Deadlock { .. }) => format!("deadlock @ {n}{dagger}"),
                    _ => format!("**deadlock @ {n}**{dagger}"),
                },
                other => {
                    let kind = other.split(':').next().unwrap_or(other);
                    format!("**{kind} @ {n}**{dagger}")
                }
            }
        }
        Outcome::TimedOut { progress, .. } => format!("≥ {}", group(*progress)),
        Outcome::Skipped => "—".to_string(),
        Outcome::NotApplicable => "n/a".to_string(),
        Outcome::Crashed(_) => "**crash**".to_string(),
    }
}

/// What `tool` should find on `program(params)`: kase without peeking, loom
/// and shuttle the catalog's counts, kase with peeking the counts with
/// peeking.
fn expected_for(tool: &str, program: &Program, params: &[usize]) -> Option<Expected> {
    if tool == "kase-peek" {
        program.expected_with_peeking(params)
    } else {
        (program.expected)(params)
    }
}

fn timeout_text(timeout: Duration) -> String {
    format!(">{} s", timeout.as_secs_f64().round())
}

fn time_cell(outcome: &Outcome, timeout: Duration) -> String {
    match outcome {
        Outcome::Done { secs, .. } => time_text(*secs),
        Outcome::TimedOut { .. } => timeout_text(timeout),
        Outcome::Skipped => format!("{} (skipped)", timeout_text(timeout)),
        Outcome::NotApplicable | Outcome::Crashed(_) => "—".to_string(),
    }
}

fn secs_of(outcome: &Outcome) -> Option<f64> {
    match outcome {
        Outcome::Done { secs, status, .. } if status == "ok" || status == "deadlock" => Some(*secs),
        _ => None,
    }
}

fn executions_of(outcome: &Outcome) -> Option<u64> {
    match outcome {
        Outcome::Done {
            executions, status, ..
        } if status == "ok" => Some(*executions),
        _ => None,
    }
}

fn command_output(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn machine() -> String {
    let cpus = std::thread::available_parallelism()
        .map(|n| n.get().to_string())
        .unwrap_or_else(|_| "?".to_string());
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".to_string());
    let memory = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|info| {
            let kb: u64 = info
                .lines()
                .find(|l| l.starts_with("MemTotal:"))?
                .split_whitespace()
                .nth(1)?
                .parse()
                .ok()?;
            Some(format!(", {:.0} GiB RAM", kb as f64 / (1024.0 * 1024.0)))
        })
        .unwrap_or_default();
    let rustc = command_output("rustc", &["--version"]).unwrap_or_else(|| "rustc ?".to_string());
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_string))
        .map(|l| format!("; load average {l} when the run started"))
        .unwrap_or_default();
    format!("{cpus} CPUs (`nproc`), {cpu}{memory}; {rustc}; release build{load}")
}

/// `- kase at commit `abc1234`.`, noting uncommitted runtime changes.
fn commit_line() -> Option<String> {
    let commit = command_output("git", &["rev-parse", "--short", "HEAD"])?;
    let dirty = command_output(
        "git",
        &[
            "status",
            "--porcelain",
            "--",
            "kase-rt",
            "src",
            "Cargo.toml",
        ],
    )
    .is_some_and(|s| !s.is_empty());
    Some(format!(
        "- kase at commit `{commit}`{}.",
        if dirty {
            " (the work tree had uncommitted changes to the runtime)"
        } else {
            ""
        }
    ))
}

fn render(options: &Options, rows: &[Row], elapsed: Duration, machine: &str) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# Benchmarks: kase, loom and shuttle side by side\n");
    let _ = writeln!(
        md,
        "Generated by `cargo run --release -p kase-bench --bin compare{}{}` \
         (per-cell timeout {} s; {}; the whole run took {:.0} s).\n",
        if options.command.is_empty() {
            ""
        } else {
            " -- "
        },
        options.command,
        options.timeout.as_secs_f64(),
        if options.jobs == 1 {
            "one cell at a time".to_string()
        } else {
            format!("{} cells at a time", options.jobs)
        },
        elapsed.as_secs_f64()
    );
    let _ = writeln!(md, "- Machine: {machine}.");
    if let Some(commit) = commit_line() {
        let _ = writeln!(md, "{commit}");
    }
    let _ = writeln!(
        md,
        "- Tools: *kase* is `Strategy::Por` with optimal alternatives (the default) and \
         `Builder::peeking(false)`: no critical-section peeking, every two sections of one \
         mutex are ordered; *kase-peek* the same with `peeking(true)` (kase's default): two \
         sections of one mutex commute unless their accesses conflict or one of them does \
         other synchronisation. In both a CAS counts as a write. loom 0.7 `model::Builder` \
         with no preemption bound; shuttle 0.9 `check_dfs` (exhaustive DFS, no reduction). \
         loom and shuttle executions count invocations of the model closure.\n"
    );
    let _ = writeln!(
        md,
        "Columns: *expected* is the number of Mazurkiewicz traces (optimal executions) without \
         peeking, from the benchmark list or derived in `kase-bench/src/catalog.rs` (`≈`: far \
         too many to run; `?`: not known); *expected (peeking)* the number with peeking, where \
         known; *blocked* counts kase's sleep-set-blocked (redundant) executions; *time* is the \
         exploration's wall time measured in the child process; *RSS* its peak resident memory \
         (`VmHWM`, including the binary). `≥ n` / `>T s`: the cell hit the timeout after n \
         executions; *(skipped)*: a smaller instance already timed out; `n/a`: loom allows at \
         most 4 spawned threads; `deadlock @ n`: the tool stopped at the deadlock on its n-th \
         execution; **bold ≠**: kase's count differs from the expected one (kase-peek's from \
         the count with peeking); †: kase found that a thread could run inside a critical \
         section, abandoned peeking and explored again without it (the count includes the \
         discarded executions).\n"
    );
    let _ = writeln!(
        md,
        "Notes on the programs (their code: `kase-bench/src/programs.rs`, one source for all three \
         tools):\n\n\
         - `casrot`, `wcas`: expected counts take a compare-exchange as a write (kase does not yet \
         treat a failed CAS as a read, which would give 2, 5, 14, 43 for casrot(2..5)).\n\
         - `disjoint_sections(s)`: C(2s, s) traces without peeking, 1 with it (the two threads' \
         sections touch different atomics).\n\
         - `disjoint_write_sections(s)`: the same with the write lock of one `RwLock`.\n\
         - `indexer_shared(n)`: IndexerSafe of the peeking paper: `indexer`'s insertions into \
         128 atomics, each compare-and-swap inside a section of one shared `Mutex<()>`. Without \
         peeking every order of the 4n sections is a trace ((4n)!/(4!)^n while nothing \
         collides, n ≤ 11), so those rows time out by design; with peeking only sections on \
         one cell conflict: 1 for n ≤ 11, 8^(n−11) for n = 12..15.\n\
         - `mpat(k)`: k!·2^k without peeking; with peeking the empty sections on `ma[i]` \
         commute, k!.\n\
         - `dining_philosophers`: every tool stops at the first deadlock, so the row compares how \
         soon each finds it.\n\
         - `mpc`: each producer takes `pm` twice, then makes one request to worker `tmp % W` \
         with the `tmp` of its second round (the reading of the benchmark list's description \
         that gives its small checks, 54 and 66).\n\
         - loom models the C11 memory model (a load may read from several stores, `SeqCst` \
         included) and interleaves `spawn`/`join`, so it runs more executions even on one-trace \
         programs; shuttle's DFS has no reduction at all.\n\
         - *Dpu (paper)*: the time the quasi-optimal POR paper gives for its tool Dpu (Xeon \
         2.4 GHz, 2018, optimal alternatives, no peeking) where it has the row; another machine, \
         so only its scale compares.\n"
    );
    let peek_column = options.tools.contains(&"kase-peek");
    let mut header = "| program | params | expected |".to_string();
    let mut rule = "|---|---|---:|".to_string();
    if peek_column {
        header.push_str(" expected (peeking) |");
        rule.push_str("---:|");
    }
    header.push_str(" Dpu (paper) |");
    rule.push_str("---:|");
    for &tool in &options.tools {
        match tool {
            "kase" => {
                header.push_str(" kase execs | blocked | kase time | kase RSS |");
                rule.push_str("---:|---:|---:|---:|");
            }
            "kase-peek" => {
                header.push_str(" kase-peek execs | blocked | kase-peek time |");
                rule.push_str("---:|---:|---:|");
            }
            _ => {
                let _ = write!(header, " {tool} execs | {tool} time |");
                rule.push_str("---:|---:|");
            }
        }
    }
    let _ = writeln!(md, "{header}\n{rule}");
    let known = |e: Option<Expected>| e.map(|e| e.to_string()).unwrap_or_else(|| "?".to_string());
    for row in rows {
        let _ = write!(
            md,
            "| {} | {} | {} |",
            row.program.name,
            params_text(&row.params),
            known((row.program.expected)(&row.params))
        );
        if peek_column {
            let _ = write!(
                md,
                " {} |",
                known(row.program.expected_with_peeking(&row.params))
            );
        }
        let _ = write!(
            md,
            " {} |",
            dpu_published(row.program.name, &row.params).unwrap_or("")
        );
        for (tool, outcome) in &row.cells {
            let expected = expected_for(tool, row.program, &row.params);
            let execs = executions_text(outcome, expected, is_kase(tool));
            let time = time_cell(outcome, options.timeout);
            let blocked = match outcome {
                Outcome::Done { blocked, .. } => group(*blocked),
                _ => "—".to_string(),
            };
            match *tool {
                "kase" => {
                    let rss = match outcome {
                        Outcome::Done { rss_kb, .. } => {
                            format!("{:.1} MiB", *rss_kb as f64 / 1024.0)
                        }
                        _ => "—".to_string(),
                    };
                    let _ = write!(md, " {execs} | {blocked} | {time} | {rss} |");
                }
                "kase-peek" => {
                    let _ = write!(md, " {execs} | {blocked} | {time} |");
                }
                _ => {
                    let _ = write!(md, " {execs} | {time} |");
                }
            }
        }
        md.push('\n');
    }
    md.push_str(&summary(options, rows));
    let crashes: Vec<String> = rows
        .iter()
        .flat_map(|row| {
            row.cells
                .iter()
                .filter_map(move |(tool, outcome)| match outcome {
                    Outcome::Crashed(why) => Some(format!(
                        "- {tool} on {}({}): {why}",
                        row.program.name,
                        params_text(&row.params)
                    )),
                    Outcome::Done { status, .. } if status.starts_with("panic") => Some(format!(
                        "- {tool} on {}({}): {status}",
                        row.program.name,
                        params_text(&row.params)
                    )),
                    _ => None,
                })
        })
        .collect();
    if !crashes.is_empty() {
        let _ = writeln!(md, "\n## Cells that failed or crashed\n");
        for c in crashes {
            let _ = writeln!(md, "{c}");
        }
    }
    md
}

/// The outcome of `tool` on `row`, if it ran.
fn cell_of<'r>(row: &'r Row, tool: &str) -> Option<&'r Outcome> {
    row.cells.iter().find(|(t, _)| *t == tool).map(|(_, o)| o)
}

/// `program(params)`.
fn label(row: &Row) -> String {
    format!("{}({})", row.program.name, params_text(&row.params))
}

/// How far a kase tool's counts match the expected ones: one line, the rows
/// that differ, and the rows it did not finish.
fn exact_counts(options: &Options, rows: &[Row], tool: &str, what: &str) -> String {
    let mut md = String::new();
    let mut checked = 0;
    let mut mismatches = Vec::new();
    let mut unfinished = Vec::new();
    for row in rows {
        let Some(outcome) = cell_of(row, tool) else {
            continue;
        };
        match (expected_for(tool, row.program, &row.params), outcome) {
            (
                Some(Expected::Traces(e)),
                Outcome::Done {
                    executions,
                    status,
                    fell_back,
                    ..
                },
            ) => {
                checked += 1;
                if status != "ok" || *executions != e || *fell_back {
                    mismatches.push(format!(
                        "{} (expected {}, {tool} {} with status {status}{})",
                        label(row),
                        group(e),
                        group(*executions),
                        if *fell_back {
                            ", peeking abandoned"
                        } else {
                            ""
                        }
                    ));
                }
            }
            (Some(Expected::Deadlock { .. }), Outcome::Done { status, .. }) => {
                checked += 1;
                if status != "deadlock" {
                    mismatches.push(format!(
                        "{} (expected a deadlock, {tool}: {status})",
                        label(row)
                    ));
                }
            }
            (_, Outcome::TimedOut { progress, .. }) => {
                unfinished.push(format!("{} (≥ {})", label(row), group(*progress)))
            }
            (_, Outcome::Skipped) => unfinished.push(format!("{} (skipped)", label(row))),
            (_, Outcome::Crashed(_)) => mismatches.push(format!("{} ({tool} crashed)", label(row))),
            _ => {}
        }
    }
    let _ = writeln!(
        md,
        "- Exact counts, {what}: {tool}'s executions equal the expected trace count on {} of the \
         {checked} rows it finished that have a known count.",
        checked - mismatches.len(),
    );
    for m in &mismatches {
        let _ = writeln!(md, "  - **differs:** {m}");
    }
    if !unfinished.is_empty() {
        let _ = writeln!(
            md,
            "  - {tool} did not finish within {} s on: {}.",
            options.timeout.as_secs_f64(),
            unfinished.join("; ")
        );
    }
    md
}

/// `n thing` or `n things`, with `n` grouped.
fn counted(n: u64, thing: &str) -> String {
    format!("{} {thing}{}", group(n), if n == 1 { "" } else { "s" })
}

/// `a / b` as a factor: `12 870×`, `3.5×`.
fn factor_text(a: f64, b: f64) -> String {
    let f = a / b.max(1e-9);
    if f >= 10.0 {
        format!("{}×", group(f.round() as u64))
    } else {
        format!("{f:.1}×")
    }
}

/// What peeking changed: rows with fewer executions (and the factor), rows
/// only peeking finished, rows where it cost executions or time.
fn peeking_summary(options: &Options, rows: &[Row]) -> String {
    let mut md = String::new();
    let mut reduced = Vec::new();
    let mut only_peek = Vec::new();
    let mut more = Vec::new();
    let mut fell_back = Vec::new();
    let mut blocked = Vec::new();
    let mut same_time_ratios = Vec::new();
    for row in rows {
        let (Some(plain), Some(peek)) = (cell_of(row, "kase"), cell_of(row, "kase-peek")) else {
            continue;
        };
        if let Outcome::Done {
            fell_back: true,
            discarded,
            ..
        } = peek
        {
            fell_back.push(format!(
                "{} (after {} executions)",
                label(row),
                group(*discarded)
            ));
        }
        if let Outcome::Done { blocked: b, .. } = peek {
            if *b > 0 {
                blocked.push(format!("{} ({})", label(row), group(*b)));
            }
        }
        let peek_secs = secs_of(peek);
        match (executions_of(plain), executions_of(peek)) {
            (Some(p), Some(k)) if k < p => reduced.push(format!(
                "{} ({} → {}, {}; time {} → {})",
                label(row),
                group(p),
                group(k),
                factor_text(p as f64, k as f64),
                secs_of(plain).map_or("?".to_string(), time_text),
                peek_secs.map_or("?".to_string(), time_text),
            )),
            (Some(p), Some(k)) if k > p => {
                more.push(format!("{} ({} → {})", label(row), group(p), group(k)))
            }
            (Some(_), Some(_)) => {
                if let (Some(a), Some(b)) = (secs_of(plain), peek_secs) {
                    same_time_ratios.push(b / a.max(1e-9));
                }
            }
            (None, Some(k)) => {
                let without = match plain {
                    Outcome::TimedOut { progress, .. } => format!(
                        "without peeking ≥ {} executions in {}",
                        group(*progress),
                        timeout_text(options.timeout)
                    ),
                    Outcome::Skipped => "without peeking skipped after a timeout".to_string(),
                    other => format!("without peeking: {}", describe(other)),
                };
                only_peek.push(format!(
                    "{} ({} in {}; {without})",
                    label(row),
                    counted(k, "execution"),
                    peek_secs.map_or("?".to_string(), time_text)
                ));
            }
            _ => {}
        }
    }
    let _ = writeln!(md, "- Critical-section peeking (kase-peek against kase):");
    if reduced.is_empty() {
        let _ = writeln!(md, "  - reduced the executions on no row both finished.");
    } else {
        let _ = writeln!(
            md,
            "  - fewer executions on {}: {}.",
            counted(reduced.len() as u64, "row"),
            reduced.join("; ")
        );
    }
    if !only_peek.is_empty() {
        let _ = writeln!(
            md,
            "  - finished only with peeking on {}: {}.",
            counted(only_peek.len() as u64, "row"),
            only_peek.join("; ")
        );
    }
    if !more.is_empty() {
        let _ = writeln!(
            md,
            "  - **more executions with peeking** on: {}.",
            more.join("; ")
        );
    }
    if !fell_back.is_empty() {
        let _ = writeln!(
            md,
            "  - peeking abandoned (a thread could run inside a section) on: {}.",
            fell_back.join("; ")
        );
    }
    if !blocked.is_empty() {
        let _ = writeln!(
            md,
            "  - sleep-set-blocked executions with peeking on: {}.",
            blocked.join("; ")
        );
    }
    same_time_ratios.sort_by(f64::total_cmp);
    if let Some(median) = same_time_ratios.get(same_time_ratios.len() / 2) {
        let _ = writeln!(
            md,
            "  - on the {} rows where peeking left the count unchanged, the median time with \
             peeking was {median:.2}× the time without.",
            same_time_ratios.len()
        );
    }
    md
}

fn summary(options: &Options, rows: &[Row]) -> String {
    let mut md = String::new();
    let kase_tools: Vec<&str> = ["kase", "kase-peek"]
        .into_iter()
        .filter(|t| options.tools.contains(t))
        .collect();
    if kase_tools.is_empty() {
        return md;
    }
    let _ = writeln!(md, "\n## Summary\n");
    for tool in &kase_tools {
        let what = if *tool == "kase" {
            "without peeking"
        } else {
            "with peeking"
        };
        md.push_str(&exact_counts(options, rows, tool, what));
    }
    if kase_tools.len() == 2 {
        md.push_str(&peeking_summary(options, rows));
    }
    if !options.tools.contains(&"kase") {
        return md;
    }
    for peer in ["loom", "shuttle"] {
        if !options.tools.contains(&peer) {
            continue;
        }
        let mut slower = Vec::new();
        let mut more = Vec::new();
        let mut ratios = Vec::new();
        for row in rows {
            let (Some(kase), Some(other)) = (cell_of(row, "kase"), cell_of(row, peer)) else {
                continue;
            };
            if let (Some(k), Some(o)) = (secs_of(kase), secs_of(other)) {
                if k > o {
                    slower.push(format!(
                        "{} ({} vs {})",
                        label(row),
                        time_text(k),
                        time_text(o)
                    ));
                }
                ratios.push(o / k.max(1e-9));
            }
            if let (Some(k), Some(o)) = (executions_of(kase), executions_of(other)) {
                if k > o {
                    more.push(format!("{} ({} vs {})", label(row), group(k), group(o)));
                }
            }
            if let (Some(k), Outcome::TimedOut { .. } | Outcome::Skipped) = (secs_of(kase), other) {
                ratios.push(options.timeout.as_secs_f64() / k.max(1e-9));
            }
        }
        ratios.sort_by(f64::total_cmp);
        if let Some(median) = ratios.get(ratios.len() / 2) {
            let _ = writeln!(
                md,
                "- kase (without peeking) vs {peer}: median speed-up {median:.0}× over {} rows \
                 both finished or {peer} timed out (a timeout counts as the timeout, so it \
                 understates).",
                ratios.len()
            );
        }
        if slower.is_empty() {
            let _ = writeln!(md, "  - kase was never slower than {peer}.");
        } else {
            let _ = writeln!(md, "  - kase slower than {peer} on: {}.", slower.join("; "));
        }
        if !more.is_empty() {
            let _ = writeln!(
                md,
                "  - kase explored more executions than {peer} on: {}.",
                more.join("; ")
            );
        }
    }
    md
}

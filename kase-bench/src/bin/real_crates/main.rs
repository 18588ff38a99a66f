//! Published crates' own loom suites, under loom and under kase (through
//! the drop-in `kase-loom`), side by side.
//!
//! ```text
//! cargo run --release -p kase-bench --bin real_crates [-- --work DIR] [--only CRATE] [--timeout SECS] [--mutants] [--out BENCHMARKS.md]
//! ```
//!
//! For each pinned crate it fetches the published source with cargo (a
//! scratch project that depends on the exact versions: `cargo fetch`, then
//! `cargo metadata` for the source directories), copies it twice into the
//! work directory (default `target/real-crates/`): `<crate>-loom`
//! unchanged, `<crate>-kase` with only the `loom` dependency table pointed
//! at `kase-loom`. Each copy gets an empty `[workspace]` table (and, where
//! a dependency has a loom feature of its own, a `[patch.crates-io]` entry
//! for the sibling copy, so that both use the same loom). Then it builds
//! each copy's loom test target the way the crate's CI runs it
//! (`cargo test --release --no-run`, one target directory per variant),
//! runs each test of the binary alone (`--exact NAME --test-threads=1
//! --nocapture`) under a timeout (default 300 s per test), under each tool
//! in turn, and times those runs alone (`run_side_by_side`). With `--out
//! FILE` the table
//! replaces the section "Real crates' loom suites" of FILE.
//!
//! With `--mutants` it runs the injected bugs of `mutants.rs` instead:
//! each is applied to both copies, the suite runs again under each tool,
//! and the table (which tool finds which bug) replaces the section
//! "Injected bugs in real crates".

mod mutants;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use kase_bench::real_crates::{
    listed_tests, locked_versions, manifest_dir, parse_test_output, point_loom_at_kase, standalone,
    TestOutcome,
};

const HEADING: &str = "## Real crates' loom suites";
const MUTANTS_HEADING: &str = "## Injected bugs in real crates";

/// One crate's loom suite as its CI runs it.
struct Suite {
    name: &'static str,
    version: &'static str,
    /// Arguments of `cargo test` that select the loom target and features.
    args: &'static [&'static str],
    rustflags: &'static str,
    env: &'static [(&'static str, &'static str)],
    /// Dependencies with a loom feature: patched to the sibling copy.
    patches: &'static [&'static str],
    /// Fetched and copied only, for another suite's `patches` (a
    /// dependency whose loom must be the same as its dependent's).
    dependency_only: bool,
    /// Where the settings come from.
    source: &'static str,
}

const SUITES: &[Suite] = &[
    Suite {
        name: "concurrent-queue",
        version: "2.5.0",
        args: &["--test", "loom", "--features", "loom"],
        rustflags: "--cfg loom",
        env: &[("LOOM_MAX_PREEMPTIONS", "2")],
        patches: &[],
        dependency_only: false,
        source: "smol-rs/concurrent-queue ci.yml, job test, step \"Run with Loom enabled\" (its \
                 job loom uses 4 preemptions)",
    },
    Suite {
        name: "oneshot",
        version: "0.1.13",
        args: &["--test", "loom", "--features", "loom"],
        rustflags: "--cfg oneshot_loom",
        env: &[("LOOM_MAX_BRANCHES", "100000")],
        patches: &[],
        dependency_only: false,
        source: "faern/oneshot build-and-test.yml (LOOM_MAX_BRANCHES; the cfg is `oneshot_loom` \
                 with the `loom` feature since 0.1.8, per its CHANGELOG)",
    },
    Suite {
        name: "parking",
        version: "2.2.1",
        args: &["--test", "loom", "--features", "loom"],
        rustflags: "--cfg loom",
        env: &[("LOOM_MAX_PREEMPTIONS", "2")],
        patches: &[],
        dependency_only: false,
        source: "smol-rs/parking ci.yml",
    },
    Suite {
        name: "sharded-slab",
        version: "0.1.7",
        args: &["--lib"],
        rustflags: "--cfg loom -C debug-assertions=on",
        env: &[
            ("LOOM_MAX_PREEMPTIONS", "2"),
            ("LOOM_CHECKPOINT_INTERVAL", "1"),
            ("LOOM_LOCATION", "1"),
        ],
        patches: &[],
        dependency_only: false,
        source: "hawkw/sharded-slab ci.yml → bin/loom.sh (its LOOM_LOG=1 is replaced by the \
                 harness's LOOM_LOG)",
    },
    Suite {
        name: "event-listener",
        version: "5.4.2",
        args: &["--test", "loom", "--features", "loom"],
        rustflags: "--cfg loom",
        env: &[("LOOM_MAX_PREEMPTIONS", "2")],
        patches: &["parking"],
        dependency_only: false,
        source: "smol-rs's loom step (as concurrent-queue's and parking's; event-listener's own \
                 5.x workflow is not in the index)",
    },
    Suite {
        name: "bytes",
        version: "1.12.2",
        args: &["--lib"],
        rustflags: "--cfg loom",
        env: &[],
        patches: &[],
        dependency_only: false,
        source: "tokio-rs/bytes ci.yml, job loom (its `-Dwarnings` and nightly toolchain left \
                 out, for both tools)",
    },
    Suite {
        name: "left-right",
        version: "0.11.8",
        args: &["--test", "loom"],
        rustflags: "--cfg loom",
        env: &[("LOOM_MAX_PREEMPTIONS", "3")],
        patches: &[],
        dependency_only: false,
        source: "left-right's safety.yml (shipped in the crate), job loom",
    },
    Suite {
        name: "crossbeam-epoch",
        version: "0.9.21",
        args: &["--test", "loom", "--features", "loom"],
        rustflags: "--cfg crossbeam_loom --cfg crossbeam_sanitize",
        env: &[("LOOM_MAX_PREEMPTIONS", "2")],
        patches: &["crossbeam-utils"],
        dependency_only: false,
        source: "crossbeam-rs/crossbeam ci/crossbeam-epoch-loom.sh (its `loom` feature turns on \
                 crossbeam-utils' loom, so crossbeam-utils is patched to a sibling copy)",
    },
    Suite {
        name: "crossbeam-utils",
        version: "0.8.23",
        args: &[],
        rustflags: "--cfg crossbeam_loom",
        env: &[],
        patches: &[],
        dependency_only: true,
        source: "a dependency of crossbeam-epoch's copies only",
    },
    Suite {
        name: "diatomic-waker",
        version: "0.2.3",
        args: &["--lib", "--all-features"],
        rustflags: "--cfg diatomic_waker_loom",
        env: &[("LOOM_MAX_PREEMPTIONS", "2")],
        patches: &[],
        dependency_only: false,
        source: "asynchronics/diatomic-waker ci.yml (shipped in the crate), job loom-light (its \
                 `-Dwarnings` left out; its manual loom.yml runs the same without a preemption \
                 bound)",
    },
    Suite {
        name: "tachyonix",
        version: "0.3.1",
        args: &["--lib"],
        rustflags: "--cfg tachyonix_loom",
        env: &[],
        patches: &[],
        dependency_only: false,
        source: "asynchronics/tachyonix ci.yml (shipped in the crate), job loom",
    },
    Suite {
        name: "st3",
        version: "0.4.1",
        args: &["--tests"],
        rustflags: "--cfg st3_loom",
        env: &[("LOOM_MAX_PREEMPTIONS", "3")],
        patches: &[],
        dependency_only: false,
        source: "asynchronics/st3 ci.yml (shipped in the crate), job loom (loom 0.5 under loom)",
    },
];

/// The two variants of every crate.
const VARIANTS: [&str; 2] = ["kase", "loom"];

/// One variant's run of one suite.
struct Run {
    /// `Err(first error line)` if the suite did not compile.
    built: Result<(), String>,
    tests: BTreeMap<String, TestOutcome>,
    time: Option<Duration>,
    /// The tests killed at the timeout.
    timed_out: Vec<String>,
    /// The tests whose binary ended with an error other than a failed test
    /// (a crash), with its exit status.
    status: Vec<String>,
    /// The versions of loom (or kase-loom) the build used.
    loom: Vec<String>,
}

impl Run {
    fn new() -> Self {
        Run {
            built: Ok(()),
            tests: BTreeMap::new(),
            time: None,
            timed_out: Vec::new(),
            status: Vec::new(),
            loom: Vec::new(),
        }
    }
}

struct Options {
    work: PathBuf,
    only: String,
    timeout: Duration,
    mutants: bool,
    out: Option<String>,
}

fn main() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("kase-bench is in the repository")
        .to_path_buf();
    let options = options(&repo);
    fs::create_dir_all(&options.work).expect("create the work directory");
    let work = options.work.canonicalize().expect("work directory");
    let suites: Vec<&Suite> = SUITES
        .iter()
        .filter(|s| !s.dependency_only && s.name.contains(&options.only))
        .collect();
    // All crates are fetched and copied: a suite may patch in another's
    // copy (event-listener uses parking's).
    let all: Vec<&Suite> = SUITES.iter().collect();
    let sources = fetch(&work, &all);
    let kase_loom = repo.join("kase-loom");
    for suite in &all {
        copy_variants(suite, &sources[suite.name], &work, &kase_loom);
    }
    if options.mutants {
        let md = mutants::run(&suites, &work, options.timeout);
        print!("{md}");
        if let Some(path) = &options.out {
            let command = command_line(&options, path);
            let section = mutants_section(&command, &md);
            write_section(path, MUTANTS_HEADING, &section);
        }
        return;
    }
    let mut results = Vec::new();
    for suite in &suites {
        results.push((*suite, run_side_by_side(suite, &work, options.timeout)));
    }
    let md = table(&results, options.timeout);
    print!("{md}");
    if let Some(path) = &options.out {
        let command = command_line(&options, path);
        let section = section(&command, &md, &suites);
        write_section(path, HEADING, &section);
    }
}

/// The command that regenerates the section written to `path`.
fn command_line(options: &Options, path: &str) -> String {
    let mut command = String::from("cargo run --release -p kase-bench --bin real_crates --");
    if !options.only.is_empty() {
        let _ = write!(command, " --only {}", options.only);
    }
    let _ = write!(command, " --timeout {}", options.timeout.as_secs());
    if options.mutants {
        command.push_str(" --mutants");
    }
    let _ = write!(command, " --out {path}");
    command
}

/// Replaces the section `heading` of the file `path` with `section`.
fn write_section(path: &str, heading: &str, section: &str) {
    let text = fs::read_to_string(path).unwrap_or_default();
    fs::write(path, kase_bench::replace_section(&text, heading, section))
        .expect("write the output file");
    eprintln!("wrote the section \"{heading}\" of {path}");
}

fn options(repo: &Path) -> Options {
    let mut options = Options {
        work: repo.join("target").join("real-crates"),
        only: String::new(),
        timeout: Duration::from_secs(300),
        mutants: false,
        out: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || {
            args.next()
                .unwrap_or_else(|| usage(&format!("{arg} needs a value")))
        };
        match arg.as_str() {
            "--work" => options.work = PathBuf::from(value()),
            "--only" => options.only = value(),
            "--timeout" => {
                let secs = value()
                    .parse()
                    .unwrap_or_else(|_| usage("--timeout needs seconds"));
                options.timeout = Duration::from_secs(secs);
            }
            "--out" => options.out = Some(value()),
            "--mutants" => options.mutants = true,
            other => usage(&format!("unknown argument {other}")),
        }
    }
    options
}

fn usage(problem: &str) -> ! {
    eprintln!(
        "usage: real_crates [--work DIR] [--only CRATE] [--timeout SECS] [--mutants] [--out FILE] \
         ({problem})"
    );
    std::process::exit(2);
}

/// The published sources of `suites`' crates: a scratch project pins them,
/// `cargo fetch` downloads them, `cargo metadata` says where they are.
fn fetch(work: &Path, suites: &[&Suite]) -> BTreeMap<&'static str, PathBuf> {
    let scratch = work.join("fetch");
    fs::create_dir_all(scratch.join("src")).expect("create the scratch project");
    let mut manifest = String::from(
        "[package]\nname = \"real-crates-fetch\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\
         publish = false\n\n[workspace]\n\n[dependencies]\n",
    );
    for suite in suites {
        let _ = writeln!(manifest, "{} = \"={}\"", suite.name, suite.version);
    }
    fs::write(scratch.join("Cargo.toml"), manifest).expect("write the scratch manifest");
    fs::write(scratch.join("src/lib.rs"), "").expect("write the scratch lib");
    let cargo = |args: &[&str]| {
        let output = cargo(&scratch)
            .args(args)
            .stderr(Stdio::inherit())
            .output()
            .expect("run cargo");
        assert!(output.status.success(), "cargo {args:?} failed");
        String::from_utf8(output.stdout).expect("utf-8")
    };
    cargo(&["fetch"]);
    let metadata = cargo(&["metadata", "--format-version", "1"]);
    suites
        .iter()
        .map(|suite| {
            let dir = manifest_dir(&metadata, suite.name, suite.version).unwrap_or_else(|| {
                panic!("{} {} not in cargo metadata", suite.name, suite.version)
            });
            (suite.name, PathBuf::from(dir))
        })
        .collect()
}

/// A `cargo` command in `dir`, without the variables of the `cargo run`
/// that started this binary.
fn cargo(dir: &Path) -> Command {
    let mut command = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    command.current_dir(dir);
    for var in [
        "CARGO_TARGET_DIR",
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_BUILD_RUSTFLAGS",
        "CARGO_MANIFEST_DIR",
        "CARGO_PKG_NAME",
    ] {
        command.env_remove(var);
    }
    command
}

/// `<crate>-loom` and `<crate>-kase` under `work`, fresh copies of `source`.
fn copy_variants(suite: &Suite, source: &Path, work: &Path, kase_loom: &Path) {
    let manifest = fs::read_to_string(source.join("Cargo.toml")).expect("read the manifest");
    for variant in VARIANTS {
        let dir = work.join(format!("{}-{variant}", suite.name));
        if dir.exists() {
            fs::remove_dir_all(&dir).expect("remove the old copy");
        }
        copy_dir(source, &dir);
        // sharded-slab pins a toolchain with extra targets: use the
        // machine's (the same for both variants).
        let _ = fs::remove_file(dir.join("rust-toolchain.toml"));
        let manifest = match variant {
            "kase" => point_loom_at_kase(&manifest, kase_loom.to_str().expect("utf-8 path"))
                .unwrap_or_else(|e| panic!("{}: {e}", suite.name)),
            _ => manifest.clone(),
        };
        let patches: Vec<(&str, String)> = suite
            .patches
            .iter()
            .map(|name| {
                let path = work.join(format!("{name}-{variant}"));
                (*name, path.to_str().expect("utf-8 path").to_owned())
            })
            .collect();
        fs::write(dir.join("Cargo.toml"), standalone(&manifest, &patches))
            .expect("write the manifest");
    }
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).expect("create a directory");
    for entry in fs::read_dir(from).expect("read a directory") {
        let entry = entry.expect("directory entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).expect("copy a file");
        }
    }
}

/// Builds and runs one variant of `suite` (the mutants' runs: their
/// verdicts, not their times, are compared).
pub(crate) fn run_suite(suite: &Suite, variant: &str, work: &Path, timeout: Duration) -> Run {
    let (mut run, tests) = build(suite, variant, work);
    let dir = variant_dir(suite, variant, work);
    let mut total = Duration::ZERO;
    for (exe, name) in &tests {
        let first = run_binary(exe, name, &dir, suite, timeout);
        total += record(&mut run, name, first);
    }
    run.time = Some(total);
    run
}

/// Builds both variants of `suite`, then runs each test under both tools
/// in turn, so that neither tool's runs meet the other's build or a
/// different spell of the machine's load: a passing test that took under
/// `SHORT` runs `SHORT_RUNS` times under each tool, alternately, and
/// counts its median time.
fn run_side_by_side(suite: &Suite, work: &Path, timeout: Duration) -> BTreeMap<&'static str, Run> {
    let mut built: Vec<(&'static str, Run, Vec<Test>)> = VARIANTS
        .iter()
        .map(|&variant| {
            eprintln!("== {} {} under {variant}", suite.name, suite.version);
            let (run, tests) = build(suite, variant, work);
            (variant, run, tests)
        })
        .collect();
    // The binaries just written are flushed before anything is timed.
    let _ = Command::new("sync").status();
    let mut names: Vec<String> = Vec::new();
    for (_, _, tests) in &built {
        for (_, name) in tests {
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
    }
    let mut totals = vec![Duration::ZERO; built.len()];
    for name in &names {
        // Each tool's first run, whose output counts; the times of a test
        // that runs again, by tool (`None`: its time is counted already).
        let mut repeated: Vec<Option<Vec<Duration>>> = vec![None; built.len()];
        for (i, (variant, run, tests)) in built.iter_mut().enumerate() {
            let Some((exe, _)) = tests.iter().find(|(_, n)| n == name) else {
                continue;
            };
            let dir = variant_dir(suite, variant, work);
            let time = record(run, name, run_binary(exe, name, &dir, suite, timeout));
            // Only a passing test runs again: a failing one under kase
            // replays its saved schedule at once the second time.
            if run.tests[name].passed == Some(true) && time < SHORT {
                repeated[i] = Some(vec![time]);
            } else {
                totals[i] += time;
            }
        }
        for _ in 1..SHORT_RUNS {
            for ((variant, _, tests), times) in built.iter().zip(repeated.iter_mut()) {
                let (Some(times), Some((exe, _))) =
                    (times.as_mut(), tests.iter().find(|(_, n)| n == name))
                else {
                    continue;
                };
                let dir = variant_dir(suite, variant, work);
                times.push(run_binary(exe, name, &dir, suite, timeout).1);
            }
        }
        for (total, times) in totals.iter_mut().zip(repeated) {
            if let Some(mut times) = times {
                times.sort();
                *total += times[times.len() / 2];
            }
        }
    }
    built
        .into_iter()
        .zip(totals)
        .map(|((variant, mut run, _), total)| {
            run.time = run.built.is_ok().then_some(total);
            (variant, run)
        })
        .collect()
}

/// A test to run: its binary and its name.
type Test = (String, String);

/// Where `variant`'s copy of `suite` lives.
fn variant_dir(suite: &Suite, variant: &str, work: &Path) -> PathBuf {
    work.join(format!("{}-{variant}", suite.name))
}

/// Builds one variant of `suite`: its run so far (the loom version, or
/// the first error if it does not compile) and its tests, each with its
/// binary.
fn build(suite: &Suite, variant: &str, work: &Path) -> (Run, Vec<Test>) {
    let dir = variant_dir(suite, variant, work);
    let target = work.join(format!("target-{variant}"));
    let configure = |command: &mut Command| {
        command
            .env("CARGO_TARGET_DIR", &target)
            .env("RUSTFLAGS", suite.rustflags)
            .args(["test", "--release", "--no-run"])
            .args(suite.args);
    };
    let mut build = cargo(&dir);
    configure(&mut build);
    build.arg("--message-format=json").stderr(Stdio::inherit());
    let output = build.output().expect("run cargo test --no-run");
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        // Again without JSON, for the compiler's first error in plain text.
        let mut again = cargo(&dir);
        configure(&mut again);
        let errors = again.output().expect("run cargo test --no-run");
        let stderr = String::from_utf8_lossy(&errors.stderr);
        let first = stderr
            .lines()
            .find(|l| l.starts_with("error"))
            .unwrap_or("build failed")
            .to_owned();
        eprintln!("{stderr}");
        let run = Run {
            built: Err(first),
            ..Run::new()
        };
        return (run, Vec::new());
    }
    let executables: Vec<String> = kase_bench::real_crates::json_strings(&stdout, "executable");
    let mut run = Run::new();
    let lock = fs::read_to_string(dir.join("Cargo.lock")).unwrap_or_default();
    run.loom = locked_versions(&lock, "loom");
    run.loom.extend(
        locked_versions(&lock, "kase-loom")
            .into_iter()
            .map(|v| format!("kase-loom {v}")),
    );
    // One run per test, so that a test that hits the timeout does not
    // keep the others from running.
    let mut tests = Vec::new();
    for exe in executables {
        let list = Command::new(&exe)
            .current_dir(&dir)
            .arg("--list")
            .output()
            .expect("list the tests");
        for name in listed_tests(&String::from_utf8_lossy(&list.stdout)) {
            tests.push((exe.clone(), name));
        }
    }
    (run, tests)
}

/// Records a test's first run (`run_binary`'s result) in `run`; its time.
fn record(
    run: &mut Run,
    name: &str,
    (output, time, status, timed_out): (String, Duration, Option<String>, bool),
) -> Duration {
    print!("{output}");
    let outcome = parse_test_output(&output).remove(name).unwrap_or_default();
    if timed_out {
        run.timed_out.push(name.to_owned());
    } else if let (Some(status), None, false) = (status, outcome.passed, outcome.ignored) {
        // Neither passed nor failed: the binary crashed.
        run.status.push(format!("`{name}` crashed: {status}"));
    }
    run.tests.insert(name.to_owned(), outcome);
    time
}

/// A passing test that took less is mostly the process's start and the
/// machine's noise (a few milliseconds either way): it runs `SHORT_RUNS`
/// times under each tool and counts its median time.
const SHORT: Duration = Duration::from_secs(1);
const SHORT_RUNS: usize = 5;

/// Runs one test of a test binary as cargo would (in the package's directory), with its
/// stdout and stderr in one file so that their lines stay in order; kills it
/// after `timeout`. Its output, run time, exit status (if not success) and
/// whether it timed out.
fn run_binary(
    exe: &str,
    test: &str,
    dir: &Path,
    suite: &Suite,
    timeout: Duration,
) -> (String, Duration, Option<String>, bool) {
    let log_path = dir.join("real-crates-test-output.txt");
    let log = fs::File::create(&log_path).expect("create the output file");
    let mut command = Command::new(exe);
    command
        .current_dir(dir)
        .args(["--exact", test, "--test-threads=1", "--nocapture"])
        .envs(suite.env.iter().copied())
        // Each tool's count of executions per model: kase's summary line,
        // loom's "Completed in N iterations".
        .env("KASE_PROGRESS", "1")
        .env("LOOM_LOG", "loom::model=info")
        .env_remove("RUST_LOG")
        // Only a panic reads them, and printing its backtrace (about 0.1 s,
        // most of it inflating std's compressed debug information) would
        // be timed as the tool's: oneshot's CI, whose test fails under
        // kase, sets neither.
        .env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LIB_BACKTRACE")
        .stdin(Stdio::null())
        .stdout(log.try_clone().expect("clone the file"))
        .stderr(log);
    let start = Instant::now();
    let mut child = command.spawn().expect("run the test binary");
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the test binary") {
            break status;
        }
        if start.elapsed() >= timeout {
            timed_out = true;
            let _ = child.kill();
            break child.wait().expect("wait for the killed test binary");
        }
        // Poll often while the test is young, so a short test's time is
        // not rounded up to the polling interval (at most 1 % of the time
        // so far, between 100 µs and 20 ms).
        let pause =
            (start.elapsed() / 100).clamp(Duration::from_micros(100), Duration::from_millis(20));
        std::thread::sleep(pause);
    };
    let time = start.elapsed();
    let mut output = String::new();
    fs::File::open(&log_path)
        .and_then(|mut f| {
            let mut bytes = Vec::new();
            f.read_to_end(&mut bytes)?;
            output = String::from_utf8_lossy(&bytes).into_owned();
            Ok(())
        })
        .expect("read the test output");
    let status = (!status.success()).then(|| status.to_string());
    (output, time, status, timed_out)
}

/// Whether a test ran to its end (passed, failed or ignored).
fn finished(t: &TestOutcome) -> bool {
    t.ignored || t.passed.is_some()
}

/// `3 passed`, `2 passed, 1 failed`, …
fn verdict(run: &Run) -> String {
    if let Err(e) = &run.built {
        return format!("does not compile: {}", cell(e));
    }
    let count = |f: &dyn Fn(&TestOutcome) -> bool| run.tests.values().filter(|t| f(t)).count();
    let mut parts = vec![format!("{} passed", count(&|t| t.passed == Some(true)))];
    let failed = count(&|t| t.passed == Some(false));
    if failed > 0 {
        parts.push(format!("**{failed} failed**"));
    }
    for (n, what) in [
        (count(&|t| t.started && !finished(t)), "unfinished"),
        (count(&|t| !t.started), "not run"),
        (count(&|t| t.ignored), "ignored"),
    ] {
        if n > 0 {
            parts.push(format!("{n} {what}"));
        }
    }
    parts.join(", ")
}

fn time_cell(run: &Run, timeout: Duration) -> String {
    let Some(t) = run.time else {
        return "—".to_owned();
    };
    let time = if t < Duration::from_secs(1) {
        format!("{:.0} ms", t.as_secs_f64() * 1e3)
    } else {
        format!("{:.2} s", t.as_secs_f64())
    };
    match run.timed_out.len() {
        0 => time,
        n => format!(
            "> {time} ({n} test{} killed at {} s)",
            if n == 1 { "" } else { "s" },
            timeout.as_secs()
        ),
    }
}

/// Executions over the tests that reported them (`≥` if some did not
/// finish), `n/a` if none did.
fn executions_cell(tests: &[&TestOutcome]) -> String {
    let reported: Vec<u64> = tests
        .iter()
        .filter(|t| t.executions.is_some() || t.running.is_some())
        .map(|t| t.executions.unwrap_or(0) + t.running.unwrap_or(0))
        .collect();
    if reported.is_empty() {
        return "n/a".to_owned();
    }
    let mut s = kase_bench::catalog::group(reported.iter().sum());
    if tests.iter().any(|t| !finished(t)) {
        s = format!("≥ {s}");
    }
    let run = tests.iter().filter(|t| t.started && !t.ignored).count();
    if reported.len() < run {
        let _ = write!(s, " ({} of {run} tests)", reported.len());
    }
    s
}

/// Text safe in a table cell.
fn cell(s: &str) -> String {
    let s = s.replace('|', "\\|");
    if s.chars().count() > 160 {
        format!("{}…", s.chars().take(160).collect::<String>())
    } else {
        s
    }
}

fn env_cell(suite: &Suite) -> String {
    let mut parts = vec![format!("`RUSTFLAGS=\"{}\"`", suite.rustflags)];
    parts.extend(suite.env.iter().map(|(k, v)| format!("`{k}={v}`")));
    parts.join(" ")
}

fn table(results: &[(&Suite, BTreeMap<&str, Run>)], timeout: Duration) -> String {
    let mut md = String::new();
    let _ = writeln!(
        md,
        "| crate | version | loom test target | env | kase verdict | kase time | kase executions \
         | loom verdict | loom time | loom executions | notes |"
    );
    let _ = writeln!(md, "|---|---|---|---|---|---:|---:|---|---:|---:|---|");
    for (suite, runs) in results {
        let (kase, loom) = (&runs["kase"], &runs["loom"]);
        let mut notes = Vec::new();
        for (variant, run) in [("kase", kase), ("loom", loom)] {
            for status in &run.status {
                notes.push(format!("{variant}: {status}"));
            }
        }
        let _ = writeln!(
            md,
            "| {} | {} | `cargo test --release {}` | {} | {} | {} | {} | {} | {} | {} | {} |",
            suite.name,
            suite.version,
            suite.args.join(" "),
            env_cell(suite),
            verdict(kase),
            time_cell(kase, timeout),
            executions_cell(&kase.tests.values().collect::<Vec<_>>()),
            if loom.loom.is_empty() {
                verdict(loom)
            } else {
                format!("{} (loom {})", verdict(loom), loom.loom.join(", "))
            },
            time_cell(loom, timeout),
            executions_cell(&loom.tests.values().collect::<Vec<_>>()),
            cell(&notes.join("; ")),
        );
        // A row per test that failed, did not finish, or differs.
        let names: std::collections::BTreeSet<&String> =
            kase.tests.keys().chain(loom.tests.keys()).collect();
        for name in names {
            if kase.built.is_err() || loom.built.is_err() {
                break;
            }
            let (k, l) = (kase.tests.get(name), loom.tests.get(name));
            let ok =
                |t: Option<&TestOutcome>| t.is_some_and(|t| t.passed == Some(true) || t.ignored);
            if ok(k) && ok(l) {
                continue;
            }
            let test_verdict = |t: Option<&TestOutcome>| match t {
                None => "—",
                Some(t) if t.ignored => "ignored",
                Some(t) if !t.started => "not run",
                Some(t) => match t.passed {
                    Some(true) => "passed",
                    Some(false) => "**failed**",
                    None => "unfinished",
                },
            };
            let execs = |t: Option<&TestOutcome>| match t {
                Some(t) => executions_cell(&[t]),
                None => "n/a".to_owned(),
            };
            let mut notes = Vec::new();
            for (variant, t) in [("kase", k), ("loom", l)] {
                if let Some(message) = t.and_then(|t| t.message.as_deref()) {
                    notes.push(format!("{variant}: {}", cell(message)));
                }
            }
            let _ = writeln!(
                md,
                "| ↳ `{name}` | | | | {} | | {} | {} | | {} | {} |",
                test_verdict(k),
                execs(k),
                test_verdict(l),
                execs(l),
                notes.join("; "),
            );
        }
    }
    md
}

fn section(command: &str, md: &str, suites: &[&Suite]) -> String {
    let mut sources = String::new();
    for suite in suites {
        let _ = writeln!(sources, "- {}: {}.", suite.name, suite.source);
    }
    format!(
        "{HEADING}\n\n{generated}\n\nEach crate's published source, fetched by cargo, is copied twice: \
         `<crate>-loom` unchanged, and `<crate>-kase` whose `loom` dependency table alone names \
         `package = \"kase-loom\"` and a path instead of a version (event-listener's copies \
         also patch their `parking` dependency to the sibling copy of parking, and \
         crossbeam-epoch's their `crossbeam-utils` to copies of crossbeam-utils 0.8.23 made \
         the same way, so that both crates use the same loom; sharded-slab's \
         `rust-toolchain.toml` is removed from both). \
         Both are built with `cargo test --release --no-run` and the loom target(s) and \
         features of the crate's CI; then each test of the binary runs alone (`--exact NAME \
         --test-threads=1 --nocapture`, the CI's variables), killed after the timeout, so that \
         one long test does not hide the others, under one tool and then the other. *time* is \
         the sum of those runs' wall times (no compilation; `>` if a test was killed, its time \
         counted up to the kill). A test that passed in under a second runs five times under \
         each tool, the tools taking turns, and counts its median time: process start and the \
         machine's noise are most of such a test's time. \
         *executions* sum the tool's own count over the suite's models: kase's summary line \
         (`KASE_PROGRESS=1`; for a killed test, the executions done so far, from its last \
         progress line, and `≥`), loom's \"Completed in N iterations\" \
         (`LOOM_LOG=loom::model=info`; loom prints it only for models it explored to the end \
         through `loom::model`, so sharded-slab's, run through `loom::model::Builder`, have \
         none); `n/a` where the tool printed none. A row per test follows a crate's row where a \
         test failed or did not finish under either tool; \
         *notes* give the first line of its first panic message. The loom verdict names the \
         loom version cargo resolved for the unchanged copy (oneshot, event-listener, bytes \
         and left-right ship a `Cargo.lock`; sharded-slab 0.1.7 asks for loom 0.5). Where \
         kase runs more \
         executions than loom under Rust's memory model, it is mostly behaviours loom does \
         not explore: after a yield loom never re-reads a store seen before it, and a failed \
         `compare_exchange` reads only the newest store there (docs/guide/memory-model.md, \
         \"Limits\", has the counts with both emulated, and \
         `kase-bench/tests/yield_heuristic.rs` a bug the first hides). A failing test's time \
         includes kase's report (the search for a simpler counterexample, saving the \
         schedule); `RUST_BACKTRACE` is unset for both tools (oneshot's CI does not set it, \
         and a panic's backtrace took about 0.1 s to print). oneshot's `send_recv_different_threads` computes a \
         1 ms `recv_timeout` deadline from wall-clock time, so on a loaded machine its path \
         can change between re-runs of one schedule and kase then reports a nondeterminism \
         (loom does not check).\n\nSettings from:\n\n\
         {sources}\n{md}",
        generated = generated_by(command, "main.rs"),
    )
}

/// "Generated by `command` (the generator's file; kase's commit; rustc)".
fn generated_by(command: &str, file: &str) -> String {
    format!(
        "Generated by `{command}` (`kase-bench/src/bin/real_crates/{file}`; kase at commit \
         `{}`; rustc {}).",
        commit(),
        rustc_version()
    )
}

/// The repository's commit (with `+` if the work tree has changes).
fn commit() -> String {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .ok()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .unwrap_or_default()
    };
    let mut commit = git(&["rev-parse", "--short", "HEAD"]);
    if !git(&["status", "--porcelain", "--untracked-files=no"]).is_empty() {
        commit.push('+');
    }
    commit
}

fn rustc_version() -> String {
    Command::new("rustc")
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|v| v.trim().trim_start_matches("rustc ").to_owned())
        .unwrap_or_else(|| "?".to_owned())
}

fn mutants_section(command: &str, md: &str) -> String {
    format!(
        "{MUTANTS_HEADING}\n\n{generated}\n\nEach mutant is a small edit of a crate's \
         published source (the same version and CI settings as the table above), made in both \
         copies: the crate's own loom suite then runs under each tool, each test alone, as \
         above. A tool *finds* the bug when a test that passes on the unchanged copy fails or \
         does not finish under that tool; *fails differently* is a test that already failed \
         unchanged and now fails with another message or at other sites; *now passes* is a test \
         that failed unchanged. A cell gives the executions a failing test reported (kase prints \
         them for a failure, loom does not), the first line of the first failure, and for \
         kase's reports of a free the sites it names (the access, the free, the allocation). \
         Two oneshot entries are not bugs but isolate known ones: a fix of the open \
         use-after-free #87, and #73 put back on top of that fix.\n\n{md}",
        generated = generated_by(command, "mutants.rs"),
    )
}

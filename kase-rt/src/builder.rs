//! The entry points: [`Builder`] and [`model`].

use std::path::PathBuf;
use std::time::Duration;

use crate::explore::{self, Alternatives, Config, Strategy};
use crate::report::persist::{parse_persist, Persist, TestId};
use crate::report::progress::parse_progress;
use crate::report::{Report, Schedule};

/// Configures and runs an exploration.
///
/// `Builder::new()` starts from the defaults, then applies `KASE_*`
/// environment variables; setters called afterwards override both.
///
/// ```
/// use kase_rt::sync::atomic::{AtomicUsize, Ordering};
/// use kase_rt::sync::Arc;
/// use kase_rt::{thread, Builder, Strategy};
///
/// let report = Builder::new().strategy(Strategy::Exhaustive).explore(|| {
///     let x = Arc::new(AtomicUsize::new(0));
///     let x2 = x.clone();
///     let t = thread::spawn(move || x2.store(1, Ordering::SeqCst));
///     let _seen = x.load(Ordering::SeqCst);
///     t.join().unwrap();
/// });
/// assert!(report.complete());
/// assert_eq!(report.traces(), Some(2)); // the load sees 0 or 1
/// ```
#[derive(Clone, Debug)]
pub struct Builder {
    pub(crate) config: Config,
}

/// Default bound on visible operations per execution.
pub const DEFAULT_MAX_STEPS: u64 = 1_000_000;
/// Default stack size of a model thread: 2 MiB, like std's spawned threads.
pub const DEFAULT_STACK_SIZE: usize = 2 << 20;
/// Default time without progress after which the watchdog ends the process.
pub const DEFAULT_WATCHDOG: Duration = Duration::from_secs(10);
/// Default number of executions the search for a simpler failing
/// interleaving may run after a failure (see [`Builder::minimize`]).
pub const DEFAULT_MINIMIZE: u64 = 1_000;
/// Whether critical-section peeking is on by default (see
/// [`Builder::peeking`]).
pub const DEFAULT_PEEKING: bool = true;

impl Default for Builder {
    fn default() -> Self {
        Self::new()
    }
}

impl Builder {
    /// Defaults, then `KASE_MAX_EXECUTIONS`, `KASE_MAX_DURATION`,
    /// `KASE_MAX_STEPS`, `KASE_STACK_SIZE`, `KASE_STRATEGY`,
    /// `KASE_ALTERNATIVES`, `KASE_PERSIST`, `KASE_REGRESSIONS_DIR`,
    /// `KASE_MINIMIZE`, `KASE_PROGRESS` and `KASE_REPLAY` from the
    /// environment.
    ///
    /// # Panics
    ///
    /// If one of those variables is set to something that does not parse; the
    /// message names the variable and the expected form.
    pub fn new() -> Self {
        let mut config = Config {
            strategy: Strategy::default(),
            alternatives: Alternatives::default(),
            max_executions: None,
            max_duration: None,
            max_steps: DEFAULT_MAX_STEPS,
            spurious_wakeups: false,
            stack_size: DEFAULT_STACK_SIZE,
            replay: None,
            test: None,
            crate_dir: None,
            regressions_dir: None,
            persist: Persist::default(),
            minimize: DEFAULT_MINIMIZE,
            progress: None,
            check_determinism: false,
            watchdog: Some(DEFAULT_WATCHDOG),
            backtraces: false,
            peeking: DEFAULT_PEEKING,
            internal_error_at: None,
        };
        if let Some(n) = env(
            "KASE_MAX_EXECUTIONS",
            "a number of executions, e.g. 10000",
            |v| v.parse().ok(),
        ) {
            config.max_executions = Some(n);
        }
        if let Some(d) = env(
            "KASE_MAX_DURATION",
            "a duration such as 30s, 500ms or 2m",
            parse_duration,
        ) {
            config.max_duration = Some(d);
        }
        if let Some(n) = env("KASE_MAX_STEPS", "a number of steps, e.g. 100000", |v| {
            v.parse().ok()
        }) {
            config.max_steps = n;
        }
        if let Some(n) = env("KASE_STACK_SIZE", "a number of bytes, e.g. 2097152", |v| {
            v.parse().ok()
        }) {
            config.stack_size = n;
        }
        if let Some(s) = env("KASE_STRATEGY", "`por` or `exhaustive`", parse_strategy) {
            config.strategy = s;
        }
        if let Some(a) = env(
            "KASE_ALTERNATIVES",
            "`optimal` or a number k for k-partial",
            parse_alternatives,
        ) {
            config.alternatives = a;
        }
        if let Some(p) = env("KASE_PERSIST", "`file`, `print` or `off`", parse_persist) {
            config.persist = p;
        }
        if let Some(dir) = std::env::var_os("KASE_REGRESSIONS_DIR").filter(|d| !d.is_empty()) {
            config.regressions_dir = Some(PathBuf::from(dir));
        }
        if let Some(n) = env(
            "KASE_MINIMIZE",
            "a number of executions, e.g. 1000, or `off`",
            parse_minimize,
        ) {
            config.minimize = n;
        }
        if let Some(p) = env(
            "KASE_PROGRESS",
            "`1` (always) or `0` (never)",
            parse_progress,
        ) {
            config.progress = Some(p);
        }
        if let Some(p) = env(
            "KASE_CHECK_DETERMINISM",
            "`1` (on) or `0` (off)",
            parse_progress,
        ) {
            config.check_determinism = p;
        }
        if let Some(secs) = env(
            "KASE_WATCHDOG",
            "a number of seconds, e.g. 30 (0: off)",
            |v| v.parse::<f64>().ok().filter(|s| s.is_finite() && *s >= 0.0),
        ) {
            config.watchdog = (secs > 0.0).then(|| Duration::from_secs_f64(secs));
        }
        if let Some(p) = env("KASE_PEEKING", "`1` (on) or `0` (off)", parse_progress) {
            config.peeking = p;
        }
        config.backtraces =
            std::env::var_os("KASE_BACKTRACE").is_some_and(|v| !v.is_empty() && v != "0");
        if let Ok(value) = std::env::var("KASE_REPLAY") {
            match value.parse::<Schedule>() {
                Ok(s) => config.replay = Some(s),
                Err(e) => panic!("kase: KASE_REPLAY: {e}"),
            }
        }
        Builder { config }
    }

    /// Critical-section peeking: two critical sections of one `Mutex`
    /// commute unless what they access conflicts (one writes what the other
    /// reads or writes) or one of them also does other synchronisation.
    ///
    /// While a thread holds a mutex and only accesses memory (atomics,
    /// tracked `UnsafeCell`s, the guarded data through the guard), kase runs
    /// it as one step; sections that touch disjoint data are then explored
    /// in one order only. If some thread *not* holding the mutex accesses
    /// that data concurrently (so it could run in the middle of a section),
    /// kase notices, discards the exploration and explores again without
    /// peeking ([`Report::peeking`], [`Report::warnings`]). `KASE_PEEKING=0|1`
    /// sets it from the environment; `Strategy::Exhaustive` counts traces
    /// under the same setting.
    ///
    /// ```
    /// use kase_rt::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    /// use kase_rt::sync::{Arc, Mutex};
    /// use kase_rt::{thread, Builder};
    ///
    /// let model = || {
    ///     let lock = Arc::new(Mutex::new(()));
    ///     let cells = Arc::new([AtomicUsize::new(0), AtomicUsize::new(0)]);
    ///     let (l, c) = (lock.clone(), cells.clone());
    ///     let t = thread::spawn(move || {
    ///         let _g = l.lock().unwrap();
    ///         c[0].fetch_add(1, Relaxed);
    ///     });
    ///     {
    ///         let _g = lock.lock().unwrap();
    ///         cells[1].fetch_add(1, Relaxed);
    ///     }
    ///     t.join().unwrap();
    /// };
    /// assert_eq!(Builder::new().peeking(true).explore(model).executions(), 1);
    /// assert_eq!(Builder::new().peeking(false).explore(model).executions(), 2);
    /// ```
    pub fn peeking(mut self, on: bool) -> Self {
        self.config.peeking = on;
        self
    }

    /// The exploration algorithm (default [`Strategy::Por`]).
    pub fn strategy(mut self, strategy: Strategy) -> Self {
        self.config.strategy = strategy;
        self
    }

    /// How the partial-order explorer computes alternatives (default
    /// [`Alternatives::Optimal`]).
    pub fn alternatives(mut self, alternatives: Alternatives) -> Self {
        self.config.alternatives = alternatives;
        self
    }

    /// Stop after `n` executions; the report is then incomplete.
    pub fn max_executions(mut self, n: u64) -> Self {
        self.config.max_executions = Some(n);
        self
    }

    /// Stop after `duration`: no new execution starts, and one still running
    /// then is abandoned (the clock is read every 64 steps, so even one long
    /// execution stops within moments); the report is then incomplete.
    pub fn max_duration(mut self, duration: Duration) -> Self {
        self.config.max_duration = Some(duration);
        self
    }

    /// Bound on visible operations in one execution; exceeding it is a
    /// livelock failure (default 1 000 000).
    pub fn max_steps(mut self, n: u64) -> Self {
        self.config.max_steps = n;
        self
    }

    /// Whether a plain `Condvar::wait` may also wake without a notification,
    /// as std allows (default off: most code loops on its predicate, and
    /// the extra wakeups multiply executions). Timed waits always explore
    /// both timing out and being notified.
    pub fn spurious_wakeups(mut self, on: bool) -> Self {
        self.config.spurious_wakeups = on;
        self
    }

    /// Stack size of each model thread in bytes (default
    /// [`DEFAULT_STACK_SIZE`], 2 MiB as std; `KASE_STACK_SIZE`). Model
    /// threads run on stacks kase allocates, not on the test's: on Linux a
    /// model thread that overflows its stack makes kase print which one, the
    /// size, and this knob, then abort (elsewhere it is a plain crash).
    pub fn stack_size(mut self, bytes: usize) -> Self {
        self.config.stack_size = bytes;
        self
    }

    /// Run exactly the execution that `schedule` (from a failure report)
    /// describes, once.
    ///
    /// # Panics
    ///
    /// If `schedule` is not a schedule string; the message says what is wrong.
    pub fn replay(mut self, schedule: &str) -> Self {
        match schedule.parse() {
            Ok(s) => self.config.replay = Some(s),
            Err(e) => panic!("kase: Builder::replay: {e}"),
        }
        self
    }

    /// Names the model, e.g. `my_crate::queue::tests::push_pop` (what
    /// `#[kase::test]` sets from the module path and the function name).
    /// This turns regression files on (see [`persist`](Self::persist)): a
    /// failure is appended to `<dir>/<module>.txt`, where the module is the
    /// part of the name before the last `::` (with `.` for `::`), and the
    /// schedules saved there under the last part of the name are replayed
    /// before exploring. The directory is [`regressions_dir`](Self::regressions_dir),
    /// else `KASE_REGRESSIONS_DIR`, else `kase-regressions` in the crate
    /// (`CARGO_MANIFEST_DIR`) or the current directory.
    ///
    /// ```
    /// use kase_rt::{Builder, Persist};
    /// let report = Builder::new()
    ///     .name("my_crate::tests::nothing")
    ///     .persist(Persist::Off)
    ///     .explore(|| {});
    /// assert!(report.failure().is_none());
    /// ```
    pub fn name(mut self, name: impl Into<String>) -> Self {
        let package = self.config.test.take().and_then(|t| t.package);
        let mut test = TestId::from_full_name(&name.into());
        test.package = package;
        self.config.test = Some(test);
        self
    }

    /// What to do with the regression file of a named model (default
    /// [`Persist::File`], or `KASE_PERSIST`): replay its saved schedules
    /// first and append new failures, only print the line to add, or
    /// neither. Without a [`name`](Self::name) there is no regression file.
    pub fn persist(mut self, persist: Persist) -> Self {
        self.config.persist = persist;
        self
    }

    /// The directory of regression files (overrides `KASE_REGRESSIONS_DIR`
    /// and the default `<crate>/kase-regressions`).
    pub fn regressions_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.config.regressions_dir = Some(dir.into());
        self
    }

    /// After a failure, run at most `executions` more executions looking for
    /// an interleaving with the same failure and fewer preemptions, and
    /// report the simplest one found (default [`DEFAULT_MINIMIZE`], or
    /// `KASE_MINIMIZE`; 0 or `off` turns the search off). The search also
    /// stops after 2 seconds (or `max_duration`, if shorter), and runs at
    /// most 100 more executions than the exploration needed to find the
    /// failure, so that a failure found at once costs little more.
    pub fn minimize(mut self, executions: u64) -> Self {
        self.config.minimize = executions;
        self
    }

    /// Adds to each step of a failure report the user-code frames of the
    /// stack at that operation (default off: capturing costs time at every
    /// operation; `KASE_BACKTRACE=1`).
    pub fn backtraces(mut self, on: bool) -> Self {
        self.config.backtraces = on;
        self
    }

    /// Runs every new schedule twice and fails with
    /// [`FailureKind::Nondeterminism`](crate::FailureKind::Nondeterminism),
    /// naming the first difference, if the two runs perform different
    /// operations — catching `HashMap` order, time, randomness or std
    /// synchronisation inside the model (default off: it doubles the cost;
    /// `KASE_CHECK_DETERMINISM=1`).
    pub fn check_determinism(mut self, on: bool) -> Self {
        self.config.check_determinism = on;
        self
    }

    /// How long an exploration may go without any visible operation before
    /// the watchdog reports a model thread blocked outside kase's control
    /// and ends the process (default 10 s; `None` turns it off;
    /// `KASE_WATCHDOG=<seconds>`, 0 for off).
    pub fn watchdog(mut self, limit: Option<Duration>) -> Self {
        self.config.watchdog = limit;
        self
    }

    /// Progress lines on stderr: `true` prints one every few seconds from the
    /// start and a summary at the end, `false` never (default: only once an
    /// exploration has run for 5 seconds; or `KASE_PROGRESS=1` / `0`).
    ///
    /// This governs stderr only: with the `tracing` feature, the progress,
    /// summary and failure `tracing` events are emitted whatever it says
    /// (see the crate documentation).
    pub fn progress(mut self, on: bool) -> Self {
        self.config.progress = Some(on);
        self
    }

    /// Test hook, not part of the API: kase's own scheduler panics with an
    /// internal error at step `step` of the `execution`-th execution it
    /// runs (both 1-based), as if one of its invariants had failed — to
    /// check that such a bug is reported as
    /// [`FailureKind::Internal`](crate::FailureKind::Internal) with the
    /// schedule so far.
    #[doc(hidden)]
    pub fn __internal_error_at(mut self, execution: u64, step: u64) -> Self {
        self.config.internal_error_at = Some((execution, step));
        self
    }

    /// Used by `#[kase::test]`: the test's module path (`module_path!()`),
    /// function name, crate directory (`CARGO_MANIFEST_DIR` of the crate
    /// under test, the default home of its regression files) and package.
    #[doc(hidden)]
    pub fn __kase_test(
        mut self,
        module_path: &str,
        function: &str,
        crate_dir: Option<&str>,
        package: Option<&str>,
    ) -> Self {
        self.config.test = Some(TestId {
            module: module_path.to_owned(),
            name: function.to_owned(),
            package: package.map(str::to_owned),
        });
        self.config.crate_dir = crate_dir.map(PathBuf::from);
        self
    }

    /// Explores `model` and returns what was found. Never panics because the
    /// model failed: the failure is in [`Report::failure`].
    pub fn explore<F: Fn() + Sync>(&self, model: F) -> Report {
        explore::run(&self.config, &model)
    }

    /// Like [`explore`](Self::explore), but panics if a failure is found: it
    /// prints the report and re-raises the original panic payload (so
    /// `#[should_panic(expected = "...")]` matches the model's own message),
    /// or panics with the report for other failures.
    #[track_caller]
    pub fn check<F: Fn() + Sync>(&self, model: F) {
        let mut report = self.explore(model);
        if let Some(mut failure) = report.take_failure() {
            match failure.take_payload() {
                Some(payload) => {
                    eprintln!("{failure}");
                    std::panic::resume_unwind(payload);
                }
                None => panic!("{failure}"),
            }
        }
    }
}

/// Explores `model` with the default settings ([`Builder::new`]) and panics
/// with the report if it can fail.
///
/// ```
/// use kase_rt::sync::{Arc, Mutex};
/// use kase_rt::thread;
///
/// kase_rt::model(|| {
///     let counter = Arc::new(Mutex::new(0));
///     let handles: Vec<_> = (0..2)
///         .map(|_| {
///             let counter = counter.clone();
///             thread::spawn(move || *counter.lock().unwrap() += 1)
///         })
///         .collect();
///     for h in handles {
///         h.join().unwrap();
///     }
///     assert_eq!(*counter.lock().unwrap(), 2);
/// });
/// ```
#[track_caller]
pub fn model<F: Fn() + Sync>(model: F) {
    Builder::new().check(model)
}

fn env<T>(name: &str, expected: &str, parse: impl FnOnce(&str) -> Option<T>) -> Option<T> {
    let value = std::env::var(name).ok()?;
    match parse(value.trim()) {
        Some(v) => Some(v),
        None => panic!("kase: {name}={value:?} is not valid: expected {expected}"),
    }
}

/// Parses `30s`, `500ms`, `2m`, `1h`, or a plain number of seconds.
pub(crate) fn parse_duration(s: &str) -> Option<Duration> {
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let n: f64 = number.parse().ok()?;
    let seconds = match unit.trim() {
        "" | "s" => n,
        "ms" => n / 1000.0,
        "m" | "min" => n * 60.0,
        "h" => n * 3600.0,
        _ => return None,
    };
    Duration::try_from_secs_f64(seconds).ok()
}

fn parse_minimize(s: &str) -> Option<u64> {
    if s.eq_ignore_ascii_case("off") {
        return Some(0);
    }
    s.parse().ok()
}

fn parse_alternatives(s: &str) -> Option<Alternatives> {
    if s.eq_ignore_ascii_case("optimal") {
        return Some(Alternatives::Optimal);
    }
    s.parse()
        .ok()
        .filter(|&k| k > 0)
        .map(Alternatives::KPartial)
}

fn parse_strategy(s: &str) -> Option<Strategy> {
    match s.to_ascii_lowercase().as_str() {
        "por" => Some(Strategy::Por),
        "exhaustive" => Some(Strategy::Exhaustive),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse() {
        assert_eq!(parse_duration("30s"), Some(Duration::from_secs(30)));
        assert_eq!(parse_duration("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(parse_duration("2m"), Some(Duration::from_secs(120)));
        assert_eq!(parse_duration("7"), Some(Duration::from_secs(7)));
        assert_eq!(parse_duration("soon"), None);
        assert_eq!(parse_duration("5 parsecs"), None);
    }
}

//! The entry points: [`Builder`] and [`model`].

use std::path::PathBuf;
use std::time::Duration;

use crate::explore::{self, Alternatives, MemoryModel, Strategy};
use crate::report::persist::{Persist, TestId};
use crate::report::Report;
use crate::settings::Settings;

/// Configures and runs an exploration.
///
/// `Builder::new()` starts from the defaults, then applies `KASE_*`
/// environment variables; setters called afterwards override both.
///
/// ```
/// # extern crate kase_rt as kase;
/// use kase::sync::atomic::{AtomicUsize, Ordering};
/// use kase::sync::Arc;
/// use kase::{thread, Builder, Strategy};
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
    pub(crate) settings: Settings,
}

impl Default for Builder {
    fn default() -> Self {
        Self::new()
    }
}

impl Builder {
    /// The defaults, then the `KASE_*` environment variables that are set
    /// (the values have the same grammar as in `#[kase::test(...)]`):
    ///
    /// | variable | value | as |
    /// |---|---|---|
    /// | `KASE_MAX_EXECUTIONS` | a number | [`max_executions`](Self::max_executions) |
    /// | `KASE_MAX_DURATION` | a duration: `30s`, `500ms`, `1.5s`, `2m`, `2min`, `1h`, `30` (seconds); units ns, us, ms, s, m/min, h | [`max_duration`](Self::max_duration) |
    /// | `KASE_MAX_PREEMPTIONS` | a number | [`preemption_bound`](Self::preemption_bound) |
    /// | `KASE_UNBOUNDED_TRIAL` | a number | [`unbounded_trial`](Self::unbounded_trial) |
    /// | `KASE_ALLOW_INCOMPLETE` | `1` \| `0` | [`allow_incomplete`](Self::allow_incomplete) |
    /// | `KASE_MAX_STEPS` | a number | [`max_steps`](Self::max_steps) |
    /// | `KASE_STACK_SIZE` | a number of bytes | [`stack_size`](Self::stack_size) |
    /// | `KASE_STRATEGY` | `por` \| `exhaustive` | [`strategy`](Self::strategy) |
    /// | `KASE_ALTERNATIVES` | `optimal` \| k ≥ 1 | [`alternatives`](Self::alternatives) |
    /// | `KASE_PERSIST` | `file` \| `print` \| `off` | [`persist`](Self::persist) |
    /// | `KASE_REGRESSIONS_DIR` | a directory | [`regressions_dir`](Self::regressions_dir) |
    /// | `KASE_MINIMIZE` | a number \| `off` | [`minimize`](Self::minimize) |
    /// | `KASE_PROGRESS` | `1` \| `0` | [`progress`](Self::progress) |
    /// | `KASE_CHECK_DETERMINISM` | `1` \| `0` | [`check_determinism`](Self::check_determinism) |
    /// | `KASE_WATCHDOG` | seconds, `0` for off | [`watchdog`](Self::watchdog) |
    /// | `KASE_PEEKING` | `1` \| `0` | [`peeking`](Self::peeking) |
    /// | `KASE_MEMORY_MODEL` | `rc11` \| `sc` | [`memory_model`](Self::memory_model) |
    /// | `KASE_BACKTRACE` | `1` (anything but empty or `0`) | [`backtraces`](Self::backtraces) |
    /// | `KASE_REPLAY` | a schedule, `kase1:1.0.0` | [`replay`](Self::replay) |
    ///
    /// # Panics
    ///
    /// If one of those variables is set to something that does not parse; the
    /// message names the variable and the expected form.
    pub fn new() -> Self {
        Builder {
            settings: Settings::from_env(),
        }
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
    /// under the same setting. Peeking applies to interleavings: under
    /// [`MemoryModel::Rc11`] a model with an atomic access weaker than
    /// `SeqCst` is explored over execution graphs, without it.
    ///
    /// ```
    /// # extern crate kase_rt as kase;
    /// use kase::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    /// use kase::sync::{Arc, Mutex};
    /// use kase::{thread, Builder};
    ///
    /// let model = || {
    ///     let lock = Arc::new(Mutex::new(()));
    ///     let cells = Arc::new([AtomicUsize::new(0), AtomicUsize::new(0)]);
    ///     let (l, c) = (lock.clone(), cells.clone());
    ///     let t = thread::spawn(move || {
    ///         let _g = l.lock().unwrap();
    ///         c[0].fetch_add(1, SeqCst);
    ///     });
    ///     {
    ///         let _g = lock.lock().unwrap();
    ///         cells[1].fetch_add(1, SeqCst);
    ///     }
    ///     t.join().unwrap();
    /// };
    /// assert_eq!(Builder::new().peeking(true).explore(model).executions(), 1);
    /// assert_eq!(Builder::new().peeking(false).explore(model).executions(), 2);
    /// ```
    pub fn peeking(mut self, on: bool) -> Self {
        self.settings.peeking = on;
        self
    }

    /// The memory model atomics follow: [`MemoryModel::Rc11`], Rust's (the
    /// default), or [`MemoryModel::SequentiallyConsistent`], the opt-out;
    /// `KASE_MEMORY_MODEL=rc11|sc` sets it from the environment.
    pub fn memory_model(mut self, model: MemoryModel) -> Self {
        self.settings.memory_model = model;
        self
    }

    /// The exploration algorithm (default [`Strategy::Por`]).
    pub fn strategy(mut self, strategy: Strategy) -> Self {
        self.settings.strategy = strategy;
        self
    }

    /// How the partial-order explorer computes alternatives (default
    /// [`Alternatives::Optimal`]).
    pub fn alternatives(mut self, alternatives: Alternatives) -> Self {
        self.settings.alternatives = alternatives;
        self
    }

    /// Stop after `n` executions; the report is then incomplete.
    pub fn max_executions(mut self, n: u64) -> Self {
        self.settings.max_executions = Some(n);
        self
    }

    /// Stop after `duration`: no new execution starts, and one still running
    /// then is abandoned (the clock is read every 64 steps, so even one long
    /// execution stops within moments); the report is then incomplete.
    pub fn max_duration(mut self, duration: Duration) -> Self {
        self.settings.max_duration = Some(duration);
        self
    }

    /// Explore only the executions with at most `n` preemptions, for state
    /// spaces too big to explore whole (`KASE_MAX_PREEMPTIONS`,
    /// `preemption_bound = n` in `#[kase::test]`).
    ///
    /// A **preemption** is a choice of a thread other than the one that ran
    /// last while that one could still go on (as in CHESS and loom); switching
    /// when the last thread blocks or finishes is free. Most concurrency bugs
    /// need only one or two preemptions.
    ///
    /// With a bound, [`Strategy::Por`](crate::Strategy::Por) runs a
    /// bounded partial-order reduction: dynamic partial-order reduction
    /// with the extra backtracking points that keep it complete within the
    /// bound (Coons, Musuvathi and McKinley, "Bounded partial-order
    /// reduction", OOPSLA 2013), checked against the bounded oracle on
    /// generated programs. [`Strategy::Exhaustive`](crate::Strategy::Exhaustive)
    /// runs the bounded oracle itself: every interleaving within the bound
    /// ([`Report::reduction`] is then false).
    ///
    /// A model small enough needs no bound: with
    /// [`Strategy::Por`](crate::Strategy::Por), kase first explores without
    /// it, for at most [`unbounded_trial`](Self::unbounded_trial)
    /// executions (256 by default). If that finishes, the result holds for
    /// every execution ([`Report::complete`], [`Report::preemption_bound`]
    /// is `None`), and a failure it finds may take more than `n`
    /// preemptions; otherwise kase discards it and explores with the bound.
    ///
    /// If the bound left out some execution, the [`Report`] is not
    /// [`complete`](Report::complete) but
    /// [`complete_within_bound`](Report::complete_within_bound), and says
    /// "complete up to n preemptions"; [`check`](Self::check) passes it
    /// (you asked for the bound) and prints a note that the result holds
    /// only up to it. If the bound left out nothing, the exploration is
    /// simply complete.
    ///
    /// With a [`max_duration`](Self::max_duration) too, kase deepens the
    /// bound: it explores with at most 0 preemptions, then 1, …, up to `n`,
    /// so the first bugs come fast. Each round re-runs the executions of
    /// the rounds before it, and [`Report::executions`] counts them all;
    /// [`Report::preemption_bound`] is then the deepest bound fully
    /// explored.
    ///
    /// ```
    /// # extern crate kase_rt as kase;
    /// use kase::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    /// use kase::sync::Arc;
    /// use kase::{thread, Builder};
    ///
    /// let lost_update = || {
    ///     let x = Arc::new(AtomicUsize::new(0));
    ///     let x2 = x.clone();
    ///     let t = thread::spawn(move || {
    ///         let v = x2.load(SeqCst);
    ///         x2.store(v + 1, SeqCst);
    ///     });
    ///     let v = x.load(SeqCst);
    ///     x.store(v + 1, SeqCst);
    ///     t.join().unwrap();
    ///     assert_eq!(x.load(SeqCst), 2);
    /// };
    /// // The bound applied at once (no trial without it):
    /// let bounded = || Builder::new().unbounded_trial(0);
    /// let report = bounded().preemption_bound(0).explore(lost_update);
    /// assert!(report.failure().is_none());
    /// assert!(report.complete_within_bound() && !report.complete());
    /// let report = bounded().preemption_bound(1).explore(lost_update);
    /// assert!(report.failure().is_some());
    /// // This model is small: the trial explores all of it and finds the
    /// // lost update, whatever the bound.
    /// let report = Builder::new().preemption_bound(0).explore(lost_update);
    /// assert!(report.failure().is_some());
    /// ```
    pub fn preemption_bound(mut self, n: usize) -> Self {
        self.settings.preemption_bound = Some(n);
        self
    }

    /// Under a [`preemption_bound`](Self::preemption_bound), how many
    /// executions kase first spends exploring without the bound (default
    /// 256; `KASE_UNBOUNDED_TRIAL`, `unbounded_trial = n` in
    /// `#[kase::test]`). `0` applies the bound from the first execution, as
    /// loom does.
    ///
    /// Most models in loom suites are small: explored whole they take fewer
    /// executions than the bounded search (which may run an execution graph
    /// more than once to keep every one within the bound), and the result
    /// then holds for every execution, not only up to the bound. A model
    /// that does not finish within the trial is explored again with the
    /// bound, from the start; the trial also ends early when the explorer
    /// estimates that it needs several times the executions left. The
    /// trial's executions count in [`Report::executions`] and, when
    /// discarded, in [`Report::discarded_executions`]; the budgets hold for
    /// both together.
    ///
    /// ```
    /// # extern crate kase_rt as kase;
    /// use kase::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    /// use kase::{thread, Builder};
    ///
    /// let model = || {
    ///     static X: AtomicUsize = AtomicUsize::new(0);
    ///     let t = thread::spawn(|| X.store(1, SeqCst));
    ///     X.load(SeqCst);
    ///     t.join().unwrap();
    /// };
    /// let report = Builder::new().preemption_bound(2).explore(model);
    /// assert!(report.complete() && report.preemption_bound().is_none());
    /// let report = Builder::new()
    ///     .preemption_bound(2)
    ///     .unbounded_trial(0)
    ///     .explore(model);
    /// assert_eq!(report.preemption_bound(), Some(2));
    /// ```
    pub fn unbounded_trial(mut self, executions: u64) -> Self {
        self.settings.unbounded_trial = executions;
        self
    }

    /// Whether [`check`](Self::check) (and so [`model`] and `#[kase::test]`)
    /// passes when a budget ([`max_executions`](Self::max_executions),
    /// [`max_duration`](Self::max_duration)) stopped the exploration before
    /// it explored everything. Default `false`: an incomplete exploration
    /// fails the test, saying which budget stopped it and after how many
    /// executions, so that it never looks like a full pass (an exploration
    /// left incomplete only by a [`preemption_bound`](Self::preemption_bound)
    /// passes: you asked for the bound). `true` accepts
    /// it (the warning is still printed); `KASE_ALLOW_INCOMPLETE=1` sets it
    /// from the environment, `allow_incomplete = true` in `#[kase::test]`.
    /// [`explore`](Self::explore) is unaffected: its [`Report`] says
    /// [`complete`](Report::complete).
    ///
    /// ```
    /// # extern crate kase_rt as kase;
    /// use kase::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    /// use kase::{thread, Builder};
    ///
    /// let racy_enough = || {
    ///     static X: AtomicUsize = AtomicUsize::new(0);
    ///     let t = thread::spawn(|| X.store(1, SeqCst));
    ///     X.store(2, SeqCst);
    ///     t.join().unwrap();
    /// };
    /// // One execution of two: passes only when allowed.
    /// Builder::new().max_executions(1).allow_incomplete(true).check(racy_enough);
    /// let failed = std::panic::catch_unwind(|| {
    ///     Builder::new().max_executions(1).allow_incomplete(false).check(racy_enough)
    /// });
    /// assert!(failed.is_err());
    /// ```
    pub fn allow_incomplete(mut self, allow: bool) -> Self {
        self.settings.allow_incomplete = allow;
        self
    }

    /// Bound on visible operations in one execution; exceeding it is a
    /// livelock failure (default 1 000 000).
    pub fn max_steps(mut self, n: u64) -> Self {
        self.settings.max_steps = n;
        self
    }

    /// Whether a plain `Condvar::wait` may also wake without a notification,
    /// as std allows (default off: most code loops on its predicate, and
    /// the extra wakeups multiply executions). Timed waits always explore
    /// both timing out and being notified.
    pub fn spurious_wakeups(mut self, on: bool) -> Self {
        self.settings.spurious_wakeups = on;
        self
    }

    /// Stack size of each model thread in bytes (default
    /// [`DEFAULT_STACK_SIZE`](crate::DEFAULT_STACK_SIZE), 2 MiB as std; `KASE_STACK_SIZE`). Model
    /// threads run on stacks kase allocates, not on the test's: on Linux a
    /// model thread that overflows its stack makes kase print which one, the
    /// size, and this knob, then abort (elsewhere it is a plain crash).
    /// kase's own work at each visible operation (the choice of the thread
    /// to run next included) takes a few KiB of the same stack below the
    /// operation's caller.
    pub fn stack_size(mut self, bytes: usize) -> Self {
        self.settings.stack_size = bytes;
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
            Ok(s) => self.settings.replay = Some(s),
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
    /// # extern crate kase_rt as kase;
    /// use kase::{Builder, Persist};
    /// let report = Builder::new()
    ///     .name("my_crate::tests::nothing")
    ///     .persist(Persist::Off)
    ///     .explore(|| {});
    /// assert!(report.failure().is_none());
    /// ```
    pub fn name(mut self, name: impl Into<String>) -> Self {
        let package = self.settings.test.take().and_then(|t| t.package);
        let mut test = TestId::from_full_name(&name.into());
        test.package = package;
        self.settings.test = Some(test);
        self
    }

    /// What to do with the regression file of a named model (default
    /// [`Persist::File`], or `KASE_PERSIST`): replay its saved schedules
    /// first and append new failures, only print the line to add, or
    /// neither. Without a [`name`](Self::name) there is no regression file.
    pub fn persist(mut self, persist: Persist) -> Self {
        self.settings.persist = persist;
        self
    }

    /// The directory of regression files (overrides `KASE_REGRESSIONS_DIR`
    /// and the default `<crate>/kase-regressions`).
    pub fn regressions_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.settings.regressions_dir = Some(dir.into());
        self
    }

    /// After a failure, run at most `executions` more executions looking for
    /// an interleaving with the same failure and fewer preemptions, and
    /// report the simplest one found (default [`DEFAULT_MINIMIZE`](crate::DEFAULT_MINIMIZE), or
    /// `KASE_MINIMIZE`; 0 or `off` turns the search off). The search also
    /// stops after 2 seconds (or `max_duration`, if shorter), and runs at
    /// most 100 more executions than the exploration needed to find the
    /// failure, so that a failure found at once costs little more.
    pub fn minimize(mut self, executions: u64) -> Self {
        self.settings.minimize = executions;
        self
    }

    /// Adds to each step of a failure report the user-code frames of the
    /// stack at that operation (default off: capturing costs time at every
    /// operation; `KASE_BACKTRACE=1`).
    pub fn backtraces(mut self, on: bool) -> Self {
        self.settings.backtraces = on;
        self
    }

    /// Runs every new schedule twice and fails with
    /// [`FailureKind::Nondeterminism`](crate::FailureKind::Nondeterminism),
    /// naming the first difference, if the two runs perform different
    /// operations — catching `HashMap` order, time, randomness or std
    /// synchronisation inside the model (default off: it doubles the cost;
    /// `KASE_CHECK_DETERMINISM=1`).
    pub fn check_determinism(mut self, on: bool) -> Self {
        self.settings.check_determinism = on;
        self
    }

    /// How long an exploration may go without any visible operation before
    /// the watchdog reports a model thread blocked outside kase's control
    /// and ends the process (default 10 s; `None` turns it off;
    /// `KASE_WATCHDOG=<seconds>`, 0 for off). It watches from the model's
    /// first spawn on: before a second thread exists, a block outside kase
    /// would hang the same code without kase too, and is left to it.
    pub fn watchdog(mut self, limit: Option<Duration>) -> Self {
        self.settings.watchdog = limit;
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
        self.settings.progress = Some(on);
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
        self.settings.internal_error_at = Some((execution, step));
        self
    }

    /// Test hook, not part of the API: under
    /// [`MemoryModel::Rc11`], explore execution graphs from the first
    /// execution on, as if its first operation were weaker than `SeqCst`
    /// and concurrent (kase's RC11 oracle compares its graph explorers on
    /// programs that may be all `SeqCst`).
    #[doc(hidden)]
    pub fn __graphs_from_start(mut self) -> Self {
        self.settings.graphs_from_start = true;
        self
    }

    /// Test hook, not part of the API: under [`MemoryModel::Rc11`], the
    /// fast path of kase's `Once` may read every state coherence allows,
    /// not only the latest (to check that the latest alone loses nothing).
    #[doc(hidden)]
    pub fn __every_read(mut self) -> Self {
        self.settings.every_read = true;
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
        self.settings.test = Some(TestId {
            module: module_path.to_owned(),
            name: function.to_owned(),
            package: package.map(str::to_owned),
        });
        self.settings.crate_dir = crate_dir.map(PathBuf::from);
        self
    }

    /// Explores `model` and returns what was found. Never panics because the
    /// model failed: the failure is in [`Report::failure`].
    pub fn explore<F: Fn() + Sync>(&self, model: F) -> Report {
        explore::run(&self.settings, &model)
    }

    /// Like [`explore`](Self::explore), but panics if a failure is found: it
    /// prints the report and re-raises the original panic payload (so
    /// `#[should_panic(expected = "...")]` matches the model's own message),
    /// or panics with the report for other failures. It also panics if a
    /// budget stopped the exploration early, unless
    /// [`allow_incomplete`](Self::allow_incomplete) says otherwise.
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
        if let (Some(budget), false) = (&report.stopped_by, self.settings.allow_incomplete) {
            panic!("{}", incomplete(&report, budget));
        }
    }
}

/// Why `check` fails an exploration `budget` stopped, and what to do.
fn incomplete(report: &Report, budget: &str) -> String {
    let n = report.executions;
    let within = match report.preemption_bound {
        Some(b) if report.complete_within_bound => format!(
            " It is complete up to {b} preemption{}.",
            if b == 1 { "" } else { "s" }
        ),
        _ => String::new(),
    };
    let traces = report
        .traces
        .map(|t| format!(" ({t} distinct trace{})", if t == 1 { "" } else { "s" }))
        .unwrap_or_default();
    format!(
        "kase: the exploration is INCOMPLETE: it was stopped by {budget} after {n} execution{}{traces} \
         in {:.2?}.{within} None of them failed, but behaviours may be left unexplored, so this is not a \
         pass. Raise or remove the budget to explore everything, or accept an incomplete \
         exploration: `Builder::allow_incomplete(true)`, `#[kase::test(allow_incomplete = true)]`, \
         or KASE_ALLOW_INCOMPLETE=1.",
        if n == 1 { "" } else { "s" },
        report.duration
    )
}

/// Explores `model` with the default settings ([`Builder::new`]) and panics
/// with the report if it can fail.
///
/// ```
/// # extern crate kase_rt as kase;
/// use kase::sync::{Arc, Mutex};
/// use kase::thread;
///
/// kase::model(|| {
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

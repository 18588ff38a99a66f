//! Settings: everything an exploration is parameterised by ([`Settings`]),
//! their defaults, and the table of `KASE_*` environment variables
//! ([`VARS`]) that [`Builder::new`](crate::Builder::new) applies on top of
//! the defaults. No other place in kase reads a `KASE_*` variable.
//!
//! The values shared with `#[kase::test(...)]` (durations, schedules) are
//! parsed by `kase-grammar`, so both accept the same strings.

use std::ffi::OsStr;
use std::path::PathBuf;
use std::time::Duration;

use crate::explore::{Alternatives, MemoryModel, Strategy};
use crate::report::persist::{Persist, TestId};
use crate::report::Schedule;

/// Default bound on visible operations per execution.
pub const DEFAULT_MAX_STEPS: u64 = 1_000_000;
/// Default stack size of a model thread: 2 MiB, like std's spawned threads.
pub const DEFAULT_STACK_SIZE: usize = 2 << 20;
/// Default time without progress after which the watchdog ends the process.
pub const DEFAULT_WATCHDOG: Duration = Duration::from_secs(10);
/// Default number of executions the search for a simpler failing
/// interleaving may run after a failure (see
/// [`Builder::minimize`](crate::Builder::minimize)).
pub const DEFAULT_MINIMIZE: u64 = 1_000;
/// Default number of executions a search under a preemption bound first
/// spends exploring without the bound (see
/// [`Builder::unbounded_trial`](crate::Builder::unbounded_trial)).
pub const DEFAULT_UNBOUNDED_TRIAL: u64 = 256;
/// Whether critical-section peeking is on by default (see
/// [`Builder::peeking`](crate::Builder::peeking)).
pub const DEFAULT_PEEKING: bool = true;

/// Everything an exploration is parameterised by.
#[derive(Clone, Debug)]
pub(crate) struct Settings {
    pub strategy: Strategy,
    pub alternatives: Alternatives,
    pub max_executions: Option<u64>,
    pub max_duration: Option<Duration>,
    /// At most this many preemptions per execution
    /// (`Builder::preemption_bound`, `KASE_MAX_PREEMPTIONS`).
    pub preemption_bound: Option<usize>,
    /// Under a preemption bound, executions first spent exploring without
    /// it (`Builder::unbounded_trial`, `KASE_UNBOUNDED_TRIAL`; 0: none).
    pub unbounded_trial: u64,
    /// Set by the pipeline for that trial: it stops, silently, once this
    /// many executions of the call ran (counting `spent`), or once the
    /// explorer's estimate says it would take more than that.
    pub trial_limit: Option<u64>,
    /// `check` passes an exploration a budget cut short
    /// (`Builder::allow_incomplete`, `KASE_ALLOW_INCOMPLETE`).
    pub allow_incomplete: bool,
    pub max_steps: u64,
    pub spurious_wakeups: bool,
    pub stack_size: usize,
    pub replay: Option<Schedule>,
    /// The test being explored, if known: enables regression files.
    pub test: Option<TestId>,
    /// The directory of the crate the test is in (from `#[kase::test]`).
    pub crate_dir: Option<PathBuf>,
    /// Where regression files go (`KASE_REGRESSIONS_DIR`,
    /// `Builder::regressions_dir`); overrides `crate_dir`.
    pub regressions_dir: Option<PathBuf>,
    pub persist: Persist,
    /// Executions the search for a simpler failure may run (0: none).
    pub minimize: u64,
    /// Progress lines: always, never, or (`None`) after a few seconds.
    pub progress: Option<bool>,
    /// Run each new schedule twice and compare (`check_determinism`).
    pub check_determinism: bool,
    /// End the process after this long without progress (`None`: off).
    pub watchdog: Option<Duration>,
    /// Reports show user-code backtraces per step (`KASE_BACKTRACE`).
    pub backtraces: bool,
    /// Critical-section peeking (`Builder::peeking`, `KASE_PEEKING`).
    pub peeking: bool,
    /// The memory model atomics follow (`Builder::memory_model`,
    /// `KASE_MEMORY_MODEL`).
    pub memory_model: MemoryModel,
    /// Test hook: kase's own code panics with an internal error at this
    /// step of this execution (both 1-based).
    pub internal_error_at: Option<(u64, u64)>,
    /// Test hook: under RC11, explore execution graphs from the first
    /// execution on, even if every weak access turns out to be made alone.
    pub graphs_from_start: bool,
    /// Test hook: under RC11, every load may read every store coherence
    /// allows, `Once`'s fast path included (`WeakPoint::latest_only` off).
    pub every_read: bool,
    /// What earlier, discarded explorations of the same call already used
    /// of the budgets (`max_executions`, `max_duration` hold for the whole
    /// call, and messages name the budgets as the user set them).
    pub spent: Spent,
}

/// Executions run and time taken before the current exploration, in the
/// same `explore` call.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Spent {
    pub executions: u64,
    pub time: Duration,
    /// Iterative deepening: the bound an earlier round explored fully
    /// (messages about a budget met in a later round say so).
    pub complete_up_to: Option<usize>,
}

impl Spent {
    /// This, plus `executions` more run in `time` more.
    pub(crate) fn plus(self, executions: u64, time: Duration) -> Spent {
        Spent {
            executions: self.executions + executions,
            time: self.time + time,
            ..self
        }
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            strategy: Strategy::default(),
            alternatives: Alternatives::default(),
            max_executions: None,
            max_duration: None,
            preemption_bound: None,
            unbounded_trial: DEFAULT_UNBOUNDED_TRIAL,
            trial_limit: None,
            allow_incomplete: false,
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
            memory_model: MemoryModel::default(),
            internal_error_at: None,
            graphs_from_start: false,
            every_read: false,
            spent: Spent::default(),
        }
    }
}

impl Settings {
    /// The defaults, then every variable of [`VARS`] that is set.
    ///
    /// # Panics
    ///
    /// If one of them does not parse; the message names the variable and
    /// the expected form.
    pub(crate) fn from_env() -> Self {
        let mut settings = Settings::default();
        for var in VARS {
            if let Some(value) = std::env::var_os(var.name) {
                var.apply(&mut settings, &value);
            }
        }
        settings
    }
}

/// One `KASE_*` environment variable: its name, the form shown to users
/// when a value does not parse, and how a value is applied.
pub(crate) struct Var {
    pub name: &'static str,
    pub form: &'static str,
    read: Read,
}

/// How a variable's value is read and applied.
enum Read {
    /// The trimmed value; `None`: not of the variable's form (a panic
    /// naming both). A value that is not UTF-8 counts as unset.
    Text(fn(&mut Settings, &str) -> Option<()>),
    /// Like `Text`, but the parser explains what is wrong itself.
    Explained(fn(&mut Settings, &str) -> Result<(), String>),
    /// The raw value, whatever its bytes; never invalid.
    Raw(fn(&mut Settings, &OsStr)),
}

impl Var {
    fn apply(&self, settings: &mut Settings, value: &OsStr) {
        let name = self.name;
        match self.read {
            Read::Raw(apply) => apply(settings, value),
            Read::Text(apply) => {
                let Some(value) = value.to_str() else { return };
                if apply(settings, value.trim()).is_none() {
                    panic!(
                        "kase: {name}={value:?} is not valid: expected {}",
                        self.form
                    );
                }
            }
            Read::Explained(apply) => {
                let Some(value) = value.to_str() else { return };
                if let Err(why) = apply(settings, value.trim()) {
                    panic!("kase: {name}: {why}");
                }
            }
        }
    }
}

/// Every `KASE_*` variable, in the order `Builder::new` applies them.
pub(crate) const VARS: &[Var] = &[
    Var {
        name: "KASE_MAX_EXECUTIONS",
        form: "a number of executions, e.g. 10000",
        read: Read::Text(|s, v| v.parse().ok().map(|n| s.max_executions = Some(n))),
    },
    Var {
        name: "KASE_MAX_DURATION",
        form: kase_grammar::DURATION_EXPECTED,
        read: Read::Text(|s, v| {
            let d = kase_grammar::duration(v).ok()?;
            s.max_duration = Some(d);
            Some(())
        }),
    },
    Var {
        name: "KASE_MAX_PREEMPTIONS",
        form: "a number of preemptions, e.g. 2",
        read: Read::Text(|s, v| v.parse().ok().map(|n| s.preemption_bound = Some(n))),
    },
    Var {
        name: "KASE_UNBOUNDED_TRIAL",
        form: "a number of executions, e.g. 256 (0: apply the bound at once)",
        read: Read::Text(|s, v| v.parse().ok().map(|n| s.unbounded_trial = n)),
    },
    Var {
        name: "KASE_ALLOW_INCOMPLETE",
        form: "`1` (an incomplete exploration passes) or `0` (it fails the test)",
        read: Read::Text(|s, v| parse_switch(v).map(|on| s.allow_incomplete = on)),
    },
    Var {
        name: "KASE_MAX_STEPS",
        form: "a number of steps, e.g. 100000",
        read: Read::Text(|s, v| v.parse().ok().map(|n| s.max_steps = n)),
    },
    Var {
        name: "KASE_STACK_SIZE",
        form: "a number of bytes, e.g. 2097152",
        read: Read::Text(|s, v| v.parse().ok().map(|n| s.stack_size = n)),
    },
    Var {
        name: "KASE_STRATEGY",
        form: "`por` or `exhaustive`",
        read: Read::Text(|s, v| parse_strategy(v).map(|x| s.strategy = x)),
    },
    Var {
        name: "KASE_ALTERNATIVES",
        form: "`optimal` or a number k for k-partial",
        read: Read::Text(|s, v| parse_alternatives(v).map(|x| s.alternatives = x)),
    },
    Var {
        name: "KASE_PERSIST",
        form: "`file`, `print` or `off`",
        read: Read::Text(|s, v| parse_persist(v).map(|x| s.persist = x)),
    },
    Var {
        name: "KASE_REGRESSIONS_DIR",
        form: "a directory (empty: unset)",
        read: Read::Raw(|s, v| {
            if !v.is_empty() {
                s.regressions_dir = Some(PathBuf::from(v));
            }
        }),
    },
    Var {
        name: "KASE_MINIMIZE",
        form: "a number of executions, e.g. 1000, or `off`",
        read: Read::Text(|s, v| parse_minimize(v).map(|n| s.minimize = n)),
    },
    Var {
        name: "KASE_PROGRESS",
        form: "`1` (always) or `0` (never)",
        read: Read::Text(|s, v| parse_switch(v).map(|on| s.progress = Some(on))),
    },
    Var {
        name: "KASE_CHECK_DETERMINISM",
        form: "`1` (on) or `0` (off)",
        read: Read::Text(|s, v| parse_switch(v).map(|on| s.check_determinism = on)),
    },
    Var {
        name: "KASE_WATCHDOG",
        form: "a number of seconds, e.g. 30 (0: off)",
        read: Read::Text(|s, v| parse_watchdog(v).map(|w| s.watchdog = w)),
    },
    Var {
        name: "KASE_PEEKING",
        form: "`1` (on) or `0` (off)",
        read: Read::Text(|s, v| parse_switch(v).map(|on| s.peeking = on)),
    },
    Var {
        name: "KASE_MEMORY_MODEL",
        form: "`rc11` or `sc`",
        read: Read::Text(|s, v| parse_memory_model(v).map(|m| s.memory_model = m)),
    },
    Var {
        name: "KASE_BACKTRACE",
        form: "anything but empty or `0` (on)",
        read: Read::Raw(|s, v| s.backtraces = !v.is_empty() && v != "0"),
    },
    Var {
        name: "KASE_REPLAY",
        form: "a schedule from a failure report, e.g. kase1:1.0.0",
        read: Read::Explained(|s, v| {
            s.replay = Some(v.parse::<Schedule>().map_err(|e| e.to_string())?);
            Ok(())
        }),
    },
];

/// `por` or `exhaustive`, in any case.
fn parse_strategy(s: &str) -> Option<Strategy> {
    match s.to_ascii_lowercase().as_str() {
        "por" => Some(Strategy::Por),
        "exhaustive" => Some(Strategy::Exhaustive),
        _ => None,
    }
}

/// `optimal` (any case) or k ≥ 1 for k-partial.
fn parse_alternatives(s: &str) -> Option<Alternatives> {
    if s.eq_ignore_ascii_case("optimal") {
        return Some(Alternatives::Optimal);
    }
    s.parse()
        .ok()
        .filter(|&k| k > 0)
        .map(Alternatives::KPartial)
}

/// `file` (or `1`, `on`, `true`), `print`, `off` (or `0`, `false`, `no`).
fn parse_persist(s: &str) -> Option<Persist> {
    match s.to_ascii_lowercase().as_str() {
        "file" | "1" | "on" | "true" => Some(Persist::File),
        "print" => Some(Persist::Print),
        "off" | "0" | "false" | "no" => Some(Persist::Off),
        _ => None,
    }
}

/// A number of executions, or `off` for 0.
fn parse_minimize(s: &str) -> Option<u64> {
    if s.eq_ignore_ascii_case("off") {
        return Some(0);
    }
    s.parse().ok()
}

/// On (`1`, `true`, `on`, `yes`) or off (`0`, `false`, `off`, `no`).
fn parse_switch(s: &str) -> Option<bool> {
    match s.to_ascii_lowercase().as_str() {
        "1" | "true" | "on" | "yes" => Some(true),
        "0" | "false" | "off" | "no" => Some(false),
        _ => None,
    }
}

fn parse_memory_model(s: &str) -> Option<MemoryModel> {
    match s.to_ascii_lowercase().as_str() {
        "rc11" => Some(MemoryModel::Rc11),
        "sc" => Some(MemoryModel::SequentiallyConsistent),
        _ => None,
    }
}

/// Seconds, fractions allowed; 0 turns the watchdog off.
fn parse_watchdog(s: &str) -> Option<Option<Duration>> {
    let secs = s
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s >= 0.0)?;
    Some((secs > 0.0).then(|| Duration::from_secs_f64(secs)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(name: &str, value: &str) -> Settings {
        let var = VARS.iter().find(|v| v.name == name).expect(name);
        let mut settings = Settings::default();
        var.apply(&mut settings, OsStr::new(value));
        settings
    }

    fn rejects(name: &str, value: &str) -> String {
        let payload = std::panic::catch_unwind(|| with(name, value)).expect_err(value);
        payload
            .downcast_ref::<String>()
            .cloned()
            .unwrap_or_default()
    }

    #[test]
    fn every_variable_is_named_once_and_documented_in_builder_new() {
        let builder = include_str!("builder.rs");
        for (i, var) in VARS.iter().enumerate() {
            assert!(var.name.starts_with("KASE_"), "{}", var.name);
            assert!(VARS[..i].iter().all(|v| v.name != var.name), "{}", var.name);
            assert!(
                builder.contains(&format!("`{}`", var.name)),
                "{} is missing from Builder::new's documentation",
                var.name
            );
        }
    }

    #[test]
    fn failure_kind_names_of_the_grammar_are_failure_kinds_display() {
        use crate::FailureKind;
        for kind in kase_grammar::FailureKindName::ALL {
            let variant = match kind.variant() {
                "Panic" => FailureKind::Panic,
                "Deadlock" => FailureKind::Deadlock,
                "DataRace" => FailureKind::DataRace,
                "Livelock" => FailureKind::Livelock,
                "Leak" => FailureKind::Leak,
                "UseAfterFree" => FailureKind::UseAfterFree,
                "Nondeterminism" => FailureKind::Nondeterminism,
                other => panic!("no FailureKind::{other}"),
            };
            assert_eq!(variant.to_string(), kind.name());
        }
    }

    #[test]
    fn persist_values_parse() {
        assert_eq!(parse_persist("file"), Some(Persist::File));
        assert_eq!(parse_persist("PRINT"), Some(Persist::Print));
        assert_eq!(parse_persist("off"), Some(Persist::Off));
        assert_eq!(parse_persist("0"), Some(Persist::Off));
        assert_eq!(parse_persist("sometimes"), None);
    }

    #[test]
    fn switches_parse() {
        assert_eq!(parse_switch("1"), Some(true));
        assert_eq!(parse_switch("off"), Some(false));
        assert_eq!(parse_switch("maybe"), None);
    }

    #[test]
    fn durations_use_the_shared_grammar() {
        for (text, expected) in [
            ("30s", Duration::from_secs(30)),
            ("500ms", Duration::from_millis(500)),
            ("2m", Duration::from_secs(120)),
            ("2min", Duration::from_secs(120)),
            ("1.5s", Duration::from_millis(1500)),
            ("7", Duration::from_secs(7)),
            ("7us", Duration::from_micros(7)),
        ] {
            assert_eq!(with("KASE_MAX_DURATION", text).max_duration, Some(expected));
        }
        let message = rejects("KASE_MAX_DURATION", "5 parsecs");
        assert!(
            message.contains("KASE_MAX_DURATION=\"5 parsecs\""),
            "{message}"
        );
        assert!(
            message.contains(kase_grammar::DURATION_EXPECTED),
            "{message}"
        );
    }

    #[test]
    fn values_are_parsed_as_before() {
        assert_eq!(with("KASE_PERSIST", "PRINT").persist, Persist::Print);
        assert_eq!(with("KASE_PERSIST", "0").persist, Persist::Off);
        rejects("KASE_PERSIST", "sometimes");
        assert_eq!(with("KASE_PROGRESS", "1").progress, Some(true));
        assert_eq!(with("KASE_PROGRESS", " off ").progress, Some(false));
        rejects("KASE_PROGRESS", "maybe");
        assert_eq!(with("KASE_MINIMIZE", "OFF").minimize, 0);
        assert_eq!(
            with("KASE_MAX_PREEMPTIONS", " 2 ").preemption_bound,
            Some(2)
        );
        rejects("KASE_MAX_PREEMPTIONS", "two");
        assert!(with("KASE_ALLOW_INCOMPLETE", "1").allow_incomplete);
        assert!(!with("KASE_ALLOW_INCOMPLETE", "no").allow_incomplete);
        rejects("KASE_ALLOW_INCOMPLETE", "maybe");
        assert_eq!(with("KASE_WATCHDOG", "0").watchdog, None);
        assert_eq!(
            with("KASE_WATCHDOG", "0.5").watchdog,
            Some(Duration::from_millis(500))
        );
        rejects("KASE_WATCHDOG", "-1");
        assert_eq!(
            with("KASE_ALTERNATIVES", "3").alternatives,
            Alternatives::KPartial(3)
        );
        rejects("KASE_ALTERNATIVES", "0");
        assert_eq!(
            with("KASE_STRATEGY", "Exhaustive").strategy,
            Strategy::Exhaustive
        );
        assert!(with("KASE_BACKTRACE", "full").backtraces);
        assert!(!with("KASE_BACKTRACE", "0").backtraces);
        assert!(!with("KASE_BACKTRACE", "").backtraces);
        assert_eq!(with("KASE_REGRESSIONS_DIR", "").regressions_dir, None);
        assert_eq!(
            with("KASE_REGRESSIONS_DIR", " d ").regressions_dir,
            Some(PathBuf::from(" d "))
        );
        assert_eq!(
            with("KASE_REPLAY", "kase1:1.0")
                .replay
                .map(|s| s.to_string()),
            Some("kase1:1.0".to_owned())
        );
        let message = rejects("KASE_REPLAY", "kase1:1..x");
        assert!(message.starts_with("kase: KASE_REPLAY: "), "{message}");
    }
}

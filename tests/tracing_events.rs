//! `tracing` events under target `kase` (feature `tracing`): progress, one
//! summary per exploration, one event per failure found — checked field by
//! field with a small capturing subscriber.
//!
//! The `kase-check` package's dev-dependencies turn the runtime's `tracing`
//! feature on, so `cargo test` runs these; the last test checks with
//! `cargo tree` that a normal build of kase has no `tracing` at all.
//!
//! Each test installs its subscriber for its own thread only
//! (`with_default`): explorations emit their events on the thread that
//! calls `explore` (model threads are coroutines on it), so tests running in
//! parallel do not see each other's events.

use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::process::Command;
use std::sync::Mutex as StdMutex;
use std::time::Duration;

use kase::sync::{Arc, Mutex};
use kase::{thread, Builder, Persist, Report};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

mod common;
use common::models::{lost_update, many_traces, LOST};

/// A recorded field value.
#[derive(Clone, Debug, PartialEq)]
enum Value {
    U64(u64),
    I64(i64),
    F64(f64),
    Bool(bool),
    /// `&str` fields, and `Debug` / `Display` ones (`%kind`, the message).
    Text(String),
}

/// One event as the subscriber saw it.
#[derive(Debug)]
struct Captured {
    name: &'static str,
    target: &'static str,
    level: Level,
    fields: BTreeMap<&'static str, Value>,
}

impl Captured {
    fn get(&self, field: &str) -> Option<&Value> {
        self.fields.get(field)
    }

    fn u64(&self, field: &str) -> u64 {
        match self.get(field) {
            Some(Value::U64(n)) => *n,
            other => panic!("{}: field {field} is {other:?}, not a u64", self.name),
        }
    }

    fn text(&self, field: &str) -> &str {
        match self.get(field) {
            Some(Value::Text(s)) => s,
            other => panic!("{}: field {field} is {other:?}, not text", self.name),
        }
    }

    fn bool(&self, field: &str) -> bool {
        match self.get(field) {
            Some(Value::Bool(b)) => *b,
            other => panic!("{}: field {field} is {other:?}, not a bool", self.name),
        }
    }

    fn f64(&self, field: &str) -> f64 {
        match self.get(field) {
            Some(Value::F64(x)) => *x,
            other => panic!("{}: field {field} is {other:?}, not an f64", self.name),
        }
    }
}

#[derive(Default)]
struct Fields(BTreeMap<&'static str, Value>);

impl Visit for Fields {
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name(), Value::U64(value));
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name(), Value::I64(value));
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.0.insert(field.name(), Value::F64(value));
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name(), Value::Bool(value));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name(), Value::Text(value.to_owned()));
    }
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0
            .insert(field.name(), Value::Text(format!("{value:?}")));
    }
}

/// A subscriber that keeps every event (spans are ignored: kase has none).
#[derive(Clone, Default)]
struct Capture(std::sync::Arc<StdMutex<Vec<Captured>>>);

impl Subscriber for Capture {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut fields = Fields::default();
        event.record(&mut fields);
        let meta = event.metadata();
        self.0.lock().unwrap().push(Captured {
            name: meta.name(),
            target: meta.target(),
            level: *meta.level(),
            fields: fields.0,
        });
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

/// Runs `f` with a capturing subscriber on this thread; its result and the
/// events kase emitted (target `kase`), in order.
fn capture<R>(f: impl FnOnce() -> R) -> (R, Vec<Captured>) {
    let capture = Capture::default();
    let result = tracing::subscriber::with_default(capture.clone(), f);
    let events = std::mem::take(&mut *capture.0.lock().unwrap());
    assert!(
        events.iter().all(|e| e.target == "kase"),
        "only kase emits events here: {events:#?}"
    );
    (result, events)
}

fn named<'e>(events: &'e [Captured], name: &str) -> Vec<&'e Captured> {
    events.iter().filter(|e| e.name == name).collect()
}

#[test]
fn a_failure_emits_one_failure_event_with_the_reports_data_and_a_summary() {
    let dir = std::env::temp_dir().join(format!("kase-tracing-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    let (report, events) = capture(|| {
        Builder::new()
            .name("tracing_events::lost_update")
            .regressions_dir(&dir)
            .persist(Persist::File)
            .explore(lost_update)
    });
    let failure = report.failure().expect("the lost update is found");

    let failures = named(&events, "failure");
    assert_eq!(failures.len(), 1, "one failure event: {events:#?}");
    let event = failures[0];
    assert_eq!(event.level, Level::WARN);
    assert_eq!(event.text("test"), "tracing_events::lost_update");
    assert_eq!(event.text("kind"), "panic");
    assert_eq!(event.text("schedule"), failure.schedule().to_string());
    assert!(event.text("panic_message").contains(LOST));
    assert_eq!(event.u64("steps"), failure.steps() as u64);
    assert_eq!(
        Some(event.u64("preemptions") as usize),
        failure.preemptions()
    );
    assert_eq!(event.text("report"), failure.to_string());
    assert!(event.text("report").contains("Interleaving"));
    let saved = failure.saved_to().expect("saved to the regression file");
    assert_eq!(event.text("saved_to"), saved.display().to_string());
    assert!(event.get("regression_file").is_none(), "found by exploring");
    assert_eq!(
        event.text("replay_command"),
        failure.replay_command().unwrap()
    );
    assert!(event.text("message").starts_with("found a panic: "));

    let summaries = named(&events, "summary");
    assert_eq!(summaries.len(), 1, "one summary: {events:#?}");
    let summary = summaries[0];
    assert_eq!(summary.level, Level::INFO);
    assert_eq!(summary.text("test"), "tracing_events::lost_update");
    assert_eq!(summary.text("outcome"), "failure");
    assert_eq!(summary.text("failure"), "panic");
    assert!(!summary.bool("complete"));
    assert_eq!(summary.u64("executions"), report.executions());
    assert_eq!(summary.u64("replayed"), 0);
    assert!(summary.text("message").ends_with(": found a panic"));

    // The next run replays the saved schedule first: the failure event says
    // where it came from.
    let (again, events) = capture(|| {
        Builder::new()
            .name("tracing_events::lost_update")
            .regressions_dir(&dir)
            .persist(Persist::File)
            .explore(lost_update)
    });
    assert_eq!(again.replayed(), 1);
    let failures = named(&events, "failure");
    assert_eq!(failures.len(), 1, "{events:#?}");
    assert_eq!(
        failures[0].text("regression_file"),
        again
            .failure()
            .unwrap()
            .regression_file()
            .unwrap()
            .display()
            .to_string()
    );
    assert_eq!(named(&events, "summary")[0].u64("replayed"), 1);
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn a_complete_exploration_emits_a_summary_only() {
    let (report, events): (Report, _) = capture(|| {
        Builder::new().explore(|| {
            let counter = Arc::new(Mutex::new(0));
            let c = counter.clone();
            let t = thread::spawn(move || *c.lock().unwrap() += 1);
            *counter.lock().unwrap() += 1;
            t.join().unwrap();
            assert_eq!(*counter.lock().unwrap(), 2);
        })
    });
    assert!(report.complete(), "{report}");
    assert!(named(&events, "failure").is_empty(), "{events:#?}");
    let summaries = named(&events, "summary");
    assert_eq!(summaries.len(), 1, "{events:#?}");
    let summary = summaries[0];
    assert_eq!(summary.u64("executions"), report.executions());
    assert_eq!(summary.u64("executions"), 2);
    assert_eq!(summary.u64("sleep_set_blocked"), 0);
    assert!(summary.bool("complete"));
    assert_eq!(summary.text("outcome"), "complete");
    assert!(summary.u64("max_depth") > 0);
    // Absent, not empty: the exploration has no name, no budget stopped it
    // and nothing failed.
    for absent in ["test", "stopped_by", "failure"] {
        assert!(summary.get(absent).is_none(), "{absent}: {summary:#?}");
    }
    assert!(summary
        .text("message")
        .starts_with("done: 2 executions in "));
}

#[test]
fn progress_events_come_every_few_seconds_even_with_kase_progress_off() {
    // Millions of traces: the exploration runs until the budget stops it.
    let budget = Duration::from_millis(2_500);
    let (report, events) = capture(|| {
        Builder::new()
            .progress(false) // no stderr lines: events do not depend on them
            .max_duration(budget)
            .explore(many_traces)
    });
    assert!(!report.complete() && report.failure().is_none(), "{report}");

    let progress = named(&events, "progress");
    assert!(
        !progress.is_empty(),
        "a progress event after 1 s: {events:#?}"
    );
    let mut previous = 0;
    for event in &progress {
        assert_eq!(event.level, Level::DEBUG);
        let executions = event.u64("executions");
        assert!(executions > previous && executions <= report.executions());
        previous = executions;
        assert!(event.f64("elapsed_secs") >= 1.0, "{event:#?}");
        assert!(event.u64("per_second") > 0, "{event:#?}");
        assert!(event.u64("depth") > 0 && event.u64("depth") <= event.u64("max_depth"));
        assert!(event.get("test").is_none());
        let explored = event.f64("explored");
        assert!((0.0..=1.0).contains(&explored), "{event:#?}");
        assert!(
            event.text("message").contains(" executions (")
                && event.text("message").contains("elapsed"),
            "{event:#?}"
        );
    }

    let summary = named(&events, "summary");
    assert_eq!(summary.len(), 1, "{events:#?}");
    assert_eq!(summary[0].text("outcome"), "incomplete");
    // The deadline may pass between executions, during one, or while the
    // explorer computes the next one; the reason says which.
    assert!(
        summary[0]
            .text("stopped_by")
            .starts_with("max_duration = 2.5s"),
        "{summary:#?}"
    );
    assert_eq!(summary[0].u64("executions"), report.executions());
    assert!(summary[0].f64("elapsed_secs") >= budget.as_secs_f64());
    assert!(summary[0].u64("max_depth") >= progress[0].u64("max_depth"));
}

/// `cargo tree` of the `kase-check` package (the `kase` crate) over normal
/// and build dependencies, with extra arguments: one package name per line.
fn normal_dependencies(extra: &[&str]) -> Vec<String> {
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
    let output = Command::new(env!("CARGO"))
        .args(["tree", "--offline", "--manifest-path", manifest])
        .args(["-p", "kase-check", "-e", "normal,build"])
        .args(["--prefix", "none", "--format", "{p}"])
        .args(extra)
        .output()
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "cargo tree failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .expect("cargo tree prints UTF-8")
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .collect()
}

#[test]
fn a_normal_build_compiles_no_tracing_and_the_feature_brings_it() {
    let default = normal_dependencies(&[]);
    assert!(
        default.iter().any(|p| p == "kase-rt"),
        "the runtime is there: {default:?}"
    );
    assert!(
        !default.iter().any(|p| p.starts_with("tracing")),
        "a normal build of kase has no tracing: {default:?}"
    );
    // The control: with the feature, the same query sees it.
    let with_feature = normal_dependencies(&["--features", "tracing"]);
    assert!(
        with_feature.iter().any(|p| p == "tracing"),
        "--features tracing brings tracing: {with_feature:?}"
    );
}

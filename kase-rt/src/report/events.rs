//! `tracing` events under target `kase` (cargo feature `tracing`): the data
//! of the progress lines, of the summary at the end of each exploration, and
//! of each failure found, for programs and test harnesses that subscribe.
//!
//! The events, their levels and fields are documented in the crate
//! documentation (`lib.rs`, "Feature `tracing`"); keep the two in step.
//! Without the feature these functions compile to nothing and no `tracing`
//! is built.

use std::time::Duration;

use super::Failure;

/// Whether events are compiled in (feature `tracing`).
pub(crate) const ENABLED: bool = cfg!(feature = "tracing");

/// The numbers of a progress line or event.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Snapshot {
    pub executions: u64,
    /// Executions per second since the previous line (`None` if no time
    /// passed).
    pub per_second: Option<u64>,
    pub sleep_set_blocked: u64,
    /// Visible operations in the last execution.
    pub depth: usize,
    pub max_depth: usize,
    pub elapsed: Duration,
    /// The part of the exploration done, as the explorer estimates it.
    pub explored: Option<f64>,
}

/// The numbers of the summary at the end of an exploration.
#[derive(Clone, Debug)]
// Without the feature only the stderr line reads some of them.
#[cfg_attr(not(feature = "tracing"), allow(dead_code))]
pub(crate) struct Summary<'a> {
    pub executions: u64,
    pub per_second: Option<u64>,
    pub sleep_set_blocked: u64,
    pub max_depth: usize,
    pub elapsed: Duration,
    pub complete: bool,
    /// `"complete"`, `"incomplete"` or `"failure"`.
    pub outcome: &'static str,
    /// The budget that stopped the exploration early, e.g. `max_duration = 8s`.
    pub stopped_by: Option<&'a str>,
    /// The kind of failure found, e.g. `data race`.
    pub failure: Option<String>,
    /// Saved schedules replayed before exploring.
    pub replayed: u64,
}

/// A progress event; `line` is the text of the stderr line.
#[cfg_attr(not(feature = "tracing"), allow(unused_variables))]
pub(crate) fn progress(test: Option<&str>, s: &Snapshot, line: &str) {
    #[cfg(feature = "tracing")]
    tracing::event!(
        name: "progress",
        target: "kase",
        tracing::Level::DEBUG,
        test,
        executions = s.executions,
        per_second = s.per_second,
        sleep_set_blocked = s.sleep_set_blocked,
        depth = s.depth as u64,
        max_depth = s.max_depth as u64,
        elapsed_secs = s.elapsed.as_secs_f64(),
        explored = s.explored,
        "{line}"
    );
}

/// The summary event of an exploration; `line` is the text of the stderr
/// summary line.
#[cfg_attr(not(feature = "tracing"), allow(unused_variables))]
pub(crate) fn summary(test: Option<&str>, s: &Summary<'_>, line: &str) {
    #[cfg(feature = "tracing")]
    tracing::event!(
        name: "summary",
        target: "kase",
        tracing::Level::INFO,
        test,
        executions = s.executions,
        per_second = s.per_second,
        sleep_set_blocked = s.sleep_set_blocked,
        max_depth = s.max_depth as u64,
        elapsed_secs = s.elapsed.as_secs_f64(),
        complete = s.complete,
        outcome = s.outcome,
        stopped_by = s.stopped_by,
        failure = s.failure.as_deref(),
        replayed = s.replayed,
        "{line}"
    );
}

/// The event of a failure found.
#[cfg_attr(not(feature = "tracing"), allow(unused_variables))]
pub(crate) fn failure(test: Option<&str>, f: &Failure) {
    #[cfg(feature = "tracing")]
    {
        let path = |p: Option<&std::path::Path>| p.map(|p| p.display().to_string());
        tracing::event!(
            name: "failure",
            target: "kase",
            tracing::Level::WARN,
            test,
            kind = %f.kind(),
            schedule = %f.schedule(),
            panic_message = f.message(),
            steps = f.steps() as u64,
            preemptions = f.preemptions().map(|p| p as u64),
            regression_file = path(f.regression_file()).as_deref(),
            saved_to = path(f.saved_to()).as_deref(),
            replay_command = f.replay_command(),
            report = %f,
            "found a {}",
            f.summary()
        );
    }
}

//! Progress lines on stderr for long explorations: with `KASE_PROGRESS=1`
//! (or `Builder::progress(true)`) from the start, otherwise once an
//! exploration has run for a few seconds; then a summary line at the end.
//!
//! The lines go straight to the process's stderr, past the test harness's
//! output capture: they are meant to be seen while a long test runs. With the
//! `tracing` feature the same data also goes out as `tracing` events (see
//! `events.rs`).

use std::io::Write;
use std::time::{Duration, Instant};

use super::events::{self, Snapshot, Summary};
use super::Report;

/// Explorations running longer than this show progress unless told not to.
const AUTO_AFTER: Duration = Duration::from_secs(5);
/// Time between two progress lines.
const INTERVAL: Duration = Duration::from_secs(3);
/// Check the clock only every this many executions (they can be very fast).
const CHECK_EVERY: u64 = 16;

/// The numbers a progress line shows.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Counts {
    pub executions: u64,
    pub sleep_set_blocked: u64,
    /// Visible operations in the last execution.
    pub depth: usize,
}

/// When the next line (or event) is due, and the count at the previous one
/// (for the rate).
struct Pace {
    next: Instant,
    last: (Instant, u64),
}

impl Pace {
    fn new(start: Instant, first: Duration) -> Self {
        Pace {
            next: start + first,
            last: (start, 0),
        }
    }

    /// If one is due at `now`: the rate since the previous one.
    fn due(&mut self, now: Instant, executions: u64) -> Option<Option<u64>> {
        if now < self.next {
            return None;
        }
        self.next = now + INTERVAL;
        let (then, executions_then) = self.last;
        self.last = (now, executions);
        // An exploration redone (peeking off, a fallback) counts afresh.
        Some(per_second(
            executions.saturating_sub(executions_then),
            now - then,
        ))
    }
}

/// Decides when to print (and, with the `tracing` feature, when to emit
/// events), and does it.
pub(crate) struct Progress {
    /// `Some(true)`: from the start; `Some(false)`: never; `None`: after
    /// [`AUTO_AFTER`].
    mode: Option<bool>,
    label: String,
    /// The test's full name, if known (the `test` field of events).
    name: Option<String>,
    start: Instant,
    lines: Pace,
    /// `tracing` events: from the first second, whatever `mode` says.
    events: Pace,
    shown: bool,
    max_depth: usize,
    /// What the user can do about a long exploration, shown once, after the
    /// first progress line.
    hint: Hint,
    /// The exploration runs over RC11's graphs (the hint then says so).
    rc11: bool,
}

impl Progress {
    pub(crate) fn new(mode: Option<bool>, name: Option<&str>, hint: Hint) -> Self {
        let start = Instant::now();
        let first = match mode {
            Some(true) => Duration::from_secs(1),
            _ => AUTO_AFTER,
        };
        Progress {
            mode,
            label: match name {
                Some(name) => format!("kase [{name}]"),
                None => "kase".to_owned(),
            },
            name: name.map(str::to_owned),
            start,
            lines: Pace::new(start, first),
            events: Pace::new(start, Duration::from_secs(1)),
            shown: false,
            max_depth: 0,
            hint,
            rc11: false,
        }
    }

    /// The exploration about to run is over Rust's memory model: the hint
    /// says so, in place of the advice about peeking, which is off there.
    pub(crate) fn over_rc11(&mut self) {
        self.rc11 = true;
    }

    /// After each execution; `explored` estimates the part of the
    /// exploration done (asked only when a line is due: it walks the
    /// explorer's path).
    pub(crate) fn tick(&mut self, counts: Counts, explored: &dyn Fn() -> Option<f64>) {
        self.max_depth = self.max_depth.max(counts.depth);
        let lines = self.mode != Some(false);
        if !(lines || events::ENABLED) || counts.executions % CHECK_EVERY != 0 {
            return;
        }
        let now = Instant::now();
        let snapshot = |per_second| Snapshot {
            executions: counts.executions,
            per_second,
            sleep_set_blocked: counts.sleep_set_blocked,
            depth: counts.depth,
            max_depth: self.max_depth,
            elapsed: now - self.start,
            explored: explored(),
        };
        if events::ENABLED {
            if let Some(rate) = self.events.due(now, counts.executions) {
                let s = snapshot(rate);
                events::progress(self.name.as_deref(), &s, &progress_line(&s));
            }
        }
        if lines {
            if let Some(rate) = self.lines.due(now, counts.executions) {
                emit(&format!(
                    "{}: {}",
                    self.label,
                    progress_line(&snapshot(rate))
                ));
                if !std::mem::replace(&mut self.shown, true) {
                    emit(&format!(
                        "{}: still exploring: {}",
                        self.label,
                        self.hint.text(self.rc11)
                    ));
                }
            }
        }
    }

    /// Iterative deepening finished a round: every execution with at most
    /// `bound` preemptions ran (`executions` of them), none failed, and the
    /// next round starts, counting afresh. Said where progress is shown, so
    /// that the count going back to zero does not look like lost work.
    pub(crate) fn round_done(&self, bound: usize, executions: u64) {
        if self.shown || self.mode == Some(true) {
            emit(&format!(
                "{}: every execution with at most {} explored ({}), no failure; now at most {}, \
                 counting from 0",
                self.label,
                super::preemptions(bound),
                self::executions(executions),
                super::preemptions(bound + 1),
            ));
        }
    }

    /// At the end of an exploration: the summary line, if progress was shown
    /// (or asked for), and the summary event.
    pub(crate) fn finish(&self, report: &Report) {
        let elapsed = self.start.elapsed();
        let (outcome, text) = match (&report.failure, &report.stopped_by) {
            (Some(f), _) => ("failure", format!("found a {}", f.kind())),
            (None, Some(budget)) => {
                let within = match report.preemption_bound {
                    Some(bound) if report.complete_within_bound => {
                        format!(", complete up to {}", super::preemptions(bound))
                    }
                    _ => String::new(),
                };
                (
                    "incomplete",
                    format!("INCOMPLETE (stopped by {budget}){within}"),
                )
            }
            (None, None) => ("complete", "complete".to_owned()),
        };
        let summary = Summary {
            executions: report.executions,
            per_second: per_second(report.executions, elapsed),
            sleep_set_blocked: report.sleep_set_blocked,
            max_depth: self.max_depth,
            elapsed,
            complete: report.complete,
            outcome,
            stopped_by: report.stopped_by.as_deref(),
            failure: report.failure.as_ref().map(|f| f.kind().to_string()),
            replayed: report.replayed,
        };
        // Where executions and classes differ (the oracle, a bound, RC11),
        // how many distinct ones they ran.
        let distinct = match (report.traces, report.graphs.is_some()) {
            (None, _) => String::new(),
            (Some(n), true) => format!(", {} distinct graphs", thousands(n)),
            (Some(n), false) => format!(", {} distinct traces", thousands(n)),
        };
        let line = format!(
            "done: {} in {elapsed:.2?} ({}/s), {} sleep-set-blocked, max depth {}{distinct}: {text}",
            executions(summary.executions),
            rate(summary.per_second),
            thousands(summary.sleep_set_blocked),
            summary.max_depth,
        );
        events::summary(self.name.as_deref(), &summary, &line);
        if self.shown || self.mode == Some(true) {
            emit(&format!("{}: {line}", self.label));
        }
    }
}

/// A progress line without its label.
fn progress_line(s: &Snapshot) -> String {
    format!(
        "{} ({}/s), {} sleep-set-blocked, depth {} (max {}), {:.1?} elapsed{}",
        executions(s.executions),
        rate(s.per_second),
        thousands(s.sleep_set_blocked),
        s.depth,
        s.max_depth,
        s.elapsed,
        s.explored
            .map(|part| estimate(part, s.executions, s.elapsed))
            .unwrap_or_default()
    )
}

/// `; ~3% explored (estimate: ~40,000 executions in all, ~2min left)`, from
/// the part the explorer thinks it explored after `executions` in
/// `elapsed`; empty while it has no idea (nothing behind it yet).
fn estimate(part: f64, executions: u64, elapsed: Duration) -> String {
    if part.is_nan() || part <= 0.0 {
        return String::new();
    }
    let part = part.min(1.0);
    let percent = match part * 100.0 {
        p if p < 0.1 => "<0.1%".to_owned(),
        p if p < 10.0 => format!("{p:.1}%"),
        p => format!("{p:.0}%"),
    };
    let total = executions as f64 / part;
    let left = elapsed.as_secs_f64() * (1.0 - part) / part;
    format!(
        "; ~{percent} explored (estimate: ~{} executions in all, ~{} left)",
        approximately(total),
        span(left)
    )
}

/// A large count, roughly: `40,000`, `3.2 million`, `1e15`.
fn approximately(n: f64) -> String {
    match n {
        n if n < 1e6 => thousands(n.round() as u64),
        n if n < 1e9 => format!("{:.1} million", n / 1e6),
        n if n < 1e12 => format!("{:.1} billion", n / 1e9),
        n => format!("{n:.0e}"),
    }
}

/// A duration in seconds, roughly, in the largest unit that fits.
fn span(secs: f64) -> String {
    // Unit symbols follow the number directly, words after a space.
    const UNITS: [(f64, &str); 5] = [
        (365.0 * 86_400.0, " years"),
        (86_400.0, " days"),
        (3_600.0, "h"),
        (60.0, "min"),
        (1.0, "s"),
    ];
    if secs >= 1e4 * UNITS[0].0 {
        return "more than 10,000 years".to_owned();
    }
    let (unit, name) = UNITS
        .iter()
        .copied()
        .find(|&(unit, _)| secs >= unit)
        .unwrap_or((1.0, "s"));
    let value = secs / unit;
    let decimals = usize::from(value < 10.0);
    format!("{value:.decimals$}{name}")
}

fn executions(n: u64) -> String {
    format!(
        "{} execution{}",
        thousands(n),
        if n == 1 { "" } else { "s" }
    )
}

/// Executions per second over `over` (`None` if no time passed).
fn per_second(executions: u64, over: Duration) -> Option<u64> {
    let secs = over.as_secs_f64();
    (secs > 0.0).then(|| (executions as f64 / secs).round() as u64)
}

fn rate(per_second: Option<u64>) -> String {
    per_second.map_or_else(|| "-".to_owned(), thousands)
}

/// `1234567` → `1,234,567`.
pub(crate) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// What to do about an exploration that runs long: its budgets
/// (`max_executions`, `max_duration`), its preemption bound and whether
/// peeking is on.
pub(crate) struct Hint {
    pub(crate) max_executions: Option<u64>,
    pub(crate) max_duration: Option<Duration>,
    pub(crate) preemption_bound: Option<usize>,
    pub(crate) peeking: bool,
}

impl Hint {
    /// The advice; `rc11`: the exploration is over Rust's memory model
    /// (then peeking is off whatever the settings, and the store each load
    /// reads multiplies the executions).
    pub(crate) fn text(&self, rc11: bool) -> String {
        let Hint {
            max_executions,
            max_duration,
            preemption_bound,
            peeking,
        } = *self;
        let mut hint = match (max_executions, max_duration) {
            (None, None) => "set max_duration (KASE_MAX_DURATION=60s) or max_executions to bound it, \
                 with allow_incomplete (KASE_ALLOW_INCOMPLETE=1) to accept the bounded result, or make \
                 the model smaller (fewer threads or operations per thread)"
                .to_owned(),
            (executions, duration) => {
                let budgets: Vec<String> = executions
                    .map(|n| format!("max_executions = {n}"))
                    .into_iter()
                    .chain(duration.map(|d| format!("max_duration = {d:?}")))
                    .collect();
                format!(
                    "it stops at {}, INCOMPLETE, which fails the test unless allow_incomplete \
                     (KASE_ALLOW_INCOMPLETE=1) accepts it; a smaller model explores fully",
                    budgets.join(" or ")
                )
            }
        };
        match preemption_bound {
            None => hint.push_str(
                "; a preemption bound (Builder::preemption_bound(2), KASE_MAX_PREEMPTIONS=2) explores \
                 every execution with few preemptions, where most bugs show, and can finish",
            ),
            Some(bound @ 1..) => hint.push_str(&format!(
                "; it explores every execution with at most {bound} preemption{}, and a lower bound \
                 (KASE_MAX_PREEMPTIONS={}) finishes sooner",
                if bound == 1 { "" } else { "s" },
                bound - 1
            )),
            Some(0) => {}
        }
        if rc11 {
            hint.push_str("; ");
            hint.push_str(RC11_ADVICE);
        } else if !peeking {
            hint.push_str(
                "; critical-section peeking is off: turning it on (Builder::peeking(true), \
                 KASE_PEEKING=1) explores far fewer executions of models with locks",
            );
        }
        hint
    }
}

/// What to say of an exploration over Rust's memory model that runs long
/// or stops at a budget (the progress hint and the budget's warning).
pub(crate) const RC11_ADVICE: &str = "Rust's memory model (RC11) is explored for its atomics \
     weaker than SeqCst, where a load may read any of several stores: that multiplies the \
     executions. memory_model = \"sc\" (KASE_MEMORY_MODEL=sc) explores the interleavings \
     alone, far fewer, and misses only the bugs that need weak memory";

fn emit(line: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(format!("{line}\n").as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_redone_exploration_counting_afresh_is_no_overflow() {
        let start = Instant::now();
        let mut pace = Pace::new(start, Duration::ZERO);
        assert!(pace.due(start, 500).is_some());
        // The pipeline explored again: its count starts over.
        let later = start + INTERVAL;
        assert_eq!(pace.due(later, 20), Some(Some(0)));
    }

    fn hint(
        max_executions: Option<u64>,
        max_duration: Option<Duration>,
        preemption_bound: Option<usize>,
        peeking: bool,
        rc11: bool,
    ) -> String {
        Hint {
            max_executions,
            max_duration,
            preemption_bound,
            peeking,
        }
        .text(rc11)
    }

    #[test]
    fn hints_name_the_budget_or_how_to_set_one() {
        let h = hint(None, None, None, true, false);
        assert!(h.starts_with("set max_duration (KASE_MAX_DURATION"), "{h}");
        assert!(h.contains("KASE_MAX_PREEMPTIONS=2"), "{h}");
        assert!(!h.contains("peeking"), "{h}");
        let h = hint(Some(5), Some(Duration::from_secs(2)), Some(2), false, false);
        assert!(h.contains("at most 2 preemptions"), "{h}");
        assert!(h.contains("KASE_MAX_PREEMPTIONS=1) finishes sooner"), "{h}");
        assert!(!hint(None, None, Some(0), true, false).contains("PREEMPTIONS"));
        assert!(
            h.starts_with("it stops at max_executions = 5 or max_duration = 2s"),
            "{h}"
        );
        assert!(h.contains("peeking is off"), "{h}");
        // Over RC11's graphs peeking is off anyway: the memory model is what
        // to say.
        let h = hint(Some(5), None, Some(2), false, true);
        assert!(!h.contains("peeking"), "{h}");
        assert!(
            h.ends_with("misses only the bugs that need weak memory"),
            "{h}"
        );
        let settings = Hint {
            max_executions: None,
            max_duration: None,
            preemption_bound: None,
            peeking: false,
        };
        let mut progress = Progress::new(Some(false), None, settings);
        progress.over_rc11();
        progress.over_rc11();
        let shown = progress.hint.text(progress.rc11);
        assert!(!shown.contains("peeking"), "{shown}");
        assert_eq!(shown.matches("KASE_MEMORY_MODEL=sc").count(), 1);
    }

    #[test]
    fn estimates_say_how_much_is_left_roughly() {
        let minute = Duration::from_secs(60);
        assert_eq!(estimate(0.0, 100, minute), "");
        assert_eq!(
            estimate(0.25, 1_000, minute),
            "; ~25% explored (estimate: ~4,000 executions in all, ~3.0min left)"
        );
        let tiny = estimate(1e-9, 1_000_000, minute);
        assert!(
            tiny.starts_with("; ~<0.1% explored (estimate: ~1e15 executions in all, ~"),
            "{tiny}"
        );
        assert!(tiny.ends_with(" years left)"), "{tiny}");
        assert_eq!(span(30.0), "30s");
        assert_eq!(span(5_400.0), "1.5h");
        assert_eq!(span(3.0 * 86_400.0), "3.0 days");
        assert_eq!(span(1e15), "more than 10,000 years");
        assert_eq!(approximately(3.2e6), "3.2 million");
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
    }
}

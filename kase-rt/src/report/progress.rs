//! Progress lines on stderr for long explorations: with `KASE_PROGRESS=1`
//! (or `Builder::progress(true)`) from the start, otherwise once an
//! exploration has run for a few seconds; then a summary line at the end.
//!
//! The lines go straight to the process's stderr, past the test harness's
//! output capture: they are meant to be seen while a long test runs.

use std::io::Write;
use std::time::{Duration, Instant};

/// Explorations running longer than this show progress unless told not to.
const AUTO_AFTER: Duration = Duration::from_secs(5);
/// Time between two progress lines.
const INTERVAL: Duration = Duration::from_secs(3);
/// Check the clock only every this many executions (they can be very fast).
const CHECK_EVERY: u64 = 16;

/// Parses a `KASE_PROGRESS` value: `Some(true)` always, `Some(false)` never.
pub(crate) fn parse_progress(s: &str) -> Option<bool> {
    match s.to_ascii_lowercase().as_str() {
        "1" | "true" | "on" | "yes" => Some(true),
        "0" | "false" | "off" | "no" => Some(false),
        _ => None,
    }
}

/// The numbers a progress line shows.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Counts {
    pub executions: u64,
    pub sleep_set_blocked: u64,
    /// Visible operations in the last execution.
    pub depth: usize,
}

/// Decides when to print, and prints.
pub(crate) struct Progress {
    /// `Some(true)`: from the start; `Some(false)`: never; `None`: after
    /// [`AUTO_AFTER`].
    mode: Option<bool>,
    label: String,
    start: Instant,
    next: Instant,
    shown: bool,
    max_depth: usize,
    last: (Instant, u64),
}

impl Progress {
    pub(crate) fn new(mode: Option<bool>, name: Option<&str>) -> Self {
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
            start,
            next: start + first,
            shown: false,
            max_depth: 0,
            last: (start, 0),
        }
    }

    /// After each execution.
    pub(crate) fn tick(&mut self, counts: Counts) {
        self.max_depth = self.max_depth.max(counts.depth);
        if self.mode == Some(false) || counts.executions % CHECK_EVERY != 0 {
            return;
        }
        let now = Instant::now();
        if now < self.next {
            return;
        }
        self.next = now + INTERVAL;
        let (then, executions_then) = self.last;
        let rate = rate(counts.executions - executions_then, now - then);
        self.last = (now, counts.executions);
        self.shown = true;
        emit(&format!(
            "{}: {} ({rate}/s), {} sleep-set-blocked, depth {} (max {}), {:.1?} elapsed",
            self.label,
            executions(counts.executions),
            thousands(counts.sleep_set_blocked),
            counts.depth,
            self.max_depth,
            now - self.start
        ));
    }

    /// At the end: the summary line, if progress was shown (or asked for).
    pub(crate) fn finish(&self, counts: Counts, outcome: &str) {
        if !(self.shown || self.mode == Some(true)) {
            return;
        }
        let elapsed = self.start.elapsed();
        emit(&format!(
            "{}: done: {} in {elapsed:.2?} ({}/s), {} sleep-set-blocked, max depth {}: {outcome}",
            self.label,
            executions(counts.executions),
            rate(counts.executions, elapsed),
            thousands(counts.sleep_set_blocked),
            self.max_depth.max(counts.depth),
        ));
    }
}

fn executions(n: u64) -> String {
    format!(
        "{} execution{}",
        thousands(n),
        if n == 1 { "" } else { "s" }
    )
}

fn rate(executions: u64, over: Duration) -> String {
    let secs = over.as_secs_f64();
    if secs <= 0.0 {
        return "-".to_owned();
    }
    thousands((executions as f64 / secs).round() as u64)
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

fn emit(line: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(format!("{line}\n").as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_parse() {
        assert_eq!(parse_progress("1"), Some(true));
        assert_eq!(parse_progress("off"), Some(false));
        assert_eq!(parse_progress("maybe"), None);
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
    }
}

//! Schedules: the thread chosen at each real choice point of an execution,
//! as a short versioned string that replays it.
//!
//! Format (version 1): `kase1:` followed by the chosen threads' numbers
//! separated by `.` (`main` is 0, the others are numbered in the order the
//! execution spawns them), e.g. `kase1:1.0.0`. Only real choice points are
//! recorded: a step where a single thread could run is not, and neither are
//! the operations of a thread that unwinds from a panic (it never switches).
//! A schedule of an execution that ran a critical section with peeking
//! starts with `kase1p:`: pure parts of critical sections have no choice
//! points then, so it replays with peeking on whatever the builder says.
//! (Without such a section peeking changes nothing, and the schedule is
//! `kase1:`.) A schedule of an execution under Rust's memory model (RC11)
//! starts with `kase1w:` and adds, after a `/`, the option each atomic
//! access that could go more than one way took (which store a read read,
//! where a store went in its location's modification order), e.g.
//! `kase1w:1.0/1.0`; it replays under RC11.

use std::fmt;
use std::str::FromStr;

use kase_grammar::{
    SCHEDULE_PREFIX as PREFIX, SCHEDULE_PREFIX_PEEKING as PREFIX_PEEKING,
    SCHEDULE_PREFIX_RC11 as PREFIX_RC11,
};

use crate::exec::ThreadIdx;

/// The thread choices of one execution, in order. Points where only one
/// thread could run are not recorded.
///
/// ```
/// # extern crate kase_rt as kase;
/// let s: kase::Schedule = "kase1:0.1.1.0".parse().unwrap();
/// assert_eq!(s.to_string(), "kase1:0.1.1.0");
/// assert_eq!(s.len(), 4);
/// let e = "kase1:0.x".parse::<kase::Schedule>().unwrap_err();
/// assert_eq!(e.column(), Some(9));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Schedule {
    choices: Vec<u32>,
    peeking: bool,
    /// Under RC11: the options atomic accesses with several took.
    rc11: Option<Vec<u32>>,
}

impl Schedule {
    pub(crate) fn from_threads(threads: &[ThreadIdx], peeking: bool) -> Self {
        Schedule {
            choices: threads.iter().map(|t| t.0).collect(),
            peeking,
            rc11: None,
        }
    }

    /// The same thread choices, of an RC11 execution whose atomic accesses
    /// with several ways took `options`.
    pub(crate) fn with_rc11(mut self, options: &[usize]) -> Self {
        self.rc11 = Some(options.iter().map(|&k| k as u32).collect());
        self
    }

    /// Whether it is a schedule of Rust's memory model (`kase1w:`); it
    /// replays under [`MemoryModel::Rc11`](crate::MemoryModel::Rc11).
    pub fn rc11(&self) -> bool {
        self.rc11.is_some()
    }

    /// The options of an RC11 schedule's atomic accesses, in order.
    pub(crate) fn rc11_options(&self) -> &[u32] {
        self.rc11.as_deref().unwrap_or(&[])
    }

    /// Whether it was recorded with critical-section peeking (`kase1p:`);
    /// it replays with the same setting.
    pub fn peeking(&self) -> bool {
        self.peeking
    }

    pub(crate) fn choices(&self) -> impl ExactSizeIterator<Item = ThreadIdx> + '_ {
        self.choices.iter().map(|&c| ThreadIdx(c))
    }

    /// Number of choice points.
    pub fn len(&self) -> usize {
        self.choices.len()
    }

    /// Whether no choice was made.
    pub fn is_empty(&self) -> bool {
        self.choices.is_empty()
    }
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let prefix = match (&self.rc11, self.peeking) {
            (Some(_), _) => PREFIX_RC11,
            (None, true) => PREFIX_PEEKING,
            (None, false) => PREFIX,
        };
        f.write_str(prefix)?;
        let list = |f: &mut fmt::Formatter<'_>, items: &[u32]| -> fmt::Result {
            for (i, c) in items.iter().enumerate() {
                if i > 0 {
                    f.write_str(".")?;
                }
                write!(f, "{c}")?;
            }
            Ok(())
        };
        list(f, &self.choices)?;
        if let Some(options) = &self.rc11 {
            f.write_str("/")?;
            list(f, options)?;
        }
        Ok(())
    }
}

/// Why a string is not a schedule: what is wrong, where, and what was
/// expected there. `Display` shows the input with a caret under the problem.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScheduleParseError {
    input: String,
    /// 1-based character column of the problem, if it is at one place.
    column: Option<usize>,
    message: String,
}

impl ScheduleParseError {
    fn new(input: &str, column: Option<usize>, message: String) -> Self {
        ScheduleParseError {
            input: input.to_owned(),
            column,
            message,
        }
    }

    /// The 1-based character column of the problem in the (trimmed) input,
    /// if it is at one place.
    pub fn column(&self) -> Option<usize> {
        self.column
    }
}

impl fmt::Display for ScheduleParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        if let Some(column) = self.column {
            if self.input.chars().count() <= 200 {
                write!(f, "\n    {}\n    {:>column$}", self.input, "^")?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for ScheduleParseError {}

impl FromStr for Schedule {
    type Err = ScheduleParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        match kase_grammar::schedule(s) {
            Ok(parsed) => Ok(Schedule {
                choices: parsed.choices,
                peeking: parsed.peeking,
                rc11: parsed.rc11,
            }),
            Err(e) => Err(ScheduleParseError::new(s, e.column, e.message)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(s: &str) -> ScheduleParseError {
        s.parse::<Schedule>().unwrap_err()
    }

    #[test]
    fn round_trips() {
        for s in [
            "kase1:",
            "kase1:0",
            "kase1:1.0.0",
            "kase1:12.3.0.4",
            "kase1p:",
            "kase1p:2.0",
            "kase1w:/",
            "kase1w:1.0/2.0.1",
        ] {
            assert_eq!(s.parse::<Schedule>().unwrap().to_string(), s);
        }
        assert_eq!(
            " kase1:1.0 \n".parse::<Schedule>().unwrap().to_string(),
            "kase1:1.0"
        );
    }

    #[test]
    fn errors_say_where_and_what_was_expected() {
        let e = err("kase1:0.x");
        assert_eq!(e.column(), Some(9));
        assert!(e.to_string().contains("unexpected 'x' at column 9"), "{e}");
        assert!(e.to_string().contains("expected a thread number"), "{e}");
        assert!(
            e.to_string().ends_with("\n    kase1:0.x\n            ^"),
            "{e}"
        );

        let e = err("kase1:1.0.");
        assert_eq!(e.column(), Some(11));
        assert!(e.to_string().contains("cut off"), "{e}");

        let e = err("kase1:1..0");
        assert_eq!(e.column(), Some(9));
        assert!(e.to_string().contains("choice 2 is empty"), "{e}");

        let e = err("kase1:1.99999999999");
        assert_eq!(e.column(), Some(9));
        assert!(e.to_string().contains("too large"), "{e}");

        let e = err("kase1:1 .0");
        assert_eq!(e.column(), Some(8));
        let e = err("kase1p:1.x");
        assert_eq!(e.column(), Some(10));
        assert!("kase1p:1".parse::<Schedule>().unwrap().peeking());
        assert!(!"kase1:1".parse::<Schedule>().unwrap().peeking());

        assert!(err("kase2:1.0").to_string().contains("version `kase2`"));
        assert!(err("0.1.2")
            .to_string()
            .contains("does not start with \"kase1:\""));
        assert!(err("").to_string().contains("the schedule is empty"));
        assert!(err("   ").to_string().contains("the schedule is empty"));
    }
}

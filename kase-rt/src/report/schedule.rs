//! Schedules: the thread chosen at each real choice point of an execution,
//! as a short versioned string that replays it.

use std::fmt;
use std::str::FromStr;

use crate::exec::ThreadIdx;

const PREFIX: &str = "kase1:";

/// The thread choices of one execution, in order. Points where only one
/// thread could run are not recorded.
///
/// ```
/// let s: kase_rt::Schedule = "kase1:0.1.1.0".parse().unwrap();
/// assert_eq!(s.to_string(), "kase1:0.1.1.0");
/// assert!("kase1:0.x".parse::<kase_rt::Schedule>().is_err());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Schedule {
    choices: Vec<u32>,
}

impl Schedule {
    pub(crate) fn from_threads(threads: &[ThreadIdx]) -> Self {
        Schedule {
            choices: threads.iter().map(|t| t.0).collect(),
        }
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
        f.write_str(PREFIX)?;
        for (i, c) in self.choices.iter().enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            write!(f, "{c}")?;
        }
        Ok(())
    }
}

/// Why a string is not a schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScheduleParseError(String);

impl fmt::Display for ScheduleParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ScheduleParseError {}

impl FromStr for Schedule {
    type Err = ScheduleParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        let Some(body) = s.strip_prefix(PREFIX) else {
            return Err(ScheduleParseError(format!(
                "not a kase schedule: {s:?} does not start with {PREFIX:?} (copy the whole `kase1:…` string from the failure report)"
            )));
        };
        if body.is_empty() {
            return Ok(Schedule::default());
        }
        let choices = body
            .split('.')
            .enumerate()
            .map(|(i, part)| {
                part.parse::<u32>().map_err(|_| {
                    ScheduleParseError(format!(
                        "bad schedule: choice {} is {part:?}, expected a thread number",
                        i + 1
                    ))
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Schedule { choices })
    }
}

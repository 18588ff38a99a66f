//! Schedules: `KASE_REPLAY=...`, `replay = "..."` and `Builder::replay`.
//!
//! `kase1:` followed by thread numbers (decimal, each fitting a `u32`)
//! separated by `.`, e.g. `kase1:1.0.0`; `kase1:` alone is the empty
//! schedule. A schedule recorded with critical-section peeking starts with
//! `kase1p:` instead. A schedule of Rust's memory model (RC11) starts with
//! `kase1w:` and has a second list after `/`: the option each atomic access
//! that could read (or store) more than one way took, e.g. `kase1w:1.0/1.0`.
//! Surrounding whitespace is ignored.

use std::fmt;

/// The version tag of the format.
pub const SCHEDULE_VERSION: &str = "kase1";
/// The prefix of a schedule.
pub const SCHEDULE_PREFIX: &str = "kase1:";
/// The prefix of a schedule recorded with critical-section peeking.
pub const SCHEDULE_PREFIX_PEEKING: &str = "kase1p:";
/// The prefix of a schedule of Rust's memory model (RC11).
pub const SCHEDULE_PREFIX_RC11: &str = "kase1w:";
/// An example, for messages.
pub const SCHEDULE_EXAMPLE: &str = "kase1:1.0.0";

/// A schedule's content: the chosen thread numbers, and whether it was
/// recorded with peeking (`kase1p:`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ParsedSchedule {
    /// The thread chosen at each choice point.
    pub choices: Vec<u32>,
    /// It starts with `kase1p:`.
    pub peeking: bool,
    /// An RC11 schedule (`kase1w:`): the option each atomic access with
    /// more than one took, in order.
    pub rc11: Option<Vec<u32>>,
}

/// Why a string is not a schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScheduleError {
    /// 1-based character column of the problem in the trimmed text, if it
    /// is at one place.
    pub column: Option<usize>,
    /// What is wrong and what was expected.
    pub message: String,
}

impl fmt::Display for ScheduleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ScheduleError {}

fn error(column: Option<usize>, message: String) -> ScheduleError {
    ScheduleError { column, message }
}

/// Parses a schedule (see the module documentation for the grammar).
///
/// ```
/// let s = kase_grammar::schedule(" kase1p:1.0 ").unwrap();
/// assert_eq!((s.choices, s.peeking), (vec![1, 0], true));
/// assert_eq!(kase_grammar::schedule("kase1:0.x").unwrap_err().column, Some(9));
/// ```
pub fn schedule(text: &str) -> Result<ParsedSchedule, ScheduleError> {
    let s = text.trim();
    let example = format!("e.g. `{SCHEDULE_EXAMPLE}`");
    if s.is_empty() {
        return Err(error(
            None,
            format!(
                "the schedule is empty: expected `{SCHEDULE_PREFIX}` followed by thread numbers \
                 separated by `.`, {example} (copy it from the failure report)"
            ),
        ));
    }
    let (prefix, peeking) = if s.starts_with(SCHEDULE_PREFIX_PEEKING) {
        (SCHEDULE_PREFIX_PEEKING, true)
    } else if s.starts_with(SCHEDULE_PREFIX_RC11) {
        (SCHEDULE_PREFIX_RC11, false)
    } else {
        (SCHEDULE_PREFIX, false)
    };
    let Some(body) = s.strip_prefix(prefix) else {
        if let Some((version, _)) = s.split_once(':') {
            if version.starts_with("kase") && version != SCHEDULE_VERSION {
                return Err(error(
                    Some(1),
                    format!(
                        "unsupported schedule version `{version}`: this version of kase reads \
                         `{SCHEDULE_VERSION}` schedules (and `{SCHEDULE_VERSION}p`, recorded with \
                         peeking, and `{SCHEDULE_VERSION}w`, of Rust's memory model)"
                    ),
                ));
            }
        }
        return Err(error(
            Some(1),
            format!(
                "not a kase schedule: {s:?} does not start with {SCHEDULE_PREFIX:?}; expected \
                 `{SCHEDULE_PREFIX}` followed by thread numbers separated by `.`, {example} (copy \
                 the whole `kase1:…` string from the failure report)"
            ),
        ));
    };
    // Columns are 1-based character positions in `s`.
    let column = prefix.chars().count() + 1;
    if prefix != SCHEDULE_PREFIX_RC11 {
        let choices = numbers(body, column, "a thread number")?;
        return Ok(ParsedSchedule {
            choices,
            peeking,
            rc11: None,
        });
    }
    let Some((threads, stores)) = body.split_once('/') else {
        return Err(error(
            Some(column + body.chars().count()),
            format!(
                "an RC11 schedule (`{SCHEDULE_PREFIX_RC11}`) has two lists, thread choices and store \
                 choices, separated by `/`, e.g. `{SCHEDULE_PREFIX_RC11}1.0/2.0`: the `/` is missing"
            ),
        ));
    };
    let choices = numbers(threads, column, "a thread number")?;
    let stores = numbers(
        stores,
        column + threads.chars().count() + 1,
        "a store choice",
    )?;
    Ok(ParsedSchedule {
        choices,
        peeking,
        rc11: Some(stores),
    })
}

/// A `.`-separated list of numbers (`what` each is) starting at 1-based
/// column `column`; the empty text is the empty list.
fn numbers(body: &str, mut column: usize, what: &str) -> Result<Vec<u32>, ScheduleError> {
    let mut choices = Vec::new();
    if body.is_empty() {
        return Ok(choices);
    }
    let parts: Vec<&str> = body.split('.').collect();
    for (i, part) in parts.iter().enumerate() {
        let nth = i + 1;
        if part.is_empty() {
            let message = if i + 1 == parts.len() {
                format!(
                    "the schedule ends with `.` at column {}: expected {what} after it (was the \
                     schedule cut off when it was copied?)",
                    column - 1
                )
            } else {
                format!(
                    "choice {nth} is empty at column {column}: expected {what} between the dots"
                )
            };
            return Err(error(Some(column), message));
        }
        if let Some((offset, c)) = part.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
            let at = column + part[..offset].chars().count();
            return Err(error(
                Some(at),
                format!(
                    "unexpected {c:?} at column {at} (in choice {nth}): expected {what} (digits) \
                     or `.`"
                ),
            ));
        }
        match part.parse::<u32>() {
            Ok(t) => choices.push(t),
            Err(_) => {
                return Err(error(
                    Some(column),
                    format!("choice {nth} at column {column} is {part}, too large for {what}"),
                ))
            }
        }
        column += part.chars().count() + 1;
    }
    Ok(choices)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepted() {
        for (text, choices, peeking) in [
            ("kase1:", vec![], false),
            ("kase1p:", vec![], true),
            ("kase1:1.0.0", vec![1, 0, 0], false),
            (" kase1p:12.3 \n", vec![12, 3], true),
            ("kase1:4294967295", vec![u32::MAX], false),
            ("kase1w:1.0/", vec![1, 0], false),
        ] {
            let parsed = schedule(text).unwrap();
            assert_eq!(
                (parsed.choices, parsed.peeking),
                (choices, peeking),
                "{text:?}"
            );
        }
    }

    #[test]
    fn rc11_schedules_have_store_choices_after_a_slash() {
        let parsed = schedule("kase1w:1.0/2.0.1").unwrap();
        assert_eq!(
            (parsed.choices, parsed.rc11),
            (vec![1, 0], Some(vec![2, 0, 1]))
        );
        assert_eq!(schedule("kase1w:/").unwrap().rc11, Some(vec![]));
        assert_eq!(schedule("kase1:1").unwrap().rc11, None);
        let missing = schedule("kase1w:1.0").unwrap_err();
        assert_eq!(missing.column, Some(11));
        assert!(missing.message.contains("`/` is missing"), "{missing}");
        let bad = schedule("kase1w:1/0.x").unwrap_err();
        assert_eq!(bad.column, Some(12));
        assert!(bad.message.contains("expected a store choice"), "{bad}");
    }

    #[test]
    fn rejected_where_and_why() {
        let column = |text: &str| schedule(text).unwrap_err().column;
        assert_eq!(column(""), None);
        assert_eq!(column("1.0.0"), Some(1));
        assert_eq!(column("kase2:1"), Some(1));
        assert_eq!(column("kase1:1..0"), Some(9));
        assert_eq!(column("kase1:1.0."), Some(11));
        assert_eq!(column("kase1:1.x"), Some(9));
        assert_eq!(column("kase1:1..0"), Some(9));
        assert_eq!(column("kase1:4294967296"), Some(7));
        assert!(schedule("kase2:1")
            .unwrap_err()
            .message
            .contains("unsupported"));
        assert!(schedule("kase1:1.0.")
            .unwrap_err()
            .message
            .contains("cut off"));
    }
}

//! Durations: `KASE_MAX_DURATION=...` and `max_duration = "..."`.
//!
//! A number, then an optional unit; no unit means seconds. The number is
//! decimal digits (`_` may separate them) with an optional `.` fraction;
//! the unit is `ns`, `us` (or `µs`), `ms`, `s`, `m` (or `min`) or `h`, and
//! may follow a space. Examples: `30s`, `500ms`, `1.5s`, `2m`, `2min`,
//! `1h`, `1_000ns`, `30`. The value is exact (no floating point); fraction
//! digits below a nanosecond are dropped.

use std::fmt;
use std::time::Duration;

/// What a duration looks like, for the error messages of both sides.
pub const DURATION_EXPECTED: &str = "a number and a unit (ns, us, ms, s, m or min, h; no unit: \
                                     seconds), such as 30s, 500ms, 1.5s or 2m";

/// Why a string is not a duration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DurationError {
    /// No digits before the unit (also for an empty string or a sign).
    MissingNumber,
    /// More than one `.` in the number.
    MalformedNumber,
    /// The unit is none of the known ones.
    UnknownUnit,
    /// More seconds than a `u64` holds.
    TooLarge,
}

impl fmt::Display for DurationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DurationError::MissingNumber => "missing number",
            DurationError::MalformedNumber => "malformed number",
            DurationError::UnknownUnit => "unknown unit",
            DurationError::TooLarge => "too large",
        })
    }
}

impl std::error::Error for DurationError {}

const NANOS_PER_SEC: u128 = 1_000_000_000;
/// Fraction digits kept: beyond these, every unit is below a nanosecond
/// (and the product below stays within `u128`).
const FRACTION_DIGITS: usize = 18;

/// Parses a duration (see the module documentation for the grammar).
///
/// ```
/// use std::time::Duration;
/// assert_eq!(kase_grammar::duration("1.5s"), Ok(Duration::from_millis(1500)));
/// assert_eq!(kase_grammar::duration("2min"), Ok(Duration::from_secs(120)));
/// assert_eq!(kase_grammar::duration("30"), Ok(Duration::from_secs(30)));
/// assert!(kase_grammar::duration("30 seconds").is_err());
/// ```
pub fn duration(text: &str) -> Result<Duration, DurationError> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '_' || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    let whole: String = whole.chars().filter(|&c| c != '_').collect();
    let fraction: String = fraction.chars().filter(|&c| c != '_').collect();
    if whole.is_empty() && fraction.is_empty() {
        return Err(DurationError::MissingNumber);
    }
    if fraction.contains('.') {
        return Err(DurationError::MalformedNumber);
    }
    let unit_nanos: u128 = match unit.trim() {
        "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "" | "s" => NANOS_PER_SEC,
        "m" | "min" => 60 * NANOS_PER_SEC,
        "h" => 3_600 * NANOS_PER_SEC,
        _ => return Err(DurationError::UnknownUnit),
    };
    // Only ASCII digits are left, so parsing fails only by overflow.
    let whole: u128 = match whole.as_str() {
        "" => 0,
        digits => digits
            .parse::<u64>()
            .map_err(|_| DurationError::TooLarge)?
            .into(),
    };
    let fraction = &fraction[..fraction.len().min(FRACTION_DIGITS)];
    let part: u128 = match fraction {
        "" => 0,
        digits => digits.parse().map_err(|_| DurationError::TooLarge)?,
    };
    let scale = 10u128.pow(fraction.len() as u32);
    let nanos = whole * unit_nanos + part * unit_nanos / scale;
    let secs = u64::try_from(nanos / NANOS_PER_SEC).map_err(|_| DurationError::TooLarge)?;
    let subsec = u32::try_from(nanos % NANOS_PER_SEC).expect("below one second");
    Ok(Duration::new(secs, subsec))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> Duration {
        duration(text).unwrap_or_else(|e| panic!("{text:?}: {e}"))
    }

    #[test]
    fn every_form_accepted_before_the_grammars_were_merged() {
        // Both sides.
        assert_eq!(ok("30s"), Duration::from_secs(30));
        assert_eq!(ok("500ms"), Duration::from_millis(500));
        assert_eq!(ok("2m"), Duration::from_secs(120));
        assert_eq!(ok("1h"), Duration::from_secs(3600));
        assert_eq!(ok(" 30 s "), Duration::from_secs(30));
        // Only `KASE_MAX_DURATION` before.
        assert_eq!(ok("1.5s"), Duration::from_millis(1500));
        assert_eq!(ok("2min"), Duration::from_secs(120));
        assert_eq!(ok("30"), Duration::from_secs(30));
        assert_eq!(ok(".5"), Duration::from_millis(500));
        assert_eq!(ok("5."), Duration::from_secs(5));
        assert_eq!(ok("1.5m"), Duration::from_secs(90));
        assert_eq!(ok("0"), Duration::ZERO);
        // Only `max_duration = "..."` before.
        assert_eq!(ok("7us"), Duration::from_micros(7));
        assert_eq!(ok("7µs"), Duration::from_micros(7));
        assert_eq!(ok("1_000ns"), Duration::from_micros(1));
        assert_eq!(ok("1500ms"), Duration::from_millis(1500));
    }

    #[test]
    fn exact_values() {
        assert_eq!(ok("0.1s"), Duration::from_millis(100));
        assert_eq!(ok("1.000000001s"), Duration::new(1, 1));
        assert_eq!(ok("1.5ns"), Duration::from_nanos(1));
        assert_eq!(ok("0.0000000000000000000001h"), Duration::ZERO);
        assert_eq!(ok("18446744073709551615s"), Duration::new(u64::MAX, 0));
    }

    #[test]
    fn rejections_say_why() {
        use DurationError::*;
        assert_eq!(duration(""), Err(MissingNumber));
        assert_eq!(duration("s"), Err(MissingNumber));
        assert_eq!(duration("soon"), Err(MissingNumber));
        assert_eq!(duration("-1s"), Err(MissingNumber));
        assert_eq!(duration("._s"), Err(MissingNumber));
        assert_eq!(duration("1.2.3s"), Err(MalformedNumber));
        assert_eq!(duration("30 seconds"), Err(UnknownUnit));
        assert_eq!(duration("5 parsecs"), Err(UnknownUnit));
        assert_eq!(duration("1e3"), Err(UnknownUnit));
        assert_eq!(duration("30sec"), Err(UnknownUnit));
        assert_eq!(duration("18446744073709551616s"), Err(TooLarge));
        assert_eq!(duration("18446744073709551615m"), Err(TooLarge));
    }
}

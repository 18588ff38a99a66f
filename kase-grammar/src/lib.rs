//! The grammars of the values kase reads in two places: from `KASE_*`
//! environment variables at run time (`kase-rt`) and from
//! `#[kase::test(...)]` arguments at compile time (`kase-macros`). Both use
//! these parsers, so a value means the same thing, and is accepted or
//! rejected the same way, wherever it is written.
//!
//! | value | grammar | where |
//! |---|---|---|
//! | duration | [`duration`]: a number (digits, `_` allowed, an optional `.` fraction) and an optional unit `ns`, `us`/`µs`, `ms`, `s`, `m`/`min`, `h`; no unit means seconds: `30s`, `500ms`, `1.5s`, `2m`, `2min`, `1h`, `30` | `KASE_MAX_DURATION`, `max_duration = "..."` |
//! | failure kind | [`FailureKindName`]: `panic`, `deadlock`, `data race`, `livelock`, `leak`, `use after free`, `nondeterminism` | `expect = "..."` |
//! | schedule | [`schedule`]: `kase1:` (or `kase1p:`, recorded with peeking) and thread numbers separated by `.`: `kase1:1.0.0` | `KASE_REPLAY`, `replay = "..."`, `Builder::replay` |
//!
//! Surrounding whitespace is ignored in durations and schedules (failure
//! kinds are matched exactly). The crate has no
//! dependencies (the proc-macro crate builds it too) and is an
//! implementation detail of kase: use `kase` itself.

mod duration;
mod failure_kind;
mod schedule;

pub use duration::{duration, DurationError, DURATION_EXPECTED};
pub use failure_kind::{FailureKindName, FAILURE_KINDS_EXPECTED};
pub use schedule::{
    schedule, ParsedSchedule, ScheduleError, SCHEDULE_EXAMPLE, SCHEDULE_PREFIX,
    SCHEDULE_PREFIX_PEEKING, SCHEDULE_PREFIX_RC11, SCHEDULE_VERSION,
};

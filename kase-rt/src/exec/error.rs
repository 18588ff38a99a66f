//! kase's own errors, raised as panics with typed payloads: an internal
//! error (one of kase's invariants failed: a bug in kase) or a usage error
//! (the model uses kase in a way it cannot support). Whoever catches a
//! panic tells them from the model's own panics by the payload's type,
//! never by its text, so no message of the model can pass for one.
//!
//! Raise them with [`internal_error!`] / [`usage_error!`] (formatted like
//! `panic!`), [`internal`] / [`usage`], or [`OrInternal::or_internal`] in
//! place of `expect`. They render as "kase internal error: …" and
//! "kase: …".

use std::any::Any;
use std::fmt;
use std::panic::Location;

/// A failed invariant of kase's own code: a bug in kase, reported as
/// [`FailureKind::Internal`](crate::FailureKind::Internal), never as the
/// model's failure.
#[derive(Debug)]
pub struct InternalError {
    /// What went wrong (without the "kase internal error: " prefix).
    pub message: String,
    /// Where it was raised.
    pub location: &'static Location<'static>,
}

impl fmt::Display for InternalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "kase internal error: {}", self.message)
    }
}

/// A use of kase that it cannot support (a nested exploration, a stack it
/// could not allocate, …): it reaches the user as it is.
#[derive(Debug)]
pub struct UsageError {
    /// What is wrong and what to do (without the "kase: " prefix).
    pub message: String,
}

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "kase: {}", self.message)
    }
}

/// Raises an [`InternalError`] located at the caller.
#[track_caller]
pub(crate) fn internal(message: impl Into<String>) -> ! {
    // The hook renders the payload (std's would print `Box<dyn Any>`).
    super::panic::install_hook();
    std::panic::panic_any(InternalError {
        message: message.into(),
        location: Location::caller(),
    })
}

/// Raises a [`UsageError`].
#[track_caller]
pub(crate) fn usage(message: impl Into<String>) -> ! {
    super::panic::install_hook();
    std::panic::panic_any(UsageError {
        message: message.into(),
    })
}

/// Raises an [`InternalError`] with a `format!` message, located where the
/// macro is used: `internal_error!("unknown thread {t}")`.
macro_rules! internal_error {
    ($($arg:tt)+) => {
        $crate::exec::error::internal(::std::format!($($arg)+))
    };
}
pub(crate) use internal_error;

/// Runs a costly self-check of kase's (an assertion that a shortcut agrees
/// with its definition) in kase's own debug test builds only (the
/// `self-check` feature its tests turn on): a user's build with debug
/// assertions on would otherwise redo the work the shortcut saves.
/// `self_check!(assert!(cheap == by_definition));`
macro_rules! self_check {
    ($($check:tt)+) => {
        #[cfg(all(debug_assertions, any(test, feature = "self-check")))]
        {
            $($check)+
        }
    };
}
pub(crate) use self_check;

/// Raises a [`UsageError`] with a `format!` message:
/// `usage_error!("a model cannot be explored from inside another model")`.
macro_rules! usage_error {
    ($($arg:tt)+) => {
        $crate::exec::error::usage(::std::format!($($arg)+))
    };
}
pub(crate) use usage_error;

/// `expect` for kase's own invariants: the value, or an [`InternalError`]
/// located at the caller.
pub(crate) trait OrInternal<T> {
    /// The value, or an internal error with `message` (followed, for a
    /// `Result`, by the error as `expect` shows it).
    fn or_internal(self, message: &str) -> T;
}

impl<T> OrInternal<T> for Option<T> {
    #[track_caller]
    fn or_internal(self, message: &str) -> T {
        match self {
            Some(value) => value,
            None => internal(message),
        }
    }
}

impl<T, E: fmt::Debug> OrInternal<T> for Result<T, E> {
    #[track_caller]
    fn or_internal(self, message: &str) -> T {
        match self {
            Ok(value) => value,
            Err(e) => internal(format!("{message}: {e:?}")),
        }
    }
}

/// Whether a panic payload is one of kase's internal errors.
pub(crate) fn is_internal(payload: &(dyn Any + Send)) -> bool {
    payload.is::<InternalError>()
}

/// The text of a payload that is one of kase's own errors.
pub(crate) fn render(payload: &(dyn Any + Send)) -> Option<String> {
    if let Some(e) = payload.downcast_ref::<InternalError>() {
        Some(e.to_string())
    } else {
        payload
            .downcast_ref::<UsageError>()
            .map(ToString::to_string)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payload_of<R: std::fmt::Debug>(
        f: impl FnOnce() -> R + std::panic::UnwindSafe,
    ) -> Box<dyn Any + Send> {
        std::panic::catch_unwind(f).expect_err("it panics")
    }

    #[test]
    fn an_internal_error_is_told_by_its_type_and_renders_the_old_text() {
        let line = line!() + 1;
        let payload = payload_of(|| internal_error!("unknown thread {}", 3));
        assert!(is_internal(&*payload));
        let error = payload.downcast_ref::<InternalError>().unwrap();
        assert_eq!(
            (error.location.file(), error.location.line()),
            (file!(), line)
        );
        assert_eq!(
            super::super::panic::payload_message(&*payload),
            "kase internal error: unknown thread 3"
        );
        let payload = payload_of(|| None::<u8>.or_internal("a std scope"));
        assert!(is_internal(&*payload));
        assert_eq!(
            render(&*payload).unwrap(),
            "kase internal error: a std scope"
        );
        let payload = payload_of(|| Err::<u8, _>("gone").or_internal("taken"));
        assert_eq!(
            render(&*payload).unwrap(),
            "kase internal error: taken: \"gone\""
        );
    }

    #[test]
    fn a_panic_that_merely_says_so_is_not_an_internal_error() {
        let payload = payload_of(|| panic!("kase internal error: not really"));
        assert!(!is_internal(&*payload));
        assert!(render(&*payload).is_none());
        let payload = payload_of(|| usage_error!("nested {}", "explore"));
        assert!(!is_internal(&*payload));
        assert_eq!(
            super::super::panic::payload_message(&*payload),
            "kase: nested explore"
        );
    }
}

//! One grammar for a value wherever it is written: a duration is accepted
//! or rejected the same way by `KASE_MAX_DURATION` (read by
//! `Builder::new()` at run time) and by `#[kase::test(max_duration = ...)]`
//! (checked when the macro expands). Both use `kase-grammar`.
//!
//! The accepted strings are attributes below (they must compile) and values
//! of the variable in a child process (this binary; environment variables
//! are process-wide). The rejected strings are those of the compile-fail
//! case `tests/ui/fail/bad_max_duration.rs` (run by `tests/attribute/compile_errors.rs`),
//! read from that file here and set in the variable.

use kase::Builder;

use crate::common::child;

/// `#[kase::test(max_duration = $d)]` for each string, and the list of them.
macro_rules! accepted {
    ($($name:ident = $d:literal),* $(,)?) => {
        $(
            #[kase::test(max_duration = $d, allow_incomplete = true)]
            fn $name() {}
        )*
        const ACCEPTED: &[&str] = &[$($d),*];
    };
}

accepted! {
    seconds = "30s",
    milliseconds = "500ms",
    fractional_seconds = "1.5s",
    minutes = "2m",
    minutes_spelt_min = "2min",
    bare_seconds = "30",
    microseconds = "7us",
    nanoseconds_with_separator = "1_000ns",
    hours = "1h",
    unit_after_a_space = "30 s",
}

/// The `max_duration` strings of the compile-fail case: every one is a
/// compile error there.
fn rejected_by_the_attribute() -> Vec<String> {
    let case = include_str!("../ui/fail/bad_max_duration.rs");
    let key = "max_duration = \"";
    let rejected: Vec<String> = case
        .match_indices(key)
        .map(|(at, _)| {
            let rest = &case[at + key.len()..];
            rest[..rest.find('"').unwrap()].to_owned()
        })
        .collect();
    assert!(rejected.len() >= 3, "{rejected:?}");
    rejected
}

/// Whether `Builder::new()` accepts `KASE_MAX_DURATION=value`, in a child
/// process; if not, the child's panic message.
fn env_accepts(value: &str) -> Result<(), String> {
    let out = child::command(module_path!(), "child")
        .env(child::VAR, "1")
        .env("KASE_MAX_DURATION", value)
        .output()
        .unwrap();
    child::assert_ran_one_test(&out);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    match out.status.success() {
        true => Ok(()),
        false => Err(stderr),
    }
}

/// Runs in the child only: `Builder::new()` reads the variable (and panics
/// if it does not parse).
#[test]
fn child() {
    if child::in_child() {
        let _ = Builder::new();
    }
}

#[test]
fn kase_max_duration_accepts_what_the_attribute_accepts() {
    for value in ACCEPTED {
        if let Err(stderr) = env_accepts(value) {
            panic!("KASE_MAX_DURATION={value:?} was rejected:\n{stderr}");
        }
    }
}

#[test]
fn kase_max_duration_rejects_what_the_attribute_rejects() {
    for value in rejected_by_the_attribute() {
        match env_accepts(&value) {
            Ok(()) => panic!("KASE_MAX_DURATION={value:?} was accepted"),
            Err(stderr) => assert!(
                stderr.contains(&format!("KASE_MAX_DURATION={value:?} is not valid")),
                "{stderr}"
            ),
        }
    }
}

//! kase's own messages that must be seen: warnings, notes and the
//! watchdog's explanation. libtest captures only what the `print!`/`eprint!`
//! macros write (a thread-local capture, inherited by spawned threads), and
//! shows it only for failing tests — or never, when the process ends from
//! the watchdog. Writing to `io::stderr()` directly reaches the terminal
//! under plain `cargo test` and nextest alike.
//!
//! Below `exec` in the one-way flow: it knows no kase type, so `exec`
//! (the watchdog) and `explore` both use it.

use std::io::Write;

/// The name of the test being explored: `known` (from `#[kase::test]` or
/// `Builder::name`), else the current thread's name, which libtest and
/// nextest set to the test's path (`main` is not a test's name).
pub(crate) fn test_name(known: Option<String>) -> Option<String> {
    known.or_else(|| {
        std::thread::current()
            .name()
            .filter(|name| *name != "main")
            .map(str::to_owned)
    })
}

/// `text` (which starts `kase: …`) labelled with the test, as progress
/// lines are: `kase [tests::push_pop]: …`.
pub(crate) fn labelled(test: Option<&str>, text: &str) -> String {
    match (test, text.strip_prefix("kase: ")) {
        (Some(test), Some(rest)) => format!("kase [{test}]: {rest}"),
        (Some(test), None) => format!("kase [{test}]: {text}"),
        (None, _) => text.to_owned(),
    }
}

/// Writes `text`, labelled with `test`, to the process's stderr in one
/// piece, past the test harness's capture.
pub(crate) fn warn(test: Option<&str>, text: &str) {
    let line = format!("{}\n", labelled(test, text));
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_label_replaces_the_bare_prefix() {
        assert_eq!(
            labelled(Some("m::t"), "kase: warning: x"),
            "kase [m::t]: warning: x"
        );
        assert_eq!(labelled(Some("m::t"), "other"), "kase [m::t]: other");
        assert_eq!(labelled(None, "kase: warning: x"), "kase: warning: x");
    }

    #[test]
    fn a_libtest_thread_is_named_after_its_test() {
        let name = test_name(None).unwrap_or_default();
        assert!(name.ends_with("a_libtest_thread_is_named_after_its_test") || name.is_empty());
        assert_eq!(test_name(Some("x".into())).as_deref(), Some("x"));
    }
}

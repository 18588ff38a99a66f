//! The schedule parser (`KASE_REPLAY`, `Builder::replay`, regression files)
//! on arbitrary input: it never panics, an error renders (the caret under
//! the column it names), and an accepted schedule prints back to a string
//! that parses to the same schedule.

#![no_main]

use kase_rt::Schedule;
use libfuzzer_sys::fuzz_target;

fn check(text: &str) {
    match text.parse::<Schedule>() {
        Ok(schedule) => {
            let printed = schedule.to_string();
            let again: Schedule = printed.parse().unwrap_or_else(|e| {
                panic!("{printed:?} (printed from {text:?}) does not parse: {e}")
            });
            assert_eq!(again, schedule, "{text:?}");
            assert_eq!(again.len(), schedule.len());
        }
        Err(e) => {
            let shown = e.to_string();
            assert!(!shown.is_empty());
            if let Some(column) = e.column() {
                assert!(column >= 1, "{text:?}: column {column}");
                assert!(
                    column <= text.trim().chars().count() + 1,
                    "{text:?}: column {column} is past the end"
                );
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    // Strings reach the parser from the environment and from files, so
    // also the lossy decoding of invalid UTF-8.
    match std::str::from_utf8(data) {
        Ok(text) => check(text),
        Err(_) => check(&String::from_utf8_lossy(data)),
    }
});

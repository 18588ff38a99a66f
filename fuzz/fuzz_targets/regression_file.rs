//! The regression-file reader on arbitrary bytes: it never panics, never
//! loses a line that names the test (each becomes an entry or a warning),
//! and every entry's schedule prints back to itself.

#![no_main]

use libfuzzer_sys::fuzz_target;

/// The test whose lines are read; short, so the fuzzer finds it.
const NAME: &str = "t";

fuzz_target!(|data: &[u8]| {
    let (entries, warnings) = kase_rt::__fuzz::regression_file(data, NAME);
    let lines = data.split(|&b| b == b'\n').count();
    let mut last = 0;
    for (line, schedule) in &entries {
        assert!(*line > last && *line <= lines, "line {line} of {lines}");
        last = *line;
        let again: kase_rt::Schedule = schedule.to_string().parse().expect("prints back");
        assert_eq!(&again, schedule);
    }
    // Every line whose first word is the test's name (before any comment)
    // is read or warned about, never silently dropped.
    for (i, raw) in data.split(|&b| b == b'\n').enumerate() {
        let line = i + 1;
        let text = String::from_utf8_lossy(raw);
        let content = text.split('#').next().unwrap_or_default();
        if content.split_whitespace().next() != Some(NAME) {
            continue;
        }
        let read = entries.iter().any(|(l, _)| *l == line);
        let warned = warnings
            .iter()
            .any(|w| w.contains(&format!("fuzz.txt:{line}:")));
        assert!(
            read != warned,
            "line {line} {text:?}: read {read}, warned {warned}"
        );
    }
});

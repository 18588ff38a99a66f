//! Hostile input never panics kase: the schedule parser and the regression
//! file reader get random and mutated input. Unreadable regression lines are
//! skipped with a warning and the file is never rewritten.
//!
//! `KASE_FUZZ_CASES` raises the number of generated inputs (default 20 000).
//! The coverage-guided fuzzing of the same two parsers is in `fuzz/`
//! (cargo-fuzz, nightly); a crash it finds belongs here as a case.

use kase::{Builder, Persist, Schedule};

use crate::common::rng::Rng;

fn cases() -> usize {
    std::env::var("KASE_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000)
}

/// Mostly schedule-like text: pieces of the format, digits, separators,
/// huge numbers, whitespace and arbitrary characters.
fn schedule_like(rng: &mut Rng) -> String {
    const PIECES: &[&str] = &[
        "kase1:",
        "kase",
        "kase2:",
        ":",
        ".",
        "0",
        "1",
        "7",
        "18446744073709551616",
        "4294967296",
        " ",
        "\t",
        "\n",
        "-",
        "+",
        "..",
        "é",
        "\u{0}",
        "#",
        "kase1",
        "99999999999999999999999",
    ];
    let mut s = String::new();
    for _ in 0..rng.below(12) {
        if rng.below(8) == 0 {
            s.push(char::from_u32(rng.next() as u32 % 0x11_0000).unwrap_or('?'));
        } else {
            s.push_str(PIECES[rng.below(PIECES.len())]);
        }
    }
    s
}

#[test]
fn the_schedule_parser_never_panics_and_round_trips_what_it_accepts() {
    let mut rng = Rng(0x5eed);
    let mut accepted = 0;
    for _ in 0..cases() {
        let text = schedule_like(&mut rng);
        if let Ok(schedule) = text.parse::<Schedule>() {
            accepted += 1;
            let again: Schedule = schedule
                .to_string()
                .parse()
                .expect("a printed schedule parses");
            assert_eq!(again.to_string(), schedule.to_string(), "{text:?}");
        }
    }
    assert!(
        accepted > 0,
        "the generator should also produce valid schedules"
    );
}

#[test]
fn regression_files_of_random_bytes_are_skipped_not_lost() {
    let dir = std::env::temp_dir().join(format!("kase-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("hostile.txt"); // the module of `hostile::t`
    let mut rng = Rng(0xbad);
    for case in 0..cases() / 100 {
        let mut bytes = Vec::new();
        for _ in 0..rng.below(6) {
            match rng.below(4) {
                0 => bytes.extend((0..rng.below(40)).map(|_| rng.next() as u8)),
                1 => bytes.extend(format!("t {}\n", schedule_like(&mut rng)).bytes()),
                2 => bytes.extend(format!("t {} # comment\n", schedule_like(&mut rng)).bytes()),
                _ => bytes.extend(b"# header\n\n"),
            }
        }
        std::fs::write(&file, &bytes).unwrap();
        let report = Builder::new()
            .name("hostile::t")
            .regressions_dir(&dir)
            .persist(Persist::File)
            .explore(|| {});
        // A saved schedule that happens to parse replays against a model
        // that does nothing: at worst a stale-schedule warning.
        assert!(report.failure().is_none(), "case {case}: {report}");
        assert_eq!(
            std::fs::read(&file).unwrap(),
            bytes,
            "case {case}: the file was rewritten"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_line_that_is_not_utf8_is_skipped_alone_with_a_warning() {
    let dir = std::env::temp_dir().join(format!("kase-hostile-utf8-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("hostile.txt");
    let mut bytes = b"# header\nt kase1:  # saved\n".to_vec();
    bytes.extend(b"t kase1:0 \xff\xfe # not UTF-8\r\nother \xc3\x28\n");
    std::fs::write(&file, &bytes).unwrap();
    let report = Builder::new()
        .name("hostile::t")
        .regressions_dir(&dir)
        .persist(Persist::File)
        .explore(|| {});
    assert_eq!(report.replayed(), 1, "the readable line still counts");
    let utf8: Vec<_> = report
        .warnings()
        .iter()
        .filter(|w| w.contains("not valid UTF-8"))
        .collect();
    assert_eq!(utf8.len(), 1, "{:?}", report.warnings());
    assert!(utf8[0].contains("hostile.txt:3:"), "{}", utf8[0]);
    assert_eq!(std::fs::read(&file).unwrap(), bytes, "never rewritten");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The fuzz target `regression_file`'s oracle (fuzz/fuzz_targets), on this
/// file's generated input: every line naming the test is read or warned
/// about, exactly one of the two; entries come in order and round-trip.
#[test]
fn every_line_naming_the_test_is_read_or_warned_about() {
    let mut rng = Rng(0xf11e);
    for case in 0..cases() / 10 {
        let mut bytes = Vec::new();
        for _ in 0..rng.below(8) {
            match rng.below(5) {
                0 => bytes.extend((0..rng.below(30)).map(|_| rng.next() as u8)),
                1 => bytes.extend(format!("t {}\n", schedule_like(&mut rng)).bytes()),
                2 => bytes.extend(format!(" t\t{} # c\r\n", schedule_like(&mut rng)).bytes()),
                3 => bytes.extend(b"t kase1:0.\xff1 # bad\n"),
                _ => bytes.extend(format!("other {}\n", schedule_like(&mut rng)).bytes()),
            }
        }
        let (entries, warnings) = kase_rt::__fuzz::regression_file(&bytes, "t");
        let mut last = 0;
        for (line, schedule) in &entries {
            assert!(*line > last, "case {case}: lines in order");
            last = *line;
            let again: Schedule = schedule.to_string().parse().unwrap();
            assert_eq!(&again, schedule);
        }
        for (i, raw) in bytes.split(|&b| b == b'\n').enumerate() {
            let line = i + 1;
            let text = String::from_utf8_lossy(raw);
            let content = text.split('#').next().unwrap_or_default();
            if content.split_whitespace().next() != Some("t") {
                continue;
            }
            let read = entries.iter().any(|(l, _)| *l == line);
            let warned = warnings
                .iter()
                .any(|w| w.contains(&format!("fuzz.txt:{line}:")));
            assert!(
                read != warned,
                "case {case}, line {line} {text:?}: read {read}, warned {warned}"
            );
        }
    }
}

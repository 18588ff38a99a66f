//! Pure parts of the real-crates harness (`src/bin/real_crates/`): the
//! `Cargo.toml` rewrite that swaps loom for kase-loom, and the parsing of
//! cargo's and the test binaries' output. Kept apart from the process
//! handling so that unit tests can check them on strings.

use std::collections::BTreeMap;

/// `manifest` (a crate's packaged, normalized `Cargo.toml`) with every
/// `loom` dependency table (`[dependencies.loom]`, `[dev-dependencies.loom]`,
/// `[target."cfg(loom)".dependencies.loom]`, …, and a table that renames
/// loom with `package = "loom"`) pointed at kase-loom: `package =
/// "kase-loom"` and `path = kase_loom` are added after the header and the
/// `version` (and `package = "loom"`) line goes; every other line of the
/// table (`optional`, `features`, …) stays. An error if there is no such
/// table, or if a table names another package, a path or a git source.
pub fn point_loom_at_kase(manifest: &str, kase_loom: &str) -> Result<String, String> {
    // Tables that rename loom (`[…dependencies.loom-crate]` with `package =
    // "loom"`, as crossbeam's crates do) are loom's too.
    let mut renamed = Vec::new();
    let mut header = "";
    for line in manifest.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            header = trimmed;
        } else if dependency_entry(header).is_some() && is_loom_package(trimmed) {
            renamed.push(header);
        }
    }
    let mut out = String::with_capacity(manifest.len() + 200);
    let mut in_loom_table = false;
    let mut tables = 0;
    for line in manifest.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            in_loom_table = is_loom_table(trimmed) || renamed.contains(&trimmed);
            out.push_str(line);
            out.push('\n');
            if in_loom_table {
                tables += 1;
                out.push_str("package = \"kase-loom\"\n");
                out.push_str(&format!("path = {}\n", toml_string(kase_loom)));
            }
            continue;
        }
        if in_loom_table {
            match key(trimmed) {
                Some("version") => continue,
                Some("package") if is_loom_package(trimmed) => continue,
                Some("package" | "path" | "git") => {
                    return Err(format!("loom's table already has `{trimmed}`"));
                }
                _ => {}
            }
        }
        out.push_str(line);
        out.push('\n');
    }
    if tables == 0 {
        return Err("no `[…dependencies.loom]` table in the manifest".to_owned());
    }
    Ok(out)
}

/// Whether a line is `package = "loom"`.
fn is_loom_package(line: &str) -> bool {
    key(line) == Some("package")
        && line
            .split_once('=')
            .is_some_and(|(_, value)| value.trim() == "\"loom\"")
}

/// Whether a table header names the `loom` entry of a dependency table.
fn is_loom_table(header: &str) -> bool {
    dependency_entry(header) == Some("loom")
}

/// The entry a table header names in a dependency table
/// (`[dependencies.NAME]`, `[target.….dev-dependencies.NAME]`, …), if it
/// names one.
fn dependency_entry(header: &str) -> Option<&str> {
    let inner = header.trim_start_matches('[').trim_end_matches(']').trim();
    ["dependencies.", "dev-dependencies."]
        .iter()
        .find_map(|table| {
            inner.strip_prefix(table).or_else(|| {
                inner
                    .rsplit_once(&format!(".{table}"))
                    .map(|(_, entry)| entry)
            })
        })
}

/// The key of a `key = value` line.
fn key(line: &str) -> Option<&str> {
    let (key, _) = line.split_once('=')?;
    Some(key.trim())
}

/// A TOML basic string holding `s`.
pub fn toml_string(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// `manifest` with an empty `[workspace]` table (so that a parent directory's
/// workspace does not absorb the copy) and, for each `(name, path)` of
/// `patches`, a `[patch.crates-io]` entry (so that a dependency with a loom
/// feature of its own uses the same loom as the crate).
pub fn standalone(manifest: &str, patches: &[(&str, String)]) -> String {
    let mut out = manifest.trim_end().to_owned();
    out.push_str("\n\n[workspace]\n");
    if !patches.is_empty() {
        out.push_str("\n[patch.crates-io]\n");
        for (name, path) in patches {
            out.push_str(&format!("{name} = {{ path = {} }}\n", toml_string(path)));
        }
    }
    out
}

/// The directory of the manifest of package `name` at `version` in the
/// output of `cargo metadata --format-version 1` (read textually: a
/// registry source directory is named `<name>-<version>`).
pub fn manifest_dir(metadata: &str, name: &str, version: &str) -> Option<String> {
    let tail = format!("/{name}-{version}/Cargo.toml");
    json_strings(metadata, "manifest_path")
        .into_iter()
        .find(|path| path.ends_with(&tail))
        .map(|path| path[..path.len() - "/Cargo.toml".len()].to_owned())
}

/// Every string value of `"field":"…"` in `json` (no escapes expected: paths
/// on Linux).
pub fn json_strings(json: &str, field: &str) -> Vec<String> {
    let pattern = format!("\"{field}\":\"");
    json.match_indices(&pattern)
        .filter_map(|(i, _)| {
            let rest = &json[i + pattern.len()..];
            rest.find('"').map(|end| rest[..end].replace("\\\\", "\\"))
        })
        .collect()
}

/// The versions of package `name` in a `Cargo.lock`.
pub fn locked_versions(lock: &str, name: &str) -> Vec<String> {
    let header = format!("name = {}", toml_string(name));
    let mut versions = Vec::new();
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line.trim() == header {
            if let Some(version) = lines
                .next()
                .and_then(|l| l.trim().strip_prefix("version = "))
            {
                versions.push(version.trim_matches('"').to_owned());
            }
        }
    }
    versions
}

/// One test's outcome in a test binary's output.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TestOutcome {
    /// `Some(true)` passed, `Some(false)` failed, `None` never finished
    /// (the binary was killed or crashed while it ran).
    pub passed: Option<bool>,
    /// The first line of its first panic message.
    pub message: Option<String>,
    /// The sites a kase report of a use after free or a race with a free
    /// names under that line (`thread 1 reads it at src/lib.rs:10:5`), in
    /// its order: the access, the free, the allocation.
    pub sites: Vec<String>,
    /// Executions the tool reported for it, summed over its models.
    pub executions: Option<u64>,
    /// Executions of a model still running when the output ends (kase's
    /// last progress line), if any.
    pub running: Option<u64>,
    /// Whether the test started (a listed test may never start).
    pub started: bool,
    /// Whether libtest ignored it (`#[ignore]`).
    pub ignored: bool,
}

/// The outcomes of the tests in `output`: the merged stdout and stderr of a
/// libtest binary run with `--test-threads=1 --nocapture`, in which kase
/// prints `kase…: done: N executions …` (`KASE_PROGRESS=1`) and loom
/// `Completed in N iterations` (`LOOM_LOG=loom::model=info`) per model.
pub fn parse_test_output(output: &str) -> BTreeMap<String, TestOutcome> {
    let mut tests: BTreeMap<String, TestOutcome> = BTreeMap::new();
    let mut current: Option<String> = None;
    let mut want_message = false;
    let mut failure_list = false;
    for line in output.lines() {
        let plain = strip_ansi(line);
        let line = plain.trim_end();
        let mut line = line;
        if let Some((name, rest)) = test_start(line) {
            let outcome = tests.entry(name.to_owned()).or_default();
            outcome.passed = status(rest);
            outcome.started = true;
            outcome.ignored = rest.starts_with("ignored");
            current = Some(name.to_owned());
            want_message = false;
            // The test's own output may follow on the same line.
            line = rest;
        }
        if line.starts_with("test result:") || line == "failures:" {
            current = None;
            failure_list = line == "failures:";
            continue;
        }
        if failure_list {
            // libtest's closing list of failed tests, one per line.
            if let Some(outcome) = line.strip_prefix("    ").and_then(|n| tests.get_mut(n)) {
                outcome.passed = Some(false);
            }
            continue;
        }
        let Some(name) = current.clone() else {
            continue;
        };
        let outcome = tests.get_mut(&name).expect("entered");
        if want_message && !line.trim().is_empty() {
            match outcome.message.as_mut() {
                // kase's headline of a panic, then the panic's message.
                Some(headline) => {
                    headline.push(' ');
                    headline.push_str(line.trim());
                }
                None => outcome.message = Some(line.trim().to_owned()),
            }
            want_message = false;
        } else if outcome.message.is_none() && line.starts_with("kase found a ") {
            // A kase failure that reaches libtest without a panic hook's
            // line (the payload resumed): its report's headline.
            outcome.message = Some(line.to_owned());
            want_message = line.ends_with(':');
        } else if outcome.message.is_some() && outcome.sites.len() < 3 {
            if let Some(site) = report_site(line) {
                outcome.sites.push(site.to_owned());
            }
        }
        if line.starts_with("thread '")
            && line.contains(" panicked at ")
            && outcome.message.is_none()
        {
            // Since Rust 1.73 the message is on the next line.
            match line.split_once("panicked at ") {
                Some((_, at)) if at.ends_with(':') => want_message = true,
                Some((_, at)) => outcome.message = Some(at.to_owned()),
                None => {}
            }
        }
        if let Some(n) = executions_in(line) {
            *outcome.executions.get_or_insert(0) += n;
            outcome.running = None;
        } else if let Some(n) = kase_progress(line) {
            outcome.running = Some(n);
        }
        if outcome.passed.is_none() {
            // The status follows the test's own output.
            outcome.passed = status(line);
        }
    }
    tests
}

/// A site line of kase's report of a free (`main freed it at src/a.rs:3:9`).
fn report_site(line: &str) -> Option<&str> {
    let site = line.trim();
    let (_, at) = site.split_once(" it at ")?;
    let mut parts = at.rsplitn(3, ':');
    let numbers = parts.next()?.parse::<u32>().is_ok() && parts.next()?.parse::<u32>().is_ok();
    numbers.then_some(site)
}

/// `text` with the one occurrence of `from` replaced by `to`: an error if
/// `from` occurs no time or more than once, so that an edit made against
/// one version of a file never lands in the wrong place of another.
pub fn apply_edit(text: &str, from: &str, to: &str) -> Result<String, String> {
    match text.matches(from).count() {
        1 => Ok(text.replacen(from, to, 1)),
        0 => Err(format!("`{}` is not in the file", first_line(from))),
        n => Err(format!("`{}` is in the file {n} times", first_line(from))),
    }
}

fn first_line(s: &str) -> &str {
    s.trim().lines().next().unwrap_or("")
}

/// `("name", rest)` of a libtest line `test name ... rest`.
fn test_start(line: &str) -> Option<(&str, &str)> {
    let rest = line.strip_prefix("test ")?;
    let (name, rest) = match rest.strip_suffix(" ...") {
        Some(name) => (name, ""),
        None => rest.split_once(" ... ")?,
    };
    (!name.contains(' ')).then_some((name, rest))
}

/// A libtest status word at the end of `s`.
fn status(s: &str) -> Option<bool> {
    match s.trim() {
        "ok" => Some(true),
        "FAILED" => Some(false),
        _ => None,
    }
}

/// The executions a summary line of kase or loom reports.
fn executions_in(line: &str) -> Option<u64> {
    let number = |s: &str| -> Option<u64> {
        s.split_whitespace()
            .next()?
            .replace([',', '\u{202f}', ' '], "")
            .parse()
            .ok()
    };
    if let Some((_, rest)) = line.split_once("Completed in ") {
        return number(rest);
    }
    if line.starts_with("kase") {
        if let Some((_, rest)) = line.split_once(": done: ") {
            return number(rest);
        }
    }
    None
}

/// The executions so far of a kase progress line (`kase…: N executions (…`).
fn kase_progress(line: &str) -> Option<u64> {
    let (label, rest) = line.split_once(": ")?;
    if !label.starts_with("kase") || !rest.contains(" executions (") {
        return None;
    }
    rest.split_whitespace()
        .next()?
        .replace(',', "")
        .parse()
        .ok()
}

/// The test names of a libtest binary's `--list` output.
pub fn listed_tests(list: &str) -> Vec<String> {
    list.lines()
        .filter_map(|l| l.strip_suffix(": test"))
        .map(str::to_owned)
        .collect()
}

/// `line` without ANSI colour sequences (loom's tracing output has them).
fn strip_ansi(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_loom_tables_change() {
        let manifest = "[package]\nname = \"x\"\nversion = \"1.0.0\"\n\n\
            [dependencies.crossbeam-utils]\nversion = \"0.8\"\n\n\
            [target.\"cfg(loom)\".dependencies.loom]\nversion = \"0.7\"\noptional = true\n\n\
            [target.\"cfg(loom)\".dev-dependencies.loom]\nversion = \"0.5\"\nfeatures = [\"checkpoint\"]\n\n\
            [dev-dependencies.loomy]\nversion = \"1\"\n";
        let out = point_loom_at_kase(manifest, "/r/kase-loom").unwrap();
        assert_eq!(
            out,
            "[package]\nname = \"x\"\nversion = \"1.0.0\"\n\n\
             [dependencies.crossbeam-utils]\nversion = \"0.8\"\n\n\
             [target.\"cfg(loom)\".dependencies.loom]\npackage = \"kase-loom\"\npath = \"/r/kase-loom\"\noptional = true\n\n\
             [target.\"cfg(loom)\".dev-dependencies.loom]\npackage = \"kase-loom\"\npath = \"/r/kase-loom\"\nfeatures = [\"checkpoint\"]\n\n\
             [dev-dependencies.loomy]\nversion = \"1\"\n"
        );
        assert!(point_loom_at_kase("[dependencies.x]\nversion = \"1\"\n", "/k").is_err());
    }

    #[test]
    fn a_renamed_loom_is_pointed_at_kase_too() {
        // crossbeam-epoch 0.9's manifest.
        let manifest = "[target.\"cfg(crossbeam_loom)\".dependencies.loom-crate]\n\
            version = \"0.7.1\"\noptional = true\npackage = \"loom\"\n\n\
            [dependencies.other]\nversion = \"1\"\npackage = \"not-loom\"\n";
        let out = point_loom_at_kase(manifest, "/r/kase-loom").unwrap();
        assert_eq!(
            out,
            "[target.\"cfg(crossbeam_loom)\".dependencies.loom-crate]\n\
             package = \"kase-loom\"\npath = \"/r/kase-loom\"\noptional = true\n\n\
             [dependencies.other]\nversion = \"1\"\npackage = \"not-loom\"\n"
        );
    }

    #[test]
    fn a_standalone_copy_has_its_workspace_and_patches() {
        let out = standalone("[package]\n", &[("parking", "/w/parking-kase".into())]);
        assert_eq!(
            out,
            "[package]\n\n[workspace]\n\n[patch.crates-io]\nparking = { path = \"/w/parking-kase\" }\n"
        );
    }

    #[test]
    fn locked_versions_are_found() {
        let lock = "[[package]]\nname = \"loom\"\nversion = \"0.7.3\"\n\n[[package]]\nname = \"loomy\"\nversion = \"1.0.0\"\n";
        assert_eq!(locked_versions(lock, "loom"), ["0.7.3"]);
        assert!(locked_versions(lock, "kase-loom").is_empty());
    }

    #[test]
    fn manifest_dirs_come_from_metadata() {
        let json = r#"{"packages":[{"name":"a","manifest_path":"/h/src/a-1.0.0/Cargo.toml"},{"name":"b","manifest_path":"/h/src/b-2.0.0/Cargo.toml"}]}"#;
        assert_eq!(
            manifest_dir(json, "b", "2.0.0").as_deref(),
            Some("/h/src/b-2.0.0")
        );
        assert_eq!(manifest_dir(json, "b", "2.0.1"), None);
    }

    #[test]
    fn test_output_gives_verdicts_messages_and_executions() {
        let output = "running 3 tests\n\
            test a ... kase [a]: done: 1,627 executions in 0.55s (3,000/s): complete\n\
            ok\n\
            test b ... \u{1b}[32m INFO\u{1b}[0m loom::model: Completed in 38 iterations\n\
            thread 'b' (8067) panicked at tests/loom.rs:10:5:\n\
            assertion failed: x\n\
            FAILED\n\
            test c ... ok\n\
            test e ... ignored\n\
            test d ... kase: 576 executions (557/s), 0 sleep-set-blocked\n\
            kase: 960 executions (126/s), 0 sleep-set-blocked\n\
            failures:\n\n---- b stdout ----\n\nfailures:\n    b\n\n\
            test result: FAILED. 2 passed; 1 failed\n";
        let tests = parse_test_output(output);
        assert_eq!(tests["a"].passed, Some(true));
        assert_eq!(tests["a"].executions, Some(1627));
        assert_eq!(tests["b"].passed, Some(false));
        assert_eq!(tests["b"].executions, Some(38));
        assert_eq!(tests["b"].message.as_deref(), Some("assertion failed: x"));
        assert_eq!(tests["c"].passed, Some(true));
        assert_eq!(tests["c"].executions, None);
        assert_eq!(tests["d"].passed, None);
        assert_eq!(tests["d"].running, Some(960));
        assert!(tests["e"].ignored && tests["e"].started);
        assert!(tests["b"].sites.is_empty());
        assert_eq!(
            listed_tests("a: test\nb::c: test\n\n2 tests\n"),
            ["a", "b::c"]
        );
    }

    #[test]
    fn a_kase_free_report_gives_its_sites() {
        let output = "test t ... \n\
            thread 'main' panicked at src/rt.rs:1:1:\n\
            kase found a data race: data race with a free (a use after free in some runs): x\n\
            \x20 thread 1 reads it at src/lib.rs:1346:17\n\
            \x20 main frees it at src/loombox.rs:44:9\n\
            \x20 main allocated it at src/lib.rs:10:5\n\
            \x20 free it at a better time: see src/lib.rs\n\
            \x20 main frees it at src/other.rs:1:1\n\
            FAILED\n";
        let tests = parse_test_output(output);
        assert_eq!(
            tests["t"].sites,
            [
                "thread 1 reads it at src/lib.rs:1346:17",
                "main frees it at src/loombox.rs:44:9",
                "main allocated it at src/lib.rs:10:5"
            ]
        );
    }

    #[test]
    fn a_kase_panic_without_a_hook_line_gives_its_headline() {
        let output = "test t ... kase: done: 2 executions in 1ms (2/s): found a panic\n\
            kase found a panic: main panicked at tests/loom.rs:199:9:\n\
            \x20   assertion `left == right` failed\n\
            \x20     left: []\n\
            FAILED\n";
        let tests = parse_test_output(output);
        assert_eq!(
            tests["t"].message.as_deref(),
            Some(
                "kase found a panic: main panicked at tests/loom.rs:199:9: assertion `left == right` failed"
            )
        );
    }

    #[test]
    fn an_edit_lands_once_or_not_at_all() {
        assert_eq!(apply_edit("a b c", "b", "x").unwrap(), "a x c");
        assert!(apply_edit("a b c", "d", "x")
            .unwrap_err()
            .contains("not in"));
        assert!(apply_edit("b b", "b", "x").unwrap_err().contains("2 times"));
    }
}

//! Regression files: every failing schedule of a test is appended to
//! `<crate>/kase-regressions/<module path>.txt` (one line per failure, meant
//! to be checked in), and replayed before the test is explored again.
//!
//! A line is `<test name> <schedule>  # <what failed>`; blank lines and
//! lines starting with `#` are comments. kase only ever appends: it never
//! rewrites the file, and a line it cannot read is skipped with a warning.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::{Failure, Schedule};

/// What kase does with a test's regression file (`Builder::persist`,
/// `KASE_PERSIST`, `#[kase::test(persist = false)]`). Only applies when the
/// test's name is known: under `#[kase::test]`, or with
/// [`Builder::name`](crate::Builder::name).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Persist {
    /// Replay the test's saved schedules before exploring it, and append
    /// each new failure to the file (the default; `KASE_PERSIST=file`).
    #[default]
    File,
    /// Replay saved schedules, but only print the line a new failure would
    /// add instead of writing it (`KASE_PERSIST=print`), e.g. on a read-only
    /// checkout.
    Print,
    /// Neither replay saved schedules nor save new ones (`KASE_PERSIST=off`).
    Off,
}

/// Which test is being explored: names its regression file, its lines in
/// it, and the command that replays it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TestId {
    /// The module path, e.g. `my_crate::queue::tests` (for an integration
    /// test, the test target's name).
    pub module: String,
    /// The test function's name.
    pub name: String,
    /// The cargo package, when the macro told us.
    pub package: Option<String>,
}

impl TestId {
    /// From a full name such as `my_crate::tests::push_pop`: the module is
    /// what comes before the last `::` (the name itself if there is none).
    pub(crate) fn from_full_name(full: &str) -> Self {
        let full = full.trim();
        match full.rsplit_once("::") {
            Some((module, name)) => TestId {
                module: module.to_owned(),
                name: name.to_owned(),
                package: None,
            },
            None => TestId {
                module: full.to_owned(),
                name: full.to_owned(),
                package: None,
            },
        }
    }

    /// `module::name`.
    pub(crate) fn full_name(&self) -> String {
        if self.module == self.name {
            self.name.clone()
        } else {
            format!("{}::{}", self.module, self.name)
        }
    }

    /// The regression file's name: the module path with `::` as `.`
    /// (colons are not allowed in file names everywhere).
    pub(crate) fn file_name(&self) -> String {
        let module: String = self
            .module
            .replace("::", ".")
            .chars()
            .map(|c| {
                if c.is_alphanumeric() || c == '_' || c == '.' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        format!("{module}.txt")
    }

    /// A shell command that runs just this test with `schedule` replayed.
    pub(crate) fn replay_command(&self, schedule: &Schedule) -> String {
        let env = format!("KASE_REPLAY='{schedule}'");
        let Some(package) = &self.package else {
            return format!("{env} cargo test {}", self.name);
        };
        let mut segments = self.module.split("::");
        let krate = segments.next().unwrap_or_default();
        let target = if krate == package.replace('-', "_") {
            "--lib".to_owned()
        } else {
            format!("--test {krate}")
        };
        let path: Vec<&str> = segments.chain([self.name.as_str()]).collect();
        format!(
            "{env} cargo test -p {package} {target} -- --exact {}",
            path.join("::")
        )
    }
}

/// A saved schedule of the test, read from its regression file.
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    /// 1-based line number.
    pub line: usize,
    pub schedule: Schedule,
    /// The comment after the schedule (what failed when it was saved).
    pub comment: String,
}

/// The test's entries in `path`, in file order, and a warning for each line
/// naming the test that cannot be read. A missing file has no entries.
pub(crate) fn load(path: &Path, test: &TestId) -> io::Result<(Vec<Entry>, Vec<String>)> {
    let bytes = match fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((Vec::new(), Vec::new())),
        Err(e) => return Err(e),
    };
    Ok(parse(&bytes, &shown(path), &test.name))
}

/// The entries of the test `name` in the contents of a regression file
/// (`file` is how warnings name it), in file order, and a warning for each
/// line naming the test (or starting with `kase`) that cannot be read.
/// Never panics, whatever the bytes: a line that is not valid UTF-8 is read
/// as far as its test name (invalid bytes replaced) and skipped with a
/// warning if it names the test.
pub(crate) fn parse(bytes: &[u8], file: &str, name: &str) -> (Vec<Entry>, Vec<String>) {
    let mut entries = Vec::new();
    let mut warnings = Vec::new();
    // Lines end at `\n` (a `\r` before it is dropped), as `str::lines`.
    let mut rest = bytes;
    let mut line = 0;
    while !rest.is_empty() {
        let (raw, next) = match rest.iter().position(|&b| b == b'\n') {
            Some(end) => (&rest[..end], &rest[end + 1..]),
            None => (rest, &[][..]),
        };
        rest = next;
        line += 1;
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        let skip = |why: String| {
            format!(
                "kase: warning: {file}:{line}: {why}; the line is skipped (kase never rewrites this \
                 file: fix or delete the line by hand)"
            )
        };
        let text = String::from_utf8_lossy(raw);
        let (content, comment) = match text.split_once('#') {
            Some((content, comment)) => (content.trim(), comment.trim()),
            None => (text.trim(), ""),
        };
        if content.is_empty() {
            continue;
        }
        let mut tokens = content.split_whitespace();
        let first = tokens.next().unwrap_or_default();
        let others: Vec<&str> = tokens.collect();
        let ours = first == name;
        if std::str::from_utf8(raw).is_err() {
            if ours || first.starts_with("kase") {
                warnings.push(skip("the line is not valid UTF-8".to_owned()));
            }
            continue;
        }
        if others.is_empty() {
            if ours || first.starts_with("kase") {
                warnings.push(skip(format!(
                    "expected `<test name> <schedule>  # comment`, found {content:?}"
                )));
            }
            continue;
        }
        if !ours {
            continue;
        }
        if others.len() > 1 {
            warnings.push(skip(format!(
                "expected one schedule after the test name, found {:?}",
                others.join(" ")
            )));
            continue;
        }
        match others[0].parse::<Schedule>() {
            Ok(schedule) => entries.push(Entry {
                line,
                schedule,
                comment: comment.to_owned(),
            }),
            Err(e) => {
                let first = e.to_string();
                let first = first.lines().next().unwrap_or_default().to_owned();
                warnings.push(skip(format!("cannot read the schedule: {first}")));
            }
        }
    }
    (entries, warnings)
}

/// The line a failure adds to the file.
pub(crate) fn line(test: &TestId, failure: &Failure) -> String {
    format!(
        "{} {}  # {}",
        test.name,
        failure.schedule(),
        failure.summary()
    )
}

fn header(test: &TestId) -> String {
    format!(
        "# kase regression file for the tests in `{}`.\n\
         # Check this file in: kase replays a test's schedules listed here before exploring it,\n\
         # so a failure it found once is checked first on every run. kase only appends to it.\n\
         # One line per failure: <test name> <schedule>  # <what failed when it was saved>\n",
        test.module
    )
}

/// Serialises appends from tests running in parallel in one process.
static APPEND: Mutex<()> = Mutex::new(());

/// Appends the failure's line to `path` (creating the file with a header,
/// and its directory) unless the test already has that schedule there.
/// Returns whether a line was added.
pub(crate) fn append(path: &Path, test: &TestId, failure: &Failure) -> io::Result<bool> {
    let _guard = APPEND.lock().unwrap_or_else(|e| e.into_inner());
    let (entries, _) = load(path, test)?;
    if entries.iter().any(|e| e.schedule == *failure.schedule()) {
        return Ok(false);
    }
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir)?;
    }
    let line = line(test, failure);
    match OpenOptions::new().write(true).create_new(true).open(path) {
        Ok(mut file) => {
            file.write_all(format!("{}{line}\n", header(test)).as_bytes())?;
        }
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            let existing = fs::read(path)?;
            let mut file = OpenOptions::new().append(true).open(path)?;
            let newline = if existing.last().is_some_and(|&b| b != b'\n') {
                "\n"
            } else {
                ""
            };
            file.write_all(format!("{newline}{line}\n").as_bytes())?;
        }
        Err(e) => return Err(e),
    }
    Ok(true)
}

/// `path` relative to the current directory if it is inside it (as the
/// crate's directory is under `cargo test`), else as it is.
pub(crate) fn shown(path: &Path) -> String {
    std::env::current_dir()
        .ok()
        .and_then(|cwd| path.strip_prefix(cwd).ok())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// Where a test's regression file lives: `dir`, else `crate_dir/kase-regressions`,
/// else `$CARGO_MANIFEST_DIR/kase-regressions` at run time, else
/// `kase-regressions` in the current directory.
pub(crate) fn file_path(dir: Option<&Path>, crate_dir: Option<&Path>, test: &TestId) -> PathBuf {
    let dir = match (dir, crate_dir) {
        (Some(dir), _) => dir.to_owned(),
        (None, Some(krate)) => krate.join("kase-regressions"),
        (None, None) => std::env::var_os("CARGO_MANIFEST_DIR")
            .map(PathBuf::from)
            .unwrap_or_default()
            .join("kase-regressions"),
    };
    dir.join(test.file_name())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_ids_name_files_and_commands() {
        let id = TestId::from_full_name("my_crate::queue::tests::push_pop");
        assert_eq!(id.module, "my_crate::queue::tests");
        assert_eq!(id.name, "push_pop");
        assert_eq!(id.file_name(), "my_crate.queue.tests.txt");
        assert_eq!(id.full_name(), "my_crate::queue::tests::push_pop");
        let s: Schedule = "kase1:1.0".parse().unwrap();
        assert_eq!(
            id.replay_command(&s),
            "KASE_REPLAY='kase1:1.0' cargo test push_pop"
        );
        let lib = TestId {
            package: Some("my-crate".into()),
            ..id
        };
        assert_eq!(
            lib.replay_command(&s),
            "KASE_REPLAY='kase1:1.0' cargo test -p my-crate --lib -- --exact queue::tests::push_pop"
        );
        let integration = TestId {
            module: "replay".into(),
            name: "lost_update".into(),
            package: Some("my-crate".into()),
        };
        assert_eq!(
            integration.replay_command(&s),
            "KASE_REPLAY='kase1:1.0' cargo test -p my-crate --test replay -- --exact lost_update"
        );
        let bare = TestId::from_full_name("my_model");
        assert_eq!(bare.file_name(), "my_model.txt");
        assert_eq!(bare.full_name(), "my_model");
    }

    #[test]
    fn file_locations() {
        let id = TestId::from_full_name("a::b::t");
        assert_eq!(
            file_path(Some(Path::new("/x")), Some(Path::new("/c")), &id),
            Path::new("/x/a.b.txt")
        );
        assert_eq!(
            file_path(None, Some(Path::new("/c")), &id),
            Path::new("/c/kase-regressions/a.b.txt")
        );
    }
}

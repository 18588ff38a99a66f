//! The README's dependency line works: a scratch crate whose `Cargo.toml` is
//! the README's own block (its `path` pointed at this repository) builds, and
//! its `#[kase::test]` finds a lost update.
//!
//! The block is the ```` ```toml ```` block after the marker comment
//! `<!-- readme-dependency` in README.md. The scratch crate is built with
//! this cargo, `--offline` (the workspace's build already has every
//! dependency in the local registry cache) and this workspace's lock file, in
//! `<target>/scratch-readme`: the first run compiles kase's runtime once
//! (about a minute), later runs reuse it.
//!
//! Its own test binary: it runs cargo, which takes the machine's cores for a
//! while, and the timing-sensitive tests of the other harnesses should not
//! share them with it.

use std::path::{Path, PathBuf};
use std::process::Command;

const MARKER: &str = "<!-- readme-dependency";

/// The lines of the ```` ```toml ```` block after [`MARKER`] in `readme`.
fn dependency_block(readme: &str) -> Vec<&str> {
    let after = readme
        .split_once(MARKER)
        .expect("README.md has the readme-dependency marker")
        .1;
    let mut lines = after.lines().skip(1);
    let fence = lines.next().expect("a line after the marker");
    assert_eq!(
        fence.trim(),
        "```toml",
        "the marker is followed by a toml block"
    );
    let block: Vec<&str> = lines.take_while(|l| l.trim() != "```").collect();
    assert!(!block.is_empty(), "the toml block is empty");
    block
}

/// The dependency line the README gives for `key` (the crate name users
/// write), commented out (`# kase = …`) or not.
fn dependency_lines<'a>(block: &[&'a str], commented: bool) -> Vec<&'a str> {
    block
        .iter()
        .copied()
        .filter(|l| {
            let l = l.trim_start();
            let l = if commented {
                match l.strip_prefix('#') {
                    Some(rest) => rest.trim_start(),
                    None => return false,
                }
            } else {
                l
            };
            l.starts_with("kase = {") || l.starts_with("kase={")
        })
        .collect()
}

/// `line` with the value of its `path = "…"` replaced by `dir`.
fn with_path(line: &str, dir: &Path) -> String {
    let start = line.find("path = \"").expect("the line has `path = \"…\"`") + "path = \"".len();
    let len = line[start..].find('"').expect("the path's closing quote");
    // A TOML basic string: Rust's `Debug` escapes `\` and `"` the same way.
    let quoted = format!("{:?}", dir.to_str().expect("a UTF-8 repository path"));
    format!(
        "{}{}{}",
        &line[..start - 1],
        quoted,
        &line[start + len + 1..]
    )
}

/// The scratch crate's test: two threads each load, then store, a counter.
const LOST_UPDATE: &str = r#"use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::thread;

#[kase::test(expect = "panic")]
fn lost_update() {
    let counter = Arc::new(AtomicUsize::new(0));
    let other = counter.clone();
    let t = thread::spawn(move || {
        let v = other.load(SeqCst);
        other.store(v + 1, SeqCst);
    });
    let v = counter.load(SeqCst);
    counter.store(v + 1, SeqCst);
    t.join().unwrap();
    assert_eq!(counter.load(SeqCst), 2, "an increment was lost");
}
"#;

/// The target directory this test binary was built in (`<target>/<profile>/deps/<exe>`).
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    exe.ancestors()
        .nth(3)
        .expect("the test binary lies in <target>/<profile>/deps")
        .to_path_buf()
}

#[test]
fn a_crate_depending_on_kase_by_the_readmes_line_builds_and_finds_a_lost_update() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(repo.join("README.md")).unwrap();
    let block = dependency_block(&readme);

    // The package name users must give: this package's, not crates.io's `kase`.
    let package = format!("package = \"{}\"", env!("CARGO_PKG_NAME"));
    let path_lines = dependency_lines(&block, false);
    assert_eq!(path_lines.len(), 1, "one `kase = {{ … }}` line: {block:#?}");
    let path_line = path_lines[0];
    assert!(path_line.contains(&package), "{path_line:?} has {package}");
    // The git alternative, a comment, can't be built here (no URL): it names
    // the same package.
    let git_lines = dependency_lines(&block, true);
    assert!(
        git_lines
            .iter()
            .any(|l| l.contains("git = \"") && l.contains(&package)),
        "a commented `kase = {{ {package}, git = … }}` line: {block:#?}"
    );

    let manifest: Vec<String> = block
        .iter()
        .map(|l| {
            if *l == path_line {
                with_path(l, repo)
            } else {
                (*l).to_owned()
            }
        })
        .collect();
    let scratch = std::env::temp_dir().join(format!("kase-readme-scratch-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(scratch.join("src")).unwrap();
    std::fs::create_dir_all(scratch.join("tests")).unwrap();
    std::fs::write(
        scratch.join("Cargo.toml"),
        format!(
            "[package]\nname = \"readme-scratch\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\
             publish = false\n\n# Not part of any enclosing workspace.\n[workspace]\n\n{}\n",
            manifest.join("\n")
        ),
    )
    .unwrap();
    std::fs::write(scratch.join("src/lib.rs"), "//! Scratch crate.\n").unwrap();
    std::fs::write(scratch.join("tests/lost_update.rs"), LOST_UPDATE).unwrap();
    // The workspace's versions of kase's dependencies, all in the cache.
    std::fs::copy(repo.join("Cargo.lock"), scratch.join("Cargo.lock")).unwrap();

    let mut cargo = Command::new(env!("CARGO"));
    cargo
        .args(["test", "--offline", "--manifest-path"])
        .arg(scratch.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", target_dir().join("scratch-readme"));
    // The scratch crate's test sees none of this run's kase settings.
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("KASE_") {
            cargo.env_remove(name);
        }
    }
    let out = cargo.output().expect("cargo runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("test lost_update ... ok"),
        "the scratch crate's `cargo test` failed.\nCargo.toml:\n{}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        manifest.join("\n")
    );
    let _ = std::fs::remove_dir_all(&scratch);
}

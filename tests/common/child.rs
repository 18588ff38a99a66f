//! Running one test of this binary in a child process, for cases whose
//! environment variables or ending must not touch the other tests.

use std::process::{Command, Output};

/// Set in the child's environment: the test runs its child part.
pub const VAR: &str = "KASE_CHILD";

/// Whether this process is such a child.
pub fn in_child() -> bool {
    std::env::var_os(VAR).is_some()
}

/// This binary's test `name`, defined in the module whose `module_path!()`
/// is `module`, in a command that runs it alone (`--exact`, the path
/// libtest lists: the module path without the crate) with `--nocapture`.
pub fn command(module: &str, name: &str) -> Command {
    let mut command = command_captured(module, name);
    command.arg("--nocapture");
    command
}

/// Like [`command`], but without `--nocapture`: the child's harness
/// captures the test's output as plain `cargo test` does, so only what
/// goes past the capture reaches the child's stderr.
pub fn command_captured(module: &str, name: &str) -> Command {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command.args(["--exact", &test_path(module, name), "--test-threads=1"]);
    command
}

/// The path libtest lists for test `name` of module `module`: the module
/// path without the crate (also the name of the test's thread).
pub fn test_path(module: &str, name: &str) -> String {
    match module.split_once("::") {
        Some((_crate, path)) => format!("{path}::{name}"),
        None => name.to_owned(),
    }
}

/// Panics unless the child ran exactly one test: an `--exact` filter that
/// matches nothing runs nothing and passes, which would make the case
/// vacuous.
pub fn assert_ran_one_test(out: &Output) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("running 1 test"),
        "the child ran no test or several:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

//! Situations where kase must stop with a message rather than hang. Each runs
//! in a child process (the same test binary), since the right outcome may be
//! to end that process.

use std::process::Command;

use kase::sync::atomic::{AtomicBool, Ordering::SeqCst};
use kase::sync::Arc;
use kase::{thread, Builder};

/// Runs this binary's test `name` in a child process with `KASE_CHILD` set,
/// returning its exit status and stderr.
fn run_child(name: &str) -> (std::process::ExitStatus, String) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env("KASE_CHILD", "1")
        .output()
        .unwrap();
    (
        out.status,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn in_child() -> bool {
    std::env::var_os("KASE_CHILD").is_some()
}

/// Spins in its destructor until a flag no one sets.
struct SpinOnDrop(Arc<AtomicBool>);

impl Drop for SpinOnDrop {
    fn drop(&mut self) {
        while !self.0.load(SeqCst) {
            thread::yield_now();
        }
    }
}

#[test]
fn a_drop_spinning_while_unwinding_ends_with_a_message_not_a_hang() {
    if in_child() {
        Builder::new().max_steps(1_000).explore(|| {
            let _spin = SpinOnDrop(Arc::new(AtomicBool::new(false)));
            panic!("the original failure");
        });
        return;
    }
    let (status, stderr) =
        run_child("a_drop_spinning_while_unwinding_ends_with_a_message_not_a_hang");
    assert!(!status.success());
    assert!(
        stderr.contains("keeps performing visible operations while unwinding"),
        "{stderr}"
    );
    assert!(stderr.contains("Aborting instead of hanging"), "{stderr}");
}

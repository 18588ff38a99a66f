//! Models kase cannot see into. Code under test that runs on real std
//! instead of kase's shims (typically `#[cfg_attr(test, kase::instrument)]`
//! code used from an *integration* test, where the library is compiled
//! without `cfg(test)`) gives the explorer nothing to interleave: the
//! exploration ends after one execution and passes, whatever the code does.
//! Two signals, checked on the first execution only (they cost a directory
//! read): no thread touched any shared object kase knows of, or the model
//! started OS threads. Either becomes a warning, not a failure: a trivial
//! model is possible.

use crate::exec::{ObjectKind, Outcome};

/// What to do about it, shared by both warnings.
const ADVICE: &str = "If the code under test is in a library, it must use kase's shims in this build: \
     `#[kase::instrument]` (not `#[cfg_attr(test, kase::instrument)]`, which an integration test \
     does not see) or `use kase::sync` in the library (see the guide's chapter on libraries).";

/// The warning for a first execution in which no thread made a visible
/// operation on anything but threads (spawn, join, exit, yield), if so.
pub(super) fn nothing_visible(outcome: &Outcome) -> Option<String> {
    let seen = outcome.objects.iter().any(|kind| *kind != ObjectKind::Thread);
    (!seen).then(|| {
        format!(
            "kase: warning: the model's threads made no visible operation on shared state (no kase \
             atomic, lock, condvar, channel or cell) in its first execution, so there was nothing to \
             interleave and the result says nothing about concurrency. {ADVICE}"
        )
    })
}

/// OS threads of this process started from the current thread, as far as
/// can be told cheaply: on Linux, the tasks whose name (`comm`) is the
/// current thread's, which an unnamed thread inherits from the thread that
/// spawned it (std names a thread only if asked). Other tests of the
/// harness run on threads with other names. `None` elsewhere.
pub(super) struct OsThreads(Option<Vec<u64>>);

impl OsThreads {
    /// The tasks now.
    pub(super) fn now() -> Self {
        OsThreads(siblings())
    }

    /// The warning if tasks appeared since `self` and are still alive.
    pub(super) fn spawned_since(&self) -> Option<String> {
        let before = self.0.as_ref()?;
        let after = siblings()?;
        let new = after.iter().filter(|t| !before.contains(t)).count();
        (new > 0).then(|| {
            format!(
                "kase: warning: the model started {new} OS thread{} (std::thread, not kase's) that \
                 kase does not control: what they do is not explored, so the result is not a proof. \
                 {ADVICE}",
                if new == 1 { "" } else { "s" }
            )
        })
    }
}

#[cfg(target_os = "linux")]
fn siblings() -> Option<Vec<u64>> {
    let comm = |path: &std::path::Path| std::fs::read_to_string(path.join("comm")).ok();
    let ours = comm(std::path::Path::new("/proc/thread-self"))?;
    let own_tid = std::fs::read_link("/proc/thread-self")
        .ok()?
        .file_name()?
        .to_str()?
        .parse::<u64>()
        .ok()?;
    let mut tids = Vec::new();
    for entry in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let Some(tid) = entry.file_name().to_str().and_then(|s| s.parse::<u64>().ok()) else {
            continue;
        };
        if tid != own_tid && comm(&entry.path()).as_deref() == Some(ours.as_str()) {
            tids.push(tid);
        }
    }
    Some(tids)
}

#[cfg(not(target_os = "linux"))]
fn siblings() -> Option<Vec<u64>> {
    None
}

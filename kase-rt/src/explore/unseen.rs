//! Models kase cannot see into. Code under test that runs on real std
//! instead of kase's shims (typically `#[cfg_attr(test, kase::instrument)]`
//! code used from an *integration* test, where the library is compiled
//! without `cfg(test)`) gives the explorer nothing to interleave: the
//! exploration ends after one execution and passes, whatever the code does.
//! Two signals, checked on the first execution only (the second costs a
//! directory read): no thread touched any shared object kase knows of, or the model
//! started OS threads. Either becomes a warning, not a failure: a trivial
//! model is possible.

use crate::exec::{ObjectKind, Outcome};

/// What to do about it, shared by both warnings.
const ADVICE: &str =
    "If the code under test is in a library, it must use kase's shims in this build: \
     `#[kase::instrument]` (not `#[cfg_attr(test, kase::instrument)]`, which an integration test \
     does not see) or `use kase::sync` in the library (see the guide's chapter on libraries).";

/// The warning for a first execution in which no thread made a visible
/// operation on anything but threads (spawn, join, exit, yield), if so.
pub(super) fn nothing_visible(outcome: &Outcome) -> Option<String> {
    let seen = outcome
        .objects
        .iter()
        .any(|kind| *kind != ObjectKind::Thread);
    (!seen).then(|| {
        format!(
            "kase: warning: the model's threads made no visible operation on shared state (no kase \
             atomic, lock, condvar, channel or cell) in its first execution, so there was nothing to \
             interleave and the result says nothing about concurrency. {ADVICE}"
        )
    })
}

/// OS threads started from the current thread during the first execution,
/// as far as can be told cheaply. On Linux, a thread's name (`comm`) is
/// inherited by the threads it starts (std renames a thread only if it was
/// given a name); so while the first execution runs, the current thread
/// bears a name no other thread has, and threads bearing it afterwards were
/// started by the model. (Comparing task counts instead would blame the
/// threads other tests start in parallel.) Elsewhere: nothing.
pub(super) struct OsThreads(Option<Marked>);

/// The current thread renamed to `marker`; its name was `original`.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
struct Marked {
    marker: String,
    original: String,
}

impl OsThreads {
    /// Marks the current thread, if this is the first exploration of its
    /// test (`test`, else the OS thread's name, which libtest sets to the
    /// test's) in this process. Marking and scanning `/proc` cost about
    /// 50 µs, ten times what a small exploration costs to start, so a test
    /// that explores many models (generated programs, parametrised cases)
    /// pays for it once.
    pub(super) fn first_of(test: Option<&str>) -> Self {
        static CHECKED: std::sync::Mutex<std::collections::BTreeSet<String>> =
            std::sync::Mutex::new(std::collections::BTreeSet::new());
        let current = std::thread::current();
        let Some(key) = test.or(current.name()) else {
            return OsThreads(mark());
        };
        let first = CHECKED
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(key.to_owned());
        OsThreads(if first { mark() } else { None })
    }

    /// The warning if threads started since [`now`](Self::now) are still
    /// alive; gives the current thread its name back.
    pub(super) fn spawned_since(self) -> Option<String> {
        let new = started(self.0.as_ref()?)?;
        drop(self);
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

impl Drop for OsThreads {
    fn drop(&mut self) {
        if let Some(marked) = self.0.take() {
            unmark(&marked);
        }
    }
}

#[cfg(target_os = "linux")]
const OWN: &str = "/proc/thread-self/comm";

#[cfg(target_os = "linux")]
fn mark() -> Option<Marked> {
    let original = std::fs::read_to_string(OWN)
        .ok()?
        .trim_end_matches('\n')
        .to_owned();
    let tid = std::fs::read_link("/proc/thread-self").ok()?;
    let tid = tid.file_name()?.to_str()?;
    // At most 15 bytes, unique in the process: the thread's id.
    let marker: String = format!("kase~{tid}").chars().take(15).collect();
    std::fs::write(OWN, &marker).ok()?;
    Some(Marked { marker, original })
}

#[cfg(target_os = "linux")]
fn unmark(marked: &Marked) {
    let _ = std::fs::write(OWN, &marked.original);
}

/// Other tasks bearing the marker.
#[cfg(target_os = "linux")]
fn started(marked: &Marked) -> Option<usize> {
    let own = std::fs::read_link("/proc/thread-self").ok()?;
    let own = own.file_name()?;
    let mut n = 0;
    for entry in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        if entry.file_name() == own {
            continue;
        }
        let comm = std::fs::read_to_string(entry.path().join("comm")).unwrap_or_default();
        if comm.trim_end_matches('\n') == marked.marker {
            n += 1;
        }
    }
    Some(n)
}

#[cfg(not(target_os = "linux"))]
fn mark() -> Option<Marked> {
    None
}

#[cfg(not(target_os = "linux"))]
fn unmark(_: &Marked) {}

#[cfg(not(target_os = "linux"))]
fn started(_: &Marked) -> Option<usize> {
    None
}

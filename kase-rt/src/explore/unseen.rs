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
/// threads other tests start in parallel.) Reading `/proc`'s task
/// directory is the slow part, so it is skipped when no task at all was
/// created in the meantime: the last process id handed out (`/proc/loadavg`)
/// is then unchanged. Elsewhere: nothing.
pub(super) struct OsThreads(Option<Marked>);

/// The current thread renamed to `marker`; its name was `original`, and
/// `last_pid` is the last task id handed out when it was marked.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
struct Marked {
    marker: String,
    original: Vec<u8>,
    last_pid: Option<u32>,
    /// Watchdog threads the current thread had started when it was marked
    /// (the watchdog starts at the model's first spawn, so often while the
    /// mark is on).
    watchers: u64,
}

impl OsThreads {
    /// Marks the current thread, if this is the first exploration of its
    /// test (`test`, else the OS thread's name, which libtest sets to the
    /// test's) in this process. Marking and reading `/proc` take about
    /// 30 µs, more than a small exploration costs to start, so a
    /// test that explores many models (generated programs, parametrised
    /// cases) pays for them once.
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

/// At most this many bytes of a name: the kernel's `TASK_COMM_LEN` less
/// its terminating NUL.
#[cfg(target_os = "linux")]
const COMM_LEN: usize = 15;

#[cfg(target_os = "linux")]
fn mark() -> Option<Marked> {
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    // Unique in the process, so no other thread bears it.
    static MARKS: AtomicU64 = AtomicU64::new(0);
    let original = own_name()?;
    let marker = format!("kase~{}", MARKS.fetch_add(1, Relaxed));
    set_own_name(marker.as_bytes()).then_some(())?;
    Some(Marked {
        marker,
        original,
        last_pid: last_pid(),
        watchers: crate::exec::watchdog::started_here(),
    })
}

/// The current thread's name as the kernel has it (std's copy of a name it
/// set is cut the same way, but `main` bears the program's name instead).
#[cfg(target_os = "linux")]
fn own_name() -> Option<Vec<u8>> {
    let mut buf = [0u8; COMM_LEN + 1];
    // SAFETY: `PR_GET_NAME` writes the name and its NUL, at most
    // `TASK_COMM_LEN` (16) bytes, to the address given: `buf` is 16 bytes
    // and lives for the call.
    let done = unsafe { libc::prctl(libc::PR_GET_NAME, buf.as_mut_ptr()) } == 0;
    let len = buf.iter().position(|&b| b == 0).unwrap_or(COMM_LEN);
    done.then(|| buf[..len].to_vec())
}

/// Renames the current thread, as the kernel knows it (what the threads it
/// starts inherit), to `name` cut to `COMM_LEN` bytes. One system call:
/// writing `/proc/thread-self/comm` instead (an open, a write and a close)
/// made the check most of what a one-execution test process cost beyond
/// loom's (about 30 µs a rename, cold).
#[cfg(target_os = "linux")]
fn set_own_name(name: &[u8]) -> bool {
    let mut buf = [0u8; COMM_LEN + 1];
    let len = name.len().min(COMM_LEN);
    buf[..len].copy_from_slice(&name[..len]);
    // SAFETY: `PR_SET_NAME` reads a NUL-terminated string of at most 16
    // bytes from the address given: `buf` is 16 bytes, ends in a NUL
    // (`len` ≤ 15) and lives for the call.
    unsafe { libc::prctl(libc::PR_SET_NAME, buf.as_ptr()) == 0 }
}

/// The start of a small `/proc` file, in one read (not the size query and
/// two reads of `fs::read`): all of it when it fits in `buf`.
#[cfg(target_os = "linux")]
fn read_once(path: impl AsRef<std::path::Path>, buf: &mut [u8]) -> Option<&[u8]> {
    use std::io::Read;
    let n = std::fs::File::open(path).ok()?.read(buf).ok()?;
    Some(&buf[..n])
}

/// The name in a `comm` file, without its newline.
#[cfg(target_os = "linux")]
fn comm(path: impl AsRef<std::path::Path>) -> Option<Vec<u8>> {
    let mut buf = [0u8; COMM_LEN + 2];
    let name = read_once(path, &mut buf)?;
    Some(name.strip_suffix(b"\n").unwrap_or(name).to_vec())
}

/// The last task id the kernel handed out in this PID namespace (the last
/// field of `/proc/loadavg`, a line of under 64 bytes): every new process
/// or thread moves it on.
#[cfg(target_os = "linux")]
fn last_pid() -> Option<u32> {
    let mut buf = [0u8; 128];
    std::str::from_utf8(read_once("/proc/loadavg", &mut buf)?)
        .ok()?
        .split_whitespace()
        .last()?
        .parse()
        .ok()
}

#[cfg(target_os = "linux")]
fn unmark(marked: &Marked) {
    set_own_name(&marked.original);
}

/// Other tasks bearing the marker: none if no task but the watchdog's was
/// created since the marking (one read of `/proc/loadavg` instead of the
/// task directory and a file per task).
#[cfg(target_os = "linux")]
fn started(marked: &Marked) -> Option<usize> {
    // Task ids are handed out in turn: if the last one moved on by exactly
    // the watchdog threads started here, no other task was created.
    let watchers = crate::exec::watchdog::started_here() - marked.watchers;
    if let (Some(before), Some(after)) = (marked.last_pid, last_pid()) {
        if u64::from(after.wrapping_sub(before)) == watchers {
            return Some(0);
        }
    }
    if watchers > 0 {
        // It bears the marker until std names it.
        crate::exec::watchdog::await_named();
    }
    let own = std::fs::read_link("/proc/thread-self").ok()?;
    let own = own.file_name()?;
    let mut n = 0;
    for entry in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        if entry.file_name() == own {
            continue;
        }
        if comm(entry.path().join("comm")).is_some_and(|name| name == marked.marker.as_bytes()) {
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

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    const OWN: &str = "/proc/thread-self/comm";

    /// A thread std did not name (as `main`) is asked the kernel for its
    /// name, and a rename is what `/proc` then says, cut as the kernel
    /// cuts names.
    #[test]
    fn the_kernel_is_asked_for_an_unnamed_threads_name_and_renames_it() {
        std::thread::spawn(|| {
            assert_eq!(std::thread::current().name(), None);
            assert_eq!(own_name(), comm(OWN));
            assert!(set_own_name(b"a_name_longer_than_the_kernel_keeps"));
            assert_eq!(comm(OWN).unwrap(), b"a_name_longer_t");
            assert_eq!(own_name().unwrap(), b"a_name_longer_t");
        })
        .join()
        .unwrap();
    }

    /// The name taken from std is the kernel's, for names the kernel cuts
    /// (at a byte, inside a character too) and for names it keeps.
    #[test]
    fn a_named_threads_own_name_is_what_proc_says() {
        for name in [
            "short",
            "a_much_longer_name_than_fifteen_bytes",
            "nom_été_coupé_ici",
        ] {
            let (from_std, from_proc) = std::thread::Builder::new()
                .name(name.into())
                .spawn(|| (own_name().expect("named"), comm(OWN).expect("readable")))
                .unwrap()
                .join()
                .unwrap();
            assert_eq!(from_std, from_proc, "{name}");
        }
    }

    /// Starting a thread moves the last task id on.
    #[test]
    fn starting_a_thread_moves_the_last_pid() {
        let before = last_pid().expect("/proc/loadavg");
        std::thread::spawn(|| ()).join().unwrap();
        assert_ne!(last_pid(), Some(before));
    }

    /// The watchdog's thread, started while marked (it starts at a model's
    /// first spawn), bears the marker until std names it: it is not
    /// counted, whether no other task was created meanwhile (the last task
    /// id tells) or some were (the task directory is read).
    #[test]
    fn the_watchdogs_own_thread_is_not_counted() {
        use crate::exec::watchdog::{Watch, Watchdog};
        std::thread::Builder::new()
            .name("watchdog_mark_test".into())
            .spawn(|| {
                // Started before the mark: it creates a task elsewhere.
                let (go, wait) = std::sync::mpsc::channel::<()>();
                let elsewhere = std::thread::spawn(move || {
                    wait.recv().unwrap();
                    std::thread::spawn(|| ()).join().unwrap();
                });
                let marked = mark().expect("linux");
                let watch =
                    std::sync::Arc::new(Watch::new(std::time::Duration::from_secs(600), None));
                let watching = Watchdog::new(watch.clone());
                watch.arm();
                assert_eq!(started(&marked), Some(0));
                go.send(()).unwrap();
                elsewhere.join().unwrap();
                assert_eq!(started(&marked), Some(0));
                unmark(&marked);
                drop(watching);
            })
            .unwrap()
            .join()
            .unwrap();
    }

    /// A thread started while marked is counted; the marked thread gets
    /// its name back.
    #[test]
    fn a_thread_started_while_marked_is_found() {
        std::thread::Builder::new()
            .name("marked_thread_test".into())
            .spawn(|| {
                let marked = mark().expect("linux");
                assert_eq!(started(&marked), Some(0));
                let (stop, wait) = std::sync::mpsc::channel::<()>();
                let started_thread = std::thread::spawn(move || wait.recv());
                assert_eq!(started(&marked), Some(1));
                unmark(&marked);
                assert_eq!(own_name(), Some(b"marked_thread_t".to_vec()));
                assert_eq!(comm(OWN).unwrap(), b"marked_thread_t");
                drop(stop);
                let _ = started_thread.join();
            })
            .unwrap()
            .join()
            .unwrap();
    }
}

//! The watchdog: a model thread blocked outside kase's control (a std lock
//! held across a scheduling point, a blocking read, a std channel) stops the
//! whole cooperative scheduler, and nothing inside the model can notice. A
//! separate OS thread watches a progress counter that every visible
//! operation bumps; after `KASE_WATCHDOG` seconds (default 10) without
//! progress it says which model thread ran last, where, and why this
//! happens — then ends the process, because a coroutine stuck on a blocked
//! OS thread cannot be resumed or unwound.
//!
//! The watching starts at the exploration's first spawn. Until a second
//! model thread exists nothing can hold a std resource across a switch:
//! a model on one thread that blocks outside kase would hang just the same
//! without kase, and starting an OS thread was a third of a millisecond,
//! most of what a one-thread test (event-listener's loom suite) cost
//! beyond loom.

use std::panic::Location;
use std::sync::atomic::{
    AtomicBool, AtomicPtr, AtomicU32, AtomicU64,
    Ordering::{Acquire, Relaxed, Release},
};
use std::sync::Arc;
use std::thread::Thread;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::action::ThreadIdx;

/// What the watchdog watches; bumped by the execution.
#[derive(Debug, Default)]
pub(crate) struct Watch {
    progress: AtomicU64,
    thread: AtomicU32,
    location: AtomicPtr<Location<'static>>,
    /// The model thread resumed last: the one running, so the one blocked.
    running: AtomicU32,
    /// Model code is running (not the explorer between steps).
    in_model: AtomicBool,
    stop: AtomicBool,
    /// The watching started ([`arm`](Watch::arm)).
    armed: AtomicBool,
    /// How long without progress is too long.
    limit: Duration,
    /// The test being explored, named in the message.
    test: Option<String>,
}

/// Marks model code as running while it lives.
pub(crate) struct Running<'w>(&'w Watch);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.in_model.store(false, Relaxed);
        self.0.advance();
    }
}

impl Watch {
    /// What an exploration of `test` reports after `limit` without
    /// progress, once armed.
    pub(crate) fn new(limit: Duration, test: Option<String>) -> Self {
        Watch {
            limit,
            test,
            ..Watch::default()
        }
    }

    /// A model thread was spawned: the watching starts, if it has not.
    pub(crate) fn arm(self: &Arc<Self>) {
        if !self.armed.load(Relaxed) && !self.armed.swap(true, Relaxed) {
            watch(self.clone());
        }
    }

    /// A visible operation of `thread` at `location` happened.
    pub(crate) fn tick(&self, thread: ThreadIdx, location: &'static Location<'static>) {
        self.advance();
        self.thread.store(thread.0, Relaxed);
        self.location
            .store(std::ptr::from_ref(location).cast_mut(), Relaxed);
    }

    /// Model code runs until the returned guard is dropped; only then can
    /// the watchdog fire (the explorer's own work is never "blocked").
    pub(crate) fn running(&self, thread: ThreadIdx) -> Running<'_> {
        self.running.store(thread.0, Relaxed);
        self.in_model.store(true, Relaxed);
        self.advance();
        Running(self)
    }

    /// The exploration moved on (a new execution started).
    pub(crate) fn bump(&self) {
        self.advance();
    }

    /// Moves the progress counter on. Only the exploring OS thread writes
    /// it (its executions' threads are coroutines on it; the watchdog only
    /// reads), so a load and a store do: a locked add cost about 1 % of an
    /// execution, three of them at every step.
    fn advance(&self) {
        self.progress
            .store(self.progress.load(Relaxed).wrapping_add(1), Relaxed);
    }

    fn describe(&self) -> String {
        let limit = self.limit;
        let running = ThreadIdx(self.running.load(Relaxed));
        let location = self.location.load(Relaxed);
        let last = if location.is_null() {
            format!("{running} is blocked before any visible operation")
        } else {
            // SAFETY: only ever set from a `&'static Location`.
            let location = unsafe { &*location };
            let thread = ThreadIdx(self.thread.load(Relaxed));
            if thread == running {
                format!("{running} is blocked after its visible operation at {location}")
            } else {
                format!(
                    "{running} is blocked since it started, before its first visible operation \
                     (the last one was by {thread} at {location})"
                )
            }
        };
        format!(
            "kase: watchdog: no progress for {limit:?}; {last}. It is probably blocked \
             outside kase's control: a std (not kase) Mutex, Condvar or channel, a blocking read, or a \
             long computation without visible operations. Use the kase shims (or `#[kase::test]`, \
             which rewrites std paths) for everything the threads of a model wait on; raise the limit \
             with KASE_WATCHDOG=<seconds> (0 turns the watchdog off). A coroutine blocked on an OS \
             thread cannot be resumed, so kase ends the process instead of hanging."
        )
    }
}

/// Ends the watching of one exploration when dropped.
///
/// One OS thread at a time does the watching. The first exploration of a
/// process to spawn a model thread starts it ([`Watch::arm`]), and it ends
/// as soon as that exploration does: a test
/// process that explores one model then exits without a third thread to
/// tear down (about 1 ms per process on a loaded two-core machine, most of
/// a small model's test). From the second exploration on, the thread stays,
/// parked while there is nothing to watch: spawning a thread per
/// exploration costs more than whole explorations of small models, and a
/// test suite runs many.
pub(crate) struct Watchdog {
    watch: Arc<Watch>,
}

/// An exploration being watched.
struct Entry {
    watch: Arc<Watch>,
    /// The progress counter when last looked at, and since when it has not
    /// moved while model code ran.
    last: u64,
    since: Instant,
}

/// The explorations being watched, in every thread of the process, and the
/// thread watching them.
struct Watched {
    entries: Vec<Entry>,
    /// The watching thread, while one runs (it clears this as it ends, with
    /// the lock held, so an exploration that finds `None` starts another).
    watcher: Option<Thread>,
    /// Explorations started in this process: after the first, the watching
    /// thread stays when idle.
    started: u64,
}

static WATCHED: Mutex<Watched> = Mutex::new(Watched {
    entries: Vec::new(),
    watcher: None,
    started: 0,
});

impl Watchdog {
    /// The guard of `watch`, which starts being watched when armed.
    pub(crate) fn new(watch: Arc<Watch>) -> Watchdog {
        Watchdog { watch }
    }
}

/// Starts watching `watch`.
fn watch(watch: Arc<Watch>) {
    let entry = Entry {
        last: watch.progress.load(Relaxed),
        since: Instant::now(),
        watch,
    };
    let mut watched = WATCHED.lock();
    watched.entries.push(entry);
    watched.started += 1;
    match &watched.watcher {
        // Parked with nothing to watch, or for a longer tick than this
        // entry's: it looks again.
        Some(thread) => thread.unpark(),
        None => {
            let named = Arc::new(AtomicBool::new(false));
            let named_there = named.clone();
            // The new thread waits for the lock until this returns.
            watched.watcher = std::thread::Builder::new()
                .name("kase-watchdog".into())
                .spawn(move || {
                    // std names a thread before it runs its closure.
                    named_there.store(true, Release);
                    watch_all();
                })
                .ok()
                .map(|handle| {
                    STARTED_HERE.with(|here| {
                        let mut here = here.borrow_mut();
                        here.0 += 1;
                        here.1 = Some(named);
                    });
                    handle.thread().clone()
                });
        }
    }
}

thread_local! {
    /// Watching threads this thread started, and whether the last one
    /// bears its own name yet: until std names it, it bears its creator's
    /// (which `explore/unseen.rs` looks for in threads a model started).
    static STARTED_HERE: std::cell::RefCell<(u64, Option<Arc<AtomicBool>>)> =
        const { std::cell::RefCell::new((0, None)) };
}

/// How many watching threads the current thread has started.
pub(crate) fn started_here() -> u64 {
    STARTED_HERE.with(|here| here.borrow().0)
}

/// Waits until the watching thread the current thread started last bears
/// its own name (a new thread needs only to be scheduled; at most a
/// second).
pub(crate) fn await_named() {
    let Some(named) = STARTED_HERE.with(|here| here.borrow().1.clone()) else {
        return;
    };
    let start = Instant::now();
    while !named.load(Acquire) && start.elapsed() < Duration::from_secs(1) {
        std::thread::yield_now();
    }
}

/// The watching thread's loop: it ends when nothing is left to watch and
/// the process has run only one exploration so far.
fn watch_all() {
    loop {
        let tick = {
            let mut watched = WATCHED.lock();
            watched.entries.retain(|e| !e.watch.stop.load(Relaxed));
            if watched.entries.is_empty() && watched.started <= 1 {
                watched.watcher = None;
                return;
            }
            let now = Instant::now();
            for entry in watched.entries.iter_mut() {
                let progress = entry.watch.progress.load(Relaxed);
                if progress != entry.last || !entry.watch.in_model.load(Relaxed) {
                    (entry.last, entry.since) = (progress, now);
                } else if now.duration_since(entry.since) >= entry.watch.limit {
                    // Past the harness's capture: the process ends here,
                    // so captured output would never be shown.
                    let text = entry.watch.describe();
                    crate::stderr::warn(entry.watch.test.as_deref(), &text);
                    std::process::exit(101);
                }
            }
            watched
                .entries
                .iter()
                .map(|e| {
                    (e.watch.limit / 4).clamp(Duration::from_millis(1), Duration::from_millis(250))
                })
                .min()
        };
        match tick {
            Some(tick) => std::thread::park_timeout(tick),
            None => std::thread::park(),
        }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        // The watching thread forgets the entry when it next looks, which
        // it does now: it may be the last one, and the thread then ends
        // before the process does.
        self.watch.stop.store(true, Relaxed);
        if !self.watch.armed.load(Relaxed) {
            return;
        }
        if let Some(thread) = &WATCHED.lock().watcher {
            thread.unpark();
        }
    }
}

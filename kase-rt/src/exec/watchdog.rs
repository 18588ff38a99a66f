//! The watchdog: a model thread blocked outside kase's control (a std lock
//! held across a scheduling point, a blocking read, a std channel) stops the
//! whole cooperative scheduler, and nothing inside the model can notice. A
//! separate OS thread watches a progress counter that every visible
//! operation bumps; after `KASE_WATCHDOG` seconds (default 10) without
//! progress it says which model thread ran last, where, and why this
//! happens — then ends the process, because a coroutine stuck on a blocked
//! OS thread cannot be resumed or unwound.

use std::panic::Location;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use super::action::ThreadIdx;

/// What the watchdog watches; bumped by the execution.
#[derive(Debug, Default)]
pub(crate) struct Watch {
    progress: AtomicU64,
    thread: AtomicU32,
    location: AtomicPtr<Location<'static>>,
    /// Model code is running (not the explorer between steps).
    in_model: AtomicBool,
    stop: AtomicBool,
}

/// Marks model code as running while it lives.
pub(crate) struct Running<'w>(&'w Watch);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.in_model.store(false, Relaxed);
        self.0.progress.fetch_add(1, Relaxed);
    }
}

impl Watch {
    /// A visible operation of `thread` at `location` happened.
    pub(crate) fn tick(&self, thread: ThreadIdx, location: &'static Location<'static>) {
        self.progress.fetch_add(1, Relaxed);
        self.thread.store(thread.0, Relaxed);
        self.location
            .store(std::ptr::from_ref(location).cast_mut(), Relaxed);
    }

    /// Model code runs until the returned guard is dropped; only then can
    /// the watchdog fire (the explorer's own work is never "blocked").
    pub(crate) fn running(&self) -> Running<'_> {
        self.in_model.store(true, Relaxed);
        self.progress.fetch_add(1, Relaxed);
        Running(self)
    }

    /// The exploration moved on (a new execution started).
    pub(crate) fn bump(&self) {
        self.progress.fetch_add(1, Relaxed);
    }

    fn describe(&self, limit: Duration) -> String {
        let location = self.location.load(Relaxed);
        let last = if location.is_null() {
            "before any visible operation".to_owned()
        } else {
            // SAFETY: only ever set from a `&'static Location`.
            let location = unsafe { &*location };
            let thread = ThreadIdx(self.thread.load(Relaxed));
            format!("the last visible operation was by {thread} at {location}")
        };
        format!(
            "kase: watchdog: no progress for {limit:?}; {last}. A model thread is probably blocked \
             outside kase's control: a std (not kase) Mutex, Condvar or channel, a blocking read, or a \
             long computation without visible operations. Use the kase shims (or `#[kase::test]`, \
             which rewrites std paths) for everything the threads of a model wait on; raise the limit \
             with KASE_WATCHDOG=<seconds> (0 turns the watchdog off). A coroutine blocked on an OS \
             thread cannot be resumed, so kase ends the process instead of hanging."
        )
    }
}

/// Watches one exploration; stops when dropped.
pub(crate) struct Watchdog {
    watch: Arc<Watch>,
    thread: Option<JoinHandle<()>>,
}

impl Watchdog {
    /// Starts watching `watch`, giving up after `limit` without progress.
    pub(crate) fn start(watch: Arc<Watch>, limit: Duration) -> Watchdog {
        let watched = watch.clone();
        let thread = std::thread::Builder::new()
            .name("kase-watchdog".into())
            .spawn(move || {
                let tick = limit.min(Duration::from_millis(250));
                let mut last = watched.progress.load(Relaxed);
                let mut still = Duration::ZERO;
                while !watched.stop.load(Relaxed) {
                    std::thread::park_timeout(tick);
                    let now = watched.progress.load(Relaxed);
                    if now == last && watched.in_model.load(Relaxed) {
                        still += tick;
                    } else {
                        (last, still) = (now, Duration::ZERO);
                    }
                    if still >= limit && !watched.stop.load(Relaxed) {
                        eprintln!("{}", watched.describe(limit));
                        std::process::exit(101);
                    }
                }
            })
            .ok();
        Watchdog { watch, thread }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.watch.stop.store(true, Relaxed);
        if let Some(thread) = self.thread.take() {
            thread.thread().unpark();
            let _ = thread.join();
        }
    }
}

//! `std::thread` shims: `spawn`, `JoinHandle`, `current`, `yield_now`,
//! `sleep`, `Thread`, `ThreadId`.
//!
//! Outside a model these are std's threads. Inside, a spawned closure becomes
//! a model thread; spawn, join and `is_finished` are visible operations.
//! `Builder` is in `thread_builder.rs`, `scope` in `scope.rs`.

use std::fmt;
use std::panic::Location;
use std::sync::Arc;
use std::time::Duration;

use crate::exec::{self, OpKind, ThreadIdx};

pub use std::thread::{available_parallelism, panicking, Result};

/// Spawns a new thread, like [`std::thread::spawn`].
///
/// ```
/// # extern crate kase_rt as kase;
/// let handle = kase::thread::spawn(|| 6 * 7);
/// assert_eq!(handle.join().unwrap(), 42);
/// ```
#[track_caller]
pub fn spawn<F, T>(f: F) -> JoinHandle<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    if !exec::in_model() {
        return JoinHandle::from_std(std::thread::spawn(f));
    }
    // SAFETY: `f` and `T` are 'static.
    let (child, slot) = unsafe { spawn_model(f, None, false, Location::caller()) };
    JoinHandle::from_model(child, None, slot)
}

/// Where a model thread leaves its closure's value for `join`.
pub(crate) type Slot<T> = Arc<parking_lot::Mutex<Option<T>>>;

/// Spawns a model thread running `f`, named `name`; the spawn is a visible
/// operation at `location`. Returns the thread and its result slot.
///
/// # Safety
///
/// `f` and `T` may borrow data living for `'a` only: the caller must make
/// sure the thread finishes before `'a` ends (a scope joins it), or never
/// starts and `f` is never dropped (pass a `ManuallyDrop`ped closure) — an
/// execution that stops early drops the bodies of threads it did not start.
pub(crate) unsafe fn spawn_model<'a, F, T>(
    f: F,
    name: Option<String>,
    scoped: bool,
    location: &'static Location<'static>,
) -> (ThreadIdx, Slot<T>)
where
    F: FnOnce() -> T + Send + 'a,
    T: Send + 'a,
{
    let slot: Slot<T> = Arc::default();
    let result = slot.clone();
    let body: Box<dyn FnOnce() + Send + 'a> = Box::new(move || *result.lock() = Some(f()));
    // SAFETY: only the lifetime is erased; our caller guarantees that the
    // body does not outlive what it borrows.
    let body: Box<dyn FnOnce() + Send + 'static> = unsafe { std::mem::transmute(body) };
    let child = exec::visible(None, OpKind::Spawn, location, |e, _| {
        let child = e.spawn_child(body, name, scoped);
        (child, Some(u64::from(child.0)))
    });
    (child, slot)
}

/// Joins model thread `thread` (a visible operation at `location`, enabled
/// once it exited) and takes its value out of `slot`.
pub(crate) fn join_model<T>(
    thread: ThreadIdx,
    slot: &Slot<T>,
    location: &'static Location<'static>,
) -> Result<T> {
    exec::settle(thread);
    let object = exec::with(|e| e.thread_object(thread));
    exec::visible(Some(object), OpKind::Join, location, |_, _| ((), None));
    let value = slot.lock().take();
    value.ok_or_else(|| Box::new("kase: joined thread produced no value") as _)
}

/// Whether model thread `thread` has exited (a visible operation).
pub(crate) fn is_finished_model(thread: ThreadIdx, location: &'static Location<'static>) -> bool {
    let object = exec::with(|e| e.thread_object(thread));
    exec::visible(Some(object), OpKind::IsFinished, location, |e, _| {
        let done = e.is_finished(thread);
        (done, Some(u64::from(done)))
    })
}

/// An owned permission to join a thread, like [`std::thread::JoinHandle`].
pub struct JoinHandle<T> {
    inner: HandleInner<T>,
    thread: Thread,
}

enum HandleInner<T> {
    Std(std::thread::JoinHandle<T>),
    Model { thread: ThreadIdx, slot: Slot<T> },
}

impl<T> JoinHandle<T> {
    /// Wraps a real thread's handle.
    pub(crate) fn from_std(inner: std::thread::JoinHandle<T>) -> Self {
        let thread = Thread::from_std(inner.thread().clone());
        JoinHandle {
            inner: HandleInner::Std(inner),
            thread,
        }
    }

    /// The handle of model thread `thread`, whose value lands in `slot`.
    pub(crate) fn from_model(thread: ThreadIdx, name: Option<Arc<str>>, slot: Slot<T>) -> Self {
        JoinHandle {
            inner: HandleInner::Model { thread, slot },
            thread: Thread::from_model(thread, name),
        }
    }

    /// Waits for the thread to finish; `Err` with the panic payload if it
    /// panicked. (In a model, a panicking thread is a failure of the
    /// execution, reported before `join` could return.)
    #[track_caller]
    pub fn join(self) -> Result<T> {
        match self.inner {
            HandleInner::Std(h) => h.join(),
            HandleInner::Model { thread, slot } => join_model(thread, &slot, Location::caller()),
        }
    }

    /// The thread this handle joins.
    pub fn thread(&self) -> &Thread {
        &self.thread
    }

    /// Whether the thread has finished running its closure.
    #[track_caller]
    pub fn is_finished(&self) -> bool {
        match &self.inner {
            HandleInner::Std(h) => h.is_finished(),
            HandleInner::Model { thread, .. } => is_finished_model(*thread, Location::caller()),
        }
    }
}

impl<T> fmt::Debug for JoinHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinHandle").finish_non_exhaustive()
    }
}

/// A handle to a thread, like [`std::thread::Thread`].
#[derive(Clone)]
pub struct Thread(ThreadInner);

#[derive(Clone)]
enum ThreadInner {
    Std(std::thread::Thread),
    Model {
        idx: ThreadIdx,
        name: Option<Arc<str>>,
    },
}

impl Thread {
    /// The handle of a real thread.
    pub(crate) fn from_std(thread: std::thread::Thread) -> Thread {
        Thread(ThreadInner::Std(thread))
    }

    /// The handle of model thread `idx`.
    pub(crate) fn from_model(idx: ThreadIdx, name: Option<Arc<str>>) -> Thread {
        Thread(ThreadInner::Model { idx, name })
    }

    /// The thread's unique identifier.
    pub fn id(&self) -> ThreadId {
        match &self.0 {
            ThreadInner::Std(t) => ThreadId(IdInner::Std(t.id())),
            ThreadInner::Model { idx, .. } => ThreadId(IdInner::Model(*idx)),
        }
    }

    /// The model thread this handle names (`None` for a real thread).
    pub(crate) fn model_idx(&self) -> Option<ThreadIdx> {
        match &self.0 {
            ThreadInner::Std(_) => None,
            ThreadInner::Model { idx, .. } => Some(*idx),
        }
    }

    /// The real thread this handle names (`None` for a model thread).
    pub(crate) fn std_thread(&self) -> Option<&std::thread::Thread> {
        match &self.0 {
            ThreadInner::Std(t) => Some(t),
            ThreadInner::Model { .. } => None,
        }
    }

    /// The thread's name, if it has one.
    pub fn name(&self) -> Option<&str> {
        match &self.0 {
            ThreadInner::Std(t) => t.name(),
            ThreadInner::Model { name, .. } => name.as_deref(),
        }
    }
}

impl fmt::Debug for Thread {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Thread")
            .field("id", &self.id())
            .field("name", &self.name())
            .finish_non_exhaustive()
    }
}

/// A unique identifier of a running thread, like [`std::thread::ThreadId`].
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ThreadId(IdInner);

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum IdInner {
    Std(std::thread::ThreadId),
    Model(ThreadIdx),
}

impl fmt::Debug for ThreadId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            IdInner::Std(id) => fmt::Debug::fmt(&id, f),
            IdInner::Model(idx) => write!(f, "ThreadId(model {})", idx.0),
        }
    }
}

/// The handle of the calling thread, like [`std::thread::current`].
pub fn current() -> Thread {
    if !exec::in_model() {
        return Thread(ThreadInner::Std(std::thread::current()));
    }
    exec::with(|e| {
        let idx = e.current();
        let name = e.thread_name(idx).map(Arc::from);
        Thread(ThreadInner::Model { idx, name })
    })
}

/// Gives up the processor, like [`std::thread::yield_now`]; in a model, a
/// scheduling point where any other thread may run.
///
/// In a spin loop, once the thread is back in the state of an earlier yield
/// having only read since, it waits until another thread changes what it
/// read (the repetitions in between change nothing); a yield outside a loop,
/// or in a loop whose own state changes, never waits.
#[track_caller]
#[inline(always)] // the spin rule fingerprints the caller's frame (exec/spin)
pub fn yield_now() {
    if exec::in_model() {
        let caller = exec::CallerState::capture();
        exec::yield_point(&caller, Location::caller());
    } else {
        std::thread::yield_now();
    }
}

/// Puts the current thread to sleep for at least `dur`, like
/// [`std::thread::sleep`].
///
/// In a model, time does not pass: `sleep` is a scheduling point exactly
/// like [`yield_now`], where any other thread may run (as much as it likes)
/// before this one goes on. So code that "waits long enough" for another
/// thread with `sleep` instead of synchronising with it is caught.
///
/// ```
/// # extern crate kase_rt as kase;
/// use kase::sync::atomic::{AtomicBool, Ordering::SeqCst};
/// use kase::sync::Arc;
/// use kase::thread;
/// use std::time::Duration;
///
/// let report = kase::Builder::new().explore(|| {
///     let done = Arc::new(AtomicBool::new(false));
///     let d = done.clone();
///     let t = thread::spawn(move || d.store(true, SeqCst));
///     thread::sleep(Duration::from_secs(1)); // "surely it has run by now"
///     assert!(done.load(SeqCst), "not yet");
///     t.join().unwrap();
/// });
/// assert!(report.failure().is_some());
/// ```
#[track_caller]
#[inline(always)] // the spin rule fingerprints the caller's frame (exec/spin)
pub fn sleep(dur: Duration) {
    if exec::in_model() {
        let caller = exec::CallerState::capture();
        exec::yield_point(&caller, Location::caller());
    } else {
        std::thread::sleep(dur);
    }
}

/// Like [`sleep`] with a duration in milliseconds, as std's deprecated
/// [`std::thread::sleep_ms`] (kept so that rewritten code using it compiles).
#[deprecated(since = "1.6.0", note = "replaced by `std::thread::sleep`")]
#[track_caller]
#[inline(always)] // the spin rule fingerprints the caller's frame (exec/spin)
pub fn sleep_ms(ms: u32) {
    sleep(Duration::from_millis(u64::from(ms)));
}

//! `std::thread` shims: `spawn`, `JoinHandle`, `current`, `yield_now`,
//! `Thread`, `ThreadId`.
//!
//! Outside a model these are std's threads. Inside, a spawned closure becomes
//! a model thread; spawn, join and `is_finished` are visible operations.

use std::fmt;
use std::panic::Location;
use std::sync::Arc;

use crate::exec::{self, OpKind, ThreadIdx};

pub use std::thread::{panicking, Result};

/// Spawns a new thread, like [`std::thread::spawn`].
///
/// ```
/// let handle = kase_rt::thread::spawn(|| 6 * 7);
/// assert_eq!(handle.join().unwrap(), 42);
/// ```
#[track_caller]
pub fn spawn<F, T>(f: F) -> JoinHandle<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    if !exec::in_model() {
        let inner = std::thread::spawn(f);
        let thread = Thread(ThreadInner::Std(inner.thread().clone()));
        return JoinHandle {
            inner: HandleInner::Std(inner),
            thread,
        };
    }
    let slot: Arc<parking_lot::Mutex<Option<T>>> = Arc::default();
    let result = slot.clone();
    let body = Box::new(move || *result.lock() = Some(f()));
    let child = exec::visible(None, OpKind::Spawn, Location::caller(), |e, _| {
        let child = e.spawn_child(body, None);
        (child, Some(u64::from(child.0)))
    });
    let thread = Thread(ThreadInner::Model {
        idx: child,
        name: None,
    });
    JoinHandle {
        inner: HandleInner::Model {
            thread: child,
            slot,
        },
        thread,
    }
}

/// An owned permission to join a thread, like [`std::thread::JoinHandle`].
pub struct JoinHandle<T> {
    inner: HandleInner<T>,
    thread: Thread,
}

enum HandleInner<T> {
    Std(std::thread::JoinHandle<T>),
    Model {
        thread: ThreadIdx,
        slot: Arc<parking_lot::Mutex<Option<T>>>,
    },
}

impl<T> JoinHandle<T> {
    /// Waits for the thread to finish; `Err` with the panic payload if it
    /// panicked. (In a model, a panicking thread is a failure of the
    /// execution, reported before `join` could return.)
    #[track_caller]
    pub fn join(self) -> Result<T> {
        match self.inner {
            HandleInner::Std(h) => h.join(),
            HandleInner::Model { thread, slot } => {
                let object = exec::with(|e| e.thread_object(thread));
                exec::visible(Some(object), OpKind::Join, Location::caller(), |_, _| {
                    ((), None)
                });
                let value = slot.lock().take();
                value.ok_or_else(|| Box::new("kase: joined thread produced no value") as _)
            }
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
            HandleInner::Model { thread, .. } => {
                let (thread, object) = (*thread, exec::with(|e| e.thread_object(*thread)));
                exec::visible(
                    Some(object),
                    OpKind::IsFinished,
                    Location::caller(),
                    |e, _| {
                        let done = e.is_finished(thread);
                        (done, Some(u64::from(done)))
                    },
                )
            }
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
#[track_caller]
pub fn yield_now() {
    if exec::in_model() {
        exec::visible(None, OpKind::Yield, Location::caller(), |_, _| ((), None));
    } else {
        std::thread::yield_now();
    }
}

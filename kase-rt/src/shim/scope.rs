//! `std::thread::scope` shims: [`scope`], [`Scope`], [`ScopedJoinHandle`].
//!
//! Outside a model, [`scope`] is std's scope (the shim's [`Scope`] forwards
//! to it). Inside, each scoped thread is a model thread whose closure may
//! borrow from the enclosing stack frame; the scope joins every thread not
//! joined through its handle before it returns, each join a visible
//! operation at the `scope` call.
//!
//! Soundness of the borrowing (model side): a scoped thread's closure has its
//! lifetime erased when it becomes a model thread. It is run to completion
//! before `scope` returns (the scope joins it); if the execution stops early
//! while it runs, the driver unwinds a scoped thread before its spawner
//! (`Execution::teardown_order`), so its frames end before the spawner's
//! frame; and if it never started, its closure is leaked rather than dropped
//! after the borrowed data is gone.

use std::fmt;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe, Location};
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};
use std::sync::Arc;

use crate::exec::error::OrInternal;
use crate::exec::{self, ThreadIdx};

use super::thread::{self, is_finished_model, join_model, Result, Slot, Thread};

/// A scope to spawn scoped threads in, like [`std::thread::Scope`].
///
/// See [`scope`] for details.
pub struct Scope<'scope, 'env: 'scope> {
    inner: ScopeInner,
    scope: PhantomData<&'scope mut &'scope ()>,
    env: PhantomData<&'env mut &'env ()>,
}

enum ScopeInner {
    /// Outside a model: std's `Scope<'scope, 'env>`, lifetime-erased. Set
    /// before the scope's closure runs, read only while std's scope is live.
    Std(AtomicPtr<()>),
    /// Inside a model.
    Model(ModelScope),
}

/// The threads a model scope must join before it returns.
#[derive(Default)]
struct ModelScope {
    /// Spawned threads, with whether their handle joined them. Never locked
    /// across a visible operation (it is a real lock, and every model thread
    /// runs on this OS thread).
    threads: parking_lot::Mutex<Vec<(ThreadIdx, Arc<AtomicBool>)>>,
}

/// An owned permission to join a scoped thread, like
/// [`std::thread::ScopedJoinHandle`].
///
/// Dropping it does not detach the thread: the scope joins it at its end.
pub struct ScopedJoinHandle<'scope, T> {
    inner: HandleInner<'scope, T>,
    thread: Thread,
}

enum HandleInner<'scope, T> {
    Std(std::thread::ScopedJoinHandle<'scope, T>),
    Model {
        thread: ThreadIdx,
        slot: Slot<T>,
        joined: Arc<AtomicBool>,
    },
}

/// Creates a scope for spawning scoped threads, like [`std::thread::scope`].
///
/// The closure `f` gets a [`Scope`] whose [`spawn`](Scope::spawn) starts
/// threads that may borrow non-`'static` data from outside the scope. All
/// threads spawned in the scope and not joined manually are joined before
/// `scope` returns.
///
/// # Panics
///
/// As in std: if `f` panics, `scope` waits for the scoped threads, then
/// resumes the panic; if a scoped thread that was not joined manually
/// panicked, `scope` panics with "a scoped thread panicked" once all are
/// joined. Inside a model, a panic in any model thread (scoped or not) is the
/// failure of the execution, reported with the thread's own panic message
/// (the one `#[should_panic(expected = ...)]` sees).
///
/// ```
/// # extern crate kase_rt as kase;
/// use kase::sync::atomic::{AtomicUsize, Ordering::SeqCst};
/// use kase::thread;
///
/// kase::model(|| {
///     let hits = AtomicUsize::new(0); // borrowed, not shared through an Arc
///     let mut names = vec!["a"];
///     thread::scope(|s| {
///         s.spawn(|| hits.fetch_add(1, SeqCst));
///         s.spawn(|| hits.fetch_add(1, SeqCst));
///         names.push("b"); // the main thread may use `names` mutably meanwhile
///     });
///     assert_eq!(hits.load(SeqCst), 2);
///     assert_eq!(names.len(), 2);
/// });
/// ```
#[track_caller]
pub fn scope<'env, F, T>(f: F) -> T
where
    F: for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> T,
{
    if !exec::in_model() {
        let scope = Scope {
            inner: ScopeInner::Std(AtomicPtr::new(std::ptr::null_mut())),
            scope: PhantomData,
            env: PhantomData,
        };
        return std::thread::scope(|std_scope| {
            if let ScopeInner::Std(ptr) = &scope.inner {
                ptr.store(std_scope as *const _ as *mut (), Ordering::Release);
            }
            f(&scope)
        });
    }
    let location = Location::caller();
    let scope = Scope {
        inner: ScopeInner::Model(ModelScope::default()),
        scope: PhantomData,
        env: PhantomData,
    };
    // As in std: catch a panic of `f` so the threads are joined first.
    let result = catch_unwind(AssertUnwindSafe(|| f(&scope)));
    if let ScopeInner::Model(model) = &scope.inner {
        model.join_all(location);
    }
    match result {
        Ok(value) => value,
        Err(payload) => resume_unwind(payload),
    }
}

impl ModelScope {
    /// Joins every thread spawned in the scope and not joined through its
    /// handle, including threads spawned meanwhile.
    fn join_all(&self, location: &'static Location<'static>) {
        loop {
            let next = self.threads.lock().pop();
            let Some((thread, joined)) = next else { break };
            if !joined.swap(true, Ordering::Relaxed) {
                exec::settle(thread);
                // Its value is dropped with the handle's slot.
                let object = exec::with(|e| e.thread_object(thread));
                exec::visible(Some(object), crate::exec::OpKind::Join, location, |_, _| {
                    ((), None)
                });
            }
        }
    }
}

impl<'scope, 'env> Scope<'scope, 'env> {
    /// Spawns a scoped thread, like [`std::thread::Scope::spawn`].
    ///
    /// The thread may borrow anything that outlives the scope. Join it with
    /// the returned handle, or let the scope join it at its end.
    ///
    /// # Panics
    ///
    /// Outside a model, if the OS fails to create a thread; use
    /// [`Builder::spawn_scoped`](super::thread_builder::Builder::spawn_scoped)
    /// to handle that.
    #[track_caller]
    pub fn spawn<F, T>(&'scope self, f: F) -> ScopedJoinHandle<'scope, T>
    where
        F: FnOnce() -> T + Send + 'scope,
        T: Send + 'scope,
    {
        self.spawn_with(None, None, f, Location::caller())
            .expect("failed to spawn thread")
    }

    /// std's scope behind this one (outside a model).
    fn std_scope(&'scope self) -> Option<&'scope std::thread::Scope<'scope, 'env>> {
        match &self.inner {
            ScopeInner::Std(ptr) => {
                let ptr = ptr.load(Ordering::Acquire) as *const std::thread::Scope<'scope, 'env>;
                // SAFETY: set (non-null) before any code could reach `self`,
                // to std's scope for this call of `scope`. Its lifetime is
                // std's scope, which ends when `std::thread::scope` returns,
                // having joined all its threads — before `self` (our 'scope)
                // ends. Nothing with 'scope in its type can outlive the call
                // of `f` (its result type cannot name 'scope), and `f` and
                // every scoped thread run within std's scope.
                Some(unsafe { &*ptr })
            }
            ScopeInner::Model(_) => None,
        }
    }

    /// Spawns a scoped thread with an optional name and stack size (the
    /// latter honoured outside a model only).
    pub(crate) fn spawn_with<F, T>(
        &'scope self,
        name: Option<String>,
        stack_size: Option<usize>,
        f: F,
        location: &'static Location<'static>,
    ) -> std::io::Result<ScopedJoinHandle<'scope, T>>
    where
        F: FnOnce() -> T + Send + 'scope,
        T: Send + 'scope,
    {
        match &self.inner {
            ScopeInner::Std(_) => {
                let std_scope = self.std_scope().or_internal("a std scope");
                let mut builder = std::thread::Builder::new();
                if let Some(name) = name {
                    builder = builder.name(name);
                }
                if let Some(size) = stack_size {
                    builder = builder.stack_size(size);
                }
                let inner = builder.spawn_scoped(std_scope, f)?;
                let thread = Thread::from_std(inner.thread().clone());
                Ok(ScopedJoinHandle {
                    inner: HandleInner::Std(inner),
                    thread,
                })
            }
            ScopeInner::Model(model) => {
                let display: Option<Arc<str>> = name.as_deref().map(Arc::from);
                // Leaked, not dropped, if the thread never starts (an early
                // stop): its captures may refer to data that is gone by the
                // time the execution drops unstarted bodies.
                let f = ManuallyDrop::new(f);
                let body = move || ManuallyDrop::into_inner(f)();
                // SAFETY: the thread is joined before the scope (and so 'scope)
                // ends: by its handle or by `join_all`; an early stop unwinds
                // it before its spawner (it is marked scoped for that); an
                // unstarted body is leaked.
                let (child, slot) = unsafe { thread::spawn_model(body, name, true, location) };
                let joined = Arc::new(AtomicBool::new(false));
                model.threads.lock().push((child, joined.clone()));
                Ok(ScopedJoinHandle {
                    inner: HandleInner::Model {
                        thread: child,
                        slot,
                        joined,
                    },
                    thread: Thread::from_model(child, display),
                })
            }
        }
    }
}

impl<T> ScopedJoinHandle<'_, T> {
    /// The thread this handle joins, like
    /// [`std::thread::ScopedJoinHandle::thread`].
    pub fn thread(&self) -> &Thread {
        &self.thread
    }

    /// Waits for the thread to finish, like
    /// [`std::thread::ScopedJoinHandle::join`]: its closure's value, or `Err`
    /// with the panic payload if it panicked. (In a model, a panicking thread
    /// is a failure of the execution, reported before `join` could return.)
    #[track_caller]
    pub fn join(self) -> Result<T> {
        match self.inner {
            HandleInner::Std(h) => h.join(),
            HandleInner::Model {
                thread,
                slot,
                joined,
            } => {
                joined.store(true, Ordering::Relaxed);
                join_model(thread, &slot, Location::caller())
            }
        }
    }

    /// Whether the thread has finished running its closure, like
    /// [`std::thread::ScopedJoinHandle::is_finished`]; a visible operation in
    /// a model.
    #[track_caller]
    pub fn is_finished(&self) -> bool {
        match &self.inner {
            HandleInner::Std(h) => h.is_finished(),
            HandleInner::Model { thread, .. } => is_finished_model(*thread, Location::caller()),
        }
    }
}

impl fmt::Debug for Scope<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scope").finish_non_exhaustive()
    }
}

impl<T> fmt::Debug for ScopedJoinHandle<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScopedJoinHandle").finish_non_exhaustive()
    }
}

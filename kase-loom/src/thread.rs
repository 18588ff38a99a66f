//! `loom::thread`: kase's model threads with loom 0.7's signatures.
//!
//! loom's free [`spawn`] asks neither the closure nor its value to be
//! `Send` (loom runs every model thread on one OS thread), and published
//! suites rely on it: sharded-slab's tests share `loom::cell::UnsafeCell`s
//! through a `std::sync::Arc`. kase runs model threads the same way (as
//! coroutines on the OS thread that checks the model), so [`spawn`] lifts the
//! bound as loom does, and, as loom, works only inside a model.

use std::cell::Cell;
use std::fmt;
use std::io;

pub use kase_rt::thread::*;

std::thread_local! {
    /// Whether this OS thread is checking a model ([`crate::model::Builder::check`]).
    static IN_MODEL: Cell<bool> = const { Cell::new(false) };
}

/// Marks this OS thread as checking a model while alive.
pub(crate) struct InModel(bool);

impl InModel {
    pub(crate) fn enter() -> Self {
        InModel(IN_MODEL.with(|m| m.replace(true)))
    }
}

impl Drop for InModel {
    fn drop(&mut self) {
        IN_MODEL.with(|m| m.set(self.0));
    }
}

/// A value moved to another model thread, which runs on the same OS thread.
struct SameOsThread<T>(T);

// SAFETY: model threads are coroutines resumed one at a time on the OS thread
// that checks the model (checked by `spawn`), so the value never leaves it;
// kase's happens-before orders the accesses of the threads that share it.
unsafe impl<T> Send for SameOsThread<T> {}

/// loom's `spawn`: a new model thread running `f`; neither `f` nor its
/// value need be `Send`.
///
/// # Panics
///
/// Outside [`crate::model()`] (as loom's).
#[track_caller]
pub fn spawn<F, T>(f: F) -> JoinHandle<T>
where
    F: FnOnce() -> T,
    F: 'static,
    T: 'static,
{
    assert!(
        IN_MODEL.with(Cell::get),
        "kase-loom: thread::spawn outside loom::model (loom's spawn needs a model too)"
    );
    let f = SameOsThread(f);
    let inner = kase_rt::thread::spawn(move || {
        let f = f;
        SameOsThread((f.0)())
    });
    JoinHandle(inner)
}

/// loom's `JoinHandle`: joins a thread [`spawn`] or [`Builder::spawn`] made.
pub struct JoinHandle<T>(kase_rt::thread::JoinHandle<SameOsThread<T>>);

impl<T> JoinHandle<T> {
    /// Waits for the thread to finish; its value, or its panic's payload.
    #[track_caller]
    pub fn join(self) -> Result<T> {
        self.0.join().map(|value| value.0)
    }

    /// The thread's handle.
    pub fn thread(&self) -> &Thread {
        self.0.thread()
    }
}

impl<T> fmt::Debug for JoinHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinHandle").finish_non_exhaustive()
    }
}

/// loom's thread `Builder`: a name and a stack size (kept, as loom keeps
/// it), then [`spawn`](Builder::spawn).
#[derive(Debug)]
pub struct Builder(kase_rt::thread::Builder);

// loom's `Builder` has no `Default` (neither has std's).
#[allow(clippy::new_without_default)]
impl Builder {
    /// A builder with no name.
    pub fn new() -> Builder {
        Builder(kase_rt::thread::Builder::new())
    }

    /// Names the thread.
    pub fn name(self, name: String) -> Builder {
        Builder(self.0.name(name))
    }

    /// The thread's stack size.
    pub fn stack_size(self, size: usize) -> Builder {
        Builder(self.0.stack_size(size))
    }

    /// Spawns the thread (loom's signature: here `f` and `T` are `Send`).
    #[track_caller]
    pub fn spawn<F, T>(self, f: F) -> io::Result<JoinHandle<T>>
    where
        F: FnOnce() -> T,
        F: Send + 'static,
        T: Send + 'static,
    {
        let inner = self.0.spawn(move || SameOsThread(f()))?;
        Ok(JoinHandle(inner))
    }
}

//! `std::thread::Builder`: threads with a name and a stack size.

use std::io;
use std::panic::Location;
use std::sync::Arc;

use crate::exec;

use super::scope::{Scope, ScopedJoinHandle};
use super::thread::{spawn_model, JoinHandle};

/// Thread factory, used to configure the properties of a new thread, like
/// [`std::thread::Builder`].
///
/// In a model, the name is the model thread's name: it is what
/// [`current`](super::thread::current)`().name()` returns in the thread, and
/// kase's reports show it next to the thread's number (`thread 1 (worker)`).
///
/// ```
/// # extern crate kase_rt as kase;
/// use kase::thread;
///
/// kase::model(|| {
///     let handle = thread::Builder::new()
///         .name("worker".into())
///         .spawn(|| thread::current().name().map(str::to_owned))
///         .unwrap();
///     assert_eq!(handle.thread().name(), Some("worker"));
///     assert_eq!(handle.join().unwrap().as_deref(), Some("worker"));
/// });
/// ```
#[must_use = "must eventually spawn the thread"]
#[derive(Debug)]
pub struct Builder {
    name: Option<String>,
    stack_size: Option<usize>,
}

impl Builder {
    /// Generates the base configuration for spawning a thread, from which
    /// configuration methods can be chained, like
    /// [`std::thread::Builder::new`].
    #[allow(clippy::new_without_default)] // as std
    pub fn new() -> Builder {
        Builder {
            name: None,
            stack_size: None,
        }
    }

    /// Names the thread-to-be, like [`std::thread::Builder::name`].
    ///
    /// The name must not contain null bytes (`spawn` panics otherwise, as in
    /// std).
    pub fn name(mut self, name: String) -> Builder {
        self.name = Some(name);
        self
    }

    /// Sets the size of the stack (in bytes) for the new thread, like
    /// [`std::thread::Builder::stack_size`].
    ///
    /// Outside a model it is passed to std. Inside a model it is accepted and
    /// ignored: every model thread runs on a stack of the size configured for
    /// the whole run, [`kase::Builder::stack_size`](crate::Builder::stack_size)
    /// (`KASE_STACK_SIZE`, `#[kase::test(stack_size = ...)]`); raise that for
    /// models whose threads recurse deeply.
    pub fn stack_size(mut self, size: usize) -> Builder {
        self.stack_size = Some(size);
        self
    }

    /// Spawns a new thread with this configuration and returns its
    /// [`JoinHandle`], like [`std::thread::Builder::spawn`].
    ///
    /// # Errors
    ///
    /// Outside a model, if the OS fails to create the thread. Inside a model
    /// it always succeeds.
    ///
    /// # Panics
    ///
    /// If the name contains null bytes.
    #[track_caller]
    pub fn spawn<F, T>(self, f: F) -> io::Result<JoinHandle<T>>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        if !exec::in_model() {
            return self.std_builder().spawn(f).map(JoinHandle::from_std);
        }
        let name = self.checked_name();
        let display: Option<Arc<str>> = name.as_deref().map(Arc::from);
        // SAFETY: `f` and `T` are 'static.
        let (child, slot) = unsafe { spawn_model(f, name, false, Location::caller()) };
        Ok(JoinHandle::from_model(child, display, slot))
    }

    /// Spawns a new scoped thread with this configuration, like
    /// [`std::thread::Builder::spawn_scoped`]; see
    /// [`Scope::spawn`](super::scope::Scope::spawn).
    ///
    /// # Errors
    ///
    /// Outside a model, if the OS fails to create the thread. Inside a model
    /// it always succeeds.
    ///
    /// # Panics
    ///
    /// If the name contains null bytes.
    ///
    /// ```
    /// # extern crate kase_rt as kase;
    /// use kase::thread;
    ///
    /// kase::model(|| {
    ///     let mut total = 0;
    ///     thread::scope(|s| {
    ///         thread::Builder::new()
    ///             .name("adder".into())
    ///             .spawn_scoped(s, || total += 1)
    ///             .unwrap();
    ///     });
    ///     assert_eq!(total, 1);
    /// });
    /// ```
    #[track_caller]
    pub fn spawn_scoped<'scope, 'env, F, T>(
        self,
        scope: &'scope Scope<'scope, 'env>,
        f: F,
    ) -> io::Result<ScopedJoinHandle<'scope, T>>
    where
        F: FnOnce() -> T + Send + 'scope,
        T: Send + 'scope,
    {
        let name = if exec::in_model() {
            self.checked_name()
        } else {
            self.name
        };
        scope.spawn_with(name, self.stack_size, f, Location::caller())
    }

    fn std_builder(self) -> std::thread::Builder {
        let mut builder = std::thread::Builder::new();
        if let Some(name) = self.name {
            builder = builder.name(name);
        }
        if let Some(size) = self.stack_size {
            builder = builder.stack_size(size);
        }
        builder
    }

    /// The name, checked as std checks it.
    #[track_caller]
    fn checked_name(&self) -> Option<String> {
        let name = self.name.clone()?;
        assert!(
            !name.contains('\0'),
            "thread name may not contain interior null bytes"
        );
        Some(name)
    }
}

//! Model threads as continuations: exactly one runs at a time, and each runs
//! until it suspends (at a visible operation) or its body returns.
//!
//! The scheduler only uses the [`Continuation`] and [`Suspend`] traits, so an
//! OS-thread backend (handing off through `parking_lot`) can sit beside the
//! coroutine backend below without touching the rest of `exec` but the
//! driver's choice of backend. The driver holds the backend's threads by
//! value, not boxed: a box per thread, and one for its body, were two of the
//! few allocations an execution made per spawned thread.

use corosensei::stack::{DefaultStack, Stack};
use corosensei::{Coroutine, CoroutineResult, Yielder};

use super::error::usage_error;
use super::heap::mode::Mode;
use super::overflow::Registration;

/// What a [`Continuation::resume`] came back with.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Resumed {
    /// The thread suspended and can be resumed again.
    Suspended,
    /// The thread's body returned (it catches its own panics).
    Finished,
}

/// A suspended model thread.
pub(crate) trait Continuation: Sized {
    /// Runs the thread until it suspends or finishes.
    fn resume(&mut self) -> Resumed;

    /// Ends an unfinished thread by unwinding its stack (running its
    /// destructors); [`recycle`](Self::recycle) then hands its resources
    /// back. The caller must make visible operations neither block nor
    /// switch meanwhile.
    fn force_unwind(&mut self);

    /// Last resort when unwinding is impossible (the driver itself is
    /// panicking: a second unwind would abort): never resume the thread and
    /// leak its stack, so nothing it references is freed under it.
    fn leak(self);

    /// Hands the resources of a finished thread back for reuse.
    fn recycle(self, pool: &mut StackPool);
}

/// How the running model thread hands control back to the scheduler.
pub(crate) trait Suspend {
    /// Returns once the scheduler resumes this thread.
    fn suspend(&self);
}

impl Suspend for Yielder<(), ()> {
    fn suspend(&self) {
        Yielder::suspend(self, ())
    }
}

/// Coroutine stacks, kept across executions so that an execution does not pay
/// for `mmap`/`munmap` per thread.
/// Each stack's guard page is registered, so that an overflow is explained
/// (see `overflow.rs`).
pub(crate) struct StackPool {
    stack_size: usize,
    /// A stack's registration drops first (tuple order): it must not
    /// outlive the mapping it names.
    free: Vec<(Registration, DefaultStack)>,
    /// The driver's table of threads, empty, between executions (it grew
    /// anew in each).
    table: Vec<Option<CoroutineThread>>,
}

/// Stacks of finished explorations, by stack size, for the next ones (a
/// test binary runs many small explorations, and mapping fresh stacks cost
/// about as much as running them). At most [`CACHED_STACKS`] are kept; each
/// keeps its guard-page registration.
static STACK_CACHE: parking_lot::Mutex<Vec<(usize, Registration, DefaultStack)>> =
    parking_lot::Mutex::new(Vec::new());

/// How many stacks [`STACK_CACHE`] keeps at most (2 MiB of address space
/// each by default; only the pages a model touched are resident).
const CACHED_STACKS: usize = 32;

impl StackPool {
    /// A pool handing out stacks of at least `stack_size` bytes.
    pub(crate) fn new(stack_size: usize) -> Self {
        StackPool {
            stack_size,
            free: Vec::new(),
            table: Vec::new(),
        }
    }

    /// An empty table for an execution's threads, with the room the last
    /// one's had.
    pub(crate) fn take_table(&mut self) -> Vec<Option<CoroutineThread>> {
        std::mem::take(&mut self.table)
    }

    /// Takes back an execution's table of threads (emptied here).
    pub(crate) fn give_table(&mut self, mut table: Vec<Option<CoroutineThread>>) {
        table.clear();
        self.table = table;
    }

    fn take(&mut self) -> (Registration, DefaultStack) {
        if let Some(stack) = self.free.pop() {
            return stack;
        }
        let cached = {
            let mut cache = STACK_CACHE.lock();
            let i = cache
                .iter()
                .rposition(|(size, ..)| *size == self.stack_size);
            i.map(|i| cache.swap_remove(i))
        };
        if let Some((_, registration, stack)) = cached {
            return (registration, stack);
        }
        let stack = DefaultStack::new(self.stack_size).unwrap_or_else(|e| {
            usage_error!(
                "could not allocate a {} byte stack for a model thread: {e} (lower it with \
                 Builder::stack_size or KASE_STACK_SIZE)",
                self.stack_size
            )
        });
        let registration = Registration::new(stack.limit().get(), self.stack_size);
        (registration, stack)
    }
}

impl Drop for StackPool {
    fn drop(&mut self) {
        let mut cache = STACK_CACHE.lock();
        let room = CACHED_STACKS.saturating_sub(cache.len());
        let size = self.stack_size;
        cache.extend(
            self.free
                .drain(..)
                .take(room)
                .map(|(registration, stack)| (size, registration, stack)),
        );
    }
}

/// The `corosensei` backend: a stackful coroutine per model thread.
pub(crate) struct CoroutineThread {
    /// The guard page of its stack, naming this thread. Declared first, so
    /// dropped before the stack is unmapped.
    registration: Registration,
    coroutine: Coroutine<(), (), (), DefaultStack>,
}

impl CoroutineThread {
    /// Creates a coroutine that will run `body` when first resumed, as
    /// model thread `thread` (named if its stack overflows).
    ///
    /// # Safety
    ///
    /// `body` may borrow data that lives for `'a` only. The caller must make
    /// sure the coroutine has finished (and been recycled) or been abandoned
    /// before `'a` ends; an abandoned coroutine is never resumed again, so the
    /// borrowed data is not touched after that.
    /// The body receives its suspender, valid until the body returns.
    pub(crate) unsafe fn new<'a>(
        pool: &mut StackPool,
        thread: u32,
        body: impl FnOnce(&dyn Suspend) + 'a,
    ) -> CoroutineThread {
        let (registration, stack) = pool.take();
        registration.set_thread(thread);
        let func = move |yielder: &Yielder<(), ()>, ()| body(yielder);
        // SAFETY: the lifetime obligation is passed on to our caller (see the
        // function's safety section); `()` inputs and outputs are 'static.
        let coroutine = unsafe { Coroutine::with_stack_unchecked(stack, func) };
        CoroutineThread {
            coroutine,
            registration,
        }
    }
}

impl Continuation for CoroutineThread {
    fn resume(&mut self) -> Resumed {
        // The thread's own code runs: std allocations are its (heap/mode.rs).
        let _model = Mode::Model.enter();
        match self.coroutine.resume(()) {
            CoroutineResult::Yield(()) => Resumed::Suspended,
            CoroutineResult::Return(()) => Resumed::Finished,
        }
    }

    fn force_unwind(&mut self) {
        let _model = Mode::Model.enter();
        self.coroutine.force_unwind();
    }

    fn leak(self) {
        // Forgetting the coroutine keeps its stack mapped forever, so the
        // suspended frames (and anything borrowed or pinned by them) are
        // never freed. It is only used while the driver is already panicking;
        // data the frames borrow from the model closure may then be freed by
        // that panic, but the frames never run again.
        std::mem::forget(self);
    }

    fn recycle(self, pool: &mut StackPool) {
        let CoroutineThread {
            coroutine,
            registration,
        } = self;
        pool.free.push((registration, coroutine.into_stack()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    #[test]
    fn coroutines_interleave_and_stacks_are_reused() {
        let log = RefCell::new(Vec::new());
        let mut pool = StackPool::new(64 * 1024);
        for round in 0..3 {
            // SAFETY: both coroutines finish before `log` goes out of scope.
            let mut a = unsafe {
                CoroutineThread::new(
                    &mut pool,
                    0,
                    Box::new(|s: &dyn Suspend| {
                        log.borrow_mut().push("a1");
                        s.suspend();
                        log.borrow_mut().push("a2");
                    }),
                )
            };
            // SAFETY: as above.
            let mut b = unsafe {
                CoroutineThread::new(
                    &mut pool,
                    1,
                    Box::new(|_: &dyn Suspend| log.borrow_mut().push("b")),
                )
            };
            assert_eq!(a.resume(), Resumed::Suspended);
            assert_eq!(b.resume(), Resumed::Finished);
            assert_eq!(a.resume(), Resumed::Finished);
            a.recycle(&mut pool);
            b.recycle(&mut pool);
            assert_eq!(pool.free.len(), 2, "round {round}");
        }
        assert_eq!(log.borrow().len(), 9);
    }

    #[test]
    fn unwound_coroutine_runs_destructors() {
        struct Loud<'a>(&'a RefCell<bool>);
        impl Drop for Loud<'_> {
            fn drop(&mut self) {
                *self.0.borrow_mut() = true;
            }
        }
        let dropped = RefCell::new(false);
        let mut pool = StackPool::new(64 * 1024);
        // SAFETY: the coroutine is unwound before `dropped` goes away.
        let mut c = unsafe {
            CoroutineThread::new(
                &mut pool,
                0,
                Box::new(|s: &dyn Suspend| {
                    let _guard = Loud(&dropped);
                    s.suspend();
                }),
            )
        };
        assert_eq!(c.resume(), Resumed::Suspended);
        c.force_unwind();
        c.recycle(&mut pool);
        assert!(*dropped.borrow());
        assert_eq!(pool.free.len(), 1, "the stack is reused");
    }
}

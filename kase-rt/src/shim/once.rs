//! `Once` and `OnceState` with std's signatures and poisoning.
//!
//! Built on kase's own primitives, with a fast path like std's futex-based
//! `Once`: the state is a kase [`AtomicU8`] (so a `static` restarts with
//! every execution, and a completed `Once` costs one visible load). The
//! initialiser runs holding a kase [`Mutex`], so a thread that finds it
//! running blocks on that lock; `wait` waits on a kase [`Condvar`] under
//! the same lock.

// Its state is accessed `SeqCst`, stronger than std's Once needs
// (acquire/release): kase's own synchronisation should not move an
// all-`SeqCst` model off the interleaving explorer (MemoryModel::Rc11), and
// what a user can observe through `Once` (happens-before from the
// initialisation to every caller that sees it complete) is the same.

use std::fmt;

use super::atomic::{AtomicU8, Ordering};
use super::condvar::Condvar;
use super::mutex::{Mutex, MutexGuard};
use crate::exec;

/// No initialiser has run to completion, and none panicked.
const INCOMPLETE: u8 = 0;
/// An initialiser panicked.
const POISONED: u8 = 1;
/// An initialiser is running.
const RUNNING: u8 = 2;
/// An initialiser completed.
const COMPLETE: u8 = 3;
/// The bits above.
const STATE_MASK: u8 = 0b11;
/// Set when some thread waits on the condvar for the state to change.
const QUEUED: u8 = 0b100;

/// A synchronisation primitive to run one-time initialisation, a drop-in for
/// [`std::sync::Once`].
///
/// ```
/// # extern crate kase_rt as kase;
/// use kase::sync::Once;
///
/// static INIT: Once = Once::new(); // `const fn new`, as in std
/// let mut runs = 0;
/// INIT.call_once(|| runs += 1);
/// INIT.call_once(|| runs += 1);
/// assert_eq!(runs, 1);
/// assert!(INIT.is_completed());
/// ```
///
/// # How kase models it
///
/// The state is a kase atomic (one visible load when already complete,
/// with Acquire/Release happens-before as in std). Otherwise `call_once`
/// takes a kase `Mutex`, reads the state again, and runs the initialiser
/// holding it, then publishes the result: a thread that finds the
/// initialiser running blocks on the lock until it ends. A lock rather
/// than std's queue of parked waiters, because every explorer takes locks
/// (under Rust's memory model the revisit explorer, which runs one
/// execution per graph, takes no condvar). `wait` marks the state as
/// queued and waits on a kase `Condvar` under that lock, which the
/// initialiser notifies. So an uncontended `call_once` is six visible
/// operations, and a `Once` whose initialiser never finishes makes its
/// waiters a deadlock. In a `static`, the state restarts from "incomplete"
/// with every execution.
pub struct Once {
    state: AtomicU8,
    lock: Mutex<()>,
    cvar: Condvar,
}

/// State passed to the closure of [`Once::call_once_force`], like
/// [`std::sync::OnceState`].
pub struct OnceState {
    poisoned: bool,
}

/// Initialisation value for static [`Once`] values, like
/// [`std::sync::ONCE_INIT`].
#[deprecated(since = "1.38.0", note = "the `Once::new()` function is now preferred")]
#[allow(clippy::declare_interior_mutable_const)] // as std's
pub const ONCE_INIT: Once = Once::new();

/// Sets the state when the initialiser returns or unwinds, and wakes the
/// waiters if any queued.
struct CompletionGuard<'a> {
    once: &'a Once,
    set_state_on_drop_to: u8,
}

impl Drop for CompletionGuard<'_> {
    #[track_caller]
    fn drop(&mut self) {
        let previous = self
            .once
            .state
            .swap(self.set_state_on_drop_to, Ordering::SeqCst);
        // The initialiser holds the waiters' lock (`Once::call`): the
        // threads in `wait` are woken under it.
        if previous & QUEUED != 0 {
            self.once.cvar.notify_all();
        }
    }
}

impl Once {
    /// Creates a new `Once` value.
    #[must_use]
    #[allow(clippy::new_without_default)] // std's `Once` has no `Default`
    pub const fn new() -> Once {
        Once {
            state: AtomicU8::new(INCOMPLETE),
            // Its state is read outside this lock (the fast path), as std's:
            // the waiters' critical sections are not peeked.
            lock: Mutex::unpeeked(()),
            cvar: Condvar::new(),
        }
    }

    /// Runs `f` if no initialiser has completed yet, exactly once across
    /// threads; returns once an initialiser has completed, with its effects
    /// visible (happens-before).
    ///
    /// # Panics
    ///
    /// If the `Once` is poisoned (an earlier initialiser panicked); `f`'s own
    /// panic propagates and poisons it.
    #[track_caller]
    pub fn call_once<F>(&self, f: F)
    where
        F: FnOnce(),
    {
        let _call = exec::call("call_once", "once");
        let state = self.state.load_latest(Ordering::SeqCst);
        if state & STATE_MASK == COMPLETE {
            return;
        }
        let mut f = Some(f);
        self.call(false, &mut |_| (f.take().unwrap())());
    }

    /// Like [`call_once`](Self::call_once), but ignores poisoning: the
    /// closure learns from [`OnceState::is_poisoned`] whether an earlier
    /// initialiser panicked.
    #[track_caller]
    pub fn call_once_force<F>(&self, f: F)
    where
        F: FnOnce(&OnceState),
    {
        let _call = exec::call("call_once_force", "once");
        let state = self.state.load_latest(Ordering::SeqCst);
        if state & STATE_MASK == COMPLETE {
            return;
        }
        let mut f = Some(f);
        self.call(true, &mut |s| (f.take().unwrap())(s));
    }

    /// Whether an initialiser has completed (with Acquire ordering, as std).
    #[must_use]
    #[track_caller]
    pub fn is_completed(&self) -> bool {
        let _call = exec::call("is_completed", "once");
        self.state.load_strict(Ordering::SeqCst) & STATE_MASK == COMPLETE
    }

    /// Blocks until an initialiser has completed.
    ///
    /// # Panics
    ///
    /// If the `Once` is or becomes poisoned.
    #[track_caller]
    pub fn wait(&self) {
        let _call = exec::call("wait", "once");
        let state = self.state.load_strict(Ordering::SeqCst);
        if state & STATE_MASK != COMPLETE {
            self.wait_until_complete(state, false);
        }
    }

    /// Blocks until an initialiser has completed, ignoring poisoning.
    #[track_caller]
    pub fn wait_force(&self) {
        let _call = exec::call("wait_force", "once");
        let state = self.state.load_strict(Ordering::SeqCst);
        if state & STATE_MASK != COMPLETE {
            self.wait_until_complete(state, true);
        }
    }

    /// The slow path of `call_once*`, once the fast path found the `Once`
    /// incomplete: claims the initialiser, or waits for the one running.
    /// The initialiser runs holding the waiters' lock, so a thread that
    /// finds it running blocks on that lock until it ends (a lock, unlike a
    /// condvar, every explorer takes, the revisit explorer included).
    #[track_caller]
    pub(crate) fn call(&self, ignore_poisoning: bool, f: &mut dyn FnMut(&OnceState)) {
        let _lock = self.lock_waiters();
        // Read again under the lock: an initialiser that ran meanwhile has
        // completed (or panicked) by now.
        let state = self.state.load_strict(Ordering::SeqCst);
        match state & STATE_MASK {
            COMPLETE => return,
            POISONED if !ignore_poisoning => panic_poisoned(),
            _ => {}
        }
        self.state
            .store(RUNNING | (state & QUEUED), Ordering::SeqCst);
        // Poisons the `Once` if `f` unwinds.
        let mut guard = CompletionGuard {
            once: self,
            set_state_on_drop_to: POISONED,
        };
        let poisoned = state & STATE_MASK == POISONED;
        // The initialiser is the user's: its steps are its own.
        exec::user_code(|| f(&OnceState { poisoned }));
        guard.set_state_on_drop_to = COMPLETE;
    }

    /// The slow path of `wait*`.
    #[track_caller]
    fn wait_until_complete(&self, mut state: u8, ignore_poisoning: bool) {
        loop {
            match state & STATE_MASK {
                COMPLETE => return,
                POISONED if !ignore_poisoning => panic_poisoned(),
                // Incomplete, running, or poisoned and ignored: wait for a
                // completion.
                _ => {
                    state = self.block_while(|s| match s & STATE_MASK {
                        COMPLETE => false,
                        POISONED => ignore_poisoning,
                        _ => true,
                    })
                }
            }
        }
    }

    /// Waits on the condvar while `waiting(state)` holds, marking the state
    /// as queued; returns the new state.
    #[track_caller]
    fn block_while(&self, waiting: impl Fn(u8) -> bool) -> u8 {
        let mut guard = self.lock_waiters();
        // Read again under the lock: the completer notifies only after
        // taking it, so it cannot notify between this check and our wait
        // (a state read before locking may be stale, its wakeup past).
        let mut state = self.state.load_strict(Ordering::SeqCst);
        loop {
            if !waiting(state) {
                return state;
            }
            if state & QUEUED == 0 {
                if let Err(now) = self.state.compare_exchange(
                    state,
                    state | QUEUED,
                    Ordering::SeqCst,
                    Ordering::SeqCst,
                ) {
                    state = now;
                    continue;
                }
            }
            guard = self
                .cvar
                .wait(guard)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            state = self.state.load_strict(Ordering::SeqCst);
        }
    }

    #[track_caller]
    fn lock_waiters(&self) -> MutexGuard<'_, ()> {
        self.lock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The state, loaded with Acquire (one visible operation), for shims
    /// built on `Once` that go on to [`call`](Self::call) with it.
    #[track_caller]
    pub(crate) fn load_state(&self) -> u8 {
        self.state.load_latest(Ordering::SeqCst)
    }

    /// Whether `state` (from [`load_state`](Self::load_state)) is complete.
    pub(crate) fn is_complete(state: u8) -> bool {
        state & STATE_MASK == COMPLETE
    }

    /// Whether an initialiser completed, through `&mut self` (no visible
    /// operation: nothing can run concurrently).
    pub(crate) fn is_completed_mut(&mut self) -> bool {
        *self.state.get_mut() & STATE_MASK == COMPLETE
    }

    /// Whether an initialiser panicked, through `&mut self`.
    pub(crate) fn is_poisoned_mut(&mut self) -> bool {
        *self.state.get_mut() & STATE_MASK == POISONED
    }

    /// Forgets a completed initialisation, through `&mut self` (for
    /// `OnceLock::take`).
    pub(crate) fn reset_mut(&mut self) {
        *self.state.get_mut() = INCOMPLETE;
    }

    /// Marks the `Once` poisoned (`false`) or complete (`true`) through
    /// `&mut self`, for an initialisation that needs no synchronisation.
    pub(crate) fn set_mut(&mut self, complete: bool) {
        *self.state.get_mut() = if complete { COMPLETE } else { POISONED };
    }
}

#[track_caller]
fn panic_poisoned() -> ! {
    panic!("Once instance has previously been poisoned")
}

impl OnceState {
    /// Whether an earlier initialiser of the `Once` panicked.
    #[must_use]
    pub fn is_poisoned(&self) -> bool {
        self.poisoned
    }
}

impl fmt::Debug for Once {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Once").finish_non_exhaustive()
    }
}

impl fmt::Debug for OnceState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OnceState")
            .field("poisoned", &self.poisoned)
            .finish()
    }
}

// As std: a `Once` is observable after a panic (it reports poisoning).
impl std::panic::UnwindSafe for Once {}
impl std::panic::RefUnwindSafe for Once {}

//! What a visible operation *is*, as the explorer sees it: a thread, an object
//! and an operation kind. What each kind *does* for dependence, scheduling and
//! happens-before is one table, in `exec/dependence.rs`, so that the
//! exhaustive oracle and the reductions agree on it by construction.

use std::fmt;

/// Index of a model thread, stable across executions.
///
/// A thread is named by its spawn path (the `k`-th thread spawned by its
/// parent), interned per exploration, so the same logical thread gets the same
/// index in every execution whatever the interleaving. `main` is 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ThreadIdx(pub u32);

impl ThreadIdx {
    /// The thread running the model closure.
    pub const MAIN: ThreadIdx = ThreadIdx(0);

    pub(crate) fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for ThreadIdx {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == ThreadIdx::MAIN {
            f.write_str("main")
        } else {
            write!(f, "thread {}", self.0)
        }
    }
}

/// Index of a synchronisation object (atomic location, mutex, thread handle)
/// within one execution, in order of first use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectIdx(pub u32);

/// Values by object, in a vector: object indices are dense within an
/// execution, and these maps are looked up at every step.
#[derive(Clone, Debug)]
pub(crate) struct ByObject<T>(Vec<Option<T>>);

impl<T> Default for ByObject<T> {
    fn default() -> Self {
        ByObject(Vec::new())
    }
}

impl<T> ByObject<T> {
    /// The value of `object`, if it has one.
    pub(crate) fn get(&self, object: ObjectIdx) -> Option<&T> {
        self.0.get(object.0 as usize)?.as_ref()
    }

    /// The value of `object`, made with `T::default()` if it had none.
    pub(crate) fn entry(&mut self, object: ObjectIdx) -> &mut T
    where
        T: Default,
    {
        let i = object.0 as usize;
        if self.0.len() <= i {
            self.0.resize_with(i + 1, || None);
        }
        self.0[i].get_or_insert_with(T::default)
    }

    /// Sets the value of `object`, returning the one it had.
    pub(crate) fn insert(&mut self, object: ObjectIdx, value: T) -> Option<T> {
        let i = object.0 as usize;
        if self.0.len() <= i {
            self.0.resize_with(i + 1, || None);
        }
        self.0[i].replace(value)
    }

    /// Applies `reset` to every value, keeping the values (and what they
    /// allocated) for reuse: for maps where a reset value reads as none.
    pub(crate) fn reset_each(&mut self, reset: impl FnMut(&mut T)) {
        self.0.iter_mut().flatten().for_each(reset);
    }
}

/// What kind of object an [`ObjectIdx`] names; used for reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjectKind {
    /// An atomic location (`Atomic*`).
    Atomic,
    /// A `Mutex`.
    Mutex,
    /// A model thread, as the target of spawn / join.
    Thread,
    /// An `RwLock`.
    RwLock,
    /// A `Condvar`.
    Condvar,
    /// A thread's park token.
    Park,
    /// A tracked `UnsafeCell`.
    Cell,
}

impl ObjectKind {
    /// How reports and messages name object `o` of this kind (`atomic#3`,
    /// `rwlock#2`; a thread object, named by its thread elsewhere, is an
    /// `object#`).
    pub(crate) fn label(self, o: ObjectIdx) -> String {
        match self {
            ObjectKind::Thread => format!("object#{}", o.0),
            kind => format!("{}#{}", format!("{kind:?}").to_ascii_lowercase(), o.0),
        }
    }
}

/// The kind of a visible operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpKind {
    /// Atomic load.
    Load,
    /// Atomic store.
    Store,
    /// Atomic read-modify-write (swap, fetch_*, fetch_update step).
    Rmw,
    /// `compare_exchange(_weak)`; counts as a write (see [`OpKind::props`]).
    CompareExchange,
    /// Blocking mutex acquisition; enabled only while the mutex is free.
    Lock,
    /// `try_lock`: always enabled, may fail.
    TryLock,
    /// Mutex release (guard drop).
    Unlock,
    /// `Mutex::is_poisoned`.
    IsPoisoned,
    /// `Mutex::clear_poison`.
    ClearPoison,
    /// Spawning a thread; the object is the child.
    Spawn,
    /// Joining a thread; enabled once the target has exited.
    Join,
    /// `JoinHandle::is_finished`.
    IsFinished,
    /// A thread's last event, after its closure returned.
    Exit,
    /// `yield_now` / `spin_loop` / `sleep`: a scheduling point. After a
    /// spinning iteration it is a read of the object spun on, enabled once
    /// another thread modifies it (see `exec/spin.rs`).
    Yield,
    /// `fence`: orders memory, touches no object.
    Fence,
    /// `RwLock::read`: enabled while no writer holds the lock. A read, so
    /// readers commute.
    ReadLock,
    /// `RwLock::try_read`: always enabled, may fail.
    TryReadLock,
    /// Dropping a read guard.
    ReadUnlock,
    /// `RwLockWriteGuard::downgrade`: the writer becomes a reader atomically.
    Downgrade,
    /// `Condvar::wait*`, first half: join the condvar's waiters (the mutex
    /// is released by the `Unlock` that follows).
    CondvarWait,
    /// `Condvar::wait`, second half: enabled once this thread was notified.
    CondvarWake,
    /// `Condvar::wait_timeout*` (or any wait with spurious wakeups on),
    /// second half: always enabled; it timed out unless notified before.
    CondvarWakeOrTimeout,
    /// `Condvar::notify_one`: notifies the longest waiting thread.
    NotifyOne,
    /// `Condvar::notify_all`.
    NotifyAll,
    /// `thread::park`: enabled once a token is available; consumes it.
    Park,
    /// `thread::park_timeout`: always enabled; consumes a token if any.
    ParkTimeout,
    /// `Thread::unpark`: makes the token available.
    Unpark,
    /// With critical-section peeking, `Mutex::lock`: starts a *pure part*
    /// that runs without a choice point while it only accesses memory. A
    /// read of the mutex, so pure sections commute on the mutex itself and
    /// are ordered only by what they access (POR-DESIGN.md, "Critical-section
    /// peeking").
    PeekLock,
    /// The unlock that ends a pure section which did not write the data
    /// the mutex guards: a read of the mutex. The guard's accesses to that
    /// data are not events of their own: only a holder of the lock reaches
    /// the data, so the lock's events order them (POR-DESIGN.md, "The
    /// guarded data: folded into the lock").
    PeekUnlock,
    /// A pure part meets other synchronisation (or grows too long): from
    /// here the section holds the mutex exclusively, a write of the mutex.
    Upgrade,
    /// A read of a tracked cell (or an atomic's `unsync_load`) inside a
    /// critical section with peeking. Never a scheduling point.
    DataRead,
    /// A write of a tracked cell inside a critical section with peeking.
    /// Never a scheduling point.
    DataWrite,
    /// With critical-section peeking, `RwLock::read`: starts a pure part in
    /// shared mode. A read of the lock, like [`OpKind::PeekLock`]; enabled
    /// while no writer holds the lock, even while upgraded readers do.
    PeekReadLock,
    /// The read unlock that ends a pure read section: a read of the lock.
    PeekReadUnlock,
    /// A pure read section meets other synchronisation: from here it holds
    /// the lock shared across choice points. A *write* of the lock, because
    /// a held reader disables a writer's `PeekLock` (a read); the lock's gate
    /// still lets other readers in (POR-DESIGN.md, "`RwLock` sections").
    ReadUpgrade,
    /// With peeking, a read lock taken outside a pure part (while
    /// panicking): a write of the lock for the same reason as
    /// [`OpKind::ReadUpgrade`].
    SharedLock,
    /// With peeking, `RwLock::try_read`: a write of the lock, may fail.
    SharedTryLock,
    /// With peeking, releasing a read lock held across choice points: a
    /// write of the lock.
    SharedUnlock,
    /// The unlock that ends a pure section which wrote the data its lock (a
    /// `Mutex`, or an `RwLock` in write mode) guards: a write of the lock,
    /// enabled like [`OpKind::Upgrade`] (no other pure part open in the
    /// reads since the last write), so the sections that read the data
    /// before it and those that read it after are ordered by the lock alone.
    PeekWriteUnlock,
}

/// A visible operation: who does what to which object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Action {
    /// The thread performing it.
    pub thread: ThreadIdx,
    /// The object it touches, if any.
    pub object: Option<ObjectIdx>,
    /// What it does.
    pub kind: OpKind,
}

/// How a condvar waiter woke: the value of its [`OpKind::CondvarWake`] or
/// [`OpKind::CondvarWakeOrTimeout`] event, which reports show.
pub mod woke {
    /// Not notified, in a timed wait: it timed out.
    pub const TIMED_OUT: u64 = 0;
    /// A notification chose it.
    pub const NOTIFIED: u64 = 1;
    /// Not notified, in a plain wait (`Builder::spurious_wakeups`).
    pub const SPURIOUSLY: u64 = 2;
}

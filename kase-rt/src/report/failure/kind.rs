//! What kind of failure kase found.

use std::fmt;

/// What kind of failure kase found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FailureKind {
    /// A model thread panicked (an assertion failed, an `unwrap` on `None`, ...).
    Panic,
    /// No thread could run, yet some had not finished.
    Deadlock,
    /// An execution exceeded `max_steps` visible operations.
    Livelock,
    /// The model did not behave the same way when re-run with the same
    /// schedule: it depends on something other than the schedule (time,
    /// randomness, `HashMap` order, uninstrumented synchronisation), or a
    /// replayed schedule no longer fits the code.
    Nondeterminism,
    /// Two accesses to a tracked `UnsafeCell`, at least one a write, were
    /// not ordered by happens-before.
    DataRace,
    /// Every thread finished (threads the model did not join run to
    /// completion after it returns), but an `Arc` created in the model
    /// (by `Arc::new` or `Arc::new_cyclic` in code that `#[kase::test]` or
    /// `#[kase::instrument]` rewrote) is still alive: a reference cycle.
    /// Tracked allocations are also a leak: memory from `kase::alloc::alloc`
    /// (or `loom::alloc` through kase-loom) never freed.
    Leak,
    /// Memory from `kase::alloc::alloc` was used after it was freed: an
    /// atomic, cell or lock in it accessed, or the block freed again. (A
    /// free that happens-before does not order with an earlier access is a
    /// [`DataRace`](Self::DataRace).)
    UseAfterFree,
    /// kase itself failed: one of its internal invariants did not hold. A
    /// bug in kase, not in the code under test; the report says so, asks
    /// for it to be reported, and carries the schedule of the execution
    /// so far.
    Internal,
}

impl fmt::Display for FailureKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FailureKind::Panic => "panic",
            FailureKind::Deadlock => "deadlock",
            FailureKind::Livelock => "livelock",
            FailureKind::Nondeterminism => "nondeterminism",
            FailureKind::DataRace => "data race",
            FailureKind::Leak => "leak",
            FailureKind::UseAfterFree => "use after free",
            FailureKind::Internal => "internal error",
        })
    }
}

//! Happens-before, following Rust's (C++20's) memory orderings, and data-race
//! detection on tracked `UnsafeCell`s.
//!
//! Interleavings are explored sequentially consistently, but whether two
//! accesses are *ordered* is decided here by vector clocks: Release/Acquire
//! (and AcqRel, SeqCst, release sequences through read-modify-writes, fences)
//! synchronise, Relaxed does not; locks, spawn/join and park/unpark do. Two
//! accesses to one cell, at least one a write, not ordered by happens-before
//! are a data race — even if the explored interleaving ran them far apart.
//!
//! Each thread's own component counts its synchronising operations and is
//! bumped *after* each one, so an access after a release is never covered by
//! the clock that release published.

use std::panic::Location;
use std::sync::atomic::Ordering;

use super::action::{OpKind, ThreadIdx};
use super::clock::VectorClock;

/// A thread's happens-before state.
#[derive(Debug, Default)]
pub(crate) struct ThreadHb {
    /// What this thread's next access happens after.
    pub clock: VectorClock,
    /// Clocks its Relaxed loads read, acquired by a later acquire fence.
    fence_acquire: VectorClock,
    /// Its clock at its last release fence, published by later Relaxed
    /// stores and read-modify-writes.
    fence_release: Option<VectorClock>,
}

impl ThreadHb {
    /// A thread whose history is `parent` (the spawner's clock, or empty).
    pub(crate) fn new(thread: ThreadIdx, parent: &VectorClock) -> Self {
        let mut clock = parent.clone();
        clock.set(thread, 1);
        ThreadHb {
            clock,
            ..Default::default()
        }
    }

    /// Ends a synchronising operation of `thread`.
    pub(crate) fn tick(&mut self, thread: ThreadIdx) {
        let next = self.clock.get(thread) + 1;
        self.clock.set(thread, next);
    }

    /// Acquires what `released` published.
    pub(crate) fn acquire(&mut self, released: &VectorClock) {
        self.clock.join(released);
    }

    /// An atomic access with `order` (for a compare-exchange, the ordering
    /// of the outcome that happened) on a location whose release clock is
    /// `sync`.
    pub(crate) fn atomic(&mut self, kind: OpKind, order: Ordering, sync: &mut VectorClock) {
        let acquire = matches!(
            order,
            Ordering::Acquire | Ordering::AcqRel | Ordering::SeqCst
        );
        let release = matches!(
            order,
            Ordering::Release | Ordering::AcqRel | Ordering::SeqCst
        );
        let reads = kind != OpKind::Store;
        let writes = kind != OpKind::Load;
        if reads {
            if acquire {
                self.clock.join(sync);
            } else {
                self.fence_acquire.join(sync);
            }
        }
        if !writes {
            return;
        }
        let rmw = kind != OpKind::Store;
        match (release, rmw) {
            // A release store starts a new release sequence.
            (true, false) => *sync = self.clock.clone(),
            // A read-modify-write continues the sequence it read from.
            (true, true) => sync.join(&self.clock),
            (false, false) => match &self.fence_release {
                Some(fence) => *sync = fence.clone(),
                None => sync.clear(),
            },
            (false, true) => {
                if let Some(fence) = &self.fence_release {
                    sync.join(fence);
                }
            }
        }
    }

    /// A fence with `order`. A `SeqCst` fence synchronises exactly like an
    /// `AcqRel` one: under RC11 (C++20) it adds no happens-before edge of its
    /// own (its extra guarantee, `psc`, constrains which executions are
    /// consistent, not what is ordered). Joining SeqCst fences through one
    /// global clock would make happens-before depend on the order of two
    /// fences, which no trace fixes (fences commute for the reduction), and
    /// would hide races C++20 has.
    pub(crate) fn fence(&mut self, order: Ordering) {
        if matches!(
            order,
            Ordering::Acquire | Ordering::AcqRel | Ordering::SeqCst
        ) {
            let pending = std::mem::take(&mut self.fence_acquire);
            self.clock.join(&pending);
        }
        if matches!(
            order,
            Ordering::Release | Ordering::AcqRel | Ordering::SeqCst
        ) {
            self.fence_release = Some(self.clock.clone());
        }
    }
}

/// One access to a tracked cell.
#[derive(Clone, Copy, Debug)]
pub struct CellAccess {
    /// The thread that made it.
    pub thread: ThreadIdx,
    /// Whether it wrote.
    pub write: bool,
    /// Where in the user's code.
    pub location: &'static Location<'static>,
    /// The thread's own clock component at the access.
    epoch: u32,
}

impl CellAccess {
    /// An access for reports (its epoch is not needed there).
    pub(crate) fn new(
        thread: ThreadIdx,
        write: bool,
        location: &'static Location<'static>,
    ) -> Self {
        CellAccess {
            thread,
            write,
            location,
            epoch: 0,
        }
    }
}

/// The accesses of one cell that later accesses must happen after.
#[derive(Debug, Default)]
pub(crate) struct CellState {
    write: Option<CellAccess>,
    /// The latest read of each thread since the last write.
    reads: Vec<CellAccess>,
}

impl CellState {
    /// Records an access by `thread` whose clock is `clock`; returns the
    /// earlier access it races with, if any.
    pub(crate) fn access(
        &mut self,
        thread: ThreadIdx,
        clock: &VectorClock,
        write: bool,
        location: &'static Location<'static>,
    ) -> Option<CellAccess> {
        let unordered = |a: &CellAccess| a.thread != thread && clock.get(a.thread) < a.epoch;
        let race = self.write.filter(unordered).or_else(|| {
            write
                .then(|| self.reads.iter().copied().find(unordered))
                .flatten()
        });
        let access = CellAccess {
            thread,
            write,
            location,
            epoch: clock.get(thread),
        };
        if write {
            self.write = Some(access);
            self.reads.clear();
        } else {
            self.reads.retain(|r| r.thread != thread);
            self.reads.push(access);
        }
        race
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: ThreadIdx = ThreadIdx(0);
    const B: ThreadIdx = ThreadIdx(1);

    fn here() -> &'static Location<'static> {
        Location::caller()
    }

    #[test]
    fn relaxed_publication_races_release_acquire_does_not() {
        for (store, load, racy) in [
            (Ordering::Relaxed, Ordering::Acquire, true),
            (Ordering::Release, Ordering::Relaxed, true),
            (Ordering::Release, Ordering::Acquire, false),
            (Ordering::SeqCst, Ordering::SeqCst, false),
        ] {
            let mut a = ThreadHb::new(A, &VectorClock::new());
            let mut b = ThreadHb::new(B, &VectorClock::new());
            let mut cell = CellState::default();
            let mut flag = VectorClock::new();
            assert!(cell.access(A, &a.clock, true, here()).is_none());
            a.atomic(OpKind::Store, store, &mut flag);
            a.tick(A);
            b.atomic(OpKind::Load, load, &mut flag);
            b.tick(B);
            let race = cell.access(B, &b.clock, false, here());
            assert_eq!(race.is_some(), racy, "{store:?}/{load:?}");
        }
    }

    #[test]
    fn fences_and_release_sequences_synchronise() {
        let mut a = ThreadHb::new(A, &VectorClock::new());
        let mut b = ThreadHb::new(B, &VectorClock::new());
        let mut cell = CellState::default();
        let mut flag = VectorClock::new();
        cell.access(A, &a.clock, true, here());
        a.fence(Ordering::Release);
        a.tick(A);
        a.atomic(OpKind::Store, Ordering::Relaxed, &mut flag);
        a.tick(A);
        // A relaxed RMW by B continues the sequence; C's acquire load sees A.
        b.atomic(OpKind::Rmw, Ordering::Relaxed, &mut flag);
        b.tick(B);
        b.fence(Ordering::Acquire);
        b.tick(B);
        assert!(cell.access(B, &b.clock, true, here()).is_none());
    }

    #[test]
    fn an_access_after_the_release_is_not_covered_by_it() {
        let mut a = ThreadHb::new(A, &VectorClock::new());
        let mut b = ThreadHb::new(B, &VectorClock::new());
        let mut cell = CellState::default();
        let mut flag = VectorClock::new();
        a.atomic(OpKind::Store, Ordering::Release, &mut flag);
        a.tick(A);
        cell.access(A, &a.clock, true, here());
        b.atomic(OpKind::Load, Ordering::Acquire, &mut flag);
        b.tick(B);
        assert!(cell.access(B, &b.clock, false, here()).is_some());
    }
}

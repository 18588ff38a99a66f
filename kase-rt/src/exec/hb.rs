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

use super::error::internal_error;
use super::error::OrInternal;
use std::panic::Location;
use std::sync::atomic::Ordering;

use super::action::{ObjectIdx, OpKind, ThreadIdx};
use super::clock::VectorClock;
use super::dependence::{Acquires, Releases};
use super::execution::Execution;
use super::object::ObjectDetail;
use super::scheduler::Fault;

/// A thread's happens-before state.
#[derive(Debug)]
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
    #[cfg(test)]
    pub(crate) fn new(thread: ThreadIdx, parent: &VectorClock) -> Self {
        Self::reusing(VectorClock::new(), thread, parent)
    }

    /// A thread whose history is `parent` (the spawner's clock, or empty),
    /// its clock in `clock`'s room (an earlier thread's clock, emptied).
    pub(crate) fn reusing(mut clock: VectorClock, thread: ThreadIdx, parent: &VectorClock) -> Self {
        clock.clone_from(parent);
        clock.set(thread, 1);
        ThreadHb {
            clock,
            fence_acquire: VectorClock::new(),
            fence_release: None,
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

/// What an object published for happens-before.
#[derive(Debug, Default)]
pub(crate) struct ObjectHb {
    /// What its last release (sequence) published.
    pub sync: VectorClock,
    /// What `RwLock` readers (and pure critical sections) published on
    /// leaving; only writers acquire it.
    pub read_release: VectorClock,
}

/// Happens-before of the operations of an execution.
impl Execution {
    /// Happens-before of a lock, join or park operation (atomics do theirs
    /// in their effect, see [`Execution::atomic_hb`]). `acquires`: the
    /// operation takes what the object's last release published.
    pub(super) fn synchronise(
        &mut self,
        t: ThreadIdx,
        object: ObjectIdx,
        kind: OpKind,
        acquires: bool,
    ) {
        let obj = &mut self.objects[object.0 as usize].hb;
        let hb = &mut self.threads[t.index()]
            .as_mut()
            .or_internal("unknown thread")
            .hb;
        if acquires {
            hb.acquire(&obj.sync);
            if matches!(
                kind.props().acquires,
                Acquires::ReleaseAndReaders | Acquires::ReleaseAndReadersIfSucceeds
            ) {
                // A writer comes after every reader that left (RwLock), and
                // an upgraded section after every pure section (peeking).
                hb.acquire(&std::mem::take(&mut obj.read_release));
            }
        }
        match kind.props().releases {
            Releases::Replace => obj.sync.clone_from(&hb.clock),
            // A pure section hands over only to what depends on it (rule R,
            // exec/peek) and to upgraded sections (POR-DESIGN.md). Readers
            // release only to writers (a reader acquires only `sync`).
            Releases::ToWriters => obj.read_release.join(&hb.clock),
            Releases::Join => obj.sync.join(&hb.clock),
            Releases::Nothing => {}
        }
    }

    /// Happens-before of an atomic access with `order` (the ordering of the
    /// outcome that happened, for a compare-exchange) to `object`.
    pub(crate) fn atomic_hb(
        &mut self,
        object: ObjectIdx,
        kind: OpKind,
        order: std::sync::atomic::Ordering,
    ) {
        let t = self.current;
        let sync = &mut self.objects[object.0 as usize].hb.sync;
        self.threads[t.index()]
            .as_mut()
            .or_internal("unknown thread")
            .hb
            .atomic(kind, order, sync);
    }

    /// Happens-before of a fence.
    pub(crate) fn fence_hb(&mut self, order: std::sync::atomic::Ordering) {
        let t = self.current;
        let hb = &mut self.threads[t.index()]
            .as_mut()
            .or_internal("unknown thread")
            .hb;
        hb.fence(order);
    }

    /// An access to a tracked cell by the current thread; a data race with
    /// an earlier access ends the execution with a failure and returns true
    /// (the caller must not perform the access).
    pub(crate) fn cell_access(
        &mut self,
        object: ObjectIdx,
        write: bool,
        location: &'static Location<'static>,
    ) -> bool {
        self.race_check(object, write, location, |detail, here, clock| {
            let ObjectDetail::Cell(cell) = detail else {
                internal_error!("object {object:?} used as a cell");
            };
            cell.access(here.thread, clock, write, location)
        })
    }

    /// An access `here` (a write if `write`) of the current thread to
    /// `object`, which `record` records in the object's detail given the
    /// thread's clock, returning the earlier access it races with: a race
    /// ends the execution with a data race and returns true. Nothing is
    /// checked during teardown.
    pub(super) fn race_check(
        &mut self,
        object: ObjectIdx,
        write: bool,
        location: &'static Location<'static>,
        record: impl FnOnce(&mut ObjectDetail, CellAccess, &VectorClock) -> Option<CellAccess>,
    ) -> bool {
        if self.teardown {
            return false;
        }
        // A cell access is no scheduling point: `Arc` drops since the last
        // one are taken here too, before any happens-before check (a
        // value's `Drop` reads its cells, or frees a block).
        if !self.live_arcs.is_empty() {
            self.arc_drops();
        }
        if self.heap_access(object, write, location) {
            return true;
        }
        let t = self.current;
        let clock = &self.threads[t.index()]
            .as_ref()
            .or_internal("unknown thread")
            .hb
            .clock;
        let here = CellAccess::new(t, write, location);
        let detail = &mut self.objects[object.0 as usize].detail;
        let Some(earlier) = record(detail, here, clock) else {
            return false;
        };
        self.data_race(earlier, here);
        true
    }

    /// Ends the execution with the data race between `earlier` and `here`
    /// (unless it already failed).
    pub(super) fn data_race(&mut self, earlier: CellAccess, here: CellAccess) {
        let between = || {
            format!(
                "{} at {} and {} at {}",
                earlier.thread, earlier.location, here.thread, here.location
            )
        };
        self.race(
            Fault::DataRace {
                earlier,
                later: here,
            },
            between,
        );
    }

    /// Ends the execution with `race`, a race `between` two accesses
    /// (unless it already failed). Happens-before under peeking is weaker
    /// than in this interleaving (POR-DESIGN.md): with critical sections
    /// peeked, the race is confirmed by exploring again without peeking.
    pub(super) fn race(&mut self, race: Fault, between: impl FnOnce() -> String) {
        if self.fault.is_none() {
            self.fault = Some(if self.peeking && !self.sections.all.is_empty() {
                Fault::PeekingUnsound {
                    reason: format!(
                        "a possible data race between {} depends on the order of critical sections",
                        between()
                    ),
                }
            } else {
                race
            });
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
    pub(super) epoch: u32,
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

//! Data races of atomics' `unsync_load`: a non-atomic read of an atomic
//! location. It races with an atomic store or read-modify-write to the same
//! location that happens-before does not order with it (atomic accesses
//! among themselves never race). Like a tracked cell's accesses, an
//! `unsync_load` is not a scheduling point: the race is found from the
//! clocks whichever order the run put the two accesses in.

use std::panic::Location;

use super::action::{ObjectIdx, ThreadIdx};
use super::clock::VectorClock;
use super::error::internal_error;
use super::execution::Execution;
use super::hb::CellAccess;
use super::object::ObjectDetail;

/// The accesses of one atomic location that a racing access must happen
/// after: atomic writes and `unsync_load`s, each only as long as no later
/// one of its kind covers it.
#[derive(Debug, Default)]
pub(crate) struct AtomicAccesses {
    /// The latest atomic write, and the earlier ones not ordered before a
    /// later one (usually none: kept apart so that the common case
    /// allocates nothing).
    latest_write: Option<CellAccess>,
    older_writes: Vec<CellAccess>,
    /// The latest `unsync_load` of each thread.
    unsync_reads: Vec<CellAccess>,
}

/// Whether `a` is not ordered before the current access of `thread`, whose
/// clock is `clock`.
fn unordered(a: &CellAccess, thread: ThreadIdx, clock: &VectorClock) -> bool {
    a.thread != thread && clock.get(a.thread) < a.epoch
}

impl AtomicAccesses {
    /// Records `access` (its epoch is the thread's clock component) and
    /// returns an earlier access it races with.
    fn record(&mut self, mut access: CellAccess, clock: &VectorClock) -> Option<CellAccess> {
        let t = access.thread;
        access.epoch = clock.get(t);
        if access.write {
            let race = self
                .unsync_reads
                .iter()
                .copied()
                .find(|a| unordered(a, t, clock));
            // A write ordered before this one is covered by it.
            self.older_writes.retain(|a| unordered(a, t, clock));
            if let Some(previous) = self.latest_write.replace(access) {
                if unordered(&previous, t, clock) {
                    self.older_writes.push(previous);
                }
            }
            race
        } else {
            let race = self
                .older_writes
                .iter()
                .chain(&self.latest_write)
                .copied()
                .find(|a| unordered(a, t, clock));
            self.unsync_reads.retain(|r| r.thread != t);
            self.unsync_reads.push(access);
            race
        }
    }
}

impl Execution {
    /// An atomic write (`write`) or an `unsync_load` of the current thread
    /// to the atomic `object`; a race with an earlier access ends the
    /// execution with a data race and returns true.
    pub(crate) fn atomic_race(
        &mut self,
        object: ObjectIdx,
        write: bool,
        location: &'static Location<'static>,
    ) -> bool {
        self.race_check(object, write, location, |detail, here, clock| {
            let ObjectDetail::Atomic(accesses) = detail else {
                internal_error!("object {object:?} used as an atomic");
            };
            accesses.record(here, clock)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: ThreadIdx = ThreadIdx(0);
    const B: ThreadIdx = ThreadIdx(1);

    fn access(thread: ThreadIdx, write: bool) -> CellAccess {
        CellAccess::new(thread, write, Location::caller())
    }

    fn clock(a: u32, b: u32) -> VectorClock {
        let mut c = VectorClock::new();
        c.set(A, a);
        c.set(B, b);
        c
    }

    #[test]
    fn an_unsync_load_races_an_unordered_store_either_way_round() {
        let mut first = AtomicAccesses::default();
        assert!(first.record(access(A, true), &clock(1, 0)).is_none());
        assert!(first.record(access(B, false), &clock(0, 1)).is_some());

        let mut second = AtomicAccesses::default();
        assert!(second.record(access(B, false), &clock(0, 1)).is_none());
        assert!(second.record(access(A, true), &clock(1, 0)).is_some());
    }

    #[test]
    fn ordered_accesses_and_atomic_writes_among_themselves_do_not_race() {
        let mut accesses = AtomicAccesses::default();
        assert!(accesses.record(access(A, true), &clock(1, 0)).is_none());
        assert!(accesses.record(access(B, true), &clock(0, 1)).is_none());
        // B saw A's write (epoch 1) and its own: no race.
        assert!(accesses.record(access(B, false), &clock(1, 1)).is_none());
        // A did not see B's write.
        assert!(accesses.record(access(A, false), &clock(1, 0)).is_some());
    }
}

//! `Arc`s: the `Arc`s an execution created (`shim/arc.rs`), the
//! happens-before their reference counts give (std's last drop comes after
//! every other), and the check at the execution's normal end that none is
//! still alive (a reference cycle, a forgotten `Arc`, a `static` keeping
//! one).

use std::panic::Location;

use super::action::ThreadIdx;
use super::clock::VectorClock;
use super::execution::Execution;
use super::scheduler::Fault;

/// Whether a tracked `Arc` allocation still has a strong owner
/// (implemented in `shim/arc.rs`).
pub(crate) trait Alive {
    fn alive(&self) -> bool {
        self.strong() > 0
    }
    /// Its strong count.
    fn strong(&self) -> usize;
    /// The allocation it watches (its value's address).
    fn allocation(&self) -> *const ();
}

/// An `Arc` allocation made in the execution.
pub(super) struct TrackedArc {
    probe: Box<dyn Alive>,
    thread: ThreadIdx,
    location: &'static Location<'static>,
    /// Its strong count when last looked at.
    strong: usize,
    /// What the threads that dropped a strong reference had done by then:
    /// std's drop decrements with `Release`, and the last one acquires
    /// them all before it drops the value.
    released: VectorClock,
}

impl Execution {
    /// Gives the current thread the happens-before of the `Arc` drops it
    /// made since its last operation or cell access (called at both). Only
    /// the running thread changes counts in between, so a count that fell
    /// is its drops: a release of what it has done (it moves on to a new
    /// epoch, so what it does next is not released). One that reached zero
    /// is also the last drop, which acquires every release (as std's
    /// `Acquire` fence does before the value's `Drop` runs; `try_unwrap`
    /// and `into_inner` the same).
    pub(super) fn arc_drops(&mut self) {
        let t = self.current;
        let Some(Some(thread)) = self.threads.get_mut(t.index()) else {
            return;
        };
        let mut released = false;
        // Only the `Arc`s still owned are looked at (an operation's cost must
        // not grow with the `Arc`s dropped before).
        let mut i = 0;
        while let Some(&index) = self.live_arcs.get(i) {
            let arc = &mut self.arcs[index];
            let strong = arc.probe.strong();
            if strong < arc.strong {
                arc.released.join(&thread.hb.clock);
                released = true;
                if strong == 0 {
                    thread.hb.acquire(&arc.released);
                }
            }
            arc.strong = strong;
            if strong == 0 {
                self.live_arcs.swap_remove(i);
            } else {
                i += 1;
            }
        }
        if released {
            thread.hb.tick(t);
        }
    }

    /// How many of this execution's leak probes watch the `Arc` allocation
    /// of the value at `value`: each holds a `Weak` to it, which std's
    /// `get_mut` and `weak_count` see (`shim/arc.rs` discounts them).
    pub(crate) fn arc_probes(&self, value: *const ()) -> usize {
        self.arcs
            .iter()
            .filter(|arc| arc.probe.allocation() == value)
            .count()
    }

    /// The values of the `Arc`s this execution tracks: their allocations
    /// stay allocated until the execution ends, held by kase's probes.
    pub(super) fn tracked_arc_values(&self) -> impl Iterator<Item = usize> + '_ {
        self.arcs.iter().map(|arc| arc.probe.allocation() as usize)
    }

    /// Remembers an `Arc` the current thread created (not during teardown:
    /// an execution that is being unwound has already ended).
    pub(crate) fn track_arc(
        &mut self,
        probe: Box<dyn Alive>,
        location: &'static Location<'static>,
    ) {
        if !self.teardown {
            let thread = self.current;
            let strong = probe.strong();
            self.live_arcs.push(self.arcs.len());
            self.arcs.push(TrackedArc {
                probe,
                thread,
                location,
                strong,
                released: VectorClock::new(),
            });
        }
    }

    /// At the normal end of an execution (every thread finished): the
    /// tracked `Arc`s that still have a strong owner are leaked.
    pub(super) fn check_arcs(&mut self) {
        let leaked: Vec<_> = self
            .arcs
            .iter()
            .filter(|a| a.probe.alive())
            .map(|a| (a.thread, a.location))
            .collect();
        if !leaked.is_empty() {
            self.fault = Some(Fault::LeakedArcs { arcs: leaked });
        }
    }
}

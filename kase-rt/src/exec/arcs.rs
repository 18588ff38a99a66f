//! `Arc` leaks: the `Arc`s an execution created (`shim/arc.rs`), and the
//! check at its normal end that none is still alive (a reference cycle, a
//! forgotten `Arc`, a `static` keeping one).

use std::panic::Location;

use super::action::ThreadIdx;
use super::execution::Execution;
use super::scheduler::Fault;

/// Whether a tracked `Arc` allocation still has a strong owner
/// (implemented in `shim/arc.rs`).
pub(crate) trait Alive {
    fn alive(&self) -> bool;
    /// The allocation it watches (its value's address).
    fn allocation(&self) -> *const ();
}

/// An `Arc` allocation made in the execution.
pub(super) struct TrackedArc {
    probe: Box<dyn Alive>,
    thread: ThreadIdx,
    location: &'static Location<'static>,
}

impl Execution {
    /// Remembers an `Arc` the current thread created (not during teardown:
    /// an execution that is being unwound has already ended).
    /// How many of this execution's leak probes watch the `Arc` allocation
    /// of the value at `value`: each holds a `Weak` to it, which std's
    /// `get_mut` and `weak_count` see (`shim/arc.rs` discounts them).
    pub(crate) fn arc_probes(&self, value: *const ()) -> usize {
        self.arcs
            .iter()
            .filter(|arc| arc.probe.allocation() == value)
            .count()
    }

    pub(crate) fn track_arc(
        &mut self,
        probe: Box<dyn Alive>,
        location: &'static Location<'static>,
    ) {
        if !self.teardown {
            let thread = self.current;
            self.arcs.push(TrackedArc {
                probe,
                thread,
                location,
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

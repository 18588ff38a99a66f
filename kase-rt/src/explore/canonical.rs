//! The RC11 reduction: of all interleavings that build one execution graph,
//! explore only its *canonical* one, so each consistent graph is reached by
//! exactly one execution (the others end early as redundant).
//!
//! A graph's events depend on their program-order predecessor, a read on
//! the store it reads, and an operation on a lock, thread or other shim
//! object on the object's previous operation. The canonical interleaving
//! adds, at each step, the event of the lowest thread whose dependencies
//! are all added. So an interleaving is canonical iff every time it runs a
//! thread `u` while a lower thread `t` could run, `t`'s pending event
//! depends on something added later: it reads a store, or follows an
//! object operation, from that step on. Stores, fences, spawns and plain
//! yields depend on nothing later (a store may take any place in the
//! modification order whenever it runs): they are never passed over.
//!
//! Each pass-over leaves a *mark* on `t` (the index the next event gets);
//! when `t` runs, its event must read a store or follow an object operation
//! at or after its mark, or the execution is redundant. The exhaustive
//! enumeration (`Strategy::Exhaustive` under RC11) is the oracle this is
//! checked against: same outcomes, same graphs, one execution per graph.

use std::collections::HashMap;

use crate::exec::{ChoicePoint, Execution, ObjectIdx, ObjectKind, OpKind, ThreadIdx};

/// The marks of one execution.
#[derive(Debug, Default)]
pub(crate) struct Canonical {
    /// Per thread: the first event index its pending event may depend on,
    /// if it was passed over.
    marks: Vec<Option<usize>>,
    /// The mark of the thread that runs now, for its atomic access's choice
    /// of store.
    due: Option<usize>,
    /// Each object's latest operation (event index), over the events
    /// scanned so far (kept as the execution grows, not searched for).
    last_operation: HashMap<ObjectIdx, usize>,
    /// Events of the current execution scanned into `last_operation`.
    scanned: usize,
}

impl Canonical {
    /// Forgets the marks, for the next execution.
    pub(crate) fn reset(&mut self) {
        self.marks.clear();
        self.due = None;
        self.last_operation.clear();
        self.scanned = 0;
    }

    fn mark(&self, t: ThreadIdx) -> Option<usize> {
        self.marks.get(t.index()).copied().flatten()
    }

    /// The threads that may run at `point`: in ascending order, up to the
    /// first one that may not be passed over; a thread whose event cannot
    /// honour its mark (its object had no operation since) is left out.
    pub(crate) fn options(&mut self, point: &ChoicePoint<'_>) -> Vec<ThreadIdx> {
        let exec = point.execution;
        let events = exec.events();
        for (i, e) in events.iter().enumerate().skip(self.scanned) {
            if let Some(object) = e.action.object {
                self.last_operation.insert(object, i);
            }
        }
        self.scanned = events.len();
        let mut options = Vec::new();
        for &t in point.enabled {
            if self.honoured(exec, t) {
                options.push(t);
            }
            if !may_pass_over(exec, t) {
                break;
            }
        }
        options
    }

    /// Records that `chosen` runs at `point`: every lower thread that could
    /// run is passed over.
    pub(crate) fn chose(&mut self, point: &ChoicePoint<'_>, chosen: ThreadIdx) {
        let next_event = point.execution.events().len();
        for &t in point.enabled.iter().filter(|&&t| t < chosen) {
            if self.marks.len() <= t.index() {
                self.marks.resize(t.index() + 1, None);
            }
            self.marks[t.index()] = Some(next_event);
        }
        self.due = self.marks.get_mut(chosen.index()).and_then(Option::take);
    }

    /// Of an atomic access's options (`sources`, as `WeakPoint` gives them),
    /// those that honour the running thread's mark.
    pub(crate) fn weak_options(&mut self, sources: &[usize]) -> Vec<usize> {
        let due = self.due.take();
        (0..sources.len())
            .filter(|&k| match due {
                None => true,
                Some(mark) => sources[k] == usize::MAX || sources[k] > mark,
            })
            .collect()
    }

    /// Whether `t`'s pending event can honour its mark now. An atomic
    /// access is checked when it chooses its store.
    fn honoured(&self, exec: &Execution, t: ThreadIdx) -> bool {
        let Some(mark) = self.mark(t) else {
            return true;
        };
        let Some(action) = exec.pending(t) else {
            return false;
        };
        if action.kind.is_atomic_access() {
            return true;
        }
        let Some(object) = action.object else {
            return false;
        };
        self.last_operation
            .get(&object)
            .is_some_and(|&last| last >= mark)
    }
}

/// Whether `t`'s pending event may depend on something added later.
fn may_pass_over(exec: &Execution, t: ThreadIdx) -> bool {
    let Some(action) = exec.pending(t) else {
        return false;
    };
    match action.kind {
        OpKind::Load | OpKind::Rmw | OpKind::CompareExchange => true,
        OpKind::Store | OpKind::Fence | OpKind::Spawn | OpKind::Exit => false,
        OpKind::Yield => action.object.is_some(),
        _ => action
            .object
            .is_some_and(|o| exec.object_kind(o) != ObjectKind::Atomic),
    }
}

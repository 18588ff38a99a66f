//! An execution graph: events with their thread, access and ordering, the
//! reads-from choice of every read, a modification order per location, and
//! the synchronises-with edges of the non-atomic shims.

use std::sync::atomic::Ordering;

/// An execution graph (WEAK-MEMORY.md): events in the order they were added;
/// program order is "same thread, earlier index".
#[derive(Clone, Debug, Default)]
pub(crate) struct Graph {
    /// The events, in the order they were added.
    pub events: Vec<Node>,
    /// Per location (indexed by location id): its writes (Write and Rmw
    /// events) in modification order, as indices into `events`. The initial
    /// value is implicit and precedes them all.
    pub mo: Vec<Vec<usize>>,
    /// Synchronises-with edges that are not atomics' (spawn -> child's first
    /// event, child's last -> join, unlock -> next lock, ...): (from, to)
    /// event indices.
    pub sw: Vec<(usize, usize)>,
}

/// One event of a [`Graph`].
#[derive(Clone, Debug)]
pub(crate) struct Node {
    /// The thread that performed it.
    pub thread: u32,
    /// What it did.
    pub access: Access,
    /// The ordering (for an Rmw: its success ordering; a failed
    /// compare-exchange is a Read with its failure ordering). `Relaxed` for
    /// `Other`.
    pub order: Ordering,
}

/// What an event does to memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Access {
    /// A load (or failed compare-exchange); `rf`: the write it read (index
    /// into events), None = the initial value.
    Read { location: u32, rf: Option<usize> },
    /// A store.
    Write { location: u32 },
    /// A read-modify-write: reads `rf` and writes, as one event.
    Rmw { location: u32, rf: Option<usize> },
    /// A fence.
    Fence,
    /// Any other event (lock, spawn, ...): ordered only by program order and
    /// `sw`.
    Other,
}

impl Access {
    /// The location a read, write or RMW accesses; None for fences and others.
    pub(crate) fn location(self) -> Option<u32> {
        match self {
            Access::Read { location, .. }
            | Access::Write { location }
            | Access::Rmw { location, .. } => Some(location),
            Access::Fence | Access::Other => None,
        }
    }

    /// The write a read or RMW read from: `Some(None)` for the initial value,
    /// None if this is not a read at all.
    pub(crate) fn reads_from(self) -> Option<Option<usize>> {
        match self {
            Access::Read { rf, .. } | Access::Rmw { rf, .. } => Some(rf),
            _ => None,
        }
    }

    /// Whether this reads memory (a load or an RMW).
    pub(crate) fn is_read(self) -> bool {
        self.reads_from().is_some()
    }

    /// Whether this writes memory (a store or an RMW).
    pub(crate) fn is_write(self) -> bool {
        matches!(self, Access::Write { .. } | Access::Rmw { .. })
    }
}

impl Node {
    /// Release or stronger: the start of a synchronises-with edge.
    pub(crate) fn is_release(&self) -> bool {
        matches!(
            self.order,
            Ordering::Release | Ordering::AcqRel | Ordering::SeqCst
        )
    }

    /// Acquire or stronger: the end of a synchronises-with edge.
    pub(crate) fn is_acquire(&self) -> bool {
        matches!(
            self.order,
            Ordering::Acquire | Ordering::AcqRel | Ordering::SeqCst
        )
    }

    /// A SeqCst read, write or RMW (RC11's `E^sc`).
    pub(crate) fn is_sc_access(&self) -> bool {
        self.order == Ordering::SeqCst && self.access.location().is_some()
    }

    /// A SeqCst fence (RC11's `F^sc`).
    pub(crate) fn is_sc_fence(&self) -> bool {
        self.order == Ordering::SeqCst && self.access == Access::Fence
    }
}

impl Graph {
    /// Whether `a` is program-ordered before `b`: same thread, added earlier.
    pub(crate) fn po(&self, a: usize, b: usize) -> bool {
        a < b && self.events[a].thread == self.events[b].thread
    }

    /// The modification order of `location` (empty if it has no writes).
    pub(crate) fn mo_of(&self, location: u32) -> &[usize] {
        self.mo.get(location as usize).map_or(&[], Vec::as_slice)
    }

    /// Why the graph is malformed, if it is: every read reads a write of its
    /// own location, every location's `mo` lists exactly its writes once, and
    /// `sw` names existing events. The checker assumes all of this.
    pub(crate) fn malformation(&self) -> Option<String> {
        let n = self.events.len();
        let mut in_mo = vec![false; n];
        for (location, writes) in self.mo.iter().enumerate() {
            for &w in writes {
                let Some(node) = self.events.get(w) else {
                    return Some(format!("mo of {location} names missing event {w}"));
                };
                if !node.access.is_write() || node.access.location() != Some(location as u32) {
                    return Some(format!("mo of {location} holds {w}, not a write of it"));
                }
                if std::mem::replace(&mut in_mo[w], true) {
                    return Some(format!("mo of {location} holds {w} twice"));
                }
            }
        }
        for (e, node) in self.events.iter().enumerate() {
            if node.access.is_write() && !in_mo[e] {
                return Some(format!("write {e} is in no mo"));
            }
            if let Some(Some(w)) = node.access.reads_from() {
                let ok = self.events.get(w).is_some_and(|written| {
                    written.access.is_write() && written.access.location() == node.access.location()
                });
                if !ok || w == e {
                    return Some(format!(
                        "read {e} reads {w}, not another write of its location"
                    ));
                }
            }
        }
        self.sw
            .iter()
            .find(|&&(a, b)| a >= n || b >= n)
            .map(|(a, b)| format!("sw edge {a} -> {b} names a missing event"))
    }
}

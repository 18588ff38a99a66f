//! What the revisit explorer tells an execution to rebuild: an execution
//! graph as the steps that add its events, in the order they were added.

use crate::exec::ThreadIdx;

/// An event's name across executions: its thread, and how many events that
/// thread had before it. Event indices are not stable (a revisited read
/// runs later than it was added), these are.
pub(super) type Key = (ThreadIdx, u32);

/// One event of a planned graph.
#[derive(Clone, Debug)]
pub(super) struct Step {
    pub key: Key,
    /// A read (or read-modify-write, or compare-exchange): the store it
    /// reads, `None` for the location's initial value.
    pub reads: Option<Option<Key>>,
    /// A store or read-modify-write: its position among its location's
    /// stores in modification order (a store goes right after the planned
    /// store with the highest lower rank that ran before it).
    pub rank: Option<u32>,
    /// It was added as the exploration adds an event by default: a read
    /// reading the latest store, a store going latest (a backward revisit
    /// may delete only such events).
    pub maximal: bool,
}

/// A graph to rebuild, then extend.
#[derive(Clone, Debug, Default)]
pub(super) struct Plan {
    /// Its events, in the order they were added.
    pub steps: Vec<Step>,
    /// Steps whose store this execution adds anew, so computes its
    /// backward revisits: a store the plan places elsewhere than latest, a
    /// read-modify-write that reads another store than it did.
    pub revisits_of: Vec<usize>,
}

/// The ways a new atomic access could have gone, as the executor offered
/// them (`WeakPoint`); option 0 was taken.
#[derive(Clone, Debug)]
pub(super) struct Offered {
    pub sources: Vec<usize>,
    pub after: Vec<usize>,
}

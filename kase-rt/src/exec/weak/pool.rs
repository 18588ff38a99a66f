//! Buffers of finished executions' RC11 state, kept for the next
//! execution to grow into instead of allocating them again: a loom
//! model's execution grows its graph, its node facts and one list per
//! location and thread from nothing (4 % of concurrent-queue's spsc
//! model's instructions went to growing them).

use super::graph::{Graph, Node};
use super::memory::{AtomicIntent, Located, NodeFacts, WeakSummary};
use crate::exec::action::{ObjectIdx, ThreadIdx};
use crate::exec::cleared;

/// The pool, shared by an exploration's executions.
#[derive(Clone, Debug, Default)]
pub(crate) struct GraphPool(std::rc::Rc<std::cell::RefCell<Spare>>);

/// The buffers one execution's RC11 state grows, every one emptied
/// (`WeakMemory` takes them when it starts and gives back what its
/// summary does not carry when it ends).
#[derive(Debug, Default)]
pub(super) struct Spare {
    pub(super) locations: Vec<Option<Located>>,
    pub(super) events: Vec<Node>,
    pub(super) mo: Vec<Vec<usize>>,
    pub(super) sw: Vec<(usize, usize)>,
    pub(super) node_facts: Vec<NodeFacts>,
    pub(super) initial: Vec<u64>,
    pub(super) thread_nodes: Vec<Vec<(u32, usize)>>,
    pub(super) intents: Vec<Option<AtomicIntent>>,
    pub(super) last_read: crate::fast_hash::Map<(ThreadIdx, ObjectIdx), usize>,
    pub(super) rf: Vec<(usize, Option<usize>)>,
    /// Emptied inner lists of modification orders and thread nodes.
    pub(super) lists: Vec<Vec<usize>>,
    pub(super) node_lists: Vec<Vec<(u32, usize)>>,
}

/// Lists a `GraphPool` keeps at most of each kind.
const MAX_POOLED_LISTS: usize = 1024;

/// Keeps `list`, emptied, among `lists` (up to `MAX_POOLED_LISTS`).
fn keep<T>(lists: &mut Vec<Vec<T>>, mut list: Vec<T>) {
    if lists.len() < MAX_POOLED_LISTS {
        list.clear();
        lists.push(list);
    }
}

/// Keeps every list of `more` among `lists`: `more` itself (its lists
/// emptied) when `lists` has none, so that the list of lists does not
/// grow anew after every execution.
fn keep_all<T>(lists: &mut Vec<Vec<T>>, mut more: Vec<Vec<T>>) {
    if lists.is_empty() {
        more.truncate(MAX_POOLED_LISTS);
        more.iter_mut().for_each(Vec::clear);
        *lists = more;
    } else {
        for list in more {
            keep(lists, list);
        }
    }
}

impl GraphPool {
    /// A finished execution's summary, its buffers kept for the next one.
    pub(crate) fn give(&self, summary: WeakSummary) {
        let mut spare = self.0.borrow_mut();
        let WeakSummary {
            rf,
            mo,
            graph,
            initial,
            nodes,
        } = summary;
        let Graph {
            events,
            mo: mut graph_mo,
            sw,
        } = graph;
        keep_all(&mut spare.lists, mo);
        for list in graph_mo.drain(..) {
            keep(&mut spare.lists, list);
        }
        spare.rf = cleared(rf);
        spare.initial = cleared(initial);
        spare.node_facts = cleared(nodes);
        spare.events = cleared(events);
        spare.mo = graph_mo;
        spare.sw = cleared(sw);
    }

    /// Everything kept so far, for a new execution.
    pub(super) fn take(&self) -> Spare {
        std::mem::take(&mut *self.0.borrow_mut())
    }

    /// Keeps an ending execution's buffers that its summary does not carry
    /// (`locations` is drained already: its histories have their own pool).
    pub(super) fn give_state(
        &self,
        locations: Vec<Option<Located>>,
        mut thread_nodes: Vec<Vec<(u32, usize)>>,
        intents: Vec<Option<AtomicIntent>>,
        mut last_read: crate::fast_hash::Map<(ThreadIdx, ObjectIdx), usize>,
        lists: Vec<Vec<usize>>,
        node_lists: Vec<Vec<(u32, usize)>>,
    ) {
        debug_assert!(locations.is_empty());
        let mut spare = self.0.borrow_mut();
        keep_all(&mut spare.node_lists, node_lists);
        for list in thread_nodes.drain(..) {
            keep(&mut spare.node_lists, list);
        }
        keep_all(&mut spare.lists, lists);
        last_read.clear();
        spare.locations = locations;
        spare.thread_nodes = thread_nodes;
        spare.intents = cleared(intents);
        spare.last_read = last_read;
    }
}

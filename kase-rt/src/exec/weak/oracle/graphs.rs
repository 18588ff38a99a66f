//! The naive graph oracle: every consistent execution graph of a program,
//! by enumeration. For a straight-line program the events and program
//! order do not depend on the interleaving, so "every interleaving × rf ×
//! mo" is every rf × mo over one skeleton; a compare-exchange's success is
//! guessed (a write in mo, or a read) and kept only if the value it reads
//! agrees with the guess.
//!
//! Two shortcuts, both forced by RC11 rather than chosen: an RMW reads its
//! immediate mo-predecessor (atomicity), and the main thread's final loads,
//! which every write happens before, read the mo-last write (coherence).
//! Everything else is left to `consistency::check`.

use std::collections::BTreeSet;
use std::sync::atomic::Ordering::Relaxed;

use super::{Op, Program};
use crate::exec::weak::consistency::check;
use crate::exec::weak::graph::{Access, Graph, Node};

/// What the oracle finds: every outcome and the number of consistent graphs.
#[derive(Debug, Default)]
pub(super) struct Graphs {
    pub outcomes: BTreeSet<Vec<u64>>,
    pub count: usize,
}

/// The event layout of a program: main (thread 0) spawns its threads, they
/// run, main joins them and loads every location.
struct Skeleton<'p> {
    program: &'p Program,
    /// Event index of every operation, `[thread][op]`.
    event: Vec<Vec<usize>>,
    /// Index of the first join, and of the first final load.
    joins: usize,
    finals: usize,
}

impl<'p> Skeleton<'p> {
    fn new(program: &'p Program) -> Self {
        let n = program.threads.len();
        let mut next = n;
        let event = program
            .threads
            .iter()
            .map(|ops| {
                let first = next;
                next += ops.len();
                (first..next).collect()
            })
            .collect();
        Skeleton {
            program,
            event,
            joins: next,
            finals: next + n,
        }
    }

    /// The operations with their thread (1-based, main is 0) and event.
    fn ops(&self) -> impl Iterator<Item = (u32, usize, Op)> + '_ {
        self.program
            .threads
            .iter()
            .enumerate()
            .flat_map(move |(t, ops)| {
                ops.iter()
                    .enumerate()
                    .map(move |(i, &op)| (t as u32 + 1, self.event[t][i], op))
            })
    }
}

/// Every consistent graph of `program`: its outcomes and how many.
pub(super) fn consistent_graphs(program: &Program) -> Graphs {
    let skeleton = Skeleton::new(program);
    let cases: Vec<usize> = skeleton
        .ops()
        .filter(|(.., op)| matches!(op, Op::Cas { .. }))
        .map(|(_, e, _)| e)
        .collect();
    let mut found = Graphs::default();
    for guess in 0..1u32 << cases.len() {
        let succeeds = |e: usize| {
            cases
                .iter()
                .position(|&c| c == e)
                .is_some_and(|i| guess >> i & 1 == 1)
        };
        with_mo(&skeleton, &succeeds, &mut found);
    }
    found
}

/// Every mo (a permutation of each location's writes), then every rf.
fn with_mo(skeleton: &Skeleton<'_>, succeeds: &dyn Fn(usize) -> bool, found: &mut Graphs) {
    let program = skeleton.program;
    let writes: Vec<Vec<usize>> = (0..program.locations)
        .map(|l| {
            skeleton
                .ops()
                .filter(|&(_, e, op)| {
                    op.location() == Some(l)
                        && op.may_write()
                        && (!matches!(op, Op::Cas { .. }) || succeeds(e))
                })
                .map(|(_, e, _)| e)
                .collect()
        })
        .collect();
    let orders: Vec<Vec<Vec<usize>>> = writes.iter().map(|w| permutations(w)).collect();
    let mut choice = vec![0; orders.len()];
    loop {
        let mo: Vec<Vec<usize>> = choice
            .iter()
            .zip(&orders)
            .map(|(&c, o)| o[c].clone())
            .collect();
        with_rf(skeleton, succeeds, mo, found);
        if !advance(&mut choice, |i| orders[i].len()) {
            return;
        }
    }
}

/// Every rf of the plain reads (loads, failed compare-exchanges) under `mo`.
fn with_rf(
    skeleton: &Skeleton<'_>,
    succeeds: &dyn Fn(usize) -> bool,
    mo: Vec<Vec<usize>>,
    found: &mut Graphs,
) {
    let program = skeleton.program;
    let n = program.threads.len();
    let mut graph = Graph {
        events: Vec::new(),
        mo,
        sw: Vec::new(),
    };
    let other = |thread| Node {
        thread,
        access: Access::Other,
        order: Relaxed,
    };
    graph.events.extend((0..n).map(|_| other(0)));
    // The reads with a free choice: (event, the writes it may read).
    let mut free: Vec<(usize, Vec<Option<usize>>)> = Vec::new();
    for (thread, e, op) in skeleton.ops() {
        let location = op.location().unwrap_or(0);
        let before = |g: &Graph| {
            let w = g.mo_of(location);
            w.iter()
                .position(|&x| x == e)
                .and_then(|i| i.checked_sub(1).map(|p| w[p]))
        };
        let (access, order) = match op {
            Op::Load { order, .. } => (Access::Read { location, rf: None }, order),
            Op::Store { order, .. } => (Access::Write { location }, order),
            Op::FetchAdd { order, .. } | Op::Swap { order, .. } => (
                Access::Rmw {
                    location,
                    rf: before(&graph),
                },
                order,
            ),
            Op::Cas { success, .. } if succeeds(e) => (
                Access::Rmw {
                    location,
                    rf: before(&graph),
                },
                success,
            ),
            Op::Cas { failure, .. } => (Access::Read { location, rf: None }, failure),
            Op::Fence { order } => (Access::Fence, order),
        };
        if matches!(access, Access::Read { .. }) {
            let mut sources = vec![None];
            sources.extend(graph.mo_of(location).iter().map(|&w| Some(w)));
            free.push((e, sources));
        }
        graph.events.push(Node {
            thread,
            access,
            order,
        });
    }
    graph.events.extend((1..=n as u32).map(other));
    for l in 0..program.locations {
        let rf = graph.mo_of(l).last().copied();
        graph.events.push(Node {
            thread: 0,
            access: Access::Read { location: l, rf },
            order: Relaxed,
        });
    }
    // spawn -> the child's first event, the child's last -> its join.
    for t in 0..n {
        let events = &skeleton.event[t];
        graph.sw.push((t, events[0]));
        graph.sw.push((*events.last().unwrap(), skeleton.joins + t));
    }
    debug_assert_eq!(
        skeleton.finals + program.locations as usize,
        graph.events.len()
    );
    let mut choice = vec![0; free.len()];
    loop {
        for (&(r, ref sources), &c) in free.iter().zip(&choice) {
            if let Access::Read { rf, .. } = &mut graph.events[r].access {
                *rf = sources[c];
            }
        }
        if let Some(outcome) = outcome(skeleton, &graph, succeeds) {
            if check(&graph).is_ok() {
                found.count += 1;
                found.outcomes.insert(outcome);
            }
        }
        if !advance(&mut choice, |i| free[i].1.len()) {
            return;
        }
    }
}

/// The graph's outcome, or None if a compare-exchange's guessed success
/// disagrees with the value it read. Values follow each location's mo, in
/// which every RMW reads its predecessor.
fn outcome(
    skeleton: &Skeleton<'_>,
    graph: &Graph,
    succeeds: &dyn Fn(usize) -> bool,
) -> Option<Vec<u64>> {
    let mut written = vec![0u64; graph.events.len()];
    let op_of: std::collections::HashMap<usize, Op> =
        skeleton.ops().map(|(_, e, op)| (e, op)).collect();
    for writes in &graph.mo {
        let mut last = 0u64;
        for &w in writes {
            last = match op_of[&w] {
                Op::FetchAdd { value, .. } => last.wrapping_add(value),
                Op::Store { value, .. } | Op::Swap { value, .. } | Op::Cas { value, .. } => value,
                _ => unreachable!("only writes are in mo"),
            };
            written[w] = last;
        }
    }
    let read = |e: usize| match graph.events[e].access.reads_from() {
        Some(Some(w)) => written[w],
        _ => 0,
    };
    let mut values = Vec::new();
    for (_, e, op) in skeleton.ops() {
        if let Op::Cas { expected, .. } = op {
            if (read(e) == expected) != succeeds(e) {
                return None;
            }
        }
        if op.reads() {
            values.push(read(e));
        }
    }
    values.extend((skeleton.finals..graph.events.len()).map(read));
    Some(values)
}

/// Advances a mixed-radix counter; false once it wraps around.
fn advance(digits: &mut [usize], radix: impl Fn(usize) -> usize) -> bool {
    for (i, d) in digits.iter_mut().enumerate() {
        *d += 1;
        if *d < radix(i) {
            return true;
        }
        *d = 0;
    }
    false
}

/// Every order of `items` (also the consistency tests' enumeration).
pub(crate) fn permutations(items: &[usize]) -> Vec<Vec<usize>> {
    if items.is_empty() {
        return vec![Vec::new()];
    }
    let mut all = Vec::new();
    for (i, &first) in items.iter().enumerate() {
        let mut rest = items.to_vec();
        rest.remove(i);
        for mut tail in permutations(&rest) {
            tail.insert(0, first);
            all.push(tail);
        }
    }
    all
}

/// An upper bound on the graphs the oracle enumerates (to keep generated
/// programs small enough to check quickly).
pub(super) fn candidates(program: &Program) -> u64 {
    let mut total = 1u64
        << program
            .threads
            .iter()
            .flatten()
            .filter(|op| matches!(op, Op::Cas { .. }))
            .count();
    for l in 0..program.locations {
        let ops = program
            .threads
            .iter()
            .flatten()
            .filter(|op| op.location() == Some(l));
        let writes = ops.clone().filter(|op| op.may_write()).count() as u64;
        let reads = ops
            .filter(|op| matches!(op, Op::Load { .. } | Op::Cas { .. }))
            .count() as u32;
        total = total
            .saturating_mul((1..=writes).product())
            .saturating_mul((writes + 1).saturating_pow(reads));
    }
    total
}

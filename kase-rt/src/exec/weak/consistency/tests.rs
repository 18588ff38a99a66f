//! Litmus tests as hand-built graphs, with the verdicts RC11 gives them.

use std::sync::atomic::Ordering::{self, AcqRel, Acquire, Relaxed, Release, SeqCst};

use super::{check, seq_cst_consistent, HappensBefore, Violation};
use crate::exec::weak::graph::{Access, Graph, Node};

const X: u32 = 0;
const Y: u32 = 1;

/// Builds a graph event by event; writes go mo-last unless `mo` reorders.
#[derive(Default)]
struct Builder {
    graph: Graph,
}

impl Builder {
    fn push(&mut self, thread: u32, access: Access, order: Ordering) -> usize {
        let e = self.graph.events.len();
        if let (true, Some(location)) = (access.is_write(), access.location()) {
            let location = location as usize;
            if self.graph.mo.len() <= location {
                self.graph.mo.resize(location + 1, Vec::new());
            }
            self.graph.mo[location].push(e);
        }
        self.graph.events.push(Node {
            thread,
            access,
            order,
        });
        e
    }

    /// A load reading `rf` (an event index, possibly of a later event; None:
    /// the initial value).
    fn read(&mut self, thread: u32, location: u32, rf: Option<usize>, order: Ordering) -> usize {
        self.push(thread, Access::Read { location, rf }, order)
    }

    fn write(&mut self, thread: u32, location: u32, order: Ordering) -> usize {
        self.push(thread, Access::Write { location }, order)
    }

    fn rmw(&mut self, thread: u32, location: u32, rf: Option<usize>, order: Ordering) -> usize {
        self.push(thread, Access::Rmw { location, rf }, order)
    }

    fn fence(&mut self, thread: u32, order: Ordering) -> usize {
        self.push(thread, Access::Fence, order)
    }

    fn other(&mut self, thread: u32) -> usize {
        self.push(thread, Access::Other, Relaxed)
    }

    /// Sets the modification order of `location`.
    fn mo(&mut self, location: u32, order: &[usize]) -> &mut Self {
        self.graph.mo[location as usize] = order.to_vec();
        self
    }

    fn sw(&mut self, from: usize, to: usize) -> &mut Self {
        self.graph.sw.push((from, to));
        self
    }

    fn check(&self) -> Result<(), Violation> {
        assert_eq!(self.graph.malformation(), None);
        let verdict = check(&self.graph);
        // The SC axiom alone agrees with the full check wherever it decides.
        if verdict == Err(Violation::SeqCst) || verdict.is_ok() {
            assert_eq!(seq_cst_consistent(&self.graph), verdict.is_ok());
        }
        verdict
    }
}

/// SB: `x = 1; r1 = y ‖ y = 1; r2 = x`, r1 reading `r1` (None: initial, else
/// the other thread's store) and r2 reading `r2`.
fn sb(store: Ordering, load: Ordering, r1_sees_store: bool, r2_sees_store: bool) -> Builder {
    let mut b = Builder::default();
    b.write(0, X, store); // 0
    b.read(0, Y, r1_sees_store.then_some(2), load); // 1
    b.write(1, Y, store); // 2
    b.read(1, X, r2_sees_store.then_some(0), load); // 3
    b
}

#[test]
fn sb_both_initial_is_allowed_unless_seq_cst() {
    assert_eq!(sb(Relaxed, Relaxed, false, false).check(), Ok(()));
    assert_eq!(sb(Release, Acquire, false, false).check(), Ok(()));
    assert_eq!(
        sb(SeqCst, SeqCst, false, false).check(),
        Err(Violation::SeqCst)
    );
    assert_eq!(sb(SeqCst, SeqCst, true, false).check(), Ok(()));
    assert_eq!(sb(SeqCst, SeqCst, false, true).check(), Ok(()));
}

#[test]
fn sb_exhaustive_counts() {
    let count = |store, load| {
        [(false, false), (false, true), (true, false), (true, true)]
            .into_iter()
            .filter(|&(r1, r2)| sb(store, load, r1, r2).check().is_ok())
            .count()
    };
    assert_eq!(count(SeqCst, SeqCst), 3);
    assert_eq!(count(Release, Acquire), 4);
    assert_eq!(count(Relaxed, Relaxed), 4);
}

/// SB with `Relaxed` accesses and a fence of `order` between them.
fn sb_fenced(order: Ordering, r1_sees_store: bool) -> Builder {
    let mut b = Builder::default();
    b.write(0, X, Relaxed); // 0
    b.fence(0, order); // 1
    b.read(0, Y, r1_sees_store.then_some(3), Relaxed); // 2
    b.write(1, Y, Relaxed); // 3
    b.fence(1, order); // 4
    b.read(1, X, None, Relaxed); // 5
    b
}

#[test]
fn sb_with_seq_cst_fences() {
    assert_eq!(sb_fenced(SeqCst, false).check(), Err(Violation::SeqCst));
    assert_eq!(sb_fenced(SeqCst, true).check(), Ok(()));
    // AcqRel fences synchronise nothing here: no read sees the other side.
    assert_eq!(sb_fenced(AcqRel, false).check(), Ok(()));
}

#[test]
fn sb_with_one_fence_and_seq_cst_accesses_on_the_other_side() {
    let mut b = Builder::default();
    b.write(0, X, Relaxed); // 0
    b.fence(0, SeqCst); // 1
    b.read(0, Y, None, Relaxed); // 2
    b.write(1, Y, SeqCst); // 3
    b.read(1, X, None, SeqCst); // 4
    assert_eq!(b.check(), Err(Violation::SeqCst));
}

/// MP: `data = 1; flag = 1 ‖ flag == 1; data == 0`.
fn mp(store: Ordering, load: Ordering) -> Builder {
    let mut b = Builder::default();
    b.write(0, X, Relaxed); // 0: data
    b.write(0, Y, store); // 1: flag
    b.read(1, Y, Some(1), load); // 2
    b.read(1, X, None, Relaxed); // 3: stale data
    b
}

#[test]
fn mp_stale_data_is_incoherent_only_when_synchronised() {
    assert_eq!(mp(Release, Acquire).check(), Err(Violation::Coherence));
    assert_eq!(mp(SeqCst, SeqCst).check(), Err(Violation::Coherence));
    assert_eq!(mp(Relaxed, Relaxed).check(), Ok(()));
    assert_eq!(mp(Release, Relaxed).check(), Ok(()));
    assert_eq!(mp(Relaxed, Acquire).check(), Ok(()));
}

#[test]
fn mp_through_fences() {
    let mut b = Builder::default();
    b.write(0, X, Relaxed); // 0: data
    b.fence(0, Release); // 1
    b.write(0, Y, Relaxed); // 2: flag
    b.read(1, Y, Some(2), Relaxed); // 3
    b.fence(1, Acquire); // 4
    b.read(1, X, None, Relaxed); // 5
    assert_eq!(b.check(), Err(Violation::Coherence));
    let hb = HappensBefore::new(&b.graph);
    assert!(hb.before(1, 4) && hb.before(0, 5) && !hb.before(2, 3));
}

#[test]
fn coherence_of_reads_and_writes() {
    // CoRR: two reads of one thread see the writes against mo.
    let mut b = Builder::default();
    b.write(0, X, Relaxed); // 0
    b.write(0, X, Relaxed); // 1
    b.read(1, X, Some(1), Relaxed); // 2
    b.read(1, X, Some(0), Relaxed); // 3
    assert_eq!(b.check(), Err(Violation::Coherence));
    b.mo(X, &[1, 0]);
    assert_eq!(b.check(), Err(Violation::Coherence), "mo against po");
    let mut b = Builder::default();
    b.write(0, X, Relaxed);
    b.write(1, X, Relaxed);
    b.read(2, X, Some(1), Relaxed);
    b.read(2, X, Some(0), Relaxed);
    assert_eq!(b.check(), Err(Violation::Coherence));
    b.mo(X, &[1, 0]);
    assert_eq!(b.check(), Ok(()), "the writers are unordered");
    // CoWR: a thread reads the initial value after its own write.
    let mut b = Builder::default();
    b.write(0, X, Relaxed);
    b.read(0, X, None, Relaxed);
    assert_eq!(b.check(), Err(Violation::Coherence));
}

#[test]
fn atomicity() {
    // Two RMWs reading the same write.
    let mut b = Builder::default();
    b.write(0, X, Relaxed); // 0
    b.rmw(1, X, Some(0), Relaxed); // 1
    b.rmw(2, X, Some(0), Relaxed); // 2
    assert_eq!(b.check(), Err(Violation::Atomicity));
    // The second reads the first: fine.
    let mut b = Builder::default();
    b.write(0, X, Relaxed);
    b.rmw(1, X, Some(0), Relaxed);
    b.rmw(2, X, Some(1), Relaxed);
    assert_eq!(b.check(), Ok(()));
    // An RMW reading the initial value after another write in mo.
    let mut b = Builder::default();
    b.write(0, X, Relaxed); // 0
    b.rmw(1, X, None, Relaxed); // 1
    assert_eq!(b.check(), Err(Violation::Atomicity));
    b.mo(X, &[1, 0]);
    assert_eq!(b.check(), Ok(()));
    // An RMW mo-before the write it read.
    let mut b = Builder::default();
    b.rmw(0, X, Some(1), Relaxed); // 0
    b.write(1, X, Relaxed); // 1
    assert_eq!(b.check(), Err(Violation::Atomicity));
}

#[test]
fn an_rmw_is_not_from_read_before_itself() {
    let mut b = Builder::default();
    b.rmw(0, X, None, SeqCst); // 0
    b.rmw(0, X, Some(0), SeqCst); // 1
    b.read(0, X, Some(1), SeqCst); // 2
    assert_eq!(b.check(), Ok(()));
}

/// LB: `r1 = x; y = 1 ‖ r2 = y; x = 1`, each read seeing the other's store.
fn lb(store: Ordering, load: Ordering) -> Builder {
    let mut b = Builder::default();
    b.read(0, X, Some(3), load); // 0
    b.write(0, Y, store); // 1
    b.read(1, Y, Some(1), load); // 2
    b.write(1, X, store); // 3
    b
}

#[test]
fn lb_is_thin_air() {
    assert_eq!(lb(Relaxed, Relaxed).check(), Err(Violation::ThinAir));
    // Synchronised, it is an hb cycle.
    assert_eq!(lb(Release, Acquire).check(), Err(Violation::Coherence));
}

#[test]
fn release_sequence_through_another_threads_rmw() {
    let mut b = Builder::default();
    b.write(0, X, Relaxed); // 0: data
    b.write(0, Y, Release); // 1: flag
    b.rmw(2, Y, Some(1), Relaxed); // 2: fetch_add by a third thread
    b.read(1, Y, Some(2), Acquire); // 3
    b.read(1, X, None, Relaxed); // 4: stale data
    let hb = HappensBefore::new(&b.graph);
    assert!(hb.before(1, 3) && hb.before(0, 4));
    assert!(!hb.before(2, 3), "a relaxed RMW releases nothing itself");
    assert_eq!(b.check(), Err(Violation::Coherence));
}

#[test]
fn a_later_store_of_the_same_thread_ends_the_release_sequence() {
    // C++20 dropped C++11's "same-thread later writes" clause.
    let mut b = Builder::default();
    b.write(0, X, Relaxed); // 0: data
    b.write(0, Y, Release); // 1
    b.write(0, Y, Relaxed); // 2
    b.read(1, Y, Some(2), Acquire); // 3
    b.read(1, X, None, Relaxed); // 4
    assert!(!HappensBefore::new(&b.graph).before(1, 3));
    assert_eq!(b.check(), Ok(()));
}

#[test]
fn other_events_order_through_the_graphs_sw() {
    let mut b = Builder::default();
    b.write(0, X, Relaxed); // 0
    b.other(0); // 1: spawn
    b.other(1); // 2: the child's first event
    b.read(1, X, None, Relaxed); // 3
    assert_eq!(b.check(), Ok(()));
    b.sw(1, 2);
    assert!(HappensBefore::new(&b.graph).before(0, 3));
    assert_eq!(b.check(), Err(Violation::Coherence));
}

/// IRIW: `x = 1 ‖ y = 1 ‖ x == 1; y == 0 ‖ y == 1; x == 0`.
fn iriw(order: Ordering) -> Builder {
    let mut b = Builder::default();
    b.write(0, X, order); // 0
    b.write(1, Y, order); // 1
    b.read(2, X, Some(0), order); // 2
    b.read(2, Y, None, order); // 3
    b.read(3, Y, Some(1), order); // 4
    b.read(3, X, None, order); // 5
    b
}

#[test]
fn iriw_readers_disagree_unless_seq_cst() {
    assert_eq!(iriw(Relaxed).check(), Ok(()));
    assert_eq!(iriw(Acquire).check(), Ok(()));
    assert_eq!(iriw(SeqCst).check(), Err(Violation::SeqCst));
}

/// 2+2W: `x = 1; y = 2 ‖ y = 1; x = 2`, ending with x = 1 and y = 1.
fn two_plus_two_w(order: Ordering) -> Builder {
    let mut b = Builder::default();
    b.write(0, X, order); // 0
    b.write(0, Y, order); // 1
    b.write(1, Y, order); // 2
    b.write(1, X, order); // 3
    b.mo(X, &[3, 0]).mo(Y, &[1, 2]);
    b
}

#[test]
fn two_plus_two_w_needs_seq_cst() {
    assert_eq!(two_plus_two_w(Relaxed).check(), Ok(()));
    assert_eq!(two_plus_two_w(Release).check(), Ok(()));
    assert_eq!(two_plus_two_w(SeqCst).check(), Err(Violation::SeqCst));
}

#[test]
fn malformed_graphs_are_named() {
    let mut b = Builder::default();
    b.write(0, X, Relaxed);
    b.read(0, Y, Some(0), Relaxed);
    assert!(b.graph.malformation().is_some());
    let mut b = Builder::default();
    b.write(0, X, Relaxed);
    b.graph.mo[0].clear();
    assert!(b.graph.malformation().is_some());
}

/// The number of consistent graphs over `b`'s events: every rf choice of
/// every read times every mo of every location (the events' own rf and mo
/// are ignored).
fn consistent_graphs(b: &Builder) -> usize {
    use crate::exec::weak::oracle::graphs::permutations;
    // Every graph: one choice per read, then one order per location.
    let mut graphs = vec![b.graph.clone()];
    for (r, node) in b.graph.events.iter().enumerate() {
        let Some(location) = node.access.location().filter(|_| node.access.is_read()) else {
            continue;
        };
        let mut sources = vec![None];
        sources.extend(
            b.graph
                .mo_of(location)
                .iter()
                .filter(|&&w| w != r)
                .map(|&w| Some(w)),
        );
        graphs = graphs
            .into_iter()
            .flat_map(|g| {
                sources.iter().map(move |&source| {
                    let mut g = g.clone();
                    match &mut g.events[r].access {
                        Access::Read { rf, .. } | Access::Rmw { rf, .. } => *rf = source,
                        _ => unreachable!(),
                    }
                    g
                })
            })
            .collect();
    }
    for location in 0..b.graph.mo.len() {
        graphs = graphs
            .into_iter()
            .flat_map(|g| {
                permutations(&b.graph.mo[location])
                    .into_iter()
                    .map(move |order| {
                        let mut g = g.clone();
                        g.mo[location] = order;
                        g
                    })
            })
            .collect();
    }
    graphs.iter().filter(|g| check(g).is_ok()).count()
}

#[test]
fn litmus_counts_match_genmc() {
    // (RC11 count with `weak` orderings, count with SeqCst), per WEAK-MEMORY.md.
    let s = |order: Ordering| {
        let mut b = Builder::default();
        b.write(0, X, order); // x = 2
        b.write(0, Y, order); // y = 1
        b.read(1, Y, None, order);
        b.write(1, X, order); // x = 1
        b
    };
    type Program = fn(Ordering) -> Builder;
    let cases: [(&str, Program, usize, usize); 5] = [
        ("SB", |o| sb(o, o, false, false), 4, 3),
        ("2+2W", two_plus_two_w, 4, 3),
        ("IRIW", iriw, 16, 15),
        ("LB", |o| lb(o, o), 3, 3),
        ("S", s, 4, 3),
    ];
    for (name, program, weak, sc) in cases {
        assert_eq!(consistent_graphs(&program(Relaxed)), weak, "{name} Relaxed");
        assert_eq!(consistent_graphs(&program(SeqCst)), sc, "{name} SeqCst");
    }
    // IRIW with `Relaxed` reads and a SeqCst fence between each reader's two.
    let mut iriw_fenced = Builder::default();
    iriw_fenced.write(0, X, Relaxed);
    iriw_fenced.write(1, Y, Relaxed);
    for (thread, first, second) in [(2, X, Y), (3, Y, X)] {
        iriw_fenced.read(thread, first, None, Relaxed);
        iriw_fenced.fence(thread, SeqCst);
        iriw_fenced.read(thread, second, None, Relaxed);
    }
    assert_eq!(
        consistent_graphs(&iriw_fenced),
        15,
        "IRIW with SeqCst fences"
    );
    assert_eq!(
        consistent_graphs(&sb_fenced(SeqCst, false)),
        3,
        "SB with SeqCst fences"
    );
    assert_eq!(consistent_graphs(&mp(Release, Acquire)), 3, "MP");
    assert_eq!(consistent_graphs(&mp(Relaxed, Relaxed)), 4, "MP Relaxed");
}

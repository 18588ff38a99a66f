//! RC11 consistency of an execution graph (`WEAK-MEMORY.md`): the derived
//! relations, one function each, and the four axioms over them.
//!
//! Pure on purpose: it is the reference the weak explorer and its oracle
//! are checked against, so it follows the model's definitions literally,
//! as bitset relations and transitive closures. The one liberty: program
//! order, modification order and from-read enter as their immediate steps
//! where only their closures matter (acyclic relations close along a
//! topological order in time proportional to their pairs, so a long
//! execution costs a quadratic, not a cubic), and `psc` is empty without a
//! `SeqCst` event.

mod newest;
#[cfg(test)]
mod reference;
mod relation;
#[cfg(test)]
mod tests;

use super::graph::{Access, Graph};
use crate::exec::error::self_check;
pub(crate) use newest::seq_cst_consistent_with_newest;
use relation::Relation;

/// Which RC11 axiom a graph violates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Violation {
    /// `hb ; eco?` is reflexive: a read sees a write overwritten before it
    /// in happens-before, or hb and mo disagree.
    Coherence,
    /// An RMW does not read its immediate mo-predecessor.
    Atomicity,
    /// `psc` has a cycle: the SeqCst events admit no single total order.
    SeqCst,
    /// `po ∪ rf` has a cycle (load buffering out of thin air; C++20's text
    /// allows it for `Relaxed`, RC11 and every tool in the field forbid it).
    ThinAir,
}

/// Checks every RC11 axiom (WEAK-MEMORY.md): coherence (`hb ; eco?`
/// irreflexive), atomicity (an RMW reads its immediate mo-predecessor; the
/// initial value counts as the first write), `psc` acyclic, `po ∪ rf`
/// acyclic. Reports the first violated one in that order.
pub(crate) fn check(graph: &Graph) -> Result<(), Violation> {
    let relations = Relations::new(graph);
    if !coherent(&relations) {
        return Err(Violation::Coherence);
    }
    if !atomic(graph) {
        return Err(Violation::Atomicity);
    }
    if !psc(graph, &relations).is_acyclic() {
        return Err(Violation::SeqCst);
    }
    // Acyclic iff its immediate steps are.
    if !relations.po.clone().union(&relations.rf).is_acyclic() {
        return Err(Violation::ThinAir);
    }
    Ok(())
}

/// Only the SC axiom (`psc` acyclic) — the one kase's view-based exploration
/// does not enforce as it goes.
pub(crate) fn seq_cst_consistent(graph: &Graph) -> bool {
    psc(graph, &Relations::new(graph)).is_acyclic()
}

/// Happens-before, `(po ∪ sw)⁺`, of one graph.
pub(crate) struct HappensBefore {
    hb: Relation,
}

impl HappensBefore {
    /// Computes the graph's happens-before.
    pub(crate) fn new(graph: &Graph) -> Self {
        HappensBefore {
            hb: hb(graph, &po_steps(graph), &rf(graph)),
        }
    }

    /// Whether event `a` happens before event `b`.
    pub(crate) fn before(&self, a: usize, b: usize) -> bool {
        self.hb.contains(a, b)
    }
}

/// The relations every axiom draws on, computed once per check. Program
/// order, modification order and from-read are kept as their immediate
/// steps (their closures are what the axioms use, and closing the steps is
/// quadratic where closing the full relations was cubic in long graphs).
struct Relations {
    /// Immediate program order: each event to its thread's next.
    po: Relation,
    rf: Relation,
    /// Immediate modification order: each write to the next of its location.
    mo: Relation,
    /// Immediate from-read: each read to the first write of its location
    /// after the one it read (other than itself); `fr = fr_imm ; mo*`.
    fr: Relation,
    hb: Relation,
    eco: Relation,
}

impl Relations {
    fn new(graph: &Graph) -> Self {
        self_check!(assert_eq!(graph.malformation(), None, "malformed graph"));
        let po = po_steps(graph);
        let rf = rf(graph);
        let mo = mo_steps(graph);
        let fr = fr_steps(graph);
        let hb = hb(graph, &po, &rf);
        let eco = rf.clone().union(&mo).union(&fr).closure();
        Relations {
            po,
            rf,
            mo,
            fr,
            hb,
            eco,
        }
    }
}

/// Immediate program order.
fn po_steps(graph: &Graph) -> Relation {
    let mut po = Relation::empty(graph.events.len());
    // Each thread's latest event so far (threads are numbered densely).
    let mut last: Vec<Option<usize>> = Vec::new();
    for (e, node) in graph.events.iter().enumerate() {
        let t = node.thread as usize;
        if last.len() <= t {
            last.resize(t + 1, None);
        }
        if let Some(previous) = last[t].replace(e) {
            po.add(previous, e);
        }
    }
    po
}

/// Reads-from: a write to each read that reads it (the initial value is no
/// event, so reading it gives no edge).
fn rf(graph: &Graph) -> Relation {
    let mut rf = Relation::empty(graph.events.len());
    for (r, node) in graph.events.iter().enumerate() {
        if let Some(Some(w)) = node.access.reads_from() {
            rf.add(w, r);
        }
    }
    rf
}

/// Immediate modification order.
fn mo_steps(graph: &Graph) -> Relation {
    let mut mo = Relation::empty(graph.events.len());
    for writes in &graph.mo {
        for pair in writes.windows(2) {
            mo.add(pair[0], pair[1]);
        }
    }
    mo
}

/// Immediate from-read: read `r` to the first write of its location after
/// the one it read, skipping `r` itself (an RMW is not "from-read" of
/// itself); with `mo*` after it, every write after the one it read.
fn fr_steps(graph: &Graph) -> Relation {
    let mut fr = Relation::empty(graph.events.len());
    for (r, node) in graph.events.iter().enumerate() {
        let (Some(location), Some(read)) = (node.access.location(), node.access.reads_from())
        else {
            continue;
        };
        let writes = graph.mo_of(location);
        let later = match read {
            None => 0,
            Some(w) => writes
                .iter()
                .position(|&x| x == w)
                .map_or(writes.len(), |i| i + 1),
        };
        if let Some(w) = first_write_from(writes, later, r) {
            fr.add(r, w);
        }
    }
    fr
}

/// Read `reader`'s immediate from-read step: the first write of `writes`
/// (its location's modification order) from position `later` on, skipping
/// `reader` itself (an RMW sits right after the write it read, and is not
/// from-read of itself).
fn first_write_from(writes: &[usize], later: usize, reader: usize) -> Option<usize> {
    match writes.get(later) {
        Some(&w) if w == reader => writes.get(later + 1).copied(),
        other => other.copied(),
    }
}

/// C++20 release sequences, `[W] ; (rf ; rmw)*`: a write to itself and to
/// every RMW of the chain reading from it.
fn rs(graph: &Graph, rf: &Relation) -> Relation {
    let n = graph.events.len();
    let into_rmw = rf.filter(|_, b| matches!(graph.events[b].access, Access::Rmw { .. }));
    let mut writes = Relation::empty(n);
    for (w, node) in graph.events.iter().enumerate() {
        if node.access.is_write() {
            writes.add(w, w);
        }
    }
    into_rmw.closure().union(&writes)
}

/// Synchronises-with: `[E ⊒ Release] ; ([F] ; po)? ; rs ; rf ; [R] ;
/// (po ; [F])? ; [E ⊒ Acquire]` for atomics, plus the graph's own edges
/// (spawn, join, locks, ...).
fn sw(graph: &Graph, rf: &Relation) -> Relation {
    let events = &graph.events;
    let n = events.len();
    // The release that heads each write: itself, or a release fence po-before it.
    let mut release = Relation::empty(n);
    // The acquire that ends at each read: itself, or an acquire fence po-after it.
    let mut acquire = Relation::empty(n);
    for (a, event) in events.iter().enumerate() {
        let fence = event.access == Access::Fence;
        // An access heads (ends) only itself; a fence every access
        // po-after (po-before) it.
        if event.is_release() {
            let heads = if fence { a..n } else { a..a + 1 };
            let heads = heads.filter(|&w| w == a || graph.po(a, w));
            for w in heads.filter(|&w| events[w].access.is_write()) {
                release.add(a, w);
            }
        }
        if event.is_acquire() {
            let ends = if fence { 0..a + 1 } else { a..a + 1 };
            let ends = ends.filter(|&r| r == a || graph.po(r, a));
            for r in ends.filter(|&r| events[r].access.is_read()) {
                acquire.add(r, a);
            }
        }
    }
    let mut sw = if release.is_empty() || acquire.is_empty() {
        Relation::empty(n) // nothing synchronises through atomics
    } else {
        release.then(&rs(graph, rf)).then(rf).then(&acquire)
    };
    for &(a, b) in &graph.sw {
        sw.add(a, b);
    }
    sw
}

/// Happens-before, `(po ∪ sw)⁺`.
fn hb(graph: &Graph, po: &Relation, rf: &Relation) -> Relation {
    po.clone().union(&sw(graph, rf)).closure()
}

/// Coherence: `hb ; eco?` is irreflexive.
fn coherent(relations: &Relations) -> bool {
    let Relations { hb, eco, .. } = relations;
    hb.is_irreflexive() && (0..hb.len()).all(|a| !hb.successors(a).any(|b| eco.contains(b, a)))
}

/// Atomicity: every RMW sits in mo right after the write it read (first, if
/// it read the initial value).
fn atomic(graph: &Graph) -> bool {
    graph.events.iter().enumerate().all(|(e, node)| {
        let Access::Rmw { location, rf } = node.access else {
            return true;
        };
        let writes = graph.mo_of(location);
        match writes.iter().position(|&w| w == e) {
            Some(i) => rf == i.checked_sub(1).map(|p| writes[p]),
            None => false,
        }
    })
}

/// Whether both events access the same location. Fences and other events
/// have none, so they are at a "different location" from everything,
/// themselves included. The choice is immaterial to `psc`: it only decides
/// `po|≠loc` between two location-less events, and such an edge only matters
/// behind a SeqCst fence's `hb?`, where `hb? ; po` already reaches the same
/// events.
fn same_location(graph: &Graph, a: usize, b: usize) -> bool {
    let location = graph.events[a].access.location();
    location.is_some() && location == graph.events[b].access.location()
}

/// `psc = psc_base ∪ psc_F`, over SeqCst events, where
/// `psc_base = ([E^sc] ∪ [F^sc] ; hb?) ; scb ; ([E^sc] ∪ hb? ; [F^sc])` and
/// `psc_F = [F^sc] ; (hb ∪ hb ; eco ; hb) ; [F^sc]`.
///
/// Computed per SeqCst event as images of sets rather than as compositions
/// of whole relations: the events `x` reaches through `[E^sc] ∪ [F^sc] ;
/// hb?`, their image under `scb` (each part of `scb` in turn), then which
/// SeqCst events that image reaches through the last factor. The same
/// relation, in time proportional to the SeqCst events times n²/64 instead
/// of n³/64.
fn psc(graph: &Graph, relations: &Relations) -> Relation {
    let psc = psc_by_event(graph, relations);
    #[cfg(test)]
    assert_eq!(
        psc,
        reference::psc(graph, relations),
        "psc differs from its definition"
    );
    psc
}

fn psc_by_event(graph: &Graph, relations: &Relations) -> Relation {
    let Relations { hb, eco, .. } = relations;
    let events = &graph.events;
    let n = events.len();
    let sc: Vec<usize> = (0..n)
        .filter(|&e| events[e].is_sc_access() || events[e].is_sc_fence())
        .collect();
    let mut psc = Relation::empty(n);
    if sc.is_empty() {
        return psc; // no SeqCst event: nothing to order
    }
    let parts = ScbParts::new(graph, relations);
    let words = n.div_ceil(64);
    let bit = |set: &mut [u64], e: usize| set[e / 64] |= 1 << (e % 64);
    // For each SeqCst event y (row i of `ends` for `sc[i]`), the events b
    // with `([E^sc] ∪ hb? ; [F^sc])(b, y)`.
    let mut ends = vec![0u64; sc.len() * words];
    for (end, &y) in ends.chunks_mut(words).zip(&sc) {
        bit(end, y);
        if events[y].is_sc_fence() {
            for b in 0..n {
                if hb.contains(b, y) {
                    bit(end, b);
                }
            }
        }
    }
    let meets = |a: &[u64], b: &[u64]| a.iter().zip(b).any(|(x, y)| x & y != 0);
    // Buffers a row long, reused for every event (the check runs often).
    let mut start = vec![0u64; words];
    let mut reached = vec![0u64; words];
    let (mut t1, mut t2) = (vec![0u64; words], vec![0u64; words]);
    for &x in &sc {
        // `([E^sc] ∪ [F^sc] ; hb?)` from x.
        start.fill(0);
        bit(&mut start, x);
        if events[x].is_sc_fence() {
            for (dst, src) in start.iter_mut().zip(hb.row(x)) {
                *dst |= src;
            }
        }
        parts.image_into(&start, &mut reached, &mut t1, &mut t2);
        for (&y, end) in sc.iter().zip(ends.chunks(words)) {
            if meets(&reached, end) {
                psc.add(x, y);
            }
        }
        if events[x].is_sc_fence() {
            // psc_F: hb ∪ hb ; eco ; hb, between fences.
            eco.image_into(hb.row(x), &mut t1);
            hb.image_into(&t1, &mut t2);
            for &y in sc.iter().filter(|&&y| events[y].is_sc_fence()) {
                if hb.contains(x, y) || t2[y / 64] & (1 << (y % 64)) != 0 {
                    psc.add(x, y);
                }
            }
        }
    }
    psc
}

/// The parts of `scb = po ∪ po|≠loc ; hb ; po|≠loc ∪ hb|loc ∪ mo ∪ fr`,
/// to take images of sets under it.
struct ScbParts<'a> {
    po: Relation,
    po_elsewhere: Relation,
    hb: &'a Relation,
    hb_here: Relation,
    mo: Relation,
    fr: Relation,
}

impl<'a> ScbParts<'a> {
    fn new(graph: &Graph, relations: &'a Relations) -> Self {
        let po = relations.po.closure();
        let mo = relations.mo.closure();
        let fr = relations.fr.then(&mo.clone().reflexive());
        // `same_location` a row at a time: the events at each event's
        // location, as a bitset (none for an event without one).
        let n = graph.events.len();
        let words = n.div_ceil(64);
        let none = vec![0u64; words];
        let mut at: Vec<Vec<u64>> = Vec::new();
        for (e, node) in graph.events.iter().enumerate() {
            if let Some(location) = node.access.location() {
                let l = location as usize;
                if at.len() <= l {
                    at.resize(l + 1, none.clone());
                }
                at[l][e / 64] |= 1 << (e % 64);
            }
        }
        let here = |a: usize| match graph.events[a].access.location() {
            Some(location) => at[location as usize].as_slice(),
            None => none.as_slice(),
        };
        let po_elsewhere = po.mask_rows(false, here);
        let hb_here = relations.hb.mask_rows(true, here);
        // The masks against the definition.
        self_check! {
            assert_eq!(po_elsewhere, po.filter(|a, b| !same_location(graph, a, b)));
            assert_eq!(hb_here, relations.hb.filter(|a, b| same_location(graph, a, b)));
        }
        ScbParts {
            po_elsewhere,
            hb_here,
            hb: &relations.hb,
            po,
            mo,
            fr,
        }
    }

    /// Into `out`, the events some member of `set` is related to by `scb`
    /// (`t1`, `t2`: scratch; all a row long).
    fn image_into(&self, set: &[u64], out: &mut [u64], t1: &mut [u64], t2: &mut [u64]) {
        self.po_elsewhere.image_into(set, t1);
        self.hb.image_into(t1, t2);
        self.po_elsewhere.image_into(t2, out);
        for part in [&self.po, &self.hb_here, &self.mo, &self.fr] {
            part.add_image(set, out);
        }
    }
}

//! `psc` as the literal composition of whole relations, the way RC11
//! defines it: the reference the per-event computation in `psc` is checked
//! against in every test build (each graph the tests check compares both).

use super::relation::Relation;
use super::{same_location, Relations};
use crate::exec::weak::graph::Graph;

/// `scb = po ∪ (po|≠loc ; hb ; po|≠loc) ∪ hb|loc ∪ mo ∪ fr`.
fn scb(graph: &Graph, relations: &Relations) -> Relation {
    let Relations { hb, .. } = relations;
    let po = relations.po.closure();
    let mo = relations.mo.closure();
    let fr = relations.fr.then(&mo.clone().reflexive());
    let po_elsewhere = po.filter(|a, b| !same_location(graph, a, b));
    let hb_here = hb.filter(|a, b| same_location(graph, a, b));
    po.clone()
        .union(&po_elsewhere.then(hb).then(&po_elsewhere))
        .union(&hb_here)
        .union(&mo)
        .union(&fr)
}

/// `psc_base ∪ psc_F` by compositions.
pub(super) fn psc(graph: &Graph, relations: &Relations) -> Relation {
    let Relations { hb, eco, .. } = relations;
    let events = &graph.events;
    let n = events.len();
    let hb_opt = |a: usize, b: usize| a == b || hb.contains(a, b);
    let into = Relation::from_fn(n, |x, a| {
        (x == a && events[a].is_sc_access()) || (events[x].is_sc_fence() && hb_opt(x, a))
    });
    let out_of = Relation::from_fn(n, |b, y| {
        (b == y && events[b].is_sc_access()) || (events[y].is_sc_fence() && hb_opt(b, y))
    });
    let base = into.then(&scb(graph, relations)).then(&out_of);
    let fences = hb
        .clone()
        .union(&hb.then(eco).then(hb))
        .filter(|a, b| events[a].is_sc_fence() && events[b].is_sc_fence());
    base.union(&fences)
}

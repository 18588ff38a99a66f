//! Conflicting extensions: every event whose history lies in the explored
//! configuration, found by re-placing each thread's action earlier on its
//! object (the generalised `cexp` of `POR-DESIGN.md`).

use crate::fast_hash::Map;

use crate::exec::{Action, ObjectKind, OpKind, ThreadIdx};

use super::names::Name;
use super::unfolding::EventId;
use super::Por;

/// More reads of one write than this are not re-placed subset by subset
/// (2^n placements); exploration stays sound but may miss reorderings of the
/// write with those reads. Far above what a model explores in practice.
const MAX_READ_SUBSET: usize = 16;

impl Por {
    /// Adds `ex(C)` for the configuration just explored, and for the actions
    /// threads were still waiting to perform (`pending`).
    pub(super) fn add_extensions(
        &mut self,
        pending: &[Action],
        kinds: &[ObjectKind],
        owners: &[Option<ThreadIdx>],
    ) {
        // The write chain of every object in C, and the reads of each write.
        let mut writes: Map<Name, Vec<Option<EventId>>> = Map::default();
        let mut reads: Map<(Name, Option<EventId>), Vec<EventId>> = Map::default();
        for &e in &self.run.config {
            let ev = self.u.get(e);
            let Some(name) = ev.name else { continue };
            let name = self.u.names.find(name);
            if ev.kind.writes() {
                writes
                    .entry(name)
                    .or_insert_with(|| vec![None])
                    .push(Some(e));
            } else {
                writes.entry(name).or_insert_with(|| vec![None]);
                reads
                    .entry((name, self.u.reads_from(e)))
                    .or_default()
                    .push(e);
            }
        }
        let position = writes
            .iter()
            .flat_map(|(&name, chain)| chain.iter().enumerate().map(move |(i, &w)| ((name, w), i)))
            .collect();
        let chains = Chains {
            writes,
            reads,
            position,
        };
        let config = self.run.config.clone();
        for e in config {
            let ev = self.u.get(e);
            if let Some(name) = ev.name {
                let (t, kind, pred) = (ev.thread, ev.kind, ev.pred);
                self.place(&chains, t, kind, name, pred);
            }
        }
        for action in pending {
            if let Some(x) = action.object {
                let pred = self.last_of(action.thread);
                let i = x.0 as usize;
                let name = self.bind(x, (kinds[i], owners[i]), action.thread, pred);
                self.place(&chains, action.thread, action.kind, name, pred);
            }
        }
    }

    /// Interns every event of `t`'s action `kind` on `name` after `pred`,
    /// placed after any write of the chain not before `pred`'s own view.
    fn place(
        &mut self,
        chains: &Chains,
        t: ThreadIdx,
        kind: OpKind,
        name: Name,
        pred: Option<EventId>,
    ) {
        let name = self.u.names.find(name);
        let chain: &[Option<EventId>] = chains.writes.get(&name).map_or(&[None], Vec::as_slice);
        let seen = pred
            .and_then(|p| self.u.frontier(p, name))
            .unwrap_or_default();
        let start = chains
            .position
            .get(&(name, seen.write))
            .copied()
            .unwrap_or(0);
        // A spinning yield waits for a modification after the write its
        // thread last saw (exec/spin.rs).
        let mut modified_since_seen = false;
        for &w in &chain[start..] {
            if self.budget.expired() {
                return; // `advance` sees the deadline and stops
            }
            if w.is_some_and(|w| self.after_pred(w, t, pred)) {
                break; // later writes have this one in their history too
            }
            if w != seen.write {
                modified_since_seen |= w.is_some_and(|w| self.u.get(w).modified);
            }
            if kind == OpKind::Yield && !modified_since_seen {
                continue;
            }
            let gate = self.u.gate_after(name, w);
            if !kind.writes() {
                if !gate.enabled(kind, t, &[]) {
                    continue;
                }
                let preds = w.as_slice();
                if let Some(extra) = self.settle(t, kind, name, pred, w, preds) {
                    self.u.intern(t, kind, Some(name), pred, preds, &extra);
                }
                continue;
            }
            let all_reads = chains
                .reads
                .get(&(name, w))
                .map(Vec::as_slice)
                .unwrap_or(&[]);
            let required: Vec<EventId> = if w == seen.write {
                seen.reads.clone()
            } else {
                Vec::new()
            };
            // Another thread's pure section of a mutex (peeking) comes whole:
            // its `PeekUnlock` brings its `PeekLock` (below); the lock alone
            // would leave it holding the mutex.
            let optional: Vec<EventId> = all_reads
                .iter()
                .copied()
                .filter(|r| !required.contains(r) && !self.after_pred(*r, t, pred))
                .filter(|&r| {
                    let ev = self.u.get(r);
                    !ev.kind.starts_pure_part() || ev.thread == t
                })
                .take(MAX_READ_SUBSET)
                .collect();
            for mask in 0u32..(1 << optional.len()) {
                let mut set = required.clone();
                set.extend(
                    optional
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| mask & (1 << i) != 0)
                        .map(|(_, &r)| r),
                );
                // Reads of `w` below the chosen ones are in the history too.
                let closure: Vec<EventId> = all_reads
                    .iter()
                    .copied()
                    .filter(|&r| !set.contains(&r) && set.iter().any(|&s| self.u.leq(r, s)))
                    .collect();
                set.extend(closure);
                set.sort_unstable();
                set.dedup();
                if !gate.enabled(kind, t, &self.u.read_ops(&set)) {
                    continue;
                }
                let preds = if set.is_empty() {
                    w.into_iter().collect()
                } else {
                    set
                };
                if let Some(extra) = self.settle(t, kind, name, pred, w, &preds) {
                    self.u.intern(t, kind, Some(name), pred, &preds, &extra);
                }
            }
        }
    }

    /// The extra predecessors (rule R) of `t`'s action `kind` on `name`
    /// placed after `pred` with object predecessors `preds` (after write
    /// `w`), or `None` if they would make the placement something else: their
    /// histories hold a later write of the object, or (for a write) more
    /// reads of `w` than `preds`, a placement enumerated on its own.
    fn settle(
        &self,
        t: ThreadIdx,
        kind: OpKind,
        name: Name,
        pred: Option<EventId>,
        w: Option<EventId>,
        preds: &[EventId],
    ) -> Option<Vec<EventId>> {
        let extra = self.r_extras(t, kind, pred, preds);
        if extra.is_empty() {
            return Some(extra);
        }
        let all: Vec<EventId> = pred.iter().chain(preds).chain(&extra).copied().collect();
        let f = self.u.joined_frontier(name, &all);
        if f.write != w {
            return None;
        }
        if kind.writes() {
            let mut reads = f.reads;
            reads.sort_unstable();
            let expected: Vec<EventId> = if reads.is_empty() {
                w.into_iter().collect()
            } else {
                reads
            };
            if expected != preds {
                return None;
            }
        }
        Some(extra)
    }

    /// Whether `[x]` contains an event of `t` after `pred` (then `t`'s action
    /// after `pred` cannot follow `x`).
    fn after_pred(&self, x: EventId, t: ThreadIdx, pred: Option<EventId>) -> bool {
        match self.u.tmax(x, t) {
            None => false,
            Some(y) => !pred.is_some_and(|p| self.u.get(p).thread == t && self.u.leq(y, p)),
        }
    }
}

/// Per object of the configuration: its writes in order (`None` first: the
/// initial value) and the reads of each.
struct Chains {
    writes: Map<Name, Vec<Option<EventId>>>,
    reads: Map<(Name, Option<EventId>), Vec<EventId>>,
    /// Where each write stands in its chain.
    position: Map<(Name, Option<EventId>), usize>,
}

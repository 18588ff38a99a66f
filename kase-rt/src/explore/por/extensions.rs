//! Conflicting extensions: every event whose history lies in the explored
//! configuration, found by re-placing each thread's action earlier on its
//! object (the generalised `cexp` of `POR-DESIGN.md`).

use crate::exec::dependence::Access;
use crate::exec::error::self_check;
use crate::exec::gate::Gate;
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
    ///
    /// The first `plan.placed` events of `C` are a prefix that an earlier
    /// configuration had too, whose extensions were added then and not
    /// pruned since: an action of that prefix is placed again only after a
    /// write that is new, or whose reads are (an extension of the prefix
    /// alone is already in `U`). Absorbing an execution cost every event of
    /// `C` a placement after every earlier write of its object, almost all
    /// of them lookups of known events.
    pub(super) fn add_extensions(
        &mut self,
        events: &[crate::exec::Event],
        pending: &[Action],
        kinds: &[ObjectKind],
        owners: &[Option<ThreadIdx>],
    ) {
        // The write chain of every object in C and the reads of each write,
        // from the accesses in the order they ran (under sequential
        // consistency a read reads the last write before it).
        let placed = self.plan.placed;
        let mut chains = std::mem::take(&mut self.chains);
        chains.clear();
        for o in &self.run.objects {
            let Some(o) = o else {
                chains.by_object.push(None);
                continue;
            };
            let first = chains.writes.len();
            chains.push_write(0, None, false);
            for &(at, e, access) in &o.accesses {
                match access {
                    Access::Write => chains.push_write(at, Some(e), at >= placed),
                    Access::Read => chains.push_read(e, at >= placed),
                }
            }
            let end = chains.writes.len();
            let first_fresh = (first..end)
                .find(|&i| chains.writes[i].fresh)
                .unwrap_or(end);
            chains.by_object.push(Some(((first, end), first_fresh)));
        }
        let config = std::mem::take(&mut self.run.config);
        debug_assert_eq!(config.len(), events.len(), "one event of C per event run");
        for (at, (&e, event)) in config.iter().zip(events).enumerate() {
            let Some(x) = event.action.object else {
                continue;
            };
            let Some(((from, to), first_fresh)) = chains.by_object[x.0 as usize] else {
                continue;
            };
            // A prefix already placed needs placing after new writes only:
            // none if the object has none.
            let fresh_from = if at < placed {
                if first_fresh == to {
                    continue;
                }
                Some((first_fresh - from, at))
            } else {
                None
            };
            let ev = self.u.get(e);
            let name = ev.name.expect("an event on an object has its name");
            let (t, kind, pred) = (ev.thread, ev.kind, ev.pred);
            self.place(&chains, (from, to), fresh_from, t, kind, name, pred);
        }
        self.run.config = config;
        for action in pending {
            if let Some(x) = action.object {
                let pred = self.last_of(action.thread);
                let i = x.0 as usize;
                let name = self.bind(x, (kinds[i], owners[i]), action.thread, pred);
                // An object C never touched has its initial value only.
                let range = chains
                    .by_object
                    .get(i)
                    .copied()
                    .flatten()
                    .map(|(range, _)| range)
                    .unwrap_or_else(|| {
                        chains.push_write(0, None, true);
                        (chains.writes.len() - 1, chains.writes.len())
                    });
                self.place(&chains, range, None, action.thread, action.kind, name, pred);
            }
        }
        self.chains = chains;
    }

    /// Interns every event of `t`'s action `kind` on `name` after `pred`,
    /// placed after any write of its object's chain in `C` (`chains.writes`
    /// in `range`) not before `pred`'s own view (only after fresh ones if
    /// `fresh_from` says where the chain's first fresh link is, and where
    /// in `C` the action's own event is).
    #[allow(clippy::too_many_arguments)]
    fn place(
        &mut self,
        chains: &Chains,
        range: (usize, usize),
        fresh_from: Option<(usize, usize)>,
        t: ThreadIdx,
        kind: OpKind,
        name: Name,
        pred: Option<EventId>,
    ) {
        let name = self.u.names.find(name);
        let chain = &chains.writes[range.0..range.1];
        // Only a yield needs the known writes before the first fresh one
        // (their modifications count below).
        let only_fresh = fresh_from.is_some();
        let first_fresh = fresh_from
            .map(|(first, _)| first)
            .filter(|_| kind != OpKind::Yield);
        // The write `pred` saw lies in `[pred]`, before the event in `C`: if
        // the first fresh write comes after the event, the seen one is an
        // earlier link, none of those placed after, and need not be found
        // (most events of a replayed prefix, placed again after new writes
        // only; finding it searched `pred`'s frontiers). `None` then stands
        // for it: every link placed after has an event.
        let seen_before_fresh =
            fresh_from.is_some_and(|(first, at)| kind != OpKind::Yield && chain[first].at > at);
        // The write `pred` saw; its reads are copied only where needed
        // (below): most placements never get to them, and a copy each was
        // most of what placing allocated (a mutex's reads under peeking).
        let seen_write = if seen_before_fresh {
            None
        } else {
            pred.and_then(|p| self.u.frontier_write(p, name)).flatten()
        };
        // `seen_write` lies in `[pred]`, so in `C`: found by its position.
        let mut start = match seen_write.and_then(|w| self.run.pos.get(w)) {
            Some(at) => chain.partition_point(|w| w.event.is_none() || w.at < at),
            None => 0,
        };
        if let Some(first) = first_fresh {
            start = start.max(first);
        }
        self_check!(if seen_before_fresh {
            let seen = pred.and_then(|p| self.u.frontier_write(p, name)).flatten();
            assert!(
                chain[start..]
                    .iter()
                    .all(|link| link.event.is_some() && link.event != seen),
                "the write a prefix event saw comes before the fresh ones"
            );
        });
        // A spinning yield waits for a modification after the write its
        // thread last saw (exec/spin.rs).
        let mut modified_since_seen = false;
        // The writes `t`'s action can follow end at the first with an event
        // of `t` after `pred` in its history: the later ones have that one
        // in theirs (a chain's writes are ordered). Found by halving, not by
        // walking: a prefix event skips the chain's known writes, and walking
        // them all to the end made an execution's cost grow with the square
        // of its length on an object one thread writes over and over. The
        // end is usually a write or two away: the search gallops from the
        // start, then halves.
        let rest = &chain[start..];
        let before = |link: &WriteLink| !link.event.is_some_and(|w| self.after_pred(w, t, pred));
        let (mut lo, mut step) = (0, 1);
        let hi = loop {
            let probe = lo + step - 1;
            if probe >= rest.len() {
                break rest.len();
            }
            if !before(&rest[probe]) {
                break probe;
            }
            lo = probe + 1;
            step *= 2;
        };
        let end = lo + rest[lo..hi].partition_point(before);
        for link in &rest[..end] {
            let w = link.event;
            // Placements after a write the prefix already had are in `U`
            // (a yield still counts that write's modification below).
            let known = only_fresh && !link.fresh;
            if known && kind != OpKind::Yield {
                continue;
            }
            if self.budget.expired() {
                return; // `advance` sees the deadline and stops
            }
            if w != seen_write {
                modified_since_seen |= w.is_some_and(|w| self.u.get(w).modified);
            }
            if kind == OpKind::Yield && !modified_since_seen {
                continue;
            }
            if known {
                continue;
            }
            let gate = self.u.gate_after(name, w);
            if !kind.writes() {
                // An `RwLock`'s gate counts the reads in the history: a
                // write lock under peeking (`PeekLock`, a read) after a
                // guard the main thread downgraded and dropped before its
                // first spawn waits for no reader, the dropped guard's
                // `ReadUnlock` (a read) having released it.
                let ops = if gate.counts_reads() {
                    self.u
                        .read_ops(&self.history_reads(pred, name, w, seen_write))
                } else {
                    Vec::new()
                };
                if !gate.enabled(kind, t, &ops) {
                    continue;
                }
                let preds = w.as_slice();
                if let Some(extra) = self.settle(t, kind, name, pred, w, preds) {
                    self.u.intern(t, kind, Some(name), pred, preds, &extra);
                }
                continue;
            }
            let all_reads = &chains.reads[link.reads.0..link.reads.1];
            // Only one write of the chain is the one `pred` saw.
            let required = self.history_reads(pred, name, w, seen_write);
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
            let (mut set, mut closure) = (Vec::new(), Vec::new());
            for mask in 0u32..(1 << optional.len()) {
                set.clear();
                set.extend_from_slice(&required);
                set.extend(
                    optional
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| mask & (1 << i) != 0)
                        .map(|(_, &r)| r),
                );
                // Reads of `w` below the chosen ones are in the history too.
                closure.clear();
                closure.extend(
                    all_reads
                        .iter()
                        .copied()
                        .filter(|&r| !set.contains(&r) && set.iter().any(|&s| self.u.leq(r, s))),
                );
                set.extend_from_slice(&closure);
                set.sort_unstable();
                set.dedup();
                if gate != Gate::Open && !gate.enabled(kind, t, &self.u.read_ops(&set)) {
                    continue;
                }
                let preds = if set.is_empty() { w.as_slice() } else { &set };
                if let Some(extra) = self.settle(t, kind, name, pred, w, preds) {
                    self.u.intern(t, kind, Some(name), pred, preds, &extra);
                }
            }
        }
    }

    /// The reads of write `w` of `name` that an event after `pred` has in
    /// its history: those of the write `pred` saw (`seen_write`), none of
    /// any later one.
    fn history_reads(
        &self,
        pred: Option<EventId>,
        name: Name,
        w: Option<EventId>,
        seen_write: Option<EventId>,
    ) -> Vec<EventId> {
        if w != seen_write {
            return Vec::new();
        }
        pred.and_then(|p| self.u.frontier(p, name))
            .map(|f| f.reads)
            .unwrap_or_default()
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
        let mut all = self.settle_buf.borrow_mut();
        all.clear();
        all.extend(pred.iter().chain(preds).chain(&extra).copied());
        let f = self.u.joined_frontier(name, &all);
        drop(all);
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

/// The objects' accesses in the configuration, in buffers kept from one
/// execution to the next: per object (by runtime index), a range of
/// `writes`, its write chain in order (the initial value first), each with
/// a range of `reads`.
#[derive(Default)]
pub(super) struct Chains {
    writes: Vec<WriteLink>,
    reads: Vec<EventId>,
    /// With the index in `writes` of the chain's first fresh link (its end
    /// if none is).
    by_object: Vec<Option<((usize, usize), usize)>>,
}

/// A write of a chain (`None`: the initial value) and the reads of it.
struct WriteLink {
    /// Its position in `C`.
    at: usize,
    event: Option<EventId>,
    /// Its reads, a range of [`Chains::reads`].
    reads: (usize, usize),
    /// Whether a placement after it is new: it or one of its reads lies
    /// past the placed prefix.
    fresh: bool,
}

impl Chains {
    fn clear(&mut self) {
        self.writes.clear();
        self.reads.clear();
        self.by_object.clear();
    }

    fn push_write(&mut self, at: usize, event: Option<EventId>, fresh: bool) {
        let end = self.reads.len();
        self.writes.push(WriteLink {
            at,
            event,
            reads: (end, end),
            fresh,
        });
    }

    fn push_read(&mut self, e: EventId, fresh: bool) {
        self.reads.push(e);
        let last = self
            .writes
            .last_mut()
            .expect("a chain starts with its initial value");
        last.reads.1 = self.reads.len();
        last.fresh |= fresh;
    }
}

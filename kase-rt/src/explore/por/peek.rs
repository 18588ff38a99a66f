//! Critical-section peeking in the explorer (POR-DESIGN.md, "Exploring
//! `T_macro` with fine-grained events"): rule R's extra predecessors, units
//! (a pure part of a critical section is one step of Algorithm 1), and
//! which unit a thread would run next.

use crate::fast_hash::{Map, Set};

use crate::exec::dependence::Access;
use crate::exec::{OpKind, ThreadIdx};

use super::names::Name;
use super::unfolding::{EventId, Frontier};
use super::Por;

impl Por {
    /// The end (`PeekUnlock` or `Upgrade`) of the pure part that `p`, an
    /// event of the current configuration, belongs to.
    fn part_end(&self, p: EventId) -> Option<EventId> {
        let thread = self.u.get(p).thread;
        let at = self.run.pos.get(p)?;
        let events = self.run.positions.get(thread.index())?;
        let from = events.partition_point(|&(pos, _)| pos < at);
        events[from..]
            .iter()
            .map(|&(_, e)| e)
            .find(|&e| self.u.get(e).kind.ends_pure_part())
    }

    /// The longest prefix of the first `len` events of `C` that leaves no
    /// pure part open: every pure part begun in it ends in it, so the ends
    /// rule R finds ([`part_end`](Self::part_end)) for events of the prefix
    /// are the same in any execution that replays it.
    pub(super) fn closed_prefix(&self, len: usize) -> usize {
        if self.run.first_pure.is_none() {
            return len;
        }
        let mut inside: Vec<bool> = Vec::new();
        let mut open = 0usize;
        let mut closed = 0;
        for (i, &e) in self.run.config[..len].iter().enumerate() {
            let ev = self.u.get(e);
            let t = ev.thread.index();
            if inside.len() <= t {
                inside.resize(t + 1, false);
            }
            if ev.kind.starts_pure_part() && !inside[t] {
                inside[t] = true;
                open += 1;
            }
            if ev.kind.ends_pure_part() && inside[t] {
                inside[t] = false;
                open -= 1;
            }
            if open == 0 {
                closed = i + 1;
            }
        }
        closed
    }

    /// Rule R: the extra predecessors of `t`'s action `kind` after `pred`
    /// whose object predecessors are `preds`: for a memory access in a pure
    /// part of mutex `m`, the ends of the other pure parts of `m` that
    /// `preds` belong to.
    pub(super) fn r_extras(
        &self,
        t: ThreadIdx,
        kind: OpKind,
        pred: Option<EventId>,
        preds: &[EventId],
    ) -> Vec<EventId> {
        if !kind.is_memory_access() {
            return Vec::new();
        }
        let Some(mutex) = self.u.pure_of_next(t, kind, None, pred) else {
            return Vec::new();
        };
        let mut out: Vec<EventId> = preds
            .iter()
            .filter(|&&p| {
                let ev = self.u.get(p);
                ev.thread != t && ev.pure_of.map(|n| self.u.names.find(n)) == Some(mutex)
            })
            .filter_map(|&p| self.part_end(p))
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The unit of Algorithm 1 that starts with `first` in the current
    /// configuration, by its last event: the end of a pure part, or `first`.
    pub(super) fn unit_rep(&self, first: EventId) -> EventId {
        if !self.u.get(first).kind.starts_pure_part() {
            return first;
        }
        self.part_end(first).unwrap_or(first)
    }

    /// The first event of the unit whose last event is `rep` (`rep` itself
    /// unless it ends a pure part), without listing the unit.
    pub(super) fn unit_first(&self, rep: EventId) -> EventId {
        if !self.u.get(rep).kind.ends_pure_part() {
            return rep;
        }
        let mut e = rep;
        while !self.u.get(e).kind.starts_pure_part() {
            match self.u.thread_parent(e) {
                Some(p) => e = p,
                None => break,
            }
        }
        e
    }

    /// The events of the unit whose last event is `rep`, first to last.
    /// Most units are one event, and most pure parts a few: those need no
    /// allocation (a `Vec` each was a twentieth of disp(5,4)'s allocations:
    /// the comb asks for a unit's chain at every refresh of its lists).
    pub(super) fn unit_chain(&self, rep: EventId) -> UnitChain {
        if !self.u.get(rep).kind.ends_pure_part() {
            return UnitChain::One([rep]);
        }
        let mut chain = UnitChain::Few([0; FEW_UNIT_EVENTS], 0);
        chain.push(rep);
        let mut e = rep;
        while !self.u.get(e).kind.starts_pure_part() {
            match self.u.thread_parent(e) {
                Some(p) => {
                    chain.push(p);
                    e = p;
                }
                None => break,
            }
        }
        match &mut chain {
            UnitChain::Few(events, len) => events[..*len as usize].reverse(),
            UnitChain::Many(events) => events.reverse(),
            UnitChain::One(_) => {}
        }
        chain
    }

    /// The frontier of object `name` (canonical) after the first `len`
    /// events of the current configuration (all of them: `None`).
    pub(super) fn frontier_at(&self, name: Name, len: Option<usize>) -> Frontier {
        let all = self.run.config.len();
        let len = len.map_or(all, |l| l.min(all));
        let mut objects = self
            .run
            .objects
            .iter()
            .flatten()
            .filter(|o| self.u.names.find(o.name) == name);
        match (objects.next(), objects.next()) {
            (None, _) => Frontier::default(),
            (Some(o), None) if len == all => o.frontier.clone(),
            // From the object's own accesses (their positions in `C`).
            (Some(o), None) => o.frontier_at(len),
            // Several runtime objects met under one name: their events in
            // `C`'s order.
            (Some(_), Some(_)) => {
                let mut f = Frontier::default();
                for &e in &self.run.config[..len] {
                    let ev = self.u.get(e);
                    if ev.name.map(|n| self.u.names.find(n)) == Some(name) {
                        f.record(e, ev.kind.props().access);
                    }
                }
                f
            }
        }
    }

    /// Whether two runtime objects of the current execution have one
    /// canonical name (met under two names that were merged): then an
    /// object's frontier is not one object's own. Found again only when
    /// the unfolding's generation (merges bump it) or the objects change.
    pub(super) fn names_shared(&self) -> bool {
        let key = (self.u.generation(), self.run.objects.len());
        if let Some((k, shared)) = self.run.names_shared.get() {
            if k == key {
                return shared;
            }
        }
        let mut names = self.names_buf.borrow_mut();
        names.clear();
        names.extend(
            self.run
                .objects
                .iter()
                .flatten()
                .map(|o| self.u.names.find(o.name)),
        );
        names.sort_unstable();
        let shared = names.windows(2).any(|w| w[0] == w[1]);
        self.run.names_shared.set(Some((key, shared)));
        shared
    }

    /// Whether the pure part a thread would run now, starting with its
    /// `PeekLock` event `lock`, is one of `D`: for each unit of `D` starting
    /// there, re-derive the keys of its chain from the current frontiers
    /// (each access is a function of its predecessor, its placement a
    /// function of the frontier).
    pub(super) fn unit_in_d(&self, lock: EventId) -> bool {
        self.unit_in_d_at(lock, None)
    }

    /// [`unit_in_d`](Self::unit_in_d) after the first `len` events of the
    /// configuration (`None`: all of them).
    fn unit_in_d_at(&self, lock: EventId, len: Option<usize>) -> bool {
        self.tree
            .d_by_first
            .get(&lock)
            .is_some_and(|reps| reps.iter().any(|&rep| self.would_repeat(rep, len)))
    }

    /// Whether an alternative `guide` (`J \ C`, with `C` the first
    /// `config_len` events) can start without running a unit of `D`. Its
    /// first steps are its events whose other predecessors are all in `C`;
    /// a pure part run from `C`'s state completes in one way only, so if
    /// each first step is a pure part that completes to a unit of `D`, no run
    /// reaches `J` (two sections each placed before the other's write, say).
    pub(super) fn startable(&self, guide: &Set<EventId>, config_len: usize) -> bool {
        let in_c = |e: &EventId| self.run.pos.get(*e).is_some_and(|p| p < config_len);
        let mut firsts = guide.iter().filter(|&&e| {
            let ev = self.u.get(e);
            ev.pred
                .iter()
                .chain(ev.obj_preds())
                .chain(ev.extra())
                .all(&in_c)
        });
        firsts.any(|&e| {
            !self.u.get(e).kind.starts_pure_part() || !self.unit_in_d_at(e, Some(config_len))
        })
    }

    fn would_repeat(&self, rep: EventId, len: Option<usize>) -> bool {
        let chain = self.unit_chain(rep);
        let mut seen: Map<Name, Frontier> = Map::default();
        // The `PeekLock` (the would-be event, so it matches) reads the mutex.
        let lock = self.u.get(chain[0]);
        if let Some(m) = lock.name.map(|n| self.u.names.find(n)) {
            let mut f = self.frontier_at(m, len);
            f.record(chain[0], Access::Read);
            seen.insert(m, f);
        }
        for &c in &chain[1..] {
            let ev = self.u.get(c);
            let Some(name) = ev.name.map(|n| self.u.names.find(n)) else {
                return false;
            };
            let frontier = seen
                .remove(&name)
                .unwrap_or_else(|| self.frontier_at(name, len));
            let preds = frontier.immediate(ev.kind.props().access);
            let extra = self.r_extras(ev.thread, ev.kind, ev.pred, &preds);
            if *preds != *ev.obj_preds() || extra != ev.extra() {
                return false;
            }
            let mut next = frontier;
            next.record(c, ev.kind.props().access);
            seen.insert(name, next);
        }
        true
    }

    /// Whether thread `t` may start the pure part beginning with `lock`
    /// (an event of the guide) now: every guide event of that part must have
    /// its other predecessors in the configuration, or the part (which runs
    /// in one step) would read an earlier state than the alternative says.
    pub(super) fn guided_part_ready(&self, t: ThreadIdx, lock: EventId) -> bool {
        self.plan
            .guide
            .iter()
            .filter(|&&g| g != lock && self.in_part(t, lock, g))
            .all(|&g| {
                let ev = self.u.get(g);
                ev.obj_preds().iter().chain(ev.extra()).all(|p| {
                    self.run.pos.contains(*p) || {
                        let q = self.u.get(*p);
                        q.thread == t && self.in_part(t, lock, *p)
                    }
                })
            })
    }

    /// Whether `g` is an event of `t`'s pure part that starts with `lock`.
    fn in_part(&self, t: ThreadIdx, lock: EventId, g: EventId) -> bool {
        let ev = self.u.get(g);
        if ev.thread != t || ev.pure_of.is_none() {
            return false;
        }
        let mut e = g;
        loop {
            if e == lock {
                return true;
            }
            match self.u.thread_parent(e) {
                Some(p) if !self.u.get(p).kind.ends_pure_part() => e = p,
                _ => return false,
            }
        }
    }
}

/// The events of one unit ([`Por::unit_chain`]), first to last.
pub(super) enum UnitChain {
    /// A unit of one event (no pure part).
    One([EventId; 1]),
    /// A pure part of a critical section of up to `FEW_UNIT_EVENTS`
    /// events: the first `len` of the array.
    Few([EventId; FEW_UNIT_EVENTS], u8),
    /// A longer pure part.
    Many(Vec<EventId>),
}

/// The longest pure part a [`UnitChain`] holds inline.
const FEW_UNIT_EVENTS: usize = 8;

impl UnitChain {
    /// Appends `e` (while listing a chain, last event first).
    fn push(&mut self, e: EventId) {
        match self {
            UnitChain::Few(events, len) if (*len as usize) < FEW_UNIT_EVENTS => {
                events[*len as usize] = e;
                *len += 1;
            }
            UnitChain::Few(events, _) => {
                let mut many = events.to_vec();
                many.push(e);
                *self = UnitChain::Many(many);
            }
            UnitChain::Many(events) => events.push(e),
            UnitChain::One(_) => unreachable!("a one-event unit is never listed"),
        }
    }
}

impl std::ops::Deref for UnitChain {
    type Target = [EventId];

    fn deref(&self) -> &[EventId] {
        match self {
            UnitChain::One(one) => one,
            UnitChain::Few(events, len) => &events[..*len as usize],
            UnitChain::Many(many) => many,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{UnitChain, FEW_UNIT_EVENTS};

    #[test]
    fn a_unit_chain_moves_to_the_heap_past_its_inline_room_and_keeps_its_order() {
        let mut chain = UnitChain::Few([0; FEW_UNIT_EVENTS], 0);
        for e in 0..FEW_UNIT_EVENTS as u32 {
            chain.push(e);
        }
        assert!(matches!(chain, UnitChain::Few(..)));
        assert_eq!(&*chain, (0..FEW_UNIT_EVENTS as u32).collect::<Vec<_>>());
        chain.push(100);
        chain.push(101);
        assert!(matches!(chain, UnitChain::Many(_)));
        let mut expected: Vec<u32> = (0..FEW_UNIT_EVENTS as u32).collect();
        expected.extend([100, 101]);
        assert_eq!(&*chain, expected);
    }
}

//! `Strategy::Por`: unfolding-based partial-order reduction, [QPOR, Alg. 1]
//! run statelessly (each execution replays a prefix and then follows a
//! clue). Design, the generalisation from mutexes to kase's objects, and
//! the arguments: `../POR-DESIGN.md`.
//!
//! Citations `[QPOR, …]` are to *Quasi-Optimal Partial Order Reduction*,
//! Huyen T. T. Nguyen, César Rodríguez, Marcelo Sousa, Camille Coti and
//! Laure Petrucci, CAV 2018 (LNCS 10982): Algorithm 1 and Definitions 2–4
//! in §3, Definitions 5–6 in §5, Theorem 6 in §5.1, `cexp` in §5.3.
//!
//! # Paper ↔ code
//!
//! | paper | here |
//! |---|---|
//! | `U`, the events discovered so far | `Por::u`: [`Unfolding`] (`unfolding.rs`) |
//! | event `e = ⟨a, H⟩` | [`unfolding::Event`], identified by its key `(thread, pred, obj_preds, extra)`: [`Unfolding::intern`], [`Unfolding::find`] |
//! | label `h(e)` | `Event::{thread, kind, name}`; per `(thread, pred)` the first seen in `Por::labels` (`state::Label`) |
//! | `[e]`, the local configuration | [`Unfolding::closure`]; summarised per event by `tmax` (Def. 7) and per-object frontiers |
//! | `e ≤ e'` (causality) | [`Unfolding::leq`] (Theorem 6: `tmax` + the thread tree) |
//! | `e # e'` (conflict) | [`Unfolding::conflict`] (Theorem 6 generalised: per object, the write tree and its reads) |
//! | immediate conflict | [`Unfolding::immediate_conflict`]; candidates: [`Unfolding::neighbour_lists`] |
//! | thread tree, lock tree (§5.1) | `Event::thread_parent`/`depth`; `Event::write`/`write_depth` (one write tree per object) |
//! | `lmax(e, l)` (Def. 7) | the frontier of `l` in `[e]`: [`Frontier`] (= `exec::dependence::LastAccesses`), [`Unfolding::frontier`] |
//! | `C`, the configuration explored | `Por::run.config` (`state::CurrentRun`, in execution order) |
//! | `D` | `Por::tree.in_d` (`state::Tree`), units by their last event |
//! | `A` (= `J \ C`) | `Por::plan.guide` (`state::Plan`) |
//! | `J`, a clue / alternative (Def. 2, 4) | the set [`Por::alternative`] returns (`comb.rs`) |
//! | `Alt(C, D ∪ {e})` (Def. 3) | [`Por::alternative`] |
//! | k-partial alternative (Def. 5) | [`Alternatives::KPartial`]; [`Alternatives::Optimal`] is ∞-partial |
//! | comb, spikes, combinations (Def. 6) | `Por::alternative` builds the spikes, `Por::combine` searches them (`comb.rs`) |
//! | `ex(C)`, `cex(C)`, `cexp(C)` (§5.3) | [`Por::add_extensions`] (`extensions.rs`): re-places each event of `C` after every earlier write of its object |
//! | `en(C)` | the execution's enabled threads (`ChoicePoint::enabled`) and the events they would produce: `Por::would_be` |
//! | `Explore(C, D, A)`, the recursion | one [`state::Node`] per choice point (`Por::tree.nodes`) |
//!
//! Algorithm 1, line by line:
//!
//! | line | here |
//! |---|---|
//! | 1–2 `U := ∅`, `Explore(∅, ∅, ∅)` | [`Por::new`]; the first execution |
//! | 4 add `ex(C)` to `U` | events as they run: `Por::sync`/`Por::process`; `cex(C)` after the execution: `Por::absorb` → [`Por::add_extensions`] |
//! | 5 `en(C) ⊆ D`: return | [`Scheduler::choose`] returns `Stop::Redundant` (sleep-set blocked, counted) |
//! | 6–7 choose `e ∈ en(C) \ D` | `choose`, "line 7": the current thread if its next unit is not in `D` (`Por::next_unit_in_d`), else the first such thread |
//! | 8–9 choose `e ∈ A ∩ en(C)` | `choose`, the `guided` branch |
//! | 10 `Explore(C ∪ {e}, D, A \ {e})` | the execution goes on; `Node::event` records `e` |
//! | 11 `∃ J ∈ Alt(C, D ∪ {e})` | [`Explorer::advance`], deepest node first: `Por::add_to_d`, then [`Por::alternative`] |
//! | 12 `Explore(C, D ∪ {e}, J \ C)` | `advance` sets `plan` (replay `C`'s schedule, guide `J \ C`) and starts a new execution |
//! | 13 `U := U ∩ Q(C, D)` | `prune.rs`: `Por::maybe_prune`, when `U` doubled; keeps `C ∪ D` and the candidates the spikes of the nodes on the stack can take |
//! | 14–25 `cexp` | `extensions.rs` (reads, writes with subsets of reads, gates; not only `acq`) |
//!
//! Files: `unfolding.rs` (`U`, `≤`, `#`), `extensions.rs` (`cexp`),
//! `comb.rs` (`Alt`), `prune.rs` (line 13), `names.rs` (object names across
//! executions), `peek.rs` (critical-section peeking: rule R, units),
//! `state.rs` (the explorer's state by lifetime), `bench.rs` (hooks for
//! the engine benchmarks), `tests.rs`; its maps hash with
//! `crate::fast_hash`.

pub(crate) mod bench;
mod comb;
mod extensions;
mod frontiers;
mod names;
mod peek;
mod pool;
mod prune;
mod state;
#[cfg(test)]
mod tests;
mod unfolding;

use crate::exec::dependence::Immediate;
use crate::exec::error::self_check;
use crate::fast_hash::Map;

use crate::exec::{
    self, ChoicePoint, Execution, Fault, ObjectIdx, ObjectKind, OpKind, Outcome, Scheduler, Stop,
    ThreadIdx, WeakPoint,
};

use self::names::Name;
use self::state::{Counters, CurrentRun, Label, Node, Plan, Tree};
use self::unfolding::{EventId, Frontier, Unfolding};
use super::Explorer;

/// How alternatives are computed ([QPOR, Def. 5]: k-partial alternatives).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Alternatives {
    /// Full alternatives: exactly one execution per Mazurkiewicz trace, no
    /// redundant (sleep-set-blocked) execution ever.
    #[default]
    Optimal,
    /// k-partial alternatives: cheaper to compute, may explore redundant
    /// executions (counted in `Report::sleep_set_blocked`). `KPartial(1)`
    /// behaves like source-set DPOR.
    KPartial(usize),
}

/// The partial-order explorer: Algorithm 1 run statelessly. Its state is
/// grouped by lifetime (see `state.rs`).
pub(crate) struct Por {
    // The whole exploration: what was learnt about the program.
    /// `U`: the events discovered so far, with causality and conflict.
    u: Unfolding,
    /// Full or k-partial alternatives ([QPOR, Def. 5]).
    alternatives: Alternatives,
    /// Thread `t`'s action after event `p` is a function of `p`: what each
    /// such action was when first seen.
    labels: state::Labels,
    /// The name of each thread's thread object (the same in every
    /// execution, so it is never minted anew nor merged).
    thread_names: Map<ThreadIdx, Name>,
    /// The exploration tree and `D`.
    tree: Tree,
    /// Immediate conflicts per event, kept across alternatives (until `U`
    /// is pruned or names merge).
    conflict_cache: std::cell::RefCell<comb::ConflictCache>,
    /// Scratch for the comb's walk up the tree (`Por::refresh_spikes`).
    chain_buf: std::cell::RefCell<Vec<usize>>,
    /// [`alternative`](Self::alternative)'s buffers.
    alt_scratch: std::cell::RefCell<comb::AltScratch>,
    /// Scratch for the frontiers of what moved below a node
    /// (`Por::moved_since`).
    moved_builder: std::cell::RefCell<frontiers::FrontiersBuilder>,
    /// Scratch for the objects that moved, by name and index
    /// (`Por::moved_since`).
    moved_buf: std::cell::RefCell<Vec<(Name, usize)>>,
    /// Scratch for the current objects' names (`Por::names_shared`).
    names_buf: std::cell::RefCell<Vec<Name>>,
    /// Scratch for a placement's predecessors (`Por::settle`).
    settle_buf: std::cell::RefCell<Vec<EventId>>,
    /// Scratch for the objects' write chains (`Por::add_extensions`).
    chains: extensions::Chains,
    /// Counters for the report.
    stats: Counters,
    /// The exploration's deadline, checked while computing alternatives.
    budget: super::budget::Budget,
    /// A spin over several objects, which the unfolding cannot order (an
    /// event is on one object): the caller explores without reduction.
    unsupported: Option<String>,
    /// An alternative was left unexplored at the model's request (loom's
    /// exploration controls).
    cut: bool,
    /// Branches of the finished nodes, per depth, for the progress
    /// estimate.
    shape: super::estimate::Shape,
    // One execution at a time.
    /// What the current execution follows: a prefix to replay, a clue.
    plan: Plan,
    /// What the current execution produced so far.
    run: CurrentRun,
    /// While the first execution has run on the main thread alone (no
    /// spawn yet): how many of its events were looked at. They are held
    /// back from `U`: a model that never starts a thread has exactly one
    /// execution, and building the unfolding for it was two thirds of
    /// such a test's exploration (event-listener's loom suite). The first
    /// spawn brings them in, in order, and the search goes on as usual.
    solo: Option<usize>,
}

impl Por {
    pub(crate) fn new(alternatives: Alternatives) -> Self {
        Por {
            u: Unfolding::default(),
            alternatives,
            labels: state::Labels::default(),
            thread_names: Map::default(),
            tree: Tree::default(),
            conflict_cache: Default::default(),
            chain_buf: Default::default(),
            alt_scratch: Default::default(),
            moved_builder: Default::default(),
            moved_buf: Default::default(),
            names_buf: Default::default(),
            settle_buf: Default::default(),
            chains: Default::default(),
            stats: Counters::default(),
            budget: super::budget::Budget::default(),
            shape: Default::default(),
            unsupported: None,
            cut: false,
            plan: Plan::default(),
            run: CurrentRun::default(),
            solo: Some(0),
        }
    }

    fn last_of(&self, t: ThreadIdx) -> Option<EventId> {
        self.run.last.get(t.index()).copied().flatten()
    }

    fn set_last(&mut self, t: ThreadIdx, e: EventId) {
        if self.run.last.len() <= t.index() {
            self.run.last.resize(t.index() + 1, None);
        }
        self.run.last[t.index()] = Some(e);
    }

    /// The canonical name of runtime object `x` (of `kind`; the thread
    /// object of `owner`, if it is one), first used by `t` after `pred`.
    fn bind(
        &mut self,
        x: ObjectIdx,
        (kind, owner): (ObjectKind, Option<ThreadIdx>),
        t: ThreadIdx,
        pred: Option<EventId>,
    ) -> Name {
        let i = x.0 as usize;
        if self.run.objects.len() <= i {
            self.run.objects.resize_with(i + 1, || None);
        }
        if let Some(o) = &self.run.objects[i] {
            return o.name;
        }
        let name = match (owner, self.labels.get(t, pred).and_then(|l| l.name)) {
            (Some(thread), _) => *self
                .thread_names
                .entry(thread)
                .or_insert_with(|| self.u.fresh_name()),
            (None, Some(n)) => n,
            (None, None) => self.u.fresh_name(),
        };
        self.u.set_kind(name, kind);
        self.run.objects[i] = Some(self.run.new_object(name));
        name
    }

    fn frontier_of(&self, x: ObjectIdx) -> Option<&Frontier> {
        self.run
            .objects
            .get(x.0 as usize)?
            .as_ref()
            .map(|o| &o.frontier)
    }

    /// Whether the execution's events so far repeat the plan's
    /// ([`Plan::expected_actions`](state::Plan::expected_actions)): each
    /// is then the event it was (the same action at the same place after
    /// the same events), and what processing it gave last time stands.
    fn replays_unchanged(&mut self, events: &[exec::Event]) -> bool {
        let expected = &self.plan.expected_actions;
        while let Some(ev) = events.get(self.run.repeated) {
            match expected.get(self.run.repeated) {
                // A place is mostly the very same static (compared by
                // address first: by value, it compares the file's path).
                Some(&(action, location))
                    if action == ev.action
                        && (std::ptr::eq(location, ev.location) || *location == *ev.location) =>
                {
                    self.run.repeated += 1;
                }
                _ => return false,
            }
        }
        true
    }

    /// Self-check: the events kept from the last execution
    /// ([`CurrentRun::rewind`](state::CurrentRun::rewind)) left the state
    /// that processing this execution's repetition of them gives.
    #[cfg(all(debug_assertions, any(test, feature = "self-check")))]
    fn check_kept_events(
        &mut self,
        events: &[exec::Event],
        kinds: impl Fn(ObjectIdx) -> (ObjectKind, Option<ThreadIdx>),
    ) {
        // Everything processing derives from the events, made comparable
        // (lists trimmed of empty tails, names canonical).
        let snapshot = |u: &Unfolding, run: &CurrentRun| {
            let objects: Vec<_> = run
                .objects
                .iter()
                .map(|o| {
                    o.as_ref().map(|o| {
                        let f = &o.frontier;
                        (
                            u.names.find(o.name),
                            f.write,
                            f.reads.clone(),
                            o.accesses.clone(),
                        )
                    })
                })
                .collect();
            let last_some = run
                .last
                .iter()
                .rposition(Option::is_some)
                .map_or(0, |i| i + 1);
            let threads = run
                .positions
                .iter()
                .rposition(|l| !l.is_empty())
                .map_or(0, |i| i + 1);
            let at: Vec<Option<usize>> = run.config.iter().map(|&e| run.pos.get(e)).collect();
            (
                (run.config.clone(), at, run.positions[..threads].to_vec()),
                run.last[..last_some].to_vec(),
                objects,
                run.first_pure,
            )
        };
        let kept = self.run.kept;
        // Processing again must not act on the tree: the node waiting for
        // its event waits for a later one.
        let awaiting = self.run.awaiting.take();
        let before = snapshot(&self.u, &self.run);
        self.run.rewind_events(0);
        while self.run.processed < kept {
            let ev = &events[self.run.processed];
            self.run.processed += 1;
            self.process(ev, &kinds);
        }
        let after = snapshot(&self.u, &self.run);
        self.run.awaiting = awaiting;
        assert!(
            before == after,
            "the events kept from the last execution are what processing them again gives"
        );
    }

    /// Adds the events the execution produced since the last call.
    fn sync(
        &mut self,
        events: &[exec::Event],
        kinds: impl Fn(ObjectIdx) -> (ObjectKind, Option<ThreadIdx>),
    ) {
        if let Some(seen) = &mut self.solo {
            let alone = events[*seen..]
                .iter()
                .all(|ev| ev.action.thread == ThreadIdx::MAIN && ev.action.kind != OpKind::Spawn);
            if alone {
                *seen = events.len();
                return;
            }
            self.solo = None;
        }
        if self.run.repeated < self.run.kept {
            // The events kept from the last execution stand only as far as
            // this one repeated them: the rest is processed anew (which
            // finds how it diverged, if it did).
            self.replays_unchanged(events);
            if self.run.repeated < self.run.kept {
                self.run.rewind_events(self.run.repeated);
                self.run.kept = self.run.repeated;
            }
        }
        self_check!(if self.run.kept > 0
            && !self.run.kept_checked
            && self.run.repeated >= self.run.kept
        {
            self.run.kept_checked = true;
            self.check_kept_events(events, &kinds);
        });
        while self.run.processed < events.len() {
            let ev = &events[self.run.processed];
            self.run.processed += 1;
            self.process(ev, &kinds);
        }
    }

    fn process(
        &mut self,
        ev: &exec::Event,
        kinds: impl Fn(ObjectIdx) -> (ObjectKind, Option<ThreadIdx>),
    ) {
        let t = ev.action.thread;
        let kind = ev.action.kind;
        let pred = self.last_of(t);
        let (name, preds) = match ev.action.object {
            Some(x) => {
                let name = self.bind(x, kinds(x), t, pred);
                let preds = self
                    .frontier_of(x)
                    .map(|f| f.immediate(kind.props().access))
                    .unwrap_or_default();
                (Some(name), preds)
            }
            None => (None, Immediate::default()),
        };
        let spawned =
            (kind == OpKind::Spawn).then(|| ThreadIdx(ev.value.unwrap_or_default() as u32));
        let here = Label {
            kind,
            location: ev.location,
            name,
        };
        let seen = self.labels.first_or_insert(t, pred, here);
        if (seen.kind, seen.location) != (kind, ev.location) && self.run.diverged.is_none() {
            self.run.diverged = Some(format!(
                "at step {} {t} performed {} at {}, but after the same history an earlier execution \
                 performed {} at {}: the model depends on something other than the schedule",
                self.run.config.len() + 1,
                kind.name(),
                ev.location,
                seen.kind.name(),
                seen.location
            ));
        }
        if kind.starts_pure_part() {
            self.run.first_pure.get_or_insert(self.run.config.len());
        }
        let extra = self.r_extras(t, kind, pred, &preds);
        // A replayed prefix meets the events it expects: checked in place
        // before any lookup (a mismatch is looked up, and reported below).
        let expected = self.plan.expected.get(self.run.config.len()).copied();
        let id = match expected.filter(|&e| self.u.has_key(e, t, pred, &preds, &extra)) {
            Some(id) => id,
            None => self.u.intern(t, kind, name, pred, &preds, &extra).0,
        };
        if self.tree.in_d.contains_key(&id) {
            self.run.hit_d = true;
        }
        self.u.set_modified(id, ev.modified);
        if let Some(n) = name {
            // The same action met under another name (a known event, or the
            // label) means both names denote this object.
            if let Some(known) = self.u.get(id).name {
                self.u.union_names(n, known);
            }
            if let Some(label) = seen.name {
                self.u.union_names(n, label);
            }
        }
        let i = self.run.config.len();
        if i < self.plan.expected.len()
            && self.plan.expected[i] != id
            && self.run.diverged.is_none()
        {
            self.run.diverged = Some(format!(
                "re-running the same schedule produced a different event at step {} ({t} {}): the model \
                 depends on something other than the schedule",
                i + 1,
                kind.name()
            ));
        }
        self.plan.guide.remove(&id);
        self.run.pos.insert(id, i);
        if self.run.positions.len() <= t.index() {
            self.run.positions.resize_with(t.index() + 1, Vec::new);
        }
        self.run.positions[t.index()].push((i, id));
        self.run.config.push(id);
        self.set_last(t, id);
        if let Some(child) = spawned {
            self.set_last(child, id);
            let spawned_at = &mut self.run.spawned_at;
            if spawned_at.len() <= child.index() {
                spawned_at.resize(child.index() + 1, None);
            }
            spawned_at[child.index()] = Some((i, id));
        }
        if let Some(x) = ev.action.object {
            let o = self.run.objects[x.0 as usize]
                .as_mut()
                .expect("bound above");
            let access = kind.props().access;
            o.frontier.record(id, access);
            o.accesses.push((i, id, access));
        }
        if let Some(n) = self.run.awaiting.take() {
            self.tree.nodes[n].event = Some(id);
        }
    }

    /// The event thread `t` would produce if it ran now, if already in `U`.
    fn would_be(&self, exec: &Execution, t: ThreadIdx) -> Option<EventId> {
        let action = exec.pending(t)?;
        let preds = match action.object {
            Some(x) => self
                .frontier_of(x)
                .map(|f| f.immediate(action.kind.props().access))
                .unwrap_or_default(),
            None => Immediate::default(),
        };
        let pred = self.last_of(t);
        let extra = self.r_extras(t, action.kind, pred, &preds);
        self.u.find(t, pred, &preds, &extra)
    }

    /// Adds the unit whose last event is `rep` to `D` (once more).
    fn add_to_d(&mut self, rep: EventId) {
        let count = self.tree.in_d.entry(rep).or_default();
        *count += 1;
        if *count == 1 {
            self.tree.d_units.push(rep);
            let t = self.u.get(rep).thread.index();
            let d_threads = &mut self.tree.d_threads;
            if d_threads.len() <= t {
                d_threads.resize(t + 1, 0);
            }
            d_threads[t] += 1;
        }
        let first = self.unit_first(rep);
        if first != rep {
            self.tree.d_by_first.entry(first).or_default().push(rep);
        }
    }

    /// Removes one addition of the unit `rep` from `D`.
    fn remove_from_d(&mut self, rep: EventId) {
        let Some(count) = self.tree.in_d.get_mut(&rep) else {
            return;
        };
        *count -= 1;
        if *count == 0 {
            self.tree.in_d.remove(&rep);
            // Searched from the end: nodes are popped deepest first, so
            // the unit leaving is mostly among the last added.
            let units = &mut self.tree.d_units;
            if let Some(i) = units.iter().rposition(|&u| u == rep) {
                units.swap_remove(i);
            }
            self.tree.d_threads[self.u.get(rep).thread.index()] -= 1;
        }
        let first = self.unit_first(rep);
        if let Some(reps) = self.tree.d_by_first.get_mut(&first) {
            if let Some(i) = reps.iter().position(|&r| r == rep) {
                reps.swap_remove(i);
            }
            if reps.is_empty() {
                self.tree.d_by_first.remove(&first);
            }
        }
    }

    /// Whether the unit thread `t` would run now is in `D`.
    fn next_unit_in_d(&self, exec: &Execution, t: ThreadIdx) -> bool {
        // A unit is one thread's events: without a unit of `t` in `D` the
        // lookup of its next event is not needed.
        if self.tree.d_threads.get(t.index()).map_or(true, |&n| n == 0) {
            return false;
        }
        match self.would_be(exec, t) {
            None => false,
            Some(e) if self.u.get(e).kind.starts_pure_part() => self.unit_in_d(e),
            Some(e) => self.tree.in_d.contains_key(&e),
        }
    }
}

impl Scheduler for Por {
    fn choose_weak(&mut self, _point: &WeakPoint<'_>) -> Result<usize, Stop> {
        // The unfolding explores sequentially consistent executions only.
        crate::exec::error::internal_error!("the partial-order explorer ran under RC11")
    }

    fn choose(&mut self, point: &ChoicePoint<'_>) -> Result<ThreadIdx, Stop> {
        let exec = point.execution;
        if exec.waited_on_several() {
            self.unsupported = Some(several_objects(exec));
            return Err(Stop::Redundant);
        }
        if let Some(spin) = exec.waited_alone() {
            // An event that no object orders: only interleavings can.
            self.unsupported = Some(crate::explore::alone_spin(spin));
            return Err(Stop::Redundant);
        }
        if let Some(spin) = exec.repeated() {
            // Only a search of every interleaving may end an execution at a
            // repeated state.
            self.unsupported = Some(crate::explore::repeated_state(spin));
            return Err(Stop::Redundant);
        }
        let step = self.run.steps;
        if self.solo.is_none()
            && step < self.plan.replay.len()
            && self.replays_unchanged(exec.events())
        {
            // A replayed step whose events so far are the plan's: what
            // processing them gave is kept (`CurrentRun::rewind`), and the
            // step is answered without touching `U`. Processing them step by
            // step redid work and evicted the executor's code from the
            // instruction cache.
            let t = self.plan.replay[step];
            if point.enabled.contains(&t) {
                self.run.steps += 1;
                self.run.chosen.push(t);
                return Ok(t);
            }
            // Not enabled: diverged; the events say how (below).
        }
        self.sync(exec.events(), |x| {
            (exec.object_kind(x), exec.object_owner(x))
        });
        if let Some(message) = self.run.diverged.take() {
            return Err(Stop::Diverged(message));
        }
        if self.run.hit_d {
            return Err(Stop::Redundant);
        }
        if self.solo.is_some() {
            if let &[only] = point.enabled {
                // One thread and an empty `D`: nothing to choose or record.
                self.run.steps += 1;
                self.run.chosen.push(only);
                return Ok(only);
            }
            // Not expected with one thread; the usual path, with the
            // events in `U`.
            self.solo = None;
            self.sync(exec.events(), |x| {
                (exec.object_kind(x), exec.object_owner(x))
            });
        }
        self.run.steps += 1;
        if let Some(&t) = self.plan.replay.get(step) {
            if !point.enabled.contains(&t) {
                return Err(Stop::Diverged(format!(
                    "re-running the same schedule, {t} could not run at step {}: the model depends on \
                     something other than the schedule",
                    step + 1
                )));
            }
            self.run.chosen.push(t);
            return Ok(t);
        }
        let guided = if self.plan.guide.is_empty() {
            None
        } else {
            let guided = point.enabled.iter().copied().find(|&t| {
                self.would_be(exec, t).is_some_and(|e| {
                    self.plan.guide.contains(&e)
                        && (!self.u.get(e).kind.starts_pure_part()
                            || (self.guided_part_ready(t, e) && !self.unit_in_d(e)))
                })
            });
            if guided.is_none() {
                if self
                    .plan
                    .guide
                    .iter()
                    .any(|&g| self.u.get(g).pure_of.is_some())
                {
                    // A pure part ran differently from what the alternative
                    // assumed (its completion was unknown): go on without the
                    // guide; completeness does not depend on it.
                    self.plan.guide.clear();
                    self.stats.abandoned_guides += 1;
                } else {
                    return Err(Stop::Diverged(
                        "kase internal error: no event of the alternative being explored can run; please \
                         report this with the model"
                            .into(),
                    ));
                }
            }
            guided
        };
        let choice = if let Some(t) = guided {
            t
        } else {
            // Line 7: any enabled event not in D; keep the current thread
            // running when possible (fewer switches in reports).
            let not_in_d = |t: ThreadIdx| !self.next_unit_in_d(exec, t);
            let current = Some(point.current).filter(|t| point.enabled.contains(t) && not_in_d(*t));
            match current.or_else(|| point.enabled.iter().copied().find(|&t| not_in_d(t))) {
                Some(t) => t,
                None => {
                    // Line 5: every way on is in D. At a node's own step the
                    // node is done (its right branch returns at once).
                    if let Some(node) = self.tree.nodes.last_mut().filter(|n| n.step == step) {
                        node.event = None;
                    }
                    return Err(Stop::Redundant);
                }
            }
        };
        if point.enabled.len() > 1 {
            let redeciding = self.tree.nodes.last().is_some_and(|n| n.step == step);
            if !redeciding {
                let nodes = &self.tree.nodes;
                let source = nodes.last().and_then(|last| {
                    (!last.added.is_empty())
                        .then(|| nodes.len() - 1)
                        .or(last.source)
                });
                if self.tree.spikes.len() == self.tree.nodes.len() {
                    self.tree.spikes.push(Default::default());
                }
                self.tree.nodes.push(Node {
                    step,
                    config_len: self.run.config.len(),
                    event: None,
                    added: Vec::new(),
                    source,
                    explore: point.execution.exploring(),
                });
            }
            self.run.awaiting = Some(self.tree.nodes.len() - 1);
        }
        self.run.chosen.push(choice);
        Ok(choice)
    }
}

impl Por {
    /// The first half of [`Explorer::advance`]: takes the finished execution
    /// into `U` (its events and their conflicting extensions, line 4 of
    /// Algorithm 1), ready for the search for alternatives.
    fn absorb(&mut self, outcome: &Outcome) -> Result<(), String> {
        self.sync(&outcome.events, |x| {
            (outcome.objects[x.0 as usize], outcome.owners[x.0 as usize])
        });
        if let Some(message) = self.run.diverged.take() {
            return Err(message);
        }
        // The choice points kept from earlier executions must all have been
        // passed again: a model that ends sooner on the same schedule is
        // nondeterministic.
        let deepest = self.tree.nodes.last().map_or(0, |n| n.step);
        if outcome.fault.is_none() && self.run.chosen.len() < deepest {
            return Err(format!(
                "the model finished after {} choice points, but the same schedule earlier had at \
                 least {}: the model depends on something other than the schedule",
                self.run.chosen.len(),
                deepest
            ));
        }
        if outcome.redundant || self.run.hit_d {
            self.stats.redundant += 1;
        }
        if self.solo.is_some() {
            // One thread throughout: no choice point, so no alternative.
            // `U` would hold just these events (one thread's events have no
            // other placement).
            self.stats.peak_events = outcome.events.len();
            return Ok(());
        }
        self.add_extensions(
            &outcome.events,
            &outcome.pending,
            &outcome.objects,
            &outcome.owners,
        );
        self.stats.peak_events = self.stats.peak_events.max(self.u.len());
        Ok(())
    }
}

/// The spin the unfolding cannot order, in words: who spins where, over
/// what.
pub(crate) fn several_objects(exec: &Execution) -> String {
    let spins: Vec<String> = exec
        .spinning()
        .into_iter()
        .filter(|(_, objects)| objects.len() > 1)
        .map(|(t, objects)| {
            let objects: Vec<String> = objects
                .iter()
                .map(|&o| exec.object_kind(o).label(o))
                .collect();
            let at = exec
                .thread(t)
                .pending
                .map(|p| format!(" at {}", p.location))
                .unwrap_or_default();
            format!("{t} spins{at} waiting for any of {}", objects.join(", "))
        })
        .collect();
    format!(
        "{}: a yield that waits for any of several objects to change",
        spins.join("; ")
    )
}

impl Explorer for Por {
    fn advance(&mut self, outcome: &Outcome) -> Result<bool, String> {
        if self.unsupported.is_some() {
            return Ok(false);
        }
        if let Some(Fault::Divergence { message }) = &outcome.fault {
            // The execution left the schedule it was given: the tree no
            // longer describes it, so nothing can be planned from it.
            return Err(message.clone());
        }
        self.absorb(outcome)?;
        let mut pruned = false;
        while let Some(node) = self.tree.nodes.last() {
            // A node without an event: its configuration had nothing to run
            // outside D (a redundant stop right there).
            let unit = node.event.map(|e| self.unit_rep(e));
            let explore = node.explore;
            // Line 11 asks for an alternative to D ∪ {e}: e joins D first (so
            // `startable` sees it), and leaves again if there is none.
            if let Some(unit) = unit {
                self.add_to_d(unit);
            }
            let mut clue = unit.and_then(|unit| self.alternative(self.tree.nodes.len() - 1, unit));
            if !explore && clue.is_some() {
                // The model asked for no other way here (loom's controls):
                // the right branch is left unexplored.
                self.cut = true;
                clue = None;
            }
            if self.budget.expired() {
                // Out of time while searching: the state is half-updated,
                // but the exploration ends here, reported incomplete.
                return Ok(false);
            }
            if clue.is_none() {
                if let Some(unit) = unit {
                    self.remove_from_d(unit);
                }
            }
            if let Some(clue) = clue {
                let unit = unit.expect("an alternative has its unit");
                let node = self.tree.nodes.last_mut().expect("non-empty");
                node.added.push(unit);
                let (step, config_len) = (node.step, node.config_len);
                self.plan.replay = self.run.chosen[..step].to_vec();
                self.plan.expected = self.run.config[..config_len].to_vec();
                self.plan.expected_actions.clear();
                self.plan.expected_actions.extend(
                    outcome.events[..config_len]
                        .iter()
                        .map(|ev| (ev.action, ev.location)),
                );
                self.plan.guide = clue;
                self.plan.placed = if pruned {
                    0
                } else {
                    self.closed_prefix(config_len)
                };
                // The next execution replays the first `config_len` events:
                // what processing them gave is kept, not computed again.
                self.run.rewind(config_len);
                return Ok(true);
            }
            let node = self.tree.nodes.pop().expect("non-empty");
            self.tree.spikes[self.tree.nodes.len()].get_mut().reset();
            let children = node.added.len() + usize::from(node.event.is_some());
            self.shape.finished(self.tree.nodes.len(), children);
            for e in node.added {
                self.remove_from_d(e);
            }
            pruned |= self.maybe_prune(node.config_len);
        }
        Ok(false)
    }

    fn redundant(&self) -> u64 {
        self.stats.redundant
    }

    fn reduces(&self) -> bool {
        true
    }

    fn unsupported(&self) -> Option<String> {
        self.unsupported.clone()
    }

    fn cut(&self) -> bool {
        self.cut
    }

    fn set_deadline(&mut self, deadline: Option<std::time::Instant>) {
        self.budget.set(deadline);
    }

    fn interrupted(&self) -> bool {
        self.budget.was_hit()
    }

    fn peak_events(&self) -> Option<usize> {
        Some(self.stats.peak_events)
    }

    fn explored(&self) -> Option<f64> {
        // After `advance`, each node's added units are the branches behind
        // it; how many it will have is known only for finished nodes.
        Some(super::estimate::explored(
            self.tree.nodes.iter().enumerate().map(|(depth, node)| {
                let done = node.added.len();
                (done, self.shape.width(depth, done))
            }),
        ))
    }
}

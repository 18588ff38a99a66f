//! The revisit explorer: one execution per consistent RC11 execution graph
//! (TruSt: Kokologiannakis, Marmanis, Gladstein, Vafeiadis, POPL 2022;
//! WEAK-MEMORY.md, "How to explore").
//!
//! Each execution rebuilds a *plan* — a graph, as the order its events were
//! added — and then extends it, adding one event at a time from the lowest
//! thread that can run; a new read reads the latest store, a new store goes
//! latest. Afterwards the execution's one-step alternatives become plans
//! of their own (`added.rs`): the other stores a new read could read, the
//! other places a new store could take, and the *backward revisits* of a
//! new store — an earlier read of its location that is not in its `porf`
//! prefix reads it instead, and what was added after that read and is not
//! in the prefix is deleted, which is allowed only if every deleted event
//! was added maximally. Branches share nothing: the explorer keeps a stack
//! of plans, each the size of one graph.
//!
//! Replaying a plan runs its events in the order they were added, except
//! that a revisited read waits for the store it reads, and a spin's yield
//! for the write it waits for. Stores and reads are
//! named by `(thread, index in thread)`, stable across executions.
//!
//! The programs it takes are those of atomics, fences, mutexes (`lock` and
//! unlock: each reads the mutex's previous operation, and a new lock may
//! take an earlier one's place), spawn, join, tracked cells and yields. At
//! the first `try_lock`, condvar, channel or other shim object, or a spin
//! that waits for any of several locations to change (no one write woke
//! it, so its graph cannot say which must come before it), it stops, and
//! the pipeline explores again with the canonical reduction
//! (`canonical.rs`), which orders those too.

mod added;
mod plan;

use std::collections::{BTreeMap, HashMap};

use crate::exec::{
    Action, ChoicePoint, Execution, ObjectIdx, ObjectKind, OpKind, Outcome, Scheduler, Stop,
    ThreadIdx, WeakPoint,
};

use super::Explorer;
use added::Grown;
use plan::{Key, Offered, Plan};

/// The revisit explorer.
#[derive(Default)]
pub(crate) struct Revisit {
    /// Plans not explored yet.
    stack: Vec<Plan>,
    /// Their steps, and the most they ever were.
    held: usize,
    peak: usize,
    /// The plan of the running execution.
    plan: Plan,
    /// Its steps, by key.
    planned: HashMap<Key, usize>,
    /// This execution so far: each event's key, by event index.
    keys: Vec<Key>,
    /// Events per thread so far.
    counts: Vec<u32>,
    /// The event index of each key that ran.
    ran: HashMap<Key, usize>,
    /// Per object, the planned stores that ran: event index by rank.
    stores: HashMap<ObjectIdx, BTreeMap<u32, usize>>,
    /// Threads with planned steps: `0..plan_threads`.
    plan_threads: usize,
    /// The first step not known to have run.
    cursor: usize,
    /// The object of the running thread's pending access.
    pending_object: Option<ObjectIdx>,
    /// The options offered to new accesses, by key.
    offered: HashMap<Key, Offered>,
    /// What the explorer cannot take, if the model did it.
    unsupported: Option<String>,
    /// Plans left out at the model's request (loom's exploration
    /// controls).
    cut: bool,
    /// Executions that ended early.
    redundant: u64,
    /// The exploration's deadline, checked while computing alternatives.
    budget: super::budget::Budget,
}

impl Revisit {
    /// Catches up with the events of `exec` not seen yet.
    fn scan(&mut self, events: &[crate::exec::Event]) {
        for (i, event) in events.iter().enumerate().skip(self.keys.len()) {
            let t = event.action.thread;
            if self.counts.len() <= t.index() {
                self.counts.resize(t.index() + 1, 0);
            }
            let key = (t, self.counts[t.index()]);
            self.counts[t.index()] += 1;
            self.keys.push(key);
            self.ran.insert(key, i);
            if let (Some(&step), Some(object)) = (self.planned.get(&key), event.action.object) {
                if let Some(rank) = self.plan.steps[step].rank {
                    self.stores.entry(object).or_default().insert(rank, i);
                }
            }
        }
    }

    fn count(&self, t: ThreadIdx) -> u32 {
        self.counts.get(t.index()).copied().unwrap_or(0)
    }

    fn has_run(&self, key: Key) -> bool {
        self.count(key.0) > key.1
    }

    /// The thread of the first planned step that can run now, `None` when
    /// the plan ran out; an error if steps are left but none can run.
    fn planned_thread(&mut self, point: &ChoicePoint<'_>) -> Result<Option<ThreadIdx>, Stop> {
        while self.cursor < self.plan.steps.len() && self.has_run(self.plan.steps[self.cursor].key)
        {
            self.cursor += 1;
        }
        if self.cursor == self.plan.steps.len() {
            return Ok(None);
        }
        // The steps that can be next are each thread's next one; taking
        // them in plan order is scanning the plan from the cursor, without
        // passing over every step that ran already (which made a long
        // replay quadratic).
        let mut next: Vec<usize> = (0..self.plan_threads)
            .filter_map(|t| {
                let t = ThreadIdx(t as u32);
                self.planned.get(&(t, self.count(t))).copied()
            })
            .filter(|&i| i >= self.cursor)
            .collect();
        next.sort_unstable();
        for step in next.into_iter().map(|i| &self.plan.steps[i]) {
            let (t, _) = step.key;
            if let Some(Some(source)) = step.reads {
                if !self.has_run(source) {
                    continue; // a revisited read: waits for its store
                }
            }
            if !point.enabled.contains(&t) {
                // A spin's yield waits for a write to what it read, which
                // may come later than in the run that added it (its next
                // read was revisited): the write goes first.
                let waits = point
                    .execution
                    .pending(t)
                    .is_some_and(|a| a.kind == OpKind::Yield && a.object.is_some());
                if waits {
                    continue;
                }
                return Err(Stop::Diverged(format!(
                    "re-running an execution graph, {t} could not take its next planned step: the \
                     model depends on something other than the schedule"
                )));
            }
            return Ok(Some(t));
        }
        Err(Stop::Diverged(
            "re-running an execution graph, no thread could take its next planned step: the model \
             depends on something other than the schedule"
                .to_owned(),
        ))
    }

    /// Forgets the execution, for the next one.
    fn reset(&mut self) {
        self.keys.clear();
        self.counts.clear();
        self.ran.clear();
        self.stores.clear();
        self.cursor = 0;
        self.pending_object = None;
        self.offered.clear();
    }

    fn start(&mut self, plan: Plan) {
        self.plan_threads = plan
            .steps
            .iter()
            .map(|step| step.key.0.index() + 1)
            .max()
            .unwrap_or(0);
        self.planned = plan
            .steps
            .iter()
            .enumerate()
            .map(|(i, step)| (step.key, i))
            .collect();
        self.plan = plan;
    }
}

/// Why `action` is outside what the revisit explorer takes, if it is.
fn unsupported(exec: &Execution, action: Action) -> Option<String> {
    let object = action.object.map(|o| exec.object_kind(o));
    let supported = match action.kind {
        OpKind::Load | OpKind::Store | OpKind::Rmw | OpKind::CompareExchange => {
            object == Some(ObjectKind::Atomic)
        }
        OpKind::Fence | OpKind::Spawn | OpKind::Join | OpKind::Exit => true,
        OpKind::Lock | OpKind::Unlock => object == Some(ObjectKind::Mutex),
        OpKind::Yield => matches!(object, None | Some(ObjectKind::Atomic)),
        OpKind::DataRead | OpKind::DataWrite => object == Some(ObjectKind::Cell),
        _ => false,
    };
    (!supported).then(|| match object {
        Some(kind) => format!("{:?} on a {kind:?}", action.kind),
        None => format!("{:?}", action.kind),
    })
}

impl Scheduler for Revisit {
    fn choose(&mut self, point: &ChoicePoint<'_>) -> Result<ThreadIdx, Stop> {
        let exec = point.execution;
        if let Some(spin) = exec.waited_alone() {
            // Its graphs do not say when another thread runs.
            self.unsupported = Some(crate::explore::alone_spin(spin));
            return Err(Stop::Redundant);
        }
        if exec.waited_on_several() {
            // Its graphs do not say which write woke the yield: a revisit
            // could move that write after it, and the plan could not be
            // replayed (sharded-slab's `concurrent_remove_remote_and_reuse`).
            self.unsupported = Some(crate::explore::por::several_objects(exec));
            return Err(Stop::Redundant);
        }
        self.scan(exec.events());
        let chosen = match self.planned_thread(point)? {
            Some(t) => t,
            None => point.enabled[0],
        };
        let action = exec.pending(chosen);
        if let Some(why) = action.and_then(|a| unsupported(exec, a)) {
            self.unsupported = Some(why);
            return Err(Stop::Redundant);
        }
        self.pending_object = action.and_then(|a| a.object);
        Ok(chosen)
    }

    fn choose_weak(&mut self, point: &WeakPoint<'_>) -> Result<usize, Stop> {
        let key = (point.thread, self.count(point.thread));
        let Some(&step) = self.planned.get(&key) else {
            if !point.explore {
                // The model asked for no other way here (loom's controls).
                self.cut |= point.options > 1;
                return Ok(0);
            }
            self.offered.insert(
                key,
                Offered {
                    sources: point.sources.to_vec(),
                    after: point.after.to_vec(),
                },
            );
            return Ok(0);
        };
        let step = &self.plan.steps[step];
        let wanted = match (step.reads, step.rank) {
            (Some(source), _) => {
                let numbered = match source {
                    None => 0,
                    Some(key) => self.ran.get(&key).map_or(usize::MAX - 1, |&e| e + 1),
                };
                point.sources.iter().position(|&s| s == numbered)
            }
            (None, Some(rank)) => {
                let before = self
                    .pending_object
                    .and_then(|o| self.stores.get(&o))
                    .and_then(|ran| ran.range(..rank).next_back())
                    .map_or(0, |(_, &event)| event + 1);
                (0..point.options)
                    .find(|&k| point.sources[k] == usize::MAX && point.after[k] == before)
            }
            (None, None) => Some(0),
        };
        match wanted {
            Some(k) => Ok(k),
            None => {
                // Every plan is a consistent graph: a bug if it happens.
                debug_assert!(
                    false,
                    "the executor did not offer a planned access: {key:?}"
                );
                Err(Stop::Redundant)
            }
        }
    }
}

impl Explorer for Revisit {
    fn advance(&mut self, outcome: &Outcome) -> Result<bool, String> {
        self.scan(&outcome.events);
        self.redundant += u64::from(outcome.redundant);
        if self.unsupported.is_some() {
            return Ok(false);
        }
        if let Some(grown) = Grown::new(outcome, &self.keys, &self.plan, &self.planned) {
            let (mut plans, cut) =
                grown.alternatives(&self.offered, &self.plan.revisits_of, &self.budget);
            self.cut |= cut;
            if self.budget.was_hit() {
                // Out of time while computing them: the exploration ends
                // here, reported incomplete.
                return Ok(false);
            }
            plans.reverse();
            self.held += plans.iter().map(|plan| plan.steps.len()).sum::<usize>();
            self.peak = self.peak.max(self.held);
            self.stack.append(&mut plans);
        }
        self.reset();
        match self.stack.pop() {
            Some(plan) => {
                self.held -= plan.steps.len();
                self.start(plan);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    fn redundant(&self) -> u64 {
        self.redundant
    }

    fn set_deadline(&mut self, deadline: Option<std::time::Instant>) {
        self.budget.set(deadline);
    }

    fn interrupted(&self) -> bool {
        self.budget.was_hit()
    }

    fn reduces(&self) -> bool {
        true
    }

    fn cut(&self) -> bool {
        self.cut
    }

    fn unsupported(&self) -> Option<String> {
        self.unsupported.clone()
    }

    fn peak_events(&self) -> Option<usize> {
        Some(self.peak)
    }
}

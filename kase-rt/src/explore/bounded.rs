//! `Strategy::Por` under a preemption bound: dynamic partial-order
//! reduction (Flanagan and Godefroid, POPL 2005) with the conservative
//! backtracking points of bounded partial-order reduction (Coons,
//! Musuvathi and McKinley, OOPSLA 2013).
//!
//! The search is the bounded DFS's (`exhaustive.rs`: the same first
//! choices, the same preemption count, every RC11 choice of store), but a
//! choice point tries another thread only when a race asks for it. At
//! each new state, for every thread `p` and the operation it waits to
//! perform, the last earlier step of another thread that is dependent
//! with it (same object, not both reads, `exec/dependence.rs`; under RC11
//! two atomic accesses only from a read to a later write) and does not
//! come before `p` (the search's own dependence clocks over the steps,
//! by the same relation) is a race: `p` runs instead
//! at the state before that event (every enabled thread if `p` was not
//! enabled there). A backtracking point that would exceed the bound is
//! dropped, which alone would lose executions within it: the bound makes
//! independent steps dependent (running `p` earlier inside a block of
//! another thread's steps costs a preemption where running it at the
//! block's start may not). So each race also adds `p` at the last context
//! switch before the racing event, where the reversed order may fit the
//! bound. The bounded oracle checks it on generated programs
//! (`tests/exploration/differential.rs`): the same failures and outcomes
//! for bounds 0–3.
//!
//! A spin over several objects is taken: its waiting thread is simply not
//! enabled, and a race at a state where it was not asks for every enabled
//! thread there. A spin that waits for another thread to run
//! (`exec/spin/alone.rs`) makes the pipeline explore again with
//! [`BoundedDpor::ordering_yields`]: which event ends that wait is no
//! object's dependence, so every yield is then ordered with every step
//! (`Yields`; POR-DESIGN.md has the argument).

use crate::exec::clock::VectorClock;
use crate::exec::dependence::Access;
use crate::exec::{
    Action, ByObject, ChoicePoint, Event, ObjectIdx, OpKind, Outcome, Scheduler, Stop, ThreadIdx,
    WeakPoint,
};

use super::replay::last_thread;
use super::Explorer;

/// A thread choice point of the current path.
struct Threads {
    enabled: Vec<ThreadIdx>,
    /// What each enabled thread was about to do (to notice a re-run that
    /// differs).
    pending: Vec<Option<Action>>,
    /// The thread that ran last and whether it could go on: choosing
    /// another one then costs a preemption.
    last: ThreadIdx,
    can_continue: bool,
    /// Preemptions before this choice.
    preemptions: usize,
    /// The thread explored now.
    chosen: ThreadIdx,
    /// Threads races asked for, not explored yet.
    backtrack: Vec<ThreadIdx>,
    /// Threads explored here, the chosen one included.
    done: Vec<ThreadIdx>,
    /// The model wanted this choice explored (loom's exploration
    /// controls): if not, races ask nothing of it.
    explore: bool,
}

/// One choice point of the current path, and how many events had
/// happened when its thread or access was chosen (the states up to there
/// stay the same when it changes).
struct Frame {
    at: usize,
    kind: Kind,
    /// The search's own state at this choice point, restored when a later
    /// execution replays the choices up to here (`Saved`).
    saved: Saved,
}

/// What [`BoundedDpor`] knew at a choice point, for the executions that
/// replay the choices up to it: they restore it there instead of
/// recomputing it from their first event (the steps' clocks, the objects'
/// accesses, the sleepers). The steps and the per-object lists only
/// grow within an execution, so they are kept and cut back to their
/// lengths here; the objects' clocks are restored from an undo log.
///
/// What the frame itself gives is not saved: the events scanned and checked
/// for sleepers then are the frame's `at`, and `depth` is the frame's index
/// (for an access's way, one more: its state is the one after the choice).
struct Saved {
    /// `preemptions` at the point (for a thread choice, before it; for an
    /// access's way, after).
    preemptions: usize,
    steps: usize,
    registered: usize,
    undo: usize,
    thread_clocks: Vec<VectorClock>,
    /// With `Yields`: how many yield steps, and the two clocks.
    yields: Option<(usize, VectorClock, VectorClock)>,
    sleep: Vec<Sleeper>,
    /// How many objects were strict (`BoundedDpor::strict`) when it was
    /// saved: the state restored follows the dependence of that time, which
    /// a later mark of an index some other execution's object had (never
    /// this prefix's own objects, marked before their first access) does
    /// not change. (Read by the self-check of test builds.)
    #[cfg(all(debug_assertions, any(test, feature = "self-check")))]
    strict_marked: usize,
}

enum Kind {
    Threads(Threads),
    /// Under RC11, how an atomic access goes: every option in turn, or
    /// only those `allowed` (a load woken by stores reads one of them).
    Weak {
        options: usize,
        next: usize,
        allowed: Option<Vec<usize>>,
    },
}

/// A thread put to sleep at a choice point (Godefroid's sleep sets): its
/// pending operation (`sleeps`) ran first in an earlier branch there, and
/// until another thread's step depends on it, running it now gives an
/// execution equivalent to one of that branch, so it is not run unless a
/// race asks for it. POR-DESIGN.md ("Sleep sets under a
/// preemption bound") has the argument, and why only the thread that could
/// continue there sleeps: moving its step back must not cost preemptions.
#[derive(Clone)]
struct Sleeper {
    thread: ThreadIdx,
    action: Action,
    /// Events before the choice point it fell asleep at: stores from there
    /// on are new to it.
    since: usize,
    /// Under RC11, a load woken only by stores to its location: it runs
    /// again, but reading a store from before `since` repeats the earlier
    /// branch's graph, so it reads one of the new ones.
    woken_by_stores: bool,
}

/// What another thread's event does to a sleeper.
enum Wake {
    No,
    /// A store the sleeping load may now read (RC11).
    ByStore,
    Fully,
}

/// One scheduling step of the running execution: the thread chosen when
/// `events` events had happened (its operation is event `events`) and the
/// thread choice point it was, if it was one.
struct Step {
    events: usize,
    thread: ThreadIdx,
    frame: Option<usize>,
    /// Another thread ran the event before: a context switch.
    switch: bool,
    /// The last step up to this one that is a context switch.
    last_switch: Option<usize>,
    /// Which steps of each thread come before it or are it, by the
    /// dependence this search reorders (set when its event is seen).
    clock: VectorClock,
}

/// Per object, the joined clocks of the steps that touched it, by how:
/// what a new step on it depends on.
#[derive(Clone, Default, PartialEq, Debug)]
struct Touched {
    /// Steps that may write it, and that only read it (RC11's atomic
    /// accesses aside: the `atomic_*` clocks hold them).
    writes: VectorClock,
    reads: VectorClock,
    /// Under RC11, atomic accesses that read (loads, read-modify-writes,
    /// compare-exchanges); those that write, and loads alone.
    atomic_reads: VectorClock,
    atomic_writes: VectorClock,
    atomic_loads: VectorClock,
}

/// One of a [`Touched`]'s clocks.
#[derive(Clone, Copy)]
enum Field {
    Writes,
    Reads,
    AtomicReads,
    AtomicWrites,
    AtomicLoads,
}

impl Touched {
    fn field(&mut self, field: Field) -> &mut VectorClock {
        match field {
            Field::Writes => &mut self.writes,
            Field::Reads => &mut self.reads,
            Field::AtomicReads => &mut self.atomic_reads,
            Field::AtomicWrites => &mut self.atomic_writes,
            Field::AtomicLoads => &mut self.atomic_loads,
        }
    }
}

/// The bounded reduction.
pub(crate) struct BoundedDpor {
    bound: usize,
    /// Under RC11: atomics' order matters only from a read to a write.
    weak: bool,
    frames: Vec<Frame>,
    depth: usize,
    preemptions: usize,
    /// The bound dropped a backtracking point.
    pruned: bool,
    /// A race asked for a choice the model turned exploring off at.
    cut: bool,
    redundant: u64,
    unsupported: Option<String>,
    /// The model was given up for a spin that waits for another thread to
    /// run, which ordering yields with every step takes.
    alone_spin_unordered: bool,
    /// The running execution's steps.
    steps: Vec<Step>,
    /// Per object, the steps whose operation touched it, in order, with
    /// how; filled as their events appear.
    accesses: ByObject<Vec<(usize, Access)>>,
    /// Steps whose event is in `accesses` already.
    registered: usize,
    /// Per object, how steps touched it.
    touched: ByObject<Touched>,
    /// The clocks of `touched` each registered step changed, as they were
    /// before it, most recent last: how a replay restores them (`Saved`).
    undo: Vec<(ObjectIdx, Field, VectorClock)>,
    /// An execution replaying the choices up to this frame: until it gets
    /// there, the choices are made from the frames alone, and there the
    /// frame's `Saved` state is restored.
    restore_at: Option<usize>,
    /// Per thread, the clock of its last step (or of its spawner when it
    /// was spawned).
    thread_clocks: Vec<VectorClock>,
    /// Events seen by `scan`.
    scanned: usize,
    /// States with at most this many events were analysed in an earlier
    /// execution of the same prefix.
    analysed: Option<usize>,
    /// A spin waits for another thread to run (`exec/spin/alone.rs`):
    /// every yield depends on every other step (`Yields`).
    yields: Option<Yields>,
    /// The running execution's sleepers, and the events they were checked
    /// against.
    sleep: Vec<Sleeper>,
    slept_upto: usize,
    /// The step just chosen is a load woken by stores: the events before
    /// this one are old to it.
    reads_new_from: Option<usize>,
    /// Scratch for the threads' pending operations at a choice point.
    pending_buf: Vec<Action>,
    /// By object index: the object's accesses are ordered both ways even
    /// under RC11 (`Execution::mark_strict`, kase's `Once` state, whose
    /// fast path reads the latest store only). Kept across executions: an
    /// index marked in one is at worst ordered more strictly in another.
    strict: Vec<bool>,
    /// How many indices `strict` marks.
    strict_marked: usize,
    /// By event index, under RC11: for an atomic read of this execution,
    /// the event index plus one of the store it read (0: the initial
    /// value, or no edge); `scan` makes the read depend on that store.
    /// Entries of other events, and past this execution's, are left from
    /// earlier executions: only reads' entries are looked up.
    read_from: Vec<usize>,
}

/// Whether accesses to `object` follow RC11's dependence (`weak` and not
/// a strict object).
fn weak_at(strict: &[bool], weak: bool, object: Option<ObjectIdx>) -> bool {
    weak && !object.is_some_and(|o| strict.get(o.0 as usize).copied().unwrap_or(false))
}

/// For spins that wait for another thread to run: whether an iteration
/// between two yields ran alone, and when a waiting thread may go on,
/// depend on where the other threads' steps fall between its yields. So
/// every yield is ordered with every step (a write of one object all steps
/// read), which makes the rule's decisions a function of the trace.
#[derive(Default)]
struct Yields {
    /// The steps that are yields, in order.
    steps: Vec<usize>,
    /// The joined clocks of the yields, and of all steps.
    yields_clock: VectorClock,
    all_clock: VectorClock,
}

impl BoundedDpor {
    /// At most `bound` preemptions per execution; `weak`: atomics follow
    /// RC11.
    pub(crate) fn new(bound: usize, weak: bool) -> Self {
        BoundedDpor {
            bound,
            weak,
            strict: Vec::new(),
            strict_marked: 0,
            frames: Vec::new(),
            depth: 0,
            preemptions: 0,
            pruned: false,
            cut: false,
            redundant: 0,
            unsupported: None,
            alone_spin_unordered: false,
            steps: Vec::new(),
            accesses: ByObject::default(),
            registered: 0,
            touched: ByObject::default(),
            undo: Vec::new(),
            restore_at: None,
            thread_clocks: Vec::new(),
            scanned: 0,
            analysed: None,
            yields: None,
            sleep: Vec::new(),
            slept_upto: 0,
            reads_new_from: None,
            pending_buf: Vec::new(),
            read_from: Vec::new(),
        }
    }

    /// The reduction for models whose spins wait for another thread to run:
    /// yields are ordered with every step (`Yields`).
    pub(crate) fn ordering_yields(mut self) -> Self {
        self.yields = Some(Yields::default());
        self
    }

    /// Catches up with `events`: each step's clock and the objects the
    /// steps' operations touched. Only steps carry dependence: the other
    /// events (a cell's access, a spawn) belong to their thread's step
    /// and are never reordered on their own.
    fn scan(&mut self, events: &[Event]) {
        for (i, event) in events.iter().enumerate().skip(self.scanned) {
            let t = event.action.thread;
            if self.thread_clocks.len() <= t.index() {
                self.thread_clocks.resize(t.index() + 1, VectorClock::new());
            }
            let step = self.registered;
            if self
                .steps
                .get(step)
                .is_some_and(|s| s.events == i && s.thread == t)
            {
                self.registered += 1;
                // The thread's clock moves in place; the step keeps a copy
                // in the clock it already has (no allocation, no drop).
                let clock = &mut self.thread_clocks[t.index()];
                clock.set(t, clock.get(t) + 1);
                let yields = event.action.kind == OpKind::Yield;
                if let Some(order) = &self.yields {
                    clock.join(if yields {
                        &order.all_clock
                    } else {
                        &order.yields_clock
                    });
                }
                if let Some(object) = event.action.object {
                    let weak = weak_at(&self.strict, self.weak, Some(object));
                    if weak && reads_atomically(event.action.kind) {
                        // The read comes after the store it read (and so
                        // after what that store came after): it and its
                        // thread's later steps are what they are only
                        // after that store.
                        let source = self.read_from.get(i).copied().unwrap_or(0);
                        if let Some(store) = source.checked_sub(1) {
                            let steps = &self.steps[..step];
                            if let Ok(s) = steps.binary_search_by_key(&store, |s| s.events) {
                                clock.join(&steps[s].clock);
                            }
                        }
                    }
                    let touched = self.touched.entry(object);
                    let undo = &mut self.undo;
                    touch(touched, event.action.kind, weak, clock, |field, old| {
                        undo.push((object, field, old.clone()));
                    });
                    let access = event.action.kind.props().access;
                    self.accesses.entry(object).push((step, access));
                }
                if let Some(order) = &mut self.yields {
                    order.all_clock.join(clock);
                    if yields {
                        order.yields_clock.join(clock);
                        order.steps.push(step);
                    }
                }
                self.steps[step].clock.clone_from(clock);
            } else if self.steps.get(step).is_some_and(|s| s.events <= i) {
                self.registered += 1; // its thread did something else
            }
            if event.action.kind == OpKind::Spawn {
                if let Some(child) = event.value {
                    let child = child as usize;
                    if self.thread_clocks.len() <= child {
                        self.thread_clocks.resize(child + 1, VectorClock::new());
                    }
                    self.thread_clocks[child] = self.thread_clocks[t.index()].clone();
                }
            }
        }
        self.scanned = events.len();
    }

    /// Whether step `s` comes before thread `p`'s next operation.
    fn before(&self, s: usize, p: ThreadIdx) -> bool {
        let step = &self.steps[s];
        let Some(known) = self.thread_clocks.get(p.index()) else {
            return false;
        };
        known.get(step.thread) >= step.clock.get(step.thread)
    }

    /// The races of the operations `pending` (one per thread) waits to
    /// perform with the events so far: each asks for its thread at the
    /// racing step and at the context switch before it.
    fn analyse(&mut self, events: &[Event], pending: &[Action]) {
        for action in pending {
            if let Some(s) = self.yield_race(action) {
                self.reverse(s, action.thread);
            }
            let (p, Some(object)) = (action.thread, action.object) else {
                continue;
            };
            // A lock that may start a pure section (peeking) is a read only
            // if the section turns out pure, which running it decides.
            let access = if action.kind.starts_pure_part() {
                Access::Write
            } else {
                action.kind.props().access
            };
            let Some(list) = self.accesses.get(object) else {
                continue;
            };
            let weak = weak_at(&self.strict, self.weak, Some(object));
            let mut race = None;
            for &(s, earlier) in list.iter().rev() {
                let step = &self.steps[s];
                let kind = events[step.events].action.kind;
                if self.before(s, p) {
                    // Every earlier step on the object that matters to `p`
                    // comes before a write (`p`'s own included), so before
                    // `p` too (under RC11 an atomic write follows the
                    // earlier reads, not the earlier stores, which matter
                    // only to other operations than atomic accesses).
                    let covers =
                        !weak || !kind.is_atomic_access() || action.kind.is_atomic_access();
                    if earlier == Access::Write && covers {
                        break;
                    }
                    continue;
                }
                // A join waits for its thread's exit: no order to reverse.
                if kind == OpKind::Exit && action.kind == OpKind::Join {
                    continue;
                }
                let dependent = !(access == Access::Read && earlier == Access::Read)
                    && (!weak || matters_under_rc11(kind, action.kind));
                if dependent {
                    race = Some(s);
                    break;
                }
            }
            if let Some(s) = race {
                self.reverse(s, p);
            }
        }
    }

    /// With `Yields`: the race of `p`'s pending operation with the steps
    /// through the object every step reads and every yield writes.
    fn yield_race(&self, action: &Action) -> Option<usize> {
        let order = self.yields.as_ref()?;
        let p = action.thread;
        if action.kind != OpKind::Yield {
            // The last yield comes after every earlier one.
            return order.steps.last().copied().filter(|&s| !self.before(s, p));
        }
        // `p`'s own last yield comes before it, and after every earlier
        // step that comes before it.
        for s in (0..self.registered).rev() {
            if !self.before(s, p) {
                return Some(s);
            }
            if order.steps.binary_search(&s).is_ok() {
                return None;
            }
        }
        None
    }

    /// A race of step `s` with `p`'s pending operation: `p` runs instead at
    /// `s`'s choice point, and at the last context switch before `s`.
    fn reverse(&mut self, s: usize, p: ThreadIdx) {
        self.ask(self.steps[s].frame, p);
        let switch = match s.checked_sub(1) {
            Some(previous) if self.steps[s].switch => self.steps[previous].last_switch,
            _ => self.steps[s].last_switch.filter(|&j| j < s),
        };
        if let Some(switch) = switch {
            self.ask(self.steps[switch].frame, p);
        }
    }

    /// Asks choice point `frame` to run `p` (every enabled thread if `p`
    /// was not enabled there), within the bound. A thread asleep there is
    /// asked for too: what running it finds (further races, asking for
    /// other threads here) is what the race needs, and the equivalent runs
    /// of the branch it sleeps for would ask at other points, whose
    /// preemptions may not fit the bound (POR-DESIGN.md).
    fn ask(&mut self, frame: Option<usize>, p: ThreadIdx) {
        self.ask_for(frame, Some(p));
    }

    /// [`ask`](Self::ask) for `p`, or for every thread enabled at `frame`
    /// (`None`; the thread chosen there is done already).
    fn ask_for(&mut self, frame: Option<usize>, p: Option<ThreadIdx>) {
        let Some(Frame {
            kind: Kind::Threads(frame),
            ..
        }) = frame.and_then(|f| self.frames.get_mut(f))
        else {
            return; // one thread could run there: nothing else to try
        };
        let Threads {
            enabled,
            done,
            backtrack,
            ..
        } = frame;
        let only = p.filter(|p| enabled.contains(p)).map(|p| [p]);
        let wanted: &[ThreadIdx] = match &only {
            Some(only) => only,
            None => enabled,
        };
        for &q in wanted {
            if done.contains(&q) || backtrack.contains(&q) {
                continue;
            }
            if !frame.explore {
                self.cut = true;
                continue;
            }
            let cost = usize::from(frame.can_continue && q != frame.last);
            if frame.preemptions + cost > self.bound {
                self.pruned = true;
                continue;
            }
            backtrack.push(q);
        }
    }

    /// The state to restore at the choice point being made now (the next
    /// frame, at event `at`), all events so far scanned and checked for
    /// sleepers.
    fn save(&self, at: usize) -> Saved {
        debug_assert!(self.scanned == at && self.slept_upto == at);
        Saved {
            preemptions: self.preemptions,
            steps: self.steps.len(),
            registered: self.registered,
            undo: self.undo.len(),
            thread_clocks: self.thread_clocks.clone(),
            yields: self.yields.as_ref().map(|order| {
                (
                    order.steps.len(),
                    order.yields_clock.clone(),
                    order.all_clock.clone(),
                )
            }),
            sleep: self.sleep.clone(),
            #[cfg(all(debug_assertions, any(test, feature = "self-check")))]
            strict_marked: self.strict_marked,
        }
    }

    /// Back to the state saved at frame `f`, which the running execution
    /// has reached replaying the earlier one's choices (that execution
    /// went through it in the same state, and what it did since is in the
    /// steps, lists and undo log beyond the saved lengths).
    fn restore(&mut self, f: usize) {
        self.restore_at = None;
        let Frame { at, kind, saved } = &self.frames[f];
        self.depth = f + usize::from(matches!(kind, Kind::Weak { .. }));
        self.preemptions = saved.preemptions;
        self.steps.truncate(saved.steps);
        // (A step is in the lists once its event is registered; the step
        // of an access's way is not yet.)
        let registered = saved.registered;
        self.accesses.reset_each(|list| {
            while list.last().is_some_and(|&(s, _)| s >= registered) {
                list.pop();
            }
        });
        for (object, field, clock) in self.undo.drain(saved.undo..).rev() {
            *self.touched.entry(object).field(field) = clock;
        }
        self.registered = saved.registered;
        self.scanned = *at;
        self.thread_clocks.clone_from(&saved.thread_clocks);
        if let (Some(order), Some((yield_steps, yields_clock, all_clock))) =
            (&mut self.yields, &saved.yields)
        {
            order.steps.truncate(*yield_steps);
            order.yields_clock.clone_from(yields_clock);
            order.all_clock.clone_from(all_clock);
        }
        self.sleep.clone_from(&saved.sleep);
        self.slept_upto = *at;
        self.reads_new_from = None;
    }

    /// Test builds: the state just restored is what scanning `events` from
    /// the first one gives, with the restored steps.
    #[cfg(all(debug_assertions, any(test, feature = "self-check")))]
    fn check_restored(&self, f: usize, events: &[Event]) {
        if self.frames[f].saved.strict_marked != self.strict_marked {
            // A scan now would order more objects both ways (`Saved`).
            return;
        }
        let mut fresh = BoundedDpor::new(self.bound, self.weak);
        fresh.strict = self.strict.clone();
        // What the prefix's reads read (this run's, the same choices).
        fresh.read_from = self.read_from.clone();
        if self.yields.is_some() {
            fresh.yields = Some(Yields::default());
        }
        fresh.steps = self
            .steps
            .iter()
            .map(|step| Step {
                clock: VectorClock::new(),
                ..*step
            })
            .collect();
        fresh.scan(&events[..self.scanned]);
        let objects = crate::exec::scheduler::objects_touched(events);
        let lists = |b: &BoundedDpor| {
            (0..objects)
                .map(|o| {
                    let o = ObjectIdx(o as u32);
                    let touched = b.touched.get(o).cloned().unwrap_or_default();
                    let list = b.accesses.get(o).cloned().unwrap_or_default();
                    (touched, list)
                })
                .collect::<Vec<_>>()
        };
        let clocks = |b: &BoundedDpor| {
            b.steps[..b.registered]
                .iter()
                .map(|step| step.clock.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(fresh.registered, self.registered, "restored steps");
        assert!(
            fresh.thread_clocks == self.thread_clocks,
            "restored thread clocks"
        );
        assert!(lists(&fresh) == lists(self), "restored per-object state");
        assert!(clocks(&fresh) == clocks(self), "restored step clocks");
    }

    /// Before frame `restore_at` is reached: the thread to run at `point`,
    /// from the frames alone (the earlier execution made every other
    /// decision here already, in the same state), or `None` at that frame
    /// once its state is restored (the search then goes on as usual).
    fn replayed(&mut self, point: &ChoicePoint<'_>) -> Option<Result<ThreadIdx, Stop>> {
        let target = self.restore_at?;
        if let [only] = point.enabled {
            return Some(Ok(*only));
        }
        if self.depth == target && matches!(self.frames[target].kind, Kind::Threads(_)) {
            if point.execution.events().len() != self.frames[target].at {
                // The state saved there is not this run's.
                return Some(Err(diverged(target)));
            }
            self.restore(target);
            crate::exec::error::self_check!(self.check_restored(target, point.execution.events()));
            return None;
        }
        let depth = self.depth;
        self.depth += 1;
        Some(match self.frames.get(depth).map(|f| &f.kind) {
            Some(Kind::Threads(frame)) if frame.enabled == point.enabled => Ok(frame.chosen),
            _ => Err(diverged(depth)),
        })
    }

    /// Whether thread `t` sleeps now (a load woken by stores does not).
    fn asleep(&self, t: ThreadIdx) -> bool {
        self.sleep
            .iter()
            .any(|s| s.thread == t && !s.woken_by_stores)
    }

    /// Wakes the sleepers that the events since the last call depend on
    /// (`scan` saw them first).
    fn wake(&mut self, events: &[Event]) {
        let from = std::mem::replace(&mut self.slept_upto, events.len());
        if self.sleep.is_empty() {
            return;
        }
        let yields = self.yields.is_some();
        let (accesses, steps) = (&self.accesses, &self.steps);
        for event in &events[from..] {
            let action = event.action;
            let weak = weak_at(&self.strict, self.weak, action.object);
            self.sleep.retain_mut(|sleeper| {
                if sleeper.thread == action.thread {
                    return true;
                }
                let wake = if action.kind == OpKind::Yield {
                    // A spinning thread waits for a write of what it read
                    // (`exec/spin`): moving such a write across its yield
                    // changes what can run.
                    let waits_for = sleeper.action.kind.writes()
                        && sleeper.action.object.is_some_and(|object| {
                            accesses.get(object).is_some_and(|list| {
                                list.iter().any(|&(s, _)| steps[s].thread == action.thread)
                            })
                        });
                    if yields || waits_for {
                        Wake::Fully
                    } else {
                        Wake::No
                    }
                } else {
                    wakes(&sleeper.action, event, weak)
                };
                match wake {
                    Wake::No => true,
                    Wake::ByStore => {
                        sleeper.woken_by_stores = true;
                        true
                    }
                    Wake::Fully => false,
                }
            });
        }
    }

    /// Wakes a sleeping release once another thread waits to operate on
    /// its lock (`sleeps`): that thread may be blocked on it, and moving
    /// the release back would then let it go on.
    fn wake_for_waiters(&mut self, exec: &crate::exec::Execution) {
        if !self.sleep.iter().any(|s| lets_waiters_go(s.action.kind)) {
            return;
        }
        self.sleep.retain(|sleeper| {
            !lets_waiters_go(sleeper.action.kind)
                || !exec.pending_actions().any(|action| {
                    action.thread != sleeper.thread && action.object == sleeper.action.object
                })
        });
    }

    /// After `chosen` was picked at choice point `frame` (`events` events
    /// so far): the threads explored there before it fall asleep if their
    /// step can move back before `chosen`'s at no preemption's cost, and
    /// `chosen` leaves the sleepers (a load woken by stores keeps, for its
    /// access, which stores are new to it).
    fn fall_asleep(
        &mut self,
        frame: Option<usize>,
        chosen: ThreadIdx,
        exec: &crate::exec::Execution,
        events: usize,
    ) {
        if let Some(at) = self.sleep.iter().position(|s| s.thread == chosen) {
            let sleeper = self.sleep.swap_remove(at);
            if sleeper.woken_by_stores {
                self.reads_new_from = Some(sleeper.since);
            }
        }
        let Some(Frame {
            kind: Kind::Threads(frame),
            ..
        }) = frame.and_then(|f| self.frames.get(f))
        else {
            return;
        };
        // Only the thread that could continue: running its step first
        // costs nothing there, so the equivalent execution that does costs
        // no more preemptions than this one (POR-DESIGN.md).
        let b = frame.last;
        if !frame.explore || !frame.can_continue || chosen == b || !frame.done.contains(&b) {
            return;
        }
        if self.sleep.iter().any(|s| s.thread == b) {
            return;
        }
        let Some(action) = exec.pending(b) else {
            return;
        };
        // A release with a thread waiting on its lock falls asleep here and
        // wakes at the next choice point, before anyone asks whether it
        // sleeps (`wake_for_waiters`).
        if action.object.is_none() || !sleeps(action.kind) {
            return;
        }
        self.sleep.push(Sleeper {
            thread: b,
            action,
            since: events,
            woken_by_stores: false,
        });
    }
}

/// Whether a thread about to do `kind` may sleep. Its step must be that
/// operation alone, on one object, and enable no other thread while it
/// sleeps: moving it back must leave every other thread as able to go on
/// as it was (an unlock moved before a thread that then blocked on the
/// lock would let that thread go on, and switching away from it would cost
/// a preemption the pruned run did not pay). So atomic accesses (a write
/// enables only a spinning thread, whose yield then wakes the sleeper),
/// lock acquisitions and queries, and a lock's release while no other
/// thread waits to operate on the lock (`BoundedDpor::wake_for_waiters`);
/// no yield (it may wait, `exec/spin`), no lock that starts a pure section
/// (it also accesses what the section touches), no notification, unpark or
/// exit.
fn sleeps(kind: OpKind) -> bool {
    kind.is_atomic_access()
        || lets_waiters_go(kind)
        || matches!(
            kind,
            OpKind::Lock
                | OpKind::TryLock
                | OpKind::ReadLock
                | OpKind::TryReadLock
                | OpKind::IsPoisoned
                | OpKind::Join
                | OpKind::IsFinished
        )
}

/// A lock's release (not a pure section's): it lets the threads blocked
/// on the lock go on, so it sleeps only while no other thread waits to
/// operate on the lock (`BoundedDpor::wake_for_waiters`). Notifications
/// and unparks do not sleep: with them asleep, concurrent-queue's models
/// lost graphs under RC11 (a spin's waits depend on the interleaving, so
/// the equivalent run of the first branch may not be explored).
fn lets_waiters_go(kind: OpKind) -> bool {
    matches!(kind, OpKind::Unlock | OpKind::ReadUnlock)
}

/// What `event`, another thread's and not a yield, does to a thread
/// sleeping before `sleeper` (`weak`: under RC11). Two operations on one
/// object depend on each other unless both read. Under RC11 the order of a
/// load and a later store matters only if the load may read that store,
/// and a store's place in modification order is its own choice: so another
/// thread's load wakes no atomic access, a store wakes a sleeping load
/// only for the stores it can now read, and two stores stay apart. A fence
/// orders its own thread's accesses only: the graphs either order gives
/// are the same. Under RC11 a failed compare-exchange stored nothing: it is
/// a load (taken for a store, it woke a load with nothing new to read, which
/// then ended the execution before the other threads' steps that could
/// still run first were tried); sequential consistency's dependence takes
/// every compare-exchange for a write.
fn wakes(sleeper: &Action, event: &Event, weak: bool) -> Wake {
    let stored_nothing = weak && event.action.kind == OpKind::CompareExchange && !event.stored;
    let event = Action {
        kind: if stored_nothing {
            OpKind::Load
        } else {
            event.action.kind
        },
        ..event.action
    };
    match event.object {
        None => match event.kind {
            OpKind::Spawn | OpKind::Exit | OpKind::Fence => Wake::No,
            _ => Wake::Fully,
        },
        Some(object) if Some(object) != sleeper.object => Wake::No,
        Some(_) if weak && event.kind.is_atomic_access() && sleeper.kind.is_atomic_access() => {
            match (sleeper.kind, event.kind) {
                (_, OpKind::Load) => Wake::No,
                (OpKind::Load, _) => Wake::ByStore,
                (OpKind::Store, OpKind::Store) => Wake::No,
                _ => Wake::Fully,
            }
        }
        Some(_) if !sleeper.kind.writes() && !event.kind.writes() => Wake::No,
        Some(_) => Wake::Fully,
    }
}

impl Scheduler for BoundedDpor {
    fn choose(&mut self, point: &ChoicePoint<'_>) -> Result<ThreadIdx, Stop> {
        if let Some(replayed) = self.replayed(point) {
            return replayed;
        }
        let exec = point.execution;
        for &object in exec.strict_objects() {
            let i = object.0 as usize;
            if self.strict.len() <= i {
                self.strict.resize(i + 1, false);
            }
            self.strict_marked += usize::from(!self.strict[i]);
            self.strict[i] = true;
        }
        if let Some(spin) = exec.repeated() {
            // Ending executions at a repeated state is for searches that
            // try every interleaving: the bounded oracle.
            self.unsupported = Some(super::repeated_state(spin));
            return Err(Stop::Redundant);
        }
        if let Some(spin) = exec.waited_alone() {
            if self.yields.is_none() {
                // Yields were not ordered with every step so far: the
                // pipeline explores again with `ordering_yields`.
                self.unsupported = Some(super::alone_spin(spin));
                self.alone_spin_unordered = true;
                return Err(Stop::Redundant);
            }
        }
        let events = exec.events();
        self.scan(events);
        if self.analysed.map_or(true, |upto| events.len() > upto) {
            let mut pending = std::mem::take(&mut self.pending_buf);
            pending.clear();
            pending.extend(exec.pending_actions());
            self.analyse(events, &pending);
            self.pending_buf = pending;
        }
        self.wake(events);
        self.wake_for_waiters(exec);
        self.reads_new_from = None;
        let last = last_thread(exec);
        let can_continue = point.enabled.contains(&last);
        let (chosen, frame) = if let [only] = point.enabled {
            if self.asleep(*only) {
                return Err(Stop::Redundant);
            }
            (*only, None)
        } else {
            let depth = self.depth;
            self.depth += 1;
            let chosen = match self.frames.get(depth).map(|f| &f.kind) {
                Some(Kind::Threads(frame)) => {
                    let same = frame.enabled == point.enabled
                        && frame
                            .enabled
                            .iter()
                            .zip(&frame.pending)
                            .all(|(&t, p)| exec.pending(t) == *p);
                    if !same {
                        return Err(diverged(depth));
                    }
                    frame.chosen
                }
                Some(Kind::Weak { .. }) => return Err(diverged(depth)),
                None => {
                    // Sleeping threads are not run by default; a race may
                    // still ask for one here (see `ask`).
                    let first = if can_continue && !self.asleep(last) {
                        last
                    } else {
                        match point.enabled.iter().find(|&&t| !self.asleep(t)) {
                            Some(&t) => t,
                            // Every thread that can run sleeps: an earlier
                            // branch ran this execution's equivalent.
                            None => return Err(Stop::Redundant),
                        }
                    };
                    let saved = self.save(events.len());
                    self.frames.push(Frame {
                        at: events.len(),
                        saved,
                        kind: Kind::Threads(Threads {
                            enabled: point.enabled.to_vec(),
                            pending: point.enabled.iter().map(|&t| exec.pending(t)).collect(),
                            last,
                            can_continue,
                            preemptions: self.preemptions,
                            chosen: first,
                            backtrack: Vec::new(),
                            done: vec![first],
                            explore: exec.exploring(),
                        }),
                    });
                    first
                }
            };
            (chosen, Some(depth))
        };
        self.fall_asleep(frame, chosen, exec, events.len());
        if can_continue && chosen != last {
            self.preemptions += 1;
        }
        let switch = chosen != last;
        let last_switch = match switch {
            true => Some(self.steps.len()),
            false => self.steps.last().and_then(|step| step.last_switch),
        };
        self.steps.push(Step {
            events: events.len(),
            thread: chosen,
            frame,
            switch,
            last_switch,
            clock: VectorClock::new(),
        });
        Ok(chosen)
    }

    fn replay_prefix(&self) -> Option<usize> {
        // The deepest choice point takes its next option at its event; the
        // choices before it are replayed.
        Some(self.frames.last().map_or(0, |frame| frame.at))
    }

    fn choose_weak(&mut self, point: &WeakPoint<'_>) -> Result<usize, Stop> {
        let k = self.choose_way(point)?;
        if self.read_from.len() <= point.event {
            self.read_from.resize(point.event + 1, 0);
        }
        // A read whose other ways the model asked not to explore gets no
        // edge: the races it would hide are found only through them. A
        // store's placement (`usize::MAX`) reads nothing.
        let edge = point.explore || point.options <= 1;
        self.read_from[point.event] = match point.sources[k] {
            source if edge && source != usize::MAX => source,
            _ => 0,
        };
        Ok(k)
    }
}

impl BoundedDpor {
    /// [`Scheduler::choose_weak`]'s choice.
    fn choose_way(&mut self, point: &WeakPoint<'_>) -> Result<usize, Stop> {
        // A load woken by stores reads one of the stores from `since` on
        // (`Sleeper`); the model's exploration controls overrule that.
        let allowed = self
            .reads_new_from
            .take()
            .filter(|_| point.explore)
            .map(|since| {
                (0..point.options)
                    .filter(|&k| point.sources[k] != usize::MAX && point.sources[k] > since)
                    .collect::<Vec<usize>>()
            });
        if allowed.as_ref().is_some_and(Vec::is_empty) {
            // Reading an old store repeats an earlier branch's graph, but
            // another thread may still make a store this load can read
            // before it: those threads are tried where this one was chosen.
            if let Some(frame) = self.steps.last().map(|step| step.frame) {
                self.ask_for(frame, None);
            }
            return Err(Stop::Redundant);
        }
        if point.options <= 1 || point.latest_only {
            // (A latest-only read: option 0 is the latest store, which a
            // load woken by stores may read.)
            return Ok(0);
        }
        if !point.explore {
            // The model asked for no other way here (loom's controls).
            self.cut = true;
            return Ok(0);
        }
        let depth = self.depth;
        self.depth += 1;
        match self.frames.get(depth).map(|f| &f.kind) {
            Some(Kind::Weak {
                options,
                next,
                allowed,
            }) if *options == point.options => {
                let k = allowed.as_ref().map_or(*next, |allowed| allowed[*next]);
                if self.restore_at == Some(depth) {
                    if point.event != self.frames[depth].at {
                        // The state saved there is not this run's.
                        return Err(diverged(depth));
                    }
                    // Reached replaying: the state after this choice.
                    self.restore(depth);
                }
                Ok(k)
            }
            Some(_) => Err(diverged(depth)),
            None => {
                // The access is the operation of the last step.
                let at = self.steps.last().map_or(0, |step| step.events);
                let first = allowed.as_ref().map_or(0, |allowed| allowed[0]);
                let saved = self.save(at);
                self.frames.push(Frame {
                    at,
                    saved,
                    kind: Kind::Weak {
                        options: point.options,
                        next: 0,
                        allowed,
                    },
                });
                Ok(first)
            }
        }
    }
}

/// Joins into `clock` (a new step's) the steps on its object it depends
/// on, and records the step there. Two steps depend on each other unless
/// both only read; under RC11, two atomic accesses only if the earlier
/// reads and the later writes (`matters_under_rc11`).
fn touch(
    touched: &mut Touched,
    kind: OpKind,
    weak: bool,
    clock: &mut VectorClock,
    mut before: impl FnMut(Field, &VectorClock),
) {
    let writes = kind.props().access == Access::Write;
    let mut join_into = |touched: &mut Touched, field: Field, clock: &VectorClock| {
        let joined = touched.field(field);
        before(field, joined);
        joined.join(clock);
    };
    if weak && kind.is_atomic_access() {
        clock.join(&touched.writes);
        if writes {
            clock.join(&touched.reads);
        }
        if kind != OpKind::Load {
            clock.join(&touched.atomic_reads);
        }
        if kind != OpKind::Store {
            join_into(touched, Field::AtomicReads, clock);
        }
        if kind == OpKind::Load {
            join_into(touched, Field::AtomicLoads, clock);
        } else {
            join_into(touched, Field::AtomicWrites, clock);
        }
    } else {
        clock.join(&touched.writes);
        clock.join(&touched.atomic_writes);
        if writes {
            clock.join(&touched.reads);
            clock.join(&touched.atomic_loads);
            join_into(touched, Field::Writes, clock);
        } else {
            join_into(touched, Field::Reads, clock);
        }
    }
}

/// Whether an atomic access of `kind` reads a store.
fn reads_atomically(kind: OpKind) -> bool {
    kind.is_atomic_access() && kind != OpKind::Store
}

/// Under RC11, whether running atomic access `later` before the earlier
/// `earlier` (same location, different threads) can give a graph the
/// order they ran in cannot: only if `earlier` reads and `later` writes
/// (the read may then read that store). A read after a store may still
/// read any store before it that coherence allows, and a store's place in
/// modification order is its own choice, whichever ran first (hb, which
/// bounds both, does not depend on the order of unsynchronised steps).
/// Anything but two atomic accesses: the order matters.
fn matters_under_rc11(earlier: OpKind, later: OpKind) -> bool {
    if !(earlier.is_atomic_access() && later.is_atomic_access()) {
        return true;
    }
    earlier != OpKind::Store && later != OpKind::Load
}

/// A re-run that did not reach choice point `depth` as the earlier run did.
fn diverged(depth: usize) -> Stop {
    Stop::Diverged(format!(
        "at choice point {}, re-running the same schedule found the threads about to do other \
         things than the earlier run: the model depends on something other than the schedule",
        depth + 1
    ))
}

impl Explorer for BoundedDpor {
    fn advance(&mut self, outcome: &Outcome) -> Result<bool, String> {
        if self.unsupported.is_some() {
            return Ok(false);
        }
        if outcome.fault.is_none() && !outcome.redundant && self.depth < self.frames.len() {
            return Err(format!(
                "the model finished after {} choice points, but the same schedule earlier had {}: the \
                 model depends on something other than the schedule",
                self.depth,
                self.frames.len()
            ));
        }
        self.redundant += u64::from(outcome.redundant);
        if let Some(target) = self.restore_at {
            // The execution stopped before the choice point it replayed up
            // to: the state there is the one to go on from.
            self.restore(target);
        }
        // The operations threads still waited for race with the events too.
        self.scan(&outcome.events);
        if self
            .analysed
            .map_or(true, |upto| outcome.events.len() > upto)
        {
            self.analyse(&outcome.events, &outcome.pending);
        }
        // The deepest choice point with something left to try.
        let more = loop {
            match self.frames.last_mut().map(|f| &mut f.kind) {
                None => break false,
                Some(Kind::Weak {
                    options,
                    next,
                    allowed,
                }) => {
                    if *next + 1 < allowed.as_ref().map_or(*options, Vec::len) {
                        *next += 1;
                        break true;
                    }
                }
                Some(Kind::Threads(frame)) => {
                    if !frame.backtrack.is_empty() {
                        let q = frame.backtrack.remove(0);
                        frame.done.push(q);
                        frame.chosen = q;
                        break true;
                    }
                }
            }
            self.frames.pop();
        };
        // The steps up to the state of the choice point that changes ran
        // (and were analysed) already.
        self.analysed = self.frames.last().map(|f| f.at);
        self.depth = 0;
        self.reads_new_from = None;
        // The next execution replays the choices up to the deepest frame
        // and takes up the state saved there.
        self.restore_at = more.then(|| self.frames.len() - 1);
        Ok(more)
    }

    fn reduces(&self) -> bool {
        true
    }

    fn pruned(&self) -> bool {
        self.pruned
    }

    fn cut(&self) -> bool {
        self.cut
    }

    fn redundant(&self) -> u64 {
        self.redundant
    }

    fn takes_it_ordering_yields(&self) -> bool {
        self.alone_spin_unordered
    }

    fn unsupported(&self) -> Option<String> {
        self.unsupported.clone()
    }
}

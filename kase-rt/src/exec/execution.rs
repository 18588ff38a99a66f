//! One execution of the model: the threads, the objects, the event log, and
//! the driver loop that asks a [`Scheduler`] which thread runs next.

use std::any::Any;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::panic::Location;
use std::sync::Arc;

use super::action::{Action, ObjectIdx, ObjectKind, OpKind, ThreadIdx};
use super::clock::VectorClock;
use super::continuation::{Body, Continuation, CoroutineThread, Resumed, StackPool, Suspend};
use super::hb::{CellAccess, ThreadHb};
use super::object::{ObjectDetail, ObjectHandle, ObjectState};
use super::panic::{self, PanicInfo};
use super::peek::{self, AccessTag, Hold, PurePart, Section, Sections, MAX_PURE_STEPS};
use super::spin::SpinTrack;
use super::thread::{Pending, ThreadInterner, ThreadState};
use super::watchdog::Watch;
use super::EXECUTION;

/// One visible operation that happened.
#[derive(Clone, Debug)]
pub struct Event {
    /// What happened.
    pub action: Action,
    /// Where in the user's code.
    pub location: &'static Location<'static>,
    /// A value worth showing (loaded / stored value, spawned thread).
    pub value: Option<u64>,
    /// Dependence clock: for each thread, how many of its events precede this
    /// one in the Mazurkiewicz trace (program order plus dependence).
    pub clock: VectorClock,
    /// Whether it changed its object (a failed CAS or try-lock did not).
    pub modified: bool,
    /// The stack at the operation, captured (unresolved) only with
    /// `KASE_BACKTRACE=1`.
    pub backtrace: Option<Box<backtrace::Backtrace>>,
}

/// Why an execution stopped early.
pub enum Fault {
    /// A model thread panicked and nothing caught it.
    Panic {
        /// The thread.
        thread: ThreadIdx,
        /// Message and location.
        info: PanicInfo,
        /// The original payload, to re-raise.
        payload: Box<dyn Any + Send>,
    },
    /// No thread can run, and some have not finished.
    Deadlock {
        /// What each blocked thread waits to do.
        blocked: Vec<(Action, &'static Location<'static>)>,
    },
    /// The execution exceeded `max_steps` visible operations.
    Livelock {
        /// The bound that was hit.
        steps: u64,
    },
    /// Two accesses to a tracked cell, at least one a write, not ordered by
    /// happens-before.
    DataRace {
        /// The access made first in this execution.
        earlier: CellAccess,
        /// The access that raced with it.
        later: CellAccess,
    },
    /// The model closure returned while spawned threads were still running.
    Leak {
        /// Each such thread and where it was spawned.
        running: Vec<(ThreadIdx, Option<&'static Location<'static>>)>,
    },
    /// Every thread finished, but `Arc`s created in the execution are still
    /// alive: a reference cycle, a forgotten or leaked `Arc`, or a `static`
    /// keeping one past the end of the model.
    LeakedArcs {
        /// Each such `Arc`: the thread that created it, and where.
        arcs: Vec<(ThreadIdx, &'static Location<'static>)>,
    },
    /// The run did not follow the schedule it was told to follow.
    Divergence {
        /// What differed.
        message: String,
    },
    /// With critical-section peeking, a data race under the happens-before
    /// that every interleaving of this trace shares: it may be in another
    /// interleaving than this one, so it is confirmed by exploring again
    /// without peeking (`explore/POR-DESIGN.md`).
    PeekingUnsound {
        /// What happened, in words.
        reason: String,
    },
}

impl std::fmt::Debug for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fault::Panic { thread, info, .. } => write!(f, "Panic({thread}: {})", info.message),
            Fault::Deadlock { blocked } => write!(f, "Deadlock({} blocked)", blocked.len()),
            Fault::Livelock { steps } => write!(f, "Livelock({steps})"),
            Fault::DataRace { earlier, later } => write!(
                f,
                "DataRace({} at {}, {} at {})",
                earlier.thread, earlier.location, later.thread, later.location
            ),
            Fault::Leak { running } => write!(f, "Leak({} running)", running.len()),
            Fault::LeakedArcs { arcs } => write!(f, "LeakedArcs({})", arcs.len()),
            Fault::Divergence { message } => write!(f, "Divergence({message})"),
            Fault::PeekingUnsound { reason } => write!(f, "PeekingUnsound({reason})"),
        }
    }
}

/// A step of the execution: which thread runs next? Asked before every step;
/// it is a real choice only when `enabled` has more than one thread.
pub(crate) struct ChoicePoint<'a> {
    /// Threads whose pending operation is enabled, ascending; never empty.
    pub enabled: &'a [ThreadIdx],
    /// The thread that ran last.
    pub current: ThreadIdx,
    /// The execution so far.
    pub execution: &'a Execution,
}

/// Why a scheduler ends an execution early.
#[derive(Debug)]
pub(crate) enum Stop {
    /// The run did not follow its schedule (a failure: nondeterminism).
    Diverged(String),
    /// Every way to continue was already explored: a redundant
    /// (sleep-set-blocked) execution, not a failure.
    Redundant,
}

/// Decides which thread runs at each step of an execution.
pub(crate) trait Scheduler {
    /// Picks one of `point.enabled`, or stops the execution.
    fn choose(&mut self, point: &ChoicePoint<'_>) -> Result<ThreadIdx, Stop>;
}

/// Limits for one execution.
pub(crate) struct Limits {
    pub max_steps: u64,
    /// Plain condvar waits may wake unnotified.
    pub spurious_wakeups: bool,
    /// Progress for the watchdog, if one watches.
    pub watch: Option<Arc<Watch>>,
    /// Capture a backtrace at every visible operation (`KASE_BACKTRACE`).
    pub backtraces: bool,
    /// Critical-section peeking: pure parts of mutex sections run as one
    /// step (`exec/peek.rs`).
    pub peeking: bool,
}

/// What one execution produced.
pub(crate) struct Outcome {
    pub events: Vec<Event>,
    /// Operations threads were waiting to perform when the execution ended
    /// (blocked at a deadlock, or anything when it stopped early).
    pub pending: Vec<Action>,
    /// The scheduler stopped it as redundant.
    pub redundant: bool,
    /// Threads chosen at choice points, in order.
    pub schedule: Vec<ThreadIdx>,
    pub fault: Option<Fault>,
    pub interner: ThreadInterner,
    /// Kinds of the objects, by index.
    pub objects: Vec<ObjectKind>,
    /// For thread objects, their thread (by object index).
    pub owners: Vec<Option<ThreadIdx>>,
    /// It ran with critical-section peeking and some pure section happened
    /// (so its schedule replays only with peeking: `kase1p:`).
    pub peeking: bool,
    /// Why peeking may have missed behaviours (`exec/peek.rs`, D1), if it
    /// may have.
    pub peek_violation: Option<String>,
}

/// The state of one execution, reachable from shims through [`super::with`].
pub struct Execution {
    stamp: u64,
    threads: Vec<Option<ThreadState>>,
    objects: Vec<ObjectState>,
    events: Vec<Event>,
    current: ThreadIdx,
    interner: ThreadInterner,
    unstarted: VecDeque<(ThreadIdx, Box<dyn FnOnce() + Send>)>,
    fault: Option<Fault>,
    /// Unfinished threads are being unwound after the execution ended.
    teardown: bool,
    max_steps: u64,
    spurious_wakeups: bool,
    watch: Option<Arc<Watch>>,
    backtraces: bool,
    /// Set by the running operation's effect when it changed nothing.
    unmodified: bool,
    /// Visible operations performed by unwinding threads (no choice point).
    unwinding_steps: u64,
    /// Critical-section peeking is on.
    peeking: bool,
    /// The pure parts of critical sections so far (with peeking).
    sections: Sections,
    /// The first sign that peeking's semantics may miss behaviours of the
    /// program (exec/peek.rs, D1): the execution is real, but an exploration
    /// that relied on peeking must be redone without it.
    peek_violation: Option<String>,
    /// The `Arc`s created in this execution (`shim/arc.rs`), with who
    /// created them and where: one still alive at the end is a leak.
    arcs: Vec<TrackedArc>,
}

/// Whether a tracked `Arc` allocation still has a strong owner
/// (implemented in `shim/arc.rs`).
pub(crate) trait Alive {
    fn alive(&self) -> bool;
}

/// An `Arc` allocation made in the execution.
struct TrackedArc {
    probe: Box<dyn Alive>,
    thread: ThreadIdx,
    location: &'static Location<'static>,
}

impl Execution {
    fn new(stamp: u64, interner: ThreadInterner, limits: &Limits) -> Self {
        let mut exec = Execution {
            stamp,
            max_steps: limits.max_steps,
            spurious_wakeups: limits.spurious_wakeups,
            watch: limits.watch.clone(),
            backtraces: limits.backtraces,
            unmodified: false,
            unwinding_steps: 0,
            peeking: limits.peeking,
            sections: Sections::default(),
            peek_violation: None,
            arcs: Vec::new(),
            threads: Vec::new(),
            objects: Vec::new(),
            events: Vec::new(),
            current: ThreadIdx::MAIN,
            interner,
            unstarted: VecDeque::new(),
            fault: None,
            teardown: false,
        };
        let object = exec.add_object(ObjectDetail::Thread(ThreadIdx::MAIN));
        let mut main = ThreadState::new(ThreadIdx::MAIN, object, VectorClock::new());
        main.hb = ThreadHb::new(ThreadIdx::MAIN, &VectorClock::new());
        exec.add_thread(main);
        exec
    }

    /// Remembers an `Arc` the current thread created (not during teardown:
    /// an execution that is being unwound has already ended).
    pub(crate) fn track_arc(
        &mut self,
        probe: Box<dyn Alive>,
        location: &'static Location<'static>,
    ) {
        if !self.teardown {
            let thread = self.current;
            self.arcs.push(TrackedArc {
                probe,
                thread,
                location,
            });
        }
    }

    /// At the normal end of an execution (every thread finished): the
    /// tracked `Arc`s that still have a strong owner are leaked.
    fn check_arcs(&mut self) {
        let leaked: Vec<_> = self
            .arcs
            .iter()
            .filter(|a| a.probe.alive())
            .map(|a| (a.thread, a.location))
            .collect();
        if !leaked.is_empty() {
            self.fault = Some(Fault::LeakedArcs { arcs: leaked });
        }
    }

    /// The thread currently running.
    pub fn current(&self) -> ThreadIdx {
        self.current
    }

    /// Whether plain condvar waits may wake unnotified.
    pub(crate) fn spurious_wakeups(&self) -> bool {
        self.spurious_wakeups
    }

    /// The events so far.
    pub(crate) fn events(&self) -> &[Event] {
        &self.events
    }

    /// The operation `thread` waits to perform, if any.
    pub(crate) fn pending(&self, thread: ThreadIdx) -> Option<Action> {
        Some(self.thread(thread).pending?.action)
    }

    /// The name given to `thread`, if any.
    pub fn thread_name(&self, thread: ThreadIdx) -> Option<&str> {
        self.interner.name(thread)
    }

    pub(crate) fn thread(&self, t: ThreadIdx) -> &ThreadState {
        self.threads[t.index()]
            .as_ref()
            .expect("kase internal error: unknown thread")
    }

    pub(crate) fn thread_mut(&mut self, t: ThreadIdx) -> &mut ThreadState {
        self.threads[t.index()]
            .as_mut()
            .expect("kase internal error: unknown thread")
    }

    pub(crate) fn object_mut(&mut self, object: ObjectIdx) -> &mut ObjectState {
        &mut self.objects[object.0 as usize]
    }

    /// What kind of object `object` is.
    pub(crate) fn object_kind(&self, object: ObjectIdx) -> ObjectKind {
        self.objects[object.0 as usize].kind()
    }

    /// The thread whose thread object `object` is, if it is one.
    pub(crate) fn object_owner(&self, object: ObjectIdx) -> Option<ThreadIdx> {
        self.objects[object.0 as usize].owner()
    }

    fn add_object(&mut self, detail: ObjectDetail) -> ObjectIdx {
        self.objects.push(ObjectState::new(detail));
        ObjectIdx(self.objects.len() as u32 - 1)
    }

    fn add_thread(&mut self, state: ThreadState) {
        let i = state.idx.index();
        if self.threads.len() <= i {
            self.threads.resize_with(i + 1, || None);
        }
        self.threads[i] = Some(state);
    }

    /// The index of the object behind `handle` in this execution, registering
    /// it on first use. `on_first_use` runs only then (e.g. to reset a
    /// static's value to its initial one).
    pub(crate) fn object(
        &mut self,
        handle: &ObjectHandle,
        detail: impl FnOnce() -> ObjectDetail,
        on_first_use: impl FnOnce(),
    ) -> ObjectIdx {
        if let Some(idx) = handle.lookup(self.stamp) {
            return idx;
        }
        let idx = self.add_object(detail());
        if !handle.register(self.stamp, idx) {
            panic!(
                "kase: a shim object (e.g. a `static`) is used by two model runs at once on different OS \
                 threads; each run needs its own objects. Run these tests with `--test-threads=1`, or \
                 create the objects inside the model closure."
            );
        }
        on_first_use();
        idx
    }

    fn is_enabled(&self, pending: &Pending) -> bool {
        let Some(object) = pending.action.object else {
            return true;
        };
        if pending.action.kind == OpKind::Yield {
            // A spinning thread waits for a modification it has not seen.
            let seen = self
                .thread(pending.action.thread)
                .spin
                .waits_on()
                .map_or(0, |(_, n)| n);
            return self.objects[object.0 as usize].modifications > seen;
        }
        self.objects[object.0 as usize].enabled(pending.action.kind, pending.action.thread)
    }

    fn enabled_threads(&self, out: &mut Vec<ThreadIdx>) {
        out.clear();
        for t in self.threads.iter().flatten() {
            if let Some(p) = &t.pending {
                if self.is_enabled(p) {
                    out.push(t.idx);
                }
            }
        }
    }

    /// Declares the current thread's next visible operation. Returns the
    /// suspender to yield to if the scheduler must choose before it runs.
    pub(crate) fn announce(
        &mut self,
        object: Option<ObjectIdx>,
        kind: OpKind,
        location: &'static Location<'static>,
    ) -> Option<*const dyn Suspend> {
        if self.peeking && !self.teardown {
            self.end_pure_part_unless(object, kind, location);
        }
        let kind = if self.peeking && !self.teardown {
            self.peek_kind(object, kind)
        } else {
            kind
        };
        let spins_on = (kind == OpKind::Yield && !self.teardown)
            .then(|| self.thread(self.current).spin.waits_on())
            .flatten();
        let action = Action {
            thread: self.current,
            object: spins_on.map(|(o, _)| o).or(object),
            kind,
        };
        let pending = Pending { action, location };
        if self.teardown {
            // The thread is being unwound after the execution ended: its
            // destructors' operations run at once, unrecorded, and never
            // block (a lock is granted, a join sees no value). If user code
            // swallowed the unwind and goes on, suspending restarts it.
            self.thread_mut(action.thread).pending = Some(pending);
            return if std::thread::panicking() {
                None
            } else {
                self.thread(action.thread).suspender
            };
        }
        // A thread that is unwinding never switches away: std's panic count is
        // per OS thread, and another model thread (or the driver) running
        // while it is raised would see `panicking() == true` or abort on its
        // own panic. Its remaining operations run without a choice point.
        let unwinding = std::thread::panicking();
        // Inside a pure part of a critical section the thread runs on: the
        // part is one step (exec/peek.rs).
        let pure = self.thread(action.thread).pure.is_some();
        let switch = kind.is_scheduling_point() && !unwinding && !pure;
        if unwinding && kind.is_scheduling_point() {
            self.unwinding_steps += 1;
            if self.unwinding_steps > self.max_steps {
                // It cannot be stopped (a second panic would abort anyway)
                // nor switched away from: say why, rather than hang.
                eprintln!(
                    "kase: {} keeps performing visible operations while unwinding from a panic \
                     (more than {} without an end, last at {location}): kase cannot switch threads \
                     during unwinding, so a Drop that waits for another model thread never returns. \
                     Aborting instead of hanging.",
                    action.thread, self.max_steps
                );
                std::process::abort();
            }
        }
        if !switch && !self.is_enabled(&pending) && self.fault.is_none() {
            self.fault = Some(Fault::Deadlock {
                blocked: vec![(action, location)],
            });
        }
        let thread = self.thread_mut(action.thread);
        thread.pending = Some(pending);
        if switch {
            thread.suspender
        } else {
            None
        }
    }

    /// Performs the current thread's announced operation: records the event
    /// with its dependence clock, then runs `effect`, which returns the
    /// operation's result and a value worth showing in reports.
    pub(crate) fn perform<R>(
        &mut self,
        effect: impl FnOnce(&mut Execution, &Action) -> (R, Option<u64>),
    ) -> R {
        if self.teardown {
            let pending = self.thread_mut(self.current).pending.take();
            let action = pending
                .expect("kase internal error: nothing announced")
                .action;
            return effect(self, &action).0;
        }
        let t = self.current;
        let pending = self
            .thread_mut(t)
            .pending
            .take()
            .expect("kase internal error: nothing announced");
        let action = pending.action;
        if let Some(watch) = &self.watch {
            watch.tick(t, pending.location);
        }
        let mut clock = self.thread(t).clock.clone();
        let before = self.peeking.then(|| clock.clone());
        if let Some(object) = action.object {
            let obj = &mut self.objects[object.0 as usize];
            clock.join(&obj.last_write);
            if action.kind.writes() {
                clock.join(&obj.reads);
            }
        }
        let thread = self.thread_mut(t);
        thread.events += 1;
        clock.set(t, thread.events);
        thread.clock = clock.clone();
        if let Some(object) = action.object {
            let obj = &mut self.objects[object.0 as usize];
            if action.kind.writes() {
                obj.last_write = clock.clone();
                obj.reads.clear();
            } else {
                obj.reads.join(&clock);
            }
        }
        self.events.push(Event {
            action,
            location: pending.location,
            value: None,
            clock,
            modified: false,
            backtrace: self
                .backtraces
                .then(|| Box::new(backtrace::Backtrace::new_unresolved())),
        });
        let at = self.events.len() - 1;
        let section = match &before {
            Some(before) => self.peek_check(at, &action, before),
            None => None,
        };
        // The effect sees the gate before the operation (a try-lock asks
        // whether it succeeds); then the gate moves past it.
        let acquires = action
            .object
            .is_some_and(|o| self.objects[o.0 as usize].acquires(action.kind, t));
        let try_failed = action.kind.is_try()
            && action
                .object
                .is_some_and(|o| !self.objects[o.0 as usize].try_succeeds(action.kind));
        let (result, value) = effect(self, &action);
        let modified = action.kind.writes()
            && action.kind != OpKind::Yield
            && !try_failed
            && !std::mem::take(&mut self.unmodified);
        let mut mods = 0;
        if let Some(object) = action.object {
            self.synchronise(t, object, action.kind, acquires);
            let obj = &mut self.objects[object.0 as usize];
            obj.pass_gate(action.kind, t);
            obj.modifications += u64::from(modified);
            mods = obj.modifications;
        }
        let thread = self.thread_mut(t);
        if action.kind == OpKind::Yield {
            thread.spin = SpinTrack::Nothing;
        } else if matches!(
            action.kind,
            OpKind::PeekLock | OpKind::PeekUnlock | OpKind::PeekReadLock | OpKind::PeekReadUnlock
        ) {
            // A pure section's lock and unlock tell a spinning thread
            // nothing: it waits for the data it read to change.
        } else {
            thread
                .spin
                .record(action.object, action.kind, modified, mods);
        }
        self.events[at].modified = modified;
        if self.peeking {
            self.peek_after(at, &action, section, !try_failed);
        }
        self.thread_mut(t).hb.tick(t);
        self.events[at].value = value;
        result
    }

    /// Happens-before of a lock, join or park operation (atomics do theirs
    /// in their effect, see [`Execution::atomic_hb`]). `acquires`: the
    /// operation takes what the object's last release published.
    fn synchronise(&mut self, t: ThreadIdx, object: ObjectIdx, kind: OpKind, acquires: bool) {
        let obj = &mut self.objects[object.0 as usize];
        let hb = &mut self.threads[t.index()]
            .as_mut()
            .expect("kase internal error: unknown thread")
            .hb;
        if acquires {
            hb.acquire(&obj.sync);
            if matches!(kind, OpKind::Lock | OpKind::TryLock | OpKind::Upgrade) {
                // A writer comes after every reader that left (RwLock), and
                // an upgraded section after every pure section (peeking).
                hb.acquire(&std::mem::take(&mut obj.read_release));
            }
        }
        match kind {
            OpKind::Unlock | OpKind::Downgrade | OpKind::Exit => obj.sync = hb.clock.clone(),
            // A pure section hands over only to what depends on it (rule R,
            // exec/peek.rs) and to upgraded sections (POR-DESIGN.md).
            // Readers release only to writers: `SharedUnlock` and
            // `PeekReadUnlock` too (a reader acquires only `sync`).
            OpKind::ReadUnlock
            | OpKind::PeekUnlock
            | OpKind::PeekReadUnlock
            | OpKind::SharedUnlock => obj.read_release.join(&hb.clock),
            OpKind::Unpark => obj.sync.join(&hb.clock),
            _ => {}
        }
    }

    /// Happens-before of an atomic access with `order` (the ordering of the
    /// outcome that happened, for a compare-exchange) to `object`.
    pub(crate) fn atomic_hb(
        &mut self,
        object: ObjectIdx,
        kind: OpKind,
        order: std::sync::atomic::Ordering,
    ) {
        let t = self.current;
        let sync = &mut self.objects[object.0 as usize].sync;
        self.threads[t.index()]
            .as_mut()
            .expect("kase internal error: unknown thread")
            .hb
            .atomic(kind, order, sync);
    }

    /// Tells `perform` that the current operation (a failed
    /// compare-exchange) changed nothing.
    pub(crate) fn note_unmodified(&mut self) {
        self.unmodified = true;
    }

    /// Happens-before of a fence.
    pub(crate) fn fence_hb(&mut self, order: std::sync::atomic::Ordering) {
        let t = self.current;
        let hb = &mut self.threads[t.index()]
            .as_mut()
            .expect("kase internal error: unknown thread")
            .hb;
        hb.fence(order);
    }

    /// An access to a tracked cell by the current thread; a data race with
    /// an earlier access ends the execution with a failure and returns true
    /// (the caller must not perform the access).
    pub(crate) fn cell_access(
        &mut self,
        object: ObjectIdx,
        write: bool,
        location: &'static Location<'static>,
    ) -> bool {
        if self.teardown {
            return false;
        }
        let t = self.current;
        let clock = &self.threads[t.index()]
            .as_ref()
            .expect("kase internal error: unknown thread")
            .hb
            .clock;
        let ObjectDetail::Cell(cell) = &mut self.objects[object.0 as usize].detail else {
            panic!("kase internal error: object {object:?} used as a cell");
        };
        let here = CellAccess::new(t, write, location);
        let Some(earlier) = cell.access(t, clock, write, location) else {
            return false;
        };
        if self.fault.is_none() {
            self.fault = Some(if self.peeking && !self.sections.all.is_empty() {
                // Happens-before under peeking is weaker than in this
                // interleaving (POR-DESIGN.md): confirm without peeking.
                Fault::PeekingUnsound {
                    reason: format!(
                        "a possible data race between {} at {} and {} at {} depends on the order of \
                         critical sections",
                        earlier.thread, earlier.location, here.thread, here.location
                    ),
                }
            } else {
                Fault::DataRace {
                    earlier,
                    later: here,
                }
            });
        }
        true
    }

    /// Creates a thread spawned by the current one (called from the spawn
    /// operation's effect, so the child's clock starts after the spawn event).
    pub(crate) fn spawn_child(
        &mut self,
        body: Box<dyn FnOnce() + Send>,
        name: Option<String>,
    ) -> ThreadIdx {
        let parent = self.current;
        let nth = {
            let p = self.thread_mut(parent);
            p.spawned += 1;
            p.spawned - 1
        };
        let child = self.interner.child(parent, nth, name);
        let object = self.add_object(ObjectDetail::Thread(child));
        let clock = self
            .events
            .last()
            .map(|e| e.clock.clone())
            .unwrap_or_default();
        let mut state = ThreadState::new(child, object, clock);
        state.spawned_at = self.events.last().map(|e| e.location);
        state.hb = ThreadHb::new(child, &self.thread(parent).hb.clock);
        self.add_thread(state);
        self.unstarted.push_back((child, body));
        child
    }

    /// The thread object of `thread`.
    pub(crate) fn thread_object(&self, thread: ThreadIdx) -> ObjectIdx {
        self.thread(thread).object
    }

    /// The park token object of `thread`, created on first use.
    pub(crate) fn park_object(&mut self, thread: ThreadIdx) -> ObjectIdx {
        if let Some(object) = self.thread(thread).park {
            return object;
        }
        let object = self.add_object(ObjectDetail::Park);
        self.thread_mut(thread).park = Some(object);
        object
    }

    /// Whether `thread` has exited.
    pub(crate) fn is_finished(&self, thread: ThreadIdx) -> bool {
        self.thread(thread).finished
    }

    /// Records the first panic; hands back a payload it did not keep.
    fn record_panic(
        &mut self,
        thread: ThreadIdx,
        payload: Box<dyn Any + Send>,
    ) -> Option<Box<dyn Any + Send>> {
        let info = panic::take_last(&*payload);
        if self.fault.is_some() {
            return Some(payload);
        }
        self.fault = Some(Fault::Panic {
            thread,
            info,
            payload,
        });
        None
    }

    /// Announces the current thread's exit; returns the suspender to yield to
    /// unless the execution already failed (then nothing will be scheduled).
    fn announce_exit(&mut self) -> Option<*const dyn Suspend> {
        let object = self.thread(self.current).object;
        let suspender = self.announce(Some(object), OpKind::Exit, Location::caller());
        if self.fault.is_some() {
            None
        } else {
            suspender
        }
    }

    fn perform_exit(&mut self) {
        let me = self.current;
        let epoch = self.thread(me).hb.clock.get(me);
        self.thread_mut(me).exit_epoch = epoch;
        self.perform(|_, _| ((), None));
        if me == ThreadIdx::MAIN && self.fault.is_none() {
            // The model closure returned: every thread it spawned must have
            // ended *before*, i.e. its exit happens-before main's (a join).
            // A thread that merely finished first in this interleaving could
            // finish later in another, so this does not depend on the order.
            let main = self.thread(me).hb.clock.clone();
            let running: Vec<_> = self
                .threads
                .iter()
                .flatten()
                .filter(|t| t.idx != me && !(t.finished && main.get(t.idx) >= t.exit_epoch))
                .map(|t| (t.idx, t.spawned_at))
                .collect();
            if !running.is_empty() {
                self.fault = Some(Fault::Leak { running });
            }
        }
        let thread = self.thread_mut(self.current);
        thread.finished = true;
        thread.suspender = None;
    }
}

/// Critical-section peeking (`exec/peek.rs`, `explore/POR-DESIGN.md`).
impl Execution {
    /// Whether the current thread is inside a pure part of a critical
    /// section (its memory accesses are events, never choice points).
    pub(crate) fn in_pure_part(&self) -> bool {
        self.peeking && !self.teardown && self.thread(self.current).pure.is_some()
    }

    /// Whether critical-section peeking is on (and the execution running).
    pub(crate) fn peeking(&self) -> bool {
        self.peeking && !self.teardown
    }

    /// The object standing for the data `mutex` guards, created on first use.
    pub(crate) fn mutex_data(&mut self, mutex: ObjectIdx) -> ObjectIdx {
        if let Some(data) = self.object_mut(mutex).mutex().data {
            return data;
        }
        let data = self.add_object(ObjectDetail::Data);
        self.object_mut(mutex).mutex().data = Some(data);
        data
    }

    /// Ends the current thread's pure part, with an upgrade event, unless
    /// the operation about to be announced is a memory access (and the part
    /// is not too long yet) or its own unlock. A panicking thread always
    /// upgrades: its unlock poisons the mutex, a write.
    fn end_pure_part_unless(
        &mut self,
        object: Option<ObjectIdx>,
        kind: OpKind,
        location: &'static Location<'static>,
    ) {
        let t = self.current;
        let Some(part) = self.thread(t).pure else {
            return;
        };
        let own_unlock = if part.shared {
            OpKind::ReadUnlock
        } else {
            OpKind::Unlock
        };
        let keeps = !std::thread::panicking()
            && ((kind.is_memory_access() && part.steps < MAX_PURE_STEPS)
                || (kind == own_unlock && object == Some(part.mutex)));
        if keeps {
            return;
        }
        let action = Action {
            thread: t,
            object: Some(part.mutex),
            kind: if part.shared {
                OpKind::ReadUpgrade
            } else {
                OpKind::Upgrade
            },
        };
        self.thread_mut(t).pending = Some(Pending { action, location });
        self.perform(|_, _| ((), None));
    }

    /// The operation kind under peeking: a lock (a `Mutex`'s, or an
    /// `RwLock`'s in either mode) starts a pure part, and the unlock of a
    /// pure part ends it. An `RwLock` read lock held across choice points
    /// (`try_read`, a lock taken while panicking, the unlock after an
    /// upgrade or a downgrade) becomes a write of the lock.
    fn peek_kind(&self, object: Option<ObjectIdx>, kind: OpKind) -> OpKind {
        let Some(o) = object else {
            return kind;
        };
        let (peekable, rwlock) = match &self.objects[o.0 as usize].detail {
            ObjectDetail::Mutex(m) => (m.peekable, false),
            ObjectDetail::RwLock(_) => (true, true),
            _ => return kind,
        };
        let pure = self.thread(self.current).pure.filter(|p| p.mutex == o);
        let panicking = std::thread::panicking();
        match kind {
            OpKind::Lock if peekable && !panicking => OpKind::PeekLock,
            OpKind::Unlock if pure.is_some_and(|p| !p.shared) => OpKind::PeekUnlock,
            OpKind::ReadLock if rwlock && !panicking => OpKind::PeekReadLock,
            OpKind::ReadLock if rwlock => OpKind::SharedLock,
            OpKind::TryReadLock if rwlock => OpKind::SharedTryLock,
            OpKind::ReadUnlock if pure.is_some_and(|p| p.shared) => OpKind::PeekReadUnlock,
            OpKind::ReadUnlock if rwlock => OpKind::SharedUnlock,
            _ => kind,
        }
    }

    /// Checks the access just recorded as event `at` against the accesses it
    /// depends on directly (rule R and D1 of `exec/peek.rs`); `before` is
    /// its thread's dependence clock before it. Returns the pure part the
    /// access belongs to (a `PeekLock` opens one here).
    fn peek_check(&mut self, at: usize, action: &Action, before: &VectorClock) -> Option<usize> {
        let t = action.thread;
        let section = match (action.kind, action.object) {
            (OpKind::PeekLock | OpKind::PeekReadLock, Some(mutex)) => {
                self.sections.all.push(Section {
                    thread: t,
                    mutex,
                    shared: action.kind == OpKind::PeekReadLock,
                    start: at,
                    end: None,
                    release: VectorClock::new(),
                    lock_location: self.events[at].location,
                });
                Some(self.sections.all.len() - 1)
            }
            _ => self.thread(t).pure.map(|p| p.section),
        };
        let Some(object) = action.object.filter(|_| peek::tagged(action.kind)) else {
            return section;
        };
        let direct: Vec<AccessTag> = self.objects[object.0 as usize]
            .tags
            .direct(action.kind.writes())
            .filter(|tag| tag.thread != t)
            .cloned()
            .collect();
        let mine = section.map(|s| {
            let part = &self.sections.all[s];
            Hold {
                lock: part.mutex,
                shared: part.shared,
            }
        });
        for tag in direct {
            let mut violation = None;
            if let Some(s) = tag.section {
                let other = &self.sections.all[s];
                if mine.is_some_and(|m| m.excludes(other.mutex, other.shared)) {
                    // Rule R: after the whole other part, which released.
                    let release = other.release.clone();
                    self.thread_mut(t).hb.acquire(&release);
                } else if !self
                    .thread(t)
                    .held
                    .iter()
                    .any(|h| h.excludes(other.mutex, other.shared))
                {
                    // Depending on the part's last event (its unlock or
                    // upgrade, on the lock itself) puts this access after
                    // the whole part, not in its middle.
                    let ordered = other.end.is_some_and(|e| {
                        e == tag.event
                            || before.get(other.thread) >= self.events[e].clock.get(other.thread)
                    });
                    if !ordered {
                        violation = Some((s, t, self.events[at].location));
                    }
                }
            }
            if let (Some(s), Some(mine)) = (section, mine) {
                let in_section = tag.section.is_some_and(|o| {
                    let other = &self.sections.all[o];
                    mine.excludes(other.mutex, other.shared)
                }) || tag.holds.iter().any(|h| h.excludes(mine.lock, mine.shared));
                let start = &self.events[self.sections.all[s].start].clock;
                if !in_section
                    && start.get(tag.thread) < self.events[tag.event].clock.get(tag.thread)
                {
                    violation = Some((s, tag.thread, self.events[tag.event].location));
                }
            }
            if let Some((s, thread, location)) = violation {
                if self.peek_violation.is_none() {
                    let what = format!("{:?}#{}", self.objects[object.0 as usize].kind(), object.0)
                        .to_ascii_lowercase();
                    let section = &self.sections.all[s];
                    let lock = match self.objects[section.mutex.0 as usize].kind() {
                        ObjectKind::RwLock => "RwLock",
                        _ => "mutex",
                    };
                    let reason = peek::violation_message(section, lock, (thread, location), &what);
                    self.peek_violation = Some(reason);
                }
            }
        }
        section
    }

    /// Bookkeeping after the access `at` ran: the pure part's steps and end,
    /// the mutexes held, and the access's tag on its object. `acquired`: a
    /// try-lock succeeded (or the operation is not one).
    fn peek_after(&mut self, at: usize, action: &Action, section: Option<usize>, acquired: bool) {
        let t = action.thread;
        let is_lock = |e: &Execution, o: ObjectIdx| {
            matches!(
                e.objects[o.0 as usize].detail,
                ObjectDetail::Mutex(_) | ObjectDetail::RwLock(_)
            )
        };
        let hold = |lock, shared| Hold { lock, shared };
        match (action.kind, action.object) {
            (OpKind::PeekLock | OpKind::PeekReadLock, Some(mutex)) => {
                let section = section.expect("kase internal error: a PeekLock without its section");
                let shared = action.kind == OpKind::PeekReadLock;
                let thread = self.thread_mut(t);
                thread.pure = Some(PurePart {
                    mutex,
                    shared,
                    section,
                    steps: 0,
                });
                thread.held.push(hold(mutex, shared));
            }
            (kind, Some(mutex)) if kind.ends_pure_part() => {
                let release = self.thread(t).hb.clock.clone();
                if let Some(s) = section {
                    let record = &mut self.sections.all[s];
                    record.end = Some(at);
                    record.release = release;
                }
                let thread = self.thread_mut(t);
                thread.pure = None;
                match kind {
                    OpKind::PeekUnlock => peek::release(&mut thread.held, hold(mutex, false)),
                    OpKind::PeekReadUnlock => peek::release(&mut thread.held, hold(mutex, true)),
                    _ => {}
                }
            }
            (OpKind::Lock | OpKind::TryLock, Some(o)) if acquired && is_lock(self, o) => {
                self.thread_mut(t).held.push(hold(o, false));
            }
            (OpKind::SharedLock | OpKind::SharedTryLock, Some(o)) if acquired => {
                self.thread_mut(t).held.push(hold(o, true));
            }
            (OpKind::Unlock, Some(o)) => {
                peek::release(&mut self.thread_mut(t).held, hold(o, false))
            }
            (OpKind::SharedUnlock, Some(o)) => {
                peek::release(&mut self.thread_mut(t).held, hold(o, true));
            }
            (OpKind::Downgrade, Some(o)) => {
                let held = &mut self.thread_mut(t).held;
                peek::release(held, hold(o, false));
                held.push(hold(o, true));
            }
            _ => {
                if let Some(part) = &mut self.thread_mut(t).pure {
                    part.steps += 1;
                }
            }
        }
        if let Some(object) = action.object.filter(|_| peek::tagged(action.kind)) {
            let mut holds = self.thread(t).held.clone();
            // It held the lock up to this event.
            match action.kind {
                OpKind::Unlock => holds.push(hold(object, false)),
                OpKind::SharedUnlock => holds.push(hold(object, true)),
                _ => {}
            }
            let tag = AccessTag {
                event: at,
                thread: t,
                section,
                holds,
            };
            self.objects[object.0 as usize]
                .tags
                .push(tag, action.kind.writes());
        }
    }
}

/// The body every model thread runs: the user's closure, then its exit.
fn thread_body<'a>(thread: ThreadIdx, body: Box<dyn FnOnce() + 'a>) -> Body<'a> {
    Box::new(move |suspender: &dyn Suspend| {
        // SAFETY: only the lifetime is erased. The pointer is cleared in
        // `perform_exit` before the body returns, and only dereferenced while
        // this thread runs, i.e. while `suspender` is alive.
        let erased: *const (dyn Suspend + 'static) =
            unsafe { std::mem::transmute(suspender as *const dyn Suspend) };
        super::with(|e| e.thread_mut(thread).suspender = Some(erased));
        let body = move || {
            // Its `thread_local!` values are destroyed when the closure
            // returns (or unwinds), in this thread, before its exit event.
            let _locals = super::local::DestroyOnExit(thread);
            body()
        };
        if let Err(payload) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
            if super::with(|e| e.teardown) {
                // The forced unwind of an unfinished thread: let it finish.
                std::panic::resume_unwind(payload);
            }
            let payload = super::with(|e| e.record_panic(thread, payload));
            drop(payload); // outside the borrow: its Drop may use shims
        }
        // Exiting is a scheduling point: `is_finished` may see it or not.
        if let Some(suspender) = super::with(|e| e.announce_exit()) {
            // SAFETY: we are inside this thread's body, so `suspender` is live.
            unsafe { (*suspender).suspend() };
        }
        super::with(|e| e.perform_exit());
    })
}

/// The continuations of one execution's threads, by [`ThreadIdx`].
struct Continuations<'a, 'p> {
    threads: Vec<Option<Box<dyn Continuation + 'a>>>,
    pool: &'p mut StackPool,
    exec: &'a RefCell<Execution>,
    /// Told when model code runs, so the watchdog ignores the explorer's
    /// own work between steps.
    watch: Option<Arc<Watch>>,
}

impl<'a> Continuations<'a, '_> {
    /// Creates thread `t` running `body` (not started yet).
    ///
    /// # Safety
    ///
    /// Whatever `body` borrows must outlive `self`: every continuation is
    /// finished, or unwound when `self` is dropped.
    unsafe fn start(&mut self, t: ThreadIdx, body: Body<'a>) {
        if self.threads.len() <= t.index() {
            self.threads.resize_with(t.index() + 1, || None);
        }
        // SAFETY: passed on to our caller.
        self.threads[t.index()] = Some(unsafe { CoroutineThread::boxed(self.pool, t.0, body) });
    }

    /// Runs `t` until it suspends or finishes.
    fn resume(&mut self, t: ThreadIdx) {
        self.exec.borrow_mut().current = t;
        let _running = self.watch.as_deref().map(Watch::running);
        let slot = &mut self.threads[t.index()];
        let cont = slot
            .as_mut()
            .expect("kase internal error: resuming a finished thread");
        let finished = panic::in_coroutine(|| cont.resume()) == Resumed::Finished;
        if finished {
            slot.take().expect("present").recycle(self.pool);
        }
    }
}

impl Drop for Continuations<'_, '_> {
    /// Ends the threads an early stop left unfinished, running their
    /// destructors (so borrowed data and real locks are released). Children
    /// go before their parents (a child's index is always higher): a scoped
    /// thread may borrow from its spawner's stack.
    fn drop(&mut self) {
        let driver_panicking = std::thread::panicking();
        self.exec.borrow_mut().teardown = true;
        for (t, cont) in self.threads.drain(..).enumerate().rev() {
            let Some(cont) = cont else { continue };
            if driver_panicking {
                cont.leak();
            } else {
                self.exec.borrow_mut().current = ThreadIdx(t as u32);
                let pool = &mut *self.pool;
                panic::in_coroutine(|| cont.unwind(pool));
            }
        }
    }
}

/// Runs `main` once as a model, asking `scheduler` at every choice point.
pub(crate) fn run(
    main: &(dyn Fn() + Sync),
    scheduler: &mut dyn Scheduler,
    pool: &mut StackPool,
    interner: ThreadInterner,
    stamp: u64,
    limits: &Limits,
) -> Outcome {
    panic::install_hook();
    let exec = RefCell::new(Execution::new(stamp, interner, limits));
    let mut schedule = Vec::new();
    let mut redundant = false;
    EXECUTION.set(&exec, || {
        let watch = exec.borrow().watch.clone();
        let mut threads = Continuations {
            threads: Vec::new(),
            pool,
            exec: &exec,
            watch,
        };
        // SAFETY: `threads` is dropped at the end of this closure, before
        // `main` and `exec` go away; its drop unwinds unfinished threads.
        unsafe {
            threads.start(
                ThreadIdx::MAIN,
                thread_body(ThreadIdx::MAIN, Box::new(main)),
            )
        };
        threads.resume(ThreadIdx::MAIN);

        let mut enabled = Vec::new();
        let mut steps = 0u64;
        loop {
            if exec.borrow().fault.is_some() {
                break; // do not start children of a failed execution
            }
            // Run newly spawned threads up to their first visible operation,
            // so every live thread has a known pending action at each choice.
            loop {
                let next = exec.borrow_mut().unstarted.pop_front();
                let Some((t, body)) = next else { break };
                // SAFETY: as for the main thread; spawned bodies are 'static.
                unsafe { threads.start(t, thread_body(t, body)) };
                threads.resume(t);
            }
            let mut e = exec.borrow_mut();
            if e.fault.is_some() {
                break;
            }
            e.enabled_threads(&mut enabled);
            if enabled.is_empty() {
                let blocked: Vec<_> = e
                    .threads
                    .iter()
                    .flatten()
                    .filter_map(|t| t.pending)
                    .collect();
                if blocked.is_empty() {
                    e.check_arcs();
                } else {
                    e.fault = Some(Fault::Deadlock {
                        blocked: blocked.iter().map(|p| (p.action, p.location)).collect(),
                    });
                }
                break;
            }
            if steps >= limits.max_steps {
                e.fault = Some(Fault::Livelock { steps });
                break;
            }
            steps += 1;
            let point = ChoicePoint {
                enabled: &enabled,
                current: e.current,
                execution: &e,
            };
            let next = match scheduler.choose(&point) {
                Ok(t) => t,
                Err(Stop::Diverged(message)) => {
                    e.fault = Some(Fault::Divergence { message });
                    break;
                }
                Err(Stop::Redundant) => {
                    redundant = true;
                    break;
                }
            };
            debug_assert!(enabled.contains(&next), "scheduler chose a disabled thread");
            if enabled.len() > 1 {
                schedule.push(next);
            }
            drop(e);
            threads.resume(next);
        }
    });
    let exec = exec.into_inner();
    let objects = exec.objects.iter().map(ObjectState::kind).collect();
    let owners = exec.objects.iter().map(ObjectState::owner).collect();
    let pending = exec
        .threads
        .iter()
        .flatten()
        .filter_map(|t| Some(t.pending?.action))
        .collect();
    Outcome {
        events: exec.events,
        pending,
        redundant,
        schedule,
        fault: exec.fault,
        interner: exec.interner,
        objects,
        owners,
        peeking: exec.peeking && !exec.sections.all.is_empty(),
        peek_violation: exec.peek_violation,
    }
}

//! The state of one execution — its threads, objects and event log — and
//! the life of one visible operation: [`Execution::announce`] declares it
//! (a choice point if it is a scheduling point), [`Execution::perform`]
//! runs it in phases (record the event with its dependence clock, run the
//! shim's effect, then advance gates, happens-before, spin tracking and
//! peeking).
//!
//! Concerns live beside it: happens-before in `hb.rs`, peeking in `peek/`,
//! `Arc` leaks in `arcs.rs`, the driver loop in `driver.rs`, and what the
//! explorer sees in `scheduler.rs`.

use super::error::{self_check, usage_error, OrInternal};
use std::any::Any;
use std::collections::VecDeque;
use std::panic::Location;
use std::sync::Arc;

use super::action::{Action, ObjectIdx, ObjectKind, OpKind, ThreadIdx};
use super::arcs::TrackedArc;
use super::cleared;
use super::clock::VectorClock;
use super::continuation::Suspend;
use super::dependence::{Access, LastAccesses, SpinRole};
use super::driver::{Settle, StepInPlace};
use super::heap::Heap;
use super::object::{ObjectDetail, ObjectHandle, ObjectState};
use super::panic;
use super::peek::{AccessTag, Sections};
use super::scheduler::{Cycle, Event, Fault, Limits};
use super::spin::repeat::{Repeats, Standing, Step as RepeatStep};
use super::spin::{extend_history, SpinMemo, SpinWait};
use super::thread::{EnabledMemo, Pending, ThreadInterner, ThreadParts, ThreadState};
use super::watchdog::Watch;

/// The state of one execution, reachable from shims through [`super::with`].
pub struct Execution {
    pub(super) stamp: u64,
    pub(super) threads: Vec<Option<ThreadState>>,
    pub(super) objects: Vec<ObjectState>,
    /// By object: how many operations passed it so far. A thread's
    /// enabledness is remembered until its object is passed again
    /// (`ThreadState::enabled_memo`): working it out at every step for
    /// every waiting thread loaded each one's object record, a line
    /// rarely still in the L1 cache (5 % of disp(5,4)'s instructions).
    object_passes: Vec<u32>,
    pub(super) events: Vec<Event>,
    pub(super) current: ThreadIdx,
    pub(super) interner: ThreadInterner,
    pub(super) unstarted: VecDeque<(ThreadIdx, Box<dyn FnOnce() + Send>)>,
    pub(super) fault: Option<Fault>,
    /// Unfinished threads are being unwound after the execution ended.
    pub(super) teardown: bool,
    /// While tearing down: what a join reaches to let the thread it joins
    /// finish first (`driver.rs`, `Settle`), and the threads it is letting
    /// run on (innermost last) with the operations each made.
    pub(super) settler: Option<*const dyn Settle>,
    /// While the driver runs the threads: where the running thread makes
    /// the choice at its scheduling point itself (`driver.rs`,
    /// `StepInPlace`).
    pub(super) stepper: Option<*const dyn StepInPlace>,
    pub(super) running_on: Vec<(ThreadIdx, u32)>,
    pub(super) max_steps: u64,
    spurious_wakeups: bool,
    pub(super) watch: Option<Arc<Watch>>,
    pub(super) backtraces: bool,
    /// Set by the running operation's effect when it changed nothing.
    unmodified: Option<Unmodified>,
    /// Visible operations performed by unwinding threads (no choice point).
    unwinding_steps: u64,
    /// Critical-section peeking is on.
    pub(super) peeking: bool,
    /// Peeking was asked for and starts at the first spawn
    /// ([`start_peeking`](Self::start_peeking)).
    peeking_at_spawn: bool,
    /// Events get dependence clocks: when the explorer asks for them, and
    /// from an execution's first pure part on (peeking's checks read them).
    pub(super) dependence_clocks: bool,
    /// Peeking keeps its records (dependence clocks, the locks each thread
    /// holds, the accesses' tags): from the execution's first pure part on,
    /// which builds them for the events before it
    /// ([`start_peek_records`](Self::start_peek_records)).
    pub(super) peek_records: bool,
    /// The first event under peeking's semantics (the model's first
    /// spawn): the records of the locks held and of the accesses start
    /// there. The main thread's events before it keep their kinds from
    /// without peeking (a downgraded read guard's unlock is a `ReadUnlock`,
    /// which releases no hold), and no check could fire on them.
    pub(super) peek_from: usize,
    /// Each event's dependence clock is kept (`Outcome::clocks`): only
    /// when the explorer asked for dependence clocks, not when peeking
    /// turned them on.
    event_clocks: bool,
    /// The events' dependence clocks, by event index, if `event_clocks`.
    pub(super) event_clocks_list: Vec<VectorClock>,
    /// The spin rule's decisions in this exploration (`exec/spin`).
    spin_memo: SpinMemo,
    /// The pure parts of critical sections so far (with peeking).
    pub(super) sections: Sections,
    /// Clocks for new events, with room for their components on the heap
    /// (`Buffers::clocks`).
    spare_clocks: Vec<VectorClock>,
    /// Earlier executions' threads' (by thread) and objects' growable
    /// parts, emptied (`Buffers::thread_parts`, `Buffers::tag_reads`).
    spare_thread_parts: Vec<ThreadParts>,
    spare_tag_reads: Vec<Vec<AccessTag>>,
    /// The first sign that peeking's semantics may miss behaviours of the
    /// program (`exec/peek`, D1): the execution is real, but an exploration
    /// that relied on peeking must be redone without it.
    pub(super) peek_violation: Option<String>,
    /// The `Arc`s created in this execution (`shim/arc.rs`), with who
    /// created them and where: one still alive at the end is a leak.
    pub(super) arcs: Vec<TrackedArc>,
    /// The indices in `arcs` of those with a strong owner when last looked
    /// at (`arc_drops`).
    pub(super) live_arcs: Vec<usize>,
    /// The blocks tracked `alloc` allocated in this execution
    /// (`exec/heap.rs`).
    pub(super) heap: Heap,
    /// Rust's memory model for atomics (`exec/weak`); `None`: sequential
    /// consistency.
    pub(super) weak: Option<super::weak::WeakMemory>,
    /// Under sequential consistency: the first atomic access or fence with
    /// an ordering weaker than `SeqCst` (then RC11 allows more).
    pub(super) weaker_ordering: Option<String>,
    /// Test hook: no load is latest-only (`Limits::every_read`).
    pub(super) every_read: bool,
    /// Objects whose accesses' order matters both ways under RC11 too
    /// (`mark_strict`), in the order they were marked.
    pub(super) strict_objects: Vec<ObjectIdx>,
    /// A yield waited on several objects (`exec/spin`): explorers that
    /// order events by one object each cannot take this model.
    waited_on_several: bool,
    /// A yield waited for another thread to run (`exec/spin/alone.rs`):
    /// explorers that order events by objects cannot take this model.
    waited_alone: Option<(ThreadIdx, &'static Location<'static>)>,
    /// The states at this execution's scheduling points, under sequential
    /// consistency (`exec/spin/repeat.rs`).
    repeats: Repeats,
    /// Scratch for `check_repeat`.
    standings_buf: Vec<Standing>,
    /// The first point whose state was that at an earlier one.
    repeated: Option<Repeated>,
    /// Under sequential consistency, once the repeat rule tracks states:
    /// per number of events, the threads enabled at that scheduling point
    /// (`thread_mask`).
    enabled_log: Vec<u64>,
    /// Under sequential consistency, each event's atomic location's bits
    /// before and after it (zeros for other events), for `repeats`.
    atomic_bits: Vec<(u64, u64)>,
    /// A hash of the execution's events so far, thread by thread: the key
    /// of the repeat rule's decisions.
    trace_hash: u64,
    /// Whether the model wants its choices explored (loom's exploration
    /// controls, `shim/explore.rs`).
    exploring: Exploring,
}

/// loom's exploration controls: `stop_exploring` turns the exploration
/// of later choices off until `explore`; `skip_branch` turns it off for
/// the rest of the execution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Exploring {
    On,
    Stopped,
    Skipped,
}

/// How a writing operation changed nothing (`Execution::note_unmodified`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Unmodified {
    /// It stored nothing: a failed compare-exchange.
    NothingStored,
    /// It stored the value the location held (a `swap(true)` on `true`,
    /// a `fetch_add(0)`): the store exists (under RC11 it is a message of
    /// its own), but no thread can read a different value for it.
    SameValue,
}

/// What the gate said of an operation before it ran (the effect sees the
/// gate before the operation: a try-lock asks whether it succeeds).
struct Admission {
    /// It takes what its object published (happens-before).
    acquires: bool,
    /// A try-operation that fails.
    try_failed: bool,
}

/// Buffers an execution grows, kept empty between executions so that the
/// next one does not grow them again (an execution's objects are a few
/// hundred bytes each: growing their vector from nothing copied them over
/// and over, 2 % of a concurrent-queue execution).
#[derive(Default)]
pub(crate) struct Buffers {
    pub(super) events: Vec<Event>,
    /// The thread and store choices an execution records (`Outcome`).
    pub(super) schedule: Vec<ThreadIdx>,
    pub(super) weak_schedule: Vec<usize>,
    objects: Vec<ObjectState>,
    object_passes: Vec<u32>,
    threads: Vec<Option<ThreadState>>,
    enabled_log: Vec<u64>,
    atomic_bits: Vec<(u64, u64)>,
    /// Peeking's records: with many reads of a lock since its last write
    /// (a pure section's lock is a read), growing them anew each execution
    /// cost more than the checks.
    sections: Sections,
    /// Earlier events' clocks that hold components on the heap (models of
    /// more threads than a clock holds inline): every event keeps a clock,
    /// and allocating each anew was a tenth of pol(12,3)'s allocations.
    pub(super) clocks: Vec<VectorClock>,
    /// The list of the events' clocks (`Outcome::clocks`), empty.
    pub(super) event_clocks_list: Vec<VectorClock>,
    /// The driver's list of enabled threads at a step.
    pub(super) enabled: Vec<ThreadIdx>,
    /// The queue of spawned threads not started yet (empty).
    unstarted: VecDeque<(ThreadIdx, Box<dyn FnOnce() + Send>)>,
    /// The threads' growable parts (their clocks, spin and peeking
    /// records), emptied, by thread: allocated anew per spawned thread
    /// otherwise.
    thread_parts: Vec<ThreadParts>,
    /// The objects' lists of peeking tags of reads, emptied: a lock read
    /// by every pure section allocated one per execution.
    tag_reads: Vec<Vec<AccessTag>>,
}

impl Execution {
    /// A new execution, recording into the (empty) buffers `spare` holds:
    /// an earlier execution's, reused.
    pub(super) fn new(
        stamp: u64,
        interner: ThreadInterner,
        spare: &mut Buffers,
        limits: &Limits,
    ) -> Self {
        let events = std::mem::take(&mut spare.events);
        let objects = std::mem::take(&mut spare.objects);
        let object_passes = std::mem::take(&mut spare.object_passes);
        let threads = std::mem::take(&mut spare.threads);
        let enabled_log = std::mem::take(&mut spare.enabled_log);
        let atomic_bits = std::mem::take(&mut spare.atomic_bits);
        let sections = std::mem::take(&mut spare.sections);
        let spare_clocks = std::mem::take(&mut spare.clocks);
        let spare_thread_parts = std::mem::take(&mut spare.thread_parts);
        let spare_tag_reads = std::mem::take(&mut spare.tag_reads);
        debug_assert!(sections.all.is_empty() && sections.direct.is_empty());
        debug_assert!(events.is_empty() && objects.is_empty() && threads.is_empty());
        debug_assert!(enabled_log.is_empty() && atomic_bits.is_empty());
        let mut exec = Execution {
            stamp,
            max_steps: limits.max_steps,
            spurious_wakeups: limits.spurious_wakeups,
            watch: limits.watch.clone(),
            backtraces: limits.backtraces,
            unmodified: None,
            unwinding_steps: 0,
            peeking: false,
            peeking_at_spawn: limits.peeking,
            dependence_clocks: limits.dependence_clocks,
            peek_records: false,
            peek_from: 0,
            event_clocks: limits.dependence_clocks,
            event_clocks_list: std::mem::take(&mut spare.event_clocks_list),
            spin_memo: limits.spin_memo.clone(),
            sections,
            spare_clocks,
            spare_thread_parts,
            spare_tag_reads,
            peek_violation: None,
            arcs: Vec::new(),
            live_arcs: Vec::new(),
            heap: Heap::default(),
            weak: limits.weak.then(|| {
                super::weak::WeakMemory::new(
                    limits.psc_memo.clone(),
                    limits.history_pool.clone(),
                    limits.graph_pool.clone(),
                    limits.offer_cache.clone(),
                )
            }),
            weaker_ordering: None,
            every_read: limits.every_read,
            strict_objects: Vec::new(),
            waited_on_several: false,
            waited_alone: None,
            repeats: Repeats::default(),
            standings_buf: Vec::new(),
            repeated: None,
            enabled_log,
            atomic_bits,
            trace_hash: 0,
            exploring: Exploring::On,
            threads,
            objects,
            object_passes,
            events,
            current: ThreadIdx::MAIN,
            interner,
            unstarted: std::mem::take(&mut spare.unstarted),
            fault: None,
            teardown: false,
            settler: None,
            stepper: None,
            running_on: Vec::new(),
        };
        let object = exec.add_object(ObjectDetail::Thread(ThreadIdx::MAIN));
        // Main's clocks start empty.
        let parts = exec.thread_parts(ThreadIdx::MAIN);
        let empty = VectorClock::new();
        let main = ThreadState::new(ThreadIdx::MAIN, object, &empty, &empty, parts);
        exec.add_thread(main);
        exec
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

    /// The operations threads wait to perform, enabled or not.
    pub(crate) fn pending_actions(&self) -> impl Iterator<Item = Action> + '_ {
        self.threads
            .iter()
            .flatten()
            .filter_map(|thread| Some(thread.pending?.action))
    }

    /// The operation `thread` waits to perform, if any.
    pub(crate) fn pending(&self, thread: ThreadIdx) -> Option<Action> {
        Some(self.thread(thread).pending?.action)
    }

    /// The name given to `thread`, if any.
    pub fn thread_name(&self, thread: ThreadIdx) -> Option<&str> {
        self.interner.name(thread)
    }

    #[inline]
    pub(crate) fn thread(&self, t: ThreadIdx) -> &ThreadState {
        self.threads[t.index()]
            .as_ref()
            .or_internal("unknown thread")
    }

    #[inline]
    pub(crate) fn thread_mut(&mut self, t: ThreadIdx) -> &mut ThreadState {
        self.threads[t.index()]
            .as_mut()
            .or_internal("unknown thread")
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

    pub(super) fn add_object(&mut self, detail: ObjectDetail) -> ObjectIdx {
        let tag_reads = self.spare_tag_reads.pop().unwrap_or_default();
        self.objects.push(ObjectState::new(detail, tag_reads));
        self.object_passes.push(0);
        ObjectIdx(self.objects.len() as u32 - 1)
    }

    /// The growable parts `thread` had in the last execution, emptied.
    fn thread_parts(&mut self, thread: ThreadIdx) -> ThreadParts {
        self.spare_thread_parts
            .get_mut(thread.index())
            .map(std::mem::take)
            .unwrap_or_default()
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
        // Where the object is now, for tracked frees (`exec/heap.rs`).
        let address = handle as *const ObjectHandle as usize;
        if let Some(idx) = handle.lookup(self.stamp) {
            self.objects[idx.0 as usize].address = address;
            return idx;
        }
        let idx = self.add_object(detail());
        self.objects[idx.0 as usize].address = address;
        if !handle.register(self.stamp, idx) {
            usage_error!(
                "a shim object (e.g. a `static`) is used by two model runs at once on different OS \
                 threads; each run needs its own objects. Run these tests with `--test-threads=1`, or \
                 create the objects inside the model closure."
            );
        }
        on_first_use();
        idx
    }

    /// Gives the execution's growable buffers to `spare`, emptied, for the
    /// next execution (the events go with the outcome and come back through
    /// `Executor::reclaim`). Its objects and threads are dropped here, as
    /// they would be with the execution.
    pub(super) fn keep_buffers(&mut self, spare: &mut Buffers) {
        let mut objects = std::mem::take(&mut self.objects);
        for object in &mut objects {
            let mut reads = std::mem::take(&mut object.tags.reads);
            if reads.capacity() > 0 {
                reads.clear();
                self.spare_tag_reads.push(reads);
            }
        }
        spare.objects = cleared(objects);
        spare.object_passes = cleared(std::mem::take(&mut self.object_passes));
        spare.tag_reads = std::mem::take(&mut self.spare_tag_reads);
        let mut threads = std::mem::take(&mut self.threads);
        // By thread: each thread gets back the room its clocks grew to (a
        // thread spawned late has the longest).
        let parts = &mut self.spare_thread_parts;
        if parts.len() < threads.len() {
            parts.resize_with(threads.len(), ThreadParts::default);
        }
        for (state, room) in threads.iter_mut().zip(parts.iter_mut()) {
            if let Some(state) = state {
                *room = state.take_parts();
            }
        }
        spare.threads = cleared(threads);
        spare.thread_parts = std::mem::take(&mut self.spare_thread_parts);
        spare.enabled_log = cleared(std::mem::take(&mut self.enabled_log));
        if self.unstarted.is_empty() {
            // (Bodies never started go with the execution, as before.)
            spare.unstarted = std::mem::take(&mut self.unstarted);
        }
        spare.atomic_bits = cleared(std::mem::take(&mut self.atomic_bits));
        spare.clocks = std::mem::take(&mut self.spare_clocks);
        let Sections {
            mut all,
            direct,
            before,
            mut spare_clocks,
        } = std::mem::take(&mut self.sections);
        // Only clocks on the heap are worth keeping; the others stay where
        // they are (moving every section's two clocks through an iterator
        // chain was 1 % of pol(12,3) with peeking).
        for section in &mut all {
            for clock in [&mut section.release, &mut section.start_clock] {
                if clock.on_heap() {
                    spare_clocks.push(std::mem::take(clock));
                }
            }
        }
        all.clear();
        spare.sections = Sections {
            all,
            direct: cleared(direct),
            before,
            spare_clocks,
        };
    }

    /// Marks `object` as accessed in an order that matters both ways: an
    /// explorer that drops, under RC11, the reversal of a read after a
    /// store (the read could read an older store anyway) keeps it for this
    /// object, whose reads may read the latest store only (kase's `Once`
    /// state: `AtomicIntent::latest_only`).
    pub(crate) fn mark_strict(&mut self, object: ObjectIdx) {
        // A handful at most (one per `Once` used).
        if !self.strict_objects.contains(&object) {
            self.strict_objects.push(object);
        }
    }

    /// The objects [`mark_strict`](Self::mark_strict) marked so far.
    pub(crate) fn strict_objects(&self) -> &[ObjectIdx] {
        &self.strict_objects
    }

    /// Whether `t` was spawned and has not started.
    pub(super) fn is_unstarted(&self, t: ThreadIdx) -> bool {
        self.unstarted.iter().any(|(u, _)| *u == t)
    }

    /// The body of `t` if it was spawned and has not started.
    pub(super) fn take_unstarted(&mut self, t: ThreadIdx) -> Option<Box<dyn FnOnce() + Send>> {
        let i = self.unstarted.iter().position(|(u, _)| *u == t)?;
        self.unstarted.remove(i).map(|(_, body)| body)
    }

    /// Whether the running model thread is unwinding from a panic. The OS
    /// thread's panic count is all model threads' at once: a thread a join
    /// lets run on while the joiner unwinds (`driver.rs`, `Settle`) sees it
    /// raised without panicking itself.
    pub(crate) fn panicking(&self) -> bool {
        std::thread::panicking() && !self.running_on.iter().any(|&(t, _)| t == self.current)
    }

    /// Whether the running thread announced an operation that waits while
    /// it cannot switch away (it unwinds from a panic): the other threads
    /// then run in its place (`driver.rs`, `Settle::wait_in_place`).
    pub(super) fn waits_in_place(&self) -> bool {
        !self.teardown && self.fault.is_none() && !self.can_run(self.current)
    }

    /// After the other threads ran in the running thread's place: if its
    /// operation still waits, it never will go on, a deadlock (its
    /// destructor, say, joins a thread that cannot finish).
    pub(super) fn deadlock_unless_it_can_run(&mut self) {
        if !self.waits_in_place() {
            return;
        }
        if let Some(pending) = self.thread(self.current).pending {
            self.fault = Some(Fault::Deadlock {
                blocked: vec![(
                    pending.action,
                    pending.location,
                    self.thread(self.current).call,
                )],
                spinning: Vec::new(),
            });
        }
    }

    /// Whether suspended thread `t`'s pending operation can be performed.
    pub(super) fn can_run(&self, t: ThreadIdx) -> bool {
        self.thread(t).pending.is_some_and(|p| self.is_enabled(&p))
    }

    fn is_enabled(&self, pending: &Pending) -> bool {
        if pending.action.kind == OpKind::Yield {
            // A spinning thread waits for a modification it has not seen.
            return match &self.thread(pending.action.thread).wait {
                SpinWait::On { object, seen } => {
                    self.objects[object.0 as usize].modifications > *seen
                }
                SpinWait::Several(objects) => objects
                    .iter()
                    .any(|&(o, seen)| self.objects[o.0 as usize].modifications > seen),
                SpinWait::Alone { events } => self.events.len() > *events,
                SpinWait::Forever => false,
                SpinWait::No => true,
            };
        }
        let Some(object) = pending.action.object else {
            return true;
        };
        self.objects[object.0 as usize].enabled(pending.action.kind, pending.action.thread)
    }

    pub(super) fn enabled_threads(&self, out: &mut Vec<ThreadIdx>) {
        out.clear();
        for t in self.threads.iter().flatten() {
            if let Some(p) = &t.pending {
                if self.enabled_memoised(t, p) {
                    out.push(t.idx);
                }
            }
        }
    }

    /// [`is_enabled`](Self::is_enabled) of `thread`'s `pending` operation,
    /// remembered until its object is passed again (a yield's, which
    /// waits on more than its object, is worked out each time).
    fn enabled_memoised(&self, thread: &ThreadState, pending: &Pending) -> bool {
        let kind = pending.action.kind;
        let Some(object) = pending.action.object.filter(|_| kind != OpKind::Yield) else {
            return self.is_enabled(pending);
        };
        let passes = self.object_passes[object.0 as usize];
        let memo = thread.enabled_memo.get();
        if memo.object == object.0 && memo.kind == kind && memo.passes == passes {
            self_check!(assert_eq!(
                memo.enabled,
                self.is_enabled(pending),
                "a remembered enabledness went stale"
            ));
            return memo.enabled;
        }
        let enabled = self.is_enabled(pending);
        thread.enabled_memo.set(EnabledMemo {
            object: object.0,
            kind,
            passes,
            enabled,
        });
        enabled
    }

    /// Declares the current thread's next visible operation. Returns the
    /// suspender to yield to if the scheduler must choose before it runs.
    pub(crate) fn announce(
        &mut self,
        object: Option<ObjectIdx>,
        kind: OpKind,
        location: &'static Location<'static>,
    ) -> Option<*const dyn Suspend> {
        if !self.teardown && !self.live_arcs.is_empty() {
            self.arc_drops();
        }
        if self.peeking && !self.teardown {
            self.end_pure_part_unless(object, kind, location);
        }
        let kind = if self.peeking && !self.teardown {
            self.peek_kind(object, kind)
        } else {
            kind
        };
        let spins_on = if kind == OpKind::Yield && !self.teardown {
            self.spin_wait(location)
        } else {
            None
        };
        let action = Action {
            thread: self.current,
            object: spins_on.or(object),
            kind,
        };
        let pending = Pending { action, location };
        self.thread_mut(action.thread).latest = Some(location);
        if self.teardown {
            // The thread is being unwound after the execution ended: its
            // destructors' operations run at once, unrecorded, and never
            // block (a lock is granted, a join sees no value). If user code
            // swallowed the unwind and goes on, suspending restarts it.
            self.thread_mut(action.thread).pending = Some(pending);
            if let Some((t, steps)) = self.running_on.last_mut() {
                if *t == action.thread {
                    // A thread a join lets run on (`driver.rs`, `Settle`):
                    // past a bound it is not finishing, and goes back to
                    // the join, which unwinds it.
                    *steps += 1;
                    return (*steps > RUN_ON_STEPS)
                        .then(|| self.thread(action.thread).suspender)
                        .flatten();
                }
            }
            return if std::thread::panicking() {
                None
            } else {
                self.thread(action.thread).suspender
            };
        }
        if self.weak.is_none() && self.repeated.is_none() {
            self.check_repeat(location);
        }
        // A thread that is unwinding never switches away: std's panic count is
        // per OS thread, and another model thread (or the driver) running
        // while it is raised would see `panicking() == true` or abort on its
        // own panic. Its remaining operations run without a choice point.
        let unwinding = std::thread::panicking();
        // Inside a pure part of a critical section the thread runs on: the
        // part is one step (exec/peek).
        let pure = self.thread(action.thread).peek.pure.is_some();
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
        if let Some((t, steps)) = self.running_on.last_mut() {
            if *t == action.thread {
                // A thread a join made while unwinding lets run on
                // (`driver.rs`, `Settle`): where it would wait, or past a
                // bound, it goes back to the join.
                *steps += 1;
                if *steps > RUN_ON_STEPS || !self.is_enabled(&pending) {
                    let thread = self.thread_mut(action.thread);
                    thread.pending = Some(pending);
                    return thread.suspender;
                }
            }
        }
        let thread = self.thread_mut(action.thread);
        thread.pending = Some(pending);
        if switch {
            thread.suspender
        } else {
            None
        }
    }

    /// Makes the choice at the running thread's scheduling point (its
    /// operation just announced, with a switch) on its own stack: whether
    /// it runs on at once. Otherwise it suspends and the driver acts on the
    /// choice, or makes it: with threads to start first, while threads are
    /// torn down or run on for a join, and outside the driver.
    pub(crate) fn step_in_place(&mut self) -> bool {
        let Some(stepper) = self.stepper else {
            return false;
        };
        if self.teardown || !self.unstarted.is_empty() || !self.running_on.is_empty() {
            return false;
        }
        // SAFETY: the driver sets `stepper` while it runs this execution's
        // threads and clears it before what it points to goes away; the
        // driver waits meanwhile (this thread runs), holding no borrow of it.
        unsafe { (*stepper).step_in_place(self) }
    }

    /// Performs the current thread's announced operation: records the event
    /// with its dependence clock, then runs `effect`, which returns the
    /// operation's result and a value worth showing in reports, then moves
    /// the object's gate, happens-before, spin tracking and peeking past it.
    pub(crate) fn perform<R>(
        &mut self,
        effect: impl FnOnce(&mut Execution, &Action) -> (R, Option<u64>),
    ) -> R {
        if self.teardown {
            let pending = self.thread_mut(self.current).pending.take();
            let action = pending.or_internal("nothing announced").action;
            return effect(self, &action).0;
        }
        let t = self.current;
        let pending = self
            .thread_mut(t)
            .pending
            .take()
            .or_internal("nothing announced");
        let action = pending.action;
        if let Some(watch) = &self.watch {
            watch.tick(t, pending.location);
        }
        if self.peeking && !self.peek_records && action.kind.starts_pure_part() {
            self.start_peek_records();
        }
        let before = self.peek_records.then(|| {
            let mut before = std::mem::take(&mut self.sections.before);
            before.clone_from(&self.thread(t).clock);
            before
        });
        let at = self.record_event(&pending);
        let section = match before {
            Some(before) => {
                let section = self.peek_check(at, &action, &before);
                self.sections.before = before;
                section
            }
            None => None,
        };
        let admission = self.admit(&action);
        if let Some(object) = action.object {
            // An access to freed memory fails the execution; the memory is
            // still there (`exec/heap.rs`), so the effect may run.
            self.heap_access(object, action.kind.writes(), pending.location);
        }
        let (result, value) = effect(self, &action);
        let unmodified = self.unmodified.take();
        let stored = action.kind.writes()
            && action.kind != OpKind::Yield
            && !admission.try_failed
            && unmodified != Some(Unmodified::NothingStored);
        let modified = stored && unmodified.is_none();
        self.pass(&action, &admission, modified);
        self.events[at].modified = modified;
        self.events[at].stored = stored;
        if self.peek_records {
            self.peek_after(at, &action, section, !admission.try_failed);
        }
        // An atomic access under RC11 may see an older store; the rule for
        // writing spins takes only iterations that saw the newest (asked
        // only inside one: after the thread's first yield).
        let latest = match action.object {
            Some(object)
                if self.weak_on()
                    && action.kind.is_atomic_access()
                    && self.thread(t).alone.tracking() =>
            {
                self.weak_access_latest(t, object, stored)
            }
            _ => true,
        };
        let thread = self.thread_mut(t);
        thread.hb.tick(t);
        let location = pending.location as *const Location<'static> as u64;
        let words = [
            action.kind as u64,
            location,
            value.unwrap_or(u64::MAX),
            u64::from(modified),
        ];
        thread.history = extend_history(thread.history, words);
        thread.standing.since = extend_history(thread.standing.since, words);
        thread.alone.event(action.kind, latest, words);
        let history = thread.history;
        self.trace_hash = extend_history(self.trace_hash, [u64::from(t.0), history, 0, 0]);
        if self.weak.is_none() && !self.may_repeat(&action) {
            self.repeats.forget();
        }
        self.events[at].value = value;
        result
    }

    /// Phase 1 of [`perform`](Self::perform): the event, with its
    /// dependence clock (its thread's last event joined with the accesses
    /// of its object it depends on, `exec/dependence.rs`). Returns its index.
    fn record_event(&mut self, pending: &Pending) -> usize {
        let action = pending.action;
        let t = action.thread;
        let access = action.kind.props().access;
        let thread = self.threads[t.index()]
            .as_mut()
            .or_internal("unknown thread");
        thread.events += 1;
        // The thread's dependence clock takes in what the event depends on,
        // in place. The event's own copy is kept only for an explorer that
        // reads them (`event_clocks`); peeking needs the thread's and the
        // objects' clocks only (`exec/peek`), and a copy per event was most
        // of an event's cost in a model of more threads than a clock holds
        // inline.
        if self.dependence_clocks {
            let dependence = action
                .object
                .map(|o| &mut self.objects[o.0 as usize].dependence);
            advance_dependence_clock(&mut thread.clock, t, thread.events, dependence, access);
            if self.event_clocks {
                let mut clock = self.spare_clocks.pop().unwrap_or_default();
                clock.clone_from(&thread.clock);
                self.event_clocks_list.push(clock);
            }
        }
        if let Some(call) = thread.call.as_mut() {
            // An upgrade ends the pure part of an earlier critical section
            // (peeking): its lock is not what the call is on.
            if !matches!(action.kind, OpKind::Upgrade | OpKind::ReadUpgrade) {
                call.object = call.object.or(action.object);
            }
        }
        let call = thread.call.map(Box::new);
        if self.weak.is_none() {
            self.atomic_bits.push((0, 0));
        }
        self.events.push(Event {
            action,
            location: pending.location,
            value: None,
            modified: false,
            stored: false,
            backtrace: self
                .backtraces
                .then(|| Box::new(backtrace::Backtrace::new_unresolved())),
            call,
            explore: self.exploring == Exploring::On,
        });
        self.events.len() - 1
    }

    /// Phase 2: what the object's gate says of the operation before it runs.
    fn admit(&self, action: &Action) -> Admission {
        let Some(object) = action.object else {
            return Admission {
                acquires: false,
                try_failed: false,
            };
        };
        let obj = &self.objects[object.0 as usize];
        Admission {
            acquires: obj.acquires(action.kind, action.thread),
            try_failed: action.kind.is_try() && !obj.try_succeeds(action.kind),
        }
    }

    /// Phase 3, after the effect: the object's happens-before and gate move
    /// past the operation, and its thread's spin tracking counts it.
    fn pass(&mut self, action: &Action, admission: &Admission, modified: bool) {
        let t = action.thread;
        let mut mods = 0;
        if let Some(object) = action.object {
            self.synchronise(t, object, action.kind, admission.acquires);
            self.object_passes[object.0 as usize] += 1;
            let obj = &mut self.objects[object.0 as usize];
            obj.pass_gate(action.kind, t);
            obj.modifications += u64::from(modified);
            mods = obj.modifications;
        }
        let thread = self.thread_mut(t);
        match (action.kind.props().spin, action.object, modified) {
            (SpinRole::Yield, ..) => thread.wait = SpinWait::No,
            (SpinRole::Ignored, ..) | (SpinRole::Counts, None, false) => {}
            (SpinRole::Counts, Some(object), false) => thread.spin.read(object, mods),
            (SpinRole::LockOp, Some(object), _) => thread.spin.lock_op(object, mods, modified),
            (SpinRole::Counts | SpinRole::LockOp, ..) => thread.spin.modified(),
        }
    }

    /// Decides what the current thread's yield at `location` waits for
    /// (`exec/spin`): returns the object it waits on, if one.
    fn spin_wait(&mut self, location: &'static Location<'static>) -> Option<ObjectIdx> {
        let memo = self.spin_memo.clone();
        let events = self.events.len();
        let thread = self.thread_mut(self.current);
        // Without a captured state (a yield from kase's own code): the
        // location alone, as if the loop kept no state of its own.
        let at_location = location as *const Location<'static> as u64;
        let fp = thread.fingerprint.take().unwrap_or(at_location);
        thread.standing = Standing {
            fingerprint: fp,
            since: 0,
        };
        self.repeats.start();
        let thread = self.thread_mut(self.current);
        // A first yield since the last modification closes no cycle in any
        // execution: nothing to keep for replays.
        let cycle = if thread.spin.may_close_cycle() {
            let key = (thread.idx, thread.history);
            memo.decide(key, || thread.spin.cycle_start(fp))
        } else {
            None
        };
        thread.wait = thread.spin.at_yield(fp, cycle);
        // A spin that writes (`exec/spin/alone.rs`): decided for every yield,
        // used where the read-only cycle rule has nothing.
        let own = thread.events;
        let key_words = thread.alone.key_words(events);
        // The track moves on at every yield; only what sees addresses, the
        // state fingerprints, is kept for the exploration.
        let alone = thread
            .alone
            .at_yield(fp, events, own)
            .is_some_and(|same_state| {
                let key = (thread.idx, extend_history(thread.history, key_words));
                memo.decide_alone(key, || same_state)
            });
        if alone && thread.wait == SpinWait::No {
            thread.wait = SpinWait::Alone { events };
            let first = (thread.idx, location);
            self.waited_alone.get_or_insert(first);
        }
        let thread = self.thread(self.current);
        match thread.wait {
            SpinWait::On { object, .. } => Some(object),
            SpinWait::Several(_) => {
                // No one object's write wakes it, so no explorer that
                // orders events by object sees what the yield waits for:
                // POR gives such a model up, and so does the revisit
                // explorer (a revisit could move the write that woke it
                // after it).
                self.waited_on_several = true;
                None
            }
            _ => None,
        }
    }

    /// Whether an event may be part of a repeating window
    /// (`exec/spin/repeat.rs`): an atomic access, a fence or a yield.
    fn may_repeat(&self, action: &Action) -> bool {
        match (action.kind, action.object) {
            (OpKind::Fence | OpKind::Yield, _) => true,
            (OpKind::Load | OpKind::Store | OpKind::Rmw | OpKind::CompareExchange, Some(o)) => {
                self.objects[o.0 as usize].kind() == ObjectKind::Atomic
            }
            _ => false,
        }
    }

    /// The repeat rule (`exec/spin/repeat.rs`) at the scheduling point
    /// before the current thread's operation at `location`.
    fn check_repeat(&mut self, location: &'static Location<'static>) {
        // Nothing is kept before the execution's first yield.
        if !self.repeats.started() {
            return;
        }
        self.standings_buf.clear();
        self.standings_buf
            .extend(self.threads.iter().flatten().map(|t| t.standing));
        let (events, atomic_bits) = (&self.events, &self.atomic_bits);
        let step = |i: usize| {
            let event = &events[i];
            let action = event.action;
            let access = match (action.kind, action.object) {
                (OpKind::Fence | OpKind::Yield, _) | (_, None) => None,
                (_, Some(object)) => {
                    let (before, after) = atomic_bits[i];
                    Some((object, before, after))
                }
            };
            RepeatStep {
                thread: action.thread,
                modified: event.modified,
                access,
            }
        };
        let found = self
            .repeats
            .at_point(events.len(), self.current, &self.standings_buf, step);
        if found.is_empty() {
            return;
        }
        // Fingerprints see addresses: the first decision after this
        // execution's events is the one every replay makes.
        let key = (self.current, self.trace_hash);
        let chosen = self.spin_memo.decide_repeat(key, || {
            found.iter().find(|c| c.same_state).map(|c| c.events)
        });
        if let Some(at) = chosen.filter(|&at| found.iter().any(|c| c.events == at)) {
            self.repeated = Some(Repeated {
                thread: self.current,
                location,
                since: at,
            });
        }
    }

    /// Records which threads are enabled at the scheduling point after the
    /// events so far (for [`fair_cycle`](Self::fair_cycle)).
    pub(super) fn note_enabled(&mut self, enabled: &[ThreadIdx]) {
        if self.weak.is_some() || !self.repeats.started() {
            return;
        }
        let at = self.events.len();
        if self.enabled_log.len() <= at {
            self.enabled_log.resize(at + 1, 0);
        }
        self.enabled_log[at] |= thread_mask(enabled.iter().copied());
    }

    /// The repeated state's cycle (`repeated`), if a fair scheduler can
    /// follow it forever: every thread enabled at some scheduling point in
    /// it, `enabled` (the current one's) included, took a step in it. Its
    /// steps then lead back to the same state, again and again, with no
    /// thread starved: a livelock. A thread left waiting while it could
    /// run (the one that would end the loop) makes it no livelock: the
    /// state is only one an earlier point already covers.
    pub(super) fn fair_cycle(&self, enabled: &[ThreadIdx]) -> Option<Cycle> {
        let (since, until) = (self.repeated?.since, self.events.len());
        let window = &self.events[since..until];
        let stepped = thread_mask(window.iter().map(|e| e.action.thread));
        let could_run = self
            .enabled_log
            .get(since..until)?
            .iter()
            .fold(thread_mask(enabled.iter().copied()), |all, m| all | m);
        if could_run & !stepped != 0 || (could_run | stepped) & MANY_THREADS != 0 {
            return None;
        }
        let threads = self
            .threads
            .iter()
            .flatten()
            .filter(|t| stepped & thread_mask(std::iter::once(t.idx)) != 0)
            .filter_map(|t| t.pending.map(|p| (p.action, p.location)))
            .collect();
        Some(Cycle {
            since,
            until,
            threads,
        })
    }

    /// The first scheduling point of this execution whose state was that at
    /// an earlier one (`exec/spin/repeat.rs`): the thread that ran last and
    /// the location of its next operation. The exhaustive search ends the
    /// execution there as redundant; the reductions cannot take it.
    pub(crate) fn repeated(&self) -> Option<(ThreadIdx, &'static Location<'static>)> {
        self.repeated.map(|r| (r.thread, r.location))
    }

    /// Under sequential consistency: the current atomic access's location
    /// held `before` and holds `after` (the repeat rule compares values).
    pub(crate) fn note_atomic_bits(&mut self, before: u64, after: u64) {
        // Unwinding threads' operations are not events.
        if self.teardown {
            return;
        }
        if let Some(last) = self.atomic_bits.last_mut() {
            *last = (before, after);
        }
        if let Some(object) = self.events.last().and_then(|e| e.action.object) {
            self.repeats.accessed(object, after);
        }
    }

    /// Whether a yield waited on several objects in this execution (under
    /// sequential consistency: it runs once one of them is modified).
    pub(crate) fn waited_on_several(&self) -> bool {
        self.waited_on_several
    }

    /// The first yield in this execution that waited for another thread
    /// to run (`exec/spin/alone.rs`): its thread and location.
    pub(crate) fn waited_alone(&self) -> Option<(ThreadIdx, &'static Location<'static>)> {
        self.waited_alone
    }

    /// The current thread wrote shared state without an event (data through
    /// a lock guard without peeking, a tracked cell, a `thread_local!`): no
    /// iteration before this repeats itself.
    pub(crate) fn note_unseen_write(&mut self) {
        if !self.teardown {
            self.repeats.forget();
            self.thread_mut(self.current).spin.modified();
        }
    }

    /// The current thread accessed a `thread_local!` value, and its bytes
    /// in place `changed` (`exec/local.rs`): a change ends any spin. Bytes
    /// may hold addresses, which another execution may not reproduce, so
    /// the first answer after a thread history is kept for the exploration
    /// (as `SpinMemo` keeps the cycle rule's).
    pub(crate) fn note_local_access(&mut self, changed: bool) {
        if self.teardown {
            return;
        }
        // The repeat rule's state does not see thread-local values.
        self.repeats.forget();
        let memo = self.spin_memo.clone();
        let thread = self.thread_mut(self.current);
        let history = thread.history;
        let n = match &mut thread.local_accesses {
            (h, n) if *h == history => {
                *n += 1;
                *n
            }
            slot => {
                *slot = (history, 1);
                1
            }
        };
        // Without a yield since its last modification the thread keeps
        // nothing a change could end: no decision to keep.
        if thread.spin.may_close_cycle() && memo.decide_change((thread.idx, history), n, changed) {
            thread.spin.modified();
        }
    }

    /// Records the fingerprint of the current thread's state for the yield
    /// it is about to announce.
    pub(crate) fn set_fingerprint(
        &mut self,
        state: &super::spin::fingerprint::CallerState,
        location: &'static Location<'static>,
    ) {
        let thread = self.thread_mut(self.current);
        let fp = state.fingerprint(thread.stack_top, location);
        thread.fingerprint = Some(fp);
    }

    /// The threads whose pending yield waits (`exec/spin`), with what each
    /// waits for another thread to change. (`wait` is set when a yield is
    /// announced and cleared when it runs, so it is the pending yield's.)
    pub(crate) fn spinning(&self) -> Vec<(ThreadIdx, Vec<ObjectIdx>)> {
        let waiting = |t: &ThreadState| {
            let objects = match &t.wait {
                SpinWait::On { object, .. } => vec![*object],
                SpinWait::Forever => Vec::new(),
                SpinWait::Several(objects) => objects.iter().map(|&(o, _)| o).collect(),
                // Not a read-only cycle: reported as a blocked yield.
                SpinWait::No | SpinWait::Alone { .. } => return None,
            };
            Some((t.idx, objects))
        };
        self.threads.iter().flatten().filter_map(waiting).collect()
    }

    /// Whether thread `t`'s pending yield closes a cycle over several
    /// objects none of which changed since: running it changes nothing
    /// (`exec/spin`).
    pub(crate) fn spins_unchanged(&self, t: ThreadIdx) -> bool {
        match &self.thread(t).wait {
            SpinWait::Several(objects) => objects
                .iter()
                .all(|&(o, seen)| self.objects[o.0 as usize].modifications == seen),
            _ => false,
        }
    }

    /// Tells `perform` that the current operation changed nothing: it
    /// stored nothing (a failed compare-exchange) or stored the value the
    /// location held. Either way no spin waiting on the location wakes.
    pub(crate) fn note_unmodified(&mut self, how: Unmodified) {
        self.unmodified = Some(how);
    }

    /// Creates a thread spawned by the current one (called from the spawn
    /// operation's effect, so the child's clock starts after the spawn event).
    pub(crate) fn spawn_child(
        &mut self,
        body: Box<dyn FnOnce() + Send>,
        name: Option<String>,
        scoped: bool,
    ) -> ThreadIdx {
        let parent = self.current;
        if std::mem::take(&mut self.peeking_at_spawn) {
            self.start_peeking(parent);
        }
        let nth = {
            let p = self.thread_mut(parent);
            p.spawned += 1;
            p.spawned - 1
        };
        let child = self.interner.child(parent, nth, name);
        let object = self.add_object(ObjectDetail::Thread(child));
        let parts = self.thread_parts(child);
        // The spawner's clocks are those of the spawn event, just recorded.
        let spawner = self.thread(parent);
        let mut state = ThreadState::new(child, object, &spawner.clock, &spawner.hb.clock, parts);
        state.spawner = Some(parent);
        state.scoped = scoped;
        self.add_thread(state);
        self.unstarted.push_back((child, body));
        if let Some(watch) = &self.watch {
            // Two model threads: one may now block on what the other holds.
            watch.arm();
        }
        child
    }

    /// Turns critical-section peeking on at the model's first spawn, by
    /// `parent`: until a second thread exists, peeking has nothing to
    /// reorder. What the main thread did before is ordered before everything
    /// the new threads will do, by its program order and the spawn, so it
    /// stands outside every pure part: plain events, as without peeking.
    /// (Peeking's records start later still, at the first pure part:
    /// `exec/peek/records.rs`.)
    ///
    /// A lock the main thread holds across the spawn would be a section
    /// begun without peeking and ended with it (a read lock's unlock would
    /// not match its lock), so then peeking stays off for the execution; the
    /// main thread's steps up to its first spawn are the same in every
    /// execution, so it does for the whole exploration.
    fn start_peeking(&mut self, parent: ThreadIdx) {
        let holds_a_lock = self.objects.iter().any(|o| {
            matches!(o.kind(), ObjectKind::Mutex | ObjectKind::RwLock)
                && !o.enabled(OpKind::Lock, parent)
        });
        if holds_a_lock {
            return;
        }
        self.peeking = true;
        // The spawn, whose effect this is, is the last event.
        self.peek_from = self.events.len().saturating_sub(1);
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

    /// Whether the execution is over and its unfinished threads are being
    /// unwound (their destructors' operations run unrecorded).
    pub(crate) fn tearing_down(&self) -> bool {
        self.teardown
    }

    /// The order unfinished threads are torn down in: each before the
    /// threads it spawned, so that a destructor that joins one (a pool
    /// stopping its workers) finds it still there to let finish; but a
    /// scoped thread before its spawner, whose frames it may borrow from.
    pub(super) fn teardown_order(&self) -> Vec<ThreadIdx> {
        fn place(e: &Execution, t: usize, placed: &mut [bool], order: &mut Vec<ThreadIdx>) {
            for c in (t + 1..e.threads.len()).rev() {
                let scoped_child = e.threads[c]
                    .as_ref()
                    .is_some_and(|c| c.scoped && c.spawner.is_some_and(|s| s.index() == t));
                if scoped_child && !placed[c] {
                    place(e, c, placed, order);
                }
            }
            placed[t] = true;
            order.push(ThreadIdx(t as u32));
        }
        let mut placed = vec![false; self.threads.len()];
        let mut order = Vec::with_capacity(self.threads.len());
        for t in 0..self.threads.len() {
            if !placed[t] && self.threads[t].is_some() {
                place(self, t, &mut placed, &mut order);
            }
        }
        order
    }

    /// Whether the model wants the choice made now explored (loom's
    /// exploration controls).
    pub(crate) fn exploring(&self) -> bool {
        self.exploring == Exploring::On
    }

    /// loom's `explore` (`On`), `stop_exploring` (`Stopped`) and
    /// `skip_branch` (`Skipped`, which `explore` does not undo).
    pub(crate) fn set_exploring(&mut self, to: Exploring) {
        if self.exploring != Exploring::Skipped {
            self.exploring = to;
        }
    }

    /// Whether `thread` has exited.
    pub(crate) fn is_finished(&self, thread: ThreadIdx) -> bool {
        self.thread(thread).finished
    }

    /// Records the first panic; hands back a payload it did not keep.
    pub(super) fn record_panic(
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
    pub(super) fn announce_exit(&mut self) -> Option<*const dyn Suspend> {
        let object = self.thread(self.current).object;
        let suspender = self.announce(Some(object), OpKind::Exit, Location::caller());
        if self.fault.is_some() {
            None
        } else {
            suspender
        }
    }

    /// The current thread's exit. When main's exits (the model closure
    /// returned), threads it spawned and did not join go on: they run to
    /// completion, as under loom (std would let them outlive `main` too; a
    /// detached thread is no failure, one that can never finish deadlocks).
    pub(super) fn perform_exit(&mut self) {
        self.perform(|_, _| ((), None));
        let thread = self.thread_mut(self.current);
        thread.finished = true;
        thread.suspender = None;
    }
}

/// The first scheduling point whose state was that at an earlier one
/// (`exec/spin/repeat.rs`).
#[derive(Clone, Copy)]
struct Repeated {
    /// The thread that ran last.
    thread: ThreadIdx,
    /// Where its next operation is.
    location: &'static Location<'static>,
    /// The number of events at the earlier point.
    since: usize,
}

/// How many operations a thread a join lets run on while tearing down may
/// make before the join gives up on it (it waits for something that never
/// comes) and unwinds it.
const RUN_ON_STEPS: u32 = 10_000;

/// In a [`thread_mask`]: some thread past the 63rd (then no cycle is
/// judged fair: the mask cannot tell them apart).
const MANY_THREADS: u64 = 1 << 63;

/// Threads as a bit set: bit `i` for thread `i`, [`MANY_THREADS`] for any
/// thread from the 64th on.
fn thread_mask(threads: impl Iterator<Item = ThreadIdx>) -> u64 {
    threads.fold(0, |mask, t| mask | 1 << t.index().min(63))
}

/// Moves `clock`, thread `t`'s dependence clock, past its `seq`th event, an
/// access of kind `access` to the object whose last accesses are
/// `dependence` (if any): it takes in what the event depends on, and the
/// object records it.
pub(super) fn advance_dependence_clock(
    clock: &mut VectorClock,
    t: ThreadIdx,
    seq: u32,
    dependence: Option<&mut LastAccesses<VectorClock, VectorClock>>,
    access: Access,
) {
    match dependence {
        Some(dependence) => {
            for depended in dependence.depended_on(access) {
                clock.join(depended);
            }
            clock.set(t, seq);
            dependence.record_clock(clock, access);
        }
        None => clock.set(t, seq),
    }
}

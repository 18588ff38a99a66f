//! The driver: runs one execution from start to end, resuming model threads
//! (continuations) one at a time and asking the [`Scheduler`] at every
//! choice point; unwinds the threads an early stop left unfinished.

use super::error::OrInternal;
use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use super::action::ThreadIdx;
use super::continuation::{Body, Continuation, CoroutineThread, Resumed, StackPool, Suspend};
use super::execution::Execution;
use super::object::ObjectState;
use super::panic;
use super::scheduler::{ChoicePoint, Fault, Limits, Outcome, Scheduler, Stop, WeakPoint};
use super::thread::ThreadInterner;
use super::watchdog::Watch;
use super::weak::WeakMemory;
use super::EXECUTION;

/// The body every model thread runs: the user's closure, then its exit.
fn thread_body<'a>(thread: ThreadIdx, body: Box<dyn FnOnce() + 'a>) -> Body<'a> {
    Box::new(move |suspender: &dyn Suspend| {
        // SAFETY: only the lifetime is erased. The pointer is cleared in
        // `perform_exit` before the body returns, and only dereferenced while
        // this thread runs, i.e. while `suspender` is alive.
        let erased: *const (dyn Suspend + 'static) =
            unsafe { std::mem::transmute(suspender as *const dyn Suspend) };
        // The outermost frame of the body: fingerprints of the thread's
        // state at yields hash its stack up to here (exec/spin).
        let top = 0u8;
        let stack_top = std::ptr::addr_of!(top) as usize;
        super::with(|e| {
            let state = e.thread_mut(thread);
            state.suspender = Some(erased);
            state.stack_top = stack_top;
        });
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
        let _running = self.watch.as_deref().map(|w| w.running(t));
        let slot = &mut self.threads[t.index()];
        let cont = slot.as_mut().or_internal("resuming a finished thread");
        let finished = panic::in_coroutine(|| cont.resume()) == Resumed::Finished;
        if finished {
            slot.take().expect("present").recycle(self.pool);
        }
    }
}

impl Drop for Continuations<'_, '_> {
    /// Ends the threads an early stop left unfinished, running their
    /// destructors (so borrowed data and real locks are released), in
    /// `Execution::teardown_order`: a thread before the threads it spawned,
    /// a scoped thread before its spawner (it may borrow from its stack). A
    /// destructor that joins a thread not torn down yet lets it run on to
    /// its end first (`Settle`), as a pool's `Drop` that stops and joins its
    /// workers expects; before, the worker was unwound first, the join got
    /// no value, and the destructor's `unwrap` aborted the process.
    fn drop(&mut self) {
        let driver_panicking = std::thread::panicking();
        self.exec.borrow_mut().teardown = true;
        if driver_panicking {
            for cont in self.threads.drain(..).flatten() {
                cont.leak();
            }
            return;
        }
        let order = self.exec.borrow().teardown_order();
        let tearing = TearingDown {
            threads: RefCell::new(std::mem::take(&mut self.threads)),
            pool: RefCell::new(&mut *self.pool),
            exec: self.exec,
        };
        let _registered = tearing.register();
        for t in order {
            let taken = tearing
                .threads
                .borrow_mut()
                .get_mut(t.index())
                .and_then(Option::take);
            // Gone: it finished, or a join let it run to its end.
            let Some(mut cont) = taken else { continue };
            self.exec.borrow_mut().current = t;
            panic::in_coroutine(|| cont.force_unwind());
            cont.recycle(&mut tearing.pool.borrow_mut());
        }
    }
}

/// What a join reaches while the execution is torn down: the threads not
/// torn down yet (`Execution::settler`).
pub(crate) trait Settle {
    /// Lets `thread`, if it is not torn down yet, run on from where it
    /// stopped: its operations run at once and unrecorded, as its
    /// destructors' would, until it finishes; one that does not finish
    /// within a bound (it waits for something that never comes) is unwound
    /// instead.
    fn settle(&self, thread: ThreadIdx);
}

/// The continuations being torn down, shared with the joins of their
/// destructors.
struct TearingDown<'a, 'p> {
    threads: RefCell<Vec<Option<Box<dyn Continuation + 'a>>>>,
    pool: RefCell<&'p mut StackPool>,
    exec: &'a RefCell<Execution>,
}

impl TearingDown<'_, '_> {
    /// Makes `self` what joins reach until the returned guard is dropped.
    fn register(&self) -> impl Drop + '_ {
        struct Registered<'e>(&'e RefCell<Execution>);
        impl Drop for Registered<'_> {
            fn drop(&mut self) {
                self.0.borrow_mut().settler = None;
            }
        }
        let settler: *const (dyn Settle + '_) = self;
        // SAFETY: only the lifetime is erased. The guard clears the pointer
        // before `self` goes away (it borrows `self`), and the pointer is
        // used only by joins made while `self` tears the threads down.
        let settler: *const (dyn Settle + 'static) = unsafe { std::mem::transmute(settler) };
        self.exec.borrow_mut().settler = Some(settler);
        Registered(self.exec)
    }
}

impl Settle for TearingDown<'_, '_> {
    fn settle(&self, thread: ThreadIdx) {
        let taken = self
            .threads
            .borrow_mut()
            .get_mut(thread.index())
            .and_then(Option::take);
        let Some(mut cont) = taken else { return };
        let joiner = {
            let mut e = self.exec.borrow_mut();
            e.running_on.push((thread, 0));
            std::mem::replace(&mut e.current, thread)
        };
        // Its body passes a panic of its own on while tearing down; it
        // ends the thread like a return.
        let resumed = catch_unwind(AssertUnwindSafe(|| cont.resume()));
        self.exec.borrow_mut().running_on.pop();
        if let Ok(Resumed::Suspended) = resumed {
            // It did not finish within the bound (`Execution::announce`).
            cont.force_unwind();
        }
        self.exec.borrow_mut().current = joiner;
        cont.recycle(&mut self.pool.borrow_mut());
        drop(resumed); // its payload's `Drop` may use shims
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
    let mut weak_schedule = Vec::new();
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
            // Threads that can only repeat a spin iteration that changes
            // nothing make no progress either (exec/spin).
            let stuck = enabled.iter().all(|&t| e.spins_unchanged(t));
            if enabled.is_empty() || stuck {
                let blocked: Vec<_> = e
                    .threads
                    .iter()
                    .flatten()
                    .filter_map(|t| t.pending.map(|p| (p.action, p.location, t.call)))
                    .collect();
                if blocked.is_empty() {
                    e.check_arcs();
                    e.check_allocations();
                } else {
                    let spinning = e.spinning();
                    if e.weak_on() && e.weak_stale_spin(&spinning) {
                        // Only a stale read keeps it spinning (RC11): the
                        // branch that reads the newer store is the real one.
                        redundant = true;
                        break;
                    }
                    e.fault = Some(Fault::Deadlock { blocked, spinning });
                }
                break;
            }
            e.note_enabled(&enabled);
            if let Some(cycle) = e.repeated().and_then(|_| e.fair_cycle(&enabled)) {
                e.fault = Some(Fault::Livelock {
                    steps,
                    cycle: Some(cycle),
                });
                break;
            }
            if steps >= limits.max_steps {
                e.fault = Some(Fault::Livelock { steps, cycle: None });
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
            if e.weak_on() {
                match choose_weak(scheduler, &mut e, next) {
                    Ok(Some(k)) => weak_schedule.push(k),
                    Ok(None) => {}
                    Err(Stop::Diverged(message)) => {
                        e.fault = Some(Fault::Divergence { message });
                        break;
                    }
                    Err(Stop::Redundant) => {
                        redundant = true;
                        break;
                    }
                }
            }
            drop(e);
            threads.resume(next);
        }
    });
    let mut exec = exec.into_inner();
    let weak = exec.weak.take().map(WeakMemory::into_summary);
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
        weak,
        weak_schedule,
        weaker_ordering: exec.weaker_ordering,
    }
}

/// Under RC11, asks `scheduler` how thread `next`'s pending operation goes
/// if it is an atomic access; returns the option chosen then. An access no
/// store can consistently satisfy ends the execution as redundant: no graph
/// extends this one.
fn choose_weak(
    scheduler: &mut dyn Scheduler,
    e: &mut Execution,
    next: ThreadIdx,
) -> Result<Option<usize>, Stop> {
    let explore = e.exploring();
    let Some((sources, after)) = e.weak_sources(next) else {
        return Ok(None);
    };
    if sources.is_empty() {
        return Err(Stop::Redundant);
    }
    let options = sources.len();
    let point = WeakPoint {
        thread: next,
        options,
        sources,
        after,
        explore,
    };
    let k = scheduler.choose_weak(&point)?;
    e.set_weak_choice(k);
    // Only real choices are recorded (and replayed), as for threads.
    Ok((options > 1).then_some(k))
}

//! The driver: runs one execution from start to end, resuming model threads
//! (continuations) one at a time and asking the [`Scheduler`] at every
//! choice point; unwinds the threads an early stop left unfinished.
//!
//! The choice at a running thread's scheduling point is made on that
//! thread's stack ([`StepInPlace`]): when the thread itself is chosen, as
//! at most choices, it runs on without a switch to the driver and back.
//! The driver makes the choices that follow a thread's start or end, and
//! acts on those that switch threads or end the execution.

use super::error::OrInternal;
use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use super::action::ThreadIdx;
use super::continuation::{Continuation, CoroutineThread, Resumed, StackPool, Suspend};
use super::execution::{Buffers, Execution};
use super::heap::mode::Mode;
use super::object::ObjectState;
use super::panic;
use super::scheduler::{ChoicePoint, Fault, Limits, Outcome, Scheduler, Stop, WeakPoint};
use super::thread::ThreadInterner;
use super::watchdog::Watch;
use super::weak::WeakMemory;
use super::EXECUTION;

/// The body every model thread runs: the user's closure, then its exit.
fn thread_body<'a>(
    thread: ThreadIdx,
    body: Box<dyn FnOnce() + 'a>,
) -> impl FnOnce(&dyn Suspend) + 'a {
    move |suspender: &dyn Suspend| {
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
                // The forced unwind of an unfinished thread has run its
                // destructors: the thread ends here. Returning (which the
                // coroutine's owner accepts as the end of a forced unwind)
                // instead of raising the payload again saves a second
                // unwind, which cost 3 % of all instructions on
                // concurrent-queue's models under a bound (many executions
                // end early there).
                drop(payload);
                return;
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
    }
}

/// The continuations of one execution's threads, by [`ThreadIdx`]. A
/// thread's is taken out of the table while it runs, so that a join it
/// makes can reach the thread it joins (`Settle`).
struct Continuations<'a, 'p> {
    threads: RefCell<Vec<Option<CoroutineThread>>>,
    pool: RefCell<&'p mut StackPool>,
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
    unsafe fn start(&self, t: ThreadIdx, body: impl FnOnce(&dyn Suspend) + 'a) {
        let mut pool = self.pool.borrow_mut();
        // SAFETY: passed on to our caller.
        let cont = unsafe { CoroutineThread::new(&mut pool, t.0, body) };
        let mut threads = self.threads.borrow_mut();
        if threads.len() <= t.index() {
            threads.resize_with(t.index() + 1, || None);
        }
        threads[t.index()] = Some(cont);
    }

    /// Takes `t`'s continuation out of the table while it runs; it goes
    /// back when the returned guard is dropped unless it finished.
    fn take(&self, t: ThreadIdx) -> Option<Running<'_>> {
        let cont = self.threads.borrow_mut().get_mut(t.index())?.take()?;
        Some(Running {
            table: &self.threads,
            t,
            cont: Some(cont),
        })
    }

    /// Runs `t` until it suspends or finishes.
    fn resume(&self, t: ThreadIdx) {
        self.exec.borrow_mut().current = t;
        let _running = self.watch.as_deref().map(|w| w.running(t));
        let mut running = self.take(t).or_internal("resuming a finished thread");
        if panic::in_coroutine(|| running.resume()) == Resumed::Finished {
            running.recycle(&mut self.pool.borrow_mut());
        }
    }

    /// Makes `self` what joins reach until the returned guard is dropped.
    fn register(&self) -> impl Drop + '_ {
        let settler: *const (dyn Settle + '_) = self;
        // SAFETY: only the lifetime is erased. The guard clears the pointer
        // before `self` goes away (it borrows `self`), and the pointer is
        // used only by joins of the threads `self` runs meanwhile.
        let settler: *const (dyn Settle + 'static) = unsafe { std::mem::transmute(settler) };
        self.exec.borrow_mut().settler = Some(settler);
        Clears(self.exec, |e| e.settler = None)
    }
}

/// A continuation taken out of its table while it runs.
struct Running<'t> {
    table: &'t RefCell<Vec<Option<CoroutineThread>>>,
    t: ThreadIdx,
    cont: Option<CoroutineThread>,
}

impl Running<'_> {
    fn resume(&mut self) -> Resumed {
        self.cont.as_mut().expect("present").resume()
    }

    fn force_unwind(&mut self) {
        self.cont.as_mut().expect("present").force_unwind();
    }

    /// Its thread is done: its resources go back to `pool`.
    fn recycle(mut self, pool: &mut StackPool) {
        self.cont.take().expect("present").recycle(pool);
    }
}

impl Drop for Running<'_> {
    /// Back into the table (also when the driver panics: its teardown then
    /// leaks it).
    fn drop(&mut self) {
        if let Some(cont) = self.cont.take() {
            self.table.borrow_mut()[self.t.index()] = Some(cont);
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
            for cont in self.threads.get_mut().drain(..).flatten() {
                cont.leak();
            }
            return;
        }
        let _registered = self.register();
        let order = self.exec.borrow().teardown_order();
        for t in order {
            // Gone: it finished, or a join let it run to its end.
            let Some(mut running) = self.take(t) else {
                continue;
            };
            self.exec.borrow_mut().current = t;
            panic::in_coroutine(|| running.force_unwind());
            running.recycle(&mut self.pool.borrow_mut());
        }
        // Every thread is done; the table (dropped here before) serves the
        // next execution.
        let table = std::mem::take(&mut *self.threads.borrow_mut());
        self.pool.borrow_mut().give_table(table);
    }
}

/// What a thread that cannot wait reaches (`Execution::settler`): a join
/// while an early stop tears the execution down, or any operation that
/// waits while its thread unwinds from a panic (it never switches away).
pub(crate) trait Settle {
    /// Tearing down: lets `thread`, if it is suspended, run on from where it
    /// stopped until it finishes. Its operations run at once and
    /// unrecorded, as destructors' do; one that does not finish within a
    /// bound (it waits for something that never comes) is unwound.
    fn settle(&self, thread: ThreadIdx);

    /// The running thread's pending operation waits, and the thread cannot
    /// switch away: the other threads run in its place (each until it would
    /// wait; their operations are the execution's) until it can go on or
    /// none can run.
    fn wait_in_place(&self);
}

impl Settle for Continuations<'_, '_> {
    fn settle(&self, thread: ThreadIdx) {
        self.run_on(thread);
    }

    fn wait_in_place(&self) {
        for _ in 0..RUN_ON_ROUNDS {
            let next = {
                let e = self.exec.borrow();
                if !e.waits_in_place() {
                    return;
                }
                let threads = self.threads.borrow();
                (0..e.threads.len())
                    .map(|t| ThreadIdx(t as u32))
                    .find(|&t| {
                        let suspended = threads.get(t.index()).is_some_and(Option::is_some);
                        (suspended && e.can_run(t)) || e.is_unstarted(t)
                    })
            };
            match next {
                Some(t) => self.run_on(t),
                None => return,
            }
        }
    }
}

/// How many times a thread that cannot wait lets the others run in its
/// place before it gives up (each runs until it would wait, at most
/// `RUN_ON_STEPS` operations).
const RUN_ON_ROUNDS: u32 = 1_000;

impl Continuations<'_, '_> {
    /// Lets `thread` run on from where it stopped (starting it if it was
    /// spawned and has not run) until it finishes or would wait
    /// (`Execution::announce`; while tearing down it never waits, and one
    /// that does not finish within a bound is unwound).
    fn run_on(&self, thread: ThreadIdx) {
        let mut running = match self.take(thread) {
            Some(running) => running,
            None => {
                let body = self.exec.borrow_mut().take_unstarted(thread);
                // Finished, torn down, or the thread running (which joins
                // itself).
                let Some(body) = body else { return };
                // SAFETY: as for the threads the driver starts.
                unsafe { self.start(thread, thread_body(thread, body)) };
                self.take(thread).or_internal("a thread just started")
            }
        };
        let joiner = {
            let mut e = self.exec.borrow_mut();
            e.running_on.push((thread, 0));
            std::mem::replace(&mut e.current, thread)
        };
        // While tearing down, its body passes a panic of its own on; it
        // ends the thread like a return.
        let resumed = catch_unwind(AssertUnwindSafe(|| running.resume()));
        let tearing_down = {
            let mut e = self.exec.borrow_mut();
            e.running_on.pop();
            e.teardown
        };
        match resumed {
            Ok(Resumed::Suspended) if !tearing_down => {} // it waits: back in the table
            Ok(Resumed::Suspended) => {
                // It did not finish within the bound (`Execution::announce`).
                running.force_unwind();
                running.recycle(&mut self.pool.borrow_mut());
            }
            Ok(Resumed::Finished) | Err(_) => running.recycle(&mut self.pool.borrow_mut()),
        }
        self.exec.borrow_mut().current = joiner;
        drop(resumed); // a payload's `Drop` may use shims
    }
}

/// The choices of one execution: the scheduler and what the driver keeps
/// from step to step. The running thread reaches it too
/// (`Execution::stepper`), to make the choice at its own scheduling point
/// in place ([`Stepper::step_in_place`]).
struct Stepper<'s> {
    scheduler: &'s mut dyn Scheduler,
    max_steps: u64,
    enabled: Vec<ThreadIdx>,
    steps: u64,
    schedule: Vec<ThreadIdx>,
    weak_schedule: Vec<usize>,
    redundant: bool,
    /// A choice the running thread made in place and left to the driver:
    /// another thread runs next (`Some`), or the execution ends (`None`).
    decided: Option<Option<ThreadIdx>>,
    /// A panic of kase's own raised while the running thread made a choice
    /// in place: the driver raises it again on its own stack.
    escaped: Option<Box<dyn std::any::Any + Send>>,
}

impl Stepper<'_> {
    /// The choice at one scheduling point (every live thread has announced
    /// its pending operation): the thread to run next, or `None` when the
    /// execution ends there (a fault, a deadlock, a livelock, a redundant
    /// or diverged execution).
    fn step(&mut self, e: &mut Execution) -> Option<ThreadIdx> {
        if e.fault.is_some() {
            return None;
        }
        let Stepper {
            scheduler,
            enabled,
            steps,
            schedule,
            weak_schedule,
            redundant,
            ..
        } = self;
        e.enabled_threads(enabled);
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
                    *redundant = true;
                    return None;
                }
                e.fault = Some(Fault::Deadlock { blocked, spinning });
            }
            return None;
        }
        e.note_enabled(enabled);
        if let Some(cycle) = e.repeated().and_then(|_| e.fair_cycle(enabled)) {
            e.fault = Some(Fault::Livelock {
                steps: *steps,
                cycle: Some(cycle),
            });
            return None;
        }
        if *steps >= self.max_steps {
            e.fault = Some(Fault::Livelock {
                steps: *steps,
                cycle: None,
            });
            return None;
        }
        *steps += 1;
        let point = ChoicePoint {
            enabled,
            current: e.current,
            execution: e,
        };
        let next = match scheduler.choose(&point) {
            Ok(t) => t,
            Err(Stop::Diverged(message)) => {
                e.fault = Some(Fault::Divergence { message });
                return None;
            }
            Err(Stop::Redundant) => {
                *redundant = true;
                return None;
            }
        };
        debug_assert!(enabled.contains(&next), "scheduler chose a disabled thread");
        if enabled.len() > 1 {
            schedule.push(next);
        }
        if e.weak_on() {
            match choose_weak(&mut **scheduler, e, next) {
                Ok(Some(k)) => weak_schedule.push(k),
                Ok(None) => {}
                Err(Stop::Diverged(message)) => {
                    e.fault = Some(Fault::Divergence { message });
                    return None;
                }
                Err(Stop::Redundant) => {
                    *redundant = true;
                    return None;
                }
            }
        }
        Some(next)
    }
}

/// The choice at the running thread's scheduling point, made on the
/// thread's own stack (`Execution::step_in_place`).
pub(crate) trait StepInPlace {
    /// Makes the choice for the running thread `e.current`, whose operation
    /// is announced: whether that thread runs on at once (it was chosen).
    /// Otherwise the choice is left for the driver, and the thread must
    /// suspend.
    fn step_in_place(&self, e: &mut Execution) -> bool;
}

impl StepInPlace for RefCell<Stepper<'_>> {
    /// Most choices let the running thread go on (a switch is a preemption,
    /// or the thread waits or ends), and each switch to the driver and back
    /// cost about a tenth of a step on concurrent-queue's models. The
    /// choice is the driver's own ([`Stepper::step`]), with the allocator
    /// and the panic hook told that kase's code runs, not the model's; a
    /// panic of kase's is caught and raised again by the driver, never seen
    /// by the model's code on this stack.
    fn step_in_place(&self, e: &mut Execution) -> bool {
        let current = e.current;
        let mut stepper = self.borrow_mut();
        let _kase = Mode::Kase.enter();
        let chosen =
            panic::outside_coroutine(|| catch_unwind(AssertUnwindSafe(|| stepper.step(e))));
        match chosen {
            Ok(Some(next)) if next == current => true,
            Ok(next) => {
                stepper.decided = Some(next);
                false
            }
            Err(payload) => {
                stepper.escaped = Some(payload);
                stepper.decided = Some(None);
                false
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
    spare: &mut Buffers,
    stamp: u64,
    limits: &Limits,
) -> Outcome {
    panic::install_hook();
    let exec = RefCell::new(Execution::new(stamp, interner, spare, limits));
    exec.borrow_mut()
        .set_replay_prefix(scheduler.replay_prefix());
    let stepper = RefCell::new(Stepper {
        scheduler,
        max_steps: limits.max_steps,
        enabled: std::mem::take(&mut spare.enabled),
        steps: 0,
        schedule: std::mem::take(&mut spare.schedule),
        weak_schedule: std::mem::take(&mut spare.weak_schedule),
        redundant: false,
        decided: None,
        escaped: None,
    });
    EXECUTION.set(&exec, || {
        let watch = exec.borrow().watch.clone();
        let threads = Continuations {
            threads: RefCell::new(pool.take_table()),
            pool: RefCell::new(pool),
            exec: &exec,
            watch,
        };
        // Until teardown, which registers again while it runs.
        let _joins_reach_it = threads.register();
        // Dropped before `threads`: no choice is made in place while they
        // are torn down.
        let _steps_in_place = reach_in_place(&exec, &stepper);
        // SAFETY: `threads` is dropped at the end of this closure, before
        // `main` and `exec` go away; its drop unwinds unfinished threads.
        unsafe {
            threads.start(
                ThreadIdx::MAIN,
                thread_body(ThreadIdx::MAIN, Box::new(main)),
            )
        };
        threads.resume(ThreadIdx::MAIN);

        loop {
            let decided = stepper.borrow_mut().decided.take();
            let next = match decided {
                Some(next) => next,
                None => {
                    if exec.borrow().fault.is_some() {
                        break; // do not start children of a failed execution
                    }
                    // Run newly spawned threads up to their first visible
                    // operation, so every live thread has a known pending
                    // action at each choice.
                    loop {
                        let next = exec.borrow_mut().unstarted.pop_front();
                        let Some((t, body)) = next else { break };
                        // SAFETY: as for the main thread; spawned bodies are
                        // 'static.
                        unsafe { threads.start(t, thread_body(t, body)) };
                        threads.resume(t);
                    }
                    let decided = stepper.borrow_mut().decided.take();
                    match decided {
                        // A started thread made the choice in place.
                        Some(next) => next,
                        None => stepper.borrow_mut().step(&mut exec.borrow_mut()),
                    }
                }
            };
            let escaped = stepper.borrow_mut().escaped.take();
            if let Some(payload) = escaped {
                std::panic::resume_unwind(payload);
            }
            let Some(next) = next else { break };
            threads.resume(next);
        }
    });
    let Stepper {
        schedule,
        weak_schedule,
        redundant,
        enabled,
        ..
    } = stepper.into_inner();
    spare.enabled = super::cleared(enabled);
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
    // Read before the buffers go back: they take the sections with them.
    let peeked = exec.peeking && !exec.sections.all.is_empty();
    exec.keep_buffers(spare);
    Outcome {
        events: exec.events,
        clocks: exec.event_clocks_list,
        pending,
        redundant,
        schedule,
        fault: exec.fault,
        interner: exec.interner,
        objects,
        owners,
        peeking: peeked,
        peek_violation: exec.peek_violation,
        weak,
        weak_schedule,
        weaker_ordering: exec.weaker_ordering,
    }
}

/// Makes `stepper` what the running thread reaches to choose in place
/// until the returned guard is dropped.
fn reach_in_place<'e>(
    exec: &'e RefCell<Execution>,
    stepper: &RefCell<Stepper<'_>>,
) -> impl Drop + 'e {
    let reached: *const (dyn StepInPlace + '_) = stepper;
    // SAFETY: only the lifetime is erased. The guard clears the pointer
    // before `stepper` goes away (the caller drops it first), and the
    // pointer is used only by the threads the driver runs meanwhile, while
    // the driver waits for them (never borrowing `stepper` across a resume).
    let reached: *const (dyn StepInPlace + 'static) = unsafe { std::mem::transmute(reached) };
    exec.borrow_mut().stepper = Some(reached);
    Clears(exec, |e| e.stepper = None)
}

/// Clears what a pointer into the driver's frame gave the execution when
/// dropped (the guards of [`Continuations::register`] and
/// [`reach_in_place`]).
struct Clears<'e>(&'e RefCell<Execution>, fn(&mut Execution));

impl Drop for Clears<'_> {
    fn drop(&mut self) {
        (self.1)(&mut self.0.borrow_mut());
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
    let latest_only = e.latest_only(next);
    let event = e.events().len();
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
        latest_only,
        event,
    };
    let k = scheduler.choose_weak(&point)?;
    e.set_weak_choice(k);
    // Only real choices are recorded (and replayed), as for threads.
    Ok((options > 1).then_some(k))
}

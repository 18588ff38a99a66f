//! Peeking's records start at an execution's first pure part. Until then
//! nothing is peeked, so nothing can be checked: the checks (rule R and D1)
//! are about accesses of pure parts and the accesses they depend on. Keeping
//! the records anyway (a dependence clock per step, the locks each thread
//! holds, a tag per access) cost 1.16× the instructions of an exploration
//! without peeking where nothing was ever peeked (disp(5,4), pol(12,3)).
//! The first pure part builds them from the events so far instead: they are
//! a function of the events' threads, objects, kinds and (for a try-lock)
//! whether it stored. Dependence clocks are built from the first event on;
//! held locks and tags from the model's first spawn, where peeking's
//! semantics start (as they were kept before).

use super::super::action::{OpKind, ThreadIdx};
use super::super::error::OrInternal;
use super::super::execution::{advance_dependence_clock, Execution};

impl Execution {
    /// Builds peeking's records for the events so far, as keeping them at
    /// every event would have left them, and keeps them from now on: the
    /// execution's first pure part is about to start.
    pub(in crate::exec) fn start_peek_records(&mut self) {
        self.peek_records = true;
        // The explorer may have asked for dependence clocks anyway: then
        // they are already right.
        let clocks = !self.dependence_clocks;
        self.dependence_clocks = true;
        if clocks {
            for thread in self.threads.iter_mut().flatten() {
                thread.clock.clear();
            }
        }
        let mut seq = vec![0u32; self.threads.len()];
        for at in 0..self.events.len() {
            let event = &self.events[at];
            let (action, stored, value) = (event.action, event.stored, event.value);
            let t = action.thread;
            seq[t.index()] += 1;
            if clocks {
                let spawned = (action.kind == OpKind::Spawn)
                    .then(|| value.map(|child| ThreadIdx(child as u32)))
                    .flatten();
                let thread = self.threads[t.index()]
                    .as_mut()
                    .or_internal("unknown thread");
                let dependence = action
                    .object
                    .map(|o| &mut self.objects[o.0 as usize].dependence);
                let access = action.kind.props().access;
                advance_dependence_clock(&mut thread.clock, t, seq[t.index()], dependence, access);
                if let Some(child) = spawned {
                    // A child's clock starts as its spawn's.
                    let clock = thread.clock.clone();
                    self.thread_mut(child).clock.clone_from(&clock);
                }
            }
            if at >= self.peek_from {
                // A try-lock under peeking (`TryLock`, `SharedTryLock`:
                // writes) stored exactly when it acquired.
                let acquired = !action.kind.is_try() || stored;
                self.hold_and_tag(at, &action, seq[t.index()], None, acquired);
            }
        }
        debug_assert!(self
            .threads
            .iter()
            .flatten()
            .all(|thread| seq[thread.idx.index()] == thread.events));
    }
}

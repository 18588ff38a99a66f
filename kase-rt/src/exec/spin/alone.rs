//! Spin iterations that write: a loop that polls by writing (a future's
//! `poll` that swaps its waker in and out, a try-lock that takes and
//! releases) never closes a read-only cycle, so the cycle rule does not
//! stop it, and an explorer that keeps running the spinner finds a false
//! livelock at `max_steps`.
//!
//! # The rule
//!
//! An iteration is what a thread does between two of its yields. If two
//! consecutive iterations started and ended in the same state (the yield
//! fingerprints of `fingerprint.rs`), ran *alone* (no other thread had an
//! event in between), were made of atomic accesses only, each seeing the
//! newest store (always so under sequential consistency), and did the same
//! (the same operations, objects, values read and written), the thread
//! waits at the next yield until another thread has an event.
//!
//! # Why nothing is lost
//!
//! The second iteration read what the first wrote, and wrote it again:
//! after it every object it touched holds what it held before it, and the
//! thread is back in the same state. So an iteration that runs alone from
//! there does the same again, changing nothing (under RC11 too: its view of
//! each location it touches is already the newest store, so each of its
//! reads has one candidate). Every execution where the thread runs on alone
//! is such a repetition followed by one where another thread runs first, and
//! the repetition changed nothing: waiting skips exactly those repetitions.
//! A thread that nobody else can interrupt then loops forever, which is
//! reported as a spin without progress. Cell accesses and other writes that
//! are not events follow from the thread's state and the values it read, so
//! they repeat too (state kept only on the heap is not seen, as for the
//! cycle rule).

use super::super::action::OpKind;

/// One finished iteration.
#[derive(Clone, Copy, Debug)]
struct Iteration {
    /// Fingerprints of the yields it started and ended at.
    from: u64,
    to: u64,
    /// Its operations, values and objects, hashed.
    signature: u64,
    /// The execution's event count when it started.
    started: usize,
    /// It ran alone and only made atomic accesses that saw the newest store.
    repeatable: bool,
}

/// What a thread's iterations did, for the rule.
#[derive(Clone, Debug, Default)]
pub(crate) struct AloneTrack {
    /// The iteration under way: where it started (yield fingerprint, the
    /// execution's and the thread's event counts then), its signature, and
    /// whether every event so far qualifies.
    start: Option<(u64, usize, u32)>,
    signature: u64,
    pure: bool,
    /// The two iterations before, the latest last.
    finished: [Option<Iteration>; 2],
}

impl AloneTrack {
    /// The thread had an event of `kind` (`latest`: an atomic access that
    /// saw the newest store), hashed into `words`.
    pub(crate) fn event(&mut self, kind: OpKind, latest: bool, words: [u64; 4]) {
        if !self.tracking() {
            return;
        }
        let atomic = matches!(
            kind,
            OpKind::Load
                | OpKind::Store
                | OpKind::Rmw
                | OpKind::CompareExchange
                | OpKind::Fence
                | OpKind::Yield
        );
        self.pure &= atomic && latest;
        self.signature = super::extend_history(self.signature, words);
    }

    /// Whether an iteration is under way (the thread yielded before): only
    /// then do its events matter, and whether they saw the newest store.
    pub(crate) fn tracking(&self) -> bool {
        self.start.is_some()
    }

    /// Where the iterations before a yield `events` into the execution
    /// started: with the thread's history, what decides whether they ran
    /// alone (a key for `SpinMemo`, whose decisions must not depend on
    /// fingerprints, which see addresses).
    pub(crate) fn key_words(&self, events: usize) -> [u64; 4] {
        let started = |i: Option<Iteration>| i.map_or(u64::MAX, |i| i.started as u64);
        [
            events as u64,
            self.start.map_or(u64::MAX, |(_, s, _)| s as u64),
            started(self.finished[1]),
            started(self.finished[0]),
        ]
    }

    /// The thread is about to yield in the state `fp`, `events` events into
    /// the execution and `own` into its own. If its last two iterations ran
    /// alone, saw the newest stores and did the same: whether all three
    /// yields were in one state (then it must wait until another thread has
    /// an event). Only that answer sees addresses; `None` follows from the
    /// events alone. Starts the next iteration.
    pub(crate) fn at_yield(&mut self, fp: u64, events: usize, own: u32) -> Option<bool> {
        if let Some((from, started, own_started)) = self.start {
            let alone = events - started == (own - own_started) as usize;
            let done = Iteration {
                from,
                to: fp,
                signature: self.signature,
                started,
                repeatable: alone && self.pure,
            };
            self.finished = [self.finished[1], Some(done)];
        }
        self.start = Some((fp, events, own));
        self.signature = 0;
        self.pure = true;
        match self.finished {
            [Some(a), Some(b)] if a.repeatable && b.repeatable && a.signature == b.signature => {
                Some([a.to, b.from, b.to, fp].iter().all(|&f| f == a.from))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iteration(t: &mut AloneTrack, value: u64, latest: bool) {
        t.event(OpKind::Yield, true, [0; 4]);
        t.event(OpKind::CompareExchange, latest, [1, 2, value, 1]);
    }

    #[test]
    fn two_equal_iterations_alone_make_the_third_wait() {
        let mut t = AloneTrack::default();
        let (mut events, mut own) = (5, 2);
        let mut yield_at = |t: &mut AloneTrack| {
            let wait = t.at_yield(7, events, own) == Some(true);
            events += 2;
            own += 2;
            wait
        };
        assert!(!yield_at(&mut t), "a first yield");
        iteration(&mut t, 3, true);
        assert!(!yield_at(&mut t), "one iteration");
        iteration(&mut t, 3, true);
        assert!(yield_at(&mut t), "two equal ones");
    }

    #[test]
    fn another_thread_a_changed_value_or_a_stale_read_breaks_it() {
        for case in 0..3 {
            let mut t = AloneTrack::default();
            let (mut events, mut own) = (0, 0);
            let mut last = false;
            for round in 0..3 {
                last = t.at_yield(7, events, own) == Some(true);
                let value = if case == 0 && round == 1 { 4 } else { 3 };
                iteration(&mut t, value, !(case == 1 && round == 1));
                events += 2 + usize::from(case == 2 && round == 1);
                own += 2;
            }
            assert!(!last, "case {case}");
        }
    }

    #[test]
    fn a_different_state_at_either_end_breaks_it() {
        let mut t = AloneTrack::default();
        assert_ne!(t.at_yield(1, 0, 0), Some(true));
        iteration(&mut t, 3, true);
        assert_ne!(t.at_yield(2, 2, 2), Some(true));
        iteration(&mut t, 3, true);
        assert!(
            t.at_yield(2, 4, 4) != Some(true),
            "the first iteration started elsewhere"
        );
    }
}

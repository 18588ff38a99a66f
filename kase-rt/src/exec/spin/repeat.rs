//! Spinning threads that keep each other going: a poller that writes and
//! writes back (`fetch_xor(2)` twice) wakes a reader spinning on the same
//! location at every iteration, and the reader's steps keep the poller
//! from ever running alone. Neither the cycle rule (`mod.rs`) nor the alone
//! rule (`alone.rs`) stops them, and each extra round they run before the
//! thread that releases them is a new interleaving: the exploration of
//! every interleaving never ends.
//!
//! # The rule
//!
//! Under sequential consistency kase compares the state at every
//! scheduling point with the states at the earlier ones of the execution.
//! The state is the thread that just ran, where every thread stands (the
//! fingerprint of the last yield it announced, `fingerprint.rs`, and a hash
//! of its events since, which from that state decide where it is now) and
//! the value of every atomic location. If the state now is the state at an
//! earlier point, every event since was an atomic access, a fence or a
//! yield (so nothing else changed: no lock, no cell, no `thread_local!`, no
//! thread started or ended), at least one of them wrote a new value (later
//! written back), and at least two threads ran since, the execution has
//! *repeated*: an explorer that can take it (the exhaustive search, and so
//! the oracle a reduction falls back to) ends it as redundant.
//!
//! # Why nothing is lost
//!
//! Every continuation from here is a continuation from the earlier point
//! too, and the execution that takes it from there is shorter by the events
//! in between. So the shortest execution that reaches an outcome never
//! repeats a state and is never ended (the other spin rules, too, only stop
//! an execution that a shorter one covers). A window with one thread only
//! is left to the alone rule, which reports a thread that loops forever by
//! itself; windows that wrote nothing are left to the cycle rule, which
//! the reductions take.
//!
//! The cost: a group of threads that loops forever while every other
//! thread is blocked (two pollers that never stop, joined by main) is not
//! reported as a livelock; its executions end redundant. Under RC11 a store
//! is a message others may still read after it is overwritten, so equal
//! values are not an equal state; the rule is off there.

use super::super::action::{ByObject, ObjectIdx, ThreadIdx};
use super::extend_history;
use crate::fast_hash::Map;

/// States kept at once: an execution that runs longer without an event
/// that ends its windows starts over (a repetition longer than this is not
/// seen).
const MAX_STATES: usize = 4096;

/// Earlier points kept per state.
const MAX_PER_STATE: usize = 4;

/// Where one thread stands: the fingerprint of the last yield it announced
/// (`u64::MAX`: none yet) and a hash of its events since.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Standing {
    pub fingerprint: u64,
    pub since: u64,
}

/// One event in a window, as the rule needs it: its thread, whether it
/// wrote a new value, and for an atomic access its location and the
/// location's bits before and after it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Step {
    pub thread: ThreadIdx,
    pub modified: bool,
    pub access: Option<(ObjectIdx, u64, u64)>,
}

/// An earlier point whose state may be the state now.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Candidate {
    /// The execution's event count at it.
    pub events: usize,
    /// Whether the fingerprints agree too (they see addresses: the caller
    /// keeps its decision for the exploration).
    pub same_state: bool,
}

/// The earlier points of one state: (event count, where the standings
/// start), the latest last; inline, as a new state comes at most steps.
#[derive(Clone, Copy, Debug, Default)]
struct Kept {
    points: [(usize, usize); MAX_PER_STATE],
    len: usize,
}

impl Kept {
    fn push(&mut self, point: (usize, usize)) {
        if self.len == MAX_PER_STATE {
            self.points.rotate_left(1);
            self.len -= 1;
        }
        self.points[self.len] = point;
        self.len += 1;
    }
}

/// The states of one execution since the last event that ends windows.
#[derive(Clone, Debug, Default)]
pub(crate) struct Repeats {
    /// By a hash of the state without fingerprints: the earlier points, as
    /// their event count and where their standings start in `standings`
    /// (up to `MAX_PER_STATE`, the latest last).
    states: Map<u64, Kept>,
    standings: Vec<Standing>,
    kept: usize,
    /// Each atomic location's bits as its last access left them, and a hash
    /// of them all.
    bits: ByObject<u64>,
    values: u64,
    /// Whether tracking started: the first yield of the execution (a
    /// repetition needs a loop, and a loop without a yield is reported as
    /// a livelock anyway).
    started: bool,
}

impl Repeats {
    /// An atomic access left `object` holding `bits`.
    pub(crate) fn accessed(&mut self, object: ObjectIdx, bits: u64) {
        let entry = |bits: u64| extend_history(0, [u64::from(object.0), bits, 0, 0]);
        if let Some(old) = self.bits.insert(object, bits) {
            self.values ^= entry(old);
        }
        self.values ^= entry(bits);
    }

    /// An event other than an atomic access, fence or yield ran, or a write
    /// without an event: no window spans it.
    pub(crate) fn forget(&mut self) {
        if self.kept > 0 {
            self.states.clear();
            self.standings.clear();
            self.kept = 0;
        }
    }

    /// A yield was announced: tracking starts.
    pub(crate) fn start(&mut self) {
        self.started = true;
    }

    /// Whether tracking started (`start`): before, no point is kept.
    pub(crate) fn started(&self) -> bool {
        self.started
    }

    /// A scheduling point `events` into the execution, after `last` ran,
    /// every thread standing as `now` (in thread order): the earlier points
    /// whose state may be this one (`step(i)`: the `i`-th event of the
    /// execution), and this point kept for later ones.
    pub(crate) fn at_point(
        &mut self,
        events: usize,
        last: ThreadIdx,
        now: &[Standing],
        step: impl Fn(usize) -> Step,
    ) -> Vec<Candidate> {
        if !self.started {
            return Vec::new();
        }
        if self.kept == MAX_STATES {
            self.forget();
        }
        let key = now.iter().fold(
            extend_history(self.values, [u64::from(last.0), now.len() as u64, 0, 0]),
            |h, s| extend_history(h, [s.since, u64::from(s.fingerprint == u64::MAX), 0, 0]),
        );
        let earlier = self.states.entry(key).or_default();
        let mut found = Vec::new();
        for &(at, from) in earlier.points[..earlier.len].iter().rev() {
            let then = &self.standings[from..from + now.len()];
            let same_events = then.iter().zip(now).all(|(a, b)| {
                a.since == b.since && (a.fingerprint == u64::MAX) == (b.fingerprint == u64::MAX)
            });
            if same_events && window_repeats((at..events).map(&step)) {
                found.push(Candidate {
                    events: at,
                    same_state: then == now,
                });
            }
        }
        earlier.push((events, self.standings.len()));
        self.standings.extend_from_slice(now);
        self.kept += 1;
        found
    }
}

/// Whether a window of atomic accesses, fences and yields left every
/// location with the bits it had, wrote some new value on the way, and had
/// steps of two threads or more.
fn window_repeats(steps: impl Iterator<Item = Step>) -> bool {
    let mut threads: Vec<ThreadIdx> = Vec::new();
    let mut wrote = false;
    // Each location: its bits before its first access and after its last.
    let mut locations: Vec<(ObjectIdx, u64, u64)> = Vec::new();
    for step in steps {
        if !threads.contains(&step.thread) {
            threads.push(step.thread);
        }
        wrote |= step.modified;
        if let Some((object, before, after)) = step.access {
            match locations.iter_mut().find(|(o, ..)| *o == object) {
                Some((_, _, last)) => *last = after,
                None => locations.push((object, before, after)),
            }
        }
    }
    wrote && threads.len() >= 2 && locations.iter().all(|&(_, first, last)| first == last)
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: ThreadIdx = ThreadIdx(1);
    const B: ThreadIdx = ThreadIdx(2);
    const X: ObjectIdx = ObjectIdx(3);

    fn access(thread: ThreadIdx, before: u64, after: u64) -> Step {
        Step {
            thread,
            modified: before != after,
            access: Some((X, before, after)),
        }
    }

    fn standing(fingerprint: u64, since: u64) -> Standing {
        Standing { fingerprint, since }
    }

    #[test]
    fn a_window_repeats_if_two_threads_wrote_and_wrote_back() {
        // A: xor 2, xor 2 (back); B reads in the middle.
        let steps = [access(A, 0, 2), access(B, 2, 2), access(A, 2, 0)];
        assert!(window_repeats(steps.into_iter()));
        let changed = [access(A, 0, 2), access(B, 2, 2)];
        assert!(!window_repeats(changed.into_iter()), "a value changed");
        let alone = [access(A, 0, 2), access(A, 2, 0)];
        assert!(
            !window_repeats(alone.into_iter()),
            "one thread: the alone rule's"
        );
        let read_only = [access(A, 0, 0), access(B, 0, 0)];
        assert!(!window_repeats(read_only.into_iter()), "the cycle rule's");
    }

    #[test]
    fn only_an_earlier_point_in_the_same_state_is_a_candidate() {
        let steps = [access(A, 0, 2), access(B, 2, 2), access(A, 2, 0)];
        let step = |i: usize| steps[i % 3];
        let mut r = Repeats::default();
        let here = [standing(7, 0), standing(9, 5)];
        assert!(r.at_point(0, A, &here, step).is_empty(), "before any yield");
        r.start();
        r.accessed(X, 0);
        assert!(r.at_point(0, A, &here, step).is_empty(), "a first point");
        let moved = [standing(7, 0), standing(9, 6)];
        assert!(r.at_point(3, A, &moved, step).is_empty(), "B moved on");
        let found = r.at_point(3, A, &here, step);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].events, 0);
        assert!(found[0].same_state);
        assert!(
            r.at_point(3, B, &here, step).is_empty(),
            "another thread ran last"
        );
        // Equal events, another fingerprint: a candidate whose state differs.
        let elsewhere = [standing(8, 0), standing(9, 5)];
        let found = r.at_point(3, A, &elsewhere, step);
        assert!(!found.is_empty() && found.iter().all(|c| !c.same_state));
        // A value that differs is another state.
        r.accessed(X, 4);
        assert!(r.at_point(3, A, &here, step).is_empty());
        r.forget();
        r.accessed(X, 0);
        assert!(r.at_point(3, A, &here, step).is_empty(), "forgotten");
    }
}

//! Spin loops end without losing a path: a thread that yields (`yield_now`,
//! `spin_loop`, `sleep`) in a state it was already in at an earlier yield,
//! having only read since then, waits until another thread changes what it
//! read.
//!
//! # The rule
//!
//! At every yield kase takes a fingerprint of the thread's own state (its
//! stack and the registers its frame keeps, `fingerprint.rs`). Since its
//! last modification of shared state the thread keeps the list of its reads
//! (object, modification count seen) and the fingerprints of its yields. A
//! yield whose fingerprint equals an earlier one's closes a *cycle*: the
//! thread went from a state back to the same state, only reading, each
//! object in one version. Then:
//!
//! * the cycle read one object: the yield waits until another thread
//!   modifies it (it is modelled as a read of that object, so the
//!   partial-order explorer orders it after the releasing write);
//! * it read nothing: the thread can never leave the loop, and waits forever
//!   (a deadlock naming it once the other threads are done);
//! * it read several objects: the yield waits until another thread modifies
//!   any of them (the partial-order explorer, whose events are on one
//!   object each, cannot order that: it hands such a model to the
//!   exhaustive search; nor can the RC11 revisit explorer, whose graphs do
//!   not say which write woke the yield: it hands it to the canonical one);
//! * no cycle (a first yield, a counter that changed, a backoff step): an
//!   ordinary scheduling point, whatever was read.
//!
//! # Why nothing is lost
//!
//! What a thread does is a function of its own state and of the values it
//! reads. If the thread is in state S at two yields and in between only
//! read, each object in one version, then running on from S while none of
//! those objects changed repeats the same iteration and comes back to S,
//! changing nothing another thread can see. Every execution where it runs on
//! before a change is such a repetition followed by one where it waits:
//! same reads by every other thread, same outcome. Waiting skips exactly
//! those repetitions. A loop whose state changes (a bounded spin's counter,
//! a backoff step, a poll budget) never closes a cycle while it changes, so
//! its give-up path is explored like any other code. A yield outside a loop
//! has no earlier equal state and never waits.
//!
//! Under RC11 a re-read may see a newer store that already existed at the
//! earlier read, which the thread read stale. Waiting skips that re-read
//! too, and loses nothing: with no new store, every choice the repeated
//! iteration's reads have was open to the earlier iteration's reads (a
//! thread's view only grows, so each read's candidates then were a superset
//! of now), and the earlier iteration, having changed nothing, is
//! equivalent to the repetition. So the explorers' other choices at the
//! earlier reads cover it; an execution where every thread left waits on a
//! stale value is redundant (`weak_stale_spin`), not a deadlock.
//!
//! A write of the value its location holds (a `swap(true)` on `true`, a
//! `fetch_add(0)`; under RC11 only a read-modify-write, which sits right
//! after the store it read) is not a modification: it counts as a read for
//! the cycle and wakes no spinning thread. No thread can read a different
//! value for it, so the argument above holds with it in the iteration; and
//! two threads spinning on `swap(true)` while a third holds the lock wait
//! for the release instead of waking each other forever. Under RC11 the
//! write is a store of its own, which a thread may read with more
//! happens-before than the one it rewrote; a thread that knows more reads
//! from fewer stores, so the execution where it read the older store
//! reaches what this one does. (Under RC11 a spinning swap may also read
//! a stale `true` while the release already exists; its thread's last
//! read is then its own store, placed before the release, and an
//! execution that ends with it waiting is redundant, as above.)
//!
//! Writes a thread makes that are not events (data through a lock guard
//! without peeking, a tracked cell) count as modifications: they end the
//! cycle. So does an access to a kase `thread_local!` that changed the
//! value's bytes in place (compared before and after the access,
//! `exec/local.rs`; any access to a value over 256 bytes): a spin that
//! reads a thread id from a thread-local in every iteration still waits.
//! The limit: state kept only on the heap (a counter behind a `Box` only
//! this thread uses, or behind a pointer in a thread-local) is not in the
//! fingerprint, so such a loop is taken for a spin.
//!
//! Several threads that write and write back keep each other going: the
//! whole state is compared with earlier ones instead (`repeat.rs`).

pub(crate) mod alone;
pub(crate) mod fingerprint;
pub(crate) mod repeat;

use crate::fast_hash::Map as HashMap;
use std::cell::RefCell;
use std::rc::Rc;

use super::action::{ObjectIdx, ThreadIdx};

/// Where each yield's cycle started, by thread and a hash of the thread's
/// history before it (its events: kind, location, value, whether it
/// modified), kept for one exploration.
///
/// A fingerprint sees addresses: a block the thread allocates in each
/// iteration may come back at another address in another execution,
/// because kase's own allocations in between differ. The thread's history
/// decides its behaviour all the same, so the first decision made after a
/// history is the one every later execution replays: explorers see one
/// program, never a nondeterministic one.
#[derive(Clone, Debug, Default)]
pub(crate) struct SpinMemo(
    Rc<RefCell<HashMap<HistoryKey, Option<usize>>>>,
    AloneMemo,
    ChangeMemo,
    RepeatMemo,
);

/// The alone rule's decisions (`alone.rs`), by thread and a hash of its
/// history and the execution's event count: whether it ran alone depends on
/// the other threads too.
type AloneMemo = Rc<RefCell<HashMap<HistoryKey, bool>>>;

/// Whether the `n`-th `thread_local!` access after a thread history changed
/// the value's bytes, which may hold addresses (`exec/local.rs`).
type ChangeMemo = Rc<RefCell<HashMap<(ThreadIdx, u64, u32), bool>>>;

/// Whether the state repeated (`repeat.rs`), by the announcing thread and
/// a hash of the execution's events: the event count of the earlier point
/// whose state it is, if one.
type RepeatMemo = Rc<RefCell<HashMap<HistoryKey, Option<usize>>>>;

/// A thread and the hash of its history (`SpinMemo`).
pub(crate) type HistoryKey = (ThreadIdx, u64);

impl SpinMemo {
    /// The cycle start decided at `key` before, else `decide()`'s, kept.
    pub(crate) fn decide(
        &self,
        key: HistoryKey,
        decide: impl FnOnce() -> Option<usize>,
    ) -> Option<usize> {
        *self.0.borrow_mut().entry(key).or_insert_with(decide)
    }

    /// The alone rule's decision at `key` before, else `decide()`'s, kept.
    pub(crate) fn decide_alone(&self, key: HistoryKey, decide: impl FnOnce() -> bool) -> bool {
        *self.1.borrow_mut().entry(key).or_insert_with(decide)
    }

    /// The repeat rule's decision at `key` before, else `decide()`'s, kept.
    pub(crate) fn decide_repeat(
        &self,
        key: HistoryKey,
        decide: impl FnOnce() -> Option<usize>,
    ) -> Option<usize> {
        *self.3.borrow_mut().entry(key).or_insert_with(decide)
    }

    /// Whether the `n`-th `thread_local!` access after `key`'s history
    /// changed its value, decided before, else `changed`, kept.
    pub(crate) fn decide_change(&self, key: HistoryKey, n: u32, changed: bool) -> bool {
        let (thread, history) = key;
        *self
            .2
            .borrow_mut()
            .entry((thread, history, n))
            .or_insert(changed)
    }
}

/// One step of a thread's history hash (`SpinMemo`).
#[inline]
pub(crate) fn extend_history(history: u64, words: [u64; 4]) -> u64 {
    words.iter().fold(history, |h, &w| {
        (h.rotate_left(7) ^ w).wrapping_mul(0x9e37_79b9_7f4a_7c15)
    })
}

/// Yields kept per thread since its last modification; older ones are
/// forgotten (a cycle longer than this is not detected: no wait).
const MAX_YIELDS: usize = 256;

/// What a thread did since its last modification of shared state.
#[derive(Clone, Debug, Default)]
pub(crate) struct SpinTrack {
    /// Its reads, in order: the object and its version then (its
    /// modification count less the thread's own lock operations on it).
    reads: Vec<(ObjectIdx, u64)>,
    /// Its yields: the fingerprint of its state, and how many reads came
    /// before.
    yields: Vec<(u64, usize)>,
    /// Its own lock operations that modified a lock, per lock: they leave
    /// the lock as it was for everyone (taken, then released), so they are
    /// not versions of it.
    own: Vec<(ObjectIdx, u64)>,
}

/// What a yield makes its thread do (`SpinTrack::at_yield`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) enum SpinWait {
    /// Not a repetition: an ordinary scheduling point.
    #[default]
    No,
    /// A repetition that read only `object`, seeing its `seen`-th
    /// modification: runs once another thread modifies it again.
    On { object: ObjectIdx, seen: u64 },
    /// A repetition that read nothing: it can never end.
    Forever,
    /// A repetition that read several objects, each in one version: it
    /// changes nothing until one of them changes, and waits for that.
    Several(Box<[(ObjectIdx, u64)]>),
    /// Two equal iterations ran alone and changed nothing (`alone.rs`):
    /// runs once the execution has more than `events` events.
    Alone { events: usize },
}

impl SpinTrack {
    /// Forgets everything, keeping its room (for a thread of a later
    /// execution).
    pub(crate) fn clear(&mut self) {
        self.reads.clear();
        self.yields.clear();
        self.own.clear();
    }

    /// The thread modified shared state: no iteration before this repeats.
    pub(crate) fn modified(&mut self) {
        self.reads.clear();
        self.yields.clear();
    }

    /// The thread read `object`, now modified `mods` times. Only reads
    /// after a yield can be part of a cycle (one starts at a yield), so
    /// a thread that has not yielded since its last modification keeps
    /// nothing.
    pub(crate) fn read(&mut self, object: ObjectIdx, mods: u64) {
        if !self.yields.is_empty() {
            let version = mods - self.own(object);
            self.reads.push((object, version));
        }
    }

    /// Whether a yield now could close a cycle: only if the thread yielded
    /// before since its last modification.
    pub(crate) fn may_close_cycle(&self) -> bool {
        !self.yields.is_empty()
    }

    /// The thread took, released or tried a lock (`modified`: it changed
    /// the lock's state), which is now modified `mods` times. For spinning it
    /// is a read of the lock: only another thread's lock operation can
    /// change what the lock guards (the thread's own writes to the data
    /// count as modifications, `SpinTrack::modified`).
    pub(crate) fn lock_op(&mut self, object: ObjectIdx, mods: u64, modified: bool) {
        if modified {
            match self.own.iter_mut().find(|(o, _)| *o == object) {
                Some((_, n)) => *n += 1,
                None => self.own.push((object, 1)),
            }
        }
        self.read(object, mods);
    }

    fn own(&self, object: ObjectIdx) -> u64 {
        self.own
            .iter()
            .find(|(o, _)| *o == object)
            .map_or(0, |&(_, n)| n)
    }

    /// Where the cycle closed by a yield in the state with fingerprint `fp`
    /// starts in the reads, if it closes one.
    pub(crate) fn cycle_start(&self, fp: u64) -> Option<usize> {
        let earlier = self.yields.iter().rev().find(|(f, _)| *f == fp);
        earlier.map(|&(_, from)| from)
    }

    /// The thread yields in the state with fingerprint `fp`, closing the
    /// cycle that starts at read `cycle` (`cycle_start`, or a decision
    /// replayed from an earlier execution).
    pub(crate) fn at_yield(&mut self, fp: u64, cycle: Option<usize>) -> SpinWait {
        let cycle = cycle.filter(|&from| from <= self.reads.len());
        let wait = match cycle {
            Some(from) => match classify(&self.reads[from..]) {
                // Back to modification counts, which also count the
                // thread's own lock operations so far.
                SpinWait::On { object, seen } => SpinWait::On {
                    object,
                    seen: seen + self.own(object),
                },
                SpinWait::Several(objects) => SpinWait::Several(
                    objects
                        .iter()
                        .map(|&(o, seen)| (o, seen + self.own(o)))
                        .collect(),
                ),
                wait => wait,
            },
            None => SpinWait::No,
        };
        if self.yields.len() == MAX_YIELDS {
            self.yields.drain(..MAX_YIELDS / 2);
        }
        self.yields.push((fp, self.reads.len()));
        wait
    }
}

/// What a cycle that made `reads` waits for.
fn classify(reads: &[(ObjectIdx, u64)]) -> SpinWait {
    let mut objects: Vec<(ObjectIdx, u64)> = Vec::new();
    for &(object, seen) in reads {
        match objects.iter().find(|(o, _)| *o == object) {
            // Read in two versions: the iteration did not repeat itself
            // with one view of the world.
            Some(&(_, s)) if s != seen => return SpinWait::No,
            Some(_) => {}
            None => objects.push((object, seen)),
        }
    }
    match objects[..] {
        [] => SpinWait::Forever,
        [(object, seen)] => SpinWait::On { object, seen },
        _ => SpinWait::Several(objects.into_boxed_slice()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const X: ObjectIdx = ObjectIdx(1);
    const Y: ObjectIdx = ObjectIdx(2);

    fn step(t: &mut SpinTrack, fp: u64) -> SpinWait {
        let cycle = t.cycle_start(fp);
        t.at_yield(fp, cycle)
    }

    #[test]
    fn only_a_repeated_state_waits() {
        let mut t = SpinTrack::default();
        t.read(X, 3);
        assert_eq!(step(&mut t, 10), SpinWait::No, "a first yield");
        t.read(X, 3);
        assert_eq!(
            step(&mut t, 11),
            SpinWait::No,
            "a changed state (a counter)"
        );
        t.read(X, 3);
        assert_eq!(
            step(&mut t, 11),
            SpinWait::On { object: X, seen: 3 },
            "back in the state of the previous yield"
        );
    }

    #[test]
    fn what_a_cycle_read_decides_what_it_waits_for() {
        let mut t = SpinTrack::default();
        step(&mut t, 1);
        assert_eq!(step(&mut t, 1), SpinWait::Forever, "read nothing");
        t.read(X, 1);
        t.read(Y, 0);
        assert_eq!(
            step(&mut t, 1),
            SpinWait::Several(Box::new([(X, 1), (Y, 0)]))
        );
        t.read(X, 1);
        t.read(X, 2);
        assert_eq!(step(&mut t, 1), SpinWait::No, "x read in two versions");
    }

    #[test]
    fn the_threads_own_lock_operations_are_not_versions_of_the_lock() {
        let mut t = SpinTrack::default();
        // lock (count 1), unlock (2), yield; lock (3), unlock (4), yield.
        for round in 0..2 {
            t.lock_op(X, 2 * round + 1, true);
            t.lock_op(X, 2 * round + 2, true);
            let wait = step(&mut t, 9);
            if round == 1 {
                assert_eq!(wait, SpinWait::On { object: X, seen: 4 });
            }
        }
        // Another thread's section came before this round (count 7, not
        // 5): the round still repeats itself, seeing the new version.
        t.lock_op(X, 7, true);
        t.lock_op(X, 8, true);
        assert_eq!(step(&mut t, 9), SpinWait::On { object: X, seen: 8 });
        // A read of the lock's object in two versions within one round.
        t.lock_op(X, 9, true);
        t.read(X, 11);
        t.lock_op(X, 12, true);
        assert_eq!(step(&mut t, 9), SpinWait::No);
    }

    #[test]
    fn a_modification_forgets_the_cycle() {
        let mut t = SpinTrack::default();
        t.read(X, 1);
        step(&mut t, 5);
        t.modified();
        t.read(X, 2);
        assert_eq!(step(&mut t, 5), SpinWait::No);
    }
}

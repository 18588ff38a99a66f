//! One atomic location under RC11: its stores in modification order, and
//! what coherence lets each access read or where it lets a store go.
//!
//! Coherence is kept as the exploration goes (WEAK-MEMORY.md, "view"
//! reasoning): an access may not go below the thread's *floor*, the
//! mo-latest store among those it has seen through happens-before — stores
//! that happen before it, and stores read by reads that happen before it.
//! A read reads at or above its floor; a store is placed above it; a
//! read-modify-write reads a store no other one read and goes right after
//! it. Every coherent, atomic graph is reached this way, and only those
//! (the module tests and the consistency checker hold it to that).

use crate::exec::action::ThreadIdx;
use crate::exec::clock::VectorClock;

/// A store to the location (or its initial value).
#[derive(Clone, Debug)]
pub(crate) struct StoreRecord {
    /// The stored value, as bits.
    pub bits: u64,
    /// The event that stored it (`None`: the initial value).
    pub event: Option<usize>,
    /// Who stored it, and the thread's happens-before epoch then (`None`:
    /// the initial value, which happens before everything).
    pub by: Option<(ThreadIdx, u32)>,
    /// What an acquiring read of it acquires: the clock its release
    /// sequence published (empty for a plain `Relaxed` store).
    pub message: VectorClock,
    /// A read-modify-write read it: no other may (atomicity).
    pub taken: bool,
    /// It is `SeqCst` (a new access's `psc` check looks for such stores).
    pub seq_cst: bool,
}

/// One access by a thread that saw a store: the thread's happens-before
/// epoch then, and the mo-latest store the thread had seen up to and
/// including it. Insertions never reorder stores already placed, so the
/// latest stays the latest: a floor is a binary search per thread, not a
/// scan of every access (which made a long execution quadratic).
#[derive(Clone, Copy, Debug)]
struct Seen {
    epoch: u32,
    latest: usize,
}

/// The stores of one location, by id (0 is the initial value), and their
/// modification order.
#[derive(Clone, Debug)]
pub(crate) struct LocationHistory {
    stores: Vec<StoreRecord>,
    /// Store ids in modification order.
    mo: Vec<usize>,
    /// Each store's position in `mo`, by id (kept with `mo`: floors ask it
    /// for every access seen).
    position: Vec<usize>,
    /// Per thread (by index), its accesses so far in program order (their
    /// epochs ascend), for the floors.
    seen: Vec<Vec<Seen>>,
}

/// Histories of finished executions' locations, emptied for reuse: a new
/// execution's locations take them instead of allocating their buffers
/// anew (a loom model's execution makes tens of them, which were half of
/// all its allocations).
#[derive(Clone, Debug, Default)]
pub(crate) struct HistoryPool(std::rc::Rc<std::cell::RefCell<Vec<LocationHistory>>>);

/// Histories a `HistoryPool` keeps at most.
const MAX_POOLED: usize = 256;

impl HistoryPool {
    /// A history of a location holding `bits` before any store.
    pub(crate) fn take(&self, bits: u64) -> LocationHistory {
        match self.0.borrow_mut().pop() {
            Some(mut history) => {
                history.reset(bits);
                history
            }
            None => LocationHistory::new(bits),
        }
    }

    /// Keeps `history`'s buffers for a later `take`.
    pub(crate) fn give(&self, history: LocationHistory) {
        let mut pooled = self.0.borrow_mut();
        if pooled.len() < MAX_POOLED {
            pooled.push(history);
        }
    }
}

impl LocationHistory {
    /// A location holding `bits` before any store.
    pub(crate) fn new(bits: u64) -> Self {
        let mut history = LocationHistory {
            stores: Vec::new(),
            mo: Vec::new(),
            position: Vec::new(),
            seen: Vec::new(),
        };
        history.reset(bits);
        history
    }

    /// Makes the history that of a location holding `bits` before any
    /// store, keeping its buffers (`HistoryPool`).
    fn reset(&mut self, bits: u64) {
        self.stores.clear();
        self.stores.push(StoreRecord {
            bits,
            event: None,
            by: None,
            message: VectorClock::new(),
            taken: false,
            seq_cst: false,
        });
        self.mo.clear();
        self.mo.push(0);
        self.position.clear();
        self.position.push(0);
        for accesses in &mut self.seen {
            accesses.clear();
        }
    }

    /// The store with id `id`.
    pub(crate) fn store(&self, id: usize) -> &StoreRecord {
        &self.stores[id]
    }

    /// Store ids in modification order (the initial value first).
    pub(crate) fn mo(&self) -> &[usize] {
        &self.mo
    }

    /// The value a non-atomic access sees: the mo-latest store's.
    pub(crate) fn latest_bits(&self) -> u64 {
        self.stores[*self.mo.last().expect("the initial value")].bits
    }

    /// Store `id`'s position in modification order (a read-modify-write
    /// reading it goes right after it).
    pub(crate) fn position(&self, id: usize) -> usize {
        self.position[id]
    }

    /// The lowest mo position an access by `thread`, whose happens-before
    /// clock is `clock`, may read or store above.
    pub(crate) fn floor(&self, thread: ThreadIdx, clock: &VectorClock) -> usize {
        self.seen
            .iter()
            .enumerate()
            .filter_map(|(u, accesses)| {
                let seen = if u == thread.index() {
                    accesses.len()
                } else {
                    let epoch = clock.get(ThreadIdx(u as u32));
                    accesses.partition_point(|s| s.epoch <= epoch)
                };
                let last = accesses[..seen].last()?;
                Some(self.position(last.latest))
            })
            .max()
            .unwrap_or(0)
    }

    /// Records that `thread` at `epoch` saw store `id`.
    fn saw(&mut self, thread: ThreadIdx, epoch: u32, id: usize) {
        let u = thread.index();
        if self.seen.len() <= u {
            self.seen.resize_with(u + 1, Vec::new);
        }
        let accesses = &mut self.seen[u];
        let latest = match accesses.last() {
            Some(last) if self.position[last.latest] > self.position[id] => last.latest,
            _ => id,
        };
        debug_assert!(accesses.last().map_or(true, |last| last.epoch <= epoch));
        accesses.push(Seen { epoch, latest });
    }

    /// The mo position of the latest store that some thread `u` saw (read
    /// or stored) at an epoch of at most `clock[u]`: what happens before
    /// the events whose joined clock `clock` is (0: nothing).
    pub(crate) fn latest_seen_within(&self, clock: &VectorClock) -> usize {
        self.seen
            .iter()
            .enumerate()
            .filter_map(|(u, accesses)| {
                let epoch = clock.get(ThreadIdx(u as u32));
                let seen = accesses.partition_point(|s| s.epoch <= epoch);
                Some(self.position(accesses[..seen].last()?.latest))
            })
            .max()
            .unwrap_or(0)
    }

    /// Whether a `SeqCst` store is after mo position `after`.
    pub(crate) fn seq_cst_after(&self, after: usize) -> bool {
        self.mo[after + 1..]
            .iter()
            .any(|&id| self.stores[id].seq_cst)
    }

    /// The stores a read with floor `floor` may read, mo-latest first (the
    /// one a sequentially consistent run reads first). With `rmw`, only
    /// those no read-modify-write read yet, except that a compare-exchange
    /// expecting `expected` may still read a taken one whose value differs
    /// (it fails, so it is a plain read).
    pub(crate) fn readable(
        &self,
        floor: usize,
        rmw: Option<Rmw>,
    ) -> impl Iterator<Item = usize> + '_ {
        self.mo[floor..].iter().rev().copied().filter(move |&id| {
            let store = &self.stores[id];
            match rmw {
                None => true,
                Some(Rmw::Always) => !store.taken,
                Some(Rmw::IfEquals(expected)) => !store.taken || store.bits != expected,
            }
        })
    }

    /// The mo positions a store with floor `floor` may take, as "right after
    /// position p", latest first; never between a store and the
    /// read-modify-write that read it.
    pub(crate) fn placements(&self, floor: usize) -> impl Iterator<Item = usize> + '_ {
        (floor..self.mo.len())
            .rev()
            .filter(|&p| !self.stores[self.mo[p]].taken)
    }

    /// Records a read of store `id` by `thread` at `epoch`.
    pub(crate) fn read(&mut self, thread: ThreadIdx, epoch: u32, id: usize) {
        self.saw(thread, epoch, id);
    }

    /// Marks store `id` as read by a read-modify-write.
    pub(crate) fn take(&mut self, id: usize) {
        debug_assert!(
            !self.stores[id].taken,
            "two read-modify-writes read one store"
        );
        self.stores[id].taken = true;
    }

    /// Places `store` right after mo position `after`; returns its id.
    pub(crate) fn insert(&mut self, after: usize, store: StoreRecord) -> usize {
        let id = self.stores.len();
        let by = store.by;
        self.stores.push(store);
        if after + 1 < self.mo.len() {
            // Only a store placed before others moves them (appending, the
            // common case, costs nothing per store placed earlier).
            for p in &mut self.position {
                if *p > after {
                    *p += 1;
                }
            }
        }
        self.mo.insert(after + 1, id);
        self.position.push(after + 1);
        if let Some((thread, epoch)) = by {
            self.saw(thread, epoch, id);
        }
        id
    }
}

/// What kind of read-modify-write a read is part of.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Rmw {
    /// It always writes (`fetch_*`, `swap`).
    Always,
    /// A compare-exchange: it writes iff it reads this value.
    IfEquals(u64),
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: ThreadIdx = ThreadIdx(0);
    const B: ThreadIdx = ThreadIdx(1);

    fn store(bits: u64, by: ThreadIdx, epoch: u32) -> StoreRecord {
        StoreRecord {
            bits,
            event: None,
            by: Some((by, epoch)),
            message: VectorClock::new(),
            taken: false,
            seq_cst: false,
        }
    }

    #[test]
    fn a_pooled_history_comes_back_as_a_new_one() {
        let pool = HistoryPool::default();
        let mut x = pool.take(0);
        let nobody = VectorClock::new();
        let one = x.insert(0, store(1, A, 1));
        x.take(one);
        x.read(B, 4, one);
        pool.give(x);
        let y = pool.take(7);
        assert_eq!(y.mo(), &[0]);
        assert_eq!(y.latest_bits(), 7);
        assert_eq!(y.store(0).event, None);
        assert!(!y.store(0).taken);
        // Nothing seen is left over: B may read the initial value again.
        assert_eq!(y.floor(B, &nobody), 0);
        assert_eq!(y.latest_seen_within(&nobody), 0);
        assert_eq!(
            y.readable(y.floor(B, &nobody), None).collect::<Vec<_>>(),
            vec![0]
        );
    }

    #[test]
    fn a_thread_never_reads_below_what_it_saw() {
        let mut x = LocationHistory::new(0);
        let nobody = VectorClock::new();
        let one = x.insert(0, store(1, A, 1));
        let two = x.insert(1, store(2, A, 2));
        // B has seen nothing: it may read every store, latest first.
        assert_eq!(
            x.readable(x.floor(B, &nobody), None).collect::<Vec<_>>(),
            vec![two, one, 0]
        );
        // Once B read `one`, it reads `one` or later only.
        x.read(B, 1, one);
        assert_eq!(
            x.readable(x.floor(B, &nobody), None).collect::<Vec<_>>(),
            vec![two, one]
        );
        // A wrote both: it reads its own latest store only.
        assert_eq!(
            x.readable(x.floor(A, &nobody), None).collect::<Vec<_>>(),
            vec![two]
        );
    }

    #[test]
    fn happens_before_carries_what_was_seen() {
        let mut x = LocationHistory::new(0);
        let one = x.insert(0, store(1, A, 3));
        let mut after_a = VectorClock::new();
        after_a.set(A, 3);
        assert_eq!(
            x.readable(x.floor(B, &after_a), None).collect::<Vec<_>>(),
            vec![one]
        );
        after_a.set(A, 2);
        assert_eq!(
            x.readable(x.floor(B, &after_a), None).collect::<Vec<_>>(),
            vec![one, 0]
        );
    }

    #[test]
    fn read_modify_writes_read_a_store_no_other_one_read() {
        let mut x = LocationHistory::new(0);
        let nobody = VectorClock::new();
        x.take(0);
        let rmw = x.insert(x.position(0), store(1, A, 1));
        assert_eq!(x.mo(), &[0, rmw]);
        assert_eq!(
            x.readable(0, Some(Rmw::Always)).collect::<Vec<_>>(),
            vec![rmw]
        );
        // A compare-exchange expecting 0 reads the initial value only to fail
        // — it cannot: 0 equals what it expects. Expecting 5 it may (fails).
        assert_eq!(
            x.readable(0, Some(Rmw::IfEquals(0))).collect::<Vec<_>>(),
            vec![rmw]
        );
        assert_eq!(
            x.readable(0, Some(Rmw::IfEquals(5))).collect::<Vec<_>>(),
            vec![rmw, 0]
        );
        // A store may not go between the initial value and the RMW.
        assert_eq!(
            x.placements(x.floor(B, &nobody)).collect::<Vec<_>>(),
            vec![1]
        );
    }

    #[test]
    fn stores_go_anywhere_above_the_floor() {
        let mut x = LocationHistory::new(0);
        let nobody = VectorClock::new();
        let a = x.insert(0, store(1, A, 1));
        assert_eq!(
            x.placements(x.floor(B, &nobody)).collect::<Vec<_>>(),
            vec![1, 0]
        );
        let b = x.insert(0, store(2, B, 1));
        assert_eq!(x.mo(), &[0, b, a]);
        assert_eq!(x.latest_bits(), 1);
    }
}

//! An event's frontiers: for each object in its history, the last write and
//! the reads of it. Every event of `U` keeps one per object it saw, and new
//! events are made after every execution, so they are stored flat: one list
//! of slots and one of all their reads (two allocations an event, not one
//! per object read).

use crate::exec::dependence::Access;

use super::names::Name;
use super::pool::WordPool;
use super::unfolding::{EventId, Frontier};

/// A frontier, borrowed: the last write (`None`: the initial value) and
/// the reads of it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FrontierView<'a> {
    pub write: Option<EventId>,
    pub reads: &'a [EventId],
}

impl FrontierView<'_> {
    /// An owned copy.
    pub(crate) fn to_frontier(self) -> Frontier {
        Frontier {
            write: self.write,
            reads: self.reads.to_vec(),
        }
    }
}

impl<'a> From<&'a Frontier> for FrontierView<'a> {
    fn from(f: &'a Frontier) -> Self {
        FrontierView {
            write: f.write,
            reads: &f.reads,
        }
    }
}

/// A slot's words: its name, its write (`NO_WRITE`: the initial value),
/// and where its reads are (`reads[start..start + len]`).
type Slot = [u32; 4];

/// `Slot`'s write word for the initial value (no event id reaches it).
const NO_WRITE: u32 = u32::MAX;

/// The frontiers of one history, sorted by canonical name: the slots and
/// then all their reads, in one allocation (an event is made for nearly
/// every execution, and the allocator was a sixth of the time).
#[derive(Debug, Default)]
pub(crate) struct Frontiers {
    /// `4 * slots` slot words, then the reads.
    words: Box<[u32]>,
    /// A `usize`, not a `u32` in 4 bytes of padding: a `Frontiers` moves as
    /// three 8-byte words, and the last one's load could not be forwarded
    /// from a 4-byte store (a stall after every new event's merge, the
    /// hottest spot of disp(5,4) in `perf` samples).
    slots: usize,
}

impl Frontiers {
    fn slot(&self, i: usize) -> Slot {
        let w = &self.words[4 * i..4 * i + 4];
        [w[0], w[1], w[2], w[3]]
    }

    fn reads(&self) -> &[EventId] {
        &self.words[4 * self.slots..]
    }

    /// How many objects the history touches.
    pub(crate) fn len(&self) -> usize {
        self.slots
    }

    /// The name of the `i`-th object (in name order).
    pub(crate) fn name_at(&self, i: usize) -> Name {
        Name::from_raw(self.words[4 * i])
    }

    /// The `i`-th object (in name order) and its frontier.
    pub(crate) fn at(&self, i: usize) -> (Name, FrontierView<'_>) {
        let [name, write, start, len] = self.slot(i);
        let reads = &self.reads()[start as usize..(start + len) as usize];
        (
            Name::from_raw(name),
            FrontierView {
                write: (write != NO_WRITE).then_some(write),
                reads,
            },
        )
    }

    /// Where the object of canonical name `name` is (`Ok`) or would be
    /// (`Err`) in name order.
    pub(crate) fn search(&self, name: Name) -> Result<usize, usize> {
        // By hand: the slots are words, and viewing them as `&[Slot]` for
        // the library's search needs `as_chunks` (Rust 1.88, above the
        // MSRV). Storing the names apart, searchable as they are, made
        // every lookup of a frontier cost more (pol(9,3) +3.5 %).
        let (mut low, mut high) = (0, self.len());
        while low < high {
            let mid = (low + high) / 2;
            match self.name_at(mid).cmp(&name) {
                std::cmp::Ordering::Less => low = mid + 1,
                std::cmp::Ordering::Greater => high = mid,
                std::cmp::Ordering::Equal => return Ok(mid),
            }
        }
        Err(low)
    }

    /// The frontier of the object of canonical name `name`, if touched.
    pub(crate) fn get(&self, name: Name) -> Option<FrontierView<'_>> {
        let i = self.search(name).ok()?;
        Some(self.at(i).1)
    }

    /// Whether the object of canonical name `name` is touched.
    pub(crate) fn contains(&self, name: Name) -> bool {
        self.search(name).is_ok()
    }

    /// These frontiers with the `at`-th slot set to object `name`'s new
    /// frontier (`write`, then `reads` and `then`): replaced if that slot
    /// is `name`'s, else inserted there (`at` is where `search` put it).
    /// Most new events have one predecessor's frontiers with their own
    /// access recorded: copied in bulk, not slot by slot through a
    /// [`FrontiersBuilder`] and copied again.
    pub(crate) fn with_slot(
        &self,
        pool: &mut WordPool,
        at: usize,
        name: Name,
        write: Option<EventId>,
        reads: &[EventId],
        then: Option<EventId>,
    ) -> Frontiers {
        debug_assert!(write != Some(NO_WRITE));
        let n = self.len();
        let replaced = at < n && self.name_at(at) == name;
        let after = at + usize::from(replaced);
        let old_reads = self.reads();
        // The old slot's reads (none if inserted); the reads are laid out
        // in slot order.
        let (cut_from, cut_to) = if replaced {
            let [_, _, start, len] = self.slot(at);
            (start as usize, (start + len) as usize)
        } else {
            let start = if at < n {
                self.slot(at)[2] as usize
            } else {
                old_reads.len()
            };
            (start, start)
        };
        let new_len = reads.len() + usize::from(then.is_some());
        let slots = n + 1 - (after - at);
        let total_reads = old_reads.len() - (cut_to - cut_from) + new_len;
        let mut words = pool.vec_for(4 * slots + total_reads);
        words.extend_from_slice(&self.words[..4 * at]);
        words.extend_from_slice(&[
            name.raw(),
            write.unwrap_or(NO_WRITE),
            cut_from as u32,
            new_len as u32,
        ]);
        // The later slots' reads move by the change in this one's. Shifted
        // as they are copied: adding to the copy afterwards read words just
        // stored into a cold block, and those loads waited for the block's
        // lines (a twelfth of disp(5,4)'s time in `perf` samples).
        let shift = (new_len as u32).wrapping_sub((cut_to - cut_from) as u32);
        for slot in self.words[4 * after..4 * n].chunks_exact(4) {
            words.extend_from_slice(&[slot[0], slot[1], slot[2].wrapping_add(shift), slot[3]]);
        }
        words.extend_from_slice(&old_reads[..cut_from]);
        words.extend_from_slice(reads);
        words.extend(then);
        words.extend_from_slice(&old_reads[cut_to..]);
        debug_assert_eq!(words.len(), 4 * slots + total_reads);
        Frontiers {
            words: words.into_boxed_slice(),
            slots,
        }
    }

    /// A copy, in a block from `pool` if it has one.
    pub(crate) fn copy_in(&self, pool: &mut WordPool) -> Frontiers {
        Frontiers {
            words: pool.copy_of(&self.words),
            slots: self.slots,
        }
    }

    /// Its block of words, for `pool`.
    pub(crate) fn into_words(self) -> Box<[u32]> {
        self.words
    }

    /// All of them, in name order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (Name, FrontierView<'_>)> + '_ {
        (0..self.len()).map(|i| self.at(i))
    }
}

/// Frontiers sorted by canonical name, indexed: an event's
/// ([`Frontiers`]) or a configuration's (a sorted slice of owned ones), so
/// that conflict checks walk either kind together with an event's.
pub(crate) trait ByName {
    /// How many objects.
    fn count(&self) -> usize;
    /// The name of the `i`-th.
    fn name_at(&self, i: usize) -> Name;
    /// The frontier of the `i`-th.
    fn view_at(&self, i: usize) -> FrontierView<'_>;
}

impl ByName for Frontiers {
    fn count(&self) -> usize {
        self.len()
    }
    fn name_at(&self, i: usize) -> Name {
        Frontiers::name_at(self, i)
    }
    fn view_at(&self, i: usize) -> FrontierView<'_> {
        self.at(i).1
    }
}

impl ByName for [(Name, Frontier)] {
    fn count(&self) -> usize {
        self.len()
    }
    fn name_at(&self, i: usize) -> Name {
        self[i].0
    }
    fn view_at(&self, i: usize) -> FrontierView<'_> {
        (&self[i].1).into()
    }
}

/// Builds [`Frontiers`] in name order, keeping its buffers between builds.
#[derive(Default)]
pub(crate) struct FrontiersBuilder {
    slots: Vec<Slot>,
    reads: Vec<EventId>,
}

impl FrontiersBuilder {
    /// Appends the next object (names must come in increasing order).
    pub(crate) fn push(
        &mut self,
        name: Name,
        write: Option<EventId>,
        reads: impl IntoIterator<Item = EventId>,
    ) {
        debug_assert!(self.slots.last().map_or(true, |s| s[0] < name.raw()));
        debug_assert!(write != Some(NO_WRITE));
        let start = self.reads.len();
        self.reads.extend(reads);
        self.slots.push([
            name.raw(),
            write.unwrap_or(NO_WRITE),
            start as u32,
            (self.reads.len() - start) as u32,
        ]);
    }

    /// Appends object `name` as event `id`'s access of it leaves it, its
    /// frontier before the access being `before`: a write starts a new
    /// frontier, a read joins the reads.
    pub(crate) fn push_access(
        &mut self,
        name: Name,
        before: FrontierView<'_>,
        id: EventId,
        access: Access,
    ) {
        match access {
            Access::Write => self.push(name, Some(id), []),
            Access::Read => self.push(name, before.write, before.reads.iter().copied().chain([id])),
        }
    }

    /// The frontiers pushed so far; the builder is left empty.
    pub(crate) fn finish(&mut self) -> Frontiers {
        self.finish_in(&mut WordPool::default())
    }

    /// [`finish`](Self::finish), in a block from `pool` if it has one.
    pub(crate) fn finish_in(&mut self, pool: &mut WordPool) -> Frontiers {
        let mut words = pool.vec_for(4 * self.slots.len() + self.reads.len());
        words.extend_from_slice(self.slots.as_flattened());
        words.extend_from_slice(&self.reads);
        let out = Frontiers {
            words: words.into_boxed_slice(),
            slots: self.slots.len(),
        };
        self.slots.clear();
        self.reads.clear();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_frontiers_are_found_by_name_with_their_own_reads() {
        let mut names = super::super::names::NameUnion::default();
        let (a, b, c) = (names.fresh(), names.fresh(), names.fresh());
        let mut builder = FrontiersBuilder::default();
        builder.push(a, Some(1), [2, 3]);
        builder.push(b, None, []);
        let f = builder.finish();
        assert_eq!(f.len(), 2);
        let fa = f.get(a).expect("a is touched");
        assert_eq!((fa.write, fa.reads), (Some(1), &[2, 3][..]));
        let fb = f.get(b).expect("b is touched");
        assert_eq!((fb.write, fb.reads), (None, &[][..]));
        assert!(f.get(c).is_none() && !f.contains(c));
        // The builder starts over empty.
        builder.push(c, Some(4), [5]);
        let g = builder.finish();
        assert_eq!(g.iter().map(|(n, _)| n).collect::<Vec<_>>(), vec![c]);
        assert_eq!(g.at(0).1.to_frontier().reads, vec![5]);
    }

    /// Frontiers built slot by slot, from `(name, write, reads)` in name order.
    fn built(slots: &[(Name, Option<EventId>, Vec<EventId>)]) -> Frontiers {
        let mut builder = FrontiersBuilder::default();
        for (name, write, reads) in slots {
            builder.push(*name, *write, reads.iter().copied());
        }
        builder.finish()
    }

    fn listed(f: &Frontiers) -> Vec<(Name, Option<EventId>, Vec<EventId>)> {
        f.iter()
            .map(|(n, v)| (n, v.write, v.reads.to_vec()))
            .collect()
    }

    #[test]
    fn a_slot_set_in_bulk_matches_the_frontiers_built_slot_by_slot() {
        let mut names = super::super::names::NameUnion::default();
        let [a, b, c, d, e] = [(); 5].map(|_| names.fresh());
        let base = vec![
            (b, Some(1), vec![2, 3]),
            (c, None, vec![]),
            (d, Some(4), vec![5]),
        ];
        let f = built(&base);
        // Each position, replacing or inserting; a write (no reads), a read
        // joining reads, and a read of a frontier with none.
        let cases = [
            (a, Some(9), vec![], None),
            (b, Some(9), vec![], None),
            (b, Some(1), vec![2, 3], Some(9)),
            (c, None, vec![], Some(9)),
            (d, Some(9), vec![], None),
            (d, Some(4), vec![5], Some(9)),
            (e, None, vec![], Some(9)),
        ];
        for (name, write, reads, then) in cases {
            let at = f.search(name).unwrap_or_else(|i| i);
            let got = f.with_slot(&mut WordPool::default(), at, name, write, &reads, then);
            let mut expected = base.clone();
            let slot = (name, write, reads.iter().copied().chain(then).collect());
            match expected.binary_search_by_key(&name, |s| s.0) {
                Ok(i) => expected[i] = slot,
                Err(i) => expected.insert(i, slot),
            }
            assert_eq!(listed(&got), expected, "setting {name:?}");
            assert_eq!(listed(&got), listed(&built(&expected)));
        }
    }
}

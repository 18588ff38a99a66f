//! An event's frontiers: for each object in its history, the last write and
//! the reads of it. Every event of `U` keeps one per object it saw, and new
//! events are made after every execution, so they are stored flat: one list
//! of slots and one of all their reads (two allocations an event, not one
//! per object read).

use crate::exec::dependence::Access;

use super::names::Name;
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

#[derive(Clone, Copy, Debug)]
struct Slot {
    name: Name,
    write: Option<EventId>,
    /// Its reads: `reads[start..start + len]`.
    start: u32,
    len: u32,
}

/// The frontiers of one history, sorted by canonical name.
#[derive(Debug, Default)]
pub(crate) struct Frontiers {
    slots: Box<[Slot]>,
    reads: Box<[EventId]>,
}

impl Frontiers {
    /// How many objects the history touches.
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    /// The name of the `i`-th object (in name order).
    pub(crate) fn name_at(&self, i: usize) -> Name {
        self.slots[i].name
    }

    /// The `i`-th object (in name order) and its frontier.
    pub(crate) fn at(&self, i: usize) -> (Name, FrontierView<'_>) {
        let s = &self.slots[i];
        let reads = &self.reads[s.start as usize..(s.start + s.len) as usize];
        (
            s.name,
            FrontierView {
                write: s.write,
                reads,
            },
        )
    }

    /// Where the object of canonical name `name` is (`Ok`) or would be
    /// (`Err`) in name order.
    pub(crate) fn search(&self, name: Name) -> Result<usize, usize> {
        self.slots.binary_search_by_key(&name, |s| s.name)
    }

    /// The frontier of the object of canonical name `name`, if touched.
    pub(crate) fn get(&self, name: Name) -> Option<FrontierView<'_>> {
        let i = self.search(name).ok()?;
        Some(self.at(i).1)
    }

    /// Whether the object of canonical name `name` is touched.
    pub(crate) fn contains(&self, name: Name) -> bool {
        self.get(name).is_some()
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
        debug_assert!(self.slots.last().map_or(true, |s| s.name < name));
        let start = self.reads.len();
        self.reads.extend(reads);
        self.slots.push(Slot {
            name,
            write,
            start: start as u32,
            len: (self.reads.len() - start) as u32,
        });
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
        let out = Frontiers {
            slots: self.slots.as_slice().into(),
            reads: self.reads.as_slice().into(),
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
}

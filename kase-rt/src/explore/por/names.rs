//! Canonical names of objects across executions (see `POR-DESIGN.md`).
//!
//! Objects register on first use, so the same object can be met first from
//! different threads in different executions. NameUnion are bound through known
//! events and merged (union-find) when two names turn out to be one object.

use std::cell::Cell;

/// A canonical object name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Name(u32);

impl Name {
    /// Its number, for packed storage (`frontiers.rs`); names order as
    /// their numbers.
    pub(crate) fn raw(self) -> u32 {
        self.0
    }

    /// The name numbered `raw` (what [`raw`](Self::raw) gave).
    pub(crate) fn from_raw(raw: u32) -> Name {
        Name(raw)
    }
}

/// Union-find over names (which names denote one object), with path halving
/// on lookup.
#[derive(Default)]
pub(crate) struct NameUnion {
    parent: Vec<Cell<u32>>,
}

impl NameUnion {
    pub(crate) fn fresh(&mut self) -> Name {
        let n = self.parent.len() as u32;
        self.parent.push(Cell::new(n));
        Name(n)
    }

    /// How many names were made (merged ones included).
    #[cfg(all(debug_assertions, any(test, feature = "self-check")))]
    pub(crate) fn len(&self) -> usize {
        self.parent.len()
    }

    pub(crate) fn find(&self, name: Name) -> Name {
        let mut x = name.0;
        loop {
            let p = self.parent[x as usize].get();
            if p == x {
                return Name(x);
            }
            let grand = self.parent[p as usize].get();
            self.parent[x as usize].set(grand);
            x = grand;
        }
    }

    /// Records that `a` and `b` name one object.
    pub(crate) fn union(&mut self, a: Name, b: Name) {
        let (a, b) = (self.find(a), self.find(b));
        if a != b {
            let (keep, drop) = if a < b { (a, b) } else { (b, a) };
            self.parent[drop.0 as usize].set(keep.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_find_merges_transitively() {
        let mut names = NameUnion::default();
        let [a, b, c, d] = [names.fresh(), names.fresh(), names.fresh(), names.fresh()];
        names.union(c, b);
        names.union(b, a);
        assert_eq!(names.find(c), names.find(a));
        assert_ne!(names.find(d), names.find(a));
    }
}

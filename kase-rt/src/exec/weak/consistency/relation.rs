//! A binary relation over the events of one graph, as one bitset row per
//! event (graphs are small: tens to a few hundred events).

/// A relation over `0..n`: `contains(a, b)` iff `a` is related to `b`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Relation {
    n: usize,
    /// Words per row.
    words: usize,
    bits: Vec<u64>,
}

impl Relation {
    /// The empty relation over `0..n`.
    pub(crate) fn empty(n: usize) -> Self {
        let words = n.div_ceil(64);
        Relation {
            n,
            words,
            bits: vec![0; n * words],
        }
    }

    /// The relation of every pair `f` holds for.
    pub(crate) fn from_fn(n: usize, mut f: impl FnMut(usize, usize) -> bool) -> Self {
        let mut r = Relation::empty(n);
        for a in 0..n {
            for b in 0..n {
                if f(a, b) {
                    r.add(a, b);
                }
            }
        }
        r
    }

    /// The number of events it is over.
    pub(crate) fn len(&self) -> usize {
        self.n
    }

    /// Relates `a` to `b`.
    pub(crate) fn add(&mut self, a: usize, b: usize) {
        self.bits[a * self.words + b / 64] |= 1 << (b % 64);
    }

    /// Whether `a` is related to `b`.
    pub(crate) fn contains(&self, a: usize, b: usize) -> bool {
        self.bits[a * self.words + b / 64] & (1 << (b % 64)) != 0
    }

    fn row(&self, a: usize) -> &[u64] {
        &self.bits[a * self.words..(a + 1) * self.words]
    }

    /// `row(a) |= src`.
    fn or_row(&mut self, a: usize, src: &[u64]) {
        let words = self.words;
        for (dst, src) in self.bits[a * words..(a + 1) * words].iter_mut().zip(src) {
            *dst |= src;
        }
    }

    /// The events `a` is related to, in increasing order.
    pub(crate) fn successors(&self, a: usize) -> impl Iterator<Item = usize> + '_ {
        self.row(a).iter().enumerate().flat_map(|(w, &word)| {
            (0..64)
                .filter(move |bit| word & (1 << bit) != 0)
                .map(move |bit| w * 64 + bit)
        })
    }

    /// `self ∪ other`.
    pub(crate) fn union(mut self, other: &Relation) -> Relation {
        debug_assert_eq!(self.n, other.n);
        for (dst, src) in self.bits.iter_mut().zip(&other.bits) {
            *dst |= src;
        }
        self
    }

    /// `self ; other`: `a` to `c` when `a` is related to some `b` related to `c`.
    pub(crate) fn then(&self, other: &Relation) -> Relation {
        debug_assert_eq!(self.n, other.n);
        let mut r = Relation::empty(self.n);
        for a in 0..self.n {
            for b in self.successors(a) {
                r.or_row(a, other.row(b));
            }
        }
        r
    }

    /// `self⁻¹`.
    pub(crate) fn inverse(&self) -> Relation {
        let mut r = Relation::empty(self.n);
        for a in 0..self.n {
            for b in self.successors(a) {
                r.add(b, a);
            }
        }
        r
    }

    /// `self⁺` (Warshall's algorithm, row by row).
    pub(crate) fn closure(&self) -> Relation {
        let mut r = self.clone();
        for k in 0..self.n {
            let row_k = r.row(k).to_vec();
            for i in 0..self.n {
                if r.contains(i, k) {
                    r.or_row(i, &row_k);
                }
            }
        }
        r
    }

    /// `self?`: `self` plus the identity.
    pub(crate) fn reflexive(mut self) -> Relation {
        for a in 0..self.n {
            self.add(a, a);
        }
        self
    }

    /// The pairs of `self` that `keep` holds for.
    pub(crate) fn filter(&self, mut keep: impl FnMut(usize, usize) -> bool) -> Relation {
        let mut r = Relation::empty(self.n);
        for a in 0..self.n {
            for b in self.successors(a) {
                if keep(a, b) {
                    r.add(a, b);
                }
            }
        }
        r
    }

    /// No event related to itself.
    pub(crate) fn is_irreflexive(&self) -> bool {
        (0..self.n).all(|a| !self.contains(a, a))
    }

    /// No cycle: `self⁺` is irreflexive.
    pub(crate) fn is_acyclic(&self) -> bool {
        self.closure().is_irreflexive()
    }
}

#[cfg(test)]
mod tests {
    use super::Relation;

    #[test]
    fn closure_composition_and_cycles() {
        // A chain 0 -> 1 -> ... -> 69 crosses a word boundary.
        let chain = Relation::from_fn(70, |a, b| b == a + 1);
        let plus = chain.closure();
        assert!(plus.contains(0, 69) && plus.contains(63, 64) && !plus.contains(69, 0));
        assert!(chain.is_acyclic());
        assert_eq!(chain.then(&chain), Relation::from_fn(70, |a, b| b == a + 2));
        assert_eq!(chain.inverse(), Relation::from_fn(70, |a, b| a == b + 1));
        assert_eq!(plus.successors(67).collect::<Vec<_>>(), vec![68, 69]);
        let mut cycle = chain.clone();
        cycle.add(69, 0);
        assert!(!cycle.is_acyclic());
        assert!(cycle.is_irreflexive());
        assert!(!chain.clone().reflexive().is_irreflexive());
    }
}

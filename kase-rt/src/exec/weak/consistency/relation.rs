//! A binary relation over the events of one graph, as one bitset row per
//! event (graphs of tens to a few thousand events).

/// A relation over `0..n`: `contains(a, b)` iff `a` is related to `b`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Relation {
    n: usize,
    /// Words per row.
    words: usize,
    bits: Vec<u64>,
}

/// The members of a bitset, in increasing order.
pub(crate) fn members(set: &[u64]) -> impl Iterator<Item = usize> + '_ {
    set.iter()
        .enumerate()
        .filter(|(_, &word)| word != 0)
        .flat_map(|(w, &word)| {
            // The set bits, lowest first.
            let mut rest = word;
            std::iter::from_fn(move || {
                (rest != 0).then(|| {
                    let bit = rest.trailing_zeros() as usize;
                    rest &= rest - 1;
                    w * 64 + bit
                })
            })
        })
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

    /// `a`'s row: the set of events `a` is related to, as a bitset.
    pub(crate) fn row(&self, a: usize) -> &[u64] {
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
        members(self.row(a))
    }

    /// Into `out`, the events some member of `set` is related to (both
    /// bitsets the length of a row).
    pub(crate) fn image_into(&self, set: &[u64], out: &mut [u64]) {
        out.fill(0);
        self.add_image(set, out);
    }

    /// `out |= image(set)`, in a buffer the length of a row.
    pub(crate) fn add_image(&self, set: &[u64], out: &mut [u64]) {
        for a in members(set) {
            for (dst, src) in out.iter_mut().zip(self.row(a)) {
                *dst |= src;
            }
        }
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

    /// `self⁺`. An acyclic relation is closed along a topological order,
    /// each event taking its successors' rows (time proportional to its
    /// pairs times the row length: a long program order given by its
    /// immediate steps costs a quadratic, not a cubic), which is `0..n`
    /// itself, unsorted, when every pair goes forward (program order and
    /// happens-before in a graph built as it ran); a cyclic one by
    /// Warshall's algorithm.
    pub(crate) fn closure(&self) -> Relation {
        if self.is_forward() {
            return self.closure_forward();
        }
        match self.topological_order() {
            Some(order) => self.closure_along(&order),
            None => self.warshall(),
        }
    }

    /// Whether every pair goes from a lower event to a higher one (as
    /// program order and happens-before do in a graph whose events are in
    /// the order they ran): then `0..n` is a topological order.
    fn is_forward(&self) -> bool {
        (0..self.n).all(|a| {
            let row = self.row(a);
            let last = a / 64;
            // The bits of events up to `a` itself, in `a`'s word.
            let upto = u64::MAX >> (63 - a % 64);
            row[..last].iter().all(|&w| w == 0) && row[last] & upto == 0
        })
    }

    /// `self⁺` of a forward relation (`is_forward`), closed along `0..n`
    /// without sorting.
    fn closure_forward(&self) -> Relation {
        let mut r = self.clone();
        let words = self.words;
        for a in (0..self.n).rev() {
            // Rows above `a` are closed already; `a`'s successors are there.
            let (low, high) = r.bits.split_at_mut((a + 1) * words);
            let row = &mut low[a * words..];
            for b in members(self.row(a)) {
                let closed = &high[(b - a - 1) * words..(b - a) * words];
                for (dst, src) in row.iter_mut().zip(closed) {
                    *dst |= src;
                }
            }
        }
        r
    }

    /// The events in an order where each comes before its successors, if
    /// there is one (Kahn's algorithm); `None` if the relation has a cycle.
    fn topological_order(&self) -> Option<Vec<usize>> {
        let mut incoming = vec![0usize; self.n];
        for a in 0..self.n {
            for b in self.successors(a) {
                incoming[b] += 1;
            }
        }
        let mut order: Vec<usize> = (0..self.n).filter(|&a| incoming[a] == 0).collect();
        let mut next = 0;
        while next < order.len() {
            let a = order[next];
            next += 1;
            for b in self.successors(a) {
                incoming[b] -= 1;
                if incoming[b] == 0 {
                    order.push(b);
                }
            }
        }
        (order.len() == self.n).then_some(order)
    }

    /// `self⁺` of an acyclic relation, `order` topological: the last events
    /// first, each taking the closed rows of its successors.
    fn closure_along(&self, order: &[usize]) -> Relation {
        let mut r = self.clone();
        let mut row = vec![0u64; self.words];
        for &a in order.iter().rev() {
            row.copy_from_slice(self.row(a));
            for b in self.successors(a) {
                for (dst, src) in row.iter_mut().zip(r.row(b)) {
                    *dst |= src;
                }
            }
            r.bits[a * self.words..(a + 1) * self.words].copy_from_slice(&row);
        }
        r
    }

    /// `self⁺` by Warshall's algorithm, row by row.
    fn warshall(&self) -> Relation {
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

    /// Each row `a` intersected with `mask(a)` (a bitset the length of a
    /// row), or with its complement if `inside` is false: a filter by a
    /// property of the pair that is a set per row, a word at a time.
    pub(crate) fn mask_rows<'m>(
        &self,
        inside: bool,
        mut mask: impl FnMut(usize) -> &'m [u64],
    ) -> Relation {
        let mut r = self.clone();
        let words = self.words;
        for a in 0..self.n {
            let row = &mut r.bits[a * words..(a + 1) * words];
            for (dst, &m) in row.iter_mut().zip(mask(a)) {
                *dst &= if inside { m } else { !m };
            }
        }
        r
    }

    /// No event related to itself.
    pub(crate) fn is_irreflexive(&self) -> bool {
        (0..self.n).all(|a| !self.contains(a, a))
    }

    /// No cycle.
    pub(crate) fn is_acyclic(&self) -> bool {
        self.topological_order().is_some()
    }

    /// Whether it relates no pair at all.
    pub(crate) fn is_empty(&self) -> bool {
        self.bits.iter().all(|&w| w == 0)
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

    #[test]
    fn every_way_of_closing_agrees_with_warshall() {
        // Pseudo-random relations over sizes that cross word boundaries:
        // forward ones (closed along 0..n), backward-going acyclic ones
        // (a topological order) and cyclic ones (Warshall).
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for n in [1, 2, 63, 64, 65, 130] {
            for round in 0..6 {
                let dense = 2 + round;
                let mut pairs = Vec::new();
                for _ in 0..n * 2 {
                    let (a, b) = (next() as usize % n, next() as usize % n);
                    if next() % 8 < dense {
                        pairs.push((a, b));
                    }
                }
                let forward = Relation::from_fn(n, |a, b| a < b && pairs.contains(&(a, b)));
                let acyclic = Relation::from_fn(n, |a, b| a > b && pairs.contains(&(a, b)));
                let any = Relation::from_fn(n, |a, b| pairs.contains(&(a, b)));
                assert!(forward.is_forward());
                for r in [&forward, &acyclic, &any] {
                    assert_eq!(r.closure(), r.warshall(), "n = {n}, round {round}");
                }
                assert_eq!(acyclic.is_forward(), acyclic.is_empty());
            }
        }
    }
}

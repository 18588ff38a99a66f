//! Vector clocks indexed by [`ThreadIdx`].

use super::action::ThreadIdx;

/// A vector clock: for each thread, how many of its events are known.
///
/// Clocks are cloned at every event; up to `INLINE` threads they live
/// inline, so a clone allocates nothing.
#[derive(Clone, Default)]
pub struct VectorClock {
    /// Components kept: in `inline` up to `INLINE`, else all in `heap`.
    len: usize,
    inline: [u32; INLINE],
    heap: Vec<u32>,
}

/// Threads a clock holds without allocating. Every event keeps a clock, so
/// a model with more threads allocated one per event: 16 covers the
/// benchmark families (mpat(6) has 13 threads), for 32 bytes more per
/// clock than 8 (mpat(5): 5.8 % fewer instructions, pol(7,3) 7 %).
const INLINE: usize = 16;

impl VectorClock {
    /// The empty clock (nothing known).
    pub fn new() -> Self {
        VectorClock::default()
    }

    fn components(&self) -> &[u32] {
        if self.len <= INLINE {
            &self.inline[..self.len]
        } else {
            &self.heap
        }
    }

    fn components_mut(&mut self) -> &mut [u32] {
        if self.len <= INLINE {
            &mut self.inline[..self.len]
        } else {
            &mut self.heap
        }
    }

    /// Makes room for `len` components (new ones 0).
    fn grow(&mut self, len: usize) {
        if len <= self.len {
            return;
        }
        if len <= INLINE {
            // Inline components past `self.len` are 0 (`clear` zeroes them).
            self.len = len;
            return;
        }
        if self.len <= INLINE {
            self.heap.clear();
            self.heap.extend_from_slice(&self.inline[..self.len]);
        }
        self.heap.resize(len, 0);
        self.len = len;
    }

    /// Sets the component of `thread`.
    pub fn set(&mut self, thread: ThreadIdx, value: u32) {
        let i = thread.index();
        self.grow(i + 1);
        self.components_mut()[i] = value;
    }

    /// The component of `thread`.
    pub fn get(&self, thread: ThreadIdx) -> u32 {
        self.components().get(thread.index()).copied().unwrap_or(0)
    }

    /// Pointwise maximum with `other`.
    pub fn join(&mut self, other: &VectorClock) {
        self.grow(other.len);
        for (mine, theirs) in self.components_mut().iter_mut().zip(other.components()) {
            *mine = (*mine).max(*theirs);
        }
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.inline = [0; INLINE];
        self.heap.clear();
        self.len = 0;
    }

    /// The components, trailing zeros trimmed, so equal clocks compare equal
    /// whatever their allocated length.
    pub fn as_slice(&self) -> &[u32] {
        let components = self.components();
        let len = components
            .iter()
            .rposition(|&c| c != 0)
            .map_or(0, |i| i + 1);
        &components[..len]
    }
}

impl PartialEq for VectorClock {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for VectorClock {}

impl std::hash::Hash for VectorClock {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_slice().hash(state);
    }
}

impl std::fmt::Debug for VectorClock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("VectorClock")
            .field(&self.components())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn join_is_pointwise_max_and_trims() {
        let mut a = VectorClock::new();
        a.set(ThreadIdx(0), 3);
        let mut b = VectorClock::new();
        b.set(ThreadIdx(2), 1);
        b.set(ThreadIdx(0), 1);
        a.join(&b);
        assert_eq!(a.as_slice(), &[3, 0, 1]);
        let mut c = VectorClock::new();
        c.set(ThreadIdx(5), 0);
        assert_eq!(c.as_slice(), &[] as &[u32]);
        assert_eq!(c, VectorClock::new(), "trailing zeros do not count");
    }

    #[test]
    fn clocks_past_the_inline_size_spill_and_keep_their_components() {
        let mut a = VectorClock::new();
        a.set(ThreadIdx(1), 4);
        a.set(ThreadIdx(7), 2);
        let mut wide = VectorClock::new();
        wide.set(ThreadIdx(11), 9);
        wide.set(ThreadIdx(1), 1);
        a.join(&wide);
        assert_eq!(a.as_slice(), &[0, 4, 0, 0, 0, 0, 0, 2, 0, 0, 0, 9]);
        assert_eq!(a.get(ThreadIdx(11)), 9);
        assert_eq!(a.get(ThreadIdx(40)), 0);
        let mut narrow = VectorClock::new();
        narrow.set(ThreadIdx(2), 5);
        narrow.join(&a);
        assert_eq!(narrow.as_slice(), &[0, 4, 5, 0, 0, 0, 0, 2, 0, 0, 0, 9]);
        a.clear();
        assert_eq!(a.as_slice(), &[] as &[u32]);
        a.set(ThreadIdx(3), 1);
        assert_eq!(
            a.as_slice(),
            &[0, 0, 0, 1],
            "cleared inline components are 0"
        );
    }
}

//! Vector clocks indexed by [`ThreadIdx`].

use super::action::ThreadIdx;

/// A vector clock: for each thread, how many of its events are known.
///
/// Clocks are cloned at every event; up to `INLINE` threads they live
/// inline, so a clone allocates nothing.
#[derive(Default)]
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

impl Clone for VectorClock {
    /// Copies the inline components; touches the heap part only when in
    /// use (the derived clone called `Vec::clone` on it at every event).
    fn clone(&self) -> Self {
        VectorClock {
            len: self.len,
            inline: self.inline,
            heap: if self.len <= INLINE {
                Vec::new()
            } else {
                self.heap.clone()
            },
        }
    }

    fn clone_from(&mut self, source: &Self) {
        self.len = source.len;
        self.inline = source.inline;
        if source.len <= INLINE {
            self.heap.clear();
        } else {
            self.heap.clone_from(&source.heap);
        }
    }
}

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
    // In line: nearly every call (a tick, a join) finds the room there,
    // and the call cost more than that check (2 % of the unreduced
    // explorer's instructions on disp(5,4)).
    #[inline]
    fn grow(&mut self, len: usize) {
        if len > self.len {
            self.grow_to(len);
        }
    }

    fn grow_to(&mut self, len: usize) {
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
        if other.len == 0 {
            // Common: an object no step touched yet in that way.
            return;
        }
        self.grow(other.len);
        for (mine, theirs) in self.components_mut().iter_mut().zip(other.components()) {
            *mine = (*mine).max(*theirs);
        }
    }

    /// Whether its components live on the heap (more threads than
    /// `INLINE`): such a clock is worth reusing.
    pub(crate) fn on_heap(&self) -> bool {
        self.heap.capacity() > 0
    }

    /// Its heap room, emptied (none for a clock held inline), for
    /// [`with_room`](Self::with_room).
    pub(crate) fn into_room(self) -> Vec<u32> {
        let mut room = self.heap;
        room.clear();
        room
    }

    /// An empty clock that grows into `room` (from
    /// [`into_room`](Self::into_room)) before allocating.
    pub(crate) fn with_room(room: Vec<u32>) -> Self {
        debug_assert!(room.is_empty());
        VectorClock {
            len: 0,
            inline: [0; INLINE],
            heap: room,
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
    fn inline_join_after_a_spill_and_a_clear_sees_no_stale_components() {
        // Spilled to the heap, then cleared and reused inline: `grow` relies
        // on inline components past the length being zero.
        let mut a = VectorClock::new();
        for t in 0..(INLINE as u32 + 4) {
            a.set(ThreadIdx(t), 7);
        }
        a.clear();
        a.set(ThreadIdx(1), 2);
        let mut b = VectorClock::new();
        b.clone_from(&a);
        let mut c = VectorClock::new();
        c.set(ThreadIdx(0), 1);
        c.join(&b);
        assert_eq!(c.as_slice(), &[1, 2]);
        // An inline clock joined with a spilled one spills, keeping both.
        let mut big = VectorClock::new();
        big.set(ThreadIdx(INLINE as u32 + 1), 3);
        c.join(&big);
        let mut want = vec![1, 2];
        want.resize(INLINE + 1, 0);
        want.push(3);
        assert_eq!(c.as_slice(), &want[..]);
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

    #[test]
    fn clocks_agree_with_plain_vectors_inline_and_spilled() {
        // Random sets, joins, clones, clone_froms and clears on a few
        // clocks, some past the inline size, against plain vectors.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let mut clocks = vec![VectorClock::new(); 4];
        let mut plain = vec![Vec::<u32>::new(); 4];
        let trimmed = |v: &Vec<u32>| {
            let len = v.iter().rposition(|&c| c != 0).map_or(0, |i| i + 1);
            v[..len].to_vec()
        };
        for _ in 0..20_000 {
            let (i, j) = (next(4) as usize, next(4) as usize);
            match next(6) {
                0 | 1 => {
                    // Mostly inline threads, now and then past INLINE.
                    let t = if next(8) == 0 { next(40) } else { next(12) } as usize;
                    let v = next(100) as u32;
                    clocks[i].set(ThreadIdx(t as u32), v);
                    if plain[i].len() <= t {
                        plain[i].resize(t + 1, 0);
                    }
                    plain[i][t] = v;
                }
                2 => {
                    let other = clocks[j].clone();
                    clocks[i].join(&other);
                    let other = plain[j].clone();
                    if plain[i].len() < other.len() {
                        plain[i].resize(other.len(), 0);
                    }
                    for (mine, theirs) in plain[i].iter_mut().zip(&other) {
                        *mine = (*mine).max(*theirs);
                    }
                }
                3 => {
                    clocks[i] = clocks[j].clone();
                    plain[i] = plain[j].clone();
                }
                4 => {
                    let other = clocks[j].clone();
                    clocks[i].clone_from(&other);
                    plain[i] = plain[j].clone();
                }
                _ => {
                    if next(4) == 0 {
                        clocks[i].clear();
                        plain[i].clear();
                    }
                }
            }
            for k in 0..4 {
                assert_eq!(clocks[k].as_slice(), &trimmed(&plain[k])[..]);
                for t in 0..42 {
                    let expected = plain[k].get(t).copied().unwrap_or(0);
                    assert_eq!(clocks[k].get(ThreadIdx(t as u32)), expected);
                }
            }
        }
    }
}

//! Storage the explorer keeps for reuse instead of asking the allocator.
//!
//! [`WordPool`]: the word blocks of pruned events (their packed
//! predecessors and their frontiers), kept for the events made after the
//! pruning: a new event takes a block of the exact length it needs, if
//! one was freed. `perf` put a sixth of mpat(6)'s cycles in `malloc` and
//! `free`, and a new event costs two blocks.
//!
//! [`ListPool`]: vectors handed out by index and emptied in place.

/// Blocks longer than this go back to the allocator.
const MAX_POOLED_LEN: usize = 256;

/// Freed blocks by length. Emptied at each pruning before the pruned
/// events' blocks come in, so it holds at most one pruning's worth: no
/// more memory than `U` had before that pruning.
#[derive(Default)]
pub(crate) struct WordPool {
    by_len: Vec<Vec<Box<[u32]>>>,
}

impl WordPool {
    /// Lets go of every block held.
    pub(crate) fn clear(&mut self) {
        for blocks in &mut self.by_len {
            *blocks = Vec::new();
        }
    }

    /// Keeps `block` for a later one of its length.
    pub(crate) fn give(&mut self, block: Box<[u32]>) {
        let len = block.len();
        if len == 0 || len > MAX_POOLED_LEN {
            return;
        }
        if self.by_len.len() <= len {
            self.by_len.resize_with(len + 1, Vec::new);
        }
        self.by_len[len].push(block);
    }

    /// A block holding a copy of `words`.
    pub(crate) fn copy_of(&mut self, words: &[u32]) -> Box<[u32]> {
        match self.take(words.len()) {
            Some(mut block) => {
                block.copy_from_slice(words);
                block
            }
            None => words.into(),
        }
    }

    /// An empty vector with room for exactly `len` words if a block of
    /// that length is held (at least `len` otherwise): filled to `len`,
    /// `into_boxed_slice` then keeps its allocation.
    pub(crate) fn vec_for(&mut self, len: usize) -> Vec<u32> {
        match self.take(len) {
            Some(block) => {
                let mut words = block.into_vec();
                words.clear();
                words
            }
            None => Vec::with_capacity(len),
        }
    }

    fn take(&mut self, len: usize) -> Option<Box<[u32]>> {
        self.by_len.get_mut(len)?.pop()
    }
}

/// A list emptied for reuse keeps at most this much room (memory stays
/// that of the lists in use).
const SPARE_LIST_ROOM: usize = 32;

/// A list index that names no list of a [`ListPool`] (given back, it is
/// ignored).
pub(crate) const NO_POOLED: u32 = u32::MAX;

/// Lists handed out by index and emptied in place, keeping their
/// allocations for the next ones (the comb's spike lists: a node's lists
/// are mostly short, and a vector allocated and freed for each was the
/// comb's most frequent allocation).
pub(crate) struct ListPool<T> {
    lists: Vec<Vec<T>>,
    /// `lists[..used]` are handed out or in `free`; the rest are empty.
    used: usize,
    free: Vec<u32>,
}

impl<T> Default for ListPool<T> {
    fn default() -> Self {
        ListPool {
            lists: Vec::new(),
            used: 0,
            free: Vec::new(),
        }
    }
}

impl<T> ListPool<T> {
    /// An empty list's index.
    pub(crate) fn take(&mut self) -> u32 {
        if let Some(i) = self.free.pop() {
            return i;
        }
        if self.used == self.lists.len() {
            self.lists.push(Vec::new());
        }
        self.used += 1;
        (self.used - 1) as u32
    }

    /// Gives list `i` back (`NO_POOLED`: none).
    pub(crate) fn give(&mut self, i: u32) {
        if i != NO_POOLED {
            self.lists[i as usize].clear();
            self.free.push(i);
        }
    }

    /// List `i` (handed out).
    pub(crate) fn get(&self, i: u32) -> &[T] {
        &self.lists[i as usize]
    }

    /// List `i` (handed out), to fill.
    pub(crate) fn get_mut(&mut self, i: u32) -> &mut Vec<T> {
        &mut self.lists[i as usize]
    }

    /// Gives every list back, emptied (a large one without its room).
    pub(crate) fn clear(&mut self) {
        for list in &mut self.lists[..self.used] {
            if list.capacity() > SPARE_LIST_ROOM {
                *list = Vec::new();
            } else {
                list.clear();
            }
        }
        self.used = 0;
        self.free.clear();
    }

    /// Keeps at most `n` (empty) lists; only while none is handed out.
    pub(crate) fn keep_at_most(&mut self, n: usize) {
        debug_assert_eq!(self.used, 0, "lists handed out");
        self.lists.truncate(n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_freed_block_is_handed_out_again_for_its_length_only() {
        let mut pool = WordPool::default();
        let block: Box<[u32]> = vec![1, 2, 3].into();
        let at = block.as_ptr();
        pool.give(block);
        // Another length: a new allocation.
        assert_eq!(&*pool.copy_of(&[7, 8]), &[7, 8]);
        // The same length: the freed block, with the new words.
        let again = pool.copy_of(&[4, 5, 6]);
        assert_eq!((&*again, again.as_ptr()), (&[4, 5, 6][..], at));
        // Handed out once.
        pool.give(again);
        let words = pool.vec_for(3);
        assert_eq!((words.len(), words.capacity()), (0, 3));
        assert!(pool.take(3).is_none());
        pool.give(vec![0; 3].into());
        pool.clear();
        assert!(pool.take(3).is_none());
    }

    #[test]
    fn a_given_back_list_is_handed_out_again_empty_and_clear_frees_big_ones() {
        let mut pool = ListPool::<u32>::default();
        let (a, b) = (pool.take(), pool.take());
        assert_ne!(a, b);
        pool.get_mut(a).extend([1, 2]);
        pool.get_mut(b).push(3);
        assert_eq!((pool.get(a), pool.get(b)), (&[1, 2][..], &[3][..]));
        pool.give(a);
        pool.give(NO_POOLED); // ignored
        let again = pool.take();
        assert_eq!(again, a);
        assert!(pool.get(again).is_empty());
        pool.get_mut(b).extend(0..SPARE_LIST_ROOM as u32 + 1);
        pool.clear();
        // After a clear the lists are handed out from the first again, a
        // big one without its room.
        let (first, second) = (pool.take(), pool.take());
        assert_eq!((first, second), (0, 1));
        assert_eq!(pool.get_mut(b).capacity(), 0);
        assert!(pool.get(first).is_empty());
        pool.clear();
        pool.keep_at_most(1);
        assert_eq!(pool.lists.len(), 1);
    }
}

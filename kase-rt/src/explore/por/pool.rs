//! The word blocks of pruned events (their packed predecessors and their
//! frontiers), kept for the events made after the pruning: a new event
//! takes a block of the exact length it needs, if one was freed, instead
//! of asking the allocator. `perf` put a sixth of mpat(6)'s cycles in
//! `malloc` and `free`, and a new event costs two blocks.

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
}

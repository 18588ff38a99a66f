//! The tracked blocks of one execution: found by start address (a sorted
//! map) and kept in slots, so that an object's block, once found, is
//! reached again by its slot (`BlockCache`) without a search.

use std::collections::BTreeMap;

use super::Block;

/// Tracked blocks by start address, each in a slot that keeps its number
/// while the block is tracked.
#[derive(Debug, Default)]
pub(super) struct Blocks {
    by_start: BTreeMap<usize, usize>,
    /// `(start, block)`; `None` once removed (slots are not reused within
    /// an execution, so a stale slot number finds nothing or the same
    /// block, and `generation` says which).
    slots: Vec<Option<(usize, Block)>>,
    /// Moves on whenever a block is added or removed (not when one is
    /// freed: it stays, quarantined).
    generation: u64,
}

/// Which tracked block an object's address lay in (`ObjectState::block`):
/// every access of an object in a block is recorded in it, and the search
/// by address was about a tenth of an atomic access's cost where a model
/// allocates much (sharded-slab).
#[derive(Clone, Copy, Debug)]
pub(crate) struct BlockCache {
    address: usize,
    generation: u64,
    slot: Option<usize>,
}

impl Default for BlockCache {
    /// Matches no generation: looked up at the first access.
    fn default() -> Self {
        BlockCache {
            address: 0,
            generation: u64::MAX,
            slot: None,
        }
    }
}

impl Blocks {
    pub(super) fn is_empty(&self) -> bool {
        self.by_start.is_empty()
    }

    pub(super) fn contains_key(&self, start: &usize) -> bool {
        self.by_start.contains_key(start)
    }

    pub(super) fn get(&self, start: &usize) -> Option<&Block> {
        let &slot = self.by_start.get(start)?;
        self.slots[slot].as_ref().map(|(_, b)| b)
    }

    pub(super) fn get_mut(&mut self, start: &usize) -> Option<&mut Block> {
        let &slot = self.by_start.get(start)?;
        self.slots[slot].as_mut().map(|(_, b)| b)
    }

    /// The block with the greatest start below `bound`, and its start.
    pub(super) fn last_below(&self, bound: usize) -> Option<(usize, &Block)> {
        let (&start, &slot) = self.by_start.range(..bound).next_back()?;
        self.slots[slot].as_ref().map(|(_, b)| (start, b))
    }

    pub(super) fn insert(&mut self, start: usize, block: Block) {
        if let Some(old) = self.by_start.insert(start, self.slots.len()) {
            self.slots[old] = None;
        }
        self.slots.push(Some((start, block)));
        self.generation += 1;
    }

    pub(super) fn remove(&mut self, start: &usize) {
        if let Some(slot) = self.by_start.remove(start) {
            self.slots[slot] = None;
            self.generation += 1;
        }
    }

    /// The blocks in order of their start.
    pub(super) fn iter(&self) -> impl Iterator<Item = (usize, &Block)> {
        self.by_start
            .values()
            .filter_map(|&slot| self.slots[slot].as_ref().map(|(start, b)| (*start, b)))
    }

    /// The block containing `address`, if any, found through `cache` when
    /// no block was added or removed since it was filled.
    pub(super) fn containing(
        &mut self,
        address: usize,
        cache: &mut BlockCache,
    ) -> Option<&mut Block> {
        if cache.generation != self.generation || cache.address != address {
            let slot = address
                .checked_add(1)
                .and_then(|bound| self.by_start.range(..bound).next_back())
                .map(|(_, &slot)| slot)
                .filter(|&slot| {
                    self.slots[slot]
                        .as_ref()
                        .is_some_and(|(start, b)| address < b.end(*start))
                });
            *cache = BlockCache {
                address,
                generation: self.generation,
                slot,
            };
        }
        self.slots[cache.slot?].as_mut().map(|(_, b)| b)
    }
}

//! Blocks from std's allocator (`kase::alloc::TrackingAllocator`, through
//! `mode.rs`): tracked from the model's own allocations, freed as by
//! `kase::alloc::dealloc`, and handed out again as std's allocator would
//! when nothing in them was used.

use std::alloc::Layout;
use std::sync::Arc;

use super::{Block, Heap, Release, Site, Where};
use crate::exec::execution::Execution;

/// How far back [`Heap::reuse`] looks for a block of the layout asked for.
const REUSE_WINDOW: usize = 8;

impl Heap {
    /// A kept block of exactly `layout` that was freed while no object in it
    /// had been used, newest first, taken out of the heap to be allocated
    /// again. std's allocator hands a freed block of the same size back
    /// first, and so does this, so that a loop that allocates and frees
    /// gets the addresses it would get without kase (a spinning thread's
    /// stack then repeats: `exec/spin`). An object in such a block used
    /// after its free and before it is handed out again is still reported.
    fn reuse(&mut self, layout: Layout) -> Option<*mut u8> {
        let len = self.reusable.len();
        let found = (len.saturating_sub(REUSE_WINDOW)..len).rev().find(|&i| {
            self.blocks
                .get(&self.reusable[i])
                .is_some_and(|b| b.freed.is_some() && b.layout == layout)
        })?;
        let start = self.reusable.remove(found);
        self.blocks.remove(&start);
        Some(start as *mut u8)
    }
}

/// Whether the block at `start` with `layout`, about to be freed through
/// std's allocator, looks like the allocation of a std `Arc` whose last
/// reference went: both counts, its first two words, are zero. An `Arc`
/// made outside rewritten code (`#[kase::test]`, `#[kase::instrument]`,
/// kase-loom) is not tracked, so kase does not see its counts'
/// synchronisation: std's drop releases with every decrement and acquires
/// them all before the value goes, so every other owner's accesses
/// happen-before this free and it races with none of them. (The call stack
/// cannot tell: release builds inline `Arc`'s drop into its caller.) A `Box`
/// whose first two words are zero when it is freed is taken for one too,
/// and its free checked only for uses after it.
pub(super) fn looks_like_arc(start: usize, layout: Layout) -> bool {
    const COUNTS: usize = 2 * std::mem::size_of::<usize>();
    if layout.size() < COUNTS || layout.align() < std::mem::align_of::<usize>() {
        return false;
    }
    let counts = start as *const usize;
    // SAFETY: the block is still allocated (this runs before it is freed),
    // at least two words long and aligned for them; plain reads of memory
    // the freeing thread owns now.
    unsafe { counts.read() == 0 && counts.add(1).read() == 0 }
}

impl Execution {
    /// Where the current thread is, for std's allocator, which sees no
    /// caller.
    fn std_site(&self, frames: bool) -> Site {
        let thread = self.current;
        let after = self.threads[thread.index()].as_ref().and_then(|t| t.latest);
        Site {
            thread,
            at: Where::Std {
                after,
                frames: frames.then(|| Arc::new(backtrace::Backtrace::new_unresolved())),
            },
        }
    }

    /// The current thread's own code allocated `layout` at `ptr` through
    /// std's allocator (`mode.rs`).
    pub(crate) fn std_allocated(&mut self, ptr: *mut u8, layout: Layout) {
        let allocated = self.std_site(false);
        self.heap.insert(
            ptr as usize,
            Block {
                layout,
                std: true,
                allocated,
                freed: None,
                accesses: Vec::new(),
            },
        );
    }

    /// The current thread's own code frees `ptr` through std's allocator,
    /// as by `dealloc`: the block is kept until the execution ends (an
    /// object in it may be used later by a thread that has not touched it
    /// yet), or handed out again ([`Heap::reuse`]) if none was used.
    pub(crate) fn std_freed(&mut self, ptr: *mut u8) -> Release {
        let Some(block) = self.heap.blocks.get(&(ptr as usize)) else {
            return Release::Now;
        };
        let used = !block.accesses.is_empty();
        let first = block.freed.is_none();
        // Unwinding the stack costs microseconds: the frames are taken here
        // only if the user asked for backtraces, and otherwise only when
        // the free races (`free`, still inside it).
        let here = self.std_site(used && self.backtraces);
        let release = self.free(ptr, here);
        if !used && first && !self.teardown {
            self.heap.reusable.push(ptr as usize);
        }
        release
    }

    /// A block of `layout` for the current thread's own code, if a kept one
    /// can be handed out again ([`Heap::reuse`]); it is tracked as a new one.
    pub(crate) fn std_reuse(&mut self, layout: Layout) -> Option<*mut u8> {
        if self.teardown {
            return None;
        }
        let ptr = self.heap.reuse(layout)?;
        self.std_allocated(ptr, layout);
        Some(ptr)
    }

    /// The block at `arc`, being freed, is an untracked `Arc`'s allocation
    /// ([`looks_like_arc`]): the blocks its value owned, freed by its last
    /// strong drop, race with nothing either (std's drop acquires every
    /// other owner's release before it drops the value). They are found by
    /// their addresses in the `Arc`'s memory (a `Vec`'s buffer, a `Box`),
    /// then in theirs, among the blocks freed since the first pending race.
    pub(super) fn acquitted_by_arc(&mut self, arc: usize) {
        if self.heap.pending.is_empty() {
            return;
        }
        let mut freed: std::collections::HashSet<usize> =
            self.heap.std_frees.iter().copied().collect();
        let mut owned = Vec::new();
        let mut scan = vec![arc];
        while let Some(block) = scan.pop() {
            let Some(size) = self.heap.blocks.get(&block).map(|b| b.layout.size()) else {
                continue;
            };
            for word in 0..size / std::mem::size_of::<usize>() {
                // SAFETY: the block is allocated (`arc`, being freed now) or
                // freed and kept until the execution ends (`std_frees`),
                // at least `size` bytes long; an unaligned read of bytes.
                let value = unsafe { (block as *const usize).add(word).read_unaligned() };
                if freed.remove(&value) {
                    owned.push(value);
                    scan.push(value);
                }
            }
        }
        self.heap.pending.retain(|p| !owned.contains(&p.start));
        if self.heap.pending.is_empty() {
            self.heap.std_frees.clear();
        }
    }

    /// Reports the races of frees no `Arc` acquitted (the execution ends).
    pub(super) fn report_pending_frees(&mut self) {
        self.heap.std_frees.clear();
        for race in std::mem::take(&mut self.heap.pending) {
            let key = race.key;
            self.race(race.fault, || key);
        }
    }
}

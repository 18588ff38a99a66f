//! Tracked allocations (`shim/alloc.rs`): a free is a write to every object
//! in the freed block, an access after it is a use after free, and a block
//! still allocated when every thread has finished is a leak.
//!
//! Objects are found by address: each shim object records where its handle
//! was at its latest use (`Execution::object`), and every access to an object
//! inside a tracked block is remembered per thread. Like a tracked cell's
//! accesses, a free is not a scheduling point: an access that happens-before
//! does not order with the free is a data race whichever order the run put
//! them in (the free checks the accesses before it, the access checks the
//! frees before it), so the explored interleavings need not contain the
//! order "free, then access" for it to be found.
//!
//! Freed blocks are kept (quarantined) until the execution ends, so no other
//! allocation, tracked or not, can take their addresses: an access to an
//! address in a freed block is always to the freed object.

use std::alloc::Layout;
use std::collections::BTreeMap;
use std::panic::Location;

use super::action::{ObjectIdx, ThreadIdx};
use super::error::OrInternal;
use super::execution::Execution;
use super::hb::CellAccess;
use super::scheduler::Fault;

/// Who did something to a tracked block, and where.
#[derive(Clone, Copy, Debug)]
pub struct Site {
    /// The thread.
    pub thread: ThreadIdx,
    /// Where in the user's code.
    pub location: &'static Location<'static>,
}

/// One tracked block.
#[derive(Debug)]
struct Block {
    layout: Layout,
    allocated: Site,
    freed: Option<Site>,
    /// The latest access of each thread to an object in the block (one per
    /// thread: a free ordered after it is ordered after the earlier ones).
    accesses: Vec<CellAccess>,
}

impl Block {
    fn end(&self, start: usize) -> usize {
        start + self.layout.size().max(1)
    }
}

/// The tracked blocks of one execution, by start address.
#[derive(Debug, Default)]
pub(crate) struct Heap {
    blocks: BTreeMap<usize, Block>,
}

impl Heap {
    /// The block containing `address`, if any.
    fn block_at(&mut self, address: usize) -> Option<&mut Block> {
        let (&start, block) = self.blocks.range_mut(..=address).next_back()?;
        (address < block.end(start)).then_some(block)
    }
}

impl Drop for Heap {
    /// Releases the freed blocks kept until the end of the execution. Blocks
    /// still allocated are the program's (a leak, or memory a `static` still
    /// points to) and stay allocated.
    fn drop(&mut self) {
        for (&start, block) in &self.blocks {
            if block.freed.is_some() {
                // SAFETY: the block came from `std::alloc::alloc` with this
                // layout (`Execution::allocated`) and the program freed it,
                // so nothing may use it any more; it is released only here.
                unsafe { std::alloc::dealloc(start as *mut u8, block.layout) };
            }
        }
    }
}

/// What a free should do with the memory.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Release {
    /// A tracked block: kept until the execution ends.
    Keep,
    /// Not allocated by this execution's tracked `alloc`: free it now.
    Now,
}

impl Execution {
    /// The current thread allocated `layout` at `ptr` (`location`).
    pub(crate) fn allocated(
        &mut self,
        ptr: *mut u8,
        layout: Layout,
        location: &'static Location<'static>,
    ) {
        let allocated = Site {
            thread: self.current,
            location,
        };
        self.heap.blocks.insert(
            ptr as usize,
            Block {
                layout,
                allocated,
                freed: None,
                accesses: Vec::new(),
            },
        );
    }

    /// The current thread frees the block at `ptr`: a write to every object
    /// in it. An earlier access to one that happens-before does not order
    /// with the free is a data race, a second free a use after free.
    pub(crate) fn freed(&mut self, ptr: *mut u8, location: &'static Location<'static>) -> Release {
        let here = Site {
            thread: self.current,
            location,
        };
        let Some(block) = self.heap.blocks.get_mut(&(ptr as usize)) else {
            return Release::Now;
        };
        if self.teardown {
            block.freed.get_or_insert(here);
            return Release::Keep;
        }
        match block.freed {
            Some(first) => {
                let twice = Fault::UseAfterFree {
                    allocated: block.allocated,
                    freed: first,
                    access: here,
                    again: true,
                };
                self.fault.get_or_insert(twice);
            }
            None => {
                block.freed = Some(here);
                let clock = &self.threads[here.thread.index()]
                    .as_ref()
                    .or_internal("unknown thread")
                    .hb
                    .clock;
                let racing = block
                    .accesses
                    .iter()
                    .find(|a| a.thread != here.thread && clock.get(a.thread) < a.epoch)
                    .copied();
                if let Some(access) = racing {
                    let allocated = block.allocated;
                    self.race(
                        Fault::FreeRace {
                            allocated,
                            access,
                            free: here,
                        },
                        || {
                            format!(
                                "{} at {} and the free by {} at {}",
                                access.thread, access.location, here.thread, here.location
                            )
                        },
                    );
                }
            }
        }
        self.note_unseen_write();
        Release::Keep
    }

    /// An access by the current thread to `object` (a write if `write`) at
    /// `location`. If the object lies in a tracked block, the access is
    /// remembered for a later free; if the block was freed, the execution
    /// fails with a use after free and this returns true (the caller must
    /// not make the access).
    pub(crate) fn heap_access(
        &mut self,
        object: ObjectIdx,
        write: bool,
        location: &'static Location<'static>,
    ) -> bool {
        if self.heap.blocks.is_empty() || self.teardown {
            return false;
        }
        let address = self.objects[object.0 as usize].address;
        let t = self.current;
        let epoch = self.threads[t.index()]
            .as_ref()
            .or_internal("unknown thread")
            .hb
            .clock
            .get(t);
        let Some(block) = self.heap.block_at(address) else {
            return false;
        };
        let mut access = CellAccess::new(t, write, location);
        access.epoch = epoch;
        if let Some(freed) = block.freed {
            let fault = Fault::UseAfterFree {
                allocated: block.allocated,
                freed,
                access: Site {
                    thread: t,
                    location,
                },
                again: false,
            };
            self.fault.get_or_insert(fault);
            return true;
        }
        block.accesses.retain(|a| a.thread != t);
        block.accesses.push(access);
        false
    }

    /// At the normal end of an execution (every thread finished): tracked
    /// blocks never freed are leaked.
    pub(super) fn check_allocations(&mut self) {
        let leaked: Vec<Site> = self
            .heap
            .blocks
            .values()
            .filter(|b| b.freed.is_none())
            .map(|b| b.allocated)
            .collect();
        if !leaked.is_empty() && self.fault.is_none() {
            self.fault = Some(Fault::LeakedAllocations { blocks: leaked });
        }
    }
}

//! Tracked allocations (`shim/alloc.rs`, and std's allocator when the test
//! binary installs `kase::alloc::TrackingAllocator`, `mode.rs`): a free is a
//! write to every object in the freed block, an access after it is a use
//! after free, and a block still allocated when every thread has finished
//! is a leak (from std's allocator: one holding an object the model used).
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

mod blocks;
pub(crate) mod mode;
pub(crate) mod slow_blocks;
mod std_alloc;

pub(crate) use blocks::BlockCache;

use std::alloc::Layout;
use std::panic::Location;
use std::sync::Arc;

use super::action::{ObjectIdx, ThreadIdx};
use super::error::OrInternal;
use super::execution::Execution;
use super::hb::CellAccess;
use super::scheduler::Fault;

/// Who did something to a tracked block, and where.
#[derive(Clone, Debug)]
pub struct Site {
    /// The thread.
    pub thread: ThreadIdx,
    /// Where in the user's code.
    pub at: Where,
}

/// Where a tracked block was allocated, freed or used.
#[derive(Clone, Debug)]
pub enum Where {
    /// At a call of `kase::alloc`'s functions, or a shim's operation.
    Call(&'static Location<'static>),
    /// In std's allocator (a `Box`, `Vec`, `Arc`, … made or dropped), which
    /// sees no caller: after the thread's latest step (`None`: before its
    /// first), and for a free the call stack, resolved only for a report.
    Std {
        /// The thread's latest step before it.
        after: Option<&'static Location<'static>>,
        /// The call stack of a free.
        frames: Option<Arc<backtrace::Backtrace>>,
    },
}

impl std::fmt::Display for Where {
    /// `file:line:col`, or "(std) after file:line:col".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Where::Call(location) => write!(f, "{location}"),
            Where::Std { after: Some(l), .. } => write!(f, "(std) after {l}"),
            Where::Std { after: None, .. } => write!(f, "(std) at start"),
        }
    }
}

/// One tracked block.
#[derive(Debug)]
struct Block {
    layout: Layout,
    /// It came from std's allocator (`mode.rs`), not `kase::alloc`.
    std: bool,
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
    blocks: blocks::Blocks,
    /// Blocks from std's allocator freed while no object in them had been
    /// used, newest last: handed out again first (`reuse`).
    reusable: Vec<usize>,
    /// Races of frees through std's allocator, reported when the execution
    /// ends unless an `Arc`'s free acquits them first (`std_alloc.rs`).
    pending: Vec<PendingRace>,
    /// The blocks from std's allocator freed since the first pending race
    /// (all kept, so still readable). Earlier ones cannot have owned a
    /// racing block: Rust drops what a block owns before freeing it.
    std_frees: Vec<usize>,
}

/// A free through std's allocator that races with an access.
#[derive(Debug)]
struct PendingRace {
    start: usize,
    fault: Fault,
    key: String,
}

impl Heap {
    /// Tracks a block just allocated at `start`. Records overlapping it are
    /// stale (an allocator hands out only free memory): their block was
    /// freed where kase does not look (by kase itself, or on another OS
    /// thread), so they go.
    fn insert(&mut self, start: usize, block: Block) {
        let end = block.end(start);
        while let Some((s, b)) = self.blocks.last_below(end) {
            if b.end(s) <= start {
                break;
            }
            self.blocks.remove(&s);
        }
        self.blocks.insert(start, block);
    }
}

impl Drop for Heap {
    /// Releases the freed blocks kept until the end of the execution. Blocks
    /// still allocated are the program's (a leak, or memory a `static` still
    /// points to) and stay allocated.
    fn drop(&mut self) {
        for (start, block) in self.blocks.iter() {
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
            at: Where::Call(location),
        };
        self.heap.insert(
            ptr as usize,
            Block {
                layout,
                std: false,
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
            at: Where::Call(location),
        };
        self.free(ptr, here)
    }

    /// `here` frees the block at `ptr`, as [`freed`](Self::freed) says.
    fn free(&mut self, ptr: *mut u8, here: Site) -> Release {
        if !self.heap.blocks.contains_key(&(ptr as usize)) {
            return Release::Now;
        }
        if !self.teardown && !self.live_arcs.is_empty() {
            // A free is no scheduling point: the `Arc` drops before it (the
            // last of which may be what frees) give their happens-before
            // first, as at a cell access.
            self.arc_drops();
        }
        let Some(block) = self.heap.blocks.get_mut(&(ptr as usize)) else {
            return Release::Now;
        };
        if self.teardown {
            block.freed.get_or_insert(here);
            return Release::Keep;
        }
        // A free of a block whose objects no thread used changes nothing a
        // thread could have read: it ends no spin (a loop that allocates
        // and frees a buffer still repeats).
        let std_block = block.std;
        let seen = !std_block || !block.accesses.is_empty();
        match &block.freed {
            Some(first) => {
                let twice = Fault::UseAfterFree {
                    allocated: block.allocated.clone(),
                    freed: first.clone(),
                    access: here,
                    again: true,
                };
                self.fault.get_or_insert(twice);
            }
            None => {
                block.freed = Some(here.clone());
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
                let arc_like = std_block && std_alloc::looks_like_arc(ptr as usize, block.layout);
                let racing = racing.filter(|_| !arc_like);
                let allocated = block.allocated.clone();
                if arc_like {
                    // The value an untracked `Arc` dropped just before: its
                    // blocks' frees race with nothing either.
                    self.acquitted_by_arc(ptr as usize);
                }
                if let Some(access) = racing {
                    let mut here = here;
                    if let Where::Std {
                        frames: frames @ None,
                        ..
                    } = &mut here.at
                    {
                        *frames = Some(Arc::new(backtrace::Backtrace::new_unresolved()));
                    }
                    let key = format!(
                        "{} at {} and a free by {}",
                        access.thread, access.location, here.thread
                    );
                    let fault = Fault::FreeRace {
                        allocated,
                        access,
                        free: here,
                    };
                    if std_block {
                        // Reported when the execution ends, unless an
                        // untracked `Arc`'s allocation turns out to have
                        // owned it.
                        self.heap.pending.push(PendingRace {
                            start: ptr as usize,
                            fault,
                            key,
                        });
                    } else {
                        self.race(fault, || key);
                    }
                }
            }
        }
        if std_block && !self.heap.pending.is_empty() {
            self.heap.std_frees.push(ptr as usize);
        }
        if seen {
            self.note_unseen_write();
        }
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
        let cache = &mut self.objects[object.0 as usize].block;
        let Some(block) = self.heap.blocks.containing(address, cache) else {
            return false;
        };
        let mut access = CellAccess::new(t, write, location);
        access.epoch = epoch;
        if let Some(freed) = &block.freed {
            let fault = Fault::UseAfterFree {
                allocated: block.allocated.clone(),
                freed: freed.clone(),
                access: Site {
                    thread: t,
                    at: Where::Call(location),
                },
                again: false,
            };
            self.fault.get_or_insert(fault);
            return true;
        }
        match block.accesses.last_mut() {
            // The same thread again (the usual case): its entry stays last.
            Some(last) if last.thread == t => *last = access,
            _ => {
                block.accesses.retain(|a| a.thread != t);
                block.accesses.push(access);
            }
        }
        false
    }

    /// At the normal end of an execution (every thread finished): tracked
    /// blocks never freed are leaked. From std's allocator, only blocks
    /// holding an atomic, cell or lock the model used count (a `String` a
    /// test keeps is none of kase's business), and not the allocations of
    /// the `Arc`s kase tracks, which its probes keep until the execution
    /// ends (one still owned is reported as a leaked `Arc` first).
    pub(super) fn check_allocations(&mut self) {
        self.report_pending_frees();
        let probed: Vec<usize> = self.tracked_arc_values().collect();
        let leaked: Vec<Site> = self
            .heap
            .blocks
            .iter()
            .filter(|&(start, b)| {
                b.freed.is_none()
                    && (!b.std
                        || (!b.accesses.is_empty()
                            && !probed.iter().any(|&v| start <= v && v < b.end(start))))
            })
            .map(|(_, b)| b.allocated.clone())
            .collect();
        if !leaked.is_empty() && self.fault.is_none() {
            self.fault = Some(Fault::LeakedAllocations { blocks: leaked });
        }
    }
}

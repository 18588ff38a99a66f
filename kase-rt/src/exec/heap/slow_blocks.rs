//! Blocks of layouts std's allocator is slow to serve, kept on the
//! exploring OS thread while an exploration runs (`kase::alloc::
//! TrackingAllocator`): every execution of a model allocates the same
//! blocks again, and glibc serves an over-aligned or large one through its
//! slow path, merging its free lists first. concurrent-queue's queue
//! (896 bytes aligned to 128) cost thousands of instructions per execution
//! that way. A block freed while the exploration runs goes here instead of
//! back to std's allocator (up to [`SLOTS`] of them), and an allocation of
//! exactly its layout takes it; the rest go back when the exploration ends
//! ([`enable`]'s guard).
//!
//! Only blocks std's allocator would have had back are kept: a block the
//! model frees is quarantined by the execution first (`exec/heap`) and
//! arrives here when the execution releases it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::{Cell, RefCell};

/// How many blocks are kept at most.
const SLOTS: usize = 16;

/// The largest block kept.
const MAX_SIZE: usize = 1 << 20;

/// A kept block; `start == 0` is an empty slot.
#[derive(Clone, Copy)]
struct Slot {
    start: usize,
    size: usize,
    align: usize,
}

impl Slot {
    const EMPTY: Slot = Slot {
        start: 0,
        size: 0,
        align: 0,
    };
}

/// The kept blocks, and the slot evicted next when all are taken.
struct Kept {
    slots: [Slot; SLOTS],
    oldest: usize,
}

thread_local! {
    // Constant initialisers and no destructors: the allocator may read
    // them at any time, also while the thread's locals are torn down.
    static ON: Cell<bool> = const { Cell::new(false) };
    static KEPT: RefCell<Kept> = const {
        RefCell::new(Kept {
            slots: [Slot::EMPTY; SLOTS],
            oldest: 0,
        })
    };
}

/// Whether std's allocator is slow to serve `layout` (glibc: an alignment
/// above 16 bytes, or a size its small-block lists do not hold), and a
/// block of it small enough to keep.
fn slow(layout: Layout) -> bool {
    (layout.align() > 16 || layout.size() >= 1024) && layout.size() <= MAX_SIZE
}

/// A kept block of exactly `layout`, taken out, if an exploration runs on
/// this thread and there is one.
pub(crate) fn take(layout: Layout) -> Option<*mut u8> {
    if !slow(layout) || !ON.with(Cell::get) {
        return None;
    }
    KEPT.with(|kept| {
        let mut kept = kept.try_borrow_mut().ok()?;
        let slot = kept
            .slots
            .iter_mut()
            .find(|s| s.start != 0 && s.size == layout.size() && s.align == layout.align())?;
        let start = slot.start;
        *slot = Slot::EMPTY;
        Some(start as *mut u8)
    })
}

/// Keeps the block at `ptr` of `layout`, being freed, if an exploration
/// runs on this thread and the layout is slow to serve; with every slot
/// taken, the block kept longest goes back to std's allocator (a block of
/// a layout no longer asked for must not hold its slot for good). The block
/// must come from [`System`] with `layout`.
pub(crate) fn keep(ptr: *mut u8, layout: Layout) -> bool {
    if ptr.is_null() || !slow(layout) || !ON.with(Cell::get) {
        return false;
    }
    KEPT.with(|kept| {
        let Ok(mut kept) = kept.try_borrow_mut() else {
            return false;
        };
        let Kept { slots, oldest } = &mut *kept;
        let at = match slots.iter().position(|s| s.start == 0) {
            Some(free) => free,
            None => {
                let at = *oldest;
                *oldest = (at + 1) % SLOTS;
                release(slots[at]);
                at
            }
        };
        slots[at] = Slot {
            start: ptr as usize,
            size: layout.size(),
            align: layout.align(),
        };
        true
    })
}

/// Gives a kept block back to std's allocator.
fn release(slot: Slot) {
    // SAFETY: `keep` took the block from a free of a `System` block with
    // this layout (valid: it came from a `Layout`), and only its slot held
    // it since.
    unsafe {
        let layout = Layout::from_size_align_unchecked(slot.size, slot.align);
        System.dealloc(slot.start as *mut u8, layout);
    }
}

/// Keeps blocks on this thread until the returned guard drops (the outermost
/// one releases them).
pub(crate) fn enable() -> Enabled {
    Enabled(ON.with(|on| on.replace(true)))
}

/// Releases the kept blocks when dropped, unless an enclosing guard still
/// keeps them.
#[must_use]
pub(crate) struct Enabled(bool);

impl Drop for Enabled {
    fn drop(&mut self) {
        if self.0 {
            return;
        }
        ON.with(|on| on.set(false));
        let slots =
            KEPT.with(|kept| std::mem::replace(&mut kept.borrow_mut().slots, [Slot::EMPTY; SLOTS]));
        for &slot in slots.iter().filter(|s| s.start != 0) {
            release(slot);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slow_block_is_kept_for_its_layout_only_while_enabled() {
        let layout = Layout::from_size_align(896, 128).unwrap();
        let other = Layout::from_size_align(896, 64).unwrap();
        // SAFETY: a layout of non-zero size.
        let block = unsafe { System.alloc(layout) };
        assert!(!keep(block, layout), "not kept outside an exploration");
        let guard = enable();
        assert!(keep(block, layout));
        assert_eq!(take(other), None, "another alignment");
        assert_eq!(take(layout), Some(block));
        assert_eq!(take(layout), None, "taken once");
        assert!(keep(block, layout));
        drop(guard); // released here
        assert_eq!(take(layout), None);
        // With every slot taken, the block kept longest makes room.
        let guard = enable();
        let big = Layout::from_size_align(2048, 8).unwrap();
        for _ in 0..SLOTS {
            // SAFETY: a layout of non-zero size.
            assert!(keep(unsafe { System.alloc(big) }, big));
        }
        // SAFETY: as above.
        let newest = unsafe { System.alloc(layout) };
        assert!(keep(newest, layout));
        assert_eq!(take(layout), Some(newest));
        drop(guard);
        let small = Layout::from_size_align(64, 8).unwrap();
        let _guard = enable();
        // SAFETY: as above.
        let block = unsafe { System.alloc(small) };
        assert!(!keep(block, small), "std's allocator serves it fast");
        // SAFETY: allocated above with `small`, not kept.
        unsafe { System.dealloc(block, small) };
    }
}

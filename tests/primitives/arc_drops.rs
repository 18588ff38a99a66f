//! The happens-before of `Arc`'s reference count: std's drop decrements it
//! with `Release`, and the last drop acquires before it drops the value, so
//! a value's `Drop` sees everything done by the threads that dropped their
//! references before. kase sees the counts of the `Arc`s made in rewritten
//! code (`exec/arcs.rs`) and gives the last dropper that happens-before; a
//! `Drop` that reads what another thread wrote before its own drop is no
//! data race, while what a thread does after its drop is not covered.

use kase::{Builder, FailureKind, MemoryModel};

/// Per execution, who dropped the slot last (10: the writer, 0: main) plus
/// the value its `Drop` read. std's `Mutex`, outside the rewritten module
/// (a `static` kase `Mutex` would restart every execution).
static LAST: std::sync::Mutex<Vec<usize>> = std::sync::Mutex::new(Vec::new());

#[kase::instrument]
mod model {
    use kase::cell::UnsafeCell;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::thread;

    struct Slot {
        value: UnsafeCell<u32>,
    }

    // SAFETY: the cell is written by one thread before it drops its
    // reference and read only in `Drop`, after every other reference is
    // gone (the model checks exactly that).
    unsafe impl Sync for Slot {}

    impl Drop for Slot {
        fn drop(&mut self) {
            // SAFETY: every other reference is gone (what kase checks).
            let seen = self.value.with(|p| unsafe { *p });
            let who = if thread::current().name() == Some("writer") {
                1
            } else {
                0
            };
            super::LAST.lock().unwrap().push(who * 10 + seen as usize);
        }
    }

    /// A thread writes the slot and drops its reference; main drops its
    /// own. Both store to one flag first, so either may drop last.
    pub fn last_drop_reads_the_slot() {
        let slot = Arc::new(Slot {
            value: UnsafeCell::new(0),
        });
        let flag = Arc::new(AtomicBool::new(false));
        let (theirs, flag2) = (slot.clone(), flag.clone());
        let writer = thread::Builder::new()
            .name("writer".into())
            .spawn(move || {
                // SAFETY: the only access before the value's `Drop`.
                theirs.value.with_mut(|p| unsafe { *p = 1 });
                flag2.store(true, Ordering::Relaxed);
                drop(theirs);
            })
            .unwrap();
        flag.store(true, Ordering::Relaxed);
        drop(slot);
        writer.join().unwrap();
    }

    /// A cell to share, with no `Drop` of its own.
    struct Plain(UnsafeCell<u32>);

    // SAFETY: the model checks the accesses for data races.
    unsafe impl Sync for Plain {}

    /// As above, but the writer writes a second cell *after* its drop, and
    /// main reads it after dropping the slot last: not ordered.
    pub fn write_after_the_drop_still_races() {
        let slot = Arc::new(Plain(UnsafeCell::new(1)));
        let other = Arc::new(Plain(UnsafeCell::new(0)));
        let (theirs, other2) = (slot.clone(), other.clone());
        let writer = thread::Builder::new()
            .name("writer".into())
            .spawn(move || {
                drop(theirs);
                // SAFETY: none: it races with main's read, as kase reports.
                other2.0.with_mut(|p| unsafe { *p = 1 });
            })
            .unwrap();
        let step = AtomicBool::new(false);
        step.store(true, Ordering::Relaxed);
        drop(slot);
        // SAFETY: none, see the writer's access.
        let _ = other.0.with(|p| unsafe { *p });
        writer.join().unwrap();
    }
}

fn memory_models() -> [MemoryModel; 2] {
    [MemoryModel::SequentiallyConsistent, MemoryModel::Rc11]
}

#[test]
fn the_last_drop_sees_what_the_other_owners_did_before_theirs() {
    for memory in memory_models() {
        LAST.lock().unwrap().clear();
        let report = Builder::new()
            .memory_model(memory)
            .explore(model::last_drop_reads_the_slot);
        assert!(report.failure().is_none(), "{memory:?}: {report}");
        assert!(report.complete(), "{memory:?}: {report}");
        let mut last = LAST.lock().unwrap().clone();
        last.sort_unstable();
        last.dedup();
        // Main drops last and sees the write (1), or the writer does (11).
        assert_eq!(last, [1, 11], "{memory:?}: {report}");
    }
}

#[test]
fn what_a_thread_does_after_its_drop_is_not_ordered_before_the_last() {
    for memory in memory_models() {
        let report = Builder::new()
            .memory_model(memory)
            .explore(model::write_after_the_drop_still_races);
        let failure = report
            .failure()
            .unwrap_or_else(|| panic!("{memory:?}: {report}"));
        assert_eq!(
            failure.kind(),
            FailureKind::DataRace,
            "{memory:?}: {failure}"
        );
    }
}

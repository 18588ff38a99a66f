//! Tracked allocations (`kase::alloc`): a free is a write to everything in
//! the block, so an access after it is a use after free and an access that
//! happens-before does not order with it is a data race; a block never freed
//! is a leak. Each report names the access, the free and the allocation.

use std::ptr;

use kase::alloc::{alloc, dealloc, Layout};
use kase::cell::UnsafeCell;
use kase::sync::atomic::{fence, AtomicUsize, Ordering};
use kase::sync::Mutex;
use kase::{thread, Builder, FailureKind, Report, Strategy};

/// A block shared by two owners; the last to give it up frees it.
struct Slot {
    owners: AtomicUsize,
    value: UnsafeCell<u32>,
    lock: Mutex<u32>,
}

/// A pointer to a tracked `Slot`, sendable to the other owner.
#[derive(Clone, Copy)]
struct Shared(*mut Slot);

// SAFETY: the tests hand the pointer between threads on purpose: kase is
// what checks that its uses are ordered.
unsafe impl Send for Shared {}

const LAYOUT: Layout = Layout::new::<Slot>();

/// Asserts that the report `text` names `what` (`"frees it"`, ...) at a
/// line of this file.
fn assert_names(text: &str, what: &str) {
    assert!(
        text.contains(&format!("{what} at tests/primitives/allocations.rs:")),
        "{what}: {text}"
    );
}

impl Shared {
    fn new() -> Shared {
        // SAFETY: `Slot` is not zero-sized; the block is initialised here.
        unsafe {
            let p = alloc(LAYOUT).cast::<Slot>();
            p.write(Slot {
                owners: AtomicUsize::new(2),
                value: UnsafeCell::new(0),
                lock: Mutex::new(0),
            });
            Shared(p)
        }
    }

    fn slot(&self) -> &Slot {
        // SAFETY: not for kase: a use after the free is what it reports,
        // and the memory stays valid until the execution ends.
        unsafe { &*self.0 }
    }

    fn free(self) {
        // SAFETY: allocated in `new` with `LAYOUT`.
        unsafe {
            ptr::drop_in_place(self.0);
            dealloc(self.0.cast(), LAYOUT);
        }
    }

    /// Gives up one ownership with `order`; the last owner frees (after an
    /// Acquire fence if `order` is only Release, as `Arc` does).
    fn release(self, order: Ordering) {
        if self.slot().owners.fetch_sub(1, order) == 1 {
            if order == Ordering::Release {
                fence(Ordering::Acquire);
            }
            self.free();
        }
    }
}

/// The other owner writes the value, then gives the slot up with `order`
/// (and reads the value again if `touch_after`); main gives it up too.
fn hand_off(strategy: Strategy, order: Ordering, touch_after: bool) -> Report {
    Builder::new().strategy(strategy).explore(move || {
        let main = Shared::new();
        let other = main;
        let t = thread::spawn(move || {
            // SAFETY: kase checks this access against the free.
            other.slot().value.with_mut(|v| unsafe { *v = 1 });
            other.release(order);
            if touch_after {
                // SAFETY: not for kase: the read after release is the bug.
                other.slot().value.with(|v| unsafe { *v });
            }
        });
        main.release(order);
        t.join().unwrap();
    })
}

#[test]
fn an_ordered_hand_off_of_ownership_passes() {
    for strategy in [Strategy::Exhaustive, Strategy::Por] {
        for order in [Ordering::AcqRel, Ordering::Release] {
            let report = hand_off(strategy, order, false);
            assert!(
                report.failure().is_none(),
                "{strategy:?} {order:?}: {report}"
            );
            assert!(report.complete());
        }
    }
}

#[test]
fn a_free_not_ordered_after_the_other_owners_write_is_a_data_race() {
    for strategy in [Strategy::Exhaustive, Strategy::Por] {
        let report = hand_off(strategy, Ordering::Relaxed, false);
        let failure = report
            .failure()
            .expect("Relaxed does not order the write before the free");
        assert_eq!(failure.kind(), FailureKind::DataRace, "{strategy:?}");
        let text = failure.to_string();
        assert!(text.contains("memory is freed while"), "{text}");
        assert_names(&text, "writes it");
        assert_names(&text, "frees it");
        assert_names(&text, "allocated it");
    }
}

#[test]
fn touching_the_block_after_giving_it_up_is_found_by_every_explorer() {
    for strategy in [Strategy::Exhaustive, Strategy::Por] {
        let report = hand_off(strategy, Ordering::AcqRel, true);
        let failure = report
            .failure()
            .expect("the read after release may follow the free");
        // Which is found first depends on the order: the read after the
        // free (a use after free) or before it, unordered (a data race).
        assert!(
            matches!(
                failure.kind(),
                FailureKind::UseAfterFree | FailureKind::DataRace
            ),
            "{strategy:?}: {failure}"
        );
    }
}

#[test]
fn an_access_after_the_free_is_a_use_after_free_naming_both() {
    let report = Builder::new().explore(|| {
        let shared = Shared::new();
        shared.slot().owners.store(1, Ordering::SeqCst);
        shared.free();
        thread::spawn(move || shared.slot().owners.load(Ordering::SeqCst))
            .join()
            .unwrap();
    });
    let failure = report.failure().expect("the load follows the free");
    assert_eq!(failure.kind(), FailureKind::UseAfterFree);
    let text = failure.to_string();
    assert!(text.contains("use after free"), "{text}");
    assert_names(&text, "accesses it");
    assert_names(&text, "freed it");
}

#[test]
fn a_lock_or_cell_in_freed_memory_is_a_use_after_free_too() {
    let locked = Builder::new().explore(|| {
        let shared = Shared::new();
        shared.free();
        drop(shared.slot().lock.lock());
    });
    assert_eq!(
        locked.failure().map(|f| f.kind()),
        Some(FailureKind::UseAfterFree)
    );

    let cell = Builder::new().explore(|| {
        let shared = Shared::new();
        shared.free();
        // SAFETY: not for kase: it reports the read after the free.
        shared.slot().value.with(|v| unsafe { *v });
    });
    assert_eq!(
        cell.failure().map(|f| f.kind()),
        Some(FailureKind::UseAfterFree)
    );
}

#[test]
fn a_second_free_is_a_use_after_free() {
    let report = Builder::new().explore(|| {
        let shared = Shared::new();
        shared.free();
        // SAFETY: not for kase: it reports the second free.
        unsafe { dealloc(shared.0.cast(), LAYOUT) };
    });
    let failure = report.failure().expect("freed twice");
    assert_eq!(failure.kind(), FailureKind::UseAfterFree);
    assert!(failure.to_string().contains("frees it again"), "{failure}");
}

#[test]
fn a_block_never_freed_is_a_leak_naming_where_it_was_allocated() {
    let report = Builder::new().explore(|| {
        let shared = Shared::new();
        let other = shared;
        thread::spawn(move || other.slot().owners.fetch_sub(1, Ordering::AcqRel))
            .join()
            .unwrap();
        shared.slot().owners.fetch_sub(1, Ordering::AcqRel);
    });
    let failure = report.failure().expect("nobody frees the slot");
    assert_eq!(failure.kind(), FailureKind::Leak);
    let text = failure.to_string();
    assert!(
        text.contains("memory allocated in the model was never freed"),
        "{text}"
    );
    assert_names(&text, "allocated");
}

#[kase::test(expect = "use after free")]
fn the_attribute_expects_a_use_after_free() {
    let shared = Shared::new();
    shared.free();
    shared.slot().owners.load(Ordering::Relaxed);
}

#[test]
fn outside_a_model_they_are_std_allocations() {
    let shared = Shared::new();
    shared.slot().owners.fetch_sub(1, Ordering::Relaxed);
    assert_eq!(shared.slot().owners.load(Ordering::Relaxed), 1);
    shared.free();
}

//! std's allocator tracked (`kase::alloc::TrackingAllocator` installed as
//! this binary's global allocator): dropping a `Box` that holds an atomic is
//! a write to it, so an access racing with the drop is a data race and one
//! after it a use after free; such a `Box` never freed is a leak.
//! Everything else a model allocates through std (strings, vectors that
//! grow, channels, `Arc`s) changes nothing: same verdicts, same counts.

use std::sync::atomic::AtomicUsize as StdAtomicUsize;

use kase::sync::atomic::{AtomicUsize, Ordering};
use kase::sync::{mpsc, Arc, Mutex};
use kase::{thread, Builder, FailureKind, Report};

#[global_allocator]
static ALLOCATOR: kase::alloc::TrackingAllocator = kase::alloc::TrackingAllocator;

/// An address sendable to another thread (the tests share raw pointers on
/// purpose: kase is what checks their uses).
#[derive(Clone, Copy)]
struct Addr(usize);

impl Addr {
    fn of(atomic: &AtomicUsize) -> Addr {
        Addr(atomic as *const AtomicUsize as usize)
    }

    /// # Safety
    ///
    /// Not for kase: a use after the free is what it reports, and the memory
    /// stays valid until the execution ends.
    unsafe fn get(self) -> &'static AtomicUsize {
        // SAFETY: the caller's promise.
        unsafe { &*(self.0 as *const AtomicUsize) }
    }
}

fn explore(f: impl Fn() + Send + Sync + 'static) -> Report {
    Builder::new().explore(f)
}

/// Asserts that the exploration finished without a failure.
fn assert_passes(report: &Report) {
    assert!(report.failure().is_none(), "{report}");
    assert!(report.complete());
}

/// The failure of a use that a free does not wait for: a data race if the
/// run put the use first, a use after free if it put the free first.
fn free_failure<'r>(report: &'r Report, why: &str) -> &'r kase::Failure {
    let failure = report.failure().expect(why);
    assert!(
        matches!(
            failure.kind(),
            FailureKind::DataRace | FailureKind::UseAfterFree
        ),
        "{failure}"
    );
    failure
}

/// A thread reads an atomic in a `Box` that main drops without waiting for
/// it: kase reports the race with the drop, naming std's allocator and the
/// frame that dropped it.
#[test]
fn dropping_a_box_under_a_reader_is_reported() {
    let report = explore(|| {
        let boxed = Box::new(AtomicUsize::new(0));
        let addr = Addr::of(&boxed);
        // SAFETY: see `Addr::get`.
        let reader = thread::spawn(move || unsafe { addr.get() }.load(Ordering::SeqCst));
        drop(boxed);
        let _ = reader.join();
    });
    let failure = free_failure(&report, "the drop races with the read");
    let text = failure.to_string();
    assert!(text.contains("through std's allocator"), "{text}");
    assert!(text.contains("tests/std_heap.rs"), "{text}");
}

/// The same read after the drop, in one thread: a use after free.
#[test]
fn reading_a_dropped_box_is_a_use_after_free() {
    let report = explore(|| {
        let boxed = Box::new(AtomicUsize::new(7));
        let addr = Addr::of(&boxed);
        boxed.fetch_add(1, Ordering::Relaxed);
        drop(boxed);
        // SAFETY: see `Addr::get`.
        unsafe { addr.get() }.load(Ordering::Relaxed);
    });
    let failure = report.failure().expect("a use after free");
    assert_eq!(failure.kind(), FailureKind::UseAfterFree, "{failure}");
    let text = failure.to_string();
    assert!(text.contains("freed it through std's allocator"), "{text}");
    assert!(text.contains("accesses it at tests/std_heap.rs:"), "{text}");
}

/// Joining before the drop orders the read before it: no failure, and the
/// count is the program's (the spawn, the load and the join order nothing
/// else).
#[test]
fn dropping_a_box_after_a_join_is_fine() {
    let report = explore(|| {
        let boxed = Box::new(AtomicUsize::new(0));
        let addr = Addr::of(&boxed);
        // SAFETY: see `Addr::get`; the join orders the load before the drop.
        let reader = thread::spawn(move || unsafe { addr.get() }.load(Ordering::SeqCst));
        boxed.store(1, Ordering::SeqCst);
        reader.join().unwrap();
        drop(boxed);
    });
    assert_passes(&report);
    assert_eq!(report.executions(), 2);
}

/// A `Box` holding an atomic the model used, never freed, is a leak naming
/// the thread that allocated it; one holding nothing kase knows (a number,
/// a `String`) is none, and neither are the `Arc`s kase tracks itself
/// (their probes keep the allocation until the execution ends).
#[test]
fn a_forgotten_box_with_an_atomic_is_a_leak() {
    let report = explore(|| {
        let boxed = Box::new(AtomicUsize::new(0));
        boxed.store(1, Ordering::Relaxed);
        std::mem::forget(boxed);
    });
    let failure = report.failure().expect("a leak");
    assert_eq!(failure.kind(), FailureKind::Leak, "{failure}");
    let text = failure.to_string();
    assert!(
        text.contains("main allocated memory through std's allocator"),
        "{text}"
    );
    assert!(text.contains("Box::leak"), "{text}");

    let report = explore(|| {
        let used = AtomicUsize::new(0);
        used.store(1, Ordering::Relaxed);
        std::mem::forget(Box::new(5_u64));
        std::mem::forget(String::from("kept"));
    });
    assert!(report.failure().is_none(), "{report}");
}

/// Vectors of atomics that grow (a reallocation moves their objects), a
/// channel, a lock around boxes and `Arc`s: nothing is reported.
#[test]
fn ordinary_allocations_change_nothing() {
    let report = explore(|| {
        let cells: Arc<Mutex<Vec<Box<AtomicUsize>>>> = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = mpsc::channel::<String>();
        let worker = {
            let cells = Arc::clone(&cells);
            thread::spawn(move || {
                let mut grown = Vec::new();
                for i in 0..20 {
                    grown.push(AtomicUsize::new(i));
                    grown[i].fetch_add(1, Ordering::Relaxed);
                }
                cells.lock().unwrap().push(Box::new(AtomicUsize::new(1)));
                tx.send(format!("{}", grown.len())).unwrap();
            })
        };
        cells.lock().unwrap().push(Box::new(AtomicUsize::new(2)));
        let got = rx.recv().unwrap();
        worker.join().unwrap();
        assert_eq!(got, "20");
        let total: usize = cells
            .lock()
            .unwrap()
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .sum();
        assert_eq!(total, 3);
    });
    assert_passes(&report);
}

/// The last owner of a std `Arc` (made outside rewritten code, so kase does
/// not track it) frees what the other owners used: std's counts order
/// their uses before the free, and kase reports no race.
#[test]
fn the_last_drop_of_a_std_arc_is_no_race() {
    let report = explore(|| {
        let shared = std::sync::Arc::new(AtomicUsize::new(0));
        let other = std::sync::Arc::clone(&shared);
        let t = thread::spawn(move || {
            other.fetch_add(1, Ordering::Relaxed);
        });
        shared.fetch_add(1, Ordering::Relaxed);
        drop(shared);
        drop(t);
    });
    assert_passes(&report);
}

/// The same for what the `Arc`'s value owns: its last drop frees the
/// buffer of a `Vec` of atomics, and boxes inside it, which the other
/// owner used before its own drop.
#[test]
fn the_last_drop_of_a_std_arc_frees_its_value_without_a_race() {
    let report = explore(|| {
        let cells: std::sync::Arc<Vec<AtomicUsize>> =
            std::sync::Arc::new((0..3).map(AtomicUsize::new).collect());
        let boxes: std::sync::Arc<Vec<Box<AtomicUsize>>> =
            std::sync::Arc::new(vec![Box::new(AtomicUsize::new(0))]);
        let (c, b) = (std::sync::Arc::clone(&cells), std::sync::Arc::clone(&boxes));
        let t = thread::spawn(move || {
            c[1].fetch_add(1, Ordering::Relaxed);
            b[0].fetch_add(1, Ordering::Relaxed);
        });
        cells[2].fetch_add(1, Ordering::Relaxed);
        boxes[0].fetch_add(1, Ordering::Relaxed);
        drop((cells, boxes));
        drop(t);
    });
    assert_passes(&report);
}

/// A spin loop that allocates and frees a buffer in each iteration is still
/// recognised as a spin: the freed block comes back at the same address,
/// as std's allocator would hand it out.
#[test]
fn a_spin_loop_that_allocates_still_ends() {
    let report = explore(|| {
        let flag = std::sync::Arc::new(AtomicUsize::new(0));
        let setter = std::sync::Arc::clone(&flag);
        let t = thread::spawn(move || setter.store(1, Ordering::SeqCst));
        loop {
            let scratch = vec![0_u8; 32];
            if flag.load(Ordering::SeqCst) + usize::from(scratch[0]) == 1 {
                break;
            }
            drop(scratch);
            thread::yield_now();
        }
        t.join().unwrap();
    });
    assert_passes(&report);
    assert!(report.executions() <= 3, "{}", report.executions());
}

/// A `Vec` of atomics that grows moves them: the old buffer is freed, so a
/// thread still using an element through a pointer to the old buffer is
/// reported.
#[test]
fn a_vec_that_grows_frees_its_old_buffer() {
    let report = explore(|| {
        let mut cells = Vec::with_capacity(1);
        cells.push(AtomicUsize::new(0));
        let addr = Addr::of(&cells[0]);
        // SAFETY: see `Addr::get`.
        let reader = thread::spawn(move || unsafe { addr.get() }.load(Ordering::SeqCst));
        cells[0].store(1, Ordering::SeqCst);
        cells.push(AtomicUsize::new(1)); // reallocates: the old buffer goes
        let _ = reader.join();
        assert_eq!(cells[0].load(Ordering::SeqCst), 1);
    });
    free_failure(&report, "the reader races with the reallocation");
}

/// A block handed out again (same layout, nothing in it used) is zeroed
/// when zeroed memory is asked for, as a fresh one would be.
#[test]
fn a_reused_block_is_zeroed_when_asked() {
    let report = explore(|| {
        let flag = AtomicUsize::new(0);
        flag.store(1, Ordering::Relaxed);
        for round in 0..3_u8 {
            let mut scratch = vec![0_u8; 48];
            assert!(
                scratch.iter().all(|&b| b == 0),
                "round {round}: {scratch:?}"
            );
            scratch.fill(0xA5);
            drop(scratch);
        }
    });
    assert!(report.failure().is_none(), "{report}");
}

/// Memory allocated before the model and freed in it is std's to free: no
/// report, nothing kept.
#[test]
fn blocks_from_outside_the_model_are_freed_normally() {
    static OUTSIDE: std::sync::Mutex<Option<Box<[u64; 8]>>> = std::sync::Mutex::new(None);
    *OUTSIDE.lock().unwrap() = Some(Box::new([7; 8]));
    let report = explore(|| {
        let flag = AtomicUsize::new(0);
        flag.store(1, Ordering::Relaxed);
        if let Some(block) = OUTSIDE.lock().unwrap().take() {
            assert_eq!(block.iter().sum::<u64>(), 56);
        }
    });
    assert!(report.failure().is_none(), "{report}");
    assert!(OUTSIDE.lock().unwrap().is_none());
}

/// Outside a model the allocator is std's: blocks come and go as usual.
#[test]
fn outside_a_model_it_is_std() {
    let v: Vec<StdAtomicUsize> = (0..1000).map(StdAtomicUsize::new).collect();
    let sum: usize = v
        .iter()
        .map(|a| a.load(std::sync::atomic::Ordering::Relaxed))
        .sum();
    assert_eq!(sum, 999 * 1000 / 2);
}

//! `SeqCst` fences order memory only through what their threads read: under
//! Rust's memory model (RC11, C++20) they add no happens-before edge of their
//! own. Happens-before must be a function of the trace, the same in every
//! interleaving of it, or the reduction (which lets two fences commute) and
//! the oracle disagree.

// Every unsafe block dereferences the pointer a cell's `with` / `with_mut`
// hands out; whether those accesses are ordered is what the tests ask kase.
#![allow(clippy::undocumented_unsafe_blocks)]

use kase::cell::UnsafeCell;
use kase::sync::atomic::{fence, AtomicBool, Ordering};
use kase::sync::Arc;
use kase::{thread, Builder, FailureKind, MemoryModel, Report, Strategy};

struct Side {
    data: UnsafeCell<u32>,
    flag: AtomicBool,
}

// SAFETY: test fixture; kase checks whether the accesses are ordered.
unsafe impl Sync for Side {}

fn side() -> Side {
    Side {
        data: UnsafeCell::new(0),
        flag: AtomicBool::new(false),
    }
}

/// Every explorer, with and without critical-section peeking, and under
/// RC11 (where peeking is off).
fn every_explorer(model: impl Fn() + Sync) -> Vec<(String, Report)> {
    let mut reports = Vec::new();
    for strategy in [Strategy::Por, Strategy::Exhaustive] {
        for peeking in [true, false] {
            let report = Builder::new()
                .strategy(strategy)
                .peeking(peeking)
                .explore(&model);
            reports.push((format!("{strategy:?}, peeking {peeking}"), report));
        }
        let report = Builder::new()
            .strategy(strategy)
            .memory_model(MemoryModel::Rc11)
            .explore(&model);
        reports.push((format!("{strategy:?}, RC11"), report));
    }
    reports
}

fn assert_race_everywhere(model: impl Fn() + Sync) {
    for (explorer, report) in every_explorer(model) {
        assert_eq!(
            report.failure().map(|f| f.kind()),
            Some(FailureKind::DataRace),
            "{explorer}: {report}"
        );
    }
}

/// Store buffering with a `SeqCst` fence in each thread and `Relaxed` flags
/// (the held-out audit's program): the spawned thread writes its cell, then
/// its flag, fences and reads main's flag; main sets its flag, fences, and
/// reads the cell when it sees the spawned thread's flag. A fence after the
/// store releases nothing and a fence before the load acquires nothing, so
/// the read races with the write. The exhaustive oracle found it; POR did
/// not, because the order of the two fences decided happens-before and POR
/// ran only the interleaving of the trace where it hid the race.
#[test]
fn store_buffering_with_seqcst_fences_races() {
    assert_race_everywhere(|| {
        let shared = Arc::new((side(), side()));
        let other = shared.clone();
        let t = thread::spawn(move || {
            let (mine, theirs) = (&other.1, &other.0);
            mine.data.with_mut(|d| unsafe { *d = 2 });
            mine.flag.store(true, Ordering::Relaxed);
            fence(Ordering::SeqCst);
            theirs.flag.load(Ordering::Relaxed);
        });
        let (mine, theirs) = (&shared.0, &shared.1);
        mine.flag.store(true, Ordering::Relaxed);
        fence(Ordering::SeqCst);
        if theirs.flag.load(Ordering::Relaxed) {
            theirs.data.with(|d| unsafe { *d });
        }
        t.join().unwrap();
    });
}

/// A fence *after* the store that is read releases nothing: the writer's
/// fence follows its `Relaxed` store, the reader's follows its load. In
/// every interleaving where the flag is seen the writer's fence runs first,
/// so a global clock of `SeqCst` fences ordered the two cell accesses in
/// all of them and no explorer reported the race C++20 has.
#[test]
fn a_seqcst_fence_after_the_store_releases_nothing() {
    assert_race_everywhere(|| {
        let shared = Arc::new(side());
        let other = shared.clone();
        let t = thread::spawn(move || {
            other.data.with_mut(|d| unsafe { *d = 1 });
            other.flag.store(true, Ordering::Relaxed);
            fence(Ordering::SeqCst);
        });
        if shared.flag.load(Ordering::Relaxed) {
            fence(Ordering::SeqCst);
            shared.data.with(|d| unsafe { *d });
        }
        t.join().unwrap();
    });
}

/// The fence pattern that does synchronise stays clean: a release fence
/// before the flag's store, an acquire fence after the load that saw it
/// (here both `SeqCst`).
#[test]
fn seqcst_fences_around_a_read_flag_synchronise() {
    for (explorer, report) in every_explorer(|| {
        let shared = Arc::new(side());
        let other = shared.clone();
        let t = thread::spawn(move || {
            other.data.with_mut(|d| unsafe { *d = 1 });
            fence(Ordering::SeqCst);
            other.flag.store(true, Ordering::Relaxed);
        });
        if shared.flag.load(Ordering::Relaxed) {
            fence(Ordering::SeqCst);
            assert_eq!(shared.data.with(|d| unsafe { *d }), 1);
        }
        t.join().unwrap();
    }) {
        assert!(report.failure().is_none(), "{explorer}: {report}");
        assert!(report.complete(), "{explorer}: {report}");
    }
}

//! Rust's memory model (RC11): the outcomes of the classic litmus tests
//! under `MemoryModel::Rc11` equal the ones RC11 allows, and the graph
//! enumeration counts each consistent execution graph once (the counts
//! GenMC reports, `WEAK-MEMORY.md`).

use std::collections::BTreeSet;
use std::fmt::Debug;

use kase::sync::atomic::{AtomicUsize, Ordering, Ordering::*};
use kase::sync::Arc;
use kase::{thread, Builder, MemoryModel, Report, Strategy};

/// Every outcome `model` returns under RC11, and the report.
fn outcomes<T: Ord + Debug + Send>(model: impl Fn() -> T + Sync) -> (BTreeSet<T>, Report) {
    let seen = std::sync::Mutex::new(BTreeSet::new());
    let report = Builder::new()
        .memory_model(MemoryModel::Rc11)
        .strategy(Strategy::Exhaustive)
        .explore(|| {
            let outcome = model();
            seen.lock().unwrap().insert(outcome);
        });
    assert!(report.failure().is_none(), "{report:?}");
    assert!(report.complete());
    (seen.into_inner().unwrap(), report)
}

fn atomics<const N: usize>() -> Arc<[AtomicUsize; N]> {
    Arc::new(std::array::from_fn(|_| AtomicUsize::new(0)))
}

/// Store buffering: `x = 1; r1 = y ‖ y = 1; r2 = x`.
fn sb(store: Ordering, load: Ordering) -> impl Fn() -> (usize, usize) + Sync {
    move || {
        let v = atomics::<2>();
        let w = v.clone();
        let t = thread::spawn(move || {
            w[1].store(1, store);
            w[0].load(load)
        });
        v[0].store(1, store);
        let r1 = v[1].load(load);
        (r1, t.join().unwrap())
    }
}

fn set<T: Ord + Clone>(items: &[T]) -> BTreeSet<T> {
    items.iter().cloned().collect()
}

#[test]
fn store_buffering_reads_both_initial_values_unless_seq_cst() {
    let all = set(&[(0, 0), (0, 1), (1, 0), (1, 1)]);
    for (store, load) in [(Relaxed, Relaxed), (Release, Acquire)] {
        let (seen, report) = outcomes(sb(store, load));
        assert_eq!(seen, all, "{store:?}/{load:?}");
        assert_eq!(report.traces(), Some(4), "{store:?}/{load:?}");
    }
    let (seen, report) = outcomes(sb(SeqCst, SeqCst));
    assert_eq!(seen, set(&[(0, 1), (1, 0), (1, 1)]));
    assert_eq!(report.traces(), Some(3));
}

//! A generated program run under kase's RC11 exploration.

use std::collections::BTreeSet;
use std::sync::atomic::Ordering::Relaxed;

use super::{Op, Program};
use crate::sync::atomic::{fence, AtomicU64};
use crate::sync::{Arc, Mutex};
use crate::{Builder, MemoryModel, Report, Strategy};

/// Every outcome kase's RC11 exploration of `program` with `strategy`
/// produces (as the oracle defines them), and its report: over execution
/// graphs from the first execution on.
pub(super) fn explore(program: &Program, strategy: Strategy) -> (BTreeSet<Vec<u64>>, Report) {
    explore_with(program, |b| b.strategy(strategy).__graphs_from_start())
}

/// As [`explore`], but as a user's model runs: over interleavings until an
/// access weaker than `SeqCst` made while another thread may run (the final
/// loads are `Relaxed`, made alone after the joins).
pub(super) fn explore_as_written(program: &Program) -> (BTreeSet<Vec<u64>>, Report) {
    explore_with(program, |b| b)
}

fn explore_with(
    program: &Program,
    configure: impl FnOnce(Builder) -> Builder,
) -> (BTreeSet<Vec<u64>>, Report) {
    let perform_all = |cells: &Arc<Vec<AtomicU64>>, _: &Arc<Mutex<()>>, ops: Vec<Op>| {
        ops.iter().filter_map(|&op| perform(cells, op)).collect()
    };
    explore_threads(
        program.locations,
        &program.threads,
        configure,
        perform_all,
        |_| {},
    )
}

/// One spawned thread of a generated model: given the shared atomics, the
/// mutex and its part, it returns what it read.
pub(super) type ThreadBody<T> = fn(&Arc<Vec<AtomicU64>>, &Arc<Mutex<()>>, T) -> Vec<u64>;

/// Explores under RC11 (with the settings `configure` adds) a model
/// whose main thread makes `locations` atomics (all 0) and a mutex,
/// spawns one thread per part running `body` (which returns what it read),
/// joins them and loads every location; `check` sees each outcome (the
/// threads' reads in order, then the final values) and may panic. Returns
/// every outcome and the report.
pub(super) fn explore_threads<T: Clone + Send + Sync + 'static>(
    locations: u32,
    threads: &[T],
    configure: impl FnOnce(Builder) -> Builder,
    body: ThreadBody<T>,
    check: impl Fn(&[u64]) + Sync,
) -> (BTreeSet<Vec<u64>>, Report) {
    let seen = std::sync::Mutex::new(BTreeSet::new());
    let builder = configure(Builder::new().memory_model(MemoryModel::Rc11));
    let report = builder.explore(|| {
        let cells: Arc<Vec<AtomicU64>> =
            Arc::new((0..locations).map(|_| AtomicU64::new(0)).collect());
        let lock = Arc::new(Mutex::new(()));
        let handles: Vec<_> = threads
            .iter()
            .map(|part| {
                let (cells, lock, part) = (cells.clone(), lock.clone(), part.clone());
                crate::thread::spawn(move || body(&cells, &lock, part))
            })
            .collect();
        let mut outcome: Vec<u64> = handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect();
        outcome.extend(cells.iter().map(|c| c.load(Relaxed)));
        seen.lock().unwrap().insert(outcome.clone());
        check(&outcome);
    });
    (seen.into_inner().unwrap(), report)
}

/// Runs one operation; the value it read, if it reads.
pub(super) fn perform(cells: &[AtomicU64], op: Op) -> Option<u64> {
    let cell = |l: u32| &cells[l as usize];
    match op {
        Op::Load { location, order } => Some(cell(location).load(order)),
        Op::Store {
            location,
            value,
            order,
        } => {
            cell(location).store(value, order);
            None
        }
        Op::FetchAdd {
            location,
            value,
            order,
        } => Some(cell(location).fetch_add(value, order)),
        Op::Swap {
            location,
            value,
            order,
        } => Some(cell(location).swap(value, order)),
        Op::Cas {
            location,
            expected,
            value,
            success,
            failure,
        } => Some(
            match cell(location).compare_exchange(expected, value, success, failure) {
                Ok(v) | Err(v) => v,
            },
        ),
        Op::Fence { order } => {
            fence(order);
            None
        }
    }
}

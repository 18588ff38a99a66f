//! A generated program run under kase's RC11 exploration.

use std::collections::BTreeSet;
use std::sync::atomic::Ordering::Relaxed;

use super::{Op, Program};
use crate::sync::atomic::{fence, AtomicU64};
use crate::sync::Arc;
use crate::{Builder, MemoryModel, Report, Strategy};

/// Every outcome kase's RC11 exploration of `program` with `strategy`
/// produces (as the oracle defines them), and its report.
pub(super) fn explore(program: &Program, strategy: Strategy) -> (BTreeSet<Vec<u64>>, Report) {
    let seen = std::sync::Mutex::new(BTreeSet::new());
    let report = Builder::new()
        .memory_model(MemoryModel::Rc11)
        .strategy(strategy)
        .explore(|| {
            // A Relaxed load of a location nothing stores to: it makes kase
            // explore execution graphs from the first execution on even if
            // every operation of the program is SeqCst (it reads the initial
            // value, always: no graph more, no outcome changed).
            AtomicU64::new(0).load(Relaxed);
            let cells: Arc<Vec<AtomicU64>> =
                Arc::new((0..program.locations).map(|_| AtomicU64::new(0)).collect());
            let handles: Vec<_> = program
                .threads
                .iter()
                .map(|ops| {
                    let (cells, ops) = (cells.clone(), ops.clone());
                    crate::thread::spawn(move || {
                        ops.iter()
                            .filter_map(|&op| perform(&cells, op))
                            .collect::<Vec<u64>>()
                    })
                })
                .collect();
            let mut outcome: Vec<u64> = handles
                .into_iter()
                .flat_map(|h| h.join().unwrap())
                .collect();
            outcome.extend(cells.iter().map(|c| c.load(Relaxed)));
            seen.lock().unwrap().insert(outcome);
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

//! kase explores exactly the known number of Mazurkiewicz traces of the
//! benchmark programs, at small parameters (the whole file runs in a few
//! seconds in a debug build). The counts are defined without critical-section
//! peeking; the tests named `*peeking*` check the counts with it. The weak-
//! memory programs are checked under Rust's memory model (RC11): graph
//! counts, outcomes, and the bugs found.

use std::collections::BTreeSet;

use kase::{Builder, FailureKind, MemoryModel, Report};
use kase_bench::catalog::{self, Expected, WeakKind, PROGRAMS, WEAK_PROGRAMS};
use kase_bench::kase_models::*;

/// Explores `model` with the default (optimal POR) builder without peeking
/// and checks that it passed, completed, wasted nothing and ran `traces`
/// executions.
#[track_caller]
fn assert_traces(traces: u64, model: impl Fn() + Sync) -> Report {
    assert_traces_with(false, traces, model)
}

/// The same with critical-section peeking; also checks that kase kept
/// peeking (did not fall back to exploring without it).
#[track_caller]
fn assert_traces_peeking(traces: u64, model: impl Fn() + Sync) -> Report {
    let report = assert_traces_with(true, traces, model);
    assert!(report.peeking(), "peeking abandoned: {report}");
    assert_eq!(report.discarded_executions(), 0, "{report}");
    report
}

#[track_caller]
fn assert_traces_with(peeking: bool, traces: u64, model: impl Fn() + Sync) -> Report {
    let report = Builder::new().peeking(peeking).explore(model);
    assert!(report.failure().is_none(), "{report}");
    assert!(report.complete(), "{report}");
    assert_eq!(report.sleep_set_blocked(), 0, "redundant executions");
    assert_eq!(report.executions(), traces, "executions");
    report
}

#[test]
fn independent_and_read_only_have_one_trace() {
    assert_traces(1, || independent(3, 2));
    assert_traces(1, || independent(4, 1));
    assert_traces(1, || read_only(3, 3));
}

#[test]
fn litmus_tests() {
    assert_traces(3, store_buffering);
    assert_traces(2, message_passing);
    assert_traces(3, two_plus_two_w);
    assert_traces(15, iriw);
}

#[test]
fn mutex_counter_is_multinomial() {
    assert_traces(6, || mutex_counter(2, 2));
    assert_traces(90, || mutex_counter(3, 2));
    assert_traces(20, || mutex_counter(2, 3));
}

#[test]
fn shared_fetch_add_is_factorial() {
    assert_traces(2, || shared_fetch_add(2));
    assert_traces(6, || shared_fetch_add(3));
    assert_traces(24, || shared_fetch_add(4));
}

#[test]
fn readers_of_one_write() {
    assert_traces(4, || readers(2));
    assert_traces(16, || readers(4));
}

#[test]
fn account_is_factorial_squared() {
    assert_traces(4, || account(1));
    assert_traces(36, || account(2));
}

#[test]
fn lastzero() {
    assert_traces(12, || kase_bench::kase_models::lastzero(3));
    assert_traces(64, || kase_bench::kase_models::lastzero(5));
}

#[test]
fn sdpor_exponential_is_linear() {
    assert_traces(6, || sdpor_exponential(3));
    assert_traces(10, || sdpor_exponential(5));
}

#[test]
fn dining_philosophers_deadlock() {
    let report = Builder::new()
        .peeking(false)
        .explore(|| dining_philosophers(3));
    let failure = report.failure().expect("the deadlock is found");
    assert_eq!(failure.kind(), FailureKind::Deadlock, "{report}");
    // Exploration stops at the deadlock: at most 2^3 − 2 passing runs before.
    assert!(report.executions() <= 7, "{report}");
}

#[test]
fn compare_exchange_counts_as_a_write() {
    // casrot(n) = n! and wcas(n) = (n+1)! while a CAS is a write.
    assert_traces(2, || casrot(2));
    assert_traces(6, || casrot(3));
    assert_traces(6, || wcas(2));
}

#[test]
fn disjoint_sections_without_peeking() {
    assert_traces(6, || disjoint_sections(2));
    assert_traces(20, || disjoint_sections(3));
    assert_traces(70, || disjoint_sections(4));
}

#[test]
fn disjoint_write_sections_are_one_trace_only_with_peeking() {
    assert_traces(20, || disjoint_write_sections(3));
    assert_traces(70, || disjoint_write_sections(4));
    assert_traces_peeking(1, || disjoint_write_sections(4));
    assert_traces_peeking(1, || disjoint_write_sections(8));
}

#[test]
fn disjoint_sections_with_peeking_are_one_trace() {
    assert_traces_peeking(1, || disjoint_sections(4));
    assert_traces_peeking(1, || disjoint_sections(8));
}

#[test]
fn indexer_shared_with_peeking() {
    // One shared lock, sections on different cells commute: only the
    // colliding insertions of n ≥ 12 (three pairs at n = 12) are ordered.
    assert_traces_peeking(1, || indexer_shared(4));
    assert_traces_peeking(1, || indexer_shared(11));
    assert_traces_peeking(8, || indexer_shared(12));
}

#[test]
fn indexer_shared_without_peeking_is_every_order_of_the_sections() {
    // (4n)!/(4!)^n: 8!/(4!·4!) = 70 for two threads.
    assert_traces(1, || indexer_shared(1));
    assert_traces(70, || indexer_shared(2));
}

#[test]
fn mpat_with_peeking_is_factorial() {
    // The empty sections on `ma[i]` commute: k! instead of k!·2^k.
    assert_traces_peeking(2, || mpat(2));
    assert_traces_peeking(6, || mpat(3));
}

#[test]
fn indexer_and_filesystem_without_collisions() {
    assert_traces(1, || indexer(4));
    assert_traces(1, || filesystem(4));
}

#[test]
fn paper_families() {
    assert_traces(32, || disp(2, 2));
    assert_traces(59, || disp(3, 2));
    assert_traces(8, || mpat(2));
    assert_traces(48, || mpat(3));
    assert_traces(6, || pi(3));
    assert_traces(24, || pi(4));
    assert_traces(4, || pol(2, 1));
    assert_traces(6, || pol(3, 1));
    assert_traces(33, || pol(3, 2));
}

#[test]
fn mpc_matches_the_small_checks() {
    // The benchmark list's small checks: 6 orders of the four `pm` sections
    // times 3 × 3 orders on the workers' mutexes (each producer's one
    // section among its worker's two) = 54; and 66 with three workers.
    assert_traces(54, || mpc(2, 2));
    assert_traces(66, || mpc(2, 3));
}

/// The catalog's formulas agree with kase, without and with peeking, on
/// every quick row whose count is known and small.
#[test]
fn catalog_quick_rows() {
    const SMALL: u64 = 10_000;
    for program in PROGRAMS {
        if program.name == "dining_philosophers" {
            continue;
        }
        for params in program.quick {
            let expectations = [
                (false, (program.expected)(params)),
                (true, program.expected_with_peeking(params)),
            ];
            for (peeking, expected) in expectations {
                let Some(expected) = expected.and_then(Expected::traces) else {
                    continue;
                };
                if expected > SMALL {
                    continue;
                }
                let kase = program.kase;
                let params = params.to_vec();
                let report = Builder::new().peeking(peeking).explore(|| kase(&params));
                assert!(report.complete() && report.failure().is_none(), "{report}");
                assert_eq!(
                    report.executions(),
                    expected,
                    "{}({params:?}), peeking {peeking}",
                    program.name
                );
            }
        }
    }
}

#[test]
fn catalog_helpers() {
    assert_eq!(catalog::factorial(5), 120);
    assert_eq!(catalog::binomial(16, 8), 12_870);
    assert_eq!(catalog::binomial(64, 32), 1_832_624_140_942_590_534);
    assert_eq!(catalog::interleavings(&[4, 4]), Expected::Traces(70));
    assert_eq!(
        catalog::interleavings(&[4; 4]),
        Expected::Traces(63_063_000)
    );
    // 40!/(4!)^10 = 1.29...·10^34.
    assert_eq!(
        catalog::interleavings(&[4; 10]),
        Expected::About {
            mantissa: 129,
            exponent: 34
        }
    );
    assert_eq!(catalog::interleavings(&[4; 10]).to_string(), "≈ 1.29·10^34");
    assert_eq!(catalog::group(1_437_552), "1 437 552");
    assert_eq!(catalog::group(999), "999");
    assert!(catalog::find("disp").is_some());
    for program in PROGRAMS {
        for params in program.rows.iter().chain(program.quick) {
            assert_eq!(params.len(), program.arity, "{}", program.name);
        }
    }
}

/// One tiny sanity check that the loom and shuttle versions run.
#[test]
fn peers_run_the_same_programs() {
    loom::model(kase_bench::loom_models::message_passing);
    shuttle::check_dfs(kase_bench::shuttle_models::message_passing, None);
}

/// Explores a weak-memory program under RC11 with the default reduction and
/// returns the outcomes it returned; if nothing failed, checks exactly one
/// execution per consistent graph (none cut short).
fn rc11(model: fn() -> Vec<usize>) -> (BTreeSet<Vec<usize>>, Report) {
    let seen = std::sync::Mutex::new(BTreeSet::new());
    let report = Builder::new().memory_model(MemoryModel::Rc11).explore(|| {
        // Not under the lock: an execution kase ends early unwinds.
        let outcome = model();
        seen.lock().unwrap().insert(outcome);
    });
    if report.failure().is_none() && report.graph_exploration().is_some() {
        assert_eq!(
            (
                Some(report.executions() - report.discarded_executions()),
                report.sleep_set_blocked()
            ),
            (report.traces(), 0),
            "exactly one execution per graph: {report}"
        );
    }
    (seen.into_inner().unwrap(), report)
}

/// The behaviours `report` explored: execution graphs, or (a model whose
/// atomics are all `SeqCst`, explored as interleavings with the optimal
/// reduction) the executions that were not redundant.
fn graphs(report: &Report) -> Option<u64> {
    report
        .traces()
        .or(Some(report.executions() - report.sleep_set_blocked()))
}

#[test]
fn litmus_graphs_under_rc11() {
    use kase_bench::kase_models::weak;
    let graphs = |model| graphs(&rc11(model).1);
    assert_eq!(graphs(weak::sb_relaxed), Some(4));
    assert_eq!(graphs(weak::sb_seq_cst), Some(3));
    assert_eq!(graphs(weak::two_plus_two_w_relaxed), Some(4));
    assert_eq!(graphs(weak::iriw_relaxed), Some(16));
    assert_eq!(graphs(weak::iriw_seq_cst), Some(15));
    assert_eq!(graphs(weak::s_relaxed), Some(4));
    assert_eq!(graphs(weak::lb_relaxed), Some(3));
    assert_eq!(graphs(weak::mp_relaxed), Some(4));
}

/// Every weak-memory program in the catalog shows under RC11 what the
/// catalog says: a litmus test its graphs and outcomes, the weak outcome
/// exactly when RC11 allows it; a bug program its panic.
#[test]
fn weak_catalog_under_rc11() {
    for program in WEAK_PROGRAMS {
        // GenMC's benchmarks up to a few thousand graphs (the larger ones
        // are `compare --weak` rows: minutes in a debug build).
        if matches!(program.kind, WeakKind::Count { .. })
            && program.graphs.is_some_and(|g| g > 5_000)
        {
            continue;
        }
        let (seen, report) = rc11(program.kase);
        match program.kind {
            WeakKind::Litmus {
                weak,
                allowed,
                outcomes,
                ..
            } => {
                assert!(report.complete() && report.failure().is_none(), "{report}");
                assert_eq!(graphs(&report), program.graphs, "{}", program.name);
                assert_eq!(seen.len(), outcomes, "{}: {seen:?}", program.name);
                assert_eq!(seen.contains(weak), allowed, "{}: {seen:?}", program.name);
            }
            WeakKind::Count { .. } => {
                assert!(report.complete() && report.failure().is_none(), "{report}");
                assert_eq!(graphs(&report), program.graphs, "{}", program.name);
            }
            WeakKind::Bug { message } => {
                let failure = report
                    .failure()
                    .unwrap_or_else(|| panic!("{}: not found: {report}", program.name));
                assert_eq!(failure.kind(), FailureKind::Panic, "{report}");
                assert!(
                    failure.message().unwrap_or("").contains(message),
                    "{report}"
                );
            }
        }
    }
    assert!(catalog::find_weak("iriw_relaxed").is_some());
}

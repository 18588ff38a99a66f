//! The oracle checked against GenMC's counts, and the explorer checked
//! against the oracle on generated programs.
//!
//! `KASE_WEAK_DIFF_PROGRAMS` (default 300) sets how many programs the
//! differential test runs, `KASE_WEAK_DIFF_SEED` the first program's seed
//! (program `k` is generated from seed + k, so a failure names the seed that
//! reproduces it alone with `KASE_WEAK_DIFF_PROGRAMS=1`).
#![cfg(test)]

use std::sync::atomic::Ordering::{self, Relaxed, SeqCst};
use std::time::Instant;

use super::graphs::{candidates, consistent_graphs, Graphs};
use super::run::{explore, explore_as_written};
use super::{env, Op, Program, Rng};
use crate::Strategy;

const X: u32 = 0;
const Y: u32 = 1;

fn load(location: u32, order: Ordering) -> Op {
    Op::Load { location, order }
}

fn store(location: u32, value: u64, order: Ordering) -> Op {
    Op::Store {
        location,
        value,
        order,
    }
}

/// (program, graphs with `Relaxed`, graphs with `SeqCst`) per WEAK-MEMORY.md.
fn litmus(order: Ordering) -> Vec<(&'static str, Program)> {
    let program = |threads| Program {
        locations: 2,
        threads,
    };
    vec![
        (
            "SB",
            program(vec![
                vec![store(X, 1, order), load(Y, order)],
                vec![store(Y, 2, order), load(X, order)],
            ]),
        ),
        (
            "IRIW",
            program(vec![
                vec![store(X, 1, order)],
                vec![store(Y, 2, order)],
                vec![load(X, order), load(Y, order)],
                vec![load(Y, order), load(X, order)],
            ]),
        ),
        (
            "2+2W",
            program(vec![
                vec![store(X, 1, order), store(Y, 2, order)],
                vec![store(Y, 3, order), store(X, 4, order)],
            ]),
        ),
    ]
}

#[test]
fn the_oracle_counts_what_genmc_counts() {
    let expected = [("SB", 4, 3), ("IRIW", 16, 15), ("2+2W", 4, 3)];
    for (order, pick) in [(Relaxed, 0), (SeqCst, 1)] {
        for ((name, program), counts) in litmus(order).into_iter().zip(expected) {
            assert_eq!(name, counts.0);
            let want = [counts.1, counts.2][pick];
            assert_eq!(consistent_graphs(&program).count, want, "{name} {order:?}");
        }
    }
    // SB's forbidden outcome under SeqCst: both loads read 0.
    let (_, sb) = &litmus(SeqCst)[0];
    let outcomes = consistent_graphs(sb).outcomes;
    assert!(!outcomes.contains(&vec![0, 0, 1, 2]), "{outcomes:?}");
    let (_, sb) = &litmus(Relaxed)[0];
    assert!(consistent_graphs(sb).outcomes.contains(&vec![0, 0, 1, 2]));
}

#[test]
fn the_explorer_agrees_with_the_oracle_on_litmus_tests() {
    for order in [Relaxed, SeqCst] {
        for (name, program) in litmus(order) {
            check(&program, &format!("{name} {order:?}"));
        }
    }
}

/// Programs the oracle enumerates at most this many candidate graphs of.
const MAX_CANDIDATES: u64 = 300;
/// Programs with at most this many interleavings of their threads' ops
/// (kase's DFS enumerates every interleaving).
const MAX_INTERLEAVINGS: u64 = 24;

fn interleavings(program: &Program) -> u64 {
    // The multinomial coefficient, built up one thread at a time.
    let mut total = 1u64;
    let mut placed = 0u64;
    for ops in &program.threads {
        for i in 1..=ops.len() as u64 {
            placed += 1;
            total = total * placed / i;
        }
    }
    total
}

/// A generated program whose candidate graphs are at most `max`.
fn program(seed: u64, max: u64) -> Program {
    let mut rng = Rng::new(seed);
    loop {
        let program = Program::generate(&mut rng);
        if candidates(&program) <= max {
            return program;
        }
    }
}

/// The explorers against the oracle on one program: the reduction
/// (`Strategy::Por`) always, and the exhaustive enumeration if the program
/// has few interleavings. Returns (graphs, executions of the reduction).
fn check(program: &Program, name: &str) -> (usize, u64) {
    let oracle = consistent_graphs(program);
    let (executions, blocked) = check_one(program, name, Strategy::Por, &oracle);
    assert_eq!(
        (executions, blocked),
        (oracle.count as u64, 0),
        "{name}:\n{program}\nthe revisit explorer runs exactly one execution per graph, none cut \
         short"
    );
    if interleavings(program) <= MAX_INTERLEAVINGS {
        check_one(program, name, Strategy::Exhaustive, &oracle);
    }
    (oracle.count, executions)
}

/// One explorer against the oracle: same outcomes, as many distinct graphs
/// as the oracle's consistent ones. Returns (executions, redundant ones).
fn check_one(program: &Program, name: &str, strategy: Strategy, oracle: &Graphs) -> (u64, u64) {
    let (seen, report) = explore(program, strategy);
    let listing = format!("{name} ({strategy:?}):\n{program}");
    assert!(report.failure().is_none(), "{listing}\n{report:?}");
    assert!(report.complete(), "{listing}\n{report:?}");
    let missing: Vec<_> = oracle.outcomes.difference(&seen).collect();
    let extra: Vec<_> = seen.difference(&oracle.outcomes).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "{listing}\noutcomes (hex) the explorer misses: {}\noutcomes it has that RC11 forbids: {}",
        hex(&missing),
        hex(&extra)
    );
    assert_eq!(
        report.traces(),
        Some(oracle.count as u64),
        "{listing}\ndistinct graphs explored vs consistent graphs (oracle); {} executions",
        report.executions()
    );
    assert!(
        report.graph_exploration().is_some(),
        "{listing}\n{report:?}"
    );
    // (Graphs from the first execution on: nothing discarded.)
    (
        report.executions() - report.discarded_executions(),
        report.sleep_set_blocked(),
    )
}

fn hex(outcomes: &[&Vec<u64>]) -> String {
    let shown: Vec<String> = outcomes
        .iter()
        .map(|o| {
            format!(
                "[{}]",
                o.iter()
                    .map(|v| format!("{v:#x}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
        .collect();
    format!("{{{}}}", shown.join(" "))
}

#[test]
fn the_explorer_agrees_with_the_oracle_on_generated_programs() {
    let programs = env("KASE_WEAK_DIFF_PROGRAMS", 300);
    let base = env("KASE_WEAK_DIFF_SEED", 0x5eed_0020);
    let start = Instant::now();
    let (mut graphs, mut executions, mut ops) = (0, 0, 0);
    for k in 0..programs {
        let seed = base.wrapping_add(k);
        let program = program(seed, MAX_CANDIDATES);
        let (g, e) = check(&program, &format!("KASE_WEAK_DIFF_SEED={seed}"));
        graphs += g;
        executions += e;
        ops += program.len();
    }
    eprintln!(
        "{programs} programs from seed {base}: {ops} ops, {graphs} graphs, \
         {executions} executions, {:?}",
        start.elapsed()
    );
}

/// `program` with every ordering `SeqCst`.
fn all_seq_cst(program: &Program) -> Program {
    let op = |op: Op| match op {
        Op::Load { location, .. } => Op::Load {
            location,
            order: SeqCst,
        },
        Op::Store {
            location, value, ..
        } => Op::Store {
            location,
            value,
            order: SeqCst,
        },
        Op::FetchAdd {
            location, value, ..
        } => Op::FetchAdd {
            location,
            value,
            order: SeqCst,
        },
        Op::Swap {
            location, value, ..
        } => Op::Swap {
            location,
            value,
            order: SeqCst,
        },
        Op::Cas {
            location,
            expected,
            value,
            ..
        } => Op::Cas {
            location,
            expected,
            value,
            success: SeqCst,
            failure: SeqCst,
        },
        Op::Fence { .. } => Op::Fence { order: SeqCst },
    };
    Program {
        locations: program.locations,
        threads: program
            .threads
            .iter()
            .map(|ops| ops.iter().copied().map(op).collect())
            .collect(),
    }
}

#[test]
fn models_as_written_agree_with_the_oracle() {
    // Run as a user's model runs (no graphs asked for from the start):
    // the main thread's final loads are Relaxed but made alone, after the
    // joins, so an all-SeqCst program stays on the interleaving explorer
    // (with peeking) and must still show exactly RC11's outcomes; a program
    // with a weaker ordering in a thread moves to graphs at it.
    let programs = env("KASE_WEAK_DIFF_PROGRAMS", 300);
    let base = env("KASE_WEAK_DIFF_SEED", 0x5eed_0020);
    for k in 0..programs {
        let seed = base.wrapping_add(k);
        let generated = program(seed, MAX_CANDIDATES);
        let strong = all_seq_cst(&generated);
        for (program, strong) in [(&strong, true), (&generated, false)] {
            let oracle = consistent_graphs(program);
            let (seen, report) = explore_as_written(program);
            let listing = format!("KASE_WEAK_DIFF_SEED={seed} (as written):\n{program}");
            assert!(report.failure().is_none(), "{listing}\n{report:?}");
            assert!(report.complete(), "{listing}\n{report:?}");
            assert_eq!(seen, oracle.outcomes, "{listing}\n{report:?}");
            if strong {
                assert_eq!(report.graph_exploration(), None, "{listing}\n{report:?}");
                assert_eq!(report.discarded_executions(), 0, "{listing}\n{report:?}");
            }
        }
    }
}

//! The graph oracle and the differential test of the RC11 exploration
//! (issue 20): small generated straight-line programs, every consistent
//! execution graph of each enumerated naively (`graphs.rs`), and the same
//! program run under `MemoryModel::Rc11` (`run.rs`); both must give the same
//! outcomes and the explorer must count as many distinct graphs.
//!
//! A program: a main thread spawns 2–4 threads, joins them and loads every
//! location; each thread runs 1–3 atomic operations of any valid ordering.
//! Every write writes a value of its own, so a read's value names (almost
//! always) the write it read: stores, swaps and compare-exchanges write
//! `j + 1` for the `j`-th write of the program, a `fetch_add` adds
//! `0x10 << 4j` — in hex, the low digit is the base store and the higher
//! ones the `fetch_add`s applied to it.
//!
//! `branching.rs` goes beyond straight-line code (branches on loaded
//! values, a thread that spawns and joins another), where the naive
//! enumeration does not reach: there the revisit explorer is checked
//! against the exhaustive one.

mod branching;
pub(super) mod graphs;
mod run;
mod tests;

use std::fmt;
use std::sync::atomic::Ordering::{self, AcqRel, Acquire, Relaxed, Release, SeqCst};

/// One atomic operation of a generated thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Op {
    /// `load(order)`.
    Load { location: u32, order: Ordering },
    /// `store(value, order)`.
    Store {
        location: u32,
        value: u64,
        order: Ordering,
    },
    /// `fetch_add(value, order)` (wrapping).
    FetchAdd {
        location: u32,
        value: u64,
        order: Ordering,
    },
    /// `swap(value, order)`.
    Swap {
        location: u32,
        value: u64,
        order: Ordering,
    },
    /// `compare_exchange(expected, value, success, failure)`.
    Cas {
        location: u32,
        expected: u64,
        value: u64,
        success: Ordering,
        failure: Ordering,
    },
    /// `fence(order)`.
    Fence { order: Ordering },
}

impl Op {
    /// The location it accesses (None for a fence).
    pub(super) fn location(self) -> Option<u32> {
        match self {
            Op::Load { location, .. }
            | Op::Store { location, .. }
            | Op::FetchAdd { location, .. }
            | Op::Swap { location, .. }
            | Op::Cas { location, .. } => Some(location),
            Op::Fence { .. } => None,
        }
    }

    /// Whether it reads (and so contributes to the outcome).
    pub(super) fn reads(self) -> bool {
        !matches!(self, Op::Store { .. } | Op::Fence { .. })
    }

    /// Whether it may write (a compare-exchange only when it succeeds).
    pub(super) fn may_write(self) -> bool {
        !matches!(self, Op::Load { .. } | Op::Fence { .. })
    }
}

/// A generated program: `locations` atomics (initially 0) and the threads
/// the main thread spawns; the outcome is every read's value, thread by
/// thread in program order, then every location's final value.
#[derive(Clone, Debug)]
pub(super) struct Program {
    pub locations: u32,
    pub threads: Vec<Vec<Op>>,
}

/// xorshift64* (as `tests/common/rng.rs`): programs are reproducible from
/// their seed without a dependency.
pub(super) struct Rng(u64);

impl Rng {
    /// A generator for `seed` (any value; scrambled so nearby seeds differ).
    pub(super) fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number in `0..n`.
    pub(super) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
}

const ALL: [Ordering; 5] = [Relaxed, Acquire, Release, AcqRel, SeqCst];

impl Program {
    /// A random program: 2–4 threads of 1–3 operations over 1–3 locations,
    /// every valid ordering equally likely.
    pub(super) fn generate(rng: &mut Rng) -> Program {
        let locations = 1 + rng.below(3) as u32;
        let mut writes = 0u32;
        let mut threads: Vec<Vec<Op>> = (0..2 + rng.below(3))
            .map(|_| {
                (0..1 + rng.below(3))
                    .map(|_| {
                        let location = rng.below(locations as usize) as u32;
                        let kind = rng.below(6);
                        let value = u64::from(writes) + 1;
                        if kind != 0 && kind != 5 {
                            writes += 1;
                        }
                        match kind {
                            0 => Op::Load {
                                location,
                                order: rng.pick(&[Relaxed, Acquire, SeqCst]),
                            },
                            1 => Op::Store {
                                location,
                                value,
                                order: rng.pick(&[Relaxed, Release, SeqCst]),
                            },
                            2 => Op::FetchAdd {
                                location,
                                value: 0x10 << (4 * (value - 1)),
                                order: rng.pick(&ALL),
                            },
                            3 => Op::Swap {
                                location,
                                value,
                                order: rng.pick(&ALL),
                            },
                            4 => Op::Cas {
                                location,
                                expected: 0,
                                value,
                                success: rng.pick(&ALL),
                                failure: rng.pick(&[Relaxed, Acquire, SeqCst]),
                            },
                            _ => Op::Fence {
                                order: rng.pick(&[Acquire, Release, AcqRel, SeqCst]),
                            },
                        }
                    })
                    .collect()
            })
            .collect();
        // A compare-exchange expects 0 or a value some plain write of its
        // location writes, so both success and failure are possible.
        let plain = plain_writes(&threads);
        for op in threads.iter_mut().flatten() {
            if let Op::Cas {
                location,
                expected,
                value,
                ..
            } = op
            {
                let mut options = vec![0];
                options.extend(
                    plain
                        .iter()
                        .filter(|&&(l, v)| l == *location && v != *value)
                        .map(|&(_, v)| v),
                );
                *expected = rng.pick(&options);
            }
        }
        Program { locations, threads }
    }

    /// Each store, swap and compare-exchange: its location and the value
    /// it writes.
    pub(super) fn plain_writes(&self) -> Vec<(u32, u64)> {
        plain_writes(&self.threads)
    }

    /// The number of operations.
    pub(super) fn len(&self) -> usize {
        self.threads.iter().map(Vec::len).sum()
    }
}

/// Each store, swap and compare-exchange of `threads`: its location and
/// the value it writes (a `fetch_add`'s depends on what it reads).
fn plain_writes(threads: &[Vec<Op>]) -> Vec<(u32, u64)> {
    threads
        .iter()
        .flatten()
        .filter_map(|op| match *op {
            Op::Store {
                location, value, ..
            }
            | Op::Swap {
                location, value, ..
            }
            | Op::Cas {
                location, value, ..
            } => Some((location, value)),
            _ => None,
        })
        .collect()
}

/// A number from environment variable `name`, else `default` (the
/// differential tests' knobs).
fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A readable listing: one line per thread, `x`, `y`, `z` for locations.
impl fmt::Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = |l: u32| ["x", "y", "z"][l as usize];
        for (t, ops) in self.threads.iter().enumerate() {
            write!(f, "  thread {}:", t + 1)?;
            for op in ops {
                match *op {
                    Op::Load { location, order } => {
                        write!(f, " {}.load({order:?});", name(location))
                    }
                    Op::Store {
                        location,
                        value,
                        order,
                    } => write!(f, " {}.store({value:#x}, {order:?});", name(location)),
                    Op::FetchAdd {
                        location,
                        value,
                        order,
                    } => write!(f, " {}.fetch_add({value:#x}, {order:?});", name(location)),
                    Op::Swap {
                        location,
                        value,
                        order,
                    } => write!(f, " {}.swap({value:#x}, {order:?});", name(location)),
                    Op::Cas {
                        location,
                        expected,
                        value,
                        success,
                        failure,
                    } => write!(
                        f,
                        " {}.cas({expected:#x}, {value:#x}, {success:?}, {failure:?});",
                        name(location)
                    ),
                    Op::Fence { order } => write!(f, " fence({order:?});"),
                }?;
            }
            writeln!(f)?;
        }
        write!(
            f,
            "  outcome: every read's value, thread by thread, then {} final",
            (0..self.locations).map(name).collect::<Vec<_>>().join(", ")
        )
    }
}

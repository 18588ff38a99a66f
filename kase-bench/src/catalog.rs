//! The benchmark programs with their parameters and known trace counts
//! (from the project's benchmark list), as run by the `compare` binary, and
//! the weak-memory programs with what Rust's memory model allows of them.

use std::fmt;

mod weak;
pub use weak::{find_weak, WeakKind, WeakProgram, WEAK_PROGRAMS};

/// What an exploration of a program should find.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expected {
    /// Exactly this many Mazurkiewicz traces, none failing.
    Traces(u64),
    /// This many passing traces plus one that deadlocks (explorers stop at
    /// the deadlock, so they report how far they got).
    Deadlock {
        /// Passing traces besides the deadlock.
        passing: u64,
    },
    /// About `mantissa`/100 · 10^`exponent` traces: too many to run, and to
    /// hold in a `u64`.
    About {
        /// The first three digits, 100..=999.
        mantissa: u16,
        /// The power of ten.
        exponent: u16,
    },
}

impl Expected {
    /// About 10^`log10` traces.
    pub fn about(log10: f64) -> Expected {
        let mut exponent = log10.floor();
        let mut mantissa = (10f64.powf(log10 - exponent) * 100.0).round();
        if mantissa >= 1000.0 {
            mantissa /= 10.0;
            exponent += 1.0;
        }
        Expected::About {
            mantissa: mantissa as u16,
            exponent: exponent as u16,
        }
    }

    /// The exact number of traces, if it is one.
    pub fn traces(self) -> Option<u64> {
        match self {
            Expected::Traces(n) => Some(n),
            _ => None,
        }
    }
}

impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expected::Traces(n) => write!(f, "{}", group(*n)),
            Expected::Deadlock { passing } => write!(f, "{} + deadlock", group(*passing)),
            Expected::About { mantissa, exponent } => write!(
                f,
                "≈ {}.{:02}·10^{exponent}",
                mantissa / 100,
                mantissa % 100
            ),
        }
    }
}

/// One benchmark program and how to run it with each tool.
#[derive(Clone, Copy)]
pub struct Program {
    /// Short name used on the command line, e.g. `mutex_counter`.
    pub name: &'static str,
    /// Names of the parameters, e.g. `"t, k"` (empty if none).
    pub params: &'static str,
    /// Number of parameters.
    pub arity: usize,
    /// Threads spawned in one execution (loom allows at most 4).
    pub threads: fn(&[usize]) -> usize,
    /// Expected traces for these parameters without critical-section
    /// peeking (`Builder::peeking(false)`), where known.
    pub expected: fn(&[usize]) -> Option<Expected>,
    /// Expected traces with critical-section peeking.
    pub peeking: Peeking,
    /// One execution on kase's shims.
    pub kase: fn(&[usize]),
    /// One execution on loom's shims.
    pub loom: fn(&[usize]),
    /// One execution on shuttle's shims.
    pub shuttle: fn(&[usize]),
    /// Parameters of the full comparison, smallest first.
    pub rows: &'static [&'static [usize]],
    /// Parameters of `compare --quick`.
    pub quick: &'static [&'static [usize]],
}

/// What an exploration with critical-section peeking
/// (`Builder::peeking(true)`) should find.
#[derive(Clone, Copy)]
pub enum Peeking {
    /// The same as without peeking: the program has no mutex, or every two
    /// of its critical sections that could commute conflict anyway (they
    /// access the same location, one writes) or take another lock.
    Same,
    /// These counts, where known.
    Expected(fn(&[usize]) -> Option<Expected>),
    /// Not known.
    Unknown,
}

impl Program {
    /// Expected traces for these parameters with critical-section peeking,
    /// where known.
    pub fn expected_with_peeking(&self, params: &[usize]) -> Option<Expected> {
        match self.peeking {
            Peeking::Same => (self.expected)(params),
            Peeking::Expected(f) => f(params),
            Peeking::Unknown => None,
        }
    }
}

impl fmt::Debug for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Program")
            .field("name", &self.name)
            .field("params", &self.params)
            .finish_non_exhaustive()
    }
}

/// Most threads a loom model may spawn: loom allows 5 including `main`.
pub const LOOM_MAX_SPAWNED: usize = 4;

/// n!
pub fn factorial(n: u64) -> u64 {
    (1..=n).product()
}

/// C(n, k)
pub fn binomial(n: u64, k: u64) -> u64 {
    (0..k as u128).fold(1u128, |acc, i| acc * (n as u128 - i) / (i + 1)) as u64
}

/// The multinomial coefficient (Σ k)! / Π k!: the interleavings of
/// sequences of these lengths, as an [`Expected`] count (exact while it fits
/// in a `u64`).
pub fn interleavings(lengths: &[u64]) -> Expected {
    let log10_factorial = |n: u64| (2..=n).map(|i| (i as f64).log10()).sum::<f64>();
    let total: u64 = lengths.iter().sum();
    let log10 = log10_factorial(total) - lengths.iter().map(|&k| log10_factorial(k)).sum::<f64>();
    // Exact while it fits: a product of binomials, each at most the result.
    let mut count = Some(1u64);
    let mut placed = 0;
    for &k in lengths {
        placed += k;
        count = count
            .filter(|_| log10 < 19.0)
            .and_then(|c| c.checked_mul(binomial(placed, k)));
    }
    match count {
        Some(count) => Expected::Traces(count),
        None => Expected::about(log10),
    }
}

/// `n` with thin spaces between groups of three digits: `12 870`.
pub fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

/// `n` threads of `k` steps each.
fn catalog_interleavings(n: usize, k: u64) -> Expected {
    interleavings(&vec![k; n])
}

fn traces(n: u64) -> Option<Expected> {
    Some(Expected::Traces(n))
}

macro_rules! program {
    (
        $f:ident($($i:tt),*), params: $params:literal, arity: $arity:literal,
        threads: $threads:expr, expected: $expected:expr, peeking: $peeking:expr,
        rows: $rows:expr, quick: $quick:expr $(,)?
    ) => {
        Program {
            name: stringify!($f),
            params: $params,
            arity: $arity,
            threads: $threads,
            expected: $expected,
            peeking: $peeking,
            kase: |_p| crate::kase_models::$f($(_p[$i]),*),
            loom: |_p| crate::loom_models::$f($(_p[$i]),*),
            shuttle: |_p| crate::shuttle_models::$f($(_p[$i]),*),
            rows: $rows,
            quick: $quick,
        }
    };
}

/// Every program, in the order of the comparison table.
pub static PROGRAMS: &[Program] = &[
    program!(
        independent(0, 1), params: "n, k", arity: 2,
        threads: |p| p[0],
        expected: |_| traces(1),
        // No mutex: peeking changes nothing.
        peeking: Peeking::Same,
        rows: &[&[2, 1], &[3, 1], &[4, 1], &[4, 3]],
        quick: &[&[2, 1], &[3, 1]],
    ),
    program!(
        read_only(0, 1), params: "n, k", arity: 2,
        threads: |p| p[0],
        expected: |_| traces(1),
        // No mutex: peeking changes nothing.
        peeking: Peeking::Same,
        rows: &[&[3, 3], &[4, 3]],
        quick: &[&[3, 3]],
    ),
    program!(
        store_buffering(), params: "", arity: 0,
        threads: |_| 1,
        expected: |_| traces(3),
        // No mutex: peeking changes nothing.
        peeking: Peeking::Same,
        rows: &[&[]],
        quick: &[&[]],
    ),
    program!(
        message_passing(), params: "", arity: 0,
        threads: |_| 1,
        expected: |_| traces(2),
        // No mutex: peeking changes nothing.
        peeking: Peeking::Same,
        rows: &[&[]],
        quick: &[&[]],
    ),
    program!(
        two_plus_two_w(), params: "", arity: 0,
        threads: |_| 1,
        expected: |_| traces(3),
        // No mutex: peeking changes nothing.
        peeking: Peeking::Same,
        rows: &[&[]],
        quick: &[&[]],
    ),
    program!(
        iriw(), params: "", arity: 0,
        threads: |_| 4,
        expected: |_| traces(15),
        // No mutex: peeking changes nothing.
        peeking: Peeking::Same,
        rows: &[&[]],
        quick: &[&[]],
    ),
    program!(
        mutex_counter(0, 1), params: "t, k", arity: 2,
        threads: |p| p[0],
        expected: |p| {
            let (t, k) = (p[0] as u64, p[1] as u64);
            traces(factorial(t * k) / factorial(k).pow(t as u32))
        },
        // Every section writes the one counter: no two commute.
        peeking: Peeking::Same,
        rows: &[&[2, 2], &[3, 2], &[3, 3], &[4, 2]],
        quick: &[&[2, 2], &[3, 2]],
    ),
    program!(
        shared_fetch_add(0), params: "t", arity: 1,
        threads: |p| p[0],
        expected: |p| traces(factorial(p[0] as u64)),
        // No mutex: peeking changes nothing.
        peeking: Peeking::Same,
        rows: &[&[2], &[3], &[4], &[5], &[6]],
        quick: &[&[2], &[3]],
    ),
    program!(
        readers(0), params: "n", arity: 1,
        threads: |p| p[0],
        expected: |p| traces(1 << p[0]),
        // No mutex: peeking changes nothing.
        peeking: Peeking::Same,
        rows: &[&[2], &[4], &[8]],
        quick: &[&[2], &[3]],
    ),
    program!(
        account(0), params: "n", arity: 1,
        threads: |p| p[0] + 1,
        expected: |p| traces(factorial(p[0] as u64 + 1).pow(2)),
        // No mutex: peeking changes nothing.
        peeking: Peeking::Same,
        rows: &[&[1], &[2], &[3], &[4]],
        quick: &[&[1], &[2]],
    ),
    program!(
        lastzero(0), params: "n", arity: 1,
        threads: |p| p[0] + 1,
        expected: |p| {
            let n = p[0] as u64;
            if n >= 2 {
                traces((n + 3) << (n - 2))
            } else {
                None
            }
        },
        // No mutex: peeking changes nothing.
        peeking: Peeking::Same,
        rows: &[&[3], &[5], &[10]],
        quick: &[&[3]],
    ),
    program!(
        sdpor_exponential(0), params: "n", arity: 1,
        threads: |p| p[0] + 1,
        expected: |p| traces(2 * p[0] as u64),
        // No mutex: peeking changes nothing.
        peeking: Peeking::Same,
        rows: &[&[3], &[5], &[10], &[20]],
        quick: &[&[3], &[5]],
    ),
    program!(
        dining_philosophers(0), params: "n", arity: 1,
        threads: |p| p[0],
        expected: |p| Some(Expected::Deadlock { passing: (1 << p[0]) - 2 }),
        // Every outer section takes a second lock (an ordinary section).
        peeking: Peeking::Same,
        rows: &[&[3], &[4], &[5]],
        quick: &[&[3]],
    ),
    program!(
        casrot(0), params: "n", arity: 1,
        threads: |p| p[0],
        // A CAS counts as a write in kase today; with "a failed CAS is a
        // read" the counts would be 2, 5, 14, 43, 144 for n = 2..6.
        expected: |p| traces(factorial(p[0] as u64)),
        // No mutex: peeking changes nothing.
        peeking: Peeking::Same,
        rows: &[&[2], &[3], &[4], &[5]],
        quick: &[&[2], &[3]],
    ),
    program!(
        wcas(0), params: "n", arity: 1,
        threads: |p| p[0] + 1,
        // CAS = write: (n+1)!; failed CAS = read would give n·2^(n−1) + 1.
        expected: |p| traces(factorial(p[0] as u64 + 1)),
        // No mutex: peeking changes nothing.
        peeking: Peeking::Same,
        rows: &[&[2], &[3], &[4]],
        quick: &[&[2]],
    ),
    program!(
        disjoint_sections(0), params: "s", arity: 1,
        threads: |_| 2,
        // Every order of the 2s sections; with peeking the two threads'
        // sections never conflict.
        expected: |p| traces(binomial(2 * p[0] as u64, p[0] as u64)),
        peeking: Peeking::Expected(|_| traces(1)),
        rows: &[&[2], &[4], &[8]],
        quick: &[&[2], &[4]],
    ),
    program!(
        disjoint_write_sections(0), params: "s", arity: 1,
        threads: |_| 2,
        // As `disjoint_sections`: write sections of one `RwLock` commute
        // under peeking when their footprints do.
        expected: |p| traces(binomial(2 * p[0] as u64, p[0] as u64)),
        peeking: Peeking::Expected(|_| traces(1)),
        rows: &[&[2], &[4], &[8]],
        quick: &[&[2], &[4]],
    ),
    program!(
        indexer(0), params: "n", arity: 1,
        threads: |p| p[0],
        expected: |p| traces(8u64.pow(p[0].saturating_sub(11) as u32)),
        // Two threads' sections on one cell are a colliding insertion (both
        // read the cell, the first writes it); no other sections share a
        // mutex. Measured with peeking: 1, 1, 8, 64, 512 for n = 4, 11..14.
        peeking: Peeking::Same,
        rows: &[&[4], &[11], &[12], &[13], &[14]],
        quick: &[&[4]],
    ),
    program!(
        indexer_shared(0), params: "n", arity: 1,
        threads: |p| p[0],
        // Without peeking: every order of the 4n sections of the one mutex
        // (each thread's four in program order) while no insertion probes a
        // second cell (n ≤ 11); with collisions the count depends on the
        // probes and is not known.
        expected: |p| (p[0] <= 11).then(|| catalog_interleavings(p[0], 4)),
        // With peeking only sections on one cell conflict: those of the
        // colliding insertions of `indexer`.
        peeking: Peeking::Expected(|p| match p[0] {
            0..=11 => traces(1),
            n @ 12..=15 => traces(8u64.pow(n as u32 - 11)),
            _ => None,
        }),
        rows: &[&[4], &[10], &[11], &[12], &[13], &[14], &[15]],
        quick: &[&[2], &[4]],
    ),
    program!(
        filesystem(0), params: "n", arity: 1,
        threads: |p| p[0],
        expected: |p| traces(1 << p[0].saturating_sub(13)),
        // An inode section takes block locks (an ordinary section); two
        // threads' sections on one block both read it and the first writes.
        // Measured with peeking: 1, 1, 2, 8, 32 for n = 4, 13, 14, 16, 18.
        peeking: Peeking::Same,
        rows: &[&[4], &[13], &[14], &[16], &[18]],
        quick: &[&[4]],
    ),
    program!(
        disp(0, 1), params: "S, R", arity: 2,
        threads: |p| p[0] + p[1],
        expected: |p| match (p[0], p[1]) {
            (2, 2) => traces(32),
            (3, 2) => traces(59),
            (2, 3) => traces(150),
            (3, 3) => traces(398),
            (5, 2) => traces(137),
            (5, 3) => traces(1_482),
            (5, 4) => traces(15_282),
            (5, 5) => traces(151_032),
            (5, 6) => traces(1_437_552),
            _ => None,
        },
        // Every two sections of one mutex from different threads conflict:
        // on `k` the picker writes `sid`, main reads it; on `srv[v]` the
        // server reads `in`, main writes it. Measured with peeking: equal on
        // every row up to (5, 3).
        peeking: Peeking::Same,
        rows: &[&[2, 2], &[3, 2], &[2, 3], &[3, 3], &[5, 2], &[5, 3], &[5, 4]],
        quick: &[&[2, 2], &[3, 2]],
    ),
    program!(
        mpat(0), params: "k", arity: 1,
        threads: |p| 2 * p[0],
        expected: |p| traces(factorial(p[0] as u64) << p[0]),
        // The 2^k factor comes from the empty sections on `ma[i]`, which
        // commute with peeking.
        peeking: Peeking::Expected(|p| traces(factorial(p[0] as u64))),
        rows: &[&[2], &[3], &[4], &[5], &[6]],
        quick: &[&[2], &[3]],
    ),
    program!(
        mpc(0, 1), params: "P, W", arity: 2,
        threads: |p| p[0] + p[1],
        expected: |p| match (p[0], p[1]) {
            (2, 2) => traces(54),
            (2, 3) => traces(66),
            (3, 2) => traces(4_344),
            (2, 5) => traces(60),
            (3, 5) => traces(2_958),
            (4, 5) => traces(314_064),
            (5, 5) => traces(27_556_200),
            _ => None,
        },
        // Every two sections of one mutex from different threads conflict
        // (producers write `buf` and `req`, workers read `req`), so peeking
        // changes nothing.
        peeking: Peeking::Same,
        rows: &[&[2, 2], &[2, 3], &[2, 5], &[3, 2], &[3, 5]],
        quick: &[&[2, 2], &[2, 3]],
    ),
    program!(
        pi(0), params: "n", arity: 1,
        threads: |p| p[0],
        expected: |p| traces(factorial(p[0] as u64)),
        // Every section writes the one sum: no two commute.
        peeking: Peeking::Same,
        rows: &[&[3], &[5], &[6], &[7], &[8]],
        quick: &[&[3], &[4]],
    ),
    program!(
        pol(0, 1), params: "N, K", arity: 2,
        threads: |p| p[0] + 2 * p[1],
        expected: |p| match (p[0], p[1]) {
            (2, 1) => traces(4),
            (3, 1) => traces(6),
            (3, 2) => traces(33),
            (4, 2) => traces(60),
            (7, 3) => traces(2_440),
            (8, 3) => traces(3_700),
            (9, 3) => traces(5_332),
            (10, 3) => traces(7_384),
            (11, 3) => traces(9_904),
            (12, 3) => traces(12_940),
            _ => None,
        },
        // Every two sections of one mutex from different threads conflict
        // (`wa` writes `a[x]`, the reader reads it; the choice thread writes
        // `i`, the reader reads it). Measured with peeking: equal on every
        // row up to (4, 2).
        peeking: Peeking::Same,
        rows: &[
            &[2, 1], &[3, 1], &[3, 2], &[4, 2], &[7, 3], &[8, 3], &[9, 3], &[10, 3], &[11, 3],
            &[12, 3],
        ],
        quick: &[&[2, 1], &[3, 2]],
    ),
];

/// The program called `name`.
pub fn find(name: &str) -> Option<&'static Program> {
    PROGRAMS.iter().find(|p| p.name == name)
}

//! The weak-memory programs (`src/weak_programs.rs`): what each should show
//! under Rust's memory model (RC11), as run by `compare --weak`.

use std::fmt;

/// What a weak-memory program checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WeakKind {
    /// A litmus test: the program returns its outcome (the loads' values in
    /// thread order, then the final value of every location) and never
    /// panics.
    Litmus {
        /// The weak outcome.
        weak: &'static [usize],
        /// The weak outcome in words, e.g. `r0 = r1 = 0`.
        shows: &'static str,
        /// Whether RC11 allows the weak outcome.
        allowed: bool,
        /// Distinct outcomes RC11 allows.
        outcomes: usize,
    },
    /// A bug that RC11 lets happen: the program panics with this message.
    Bug {
        /// The panic message.
        message: &'static str,
    },
    /// A program from GenMC's test suite whose consistent graphs are
    /// counted (it neither fails nor returns an outcome).
    Count {
        /// Where the count comes from, e.g. `GenMC's CoA(4)`.
        source: &'static str,
    },
}

/// One weak-memory program and how to run it with each tool.
#[derive(Clone, Copy)]
pub struct WeakProgram {
    /// Short name used on the command line, e.g. `sb_relaxed`.
    pub name: &'static str,
    /// What it checks.
    pub kind: WeakKind,
    /// Consistent RC11 execution graphs (kase's `Report::traces`) of a
    /// passing program; for a bug, of nothing (exploration stops at it).
    pub graphs: Option<u64>,
    /// One execution on kase's shims (explore it under
    /// `MemoryModel::Rc11`).
    pub kase: fn() -> Vec<usize>,
    /// One execution on loom's shims.
    pub loom: fn() -> Vec<usize>,
    /// One execution on shuttle's shims.
    pub shuttle: fn() -> Vec<usize>,
}

impl WeakProgram {
    /// Whether RC11 allows the weak outcome (a bug: always).
    pub fn allowed(&self) -> bool {
        match self.kind {
            WeakKind::Litmus { allowed, .. } => allowed,
            WeakKind::Bug { .. } => true,
            WeakKind::Count { .. } => false,
        }
    }

    /// Whether `outcome` is the weak one (a bug shows as a panic instead).
    pub fn is_weak(&self, outcome: &[usize]) -> bool {
        matches!(self.kind, WeakKind::Litmus { weak, .. } if weak == outcome)
    }

    /// The weak outcome or the bug, in words.
    pub fn shows(&self) -> &'static str {
        match self.kind {
            WeakKind::Litmus { shows, .. } => shows,
            WeakKind::Bug { message } => message,
            WeakKind::Count { source } => source,
        }
    }
}

impl fmt::Debug for WeakProgram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WeakProgram")
            .field("name", &self.name)
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

macro_rules! weak {
    ($f:ident, $kind:expr, graphs: $graphs:expr $(,)?) => {
        WeakProgram {
            name: stringify!($f),
            kind: $kind,
            graphs: $graphs,
            kase: crate::kase_models::weak::$f,
            loom: crate::loom_models::weak::$f,
            shuttle: crate::shuttle_models::weak::$f,
        }
    };
}

/// A litmus test whose weak outcome RC11 allows.
const fn allowed(weak: &'static [usize], shows: &'static str, outcomes: usize) -> WeakKind {
    WeakKind::Litmus {
        weak,
        shows,
        allowed: true,
        outcomes,
    }
}

/// A litmus test whose weak outcome RC11 forbids.
const fn forbidden(weak: &'static [usize], shows: &'static str, outcomes: usize) -> WeakKind {
    WeakKind::Litmus {
        weak,
        shows,
        allowed: false,
        outcomes,
    }
}

/// Every weak-memory program, in the order of the comparison table. The
/// graph and outcome counts are those of kase's own litmus tests
/// (`tests/exploration/weak_memory.rs`, checked there against an exhaustive
/// oracle); they agree with GenMC's RC11 counts where `WEAK-MEMORY.md` lists
/// them (SB, 2+2W, LB, IRIW, S).
pub static WEAK_PROGRAMS: &[WeakProgram] = &[
    // Outcomes end with the final value of every location (x, y, z).
    weak!(sb_relaxed, allowed(&[0, 0, 1, 1], "r0 = r1 = 0", 4), graphs: Some(4)),
    weak!(sb_seq_cst, forbidden(&[0, 0, 1, 1], "r0 = r1 = 0", 3), graphs: Some(3)),
    weak!(sb_fences, forbidden(&[0, 0, 1, 1], "r0 = r1 = 0", 3), graphs: Some(3)),
    weak!(mp_relaxed, allowed(&[1, 0, 1, 1], "r0 = 1, r1 = 0", 4), graphs: Some(4)),
    weak!(lb_relaxed, forbidden(&[1, 1, 1, 1], "r0 = r1 = 1", 3), graphs: Some(3)),
    weak!(
        two_plus_two_w_relaxed,
        allowed(&[1, 1], "final x = y = 1", 4),
        graphs: Some(4),
    ),
    weak!(iriw_relaxed, allowed(&[1, 0, 1, 0, 1, 1], "1, 0, 1, 0", 16), graphs: Some(16)),
    weak!(iriw_seq_cst, forbidden(&[1, 0, 1, 0, 1, 1], "1, 0, 1, 0", 15), graphs: Some(15)),
    weak!(wrc_relaxed, allowed(&[1, 1, 0, 1, 1], "r0 = r1 = 1, r2 = 0", 8), graphs: Some(8)),
    weak!(isa2_relaxed, allowed(&[1, 1, 0, 1, 1, 1], "r0 = r1 = 1, r2 = 0", 8), graphs: Some(8)),
    weak!(r_relaxed, allowed(&[0, 1, 2], "r0 = 0, final y = 2", 4), graphs: Some(4)),
    weak!(s_relaxed, allowed(&[1, 2, 1], "r0 = 1, final x = 2", 4), graphs: Some(4)),
    weak!(corr_relaxed, forbidden(&[1, 0, 1], "r0 = 1, r1 = 0", 3), graphs: Some(3)),
    weak!(
        mp_relaxed_flag,
        WeakKind::Bug { message: "flag seen, data stale" },
        graphs: None,
    ),
    weak!(
        dekker_release_acquire,
        WeakKind::Bug { message: "both threads in the critical section" },
        graphs: None,
    ),
    weak!(
        peterson_release_acquire,
        WeakKind::Bug { message: "both threads in the critical section" },
        graphs: None,
    ),
    weak!(
        seqlock_without_fences,
        WeakKind::Bug { message: "torn read accepted" },
        graphs: None,
    ),
    // GenMC's RC11 counts (WEAK-MEMORY.md).
    weak!(coa4, WeakKind::Count { source: "GenMC's CoA(4)" }, graphs: Some(2_304)),
    weak!(coa5, WeakKind::Count { source: "GenMC's CoA(5)" }, graphs: Some(57_600)),
    weak!(
        lastzero10_release_acquire,
        WeakKind::Count { source: "GenMC's lastzero(10)" },
        graphs: Some(3_328),
    ),
    weak!(
        fib_bench5,
        WeakKind::Count { source: "GenMC's fib_bench(5)" },
        graphs: Some(525_630),
    ),
];

/// The weak-memory program called `name`.
pub fn find_weak(name: &str) -> Option<&'static WeakProgram> {
    WEAK_PROGRAMS.iter().find(|p| p.name == name)
}

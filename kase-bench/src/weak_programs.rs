// The weak-memory programs: litmus tests and bugs that live in atomics'
// orderings. Written once against `Arc`, the atomics, `fence` and `thread` as
// imported by the including module (kase's, loom's or shuttle's), like
// `programs.rs`. Each function is the body of one execution and returns its
// outcome: a litmus test what its threads' loads read (in thread order), then
// the final value of every location; a bug program nothing (it panics when
// the bug shows). `catalog::WEAK_PROGRAMS` says which outcome is the weak one
// and whether Rust's memory model (RC11) allows it.

/// One litmus thread: it gets the shared locations and returns what it read.
type Body = Box<dyn FnOnce(&[AtomicUsize]) -> Vec<usize> + Send>;

/// Runs each body in its own spawned thread on `locations` shared atomics
/// (all 0) and returns the reads of every thread, then the final values.
fn litmus(locations: usize, bodies: Vec<Body>) -> Vec<usize> {
    let v: Arc<Vec<AtomicUsize>> = Arc::new((0..locations).map(|_| AtomicUsize::new(0)).collect());
    let handles: Vec<_> = bodies
        .into_iter()
        .map(|body| {
            let v = v.clone();
            thread::spawn(move || body(&v))
        })
        .collect();
    let mut outcome: Vec<usize> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    // After the joins every store happens-before these loads: no choice.
    outcome.extend(v.iter().map(|x| x.load(Relaxed)));
    outcome
}

/// A store of 1 to location `at`, a `SeqCst` fence if `fenced`, then a load
/// of the other location.
fn store_then_load(at: usize, store: Ordering, load: Ordering, fenced: bool) -> Body {
    Box::new(move |v: &[AtomicUsize]| {
        v[at].store(1, store);
        if fenced {
            fence(SeqCst);
        }
        vec![v[1 - at].load(load)]
    })
}

/// SB: `x = 1; r0 = y ‖ y = 1; r1 = x`. Weak: r0 = r1 = 0.
fn sb(order: Ordering, fenced: bool) -> Vec<usize> {
    litmus(
        2,
        vec![
            store_then_load(0, order, order, fenced),
            store_then_load(1, order, order, fenced),
        ],
    )
}

/// SB with `Relaxed` accesses: RC11 allows r0 = r1 = 0.
pub fn sb_relaxed() -> Vec<usize> {
    sb(Relaxed, false)
}

/// SB with `SeqCst` accesses: r0 = r1 = 0 is forbidden.
pub fn sb_seq_cst() -> Vec<usize> {
    sb(SeqCst, false)
}

/// SB with `Relaxed` accesses and a `SeqCst` fence between each thread's
/// store and load: r0 = r1 = 0 is forbidden.
pub fn sb_fences() -> Vec<usize> {
    sb(Relaxed, true)
}

/// MP: `x = 1; y = 1 ‖ r0 = y; r1 = x`, all `Relaxed`. Weak (allowed):
/// r0 = 1, r1 = 0.
pub fn mp_relaxed() -> Vec<usize> {
    litmus(
        2,
        vec![
            Box::new(|v: &[AtomicUsize]| {
                v[0].store(1, Relaxed);
                v[1].store(1, Relaxed);
                vec![]
            }),
            Box::new(|v: &[AtomicUsize]| vec![v[1].load(Relaxed), v[0].load(Relaxed)]),
        ],
    )
}

/// LB: `r0 = x; y = 1 ‖ r1 = y; x = 1`, all `Relaxed`. r0 = r1 = 1 is
/// forbidden (RC11 forbids load buffering: no cycle of program order and
/// reads-from).
pub fn lb_relaxed() -> Vec<usize> {
    let load_then_store = |from: usize| -> Body {
        Box::new(move |v: &[AtomicUsize]| {
            let r = v[from].load(Relaxed);
            v[1 - from].store(1, Relaxed);
            vec![r]
        })
    };
    litmus(2, vec![load_then_store(0), load_then_store(1)])
}

/// 2+2W: `x = 1; y = 2 ‖ y = 1; x = 2`, all `Relaxed`. Weak (allowed): both
/// final values 1.
pub fn two_plus_two_w_relaxed() -> Vec<usize> {
    let stores = |first: usize| -> Body {
        Box::new(move |v: &[AtomicUsize]| {
            v[first].store(1, Relaxed);
            v[1 - first].store(2, Relaxed);
            vec![]
        })
    };
    litmus(2, vec![stores(0), stores(1)])
}

/// IRIW: `x = 1 ‖ y = 1 ‖ r0 = x; r1 = y ‖ r2 = y; r3 = x`. Weak: the
/// readers see the writes in opposite orders, 1, 0, 1, 0.
fn iriw(order: Ordering) -> Vec<usize> {
    let write = |at: usize| -> Body {
        Box::new(move |v: &[AtomicUsize]| {
            v[at].store(1, order);
            vec![]
        })
    };
    let read = |first: usize| -> Body {
        Box::new(move |v: &[AtomicUsize]| vec![v[first].load(order), v[1 - first].load(order)])
    };
    litmus(2, vec![write(0), write(1), read(0), read(1)])
}

/// IRIW with `Relaxed` accesses: RC11 allows 1, 0, 1, 0.
pub fn iriw_relaxed() -> Vec<usize> {
    iriw(Relaxed)
}

/// IRIW with `SeqCst` accesses: 1, 0, 1, 0 is forbidden.
pub fn iriw_seq_cst() -> Vec<usize> {
    iriw(SeqCst)
}

/// WRC: `x = 1 ‖ r0 = x; y = 1 ‖ r1 = y; r2 = x`, all `Relaxed`. Weak
/// (allowed): 1, 1, 0.
pub fn wrc_relaxed() -> Vec<usize> {
    litmus(
        2,
        vec![
            Box::new(|v: &[AtomicUsize]| {
                v[0].store(1, Relaxed);
                vec![]
            }),
            Box::new(|v: &[AtomicUsize]| {
                let r = v[0].load(Relaxed);
                v[1].store(1, Relaxed);
                vec![r]
            }),
            Box::new(|v: &[AtomicUsize]| vec![v[1].load(Relaxed), v[0].load(Relaxed)]),
        ],
    )
}

/// ISA2: `x = 1; y = 1 ‖ r0 = y; z = 1 ‖ r1 = z; r2 = x`, all `Relaxed`.
/// Weak (allowed): 1, 1, 0.
pub fn isa2_relaxed() -> Vec<usize> {
    litmus(
        3,
        vec![
            Box::new(|v: &[AtomicUsize]| {
                v[0].store(1, Relaxed);
                v[1].store(1, Relaxed);
                vec![]
            }),
            Box::new(|v: &[AtomicUsize]| {
                let r = v[1].load(Relaxed);
                v[2].store(1, Relaxed);
                vec![r]
            }),
            Box::new(|v: &[AtomicUsize]| vec![v[2].load(Relaxed), v[0].load(Relaxed)]),
        ],
    )
}

/// R: `x = 1; y = 1 ‖ y = 2; r0 = x`, all `Relaxed`. Weak (allowed):
/// r0 = 0 with the final y = 2.
pub fn r_relaxed() -> Vec<usize> {
    litmus(
        2,
        vec![
            Box::new(|v: &[AtomicUsize]| {
                v[0].store(1, Relaxed);
                v[1].store(1, Relaxed);
                vec![]
            }),
            Box::new(|v: &[AtomicUsize]| {
                v[1].store(2, Relaxed);
                vec![v[0].load(Relaxed)]
            }),
        ],
    )
}

/// S: `x = 2; y = 1 ‖ r0 = y; x = 1`, all `Relaxed`. Weak (allowed):
/// r0 = 1 with the final x = 2.
pub fn s_relaxed() -> Vec<usize> {
    litmus(
        2,
        vec![
            Box::new(|v: &[AtomicUsize]| {
                v[0].store(2, Relaxed);
                v[1].store(1, Relaxed);
                vec![]
            }),
            Box::new(|v: &[AtomicUsize]| {
                let r = v[1].load(Relaxed);
                v[0].store(1, Relaxed);
                vec![r]
            }),
        ],
    )
}

/// CoRR: `x = 1 ‖ r0 = x; r1 = x`, all `Relaxed`. r0 = 1, r1 = 0 is
/// forbidden (coherence holds for every ordering).
pub fn corr_relaxed() -> Vec<usize> {
    litmus(
        1,
        vec![
            Box::new(|v: &[AtomicUsize]| {
                v[0].store(1, Relaxed);
                vec![]
            }),
            Box::new(|v: &[AtomicUsize]| vec![v[0].load(Relaxed), v[0].load(Relaxed)]),
        ],
    )
}

/// Message passing of atomic data behind a `Relaxed` flag: the reader may
/// see the flag and still read the old data ("flag seen, data stale").
pub fn mp_relaxed_flag() -> Vec<usize> {
    let data = Arc::new(AtomicUsize::new(0));
    let flag = Arc::new(AtomicBool::new(false));
    let (d, f) = (data.clone(), flag.clone());
    let t = thread::spawn(move || {
        d.store(42, Relaxed);
        f.store(true, Relaxed);
    });
    if flag.load(Relaxed) {
        assert_eq!(data.load(Relaxed), 42, "flag seen, data stale");
    }
    t.join().unwrap();
    vec![]
}

/// Dekker's entry protocol with `Release` stores and `Acquire` loads, checked
/// once: raise my flag, enter if the other's is down. Store buffering lets
/// both enter ("both threads in the critical section").
pub fn dekker_release_acquire() -> Vec<usize> {
    let flags = Arc::new([AtomicBool::new(false), AtomicBool::new(false)]);
    let inside = Arc::new(AtomicUsize::new(0));
    let enter = |me: usize, flags: &[AtomicBool; 2], inside: &AtomicUsize| {
        flags[me].store(true, Release);
        if !flags[1 - me].load(Acquire) {
            inside.fetch_add(1, Relaxed);
        }
    };
    let (f, i) = (flags.clone(), inside.clone());
    let t = thread::spawn(move || enter(1, &f, &i));
    enter(0, &flags, &inside);
    t.join().unwrap();
    assert!(
        inside.load(Relaxed) < 2,
        "both threads in the critical section"
    );
    vec![]
}

/// Peterson's entry protocol with `Release` stores and `Acquire` loads,
/// checked once: raise my flag, give the turn away, enter unless the other
/// wants in and has the turn. Both may enter.
pub fn peterson_release_acquire() -> Vec<usize> {
    let flags = Arc::new([AtomicBool::new(false), AtomicBool::new(false)]);
    let turn = Arc::new(AtomicUsize::new(0));
    let inside = Arc::new(AtomicUsize::new(0));
    let enter = |me: usize, flags: &[AtomicBool; 2], turn: &AtomicUsize, inside: &AtomicUsize| {
        let other = 1 - me;
        flags[me].store(true, Release);
        turn.store(other, Release);
        if !(flags[other].load(Acquire) && turn.load(Acquire) == other) {
            inside.fetch_add(1, Relaxed);
        }
    };
    let (f, t2, i) = (flags.clone(), turn.clone(), inside.clone());
    let t = thread::spawn(move || enter(1, &f, &t2, &i));
    enter(0, &flags, &turn, &inside);
    t.join().unwrap();
    assert!(
        inside.load(Relaxed) < 2,
        "both threads in the critical section"
    );
    vec![]
}

/// A seqlock over two atomic words without its fences: the writer makes the
/// sequence odd, writes, makes it even (`Release`); the reader keeps what it
/// read if the sequence was even and unchanged. Nothing orders the data
/// loads before the second sequence load ("torn read accepted").
pub fn seqlock_without_fences() -> Vec<usize> {
    let seq = Arc::new(AtomicUsize::new(0));
    let data = Arc::new([AtomicUsize::new(0), AtomicUsize::new(0)]);
    let (s, d) = (seq.clone(), data.clone());
    let writer = thread::spawn(move || {
        s.store(1, Relaxed);
        d[0].store(1, Relaxed);
        d[1].store(1, Relaxed);
        s.store(2, Release);
    });
    let before = seq.load(Acquire);
    let words = [data[0].load(Relaxed), data[1].load(Relaxed)];
    let after = seq.load(Relaxed);
    if before == after && before % 2 == 0 {
        assert_eq!(words[0], words[1], "torn read accepted");
    }
    writer.join().unwrap();
    vec![]
}

/// GenMC's CoA(n) (`tests/correct/synthetic/CoA`): two threads store to `x`,
/// then read `y` (or `z`) and `x`; `n - 1` threads store `y` then `z`, all
/// Release/Acquire. Returns nothing: its graphs are what it measures.
fn coa(n: usize) -> Vec<usize> {
    let v: Arc<[AtomicUsize; 3]> = Arc::new([
        AtomicUsize::new(0),
        AtomicUsize::new(0),
        AtomicUsize::new(0),
    ]);
    let mut threads = Vec::new();
    for (value, other) in [(1, 1), (2, 2)] {
        let v = v.clone();
        threads.push(thread::spawn(move || {
            v[0].store(value, Release);
            v[other].load(Acquire);
            v[0].load(Acquire);
        }));
    }
    for i in 0..n - 1 {
        let v = v.clone();
        threads.push(thread::spawn(move || {
            v[1].store(i, Release);
            v[2].store(i, Release);
        }));
    }
    for t in threads {
        t.join().unwrap();
    }
    vec![]
}

/// CoA(4): GenMC counts 2 304 RC11 graphs.
pub fn coa4() -> Vec<usize> {
    coa(4)
}

/// CoA(5): GenMC counts 57 600 RC11 graphs.
pub fn coa5() -> Vec<usize> {
    coa(5)
}

/// lastzero(n) with Release/Acquire: a reader scans `a[n..=0]` for the last
/// zero while writer `j` stores `a[j] = a[j - 1] + 1`. GenMC counts
/// (n + 3)·2^(n − 2) graphs.
fn lastzero_release_acquire(n: usize) -> Vec<usize> {
    let a: Arc<Vec<AtomicUsize>> = Arc::new((0..=n).map(|_| AtomicUsize::new(0)).collect());
    let reader = {
        let a = a.clone();
        thread::spawn(move || {
            let mut i = n;
            while a[i].load(Acquire) != 0 {
                i -= 1;
            }
        })
    };
    let writers: Vec<_> = (1..=n)
        .map(|j| {
            let a = a.clone();
            thread::spawn(move || {
                let v = a[j - 1].load(Acquire);
                a[j].store(v + 1, Release);
            })
        })
        .collect();
    reader.join().unwrap();
    for w in writers {
        w.join().unwrap();
    }
    vec![]
}

/// lastzero(10) with Release/Acquire: 3 328 graphs.
pub fn lastzero10_release_acquire() -> Vec<usize> {
    lastzero_release_acquire(10)
}

/// GenMC's fib_bench(n) (`tests/correct/fib_bench`): two threads each add
/// `x` and `y` into their own one, `n` times; a third checks both are at
/// most 144 (Release/Acquire; `x = y = 1` first).
fn fib_bench(n: usize) -> Vec<usize> {
    let v: Arc<[AtomicUsize; 2]> = Arc::new([AtomicUsize::new(1), AtomicUsize::new(1)]);
    let mut threads = Vec::new();
    for target in 0..2 {
        let v = v.clone();
        threads.push(thread::spawn(move || {
            for _ in 0..n {
                let sum = v[0].load(Acquire) + v[1].load(Acquire);
                v[target].store(sum, Release);
            }
        }));
    }
    let reader = v.clone();
    threads.push(thread::spawn(move || {
        let big = reader[0].load(Acquire) > 144 || reader[1].load(Acquire) > 144;
        assert!(!big, "fib_bench went past 144");
    }));
    for t in threads {
        t.join().unwrap();
    }
    vec![]
}

/// fib_bench(5): GenMC counts 525 630 RC11 graphs.
pub fn fib_bench5() -> Vec<usize> {
    fib_bench(5)
}

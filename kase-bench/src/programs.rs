// The benchmark programs, written once against `Arc`, `Mutex`, the atomics
// and `thread` as imported by the including module (kase's, loom's or
// shuttle's), so that every tool runs exactly the same code. Each function is
// the body of one execution. Atomics are `SeqCst` throughout; "Thread counts"
// below are spawned threads (loom allows at most 4 in one execution).

/// Spawns `n` threads running `f(0)`, ..., `f(n - 1)`.
fn spawn_all<F>(n: usize, f: F) -> Vec<thread::JoinHandle<()>>
where
    F: Fn(usize) + Send + Sync + Clone + 'static,
{
    (0..n)
        .map(|i| {
            let f = f.clone();
            thread::spawn(move || f(i))
        })
        .collect()
}

/// Joins every handle, propagating a panic of a joined thread.
fn join_all(handles: Vec<thread::JoinHandle<()>>) {
    for h in handles {
        h.join().unwrap();
    }
}

/// A `Vec` of `n` atomics, all 0, behind an `Arc`.
fn atomics(n: usize) -> Arc<Vec<AtomicUsize>> {
    Arc::new((0..n).map(|_| AtomicUsize::new(0)).collect())
}

/// A `Vec` of `n` mutexes holding `init`, behind an `Arc`.
fn mutexes<T: Clone>(n: usize, init: T) -> Arc<Vec<Mutex<T>>> {
    Arc::new((0..n).map(|_| Mutex::new(init.clone())).collect())
}

/// independent(n, k): `n` threads, each `fetch_add`s its own atomic `k`
/// times. 1 trace.
pub fn independent(n: usize, k: usize) {
    let x = atomics(n);
    join_all(spawn_all(n, move |i| {
        for _ in 0..k {
            x[i].fetch_add(1, SeqCst);
        }
    }));
}

/// read-only(n, k): `n` threads each load one shared atomic `k` times.
/// 1 trace.
pub fn read_only(n: usize, k: usize) {
    let x = Arc::new(AtomicUsize::new(0));
    join_all(spawn_all(n, move |_| {
        for _ in 0..k {
            x.load(SeqCst);
        }
    }));
}

/// Store buffering: T1: `x = 1; r1 = y`, main: `y = 1; r2 = x`. 3 traces,
/// outcomes (0, 1), (1, 0), (1, 1). (No assertion on the outcome: loom
/// explores (0, 0) too, as it models `SeqCst` accesses more weakly.)
pub fn store_buffering() {
    let x = Arc::new(AtomicUsize::new(0));
    let y = Arc::new(AtomicUsize::new(0));
    let (x1, y1) = (x.clone(), y.clone());
    let t = thread::spawn(move || {
        x1.store(1, SeqCst);
        y1.load(SeqCst)
    });
    y.store(1, SeqCst);
    let r2 = x.load(SeqCst);
    let r1 = t.join().unwrap();
    std::hint::black_box((r1, r2));
}

/// Message passing: T1: `d = 42; f = 1`, main: `if f == 1 { read d }`.
/// 2 traces.
pub fn message_passing() {
    let d = Arc::new(AtomicUsize::new(0));
    let f = Arc::new(AtomicUsize::new(0));
    let (d1, f1) = (d.clone(), f.clone());
    let t = thread::spawn(move || {
        d1.store(42, SeqCst);
        f1.store(1, SeqCst);
    });
    if f.load(SeqCst) == 1 {
        assert_eq!(d.load(SeqCst), 42);
    }
    t.join().unwrap();
}

/// 2+2W: T1: `x = 1; y = 2`, main: `y = 1; x = 2`. 3 traces.
pub fn two_plus_two_w() {
    let x = Arc::new(AtomicUsize::new(0));
    let y = Arc::new(AtomicUsize::new(0));
    let (x1, y1) = (x.clone(), y.clone());
    let t = thread::spawn(move || {
        x1.store(1, SeqCst);
        y1.store(2, SeqCst);
    });
    y.store(1, SeqCst);
    x.store(2, SeqCst);
    t.join().unwrap();
}

/// IRIW: two writers (`x = 1`, `y = 1`) and two readers reading `x, y` and
/// `y, x`. 15 traces. (No assertion on the outcome, as for store buffering.)
pub fn iriw() {
    let x = Arc::new(AtomicUsize::new(0));
    let y = Arc::new(AtomicUsize::new(0));
    let (xa, ya, xb, yb, xc, yc) = (
        x.clone(),
        y.clone(),
        x.clone(),
        y.clone(),
        x.clone(),
        y.clone(),
    );
    let w1 = thread::spawn(move || xa.store(1, SeqCst));
    let w2 = thread::spawn(move || ya.store(1, SeqCst));
    let r1 = thread::spawn(move || (xb.load(SeqCst), yb.load(SeqCst)));
    let r2 = thread::spawn(move || (yc.load(SeqCst), xc.load(SeqCst)));
    w1.join().unwrap();
    w2.join().unwrap();
    std::hint::black_box((r1.join().unwrap(), r2.join().unwrap()));
}

/// mutex counter(t, k): `t` threads each lock one mutex `k` times and
/// increment the counter it guards. (t·k)!/(k!)^t traces.
pub fn mutex_counter(t: usize, k: usize) {
    let m = Arc::new(Mutex::new(0usize));
    let m2 = m.clone();
    join_all(spawn_all(t, move |_| {
        for _ in 0..k {
            *m2.lock().unwrap() += 1;
        }
    }));
    assert_eq!(*m.lock().unwrap(), t * k);
}

/// shared fetch_add(t): `t` threads, one `fetch_add` each on one atomic.
/// t! traces.
pub fn shared_fetch_add(t: usize) {
    let x = Arc::new(AtomicUsize::new(0));
    let x2 = x.clone();
    join_all(spawn_all(t, move |_| {
        x2.fetch_add(1, SeqCst);
    }));
    assert_eq!(x.load(SeqCst), t);
}

/// readers(n): `n` reader threads load `x` while main stores `x = 42`.
/// 2^n traces.
pub fn readers(n: usize) {
    let x = Arc::new(AtomicUsize::new(0));
    let x2 = x.clone();
    let handles = spawn_all(n, move |_| {
        x2.load(SeqCst);
    });
    x.store(42, SeqCst);
    join_all(handles);
}

/// account(n): `n` depositors `t = a; a = t + 100` and one withdrawer
/// `t = a; a = t - 10` (a load, then a store). ((n+1)!)² traces.
pub fn account(n: usize) {
    let a = Arc::new(AtomicUsize::new(1000));
    join_all(spawn_all(n + 1, move |i| {
        let t = a.load(SeqCst);
        a.store(if i == 0 { t - 10 } else { t + 100 }, SeqCst);
    }));
}

/// lastzero(n): `a[0..=n] = 0`; a reader scans `i = n` down to 0 and stops
/// at the first `a[i] == 0`; writer `j` (1..=n) does `a[j] = a[j-1] + 1`.
/// (n+3)·2^(n−2) traces. n + 1 threads.
pub fn lastzero(n: usize) {
    let a = atomics(n + 1);
    let a2 = a.clone();
    let reader = thread::spawn(move || {
        let mut i = n;
        while a2[i].load(SeqCst) != 0 {
            i -= 1;
        }
    });
    let writers = spawn_all(n, move |j| {
        let j = j + 1;
        let v = a[j - 1].load(SeqCst);
        a[j].store(v + 1, SeqCst);
    });
    reader.join().unwrap();
    join_all(writers);
}

/// SDPOR-exponential(n): writer `j` stores `x[j]`; a counter thread stores
/// `c = 1, ..., n − 1`; main does `i = c; x[i] = 0`. 2n traces. n + 1
/// threads.
pub fn sdpor_exponential(n: usize) {
    let x = atomics(n);
    let c = Arc::new(AtomicUsize::new(0));
    let x2 = x.clone();
    let writers = spawn_all(n, move |j| x2[j].store(j + 7, SeqCst));
    let c2 = c.clone();
    let counter = thread::spawn(move || {
        for v in 1..n {
            c2.store(v, SeqCst);
        }
    });
    let i = c.load(SeqCst);
    x[i].store(0, SeqCst);
    join_all(writers);
    counter.join().unwrap();
}

/// dining philosophers(n): philosopher `i` locks fork `i`, then fork
/// `(i + 1) % n`, one round. 2^n − 2 complete traces and one deadlock.
pub fn dining_philosophers(n: usize) {
    let forks = mutexes(n, ());
    join_all(spawn_all(n, move |i| {
        let _left = forks[i].lock().unwrap();
        let _right = forks[(i + 1) % n].lock().unwrap();
    }));
}

/// casrot(n): thread `t` (1..=n) does `CAS(x, t − 1 → t)`. n! traces if a
/// CAS is a write; 2, 5, 14, 43, 144 for n = 2..6 if a failed CAS is a read.
pub fn casrot(n: usize) {
    let x = Arc::new(AtomicUsize::new(0));
    join_all(spawn_all(n, move |t| {
        let _ = x.compare_exchange(t, t + 1, SeqCst, SeqCst);
    }));
}

/// wcas(n): one thread stores `x = 2`; `n` threads `CAS(x, 2 → 3)`.
/// (n+1)! traces if a CAS is a write; n·2^(n−1) + 1 if a failed CAS is a
/// read. n + 1 threads.
pub fn wcas(n: usize) {
    let x = Arc::new(AtomicUsize::new(0));
    let x2 = x.clone();
    let writer = thread::spawn(move || x2.store(2, SeqCst));
    let cas = spawn_all(n, move |_| {
        let _ = x.compare_exchange(2, 3, SeqCst, SeqCst);
    });
    writer.join().unwrap();
    join_all(cas);
}

/// disjoint critical sections(s): 2 threads × `s` sections of one mutex;
/// thread 1 touches atomics `0..s`, thread 2 atomics `s..2s`. Without
/// peeking C(2s, s) traces; with peeking 1.
pub fn disjoint_sections(s: usize) {
    let m = Arc::new(Mutex::new(()));
    let cells = atomics(2 * s);
    join_all(spawn_all(2, move |t| {
        for i in 0..s {
            let _g = m.lock().unwrap();
            cells[t * s + i].fetch_add(1, SeqCst);
        }
    }));
}

/// disjoint write sections(s): `disjoint_sections` with the write lock of
/// one `RwLock` instead of a mutex. Without peeking C(2s, s) traces; with
/// peeking 1.
pub fn disjoint_write_sections(s: usize) {
    let l = Arc::new(RwLock::new(()));
    let cells = atomics(2 * s);
    join_all(spawn_all(2, move |t| {
        for i in 0..s {
            let _g = l.write().unwrap();
            cells[t * s + i].fetch_add(1, SeqCst);
        }
    }));
}

/// indexer(n): thread `tid` inserts `w = 11·m + tid` (m = 1..=4) into a
/// 128-cell hash table with linear probing, each cell guarded by its own
/// mutex. 1 trace for n ≤ 11, 8^(n−11) for n = 12..15.
pub fn indexer(n: usize) {
    const SIZE: usize = 128;
    let table = mutexes(SIZE, 0usize);
    join_all(spawn_all(n, move |tid| {
        for m in 1..=4 {
            let w = 11 * m + tid;
            let mut h = (7 * w) % SIZE;
            loop {
                let mut cell = table[h].lock().unwrap();
                if *cell == 0 {
                    *cell = w;
                    break;
                }
                drop(cell);
                h = (h + 1) % SIZE;
            }
        }
    }));
}

/// indexer_shared(n), IndexerSafe of the peeking paper: the same insertions
/// as [`indexer`], but the 128 cells are atomics and every
/// compare-and-swap `if table[h] == 0 { table[h] = w }` runs inside a
/// critical section of one shared `Mutex<()>`. Without peeking every order of
/// the sections is a different trace ((4n)!/(4!)^n for n ≤ 11, where no
/// insertion probes twice); with peeking sections on different cells commute:
/// 1 trace for n ≤ 11, 8^(n−11) for n = 12..15 (the collisions of
/// `indexer`).
pub fn indexer_shared(n: usize) {
    const SIZE: usize = 128;
    let table = atomics(SIZE);
    let lock = Arc::new(Mutex::new(()));
    join_all(spawn_all(n, move |tid| {
        for m in 1..=4 {
            let w = 11 * m + tid;
            let mut h = (7 * w) % SIZE;
            loop {
                let section = lock.lock().unwrap();
                if table[h].load(SeqCst) == 0 {
                    table[h].store(w, SeqCst);
                    break;
                }
                drop(section);
                h = (h + 1) % SIZE;
            }
        }
    }));
}

/// filesystem(n): 32 inodes and 26 blocks, each behind a mutex. Thread
/// `tid` locks inode `tid % 32`; if it has no block, it probes blocks from
/// `(2i) % 26` (lock, test, claim, unlock; up to 10 probes); then unlocks
/// the inode. 1 trace for n ≤ 13, 2^(n−13) for 14 ≤ n ≤ 26.
pub fn filesystem(n: usize) {
    const INODES: usize = 32;
    const BLOCKS: usize = 26;
    let inodes = mutexes(INODES, 0usize);
    let blocks = mutexes(BLOCKS, false);
    join_all(spawn_all(n, move |tid| {
        let i = tid % INODES;
        let mut inode = inodes[i].lock().unwrap();
        if *inode == 0 {
            let mut b = (2 * i) % BLOCKS;
            for _ in 0..10 {
                let mut busy = blocks[b].lock().unwrap();
                if !*busy {
                    *busy = true;
                    *inode = b + 1;
                    break;
                }
                drop(busy);
                b = (b + 1) % BLOCKS;
            }
        }
    }));
}

/// Disp(S, R), the job dispatcher of the quasi-optimal POR paper: mutex `k`
/// guards `sid` (never reset); server `v` (S threads) runs one section on
/// `srv[v]`: if `in > 0 { out = in }`. For each of `R` requests main spawns
/// a picker (S sections on `k` writing `sid = 0, ..., S − 1`), reads
/// `idx = sid` under `k`, increments `in[idx]` under `srv[idx]` and joins
/// the picker. S + R threads.
pub fn disp(servers: usize, requests: usize) {
    // (in, out) per server.
    let srv = mutexes(servers, (0u64, 0u64));
    let k = Arc::new(Mutex::new(0usize));
    let srv2 = srv.clone();
    let server_threads = spawn_all(servers, move |v| {
        let mut s = srv2[v].lock().unwrap();
        if s.0 > 0 {
            s.1 = s.0;
        }
    });
    for _ in 0..requests {
        let k2 = k.clone();
        let picker = thread::spawn(move || {
            for v in 0..servers {
                *k2.lock().unwrap() = v;
            }
        });
        let idx = *k.lock().unwrap();
        srv[idx].lock().unwrap().0 += 1;
        picker.join().unwrap();
    }
    join_all(server_threads);
}

/// Mpat(k): for each `i < k` a thread `wa(i)` runs an empty section on
/// `ma[i]`, and a thread `ra(i)` locks `mi`, runs an empty section on
/// `ma[i]`, and unlocks `mi`. k!·2^k traces without peeking. 2k threads.
pub fn mpat(k: usize) {
    let ma = mutexes(k, ());
    let mi = Arc::new(Mutex::new(()));
    let ma2 = ma.clone();
    let wa = spawn_all(k, move |i| drop(ma2[i].lock().unwrap()));
    let ra = spawn_all(k, move |i| {
        let _outer = mi.lock().unwrap();
        drop(ma[i].lock().unwrap());
    });
    join_all(wa);
    join_all(ra);
}

/// MPC(P, W): `P` producers and `W` workers, two rounds each. Worker `w`,
/// twice: under `mut[w]`, if `req[w] != 0` take one; count it outside the
/// lock. Producer `p`: twice under `pm`, `buf = buf·P + p; tmp = buf`; then
/// (once, with the `tmp` of its second round) under `mut[tmp % W]`,
/// `req += 1`. P + W threads. This reading of the benchmark list's
/// description gives its small checks: MPC(2, 2) = 6 orders of the `pm`
/// sections × 3 × 3 orders on the two workers' mutexes = 54, MPC(2, 3) = 66.
pub fn mpc(producers: usize, workers: usize) {
    let req = mutexes(workers, 0u64);
    let pm = Arc::new(Mutex::new(0u64));
    let req2 = req.clone();
    let worker_threads: Vec<_> = (0..workers)
        .map(|w| {
            let req = req2.clone();
            thread::spawn(move || {
                let mut done = 0u64;
                for _ in 0..2 {
                    let took = {
                        let mut r = req[w].lock().unwrap();
                        if *r != 0 {
                            *r -= 1;
                            true
                        } else {
                            false
                        }
                    };
                    if took {
                        done += 1;
                    }
                }
                assert!(done <= 2);
            })
        })
        .collect();
    let producer_threads = spawn_all(producers, move |p| {
        let mut tmp = 0;
        for _ in 0..2 {
            let mut buf = pm.lock().unwrap();
            *buf = *buf * producers as u64 + p as u64;
            tmp = *buf;
        }
        *req[(tmp % workers as u64) as usize].lock().unwrap() += 1;
    });
    join_all(worker_threads);
    join_all(producer_threads);
}

/// Pi(n): `n` threads each compute a partial sum of a midpoint-rule
/// approximation of π (no shared access), then add it to a shared sum under
/// one mutex. n! traces.
pub fn pi(n: usize) {
    const STEPS: usize = 1000;
    let sum = Arc::new(Mutex::new(0.0f64));
    let sum2 = sum.clone();
    join_all(spawn_all(n, move |t| {
        let width = 1.0 / (STEPS * n) as f64;
        let mut partial = 0.0;
        for s in t * STEPS..(t + 1) * STEPS {
            let x = (s as f64 + 0.5) * width;
            partial += 4.0 / (1.0 + x * x) * width;
        }
        *sum2.lock().unwrap() += partial;
    }));
    let pi = *sum.lock().unwrap();
    assert!((pi - std::f64::consts::PI).abs() < 1e-3, "{pi}");
}

/// Pol(N, K): workers `wa(x)` (x < N) set `a[x] = 1` under `ma[x]`. Then
/// `K` rounds, each spawning and joining a choice thread (under `mi`:
/// `i = 1, ..., N − 1`; `i` is never reset) and a reader (`idx = i` under
/// `mi`; under `ma[idx]`: if `a[idx] == 1 { d += 1; a[idx] = 0 }`).
/// N + 2K threads.
pub fn pol(n: usize, rounds: usize) {
    let ma = mutexes(n, 0u8);
    let mi = Arc::new(Mutex::new(0usize));
    let ma2 = ma.clone();
    let workers = spawn_all(n, move |x| *ma2[x].lock().unwrap() = 1);
    let mut d = 0;
    for _ in 0..rounds {
        let mi2 = mi.clone();
        let choice = thread::spawn(move || {
            for v in 1..n {
                *mi2.lock().unwrap() = v;
            }
        });
        let (mi3, ma3) = (mi.clone(), ma.clone());
        let reader = thread::spawn(move || {
            let idx = *mi3.lock().unwrap();
            let mut a = ma3[idx].lock().unwrap();
            if *a == 1 {
                *a = 0;
                1
            } else {
                0
            }
        });
        choice.join().unwrap();
        d += reader.join().unwrap();
    }
    join_all(workers);
    assert!(d <= rounds);
}

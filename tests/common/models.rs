//! Small models that several tests explore, written once: each is the body
//! of one execution, against kase's shims.

use kase::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use kase::sync::{Arc, Mutex};
use kase::thread;

/// The panic message of [`lost_update`] and [`split_lost_update`].
pub const LOST: &str = "an increment was lost";

/// The classic lost update: main and one thread each increment a counter
/// with a load and then a store, so one increment can be lost; the final
/// check then panics with [`LOST`]. One preemption finds it.
pub fn lost_update() {
    let n = Arc::new(AtomicUsize::new(0));
    let m = n.clone();
    let t = thread::spawn(move || {
        let v = m.load(SeqCst);
        m.store(v + 1, SeqCst);
    });
    let v = n.load(SeqCst);
    n.store(v + 1, SeqCst);
    t.join().unwrap();
    assert_eq!(n.load(SeqCst), 2, "{LOST}");
}

/// The lost update under a mutex taken twice per increment: the read and
/// the write are two critical sections, so the update can still be lost
/// (panics with [`LOST`]).
pub fn split_lost_update() {
    let m = Arc::new(Mutex::new(0));
    let m2 = m.clone();
    let t = thread::spawn(move || {
        let v = *m2.lock().unwrap();
        *m2.lock().unwrap() = v + 1;
    });
    let v = *m.lock().unwrap();
    *m.lock().unwrap() = v + 1;
    t.join().unwrap();
    assert_eq!(*m.lock().unwrap(), 2, "{LOST}");
}

/// ABBA: main locks mutex a then b, thread 1 locks b then a; the
/// interleaving where each holds its first lock deadlocks.
pub fn abba() {
    let a = Arc::new(Mutex::new(()));
    let b = Arc::new(Mutex::new(()));
    let (a2, b2) = (a.clone(), b.clone());
    let t = thread::spawn(move || {
        let _b = b2.lock().unwrap();
        let _a = a2.lock().unwrap();
    });
    {
        let _a = a.lock().unwrap();
        let _b = b.lock().unwrap();
    }
    t.join().unwrap();
}

/// Spawns `n` threads running `f(0)`, ..., `f(n - 1)` and joins them all.
pub fn spawn_all(n: usize, f: impl Fn(usize) + Send + Sync + Clone + 'static) {
    let handles: Vec<_> = (0..n)
        .map(|i| {
            let f = f.clone();
            thread::spawn(move || f(i))
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

/// Four scoped threads each add 1 to one atomic four times: millions of
/// traces, so an exploration of it runs until its budget stops it.
pub fn many_traces() {
    let n = AtomicUsize::new(0);
    thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..4 {
                    n.fetch_add(1, SeqCst);
                }
            });
        }
    });
    assert_eq!(n.load(SeqCst), 16);
}

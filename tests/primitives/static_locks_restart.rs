//! `static` locks restart with every execution: the data inside a `static`
//! `Mutex` or `RwLock` written in a `#[kase::test]` body or a
//! `#[kase::instrument]`ed item is back at its initial value when each
//! execution starts, as the lock state itself is. Were it not, every
//! execution after the first would start from what the one before left,
//! and these models would fail.

use std::sync::{Arc, Mutex};
use std::thread;

use kase::Builder;

/// Two increments in two threads: 2 at the end of every execution.
#[kase::test]
fn a_static_mutex_counter_starts_at_zero_in_every_execution() {
    static COUNT: Mutex<u32> = Mutex::new(0);
    let t = thread::spawn(|| *COUNT.lock().unwrap() += 1);
    *COUNT.lock().unwrap() += 1;
    t.join().unwrap();
    assert_eq!(*COUNT.lock().unwrap(), 2);
}

/// Heap data in the static: the previous execution's vector is dropped and
/// a fresh empty one takes its place.
#[kase::test]
fn a_static_mutex_of_a_vec_is_empty_in_every_execution() {
    static LOG: std::sync::Mutex<Vec<&str>> = std::sync::Mutex::new(Vec::new());
    let t = thread::spawn(|| LOG.lock().unwrap().push("thread"));
    LOG.lock().unwrap().push("main");
    t.join().unwrap();
    let log = LOG.lock().unwrap();
    assert_eq!(log.len(), 2, "{log:?}");
}

/// Code under test with its own statics, instrumented as a module.
#[kase::instrument]
mod registry {
    use std::sync::RwLock;
    use std::thread;

    static NAMES: RwLock<Vec<u32>> = RwLock::new(Vec::new());

    /// Registers two ids from two threads; returns how many are registered.
    pub fn register_two() -> usize {
        let t = thread::spawn(|| NAMES.write().unwrap().push(1));
        NAMES.write().unwrap().push(2);
        t.join().unwrap();
        let n = NAMES.read().unwrap().len();
        n
    }
}

#[test]
fn a_static_rwlock_in_an_instrumented_module_restarts() {
    let report = Builder::new().explore(|| assert_eq!(registry::register_two(), 2));
    assert!(report.failure().is_none(), "{report}");
    // Both orders of the two writers: the second execution would see 4.
    assert_eq!(report.executions(), 2, "{report}");
}

/// A type of the user's own called `Mutex` in a `static` is left as written
/// (it has no restart hook; this compiles only if kase leaves it alone).
#[kase::test]
fn a_users_own_mutex_type_in_a_static_is_left_alone() {
    struct Mutex(u32);
    static OWN: Mutex = Mutex(3);
    let shared = Arc::new(std::sync::Mutex::new(OWN.0));
    let s = shared.clone();
    thread::spawn(move || *s.lock().unwrap() += 1)
        .join()
        .unwrap();
    assert_eq!(*shared.lock().unwrap(), 4);
}

/// The hidden hook the rewriting calls does nothing unless kase itself runs
/// it at the lock's first use in an execution: called directly, inside or
/// outside a model, it never replaces data (which a live guard could be
/// borrowing).
#[test]
fn the_reset_hook_does_nothing_when_called_directly() {
    let m = kase::sync::Mutex::new(5);
    m.__kase_reset(kase::sync::Mutex::new(0));
    assert_eq!(*m.lock().unwrap(), 5);
    let report = Builder::new().explore(|| {
        let m = kase::sync::Mutex::new(5);
        let guard = m.lock().unwrap();
        m.__kase_reset(kase::sync::Mutex::new(0));
        assert_eq!(*guard, 5);
        drop(guard);
        let l = kase::sync::RwLock::new(7);
        l.__kase_reset(kase::sync::RwLock::new(0));
        assert_eq!(*l.read().unwrap(), 7);
    });
    assert!(report.failure().is_none(), "{report}");
}

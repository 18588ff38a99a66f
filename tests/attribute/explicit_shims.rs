//! `#[kase::test]` on bodies written against `kase::sync` / `kase::thread`
//! explicitly: it runs the body as a model and adds `#[test]`. (Bodies
//! written against `std` are in `std_rewrite.rs`.)

use kase::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use kase::sync::{Arc, Mutex};
use kase::thread;

#[kase::test]
fn mutex_counter_with_two_threads() {
    let counter = Arc::new(Mutex::new(0));
    let handles: Vec<_> = (0..2)
        .map(|_| {
            let counter = counter.clone();
            thread::spawn(move || *counter.lock().unwrap() += 1)
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(*counter.lock().unwrap(), 2);
}

#[kase::test]
#[should_panic(expected = "lost update under the attribute")]
fn lost_update_fails_with_the_models_own_message() {
    let n = Arc::new(AtomicUsize::new(0));
    let m = n.clone();
    let t = thread::spawn(move || {
        let v = m.load(SeqCst);
        m.store(v + 1, SeqCst);
    });
    let v = n.load(SeqCst);
    n.store(v + 1, SeqCst);
    t.join().unwrap();
    assert_eq!(n.load(SeqCst), 2, "lost update under the attribute");
}

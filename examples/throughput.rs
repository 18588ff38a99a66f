//! Raw engine speed: executions per second of the exhaustive explorer on a
//! two-thread model with ten visible operations (five per thread), and of
//! the partial-order explorer on a mutex counter (3 threads x 2 increments).
//!
//! Run with `cargo run --release --example throughput`.

use std::time::Instant;

use kase::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use kase::sync::{Arc, Mutex};
use kase::{thread, Builder, Strategy};

fn main() {
    let model = || {
        let x = Arc::new(AtomicUsize::new(0));
        let y = Arc::new(AtomicUsize::new(0));
        let x2 = x.clone();
        let t = thread::spawn(move || {
            for _ in 0..5 {
                x2.fetch_add(1, Relaxed);
            }
        });
        for _ in 0..5 {
            y.fetch_add(1, Relaxed);
        }
        t.join().unwrap();
    };
    measure(
        "exhaustive, 2 threads x 5 operations",
        Builder::new().strategy(Strategy::Exhaustive),
        model,
    );
    let counter = || {
        let m = Arc::new(Mutex::new(0));
        let handles: Vec<_> = (0..3)
            .map(|_| {
                let m = m.clone();
                thread::spawn(move || {
                    for _ in 0..2 {
                        *m.lock().unwrap() += 1;
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
    };
    measure("por, mutex counter 3 threads x 2", Builder::new(), counter);
}

fn measure(name: &str, builder: Builder, model: impl Fn() + Sync + Copy) {
    builder.explore(model); // warm up the stack pool and caches
    let start = Instant::now();
    let mut executions = 0;
    let mut rounds = 0;
    while start.elapsed().as_secs_f64() < 3.0 {
        let report = builder.explore(model);
        assert!(report.complete() && report.failure().is_none());
        executions += report.executions();
        rounds += 1;
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{name}: {} executions per exploration, {:.0} executions/s ({rounds} explorations in {secs:.2} s)",
        executions / rounds,
        executions as f64 / secs
    );
}

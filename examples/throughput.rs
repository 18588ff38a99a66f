//! Raw engine speed: executions per second of the exhaustive explorer on a
//! two-thread model with ten visible operations (five per thread).
//!
//! Run with `cargo run --release --example throughput`.

use std::time::Instant;

use kase::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use kase::sync::Arc;
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
    let builder = Builder::new().strategy(Strategy::Exhaustive);
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
        "exhaustive, 2 threads x 5 operations: {} executions per exploration, {:.0} executions/s ({rounds} explorations in {secs:.2} s)",
        executions / rounds,
        executions as f64 / secs
    );
}

//! A lost update, found and fixed.
//!
//! Two threads increment a shared counter. The buggy version reads the value
//! and then writes `value + 1` back in two separate steps, so both threads
//! can read the same old value and one increment is lost. The fixed version
//! uses a single atomic `fetch_add`.
//!
//! Ordinary tests would almost never hit the bad interleaving; kase runs the
//! model once per interleaving behaviour, so it always does.
//!
//! Run with `cargo run --example lost_update`.

use std::process::ExitCode;

// kase's shims have std's names and signatures; inside a model every access
// to them is a point where kase may switch threads.
use kase::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use kase::sync::Arc;
use kase::{thread, Builder};

/// The bug: `load` then `store` is not one atomic step.
fn buggy_counter() {
    let counter = Arc::new(AtomicUsize::new(0));
    let other = counter.clone();
    let t = thread::spawn(move || {
        let v = other.load(SeqCst);
        other.store(v + 1, SeqCst);
    });
    let v = counter.load(SeqCst);
    counter.store(v + 1, SeqCst);
    t.join().unwrap();
    assert_eq!(counter.load(SeqCst), 2, "an increment was lost");
}

/// The fix: `fetch_add` reads and writes in one indivisible step.
fn fixed_counter() {
    let counter = Arc::new(AtomicUsize::new(0));
    let other = counter.clone();
    let t = thread::spawn(move || {
        other.fetch_add(1, SeqCst);
    });
    counter.fetch_add(1, SeqCst);
    t.join().unwrap();
    assert_eq!(counter.load(SeqCst), 2, "an increment was lost");
}

fn main() -> ExitCode {
    // `explore` never panics because the model failed: it returns a Report.
    // (`check` and `kase::model` would panic with the report instead.)
    println!("== buggy counter: load, then store ==");
    let report = Builder::new().explore(buggy_counter);
    match report.failure() {
        // Display renders the interleaving and the schedule that replays it.
        Some(failure) => println!("{failure}\n"),
        None => {
            eprintln!("error: kase did not find the lost update ({report})");
            return ExitCode::FAILURE;
        }
    }

    println!("== fixed counter: fetch_add ==");
    let report = Builder::new().explore(fixed_counter);
    if let Some(failure) = report.failure() {
        eprintln!("error: the fixed counter failed:\n{failure}");
        return ExitCode::FAILURE;
    }
    if !report.complete() {
        eprintln!("error: the exploration was cut short by a budget ({report})");
        return ExitCode::FAILURE;
    }
    println!(
        "passed: every interleaving checked, {} executions",
        report.executions()
    );
    ExitCode::SUCCESS
}

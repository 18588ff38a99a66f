//! What the examples' `main`s share: run each model with kase, print what it
//! found, and exit with failure if that is not what the example expects.

use std::process::ExitCode;

use kase::{Builder, FailureKind};

/// Runs one model and prints what kase found; `false` if that is not what
/// was `expected`.
pub fn run(title: &str, expected: Option<FailureKind>, model: fn()) -> bool {
    println!("== {title} ==");
    let report = Builder::new().explore(model);
    match report.failure() {
        Some(failure) => println!("{failure}\n"),
        None if report.complete() => println!(
            "passed: every interleaving checked, {} executions\n",
            report.executions()
        ),
        None => println!("no failure, but a budget cut the exploration short\n"),
    }
    match (report.failure(), expected) {
        (Some(failure), Some(kind)) => failure.kind() == kind,
        (None, None) => report.complete(),
        _ => false,
    }
}

/// Success if every model found what was expected (`ok`); otherwise says so.
pub fn exit_code(ok: bool) -> ExitCode {
    if ok {
        ExitCode::SUCCESS
    } else {
        eprintln!("error: kase did not find what this example expects");
        ExitCode::FAILURE
    }
}

//! Compile-time behaviour of `#[kase::test]` and `#[kase::instrument]`: the
//! errors (`tests/ui/fail`, each with the expected `.stderr`) and the
//! rewriting cases that must compile (`tests/ui/pass`).
//!
//! Regenerate the `.stderr` files with
//! `TRYBUILD=overwrite cargo test --test attribute compile_errors`, then review the diff.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/fail/*.rs");
    t.pass("tests/ui/pass/*.rs");
}

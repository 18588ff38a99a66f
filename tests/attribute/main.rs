//! The `#[kase::test]` and `#[kase::instrument]` attributes: bodies written
//! against kase's shims or against std, composition with parametrised-test
//! attributes, and the compile errors (trybuild, `tests/ui/`).

#[path = "../common/mod.rs"]
mod common;

mod compile_errors;
mod explicit_shims;
mod parametrised_tests;
mod std_rewrite;

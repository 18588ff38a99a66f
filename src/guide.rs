//! The user guide: everything beyond the crate's front page, one chapter
//! per module. These modules hold documentation only.
//!
//! 1. [Writing models](writing_models): kase's drop-in shims,
//!    [`kase::model`](crate::model), threads, what kase sees.
//! 2. [`#[kase::test]` and `#[kase::instrument]`](attributes): model-checking
//!    tests written against `std`, the rewriting, the arguments.
//! 3. [Exploring](exploring): [`Builder`](crate::Builder), the strategies,
//!    the [`Report`](crate::Report) and [`Failure`](crate::Failure).
//! 4. [Critical-section peeking](peeking): why two sections on disjoint
//!    data are explored once.
//! 5. [Failure reports](failures): how to read one, replay, simpler
//!    counterexamples, regression files, progress lines, `tracing` events.
//! 6. [Environment variables](environment): every `KASE_*` variable.
//! 7. [Libraries and features](libraries): using `kase::sync` in a library
//!    at zero cost (feature `model`), feature `tracing`.
//! 8. [What is modelled, robustness and limits](limits).
//! 9. [Rust's memory model](memory_model): checking weaker orderings
//!    against RC11.

// Each chapter is a Markdown file under `docs/guide/`, so that it reads well
// in the repository too; its Rust examples are doctests of this crate.

#[doc = include_str!("../docs/guide/writing-models.md")]
pub mod writing_models {}

#[doc = include_str!("../docs/guide/attributes.md")]
pub mod attributes {}

#[doc = include_str!("../docs/guide/exploring.md")]
pub mod exploring {}

#[doc = include_str!("../docs/guide/peeking.md")]
pub mod peeking {}

#[doc = include_str!("../docs/guide/failures.md")]
pub mod failures {}

#[doc = include_str!("../docs/guide/environment.md")]
pub mod environment {}

#[doc = include_str!("../docs/guide/libraries.md")]
pub mod libraries {}

#[doc = include_str!("../docs/guide/limits.md")]
pub mod limits {}

#[doc = include_str!("../docs/guide/memory-model.md")]
pub mod memory_model {}

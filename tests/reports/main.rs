//! What kase tells a person and keeps for the next run: failure reports,
//! replay, regression files, progress lines, environment variables, and
//! stopping with a message instead of hanging or panicking on bad input.
//!
//! Some modules run cases in a child process (this same binary, with
//! `KASE_CHILD` set and `--exact <module>::<test>`): the environment
//! variables they need, or the process ending, stay in the child.

#[path = "../common/mod.rs"]
mod common;

mod channel_reports;
mod env_vars;
mod failure_reports;
mod hostile_input;
mod progress_lines;
mod regression_files;
mod replay;
mod settings_grammar;
mod stops_instead_of_hanging;
mod unseen_models;

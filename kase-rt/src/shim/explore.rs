//! loom's exploration controls, for kase-loom: a model may ask that the
//! choices it makes from some point on not be explored. `stop_exploring`
//! turns that on until `explore`; `skip_branch` for the rest of the
//! execution. While it is on, each explorer takes one way at each choice
//! (the thread to run, the store a read reads, the place of a store, the
//! reads a store revisits) and tries no other; the report says the
//! exploration is incomplete. Outside a model they do nothing.

use crate::exec::{self, Exploring};

/// Explores the choices made from here on again (after
/// [`stop_exploring`]; not after [`skip_branch`]).
pub fn explore() {
    set(Exploring::On);
}

/// Explores no other way for the choices made from here on, until
/// [`explore`].
pub fn stop_exploring() {
    set(Exploring::Stopped);
}

/// Explores no other way for the choices made from here on, for the rest
/// of the execution.
pub fn skip_branch() {
    set(Exploring::Skipped);
}

fn set(to: Exploring) {
    if exec::in_model() {
        exec::with(|e| e.set_exploring(to));
    }
}

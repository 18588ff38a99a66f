//! `std::hint` shims.

use std::panic::Location;

use crate::exec::{self, OpKind};

/// Signals a spin-wait loop, like [`std::hint::spin_loop`]; in a model, a
/// scheduling point where any other thread may run.
#[track_caller]
pub fn spin_loop() {
    if exec::in_model() {
        exec::visible(None, OpKind::Yield, Location::caller(), |_, _| ((), None));
    } else {
        std::hint::spin_loop();
    }
}

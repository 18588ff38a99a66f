//! `std::hint` shims.

use std::panic::Location;

use crate::exec;

/// Signals a spin-wait loop, like [`std::hint::spin_loop`]; in a model, a
/// scheduling point where any other thread may run, and where a spin that
/// repeats itself waits for another thread (as at
/// [`yield_now`](crate::thread::yield_now)).
#[track_caller]
#[inline(always)] // the spin rule fingerprints the caller's frame (exec/spin)
pub fn spin_loop() {
    if exec::in_model() {
        let caller = exec::CallerState::capture();
        exec::yield_point(&caller, Location::caller());
    } else {
        std::hint::spin_loop();
    }
}

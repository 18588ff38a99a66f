// A body naming parking_lot or crossbeam gets a note (a `deprecated`
// warning, denied here so that trybuild shows it): kase cannot see those
// operations.
#![deny(deprecated)]
#![allow(unused_imports)]

// Stand-ins for the crates: the note is about the names in the body.
mod parking_lot {
    pub use std::sync::Mutex;
}
mod crossbeam_channel {
    pub use std::sync::mpsc::channel as unbounded;
}

#[kase::test]
fn uses_parking_lot() {
    let m = parking_lot::Mutex::new(0);
    *m.lock().unwrap() += 1;
}

#[kase::instrument]
fn uses_a_channel() {
    use crossbeam_channel::unbounded;
    let (tx, _rx) = unbounded::<u8>();
    tx.send(1).unwrap();
}

fn main() {
    uses_a_channel();
}

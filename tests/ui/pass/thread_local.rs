//! `thread_local!` rewriting, checked by type: each key is declared through
//! std's macro (bare, `std::`, `::std::`, imported) and must come out as
//! `kase::thread::LocalKey`, whose values are per model thread.

use std::cell::{Cell, RefCell};

/// The bare prelude macro, in a function body.
#[kase::instrument]
fn bare() -> u32 {
    thread_local! {
        static COUNT: Cell<u32> = const { Cell::new(1) };
        /// A doc comment and a lazily initialised value.
        static NAMES: RefCell<Vec<&'static str>> = RefCell::new(vec!["a"]);
    }
    let _: &kase::thread::LocalKey<Cell<u32>> = &COUNT;
    let _: &kase::thread::LocalKey<RefCell<Vec<&'static str>>> = &NAMES;
    NAMES.with_borrow_mut(|n| n.push("b"));
    COUNT.get() + NAMES.with_borrow(|n| n.len() as u32)
}

/// Full paths, with and without a leading `::`, and one declaration without
/// a trailing semicolon.
#[kase::instrument]
fn full_paths() {
    std::thread_local!(static A: Cell<u8> = Cell::new(0));
    ::std::thread_local! {
        static B: std::sync::Mutex<u8> = std::sync::Mutex::new(0)
    }
    let _: &kase::thread::LocalKey<Cell<u8>> = &A;
    // Paths inside the declaration are rewritten as well.
    let _: &kase::thread::LocalKey<kase::sync::Mutex<u8>> = &B;
    let _: Result<(), kase::thread::AccessError> = A.try_with(|a| a.set(1));
}

/// An imported macro, and nested in a closure and a block.
#[kase::instrument]
fn imported_and_nested() {
    use std::thread_local;
    let f = || {
        {
            thread_local!(static C: Cell<i64> = const { Cell::new(-1) });
            let _: &kase::thread::LocalKey<Cell<i64>> = &C;
            C.replace(2)
        }
    };
    assert_eq!(f(), -1);
}

/// At module level, in an instrumented module, with visibility.
#[kase::instrument]
mod module {
    use std::cell::Cell;

    thread_local! {
        pub static LEVEL: Cell<u8> = const { Cell::new(7) };
    }
}

#[kase::test]
fn in_a_test() {
    thread_local!(static D: Cell<u8> = const { Cell::new(3) });
    let t = std::thread::spawn(|| D.replace(4));
    D.set(5);
    assert_eq!(t.join().unwrap(), 3); // the spawned thread has its own value
    assert_eq!(D.get(), 5);
}

fn main() {
    let _: &kase::thread::LocalKey<Cell<u8>> = &module::LEVEL;
    kase::model(|| {
        assert_eq!(bare(), 3);
        full_paths();
        imported_and_nested();
        assert_eq!(module::LEVEL.get(), 7);
    });
    // Outside a model: std's thread-locals.
    assert_eq!(bare(), 3);
}

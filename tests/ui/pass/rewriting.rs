//! The rewriting, checked by type: each `let` names the kase type, so a path
//! that was not rewritten onto the shim does not compile.

use std::cell::UnsafeCell;
use std::hint::spin_loop;
use std::sync::atomic::{fence, AtomicUsize, Ordering};
use std::sync::{mpsc, Barrier, LazyLock, Once, OnceLock, Weak};
use std::sync::{Arc, Condvar, Mutex, RwLock};
use std::thread;

/// Module-level imports, shadowed in the body.
#[kase::instrument]
fn module_level_imports() {
    let _: kase::sync::Mutex<i32> = Mutex::new(0);
    let _: kase::sync::atomic::AtomicUsize = AtomicUsize::new(0);
    let _: Arc<kase::sync::Mutex<i32>> = Arc::new(Mutex::new(0));
    let _: kase::sync::RwLock<i32> = RwLock::new(0);
    let _: kase::sync::Condvar = Condvar::new();
    let _: kase::cell::UnsafeCell<i32> = UnsafeCell::new(0);
    let h: kase::thread::JoinHandle<()> = thread::spawn(|| {});
    h.join().unwrap();
    let _ = Ordering::SeqCst;
}

/// Full paths, with and without a leading `::`, and `core::`.
#[kase::instrument]
fn full_paths() {
    let _: kase::sync::Mutex<i32> = std::sync::Mutex::new(0);
    let _: kase::sync::Mutex<i32> = ::std::sync::Mutex::new(0);
    let _: kase::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);
    let _: std::sync::Arc<std::sync::Mutex<u8>> = kase::sync::Arc::new(kase::sync::Mutex::new(0));
    let h: kase::thread::JoinHandle<()> = std::thread::spawn(|| std::hint::spin_loop());
    h.join().unwrap();
    let _ = <std::sync::Mutex<i32> as Default>::default().into_inner();
}

/// `use` declarations in the body, including mixed trees and renames.
#[kase::instrument]
fn body_use_declarations() {
    use std::collections::HashMap;
    use std::sync::atomic::{self, AtomicI32 as Int};
    use std::{sync::Mutex as M, thread as t};
    let _: kase::sync::Mutex<i32> = M::new(0);
    let _: kase::sync::atomic::AtomicI32 = Int::new(0);
    let _: kase::sync::atomic::AtomicU8 = atomic::AtomicU8::new(0);
    let h: kase::thread::JoinHandle<()> = t::spawn(|| {});
    h.join().unwrap();
    let _: HashMap<u8, u8> = HashMap::new();
}

/// Nested closures and blocks, and items inside the body.
#[kase::instrument]
fn nested_closures_blocks_and_items() {
    let make = || {
        let inner = || -> kase::sync::Mutex<i32> {
            let m = { std::sync::Mutex::new(0) };
            m
        };
        inner()
    };
    let _: kase::sync::Mutex<i32> = make();
    struct Holder(std::sync::Mutex<i32>);
    fn helper() -> Holder {
        Holder(kase::sync::Mutex::new(1))
    }
    let _ = helper().0;
}

macro_rules! raw {
    (@ $e:expr) => {
        $e
    };
}

/// Macros in the body: expressions (`assert!`, `vec!`, `format!`) and
/// tokens that are not expressions (rewritten token-wise).
#[kase::instrument]
fn macros() {
    let v: Vec<kase::sync::Mutex<i32>> = vec![std::sync::Mutex::new(1), Mutex::new(2)];
    assert!(v.len() == 2 && *std::sync::Mutex::new(3).lock().unwrap() == 3);
    assert_eq!(format!("{:?}", std::sync::atomic::AtomicUsize::new(4)), "4");
    let _: kase::sync::Mutex<i32> = raw!(@ std::sync::Mutex::new(5));
}

/// `#[kase::instrument]` on an inline module and on an impl block.
#[kase::instrument]
mod queue {
    use std::sync::Mutex;

    pub struct Queue(pub Mutex<Vec<u32>>);

    impl Queue {
        pub fn push(&self, v: u32) {
            self.0.lock().unwrap().push(v);
        }
    }
}

struct Flag(kase::sync::atomic::AtomicBool);

#[kase::instrument]
impl Flag {
    fn new() -> Self {
        Flag(std::sync::atomic::AtomicBool::new(false))
    }

    fn mutex(&self) -> std::sync::Mutex<bool> {
        std::sync::Mutex::new(self.0.load(Ordering::Acquire))
    }

    fn set(&self) {
        self.0.store(true, Ordering::Release);
        std::sync::atomic::fence(Ordering::SeqCst);
    }
}

/// Paths in an instrumented function's signature are rewritten too.
#[kase::instrument]
fn signature(m: std::sync::Mutex<u8>) -> std::sync::Mutex<u8> {
    m
}

/// std's deprecated items are paths under `std::sync` / `std::thread` too:
/// rewritten, they must still name something.
#[kase::instrument]
#[allow(deprecated)]
fn deprecated_std_items() -> usize {
    let n: kase::sync::atomic::AtomicUsize = std::sync::atomic::ATOMIC_USIZE_INIT;
    let _: kase::sync::atomic::AtomicIsize = std::sync::atomic::ATOMIC_ISIZE_INIT;
    let _: kase::sync::atomic::AtomicBool = std::sync::atomic::ATOMIC_BOOL_INIT;
    let _: kase::sync::Once = std::sync::ONCE_INIT;
    std::sync::atomic::spin_loop_hint();
    std::thread::sleep_ms(1);
    std::thread::park_timeout_ms(1);
    n.fetch_add(1, Ordering::SeqCst) + 1
}

/// Module-level imports of the newer shims are shadowed too.
#[kase::instrument]
fn module_level_imports_of_the_other_shims() {
    let _: kase::sync::Barrier = Barrier::new(1);
    let _: kase::sync::Once = Once::new();
    let _: kase::sync::OnceLock<u8> = OnceLock::new();
    let _: kase::sync::LazyLock<u8> = LazyLock::new(|| 1);
    let (tx, rx) = mpsc::channel::<u8>();
    let _: (kase::sync::mpsc::Sender<u8>, kase::sync::mpsc::Receiver<u8>) = (tx, rx);
    let w: Weak<u8> = Weak::new();
    assert!(w.upgrade().is_none());
    spin_loop();
    fence(Ordering::SeqCst);
}

/// Aliases of std modules in the body, and `UnsafeCell<T>` in type
/// positions (a `let`, a field, a signature, a turbofish, an `impl`).
#[kase::instrument]
fn aliases_and_generic_types() {
    use std::sync as s;
    use std::sync::atomic as at;
    use std::{cell as c, sync::mpsc as channel, thread as th};
    let _: kase::sync::Mutex<i32> = s::Mutex::new(0);
    let _: kase::sync::atomic::AtomicUsize = at::AtomicUsize::new(0);
    let _: kase::sync::atomic::AtomicBool = s::atomic::AtomicBool::new(false);
    let (tx, _rx): (kase::sync::mpsc::Sender<u8>, _) = channel::channel();
    drop(tx);
    let h: kase::thread::JoinHandle<()> = th::spawn(|| {});
    h.join().unwrap();
    let _: kase::cell::UnsafeCell<u8> = c::UnsafeCell::new(0);
    let x: std::cell::UnsafeCell<i32> = std::cell::UnsafeCell::new(0);
    let _: kase::cell::UnsafeCell<i32> = x;
    let _: kase::cell::UnsafeCell<i32> = core::cell::UnsafeCell::<i32>::new(1);
    struct Holder<T>(std::cell::UnsafeCell<T>);
    impl<T> Holder<T> {
        fn cell(&self) -> &std::cell::UnsafeCell<T> {
            &self.0
        }
    }
    fn make() -> Holder<u8> {
        Holder(kase::cell::UnsafeCell::new(2))
    }
    let h = make();
    let _: &kase::cell::UnsafeCell<u8> = h.cell();
    let v: Vec<std::cell::UnsafeCell<u8>> = Vec::new();
    let _: Vec<kase::cell::UnsafeCell<u8>> = v;
    // Modules kase shims in part: std's other items stay reachable.
    use core::hint as h;
    use std::cell::{self as cells, RefCell};
    use std::hint;
    hint::spin_loop();
    h::spin_loop();
    let _ = h::black_box(1);
    let _: kase::cell::UnsafeCell<u8> = cells::UnsafeCell::new(0);
    let _: RefCell<u8> = cells::RefCell::new(0);
}

/// A glob of a module kase shims in part.
#[kase::instrument]
fn glob_of_std_cell() {
    use std::cell::*;
    let _: kase::cell::UnsafeCell<u8> = UnsafeCell::new(0);
    let _: Cell<u8> = Cell::new(0);
}

fn main() {
    kase::model(|| {
        assert_eq!(deprecated_std_items(), 1);
        module_level_imports_of_the_other_shims();
        module_level_imports();
        aliases_and_generic_types();
        glob_of_std_cell();
        full_paths();
        body_use_declarations();
        nested_closures_blocks_and_items();
        macros();
        let q = queue::Queue(kase::sync::Mutex::new(Vec::new()));
        q.push(1);
        let f = Flag::new();
        f.set();
        let _: kase::sync::Mutex<bool> = f.mutex();
        let _: kase::sync::Mutex<u8> = signature(kase::sync::Mutex::new(1));
    });
}

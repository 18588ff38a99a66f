//! Leaks of `Arc`s: an allocation made with `Arc::new` / `Arc::new_cyclic`
//! in code that `#[kase::test]` or `#[kase::instrument]` rewrote, still alive
//! when every thread has finished, is a `Leak` failure naming where it was
//! created. `Arc` stays std's type, so `Arc<dyn Trait>` coercions still work.

use std::sync::{Arc, Mutex, Weak};
use std::thread;

use kase::{Builder, FailureKind};

/// Code under test, written against std and instrumented as a whole (a
/// type keeps the field types it was written with, so its module is).
#[kase::instrument]
mod graph {
    use std::sync::{Arc, Mutex, Weak};
    use std::thread;

    /// A node that points at another: two of them pointing at each other
    /// with strong references never drop.
    pub struct Node {
        next: Mutex<Option<Arc<Node>>>,
        back: Mutex<Option<Weak<Node>>>,
    }

    fn node() -> Node {
        Node {
            next: Mutex::new(None),
            back: Mutex::new(None),
        }
    }

    /// Links `a -> b` strongly and `b -> a` strongly (`cycle`) or weakly.
    pub fn link(cycle: bool) {
        let a = Arc::new(node());
        let b = std::sync::Arc::new(node());
        let a2 = a.clone();
        let b2 = b.clone();
        let t = thread::spawn(move || {
            *a2.next.lock().unwrap() = Some(b2);
        });
        if cycle {
            *b.next.lock().unwrap() = Some(a.clone());
        } else {
            *b.back.lock().unwrap() = Some(Arc::downgrade(&a));
        }
        t.join().unwrap();
    }
}

use graph::link;

#[test]
fn an_arc_cycle_is_a_leak_naming_where_the_arcs_were_created() {
    let report = Builder::new().explore(|| link(true));
    let failure = report.failure().expect("the cycle is a leak");
    assert_eq!(failure.kind(), FailureKind::Leak);
    let text = failure.to_string();
    assert!(
        text.contains("Arcs created in the model are still alive"),
        "{text}"
    );
    // Both allocations, with the lines of their `Arc::new` calls.
    assert_eq!(text.matches("was never freed").count(), 2, "{text}");
    assert!(text.contains("tests/primitives/arc_leaks.rs:34:"), "{text}");
    assert!(
        text.contains("tests/primitives/arc_leaks.rs:35:28"),
        "{text}"
    );
    assert!(text.contains("make one direction a `Weak`"), "{text}");
}

#[test]
fn a_weak_back_link_is_not_a_leak() {
    let report = Builder::new().explore(|| link(false));
    assert!(report.failure().is_none(), "{report}");
    assert!(report.complete());
}

/// Outside a model the tracking is a no-op: the function runs as std.
#[test]
fn outside_a_model_the_constructors_are_std() {
    link(false);
}

/// The attribute finds a cycle in the test body itself.
#[kase::test(expect = "leak")]
fn a_cycle_in_a_test_body_is_found() {
    let a = Arc::new(Mutex::new(None::<Arc<dyn Send + Sync>>));
    let a2 = a.clone();
    *a.lock().unwrap() = Some(a2);
}

/// `Arc::new` passed as a function is tracked too.
#[kase::test(expect = "leak")]
fn a_cycle_of_arcs_made_through_map_is_found() {
    // A cell that may hold a reference to anything (declared in the body,
    // which the attribute rewrites onto kase's `Mutex`).
    type Link = Mutex<Option<Arc<dyn Send + Sync>>>;
    let cells: Vec<Arc<Link>> = vec![Mutex::new(None), Mutex::new(None)]
        .into_iter()
        .map(Arc::new)
        .collect();
    *cells[0].lock().unwrap() = Some(cells[1].clone());
    *cells[1].lock().unwrap() = Some(cells[0].clone());
}

/// The same without the cycle: a constructor passed as a function still
/// makes std's `Arc`, and its values drop.
#[kase::test]
fn arcs_made_through_map_without_a_cycle_are_no_leak() {
    let make: fn(u32) -> Arc<u32> = Arc::new;
    let values: Vec<Arc<u32>> = (1..3).map(Arc::new).chain([make(3)]).collect();
    let total: u32 = values.iter().map(|v| **v).sum();
    let t = thread::spawn(move || assert_eq!(total, 6));
    t.join().unwrap();
}

/// A cycle that only some interleavings build: the thread links back only
/// if it runs after main has set the flag.
#[kase::test(expect = "leak")]
fn a_cycle_built_in_one_interleaving_is_found() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let flag = Arc::new(AtomicBool::new(false));
    let node = Arc::new(Mutex::new(Vec::<Arc<dyn Send + Sync>>::new()));
    let (f, n) = (flag.clone(), node.clone());
    let t = thread::spawn(move || {
        if f.load(Ordering::SeqCst) {
            let me = n.clone();
            n.lock().unwrap().push(me);
        }
    });
    flag.store(true, Ordering::SeqCst);
    t.join().unwrap();
}

trait Shape: Send + Sync {
    fn area(&self) -> u32;
}

struct Square(u32);

impl Shape for Square {
    fn area(&self) -> u32 {
        self.0 * self.0
    }
}

/// `Arc<dyn Trait>` coercions keep working under the attribute, and
/// allocations dropped normally are no leak.
#[kase::test]
fn unsized_coercions_still_compile_and_pass() {
    let shape: Arc<dyn Shape> = Arc::new(Square(3));
    let f: Arc<dyn Fn() -> u32 + Send + Sync> = Arc::new(|| 7);
    let slice: Arc<[u8]> = Arc::new([1u8, 2, 3]);
    let s2 = shape.clone();
    let t = thread::spawn(move || s2.area());
    assert_eq!(t.join().unwrap() + f() + slice.len() as u32, 19);
}

mod own {
    /// A type of the user's own that is called `Arc`: the rewriting leaves
    /// its constructor's value untouched.
    pub struct Arc(pub u32);

    impl Arc {
        pub fn new(v: u32) -> Self {
            Arc(v)
        }

        pub fn get_mut(a: &mut Arc) -> Option<&mut u32> {
            Some(&mut a.0)
        }

        pub fn weak_count(_: &Arc) -> usize {
            42
        }

        pub fn make_mut(a: &mut Arc) -> &mut u32 {
            &mut a.0
        }
    }
}

#[kase::test]
fn a_users_own_arc_type_is_left_alone() {
    use own::Arc;
    let mut a = Arc::new(5);
    *Arc::get_mut(&mut a).unwrap() = 6;
    assert_eq!(a.0, 6);
    assert_eq!(Arc::weak_count(&a), 42);
    *Arc::make_mut(&mut a) += 1;
    assert_eq!(a.0, 7);
}

/// The leak check holds a `Weak` to each tracked allocation; std's
/// `get_mut` and `weak_count` answer as if it were not there.
#[kase::test]
fn get_mut_and_weak_count_do_not_see_the_leak_check() {
    let mut a = Arc::new(5);
    *Arc::get_mut(&mut a).expect("the only reference") = 6;
    assert_eq!(Arc::weak_count(&a), 0);
    let w = Arc::downgrade(&a);
    assert_eq!(Arc::weak_count(&a), 1);
    assert!(Arc::get_mut(&mut a).is_none(), "a Weak of the program's");
    drop(w);
    let b = Arc::clone(&a);
    assert!(Arc::get_mut(&mut a).is_none(), "shared");
    drop(b);
    assert_eq!(std::sync::Arc::get_mut(&mut a).map(|v| *v), Some(6));
    // Shared with another thread and handed back: unique again.
    let b = Arc::clone(&a);
    thread::spawn(move || drop(b)).join().unwrap();
    assert_eq!(Arc::get_mut(&mut a).map(|v| *v), Some(6));
    // `make_mut` writes in place when unique, and clones when shared.
    let before = Arc::as_ptr(&a);
    *Arc::make_mut(&mut a) = 7;
    assert_eq!(Arc::as_ptr(&a), before, "in place");
    let b = Arc::clone(&a);
    *Arc::make_mut(&mut a) = 8;
    assert_eq!((*a, *b), (8, 7), "a copy for the writer");
}

/// `Arc::new_cyclic` is tracked too; its usual use (a weak self-reference)
/// is no leak.
#[kase::test]
fn new_cyclic_with_a_weak_self_reference_is_no_leak() {
    struct Me {
        me: Weak<Me>,
    }
    let a = Arc::new_cyclic(|w| Me { me: w.clone() });
    assert!(a.me.upgrade().is_some());
}

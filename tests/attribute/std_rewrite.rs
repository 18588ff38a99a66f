//! `#[kase::test]` and `#[kase::instrument]` on code written against `std`:
//! the attribute rewrites `std::sync` / `std::thread` paths (full paths,
//! `use` declarations in the body, names imported at module level) onto
//! kase's shims, so these bodies are model-checked as written.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;

/// The classic lost update: two threads read-modify-write without a lock.
/// kase finds the interleaving where one increment is lost.
#[kase::test(expect = "panic")]
fn lost_update_is_found() {
    let n = Arc::new(AtomicUsize::new(0));
    let m = n.clone();
    let t = thread::spawn(move || {
        let v = m.load(Ordering::SeqCst);
        m.store(v + 1, Ordering::SeqCst);
    });
    let v = n.load(Ordering::SeqCst);
    n.store(v + 1, Ordering::SeqCst);
    t.join().unwrap();
    assert_eq!(n.load(Ordering::SeqCst), 2);
}

/// `replay = "…"` runs exactly that one execution: here the interleaving in
/// which main finishes its increment before the thread starts, which
/// passes, although the model has a lost update (were the schedule ignored,
/// kase would explore and find it, and this test would fail).
#[kase::test(replay = "kase1:0.0")]
fn replay_runs_only_the_given_schedule() {
    let n = Arc::new(AtomicUsize::new(0));
    let m = n.clone();
    let t = thread::spawn(move || {
        let v = m.load(Ordering::SeqCst);
        m.store(v + 1, Ordering::SeqCst);
    });
    let v = n.load(Ordering::SeqCst);
    n.store(v + 1, Ordering::SeqCst);
    t.join().unwrap();
    assert_eq!(n.load(Ordering::SeqCst), 2);
}

/// The same counter with `fetch_add`: correct in every interleaving.
#[kase::test]
fn fetch_add_counter_passes() {
    let n = Arc::new(AtomicUsize::new(0));
    let m = n.clone();
    let t = thread::spawn(move || {
        m.fetch_add(1, Ordering::SeqCst);
    });
    n.fetch_add(1, Ordering::SeqCst);
    t.join().unwrap();
    assert_eq!(n.load(Ordering::SeqCst), 2);
}

/// A `Mutex` counter written with the module-level `std` imports.
#[kase::test(strategy = "exhaustive", max_duration = "30s")]
fn mutex_counter_passes() {
    let counter = Arc::new(Mutex::new(0));
    let handles: Vec<_> = (0..2)
        .map(|_| {
            let counter = counter.clone();
            thread::spawn(move || *counter.lock().unwrap() += 1)
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(*counter.lock().unwrap(), 2);
}

/// The failing interleaving's own panic message reaches `#[should_panic]`.
#[kase::test]
#[should_panic(expected = "lost update: 1 != 2")]
fn should_panic_matches_the_assertion_message() {
    let n = Arc::new(AtomicUsize::new(0));
    let m = n.clone();
    let t = thread::spawn(move || {
        let v = m.load(Ordering::SeqCst);
        m.store(v + 1, Ordering::SeqCst);
    });
    let v = n.load(Ordering::SeqCst);
    n.store(v + 1, Ordering::SeqCst);
    t.join().unwrap();
    let total = n.load(Ordering::SeqCst);
    assert!(total == 2, "lost update: {total} != 2");
}

/// Two locks taken in opposite orders, written with full `std::` paths only.
#[kase::test(expect = "deadlock")]
fn abba_deadlock_with_full_std_paths() {
    let a = std::sync::Arc::new(std::sync::Mutex::new(0));
    let b = ::std::sync::Arc::new(::std::sync::Mutex::new(0));
    let (a2, b2) = (a.clone(), b.clone());
    let t = std::thread::spawn(move || {
        let _b = b2.lock().unwrap();
        let _a = a2.lock().unwrap();
    });
    {
        let _a = a.lock().unwrap();
        let _b = b.lock().unwrap();
    }
    t.join().unwrap();
}

/// `use` declarations in the body, including a mixed tree that is split.
#[kase::test]
fn use_declarations_in_the_body() {
    use std::collections::HashMap;
    use std::{sync::atomic::AtomicBool, thread as t};
    let flag: std::sync::Arc<AtomicBool> = std::sync::Arc::default();
    let f = flag.clone();
    let h = t::spawn(move || f.store(true, std::sync::atomic::Ordering::Release));
    h.join().unwrap();
    let mut seen = HashMap::new();
    seen.insert("flag", flag.load(core::sync::atomic::Ordering::Acquire));
    assert!(seen["flag"]);
}

/// Shim calls inside macros (`assert_eq!`, `vec!`, `format!`) are rewritten
/// too; a nested closure and block see the shadowed names.
#[kase::test]
fn macros_closures_and_blocks() {
    let locks = vec![
        std::sync::Arc::new(Mutex::new(1)),
        Arc::new(std::sync::Mutex::new(2)),
    ];
    let sum = || {
        let mut s = 0;
        for l in &locks {
            s += *l.lock().unwrap();
        }
        s
    };
    {
        let h = std::thread::spawn(|| std::sync::Arc::new(AtomicUsize::new(3)));
        assert_eq!(h.join().unwrap().load(Ordering::Relaxed), 3);
    }
    assert_eq!(format!("{}", std::sync::Arc::new(sum())), "3");
}

#[derive(Debug)]
#[allow(dead_code)] // read through `Debug` when the test fails
struct Lost(usize);

/// A body returning `Result`: `?` works, and `Ok` passes.
#[kase::test]
fn result_returning_test_passes() -> Result<(), Lost> {
    let n = Arc::new(AtomicUsize::new(0));
    let m = n.clone();
    thread::spawn(move || m.fetch_add(1, Ordering::SeqCst))
        .join()
        .unwrap();
    check(n.load(Ordering::SeqCst))?;
    Ok(())
}

fn check(total: usize) -> Result<(), Lost> {
    if total == 1 {
        Ok(())
    } else {
        Err(Lost(total))
    }
}

/// An `Err` from one interleaving fails that execution (kase reports it as a
/// panic with the error's `Debug`).
#[kase::test(expect = "panic")]
fn result_returning_test_fails_on_err() -> Result<(), Lost> {
    let n = Arc::new(AtomicUsize::new(0));
    let m = n.clone();
    let t = thread::spawn(move || {
        let v = m.load(Ordering::SeqCst);
        m.store(v + 1, Ordering::SeqCst);
    });
    let v = n.load(Ordering::SeqCst);
    n.store(v + 1, Ordering::SeqCst);
    t.join().unwrap();
    match n.load(Ordering::SeqCst) {
        2 => Ok(()),
        total => Err(Lost(total)),
    }
}

/// Code under test outside the test body, written against `std`.
#[kase::instrument]
mod counter {
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A racy counter: `increment` is a separate load and store.
    #[derive(Default)]
    pub struct Racy(AtomicUsize);

    impl Racy {
        pub fn increment(&self) {
            let v = self.0.load(Ordering::SeqCst);
            self.0.store(v + 1, Ordering::SeqCst);
        }

        pub fn get(&self) -> usize {
            self.0.load(Ordering::SeqCst)
        }
    }

    /// A correct counter on a `Mutex`.
    #[derive(Default)]
    pub struct Locked(std::sync::Mutex<usize>);

    impl Locked {
        pub fn increment(&self) {
            *self.0.lock().unwrap() += 1;
        }

        pub fn get(&self) -> usize {
            *self.0.lock().unwrap()
        }
    }
}

#[kase::test(expect = "panic")]
fn instrumented_module_racy_counter_is_caught() {
    let c = Arc::new(counter::Racy::default());
    let c2 = c.clone();
    let t = thread::spawn(move || c2.increment());
    c.increment();
    t.join().unwrap();
    assert_eq!(c.get(), 2);
}

#[kase::test]
fn instrumented_module_locked_counter_passes() {
    let c = Arc::new(counter::Locked::default());
    let c2 = c.clone();
    let t = thread::spawn(move || c2.increment());
    c.increment();
    t.join().unwrap();
    assert_eq!(c.get(), 2);
}

/// `#[kase::instrument]` on a function: its `std::thread::spawn` is the
/// shim, and the module-level `Arc` / `AtomicUsize` are shadowed in its body.
#[kase::instrument]
fn racy_double() -> usize {
    let n = Arc::new(AtomicUsize::new(0));
    let m = n.clone();
    let t = std::thread::spawn(move || {
        let v = m.load(Ordering::SeqCst);
        m.store(v + 1, Ordering::SeqCst);
    });
    let v = n.load(Ordering::SeqCst);
    n.store(v + 1, Ordering::SeqCst);
    t.join().unwrap();
    n.load(Ordering::SeqCst)
}

#[kase::test(expect = "panic")]
fn instrumented_fn_is_caught() {
    assert_eq!(racy_double(), 2);
}

/// `expect` fails the test when kase does not find that failure.
#[kase::test(expect = "deadlock")]
#[should_panic(expected = "expected kase to find a deadlock, but it found no failure")]
fn expect_fails_when_the_failure_is_not_found() {
    let m = Mutex::new(0);
    *m.lock().unwrap() += 1;
}

/// A budget that stops the exploration early fails the test...
#[kase::test(max_executions = 1)]
#[should_panic(expected = "INCOMPLETE: it was stopped by max_executions = 1 after 1 execution")]
fn an_incomplete_exploration_fails_the_test() {
    let n = Arc::new(AtomicUsize::new(0));
    let m = n.clone();
    let t = thread::spawn(move || m.store(1, Ordering::SeqCst));
    n.store(2, Ordering::SeqCst);
    t.join().unwrap();
}

/// ...unless `allow_incomplete = true` accepts it.
#[kase::test(max_executions = 1, allow_incomplete = true)]
fn allow_incomplete_accepts_an_incomplete_exploration() {
    let n = Arc::new(AtomicUsize::new(0));
    let m = n.clone();
    let t = thread::spawn(move || m.store(1, Ordering::SeqCst));
    n.store(2, Ordering::SeqCst);
    t.join().unwrap();
}

/// All the budget arguments together.
#[kase::test(
    strategy = "por",
    alternatives = 2,
    max_executions = 1_000,
    max_duration = "2m",
    max_steps = 10_000,
    stack_size = 4_194_304
)]
fn all_budget_arguments() {
    let n = Arc::new(Mutex::new(0));
    let m = n.clone();
    thread::spawn(move || *m.lock().unwrap() += 1)
        .join()
        .unwrap();
    assert_eq!(*n.lock().unwrap(), 1);
}

/// A test attribute already present is kept (no second `#[test]`).
#[kase::test(crate = "kase")]
#[test]
fn explicit_test_attribute_and_crate_path() {
    std::hint::spin_loop();
    let a = Arc::new(0);
    assert_eq!(std::sync::Arc::strong_count(&a), 1);
}

/// A glob import in the body brings the shims (and turns off shadowing);
/// a local variable named like a shadowed module does not get in the way.
#[kase::test(expect = "panic")]
fn glob_import_and_local_named_thread() {
    use std::sync::*;
    let n = Arc::new(atomic::AtomicUsize::new(0));
    let m = n.clone();
    let thread = std::thread::spawn(move || {
        let v = m.load(atomic::Ordering::SeqCst);
        m.store(v + 1, atomic::Ordering::SeqCst);
    });
    let v = n.load(atomic::Ordering::SeqCst);
    n.store(v + 1, atomic::Ordering::SeqCst);
    thread.join().unwrap();
    assert_eq!(n.load(atomic::Ordering::SeqCst), 2);
}

/// A module-level `thread` import and a local binding called `thread`.
#[kase::test]
fn local_binding_named_thread() {
    let thread = thread::spawn(|| 1);
    assert_eq!(thread.join().unwrap(), 1);
}

/// `peeking = false`: the lost update split across two critical sections is
/// found either way; the argument reaches the builder (its expansion is
/// checked in kase-macros' unit tests).
#[kase::test(peeking = false, expect = "panic")]
fn peeking_off_still_finds_a_split_lost_update() {
    let m = Arc::new(Mutex::new(0));
    let m2 = m.clone();
    let t = thread::spawn(move || {
        let v = *m2.lock().unwrap();
        *m2.lock().unwrap() = v + 1;
    });
    let v = *m.lock().unwrap();
    *m.lock().unwrap() = v + 1;
    t.join().unwrap();
    assert_eq!(*m.lock().unwrap(), 2);
}

/// A `use` alias in the body (`use std::sync as s;`) is rewritten: `s` is
/// kase's `sync`, so the lost update through `s::atomic` is found. No note
/// about aliases declared elsewhere (denied here: it would not compile).
#[kase::test(expect = "panic")]
fn alias_of_std_sync_in_the_body() {
    use std::sync as s;
    let n = s::Arc::new(s::atomic::AtomicUsize::new(0));
    let m = n.clone();
    let t = thread::spawn(move || {
        let v = m.load(s::atomic::Ordering::SeqCst);
        m.store(v + 1, s::atomic::Ordering::SeqCst);
    });
    let v = n.load(s::atomic::Ordering::SeqCst);
    n.store(v + 1, s::atomic::Ordering::SeqCst);
    t.join().unwrap();
    assert_eq!(n.load(s::atomic::Ordering::SeqCst), 2);
}

/// Aliases in a nested group and of `core::sync::atomic`.
#[kase::test(expect = "panic")]
fn aliases_in_a_group_and_of_atomic() {
    use ::core::sync::atomic as at;
    use std::{sync as s, thread as th};
    let n: s::Arc<at::AtomicUsize> = s::Arc::new(at::AtomicUsize::new(0));
    let m = n.clone();
    let t = th::spawn(move || {
        let v = m.load(at::Ordering::SeqCst);
        m.store(v + 1, at::Ordering::SeqCst);
    });
    let v = n.load(at::Ordering::SeqCst);
    n.store(v + 1, at::Ordering::SeqCst);
    t.join().unwrap();
    assert_eq!(n.load(at::Ordering::SeqCst), 2);
}

/// An alias in an instrumented module.
#[kase::instrument]
mod aliased {
    use std::sync::atomic as at;

    /// A racy counter written against the alias.
    #[derive(Default)]
    pub struct Racy(at::AtomicUsize);

    impl Racy {
        pub fn increment(&self) {
            let v = self.0.load(at::Ordering::SeqCst);
            self.0.store(v + 1, at::Ordering::SeqCst);
        }

        pub fn get(&self) -> usize {
            self.0.load(at::Ordering::SeqCst)
        }
    }
}

#[kase::test(expect = "panic")]
fn alias_in_an_instrumented_module() {
    let c = Arc::new(aliased::Racy::default());
    let c2 = c.clone();
    let t = thread::spawn(move || c2.increment());
    c.increment();
    t.join().unwrap();
    assert_eq!(c.get(), 2);
}

/// `std::cell::UnsafeCell<T>` in type positions (a struct field, a `let`
/// annotation, a signature, a turbofish) is kase's: the unsynchronised
/// writes are a data race.
#[kase::test(expect = "data race")]
fn unsafe_cell_in_type_positions_is_tracked() {
    struct Slot(std::cell::UnsafeCell<u32>);
    // SAFETY: it is not: the test is that kase reports the race.
    unsafe impl Sync for Slot {}
    impl Slot {
        fn cell(&self) -> &std::cell::UnsafeCell<u32> {
            &self.0
        }
    }
    let cell: std::cell::UnsafeCell<u32> = std::cell::UnsafeCell::<u32>::new(0);
    let slot = Arc::new(Slot(cell));
    let s = slot.clone();
    // SAFETY: racy on purpose; kase stops a racing access before it runs.
    let t = thread::spawn(move || s.cell().with_mut(|p| unsafe { *p += 1 }));
    // SAFETY: as above.
    slot.cell().with_mut(|p| unsafe { *p += 1 });
    t.join().unwrap();
}

/// A module of the user's own whose path looks like an alias would get the
/// note; `use`-ing it inside the body says it is known (denied here: with
/// the note it would not compile).
mod shared {
    pub use kase::sync::Mutex;
}

#[deny(deprecated)]
mod declared_in_the_body {
    #[kase::test]
    fn a_module_of_ones_own_used_in_the_body() {
        use super::shared;
        let m = shared::Mutex::new(1);
        assert_eq!(*m.lock().unwrap(), 1);
    }
}

#[deny(deprecated)]
mod no_note_for_an_alias_declared_in_the_body {
    #[kase::test]
    fn alias_declared_in_the_body() {
        use std::sync as s;
        let m = s::Mutex::new(1);
        assert_eq!(*m.lock().unwrap(), 1);
    }
}

/// `memory_model = "rc11"` checks the body against Rust's memory model:
/// the stale read a `Relaxed` flag allows is found…
#[kase::test(memory_model = "rc11", expect = "panic")]
fn rc11_finds_the_stale_read_of_a_relaxed_flag() {
    use std::sync::atomic::AtomicBool;
    let data = Arc::new(AtomicUsize::new(0));
    let flag = Arc::new(AtomicBool::new(false));
    let (d, f) = (data.clone(), flag.clone());
    let t = thread::spawn(move || {
        d.store(42, Ordering::Relaxed);
        f.store(true, Ordering::Relaxed);
    });
    if flag.load(Ordering::Relaxed) {
        assert_eq!(data.load(Ordering::Relaxed), 42, "flag seen, data stale");
    }
    t.join().unwrap();
}

/// …which sequential consistency, the opt-out, cannot produce.
#[kase::test(memory_model = "sc")]
fn sequential_consistency_does_not_produce_it() {
    use std::sync::atomic::AtomicBool;
    let data = Arc::new(AtomicUsize::new(0));
    let flag = Arc::new(AtomicBool::new(false));
    let (d, f) = (data.clone(), flag.clone());
    let t = thread::spawn(move || {
        d.store(42, Ordering::Relaxed);
        f.store(true, Ordering::Relaxed);
    });
    if flag.load(Ordering::Relaxed) {
        assert_eq!(data.load(Ordering::Relaxed), 42, "flag seen, data stale");
    }
    t.join().unwrap();
}

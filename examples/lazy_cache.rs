//! A lazily initialised cache, loaded twice.
//!
//! `Lazy::get` computes an expensive value the first time it is needed
//! (here: loading a configuration, counting the loads) and hands out the
//! same shared copy afterwards. The buggy version checks an atomic `ready`
//! flag and, if it is not set, loads and stores the value: two threads can
//! both see the flag unset and both load. Two fixes: check again under the
//! lock before loading (double-checked locking done right), or let std's
//! `OnceLock` do it; either way exactly one thread loads.
//!
//! The cache is ordinary `std` code; `#[kase::instrument]` on its module
//! runs it on kase's shims.
//!
//! ```sh
//! cargo run --example lazy_cache    # print kase's report, then check the fix
//! cargo test --example lazy_cache   # the same models as tests
//! ```

use std::process::ExitCode;

use kase::FailureKind;

// `run`: explores one model and prints kase's report (shared by the examples).
mod common;
use common::run;

#[kase::instrument]
mod cache {
    use std::collections::HashMap;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex, OnceLock};
    use std::thread;

    /// Settings by name.
    pub type Config = HashMap<&'static str, u32>;

    /// How a cache computes its value.
    pub type Init<T> = Box<dyn Fn() -> T + Send + Sync>;

    /// The expensive computation the cache is there to avoid repeating;
    /// `loads` counts the calls.
    fn load_config(loads: &AtomicUsize) -> Config {
        loads.fetch_add(1, Ordering::SeqCst);
        HashMap::from([("workers", 4), ("retries", 3)])
    }

    /// A value computed on first use and shared afterwards.
    pub struct Lazy<T> {
        /// Whether `slot` holds the value yet (read without the lock).
        ready: AtomicBool,
        slot: Mutex<Option<Arc<T>>>,
        init: Init<T>,
    }

    impl<T> Lazy<T> {
        pub fn new(init: Init<T>) -> Self {
            Lazy {
                ready: AtomicBool::new(false),
                slot: Mutex::new(None),
                init,
            }
        }

        /// The bug: check, then act. Between seeing `ready` unset and
        /// storing the value, another thread can see it unset too.
        pub fn get_racy(&self) -> Arc<T> {
            if !self.ready.load(Ordering::Acquire) {
                let value = Arc::new((self.init)());
                *self.slot.lock().unwrap() = Some(value);
                self.ready.store(true, Ordering::Release);
            }
            self.slot.lock().unwrap().clone().unwrap()
        }

        /// The fix: if the flag is unset, take the lock and check again; the
        /// thread that finds the slot empty under the lock is the only one
        /// that loads.
        pub fn get(&self) -> Arc<T> {
            if self.ready.load(Ordering::Acquire) {
                return self.slot.lock().unwrap().clone().unwrap();
            }
            let mut slot = self.slot.lock().unwrap();
            let value = slot.get_or_insert_with(|| Arc::new((self.init)()));
            self.ready.store(true, Ordering::Release);
            value.clone()
        }
    }

    /// The idiomatic fix: std's `OnceLock` runs exactly one initialiser,
    /// and makes the other callers wait for it.
    pub struct OnceCache<T> {
        value: OnceLock<Arc<T>>,
        init: Init<T>,
    }

    impl<T> OnceCache<T> {
        pub fn new(init: Init<T>) -> Self {
            OnceCache {
                value: OnceLock::new(),
                init,
            }
        }

        pub fn get(&self) -> Arc<T> {
            self.value.get_or_init(|| Arc::new((self.init)())).clone()
        }
    }

    /// Two threads read the configuration through a cache made by `make`,
    /// with `get`: the configuration is loaded once, and both get it.
    fn two_readers<C: Send + Sync + 'static>(
        make: fn(Init<Config>) -> C,
        get: fn(&C) -> Arc<Config>,
    ) {
        let loads = Arc::new(AtomicUsize::new(0));
        let counter = loads.clone();
        let cache = Arc::new(make(Box::new(move || load_config(&counter))));
        let other = cache.clone();
        let t = thread::spawn(move || get(&other));
        let mine = get(&cache);
        let theirs = t.join().unwrap();
        assert_eq!(
            loads.load(Ordering::SeqCst),
            1,
            "the configuration was loaded more than once"
        );
        assert!(
            Arc::ptr_eq(&mine, &theirs),
            "the readers got different copies"
        );
        assert_eq!(mine["workers"], 4);
    }

    pub fn racy_readers() {
        two_readers(Lazy::new, Lazy::get_racy);
    }

    pub fn double_checked_readers() {
        two_readers(Lazy::new, Lazy::get);
    }

    pub fn once_lock_readers() {
        two_readers(OnceCache::new, OnceCache::get);
    }
}

fn main() -> ExitCode {
    let ok = run(
        "check the flag, then load",
        Some(FailureKind::Panic),
        cache::racy_readers,
    ) & run(
        "check again under the lock",
        None,
        cache::double_checked_readers,
    ) & run("std's OnceLock", None, cache::once_lock_readers);
    common::exit_code(ok)
}

#[cfg(test)]
mod tests {
    use super::cache;

    #[kase::test(expect = "panic")]
    fn check_then_load_loads_twice() {
        cache::racy_readers();
    }

    #[kase::test]
    fn double_checked_loads_once() {
        cache::double_checked_readers();
    }

    #[kase::test]
    fn once_lock_loads_once() {
        cache::once_lock_readers();
    }
}

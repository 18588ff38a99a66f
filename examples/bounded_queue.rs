//! A bounded blocking queue on `Mutex` + `Condvar`, with a lost wakeup.
//!
//! Producers wait while the queue is full, consumers while it is empty. The
//! buggy queue has one condition variable for both and wakes a single
//! waiter (`notify_one`) after each change. The waiter it wakes may be the
//! wrong kind: a consumer woken by another consumer finds the queue empty
//! and goes back to sleep, and the producer that could have gone on is never
//! told. Everybody sleeps: a deadlock that needs an exact interleaving of
//! three threads, which kase finds. The fixed queue has one condition
//! variable per condition, so every notification reaches a thread that
//! can use it.
//!
//! The queue is ordinary `std` code; `#[kase::instrument]` on its module
//! runs it on kase's shims.
//!
//! ```sh
//! cargo run --example bounded_queue    # print kase's report, then check the fix
//! cargo test --example bounded_queue   # the same models as tests
//! ```

use std::process::ExitCode;

use kase::FailureKind;

// `run`: explores one model and prints kase's report (shared by the examples).
mod common;
use common::run;

#[kase::instrument]
mod queue {
    use std::collections::VecDeque;
    use std::sync::{Arc, Condvar, Mutex};
    use std::thread;

    /// What the scenario needs from a queue.
    pub trait Queue<T>: Send + Sync {
        fn with_capacity(capacity: usize) -> Self;
        /// Waits while the queue is full.
        fn push(&self, value: T);
        /// Waits while the queue is empty.
        fn pop(&self) -> T;
    }

    /// The bug: one condition variable for "not full" and "not empty", and
    /// `notify_one`.
    pub struct OneCondvarQueue<T> {
        items: Mutex<VecDeque<T>>,
        changed: Condvar,
        capacity: usize,
    }

    impl<T: Send> Queue<T> for OneCondvarQueue<T> {
        fn with_capacity(capacity: usize) -> Self {
            OneCondvarQueue {
                items: Mutex::new(VecDeque::with_capacity(capacity)),
                changed: Condvar::new(),
                capacity,
            }
        }

        fn push(&self, value: T) {
            let mut items = self.items.lock().unwrap();
            while items.len() == self.capacity {
                items = self.changed.wait(items).unwrap();
            }
            items.push_back(value);
            // Meant for a consumer, but any waiter may get it.
            self.changed.notify_one();
        }

        fn pop(&self) -> T {
            let mut items = self.items.lock().unwrap();
            while items.is_empty() {
                items = self.changed.wait(items).unwrap();
            }
            let value = items.pop_front().unwrap();
            // Meant for a producer, but any waiter may get it.
            self.changed.notify_one();
            value
        }
    }

    /// The fix: producers wait on `not_full`, consumers on `not_empty`, and
    /// each change notifies the side that can act on it.
    pub struct BoundedQueue<T> {
        items: Mutex<VecDeque<T>>,
        not_empty: Condvar,
        not_full: Condvar,
        capacity: usize,
    }

    impl<T: Send> Queue<T> for BoundedQueue<T> {
        fn with_capacity(capacity: usize) -> Self {
            BoundedQueue {
                items: Mutex::new(VecDeque::with_capacity(capacity)),
                not_empty: Condvar::new(),
                not_full: Condvar::new(),
                capacity,
            }
        }

        fn push(&self, value: T) {
            let mut items = self.items.lock().unwrap();
            while items.len() == self.capacity {
                items = self.not_full.wait(items).unwrap();
            }
            items.push_back(value);
            self.not_empty.notify_one();
        }

        fn pop(&self) -> T {
            let mut items = self.items.lock().unwrap();
            while items.is_empty() {
                items = self.not_empty.wait(items).unwrap();
            }
            let value = items.pop_front().unwrap();
            self.not_full.notify_one();
            value
        }
    }

    /// One producer sends two values through a queue of capacity one to
    /// two consumers; each consumer receives one of them.
    pub fn one_producer_two_consumers<Q: Queue<u32> + 'static>() {
        let queue = Arc::new(Q::with_capacity(1));
        let consumers: Vec<_> = (0..2)
            .map(|_| {
                let queue = queue.clone();
                thread::spawn(move || queue.pop())
            })
            .collect();
        queue.push(1);
        queue.push(2);
        let mut received: Vec<u32> = consumers.into_iter().map(|c| c.join().unwrap()).collect();
        received.sort();
        assert_eq!(received, [1, 2]);
    }
}

use queue::{BoundedQueue, OneCondvarQueue};

fn main() -> ExitCode {
    let ok = run(
        "one condvar for full and empty, notify_one",
        Some(FailureKind::Deadlock),
        queue::one_producer_two_consumers::<OneCondvarQueue<u32>>,
    ) & run(
        "a condvar per condition",
        None,
        queue::one_producer_two_consumers::<BoundedQueue<u32>>,
    );
    common::exit_code(ok)
}

#[cfg(test)]
mod tests {
    use super::queue::{self, BoundedQueue, OneCondvarQueue};

    #[kase::test(expect = "deadlock")]
    fn one_condvar_loses_a_wakeup() {
        queue::one_producer_two_consumers::<OneCondvarQueue<u32>>();
    }

    #[kase::test]
    fn a_condvar_per_condition_is_correct() {
        queue::one_producer_two_consumers::<BoundedQueue<u32>>();
    }
}

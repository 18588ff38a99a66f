//! A bounded, lock-free, single-producer single-consumer queue (a ring
//! buffer) — an example of a library that uses kase as a *facade*.
//!
//! The library writes `kase::sync::…` and `kase::cell::UnsafeCell` where it
//! would write `std::sync::…` and `std::cell::UnsafeCell`. Its
//! `Cargo.toml` depends on kase with `default-features = false`, so in a
//! normal build those paths are plain re-exports of std and no kase runtime
//! is compiled (`tests/std_only.rs` checks that). Its `[dev-dependencies]`
//! turn kase's `model` feature on, so in its own tests the same code runs on
//! kase's instrumented shims and the tests below model-check it: every
//! interleaving of producer and consumer, and every access to a slot
//! checked for data races.
//!
//! ```
//! let (mut tx, mut rx) = facade_lib::channel(2);
//! tx.push(1).unwrap();
//! tx.push(2).unwrap();
//! assert_eq!(tx.push(3), Err(3)); // full
//! assert_eq!(rx.pop(), Some(1));
//! assert_eq!(rx.pop(), Some(2));
//! assert_eq!(rx.pop(), None);
//! ```

use std::mem::MaybeUninit;

use kase::cell::UnsafeCell;
use kase::sync::atomic::{AtomicUsize, Ordering};
use kase::sync::Arc;

/// Creates a queue holding at most `capacity` values, as its two ends.
///
/// # Panics
///
/// If `capacity` is 0.
pub fn channel<T: Send>(capacity: usize) -> (Producer<T>, Consumer<T>) {
    assert!(capacity > 0, "a queue needs room for at least one value");
    let ring = Arc::new(Ring {
        slots: (0..capacity)
            .map(|_| UnsafeCell::new(MaybeUninit::uninit()))
            .collect(),
        head: AtomicUsize::new(0),
        tail: AtomicUsize::new(0),
    });
    (
        Producer {
            ring: ring.clone(),
            tail: 0,
        },
        Consumer { ring, head: 0 },
    )
}

/// The sending end of a [`channel`].
pub struct Producer<T> {
    ring: Arc<Ring<T>>,
    /// The producer's own copy of `ring.tail` (only it writes that).
    tail: usize,
}

/// The receiving end of a [`channel`].
pub struct Consumer<T> {
    ring: Arc<Ring<T>>,
    /// The consumer's own copy of `ring.head` (only it writes that).
    head: usize,
}

/// The shared buffer. Positions count modulo `2 * capacity`, so that a full
/// ring (`tail - head == capacity`) and an empty one (`tail == head`) differ.
struct Ring<T> {
    slots: Box<[UnsafeCell<MaybeUninit<T>>]>,
    /// The position of the next value to pop; written by the consumer.
    head: AtomicUsize,
    /// The position of the next free slot; written by the producer.
    tail: AtomicUsize,
}

// SAFETY: a slot is written only by the producer while it is free, and read
// only by the consumer while it is full; `head` and `tail` (Release stores,
// Acquire loads) hand each slot over. Values cross threads, hence `T: Send`.
unsafe impl<T: Send> Sync for Ring<T> {}

impl<T> Ring<T> {
    fn capacity(&self) -> usize {
        self.slots.len()
    }

    fn next(&self, position: usize) -> usize {
        (position + 1) % (2 * self.capacity())
    }

    fn len(&self, head: usize, tail: usize) -> usize {
        (tail + 2 * self.capacity() - head) % (2 * self.capacity())
    }

    fn slot(&self, position: usize) -> &UnsafeCell<MaybeUninit<T>> {
        &self.slots[position % self.capacity()]
    }
}

impl<T> Producer<T> {
    /// Appends `value`, or gives it back if the queue is full.
    pub fn push(&mut self, value: T) -> Result<(), T> {
        let ring = &*self.ring;
        // Acquire: the consumer is done with every slot before `head`.
        let head = ring.head.load(Ordering::Acquire);
        if ring.len(head, self.tail) == ring.capacity() {
            return Err(value);
        }
        // SAFETY: the slot at `tail` is free (see above), and the consumer
        // does not read it before the Release store below publishes it.
        cell::with_mut(ring.slot(self.tail), |slot| unsafe {
            (*slot).write(value);
        });
        self.tail = ring.next(self.tail);
        ring.tail.store(self.tail, Ordering::Release);
        Ok(())
    }
}

impl<T> Consumer<T> {
    /// Removes the oldest value, if there is one.
    pub fn pop(&mut self) -> Option<T> {
        let ring = &*self.ring;
        // Acquire: the producer's write of every slot before `tail`.
        let tail = ring.tail.load(Ordering::Acquire);
        if self.head == tail {
            return None;
        }
        // SAFETY: the slot at `head` holds a value (see above), and the
        // producer does not reuse it before the Release store below.
        let value = cell::with(ring.slot(self.head), |slot| unsafe {
            (*slot).assume_init_read()
        });
        self.head = ring.next(self.head);
        ring.head.store(self.head, Ordering::Release);
        Some(value)
    }
}

impl<T> Drop for Ring<T> {
    fn drop(&mut self) {
        let (mut head, tail) = (*self.head.get_mut(), *self.tail.get_mut());
        while head != tail {
            let position = head % self.capacity();
            // SAFETY: the slots from `head` to `tail` hold values, and
            // `&mut self` means both ends are gone.
            unsafe { self.slots[position].get_mut().assume_init_drop() };
            head = self.next(head);
        }
    }
}

/// Accesses to the ring's cells.
///
/// In this crate's unit tests kase's `model` feature is on and
/// `kase::cell::UnsafeCell` is kase's: the accesses go through its tracked
/// `with` / `with_mut`, which the model checker checks for data races.
/// Otherwise the cell may be std's, which has only `get`: the same accesses
/// through the raw pointer, at no cost. (`#[track_caller]`: kase reports
/// the caller's line for each access.)
mod cell {
    use kase::cell::UnsafeCell;

    #[cfg(test)]
    #[track_caller]
    pub(crate) fn with<T, R>(cell: &UnsafeCell<T>, f: impl FnOnce(*const T) -> R) -> R {
        cell.with(f)
    }

    #[cfg(test)]
    #[track_caller]
    pub(crate) fn with_mut<T, R>(cell: &UnsafeCell<T>, f: impl FnOnce(*mut T) -> R) -> R {
        cell.with_mut(f)
    }

    #[cfg(not(test))]
    #[inline]
    pub(crate) fn with<T, R>(cell: &UnsafeCell<T>, f: impl FnOnce(*const T) -> R) -> R {
        f(cell.get())
    }

    #[cfg(not(test))]
    #[inline]
    pub(crate) fn with_mut<T, R>(cell: &UnsafeCell<T>, f: impl FnOnce(*mut T) -> R) -> R {
        f(cell.get())
    }
}

#[cfg(test)]
mod tests {
    use super::channel;
    use kase::sync::Arc;
    use kase::thread;

    /// A producer sends three values through a queue of two slots while a
    /// consumer receives them; both retry (yielding) when the queue is full
    /// or empty. kase runs every interleaving: the values arrive in order,
    /// and no slot is read while it is written.
    #[kase::test]
    fn values_arrive_in_order() {
        let (mut tx, mut rx) = channel(2);
        let producer = thread::spawn(move || {
            for i in 1..=3 {
                let mut value = i;
                while let Err(back) = tx.push(value) {
                    value = back;
                    thread::yield_now();
                }
            }
        });
        let mut received = Vec::new();
        while received.len() < 3 {
            match rx.pop() {
                Some(v) => received.push(v),
                None => thread::yield_now(),
            }
        }
        producer.join().unwrap();
        assert_eq!(received, [1, 2, 3]);
    }

    /// Values still in the queue are dropped with it, whichever end goes
    /// last.
    #[kase::test]
    fn leftover_values_are_dropped() {
        let value = Arc::new(());
        let (mut tx, rx) = channel(1);
        tx.push(value.clone()).unwrap();
        let t = thread::spawn(move || drop(rx));
        drop(tx);
        t.join().unwrap();
        assert_eq!(Arc::strong_count(&value), 1);
    }

    /// Outside a model kase's shims are std's behaviour: real threads.
    #[test]
    fn works_with_real_threads() {
        let (mut tx, mut rx) = channel(4);
        let producer = std::thread::spawn(move || {
            for i in 0..1000 {
                let mut value = i;
                while let Err(back) = tx.push(value) {
                    value = back;
                    std::thread::yield_now();
                }
            }
        });
        let mut next = 0;
        while next < 1000 {
            if let Some(v) = rx.pop() {
                assert_eq!(v, next);
                next += 1;
            }
        }
        producer.join().unwrap();
    }
}

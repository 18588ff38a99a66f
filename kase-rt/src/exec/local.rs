//! Per-model-thread storage for `thread_local!` values.
//!
//! Every model thread has its own [`Locals`]: a value is created lazily on the
//! thread's first access to its key, lives in a box (so references handed out
//! stay valid while other values are added) and is destroyed when the thread's
//! closure has returned, in the thread itself and before its exit event
//! ([`DestroyOnExit`], armed by the thread body). Keys are identified by an
//! address unique to each `thread_local!` declaration.

use std::any::Any;

use super::action::ThreadIdx;
use super::error::internal_error;

/// The state of one key's value in one model thread.
enum Slot {
    /// The initialiser is running.
    Initializing,
    /// Initialised; boxed, so its address is stable.
    Alive(Box<dyn Any>),
    /// Destroyed at thread exit (or being destroyed).
    Destroyed,
}

/// What a model thread holds for a key.
pub(crate) enum Lookup {
    /// Never initialised in this thread.
    Absent,
    /// Its initialiser is running (a recursive access).
    Initializing,
    /// The value.
    Alive(*const dyn Any),
    /// Destroyed, or being destroyed.
    Destroyed,
}

/// The `thread_local!` values of one model thread, in order of completed
/// initialisation (destroyed in reverse, so a value may use the ones its
/// initialiser used while it is dropped).
#[derive(Default)]
pub(crate) struct Locals {
    slots: Vec<(usize, Slot)>,
}

impl Locals {
    fn position(&self, key: usize) -> Option<usize> {
        self.slots.iter().position(|(k, _)| *k == key)
    }

    /// What the thread holds for `key`.
    pub(crate) fn lookup(&self, key: usize) -> Lookup {
        match self.position(key).map(|i| &self.slots[i].1) {
            None => Lookup::Absent,
            Some(Slot::Initializing) => Lookup::Initializing,
            Some(Slot::Alive(value)) => Lookup::Alive(&**value as *const dyn Any),
            Some(Slot::Destroyed) => Lookup::Destroyed,
        }
    }

    /// Marks `key` as being initialised (it must be absent).
    pub(crate) fn start_init(&mut self, key: usize) {
        debug_assert!(self.position(key).is_none());
        self.slots.push((key, Slot::Initializing));
    }

    /// Forgets an initialisation that did not complete (its initialiser
    /// panicked): the next access runs it again.
    pub(crate) fn abort_init(&mut self, key: usize) {
        if let Some(i) = self.position(key) {
            if matches!(self.slots[i].1, Slot::Initializing) {
                self.slots.remove(i);
            }
        }
    }

    /// Stores `value` for `key` (absent or being initialised); returns where
    /// it lives, valid until the thread's locals are destroyed.
    pub(crate) fn finish_init(&mut self, key: usize, value: Box<dyn Any>) -> *const dyn Any {
        if let Some(i) = self.position(key) {
            self.slots.remove(i);
        }
        let ptr = &*value as *const dyn Any;
        self.slots.push((key, Slot::Alive(value)));
        ptr
    }

    /// Takes the most recently initialised live value out, marking its key
    /// destroyed.
    fn take_last_alive(&mut self) -> Option<Box<dyn Any>> {
        let i = self
            .slots
            .iter()
            .rposition(|(_, s)| matches!(s, Slot::Alive(_)))?;
        match std::mem::replace(&mut self.slots[i].1, Slot::Destroyed) {
            Slot::Alive(value) => Some(value),
            _ => internal_error!("position of a live slot"),
        }
    }
}

/// Runs `f` on the locals of the model thread running now. A change to a
/// value is no event: the caller notes it (`note_access`), so a spin
/// iteration that changed one is not taken for a repetition (exec/spin).
pub(crate) fn with_current<R>(f: impl FnOnce(&mut Locals) -> R) -> R {
    super::with(|e| {
        let t = e.current();
        f(&mut e.thread_mut(t).locals)
    })
}

/// The running thread accessed a `thread_local!` value and `changed` it
/// (or may have): then no spin iteration before this repeats itself
/// (exec/spin).
pub(crate) fn note_access(changed: bool) {
    super::with(|e| e.note_local_access(changed));
}

/// Values larger than this are not hashed at each access: any access to
/// one counts as a change.
const MAX_HASHED: usize = 256;

/// A hash of the bytes `value` holds in place (not what it points to: as
/// for the stack fingerprint, state behind a pointer is not seen), or
/// `None` for a value too large to hash at every access. Equal before and
/// after an access: the access changed nothing the thread keeps in place.
pub(crate) fn in_place_state<T>(value: *const T) -> Option<u64> {
    let size = std::mem::size_of::<T>();
    if size > MAX_HASHED {
        return None;
    }
    let bytes = value.cast::<u8>();
    let mut hash = 0xcbf2_9ce4_8422_2325_u64; // FNV-1a
    for i in 0..size {
        // SAFETY: `value` points to a live `T` of `size` bytes, owned by
        // this thread's locals, with no reference to it alive outside this
        // thread (and none formed here). The read is volatile because
        // padding bytes may never have been written: they are read as raw
        // memory, as the stack fingerprint reads other frames, and only
        // feed a hash (a padding byte that changed makes a false "changed",
        // which only makes the spin rule wait less).
        let byte = unsafe { std::ptr::read_volatile(bytes.add(i)) };
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x100_0000_01b3);
    }
    Some(hash)
}

/// Armed at the start of a model thread's body: when dropped (the closure
/// returned or is unwinding), destroys the thread's `thread_local!` values,
/// most recent first, each outside the execution's borrow so that its `Drop`
/// may use shims. A value initialised by another value's destructor is
/// destroyed too.
pub(crate) struct DestroyOnExit(pub(crate) ThreadIdx);

impl Drop for DestroyOnExit {
    fn drop(&mut self) {
        let thread = self.0;
        while let Some(value) = super::with(|e| e.thread_mut(thread).locals.take_last_alive()) {
            drop(value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::{Cell, RefCell};

    #[test]
    fn lifecycle_and_destruction_order() {
        let mut locals = Locals::default();
        assert!(matches!(locals.lookup(1), Lookup::Absent));
        locals.start_init(1);
        assert!(matches!(locals.lookup(1), Lookup::Initializing));
        // Key 2 is initialised by key 1's initialiser: it completes first.
        locals.start_init(2);
        locals.finish_init(2, Box::new(20u32));
        let p = locals.finish_init(1, Box::new(10u32));
        // SAFETY: the box is alive in `locals`.
        assert_eq!(unsafe { &*p }.downcast_ref::<u32>(), Some(&10));
        locals.start_init(3);
        locals.abort_init(3);
        assert!(matches!(locals.lookup(3), Lookup::Absent));
        let first = locals.take_last_alive().unwrap();
        assert_eq!(first.downcast_ref::<u32>(), Some(&10));
        assert!(matches!(locals.lookup(1), Lookup::Destroyed));
        assert!(matches!(locals.lookup(2), Lookup::Alive(_)));
        let second = locals.take_last_alive().unwrap();
        assert_eq!(second.downcast_ref::<u32>(), Some(&20));
        assert!(locals.take_last_alive().is_none());
    }

    #[test]
    fn the_in_place_state_follows_the_bytes_held_in_place() {
        let count = Cell::new(5u32);
        let before = in_place_state(&count);
        assert!(before.is_some());
        assert_eq!(in_place_state(&count), before, "read twice, unchanged");
        count.set(6);
        assert_ne!(in_place_state(&count), before, "a counter that moved");
        count.set(5);
        assert_eq!(in_place_state(&count), before, "back to the same bytes");

        // With padding (a `u8` next to a `u32`): reading it twice agrees.
        let padded = Cell::new((1u8, 2u32));
        assert_eq!(in_place_state(&padded), in_place_state(&padded));

        // State behind a pointer is not seen (documented limit).
        let boxed = RefCell::new(Box::new(1u32));
        let before = in_place_state(&boxed);
        **boxed.borrow_mut() = 2;
        assert_eq!(in_place_state(&boxed), before);

        // Too large to hash at every access.
        assert_eq!(in_place_state(&[0u8; 300]), None);
    }
}

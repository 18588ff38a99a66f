//! `UnsafeCell` with std's API plus tracked accesses.
//!
//! `get` returns the raw pointer as std does; kase cannot see what is done
//! with it. Code that wants its accesses checked uses [`UnsafeCell::with`]
//! and [`UnsafeCell::with_mut`] (loom's names): in a model each call is an
//! access kase checks against happens-before, and two accesses — at least one
//! a write — that no synchronisation orders are a data race, reported with
//! both threads and source locations. Accesses are not scheduling points:
//! a race is found from the clocks whichever order the run put them in.

use std::fmt;
use std::panic::Location;

use crate::exec::hb::CellState;
use crate::exec::object::{ObjectDetail, ObjectHandle};
use crate::exec::{self, ObjectIdx, OpKind};

/// The core primitive for interior mutability, a drop-in for
/// [`std::cell::UnsafeCell`] whose `with` / `with_mut` accesses kase checks
/// for data races.
///
/// ```
/// # extern crate kase_rt as kase;
/// use kase::cell::UnsafeCell;
/// use kase::sync::atomic::{AtomicBool, Ordering};
/// use kase::sync::Arc;
/// use kase::thread;
///
/// struct Slot(UnsafeCell<u32>, AtomicBool);
/// // SAFETY (for this example): the flag orders the accesses.
/// unsafe impl Sync for Slot {}
///
/// // Publishing with a Relaxed flag does not order the data: a data race.
/// let report = kase::Builder::new().explore(|| {
///     let slot = Arc::new(Slot(UnsafeCell::new(0), AtomicBool::new(false)));
///     let s = slot.clone();
///     let t = thread::spawn(move || {
///         s.0.with_mut(|p| unsafe { *p = 42 });
///         s.1.store(true, Ordering::Relaxed);
///     });
///     if slot.1.load(Ordering::Relaxed) {
///         assert_eq!(slot.0.with(|p| unsafe { *p }), 42);
///     }
///     t.join().unwrap();
/// });
/// assert_eq!(report.failure().unwrap().kind(), kase::FailureKind::DataRace);
/// ```
///
/// Unlike std's, this cell is not guaranteed to have the layout of `T`: it
/// also holds kase's handle (in a model only; with the `model` feature off
/// the `kase` facade exports std's own `UnsafeCell`).
pub struct UnsafeCell<T: ?Sized> {
    handle: ObjectHandle,
    value: std::cell::UnsafeCell<T>,
}

impl<T> UnsafeCell<T> {
    /// Wraps `value`.
    pub const fn new(value: T) -> Self {
        UnsafeCell {
            handle: ObjectHandle::new(),
            value: std::cell::UnsafeCell::new(value),
        }
    }

    /// Unwraps the value.
    pub fn into_inner(self) -> T {
        self.value.into_inner()
    }

    /// A raw pointer to the value of the cell behind `this`, as std (for
    /// sized `T` only: the field offset of an unsized value is not known
    /// without a reference).
    pub const fn raw_get(this: *const Self) -> *mut T {
        let value = this
            .cast::<u8>()
            .wrapping_add(std::mem::offset_of!(Self, value))
            .cast::<std::cell::UnsafeCell<T>>();
        std::cell::UnsafeCell::raw_get(value)
    }
}

impl<T: ?Sized> UnsafeCell<T> {
    /// A raw pointer to the value, as std. Accesses through it are not
    /// checked; use [`with`](Self::with) / [`with_mut`](Self::with_mut).
    pub const fn get(&self) -> *mut T {
        self.value.get()
    }

    /// Mutable access through `&mut self` (exclusive, so never a race).
    pub fn get_mut(&mut self) -> &mut T {
        self.value.get_mut()
    }

    /// Reads through `*const T`: in a model, a read access checked for data
    /// races.
    #[track_caller]
    pub fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        self.track(false, Location::caller());
        f(self.value.get())
    }

    /// Writes (or reads) through `*mut T`: in a model, a write access
    /// checked for data races. A racing access does not run: the thread
    /// unwinds there, and the report shows both accesses.
    #[track_caller]
    pub fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        self.track(true, Location::caller());
        f(self.value.get())
    }

    fn track(&self, write: bool, location: &'static Location<'static>) {
        if !exec::in_model() {
            return;
        }
        let (object, pure) = exec::with(|e| {
            let object: ObjectIdx = e.object(
                &self.handle,
                || ObjectDetail::Cell(CellState::default()),
                || {},
            );
            if write {
                // Not always an event, but it ends any spin (exec/spin).
                e.note_unseen_write();
            }
            (object, e.in_pure_part())
        });
        if pure {
            // Inside a pure part of a critical section (peeking) the access
            // is what orders the section: an event, not a scheduling point.
            let kind = if write {
                OpKind::DataWrite
            } else {
                OpKind::DataRead
            };
            exec::visible(Some(object), kind, location, |_, _| ((), None));
        }
        let raced = exec::with(|e| e.cell_access(object, write, location));
        if raced {
            stop_at_data_race();
        }
    }
}

/// Unwinds the current model thread at an access that races: it must not
/// happen (in real code it may touch freed memory); the execution has
/// already failed with the data race, which is what is reported.
pub(crate) fn stop_at_data_race() -> ! {
    std::panic::resume_unwind(Box::new(DataRaceStop))
}

/// The payload that unwinds a thread stopped at a data race.
struct DataRaceStop;

impl<T: Default> Default for UnsafeCell<T> {
    fn default() -> Self {
        UnsafeCell::new(T::default())
    }
}

impl<T> From<T> for UnsafeCell<T> {
    fn from(t: T) -> Self {
        UnsafeCell::new(t)
    }
}

impl<T: ?Sized> fmt::Debug for UnsafeCell<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnsafeCell").finish_non_exhaustive()
    }
}

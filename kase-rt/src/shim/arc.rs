//! Leak detection for `Arc`s: the allocations that rewritten code makes with
//! `Arc::new` / `Arc::new_cyclic` are tracked, and one still alive when an
//! execution has ended (every thread finished, the model closure returned)
//! is a `Leak` failure naming where it was created — typically a reference
//! cycle.
//!
//! `kase::sync::Arc` stays std's own type (so `Arc<dyn Trait>` coercions
//! keep working); `#[kase::test]` and `#[kase::instrument]` wrap each such
//! call as `(&Wrap::new(Arc::new(x))).__kase_track()`. Method resolution
//! picks [`TrackArc`] when the value is a `std::sync::Arc` (its receiver
//! needs no auto-reference) and [`PassThrough`] for anything else (a type of
//! the user's own that happens to be called `Arc`), which returns the value
//! untouched.

use std::cell::Cell;
use std::panic::Location;
use std::sync::{Arc, Weak};

use crate::exec::error::OrInternal;
use crate::exec::{self, Alive};

/// Holds the value of a wrapped constructor call until a `__kase_track`
/// method takes it. Not public API.
#[doc(hidden)]
pub struct Wrap<T>(Cell<Option<T>>);

impl<T> Wrap<T> {
    /// Wraps the value a constructor call produced.
    pub fn new(value: T) -> Self {
        Wrap(Cell::new(Some(value)))
    }

    fn take(&self) -> T {
        self.0.take().or_internal("a tracked value taken twice")
    }
}

/// Chosen for a `std::sync::Arc`: registers it with the running execution.
#[doc(hidden)]
pub trait TrackArc<T> {
    /// Returns the wrapped `Arc`, tracked if a model is running.
    fn __kase_track(&self) -> T;
}

impl<U: ?Sized> TrackArc<Arc<U>> for Wrap<Arc<U>> {
    #[track_caller]
    fn __kase_track(&self) -> Arc<U> {
        let arc = self.take();
        track(&arc, Location::caller());
        arc
    }
}

/// Chosen for any other type: returns the value as it is.
#[doc(hidden)]
pub trait PassThrough<T> {
    /// Returns the wrapped value.
    fn __kase_track(&self) -> T;
}

impl<T> PassThrough<T> for &Wrap<T> {
    fn __kase_track(&self) -> T {
        self.take()
    }
}

struct Probe<T: ?Sized>(Weak<T>);

impl<T: ?Sized> Alive for Probe<T> {
    fn strong(&self) -> usize {
        self.0.strong_count()
    }

    fn allocation(&self) -> *const () {
        self.0.as_ptr().cast()
    }
}

/// The weak references to `arc`'s allocation that are kase's leak probes.
fn probes<T: ?Sized>(arc: &Arc<T>) -> usize {
    if !exec::in_model() {
        return 0;
    }
    let value = Arc::as_ptr(arc).cast::<()>();
    exec::with(|e| e.arc_probes(value))
}

/// Whether `arc` is its allocation's only reference, kase's leak probes
/// aside.
fn unique<U: ?Sized>(arc: &Arc<U>) -> bool {
    Arc::strong_count(arc) == 1 && Arc::weak_count(arc) == probes(arc)
}

/// The value of `arc`, which [`unique`] holds for.
fn value_of_unique<U: ?Sized>(arc: &mut Arc<U>) -> &mut U {
    debug_assert!(unique(arc));
    let value = Arc::as_ptr(arc).cast_mut();
    // SAFETY: `arc` is the allocation's only strong reference, borrowed
    // mutably for as long as the result, and every weak reference is a leak
    // probe of this execution, which only reads the counts and never
    // upgrades: nothing else can reach the value meanwhile. (This is std's
    // `get_mut` with the probes discounted; `as_ptr` points into the
    // allocation as its own does.)
    unsafe { &mut *value }
}

/// `Arc::get_mut` with kase's leak probes (each a `Weak`) not counted.
/// Not public API.
#[doc(hidden)]
pub fn arc_get_mut<U: ?Sized>(arc: &mut Arc<U>) -> Option<&mut U> {
    if unique(arc) {
        Some(value_of_unique(arc))
    } else {
        Arc::get_mut(arc)
    }
}

/// Chosen for `Arc::get_mut` on a `std::sync::Arc` (the attributes rewrite
/// it, `weak_count` and `make_mut`): std's answers, with kase's leak probes
/// not counted. Not public API.
#[doc(hidden)]
pub trait ArcGetMut<'a, U: ?Sized> {
    /// `Arc::get_mut`, the probes aside.
    fn __kase_get_mut(
        &self,
        std: impl FnOnce(&'a mut Arc<U>) -> Option<&'a mut U>,
    ) -> Option<&'a mut U>;
}

impl<'a, U: ?Sized> ArcGetMut<'a, U> for Wrap<&'a mut Arc<U>> {
    fn __kase_get_mut(
        &self,
        _: impl FnOnce(&'a mut Arc<U>) -> Option<&'a mut U>,
    ) -> Option<&'a mut U> {
        arc_get_mut(self.take())
    }
}

/// Chosen for `Arc::make_mut` on a `std::sync::Arc`. Not public API.
#[doc(hidden)]
pub trait ArcMakeMut<'a, U> {
    /// `Arc::make_mut`, the probes aside: in place when unique (std would
    /// move the value out from under the probes' `Weak`s).
    fn __kase_make_mut(&self, std: impl FnOnce(&'a mut Arc<U>) -> &'a mut U) -> &'a mut U;
}

impl<'a, U: Clone> ArcMakeMut<'a, U> for Wrap<&'a mut Arc<U>> {
    fn __kase_make_mut(&self, _: impl FnOnce(&'a mut Arc<U>) -> &'a mut U) -> &'a mut U {
        let arc = self.take();
        if unique(arc) {
            value_of_unique(arc)
        } else {
            Arc::make_mut(arc)
        }
    }
}

/// Chosen for `Arc::weak_count` on a `std::sync::Arc`. Not public API.
#[doc(hidden)]
pub trait ArcWeakCount<U: ?Sized> {
    /// `Arc::weak_count`, the probes aside.
    fn __kase_weak_count(&self, std: impl FnOnce(&Arc<U>) -> usize) -> usize;
}

impl<U: ?Sized> ArcWeakCount<U> for Wrap<&Arc<U>> {
    fn __kase_weak_count(&self, _: impl FnOnce(&Arc<U>) -> usize) -> usize {
        let arc = self.take();
        Arc::weak_count(arc) - probes(arc)
    }
}

/// Chosen for any other type than std's `Arc`: calls the function the code
/// named, on the value as it is. Not public API.
#[doc(hidden)]
pub trait PassThroughCall<T> {
    /// The call `Arc::get_mut(value)` as written.
    fn __kase_get_mut<R>(&self, call: impl FnOnce(T) -> R) -> R;
    /// The call `Arc::weak_count(value)` as written.
    fn __kase_weak_count<R>(&self, call: impl FnOnce(T) -> R) -> R;
    /// The call `Arc::make_mut(value)` as written.
    fn __kase_make_mut<R>(&self, call: impl FnOnce(T) -> R) -> R;
}

impl<T> PassThroughCall<T> for &Wrap<T> {
    fn __kase_get_mut<R>(&self, call: impl FnOnce(T) -> R) -> R {
        call(self.take())
    }

    fn __kase_weak_count<R>(&self, call: impl FnOnce(T) -> R) -> R {
        call(self.take())
    }

    fn __kase_make_mut<R>(&self, call: impl FnOnce(T) -> R) -> R {
        call(self.take())
    }
}

/// Registers `arc`'s allocation with the execution running on this thread,
/// if any.
fn track<'a, T: ?Sized + 'a>(arc: &Arc<T>, at: &'static Location<'static>) {
    if !exec::in_model() {
        return;
    }
    let probe: Box<dyn Alive + 'a> = Box::new(Probe(Arc::downgrade(arc)));
    // SAFETY: only the lifetime bound is erased; the layout of the box is
    // unchanged. The probe never touches the `T` itself: `strong_count`
    // reads the allocation's counters, which its `Weak` keeps allocated, and
    // dropping a `Weak` only decrements the weak count and, for the last
    // reference, frees the memory (by the layout in the pointer's metadata);
    // the value was dropped by its last strong owner, not by the `Weak`. So
    // the probe may outlive whatever `T` borrows.
    let probe: Box<dyn Alive + 'static> =
        unsafe { std::mem::transmute::<Box<dyn Alive + 'a>, Box<dyn Alive + 'static>>(probe) };
    exec::with(|e| e.track_arc(probe, at));
}

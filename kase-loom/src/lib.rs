//! loom 0.7's API, explored by kase.
//!
//! A crate whose concurrency tests are written against [loom] runs them
//! under kase by changing one line of its `Cargo.toml`:
//!
//! ```toml
//! [target.'cfg(loom)'.dev-dependencies]
//! loom = { package = "kase-loom", path = "../kase/kase-loom" }
//! ```
//!
//! The paths and signatures are loom's: [`model()`], [`model::Builder`] with
//! its public fields and `LOOM_*` variables, [`sync`] (with atomics'
//! `with_mut` and `unsync_load`), [`cell::UnsafeCell`] with
//! [`ConstPtr`](cell::ConstPtr) / [`MutPtr`](cell::MutPtr), [`thread`],
//! [`thread_local!`], [`lazy_static!`], [`future::block_on`] and
//! [`future::AtomicWaker`], [`sync::Notify`], [`hint`] and [`alloc`] (with
//! [`Track`](alloc::Track)).
//! Behind them is kase: its partial-order reduction (one execution per
//! behaviour), its spin-loop rule, Rust's memory model for orderings weaker
//! than `SeqCst`, and its failure reports with a replayable schedule.
//! Beyond loom, a free through [`alloc::dealloc`] is a write to everything
//! in the block: an access that races with it is a data race, and one after
//! it a use after free, each reported with the free and the access. So is
//! a free through std's allocator (dropping a `Box` or a `Vec` that holds
//! atomics or cells): with the default feature `std-heap`, kase-loom
//! installs [`kase_rt::alloc::TrackingAllocator`] as the global allocator
//! of whatever links it (turn the feature off if the test binary has a
//! global allocator of its own).
//!
//! The exploration controls [`stop_exploring`], [`explore`] and
//! [`skip_branch`] work as loom's: each choice made while exploring is off
//! (which thread runs, which store a read reads, where a store goes, which
//! earlier reads a store revisits) goes one way only, under every kase
//! explorer; the report then says the exploration is incomplete, and why.
//!
//! [`sync::Arc`] is loom's: its methods (`from_std` among them) over std's
//! `Arc`, and an `Arc` still alive when an execution ends is a leak, as
//! under loom; its reference count is not modelled as loom's is.
//!
//! ```
//! use kase_loom as loom;
//! use loom::sync::atomic::{AtomicUsize, Ordering::SeqCst};
//! use loom::sync::Arc;
//! use loom::thread;
//!
//! loom::model(|| {
//!     let n = Arc::new(AtomicUsize::new(0));
//!     let n1 = n.clone();
//!     let t = thread::spawn(move || n1.fetch_add(1, SeqCst));
//!     n.fetch_add(1, SeqCst);
//!     t.join().unwrap();
//!     assert_eq!(n.load(SeqCst), 2);
//! });
//! ```
//!
//! [loom]: https://docs.rs/loom/0.7

pub mod alloc;
mod arc;
mod atomic_waker;
pub mod cell;
#[doc(hidden)]
pub mod lazy;
pub mod model;
mod notify;
pub mod thread;

/// std's allocator, tracked in a model (the `std-heap` feature).
#[cfg(feature = "std-heap")]
#[global_allocator]
static TRACKING_ALLOCATOR: kase_rt::alloc::TrackingAllocator = kase_rt::alloc::TrackingAllocator;

pub use kase_rt::__private::{explore, skip_branch, stop_exploring};
pub use model::model;

/// loom's limit on threads per model (kase has none; kept for code that
/// names it).
pub const MAX_THREADS: usize = 5;

/// `loom::sync`: kase's instrumented locks, condvars, channels, `Once`
/// and atomics, loom's [`Arc`](sync::Arc) (std's, with loom's methods and
/// a leak check) and loom's [`Notify`](sync::Notify).
pub mod sync {
    pub use crate::arc::Arc;
    pub use crate::notify::Notify;
    pub use kase_rt::sync::*;
}

/// `loom::hint`: `spin_loop` is a scheduling point.
pub mod hint {
    pub use kase_rt::hint::*;
}

/// `loom::future`: [`block_on`](future::block_on) polls a future on the
/// current model thread, parking it while the future is pending;
/// [`AtomicWaker`](future::AtomicWaker) is loom's model of the waker slot.
pub mod future {
    pub use crate::atomic_waker::AtomicWaker;
    pub use kase_rt::future::block_on;
}

/// `thread_local!` whose values live per model thread, reset with every
/// execution.
pub use kase_rt::thread_local;

/// loom's `lazy_static!`: each `static ref` is initialised on first use in
/// every execution and, as under loom, dropped when the model's main
/// closure returns (so an `Arc` or a `Box` it holds is no leak; a thread
/// still using it then is a data race, and one that first uses it then
/// panics). Like the `lazy_static` crate's, each `static ref NAME: T`
/// is a unit struct `NAME` that dereferences to `T`.
///
/// ```
/// use kase_loom as loom;
/// use loom::sync::Arc;
/// loom::lazy_static! {
///     static ref ANSWER: usize = 6 * 7;
///     pub(crate) static ref SHARED: Arc<usize> = Arc::new(1);
/// }
/// loom::model(|| {
///     assert_eq!(*ANSWER, 42);
///     assert_eq!(**SHARED, 1); // dropped when the closure returns: no leak
/// });
/// ```
#[macro_export]
macro_rules! lazy_static {
    ($(#[$attr:meta])* $vis:vis static ref $name:ident : $t:ty = $init:expr; $($rest:tt)*) => {
        #[allow(non_camel_case_types)]
        #[doc(hidden)]
        $vis struct $name {
            __private_field: (),
        }
        $(#[$attr])*
        $vis static $name: $name = $name { __private_field: () };
        impl ::core::ops::Deref for $name {
            type Target = $t;
            #[track_caller]
            fn deref(&self) -> &$t {
                static LAZY: $crate::sync::LazyLock<$t> = $crate::sync::LazyLock::new(|| $init);
                $crate::lazy::force(&LAZY, ::core::stringify!($name))
            }
        }
        $crate::lazy_static!($($rest)*);
    };
    () => {};
}

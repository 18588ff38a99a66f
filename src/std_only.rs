//! What the facade adds to std's re-exports when the `model` feature is
//! off, so that code written against kase's API builds unchanged: loom's
//! extra atomic methods as [`AtomicExt`], and a park-based
//! [`block_on`].

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{
    AtomicBool, AtomicI16, AtomicI32, AtomicI64, AtomicI8, AtomicIsize, AtomicPtr, AtomicU16,
    AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering,
};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, Thread};

/// loom's extra atomic methods for std's atomics (with the `model` feature,
/// kase's atomics have them inherently and implement this trait too).
pub trait AtomicExt {
    /// The type of the value (`usize` for `AtomicUsize`, `*mut T` for
    /// `AtomicPtr<T>`).
    type Value;

    /// Calls `f` with a mutable reference to the value (std's `get_mut`).
    fn with_mut<R>(&mut self, f: impl FnOnce(&mut Self::Value) -> R) -> R;

    /// Loads the value without synchronisation (here a `Relaxed` load).
    ///
    /// # Safety
    ///
    /// No store to the location may happen concurrently with the load.
    unsafe fn unsync_load(&self) -> Self::Value;
}

macro_rules! atomic_ext {
    ($([$($g:ident)?] $name:ty, $int:ty;)*) => {$(
        impl$(<$g>)? AtomicExt for $name {
            type Value = $int;

            fn with_mut<R>(&mut self, f: impl FnOnce(&mut $int) -> R) -> R {
                f(self.get_mut())
            }

            unsafe fn unsync_load(&self) -> $int {
                self.load(Ordering::Relaxed)
            }
        }
    )*};
}

atomic_ext! {
    [] AtomicBool, bool;
    [] AtomicI8, i8;
    [] AtomicI16, i16;
    [] AtomicI32, i32;
    [] AtomicI64, i64;
    [] AtomicIsize, isize;
    [] AtomicU8, u8;
    [] AtomicU16, u16;
    [] AtomicU32, u32;
    [] AtomicU64, u64;
    [] AtomicUsize, usize;
    [T] AtomicPtr<T>, *mut T;
}

/// Wakes the thread blocked in [`block_on`].
struct Unparker(Thread);

impl Wake for Unparker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

/// Polls `f` on the current thread until it is ready, parking the thread
/// while it is pending; returns its output.
pub fn block_on<F: Future>(f: F) -> F::Output {
    let mut f = pin!(f);
    let waker = Waker::from(Arc::new(Unparker(thread::current())));
    let mut cx = Context::from_waker(&waker);
    loop {
        if let Poll::Ready(output) = f.as_mut().poll(&mut cx) {
            return output;
        }
        thread::park();
    }
}

//! `loom::alloc`: allocation functions with loom's signatures, tracked by
//! kase in a model (`kase::alloc`): a block never freed is a leak, and a
//! free is a write to every atomic, cell and lock in the block, so an access
//! racing with it is a data race and one after it a use after free.

pub use kase_rt::alloc::{alloc, alloc_zeroed, dealloc, Layout};

/// loom's `Track`: a value whose drop kase checks for, as a leak if the
/// model ends with it still alive (`mem::forget`, a reference cycle).
///
/// ```
/// use kase_loom::alloc::Track;
///
/// let report = kase_rt::Builder::new().explore(|| {
///     std::mem::forget(Track::new(5));
/// });
/// assert_eq!(report.failure().unwrap().kind(), kase_rt::FailureKind::Leak);
/// ```
#[derive(Debug)]
pub struct Track<T> {
    value: T,
    _allocation: Allocation,
}

impl<T> Track<T> {
    /// Tracks `value` for leaks.
    #[track_caller]
    pub fn new(value: T) -> Track<T> {
        Track {
            value,
            _allocation: Allocation::new(),
        }
    }

    /// The value.
    pub fn get_ref(&self) -> &T {
        &self.value
    }

    /// The value, mutably.
    pub fn get_mut(&mut self) -> &mut T {
        &mut self.value
    }

    /// Stops tracking the value for leaks.
    pub fn into_inner(self) -> T {
        self.value
    }
}

/// A one-byte tracked block standing for a [`Track`]'s value: freed when
/// the `Track` drops, so one never dropped is reported where it was made.
#[derive(Debug)]
struct Allocation(*mut u8);

// SAFETY: the pointer is only passed back to `dealloc`, never dereferenced.
unsafe impl Send for Allocation {}
// SAFETY: as above; `&Allocation` gives no access to it.
unsafe impl Sync for Allocation {}

const ONE_BYTE: Layout = Layout::new::<u8>();

impl Allocation {
    #[track_caller]
    fn new() -> Self {
        // SAFETY: the layout is not zero-sized.
        Allocation(unsafe { alloc(ONE_BYTE) })
    }
}

impl Drop for Allocation {
    fn drop(&mut self) {
        if !self.0.is_null() {
            // SAFETY: allocated in `new` with this layout, freed only here.
            unsafe { dealloc(self.0, ONE_BYTE) }
        }
    }
}

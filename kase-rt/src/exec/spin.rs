//! Spin loops end: a thread that yields (`yield_now`, `spin_loop`, `sleep`)
//! after an iteration that only *read* one object waits until another thread
//! modifies that object.
//!
//! Re-running an iteration that changed nothing and read unchanged values
//! repeats it exactly, so skipping those repetitions loses no behaviour —
//! provided the loop's own local state does not change either (kase assumes
//! a yield after reading shared state means "waiting for it to change"; a
//! loop that yields a fixed number of times after reading an object nobody
//! writes is reported as stuck). A yield after operations on several
//! objects, after a modification, or with no access since the previous
//! yield (a backoff loop) stays an ordinary scheduling point, bounded by
//! `max_steps`.
//!
//! The waiting yield is a *read* of the object it spins on, so the
//! partial-order explorer orders it after the write that released it.

use super::action::{ObjectIdx, OpKind};

/// What a thread did since its previous yield.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum SpinTrack {
    /// No access to any object.
    #[default]
    Nothing,
    /// Only reads (and non-modifying writes, like a failed CAS) of `object`,
    /// the last of which saw its `seen`-th modification.
    One { object: ObjectIdx, seen: u64 },
    /// Accesses to several objects, or a modification: not a spin.
    Other,
}

impl SpinTrack {
    /// Accounts for an operation on `object` (now modified `mods` times).
    pub(crate) fn record(
        &mut self,
        object: Option<ObjectIdx>,
        kind: OpKind,
        modified: bool,
        mods: u64,
    ) {
        *self = match (*self, object) {
            _ if modified => SpinTrack::Other,
            (track, None) => {
                if kind == OpKind::Spawn {
                    SpinTrack::Other
                } else {
                    track
                }
            }
            (SpinTrack::Nothing, Some(o)) => SpinTrack::One {
                object: o,
                seen: mods,
            },
            (SpinTrack::One { object, .. }, Some(o)) if object == o => SpinTrack::One {
                object: o,
                seen: mods,
            },
            _ => SpinTrack::Other,
        };
    }

    /// The object a yield now waits on, and the modification count it must
    /// exceed, if the thread is spinning.
    pub(crate) fn waits_on(self) -> Option<(ObjectIdx, u64)> {
        match self {
            SpinTrack::One { object, seen } => Some((object, seen)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const X: ObjectIdx = ObjectIdx(1);
    const Y: ObjectIdx = ObjectIdx(2);

    #[test]
    fn only_unmodified_single_object_iterations_spin() {
        let mut t = SpinTrack::default();
        t.record(Some(X), OpKind::Load, false, 3);
        t.record(Some(X), OpKind::CompareExchange, false, 3);
        assert_eq!(t.waits_on(), Some((X, 3)));
        t.record(Some(Y), OpKind::Load, false, 0);
        assert_eq!(t.waits_on(), None, "two objects");
        let mut t = SpinTrack::default();
        t.record(Some(X), OpKind::Store, true, 4);
        assert_eq!(t.waits_on(), None, "a modification");
        assert_eq!(SpinTrack::default().waits_on(), None, "a backoff yield");
    }
}

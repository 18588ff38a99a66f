//! Which operations of a blocking object are enabled, as a pure function of
//! the object's writes and the reads since the last one.
//!
//! The execution uses it to decide who may run; the partial-order explorer
//! uses the *same* functions to decide whether an event it has never run
//! (an alternative placed after some earlier write) could happen at all. One
//! definition keeps the two in agreement by construction.

use super::action::{OpKind, ThreadIdx};

/// The enabling state of an object after a write. Reads never change it
/// (`RwLock` readers are counted from the reads themselves, see
/// [`Gate::enabled`]), so it is a function of the object's write chain.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Gate {
    /// Every operation is always enabled (atomics).
    #[default]
    Open,
    /// A mutex: `Lock` waits while it is held. With critical-section
    /// peeking, pure sections hold it without a write (`PeekLock` and
    /// `PeekUnlock` are reads), counted from the reads like `RwLock` readers.
    Mutex {
        /// Whether some thread holds it exclusively (a plain lock, or an
        /// upgraded section).
        held: bool,
    },
    /// A reader–writer lock.
    RwLock {
        /// Whether a writer holds it.
        writer: bool,
        /// Readers holding it as of the write (reads since add to this).
        /// With peeking, readers that hold it across choice points
        /// (`SharedLock`, `ReadUpgrade`) are writes and counted here; pure
        /// read sections are counted from the reads, like pure sections of
        /// a mutex.
        readers: u32,
    },
    /// A condition variable: who waits, and who has been notified. Boxed:
    /// every event of the partial-order explorer's unfolding keeps a gate,
    /// and two lists inline made each 40 bytes larger.
    Condvar(Box<Waiters>),
    /// A model thread, as the target of `join`.
    Thread {
        /// Whether it has exited.
        exited: bool,
    },
    /// A thread's park token (`park` / `unpark`).
    Park {
        /// Whether an `unpark` token is available.
        token: bool,
    },
}

/// A condition variable's gate: who waits, and who has been notified.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Waiters {
    /// Threads waiting and not yet notified, oldest first.
    pub waiting: Vec<ThreadIdx>,
    /// Threads notified and not yet woken.
    pub notified: Vec<ThreadIdx>,
}

/// Readers holding an `RwLock` after `reads` (the reads since the last
/// write, which set `writer` and `base`): a `try_read` acquires unless a
/// writer holds the lock.
fn readers_after(writer: bool, base: u32, reads: &[(ThreadIdx, OpKind)]) -> u32 {
    let acquired = reads
        .iter()
        .filter(|(_, k)| *k == OpKind::ReadLock || (*k == OpKind::TryReadLock && !writer))
        .count() as u32;
    let released = reads
        .iter()
        .filter(|(_, k)| *k == OpKind::ReadUnlock)
        .count() as u32;
    (base + acquired).saturating_sub(released)
}

/// Pure parts open after `reads` (the reads since the lock's last write),
/// not counting `except`'s own: exclusive ones (`PeekLock`) and shared ones
/// (`PeekReadLock`, an `RwLock`'s readers).
#[derive(Clone, Copy)]
struct OpenParts {
    exclusive: usize,
    shared: usize,
}

impl OpenParts {
    /// A lock's gate is asked for every thread at every step, mostly with
    /// no reads (without peeking a mutex has none): that case is inline.
    #[inline(always)]
    fn of(reads: &[(ThreadIdx, OpKind)], except: Option<ThreadIdx>) -> OpenParts {
        if reads.is_empty() {
            return OpenParts {
                exclusive: 0,
                shared: 0,
            };
        }
        OpenParts::counted(reads, except)
    }

    /// [`of`](Self::of), counting in one pass.
    fn counted(reads: &[(ThreadIdx, OpKind)], except: Option<ThreadIdx>) -> OpenParts {
        let [mut locks, mut unlocks, mut read_locks, mut read_unlocks] = [0usize; 4];
        for &(t, k) in reads {
            if Some(t) == except {
                continue;
            }
            match k {
                OpKind::PeekLock => locks += 1,
                OpKind::PeekUnlock => unlocks += 1,
                OpKind::PeekReadLock => read_locks += 1,
                OpKind::PeekReadUnlock => read_unlocks += 1,
                _ => {}
            }
        }
        OpenParts {
            exclusive: locks.saturating_sub(unlocks),
            shared: read_locks.saturating_sub(read_unlocks),
        }
    }

    fn none(self) -> bool {
        self.exclusive == 0 && self.shared == 0
    }
}

impl Gate {
    /// Whether `thread` may perform `kind` now, given the reads of the
    /// object since its last write.
    pub fn enabled(&self, kind: OpKind, thread: ThreadIdx, reads: &[(ThreadIdx, OpKind)]) -> bool {
        match (self, kind) {
            (Gate::Mutex { held }, OpKind::PeekLock) => !held,
            (Gate::Mutex { held }, OpKind::Lock) => !held && OpenParts::of(reads, None).none(),
            // A pure section that wrote the data ends with a write of the
            // lock: like an upgrade, only after every other open part closed.
            (Gate::Mutex { held }, OpKind::Upgrade | OpKind::PeekWriteUnlock) => {
                !held && OpenParts::of(reads, Some(thread)).none()
            }
            (Gate::RwLock { writer, .. }, OpKind::ReadLock | OpKind::PeekReadLock) => !writer,
            (Gate::RwLock { writer, readers }, OpKind::PeekLock) => {
                !writer && readers_after(*writer, *readers, reads) == 0
            }
            (Gate::RwLock { writer, readers }, OpKind::Lock) => {
                !writer
                    && readers_after(*writer, *readers, reads) == 0
                    && OpenParts::of(reads, None).none()
            }
            (Gate::RwLock { writer, readers }, OpKind::Upgrade | OpKind::PeekWriteUnlock) => {
                !writer
                    && readers_after(*writer, *readers, reads) == 0
                    && OpenParts::of(reads, Some(thread)).none()
            }
            // Upgraded readers share the lock; a pure write section excludes
            // them (it cannot be open in a run, but it can in a placement).
            (Gate::RwLock { writer, .. }, OpKind::SharedLock) => {
                !writer && OpenParts::of(reads, None).exclusive == 0
            }
            (Gate::RwLock { writer, .. }, OpKind::ReadUpgrade) => {
                !writer && OpenParts::of(reads, Some(thread)).exclusive == 0
            }
            (Gate::Condvar(waiters), OpKind::CondvarWake) => waiters.notified.contains(&thread),
            (Gate::Thread { exited }, OpKind::Join) => *exited,
            (Gate::Park { token }, OpKind::Park) => *token,
            _ => true,
        }
    }

    /// Whether a `TryLock` / `TryReadLock` by `thread` succeeds now.
    pub fn try_succeeds(&self, kind: OpKind, reads: &[(ThreadIdx, OpKind)]) -> bool {
        match (self, kind) {
            (Gate::Mutex { held }, OpKind::TryLock) => !held && OpenParts::of(reads, None).none(),
            (Gate::RwLock { writer, .. }, OpKind::TryReadLock) => !writer,
            (Gate::RwLock { writer, .. }, OpKind::SharedTryLock) => {
                !writer && OpenParts::of(reads, None).exclusive == 0
            }
            (Gate::RwLock { writer, readers }, OpKind::TryLock) => {
                !writer
                    && readers_after(*writer, *readers, reads) == 0
                    && OpenParts::of(reads, None).none()
            }
            _ => true,
        }
    }

    /// The state after `thread` performs the write `kind`, preceded by
    /// `reads` since the last write (the tests' form of
    /// [`pass_write`](Self::pass_write)).
    #[cfg(test)]
    fn after_write(&self, kind: OpKind, thread: ThreadIdx, reads: &[(ThreadIdx, OpKind)]) -> Gate {
        let mut next = self.clone();
        next.pass_write(kind, thread, reads);
        next
    }

    /// Advances it past the write `kind` by `thread`, preceded by `reads`
    /// since the last write, in place. Returning a new gate instead, its
    /// copy back went through memory and stalled on loads the callee's
    /// stores could not be forwarded to (a third of `Execution::pass`'s
    /// `perf` samples on disp(5,4)), and a condition variable's waiters
    /// were cloned.
    pub fn pass_write(&mut self, kind: OpKind, thread: ThreadIdx, reads: &[(ThreadIdx, OpKind)]) {
        // Of the state before the write.
        let succeeds = matches!(self, Gate::RwLock { .. }) && self.try_succeeds(kind, reads);
        match self {
            Gate::Mutex { held } => match kind {
                OpKind::Lock | OpKind::Upgrade => *held = true,
                OpKind::TryLock => *held = true, // it was free, or it stays held
                OpKind::Unlock => *held = false,
                _ => {}
            },
            Gate::RwLock { writer, readers } => {
                *readers = readers_after(*writer, *readers, reads);
                match kind {
                    OpKind::Lock | OpKind::Upgrade => *writer = true,
                    OpKind::TryLock if succeeds => *writer = true,
                    OpKind::Unlock => *writer = false,
                    OpKind::Downgrade => {
                        *writer = false;
                        *readers += 1;
                    }
                    OpKind::SharedLock | OpKind::ReadUpgrade => *readers += 1,
                    OpKind::SharedTryLock if succeeds => *readers += 1,
                    OpKind::SharedUnlock => *readers = readers.saturating_sub(1),
                    _ => {}
                }
            }
            Gate::Condvar(waiters) => match kind {
                OpKind::CondvarWait => waiters.waiting.push(thread),
                OpKind::NotifyOne if !waiters.waiting.is_empty() => {
                    let first = waiters.waiting.remove(0);
                    waiters.notified.push(first);
                }
                OpKind::NotifyAll => {
                    let Waiters { waiting, notified } = &mut **waiters;
                    notified.append(waiting);
                }
                OpKind::CondvarWake | OpKind::CondvarWakeOrTimeout => {
                    waiters.waiting.retain(|&t| t != thread);
                    waiters.notified.retain(|&t| t != thread);
                }
                _ => {}
            },
            Gate::Thread { exited } => {
                if kind == OpKind::Exit {
                    *exited = true;
                }
            }
            Gate::Park { token } => match kind {
                OpKind::Unpark => *token = true,
                OpKind::Park | OpKind::ParkTimeout => *token = false,
                _ => {}
            },
            Gate::Open => {}
        }
    }

    /// Whether the reads since the last write matter to this object's gate
    /// (only an `RwLock` counts its readers), so callers keep them only then.
    pub fn counts_reads(&self) -> bool {
        matches!(self, Gate::RwLock { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: ThreadIdx = ThreadIdx(1);
    const B: ThreadIdx = ThreadIdx(2);

    #[test]
    fn rwlock_writer_waits_for_readers_to_leave() {
        let g = Gate::RwLock {
            writer: false,
            readers: 0,
        };
        let one_reader = [(A, OpKind::ReadLock)];
        assert!(!g.enabled(OpKind::Lock, B, &one_reader));
        let left = [(A, OpKind::ReadLock), (A, OpKind::ReadUnlock)];
        assert!(g.enabled(OpKind::Lock, B, &left));
        let held = g.after_write(OpKind::Lock, B, &left);
        assert!(!held.enabled(OpKind::ReadLock, A, &[]));
        assert!(!held.try_succeeds(OpKind::TryReadLock, &[]));
        let freed = held.after_write(OpKind::Unlock, B, &[]);
        assert!(freed.enabled(OpKind::ReadLock, A, &[]));
    }

    #[test]
    fn pure_sections_hold_a_mutex_without_writing_it() {
        let g = Gate::Mutex { held: false };
        assert!(g.enabled(OpKind::PeekLock, B, &[(A, OpKind::PeekLock)]));
        let open = [(A, OpKind::PeekLock)];
        assert!(!g.enabled(
            OpKind::Upgrade,
            B,
            &[(A, OpKind::PeekLock), (B, OpKind::PeekLock)]
        ));
        assert!(g.enabled(OpKind::Upgrade, A, &open), "its own pure part");
        assert!(!g.try_succeeds(OpKind::TryLock, &open));
        let closed = [(A, OpKind::PeekLock), (A, OpKind::PeekUnlock)];
        assert!(g.enabled(OpKind::Lock, B, &closed));
        let held = g.after_write(OpKind::Upgrade, A, &open);
        assert!(!held.enabled(OpKind::PeekLock, B, &[]));
        let freed = held.after_write(OpKind::Unlock, A, &[]);
        assert!(freed.enabled(OpKind::PeekLock, B, &[]));
        // A section that wrote the data ends with a write of the mutex,
        // which waits, like an upgrade, for the other open parts to close,
        // and leaves the mutex free.
        let both = [(A, OpKind::PeekLock), (B, OpKind::PeekLock)];
        assert!(!g.enabled(OpKind::PeekWriteUnlock, A, &both));
        let b_closed = [both[0], both[1], (B, OpKind::PeekUnlock)];
        assert!(g.enabled(OpKind::PeekWriteUnlock, A, &b_closed));
        let written = g.after_write(OpKind::PeekWriteUnlock, A, &b_closed);
        assert!(written.enabled(OpKind::PeekLock, B, &[]));
        assert!(written.enabled(OpKind::Lock, B, &[]));
    }

    #[test]
    fn rwlock_with_peeking_upgraded_readers_share_and_writers_exclude() {
        use OpKind::*;
        let g = Gate::RwLock {
            writer: false,
            readers: 0,
        };
        // A pure read section open: another reader may enter and upgrade,
        // a writer may not upgrade.
        let open = [(A, PeekReadLock)];
        assert!(g.enabled(PeekReadLock, B, &open));
        assert!(g.enabled(ReadUpgrade, A, &open), "its own pure part");
        assert!(!g.enabled(Upgrade, B, &[(A, PeekReadLock), (B, PeekLock)]));
        // Upgraded readers: readers still enter, writers wait for both.
        let one = g.after_write(ReadUpgrade, A, &open);
        assert!(one.enabled(PeekReadLock, B, &[]));
        assert!(!one.enabled(PeekLock, B, &[]));
        assert!(!one.try_succeeds(TryLock, &[]));
        assert!(one.try_succeeds(SharedTryLock, &[]));
        let two = one.after_write(ReadUpgrade, B, &[(B, PeekReadLock)]);
        let left = two.after_write(SharedUnlock, A, &[]);
        assert!(!left.enabled(PeekLock, A, &[]));
        let none = left.after_write(SharedUnlock, B, &[]);
        assert!(none.enabled(PeekLock, A, &[]));
        // A pure write section open keeps readers from holding.
        let writing = [(A, PeekLock)];
        assert!(!g.enabled(ReadUpgrade, B, &[(A, PeekLock), (B, PeekReadLock)]));
        assert!(!g.try_succeeds(SharedTryLock, &writing));
        assert!(!g.enabled(SharedLock, B, &writing));
        let closed = [(A, PeekLock), (A, PeekUnlock)];
        assert!(g.enabled(SharedLock, B, &closed));
        // An upgraded writer keeps every reader out.
        let held = g.after_write(Upgrade, A, &writing);
        assert!(!held.enabled(PeekReadLock, B, &[]));
        assert!(!held.try_succeeds(SharedTryLock, &[]));
        // A write section that wrote the data waits for open readers.
        assert!(!g.enabled(PeekWriteUnlock, A, &[(B, PeekReadLock), (A, PeekLock)]));
        let read = [(B, PeekReadLock), (B, PeekReadUnlock), (A, PeekLock)];
        assert!(g.enabled(PeekWriteUnlock, A, &read));
        let written = g.after_write(PeekWriteUnlock, A, &read);
        assert!(written.enabled(PeekReadLock, B, &[]) && written.enabled(PeekLock, B, &[]));
    }

    #[test]
    fn condvar_wakes_only_the_notified_in_fifo_order() {
        let g = Gate::Condvar(Box::default());
        let g = g.after_write(OpKind::CondvarWait, A, &[]);
        let g = g.after_write(OpKind::CondvarWait, B, &[]);
        assert!(!g.enabled(OpKind::CondvarWake, A, &[]));
        let g = g.after_write(OpKind::NotifyOne, B, &[]);
        assert!(g.enabled(OpKind::CondvarWake, A, &[]));
        assert!(!g.enabled(OpKind::CondvarWake, B, &[]));
        let g = g.after_write(OpKind::CondvarWake, A, &[]);
        let g = g.after_write(OpKind::NotifyAll, A, &[]);
        assert!(g.enabled(OpKind::CondvarWake, B, &[]));
    }

    #[test]
    fn park_consumes_the_token() {
        let g = Gate::Park { token: false };
        assert!(!g.enabled(OpKind::Park, A, &[]));
        let g = g.after_write(OpKind::Unpark, B, &[]);
        assert!(g.enabled(OpKind::Park, A, &[]));
        assert_eq!(
            g.after_write(OpKind::Park, A, &[]),
            Gate::Park { token: false }
        );
    }
}

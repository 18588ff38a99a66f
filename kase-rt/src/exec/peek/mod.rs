//! Critical-section peeking in one execution: pure parts of critical sections
//! run as atomic steps, and every access is checked against the assumption
//! that makes that sound (`explore/POR-DESIGN.md`, "Critical-section
//! peeking").
//!
//! Per access kase remembers who made it ([`AccessTag`]): its event, thread,
//! the pure part it belongs to and the mutexes its thread held. From the
//! object's last write and the reads since, each new access finds the
//! accesses it directly depends on and:
//!
//! * **rule R**: an access of a pure part of mutex `m` that depends on an
//!   access of another pure part of `m` is ordered after that part's end
//!   (it acquires what the part released, for happens-before);
//! * **D1**: an access by a thread not holding `m` that depends on an access
//!   of a pure part of `m` (or the other way round), and is not otherwise
//!   ordered with the whole part, means a thread could have run in the middle
//!   of the part: peeking's semantics may have lost behaviours, and the
//!   exploration is redone without peeking. Holding an `RwLock` as a reader
//!   does not keep out a read section of it: two readers' accesses that
//!   depend on each other are a violation too.

use std::panic::Location;
use std::sync::Arc;

mod records;
mod run;

use super::action::{ObjectIdx, ThreadIdx};
use super::clock::VectorClock;
use super::dependence::LastAccesses;

/// Accesses a pure part may perform before it is upgraded anyway, so that an
/// unbounded loop of memory accesses inside a lock still lets others run.
pub(crate) const MAX_PURE_STEPS: u32 = 1000;

/// A lock a thread holds, and in which mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Hold {
    /// The `Mutex` or `RwLock`.
    pub lock: ObjectIdx,
    /// Held as an `RwLock` reader.
    pub shared: bool,
}

impl Hold {
    /// Whether this hold keeps a section of `lock` in mode `shared` from
    /// running at the same time: the same lock, and not two readers.
    pub(crate) fn excludes(self, lock: ObjectIdx, shared: bool) -> bool {
        self.lock == lock && !(self.shared && shared)
    }
}

/// What peeking keeps of one thread.
#[derive(Debug, Default)]
pub(crate) struct ThreadPeek {
    /// The pure part of a critical section it is in.
    pub pure: Option<PurePart>,
    /// The locks it holds (pure or upgraded).
    held: Vec<Hold>,
}

impl ThreadPeek {
    /// Forgets everything, keeping its room (for a thread of a later
    /// execution).
    pub(crate) fn clear(&mut self) {
        self.pure = None;
        self.held.clear();
    }

    /// The locks it holds (pure or upgraded).
    pub(crate) fn held(&self) -> &[Hold] {
        &self.held
    }

    /// It now holds `hold` too.
    pub(crate) fn hold(&mut self, hold: Hold) {
        self.held.push(hold);
    }

    /// Removes one hold equal to `hold` (a thread may hold an `RwLock`
    /// twice).
    pub(crate) fn release(&mut self, hold: Hold) {
        if let Some(i) = self.held.iter().rposition(|&h| h == hold) {
            self.held.remove(i);
        }
    }
}

/// Holds an [`AccessTag`] keeps inline; more (locks nested deeper) are
/// shared.
const INLINE_HOLDS: usize = 3;

/// The locks a thread held at an access. Every access inside a section is
/// tagged with them, and a vector each was most of peeking's allocations:
/// a few are kept inline.
#[derive(Clone, Debug)]
pub(crate) enum Holds {
    Inline {
        len: u8,
        holds: [Hold; INLINE_HOLDS],
    },
    Shared(Arc<[Hold]>),
}

impl Holds {
    /// `held`, and `also` after them.
    pub(crate) fn of(held: &[Hold], also: Option<Hold>) -> Holds {
        let len = held.len() + usize::from(also.is_some());
        if len > INLINE_HOLDS {
            return Holds::Shared(held.iter().copied().chain(also).collect());
        }
        let unused = Hold {
            lock: ObjectIdx(0),
            shared: false,
        };
        let mut holds = [unused; INLINE_HOLDS];
        for (slot, h) in holds.iter_mut().zip(held.iter().copied().chain(also)) {
            *slot = h;
        }
        Holds::Inline {
            len: len as u8,
            holds,
        }
    }

    /// The holds, in order.
    pub(crate) fn as_slice(&self) -> &[Hold] {
        match self {
            Holds::Inline { len, holds } => &holds[..*len as usize],
            Holds::Shared(holds) => holds,
        }
    }
}

/// The pure part a thread is in.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PurePart {
    /// The `Mutex` or `RwLock` whose section it is.
    pub lock: ObjectIdx,
    /// A read section of an `RwLock`.
    pub shared: bool,
    /// Its record in [`Sections`].
    pub section: usize,
    /// Memory accesses so far.
    pub steps: u32,
    /// Whether it wrote the data its lock guards: then its unlock is a
    /// write of the lock ([`OpKind::PeekWriteUnlock`]).
    pub wrote_data: bool,
}

/// One pure part of a critical section in this execution.
#[derive(Debug)]
pub(crate) struct Section {
    pub thread: ThreadIdx,
    pub lock: ObjectIdx,
    /// A read section of an `RwLock`: other read sections may overlap it.
    pub shared: bool,
    /// Event index of its `PeekLock`.
    pub start: usize,
    /// Its thread's dependence clock at its `PeekLock` (events keep no
    /// copy of theirs under peeking).
    pub start_clock: VectorClock,
    /// Event index of its `PeekUnlock` or `Upgrade`, once it ended.
    pub end: Option<usize>,
    /// That event's number in its thread (its own entry in its dependence
    /// clock), once it ended.
    pub end_seq: u32,
    /// Its thread's happens-before clock at the end.
    pub release: VectorClock,
}

/// Who made an access.
#[derive(Clone, Debug)]
pub(crate) struct AccessTag {
    /// Its event index.
    pub event: usize,
    pub thread: ThreadIdx,
    /// The event's number in its thread (its own entry in its dependence
    /// clock).
    pub seq: u32,
    /// The pure part it belongs to, if any.
    pub section: Option<usize>,
    /// Locks its thread held (upgraded or pure) when it ran.
    pub holds: Holds,
}

/// The accesses of one object that a new access may depend on directly,
/// by who made them (`exec/dependence.rs`).
pub(crate) type ObjectTags = LastAccesses<AccessTag>;

/// The sections of this execution.
#[derive(Debug, Default)]
pub(crate) struct Sections {
    pub all: Vec<Section>,
    /// Scratch for `Execution::peek_check`: the tags an access depends on.
    pub direct: Vec<DirectTag>,
    /// Scratch for `Execution::perform`: the running thread's dependence
    /// clock before its event. A clone per event allocated in a model of
    /// more threads than a clock holds inline.
    pub before: VectorClock,
    /// Start and release clocks of the last execution's sections, for the
    /// next one's (on the heap in a model of more threads than a clock
    /// holds inline).
    pub spare_clocks: Vec<VectorClock>,
}

/// What `Execution::peek_check` needs of an [`AccessTag`] a new access
/// depends on.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DirectTag {
    pub event: usize,
    pub thread: ThreadIdx,
    /// [`AccessTag::seq`].
    pub seq: u32,
    pub section: Option<usize>,
    /// Whether its thread held the new access's own section's lock (in a
    /// mode that excludes the new access's section).
    pub held_mine: bool,
}

/// An access as a violation message names it.
pub(crate) struct Site {
    /// What it touched: `mutex#2`, or `channel#2` for a shim's own lock.
    pub what: String,
    /// The user's call it was part of (`recv`), if a shim made it.
    pub call: Option<&'static str>,
    /// Where: the user's line (of the call, if any).
    pub location: &'static Location<'static>,
}

/// Why the execution stopped trusting peeking, in words. `lock` names the
/// section's lock (`"mutex"` or `"RwLock"`); `thread` made `access`, which
/// `locked` (the section's lock operation) should have kept out.
pub(crate) fn violation_message(
    section: &Section,
    lock: &str,
    thread: ThreadIdx,
    access: &Site,
    locked: &Site,
) -> String {
    let (mode, shared) = if section.shared {
        ("read-locked", " (readers may hold it together)")
    } else {
        ("locked", "")
    };
    let access_call = access
        .call
        .map(|c| format!(" (in {c})"))
        .unwrap_or_default();
    // A shim's own lock is named by what the user holds: the channel.
    let (lock, locked_call) = match locked.call {
        Some(call) => (format!("{}'s lock", locked.what), format!(" in its {call}")),
        None => (format!("the {lock}"), String::new()),
    };
    format!(
        "{thread} accessed {}{access_call} at {} without holding {lock} {mode} at {} by \
         {}{locked_call}{shared}, and nothing else orders the two: another thread could run in \
         the middle of that critical section",
        access.what, access.location, locked.location, section.thread
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_keep_their_order_inline_and_beyond() {
        let h = |lock, shared| Hold {
            lock: ObjectIdx(lock),
            shared,
        };
        let none = Holds::of(&[], None);
        assert!(none.as_slice().is_empty());
        let two = Holds::of(&[h(4, false)], Some(h(2, true)));
        assert!(matches!(two, Holds::Inline { .. }));
        assert_eq!(two.as_slice(), &[h(4, false), h(2, true)]);
        let held = [h(1, false), h(2, true), h(3, false)];
        let four = Holds::of(&held, Some(h(9, false)));
        assert!(matches!(four, Holds::Shared(_)));
        assert_eq!(
            four.as_slice(),
            &[h(1, false), h(2, true), h(3, false), h(9, false)]
        );
    }

    #[test]
    fn a_violation_inside_a_shim_names_the_users_calls_and_lines() {
        let section = Section {
            thread: ThreadIdx(1),
            lock: ObjectIdx(2),
            shared: false,
            start: 0,
            start_clock: VectorClock::new(),
            end: None,
            end_seq: 0,
            release: VectorClock::new(),
        };
        let (sent, received) = (Location::caller(), Location::caller());
        let access = Site {
            what: "channel#2".into(),
            call: Some("recv"),
            location: received,
        };
        let locked = Site {
            what: "channel#2".into(),
            call: Some("send"),
            location: sent,
        };
        let m = violation_message(&section, "mutex", ThreadIdx::MAIN, &access, &locked);
        assert!(
            m.starts_with(&format!(
                "main accessed channel#2 (in recv) at {received} without holding channel#2's lock \
                 locked at {sent} by thread 1 in its send,"
            )),
            "{m}"
        );
        let plain = Site {
            what: "mutex#2".into(),
            call: None,
            location: sent,
        };
        let m = violation_message(&section, "mutex", ThreadIdx::MAIN, &plain, &plain);
        assert!(
            m.contains("accessed mutex#2 at ") && m.contains("without holding the mutex locked"),
            "{m}"
        );
    }
}

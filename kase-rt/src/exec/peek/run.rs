//! How an execution runs with critical-section peeking: pure parts start at
//! a lock and run as one step while they only access memory; every access is
//! checked against rule R and D1 (see the module above).

use super::super::error::OrInternal;
use std::panic::Location;

use super::super::action::{Action, ObjectIdx, ObjectKind, OpKind};
use super::super::clock::VectorClock;
use super::super::execution::Execution;
use super::super::object::ObjectDetail;
use super::super::thread::Pending;
use super::super::DataAccess;
use super::{AccessTag, DirectTag, Hold, Holds, PurePart, Section, MAX_PURE_STEPS};

impl Execution {
    /// Whether the current thread is inside a pure part of a critical
    /// section (its memory accesses are events, never choice points).
    pub(crate) fn in_pure_part(&self) -> bool {
        self.peeking && !self.teardown && self.thread(self.current).peek.pure.is_some()
    }

    /// Whether critical-section peeking is on (and the execution running).
    pub(crate) fn peeking(&self) -> bool {
        self.peeking && !self.teardown
    }

    /// The current thread accessed the data `lock` guards. Inside a pure
    /// part of `lock`, a write (or a shared reference that may write) makes
    /// the part end with a write of the lock, and anything but a write is,
    /// for spinning, a read of the lock: the data is as the lock's last
    /// write left it.
    pub(crate) fn note_data_access(&mut self, lock: ObjectIdx, access: DataAccess) {
        if !self.peeking() {
            return;
        }
        let mods = self.objects[lock.0 as usize].modifications;
        let thread = self.thread_mut(self.current);
        let Some(part) = thread.peek.pure.as_mut().filter(|p| p.lock == lock) else {
            return;
        };
        // (A read section's guard only reads: `DataAccess::Read`.)
        part.wrote_data |= access != DataAccess::Read;
        if access != DataAccess::Write {
            thread.spin.lock_op(lock, mods, false);
        }
    }

    /// Ends the current thread's pure part, with an upgrade event, unless
    /// the operation about to be announced is a memory access (and the part
    /// is not too long yet) or its own unlock. A panicking thread always
    /// upgrades: its unlock poisons the mutex, a write.
    pub(in crate::exec) fn end_pure_part_unless(
        &mut self,
        object: Option<ObjectIdx>,
        kind: OpKind,
        location: &'static Location<'static>,
    ) {
        let t = self.current;
        let Some(part) = self.thread(t).peek.pure else {
            return;
        };
        let own_unlock = if part.shared {
            OpKind::ReadUnlock
        } else {
            OpKind::Unlock
        };
        let keeps = !self.panicking()
            && ((kind.is_memory_access() && part.steps < MAX_PURE_STEPS)
                || (kind == own_unlock && object == Some(part.lock)));
        if keeps {
            return;
        }
        let action = Action {
            thread: t,
            object: Some(part.lock),
            kind: if part.shared {
                OpKind::ReadUpgrade
            } else {
                OpKind::Upgrade
            },
        };
        self.thread_mut(t).pending = Some(Pending { action, location });
        self.perform(|_, _| ((), None));
    }

    /// The operation kind under peeking: a lock (a `Mutex`'s, or an
    /// `RwLock`'s in either mode) starts a pure part, and the unlock of a
    /// pure part ends it. An `RwLock` read lock held across choice points
    /// (`try_read`, a lock taken while panicking, the unlock after an
    /// upgrade or a downgrade) becomes a write of the lock.
    pub(in crate::exec) fn peek_kind(&self, object: Option<ObjectIdx>, kind: OpKind) -> OpKind {
        let Some(o) = object else {
            return kind;
        };
        let (peekable, rwlock) = match &self.objects[o.0 as usize].detail {
            ObjectDetail::Mutex(m) => (m.peekable, false),
            ObjectDetail::RwLock(_) => (true, true),
            _ => return kind,
        };
        let pure = self.thread(self.current).peek.pure.filter(|p| p.lock == o);
        let panicking = std::thread::panicking();
        match kind {
            OpKind::Lock if peekable && !panicking => OpKind::PeekLock,
            OpKind::Unlock if pure.is_some_and(|p| !p.shared && p.wrote_data) => {
                OpKind::PeekWriteUnlock
            }
            OpKind::Unlock if pure.is_some_and(|p| !p.shared) => OpKind::PeekUnlock,
            OpKind::ReadLock if rwlock && !panicking => OpKind::PeekReadLock,
            OpKind::ReadLock if rwlock => OpKind::SharedLock,
            OpKind::TryReadLock if rwlock => OpKind::SharedTryLock,
            OpKind::ReadUnlock if pure.is_some_and(|p| p.shared) => OpKind::PeekReadUnlock,
            OpKind::ReadUnlock if rwlock => OpKind::SharedUnlock,
            _ => kind,
        }
    }

    /// Checks the access just recorded as event `at` against the accesses it
    /// depends on directly (rule R and D1 of `exec/peek`); `before` is
    /// its thread's dependence clock before it. Returns the pure part the
    /// access belongs to (a `PeekLock` opens one here).
    pub(in crate::exec) fn peek_check(
        &mut self,
        at: usize,
        action: &Action,
        before: &VectorClock,
    ) -> Option<usize> {
        let t = action.thread;
        let section = match (action.kind, action.object) {
            (OpKind::PeekLock | OpKind::PeekReadLock, Some(lock)) => {
                let mut start_clock = self.sections.spare_clocks.pop().unwrap_or_default();
                start_clock.clone_from(&self.thread(t).clock);
                self.sections.all.push(Section {
                    thread: t,
                    lock,
                    shared: action.kind == OpKind::PeekReadLock,
                    start: at,
                    start_clock,
                    end: None,
                    end_seq: 0,
                    // Empty until the part ends (a recycled clock keeps
                    // only its allocation).
                    release: self
                        .sections
                        .spare_clocks
                        .pop()
                        .map(|mut clock| {
                            clock.clear();
                            clock
                        })
                        .unwrap_or_default(),
                });
                Some(self.sections.all.len() - 1)
            }
            _ => self.thread(t).peek.pure.map(|p| p.section),
        };
        let Some(object) = action.object.filter(|_| action.kind.props().peek_tagged) else {
            return section;
        };
        let mine = section.map(|s| {
            let part = &self.sections.all[s];
            Hold {
                lock: part.lock,
                shared: part.shared,
            }
        });
        // What the checks below need of each tag, into a reused buffer (a
        // clone of the tags allocated their held locks at every access).
        let mut direct = std::mem::take(&mut self.sections.direct);
        direct.extend(
            self.objects[object.0 as usize]
                .tags
                .depended_on(action.kind.props().access)
                .filter(|tag| tag.thread != t)
                .map(|tag| DirectTag {
                    event: tag.event,
                    thread: tag.thread,
                    seq: tag.seq,
                    section: tag.section,
                    held_mine: mine.is_some_and(|m| {
                        tag.holds
                            .as_slice()
                            .iter()
                            .any(|h| h.excludes(m.lock, m.shared))
                    }),
                }),
        );
        // A blocking acquisition runs only when no section that excludes it
        // holds its lock: it comes after such a section's whole pure part,
        // never in its middle (its dependence on the part's start is that).
        // Not a try-lock, which could run in the middle and fail there.
        let acquiring = match action.kind {
            OpKind::Lock => Some(Hold {
                lock: object,
                shared: false,
            }),
            OpKind::SharedLock => Some(Hold {
                lock: object,
                shared: true,
            }),
            _ => None,
        };
        for tag in direct.drain(..) {
            let mut violation = None;
            if let Some(s) = tag.section {
                let other = &self.sections.all[s];
                if acquiring.is_some_and(|a| a.excludes(other.lock, other.shared)) {
                    // After the whole part, by the lock itself.
                } else if mine.is_some_and(|m| m.excludes(other.lock, other.shared)) {
                    // Rule R: after the whole other part, which released.
                    let release = &self.sections.all[s].release;
                    let thread = self.threads[t.index()]
                        .as_mut()
                        .or_internal("unknown thread");
                    thread.hb.acquire(release);
                } else if !self
                    .thread(t)
                    .peek
                    .held()
                    .iter()
                    .any(|h| h.excludes(other.lock, other.shared))
                {
                    // Depending on the part's last event (its unlock or
                    // upgrade, on the lock itself) puts this access after
                    // the whole part, not in its middle. Not a write of the
                    // lock after an unlock that wrote the data: that unlock
                    // stands for the whole section on the lock (its lock, a
                    // read, is in no write's reads), and the write (a
                    // `try_lock`) could have come between the two.
                    let through_end = |e: usize| {
                        e == tag.event
                            && !(action.kind.writes()
                                && self.events[e].action.kind == OpKind::PeekWriteUnlock)
                    };
                    let ordered = other.end.is_some_and(|e| {
                        through_end(e) || before.get(other.thread) >= other.end_seq
                    });
                    if !ordered {
                        violation = Some((s, t, at));
                    }
                }
            }
            if let (Some(s), Some(mine)) = (section, mine) {
                let in_section = tag.section.is_some_and(|o| {
                    let other = &self.sections.all[o];
                    mine.excludes(other.lock, other.shared)
                }) || tag.held_mine;
                let start = &self.sections.all[s].start_clock;
                if !in_section && start.get(tag.thread) < tag.seq {
                    violation = Some((s, tag.thread, tag.event));
                }
            }
            if let Some((s, thread, event)) = violation {
                if self.peek_violation.is_none() {
                    let section = &self.sections.all[s];
                    let lock = match self.objects[section.lock.0 as usize].kind() {
                        ObjectKind::RwLock => "RwLock",
                        _ => "mutex",
                    };
                    let access = self.user_site(event, object);
                    let locked = self.user_site(section.start, section.lock);
                    let reason = super::violation_message(section, lock, thread, &access, &locked);
                    self.peek_violation = Some(reason);
                }
            }
        }
        self.sections.direct = direct;
        section
    }

    /// Event `event` on `object` as the user sees it: inside a shim's call,
    /// the call at the user's line (`channel#2`, in `recv`), never a line of
    /// kase's own source.
    fn user_site(&self, event: usize, object: ObjectIdx) -> super::Site {
        let e = &self.events[event];
        match e.call.as_deref() {
            Some(call) => super::Site {
                what: format!("{}#{}", call.noun, call.object.unwrap_or(object).0),
                call: Some(call.name),
                location: call.location,
            },
            None => super::Site {
                what: self.objects[object.0 as usize].kind().label(object),
                call: None,
                location: e.location,
            },
        }
    }

    /// Bookkeeping after the access `at` ran: the pure part's steps and end,
    /// the locks held, and the access's tag on its object. `acquired`: a
    /// try-lock succeeded (or the operation is not one).
    pub(in crate::exec) fn peek_after(
        &mut self,
        at: usize,
        action: &Action,
        section: Option<usize>,
        acquired: bool,
    ) {
        let t = action.thread;
        match (action.kind, action.object) {
            (OpKind::PeekLock | OpKind::PeekReadLock, Some(lock)) => {
                let section = section.or_internal("a PeekLock without its section");
                self.thread_mut(t).peek.pure = Some(PurePart {
                    lock,
                    shared: action.kind == OpKind::PeekReadLock,
                    section,
                    steps: 0,
                    wrote_data: false,
                });
            }
            (kind, Some(_)) if kind.ends_pure_part() => {
                if let Some(s) = section {
                    let record = &mut self.sections.all[s];
                    record.end = Some(at);
                    let thread = self.threads[t.index()]
                        .as_ref()
                        .or_internal("unknown thread");
                    record.end_seq = thread.events;
                    record.release.clone_from(&thread.hb.clock);
                }
                self.thread_mut(t).peek.pure = None;
            }
            _ => {
                // (Only a memory access runs inside a pure part.)
                if let Some(part) = &mut self.thread_mut(t).peek.pure {
                    part.steps += 1;
                }
            }
        }
        let seq = self.thread(t).events;
        self.hold_and_tag(at, action, seq, section, acquired);
    }

    /// The locks `action`'s thread holds after it, and its tag on its
    /// object: event `at`, the `seq`th of its thread, in pure part
    /// `section`. What [`peek_after`](Self::peek_after) and the records
    /// built at the first pure part share.
    pub(super) fn hold_and_tag(
        &mut self,
        at: usize,
        action: &Action,
        seq: u32,
        section: Option<usize>,
        acquired: bool,
    ) {
        let t = action.thread;
        let is_lock = |e: &Execution, o: ObjectIdx| {
            matches!(
                e.objects[o.0 as usize].detail,
                ObjectDetail::Mutex(_) | ObjectDetail::RwLock(_)
            )
        };
        let hold = |lock, shared| Hold { lock, shared };
        match (action.kind, action.object) {
            (OpKind::PeekLock, Some(o)) => self.thread_mut(t).peek.hold(hold(o, false)),
            (OpKind::PeekReadLock, Some(o)) => self.thread_mut(t).peek.hold(hold(o, true)),
            (OpKind::PeekUnlock | OpKind::PeekWriteUnlock | OpKind::Unlock, Some(o)) => {
                self.thread_mut(t).peek.release(hold(o, false))
            }
            (OpKind::PeekReadUnlock | OpKind::SharedUnlock, Some(o)) => {
                self.thread_mut(t).peek.release(hold(o, true))
            }
            (OpKind::Lock | OpKind::TryLock, Some(o)) if acquired && is_lock(self, o) => {
                self.thread_mut(t).peek.hold(hold(o, false));
            }
            (OpKind::SharedLock | OpKind::SharedTryLock, Some(o)) if acquired => {
                self.thread_mut(t).peek.hold(hold(o, true));
            }
            (OpKind::Downgrade, Some(o)) => {
                let peek = &mut self.thread_mut(t).peek;
                peek.release(hold(o, false));
                peek.hold(hold(o, true));
            }
            _ => {}
        }
        if let Some(object) = action.object.filter(|_| action.kind.props().peek_tagged) {
            // It held the lock up to this event.
            let released = match action.kind {
                OpKind::Unlock => Some(hold(object, false)),
                OpKind::SharedUnlock => Some(hold(object, true)),
                _ => None,
            };
            let holds = Holds::of(self.thread(t).peek.held(), released);
            let tag = AccessTag {
                event: at,
                thread: t,
                seq,
                section,
                holds,
            };
            self.objects[object.0 as usize]
                .tags
                .record(tag, action.kind.props().access);
        }
    }
}

//! The dependence relation, in one place.
//!
//! Two visible operations of different threads are *dependent* when they
//! touch the same object and at least one of them writes it (DESIGN.md,
//! "Exploration"); everything else commutes. Every part of kase that needs
//! the relation reads it from here:
//!
//! * [`OpKind::props`] is the one table of what each operation kind is:
//!   whether it reads or writes its object, whether it is a scheduling
//!   point, a memory access, the start or end of a pure part of a critical
//!   section, a try-operation, and how it synchronises (happens-before).
//!   The classifying methods of [`OpKind`] read it.
//! * [`LastAccesses`] is the one structure of "the last write of an object
//!   and the reads since": a new read depends on the last write, a new
//!   write on the reads since it (or on the write when there are none). The
//!   execution keeps it as dependence clocks (`exec/execution.rs`), peeking
//!   as access tags (`exec/peek`), the explorer as events (its frontiers,
//!   `explore/por`).
//!
//! Commuting operations (say, unobserved `fetch_add`s) or a weaker memory
//! model change the relation here: a new [`Access`] class and its rule in
//! [`LastAccesses`].

use super::action::OpKind;
use super::clock::VectorClock;

/// How an operation touches its object, for dependence: two accesses of
/// different threads to one object are dependent unless both are reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Commutes with other reads (a load, a join, an `RwLock` read lock, a
    /// pure critical section's lock and unlock).
    Read,
    /// Depends on every other access to the object.
    Write,
}

/// Where an operation stands with respect to a pure part of a critical
/// section (critical-section peeking, `exec/peek`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PureBoundary {
    /// Neither starts nor ends one.
    None,
    /// Starts one (a peeked lock).
    Start,
    /// Ends one (the unlock of a pure section, or its upgrade).
    End,
}

/// What an operation acquires of what its object published (locks, joins,
/// parks; atomics synchronise in their effect, by their ordering).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Acquires {
    /// Nothing.
    Nothing,
    /// What the object's last release published.
    Release,
    /// That, and what readers published on leaving (a writer comes after
    /// every reader that left, an upgraded section after every pure one).
    ReleaseAndReaders,
    /// What the last release published, if the try-operation succeeds.
    ReleaseIfSucceeds,
    /// Both, if the try-operation succeeds (a `try_lock`).
    ReleaseAndReadersIfSucceeds,
    /// What the last `unpark` published, if a token is there to consume.
    ReleaseIfToken,
}

/// What an operation publishes on its object for later acquirers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Releases {
    /// Nothing.
    Nothing,
    /// Its thread's clock replaces what the object published (an unlock,
    /// an exit).
    Replace,
    /// Its thread's clock joins what the object published (an `unpark`:
    /// tokens from several threads accumulate).
    Join,
    /// Its thread's clock joins what readers published, which only writers
    /// acquire (a reader's unlock; a pure section's end).
    ToWriters,
}

/// What a spinning thread makes of an operation (`exec/spin.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpinRole {
    /// It counts as an access of its object: a read, or a modification
    /// that ends any spin.
    Counts,
    /// Its thread's own lock operation: a read of the lock for spinning (the
    /// lock is as it was once released; only another thread's operation
    /// changes what it guards).
    LockOp,
    /// It tells a spinning thread nothing (a pure section's lock and
    /// unlock: it waits for what it read inside to change, the guarded data
    /// as of the lock's last write or a tracked cell).
    Ignored,
    /// The yield itself: the iteration ends.
    Yield,
}

/// The properties of one operation kind: one row of the table in
/// [`OpKind::props`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpProps {
    /// Read or write of its object.
    pub access: Access,
    /// The scheduler chooses before it runs. A spawn or a fence cannot be
    /// observed by another thread before its own thread's next operation,
    /// so it runs as part of the step before it; so do accesses inside a
    /// pure part.
    pub scheduling_point: bool,
    /// A memory access: a pure part of a critical section may perform it
    /// without ending.
    pub memory_access: bool,
    /// Starts or ends a pure part.
    pub pure: PureBoundary,
    /// An attempt to lock that may fail.
    pub is_try: bool,
    /// Happens-before: what it acquires.
    pub acquires: Acquires,
    /// Happens-before: what it publishes.
    pub releases: Releases,
    /// Peeking remembers who made it, to check that peeking lost nothing.
    /// Every operation on an object counts (a `try_lock` observes a critical
    /// section too) but spawn, exit, yield and `is_poisoned`: a spinning
    /// thread's yield is modelled as a read of what it waits on, but it
    /// observes nothing; the reads before it do.
    pub peek_tagged: bool,
    /// What a spinning thread makes of it.
    pub spin: SpinRole,
    /// A short name for reports.
    pub name: &'static str,
}

/// A row of the table: the common case (a scheduling point that neither
/// synchronises nor touches a pure part), refined by the builder methods.
const fn row(access: Access, name: &'static str) -> OpProps {
    OpProps {
        access,
        scheduling_point: true,
        memory_access: false,
        pure: PureBoundary::None,
        is_try: false,
        acquires: Acquires::Nothing,
        releases: Releases::Nothing,
        peek_tagged: true,
        spin: SpinRole::Counts,
        name,
    }
}

impl OpProps {
    const fn silent(mut self) -> Self {
        self.scheduling_point = false;
        self
    }
    const fn memory(mut self) -> Self {
        self.memory_access = true;
        self
    }
    const fn pure(mut self, boundary: PureBoundary) -> Self {
        self.pure = boundary;
        if matches!(boundary, PureBoundary::Start) {
            self.spin = SpinRole::Ignored;
        }
        self
    }
    const fn try_op(mut self) -> Self {
        self.is_try = true;
        self
    }
    const fn acquires(mut self, acquires: Acquires) -> Self {
        self.acquires = acquires;
        self
    }
    const fn releases(mut self, releases: Releases) -> Self {
        self.releases = releases;
        self
    }
    const fn untagged(mut self) -> Self {
        self.peek_tagged = false;
        self
    }
    const fn spin(mut self, role: SpinRole) -> Self {
        self.spin = role;
        self
    }
}

/// Every operation kind, in declaration order (`OpKind as usize`).
const ALL_KINDS: [OpKind; 39] = [
    OpKind::Load,
    OpKind::Store,
    OpKind::Rmw,
    OpKind::CompareExchange,
    OpKind::Lock,
    OpKind::TryLock,
    OpKind::Unlock,
    OpKind::IsPoisoned,
    OpKind::ClearPoison,
    OpKind::Spawn,
    OpKind::Join,
    OpKind::IsFinished,
    OpKind::Exit,
    OpKind::Yield,
    OpKind::Fence,
    OpKind::ReadLock,
    OpKind::TryReadLock,
    OpKind::ReadUnlock,
    OpKind::Downgrade,
    OpKind::CondvarWait,
    OpKind::CondvarWake,
    OpKind::CondvarWakeOrTimeout,
    OpKind::NotifyOne,
    OpKind::NotifyAll,
    OpKind::Park,
    OpKind::ParkTimeout,
    OpKind::Unpark,
    OpKind::PeekLock,
    OpKind::PeekUnlock,
    OpKind::Upgrade,
    OpKind::DataRead,
    OpKind::DataWrite,
    OpKind::PeekReadLock,
    OpKind::PeekReadUnlock,
    OpKind::ReadUpgrade,
    OpKind::SharedLock,
    OpKind::SharedTryLock,
    OpKind::SharedUnlock,
    OpKind::PeekWriteUnlock,
];

/// [`OpKind::classify`] of every kind, by `OpKind as usize`.
const PROPS: [OpProps; ALL_KINDS.len()] = {
    let mut table = [OpKind::Load.classify(); ALL_KINDS.len()];
    let mut i = 0;
    while i < ALL_KINDS.len() {
        table[i] = ALL_KINDS[i].classify();
        i += 1;
    }
    table
};

impl OpKind {
    /// The properties of this operation kind (see the variants' docs for
    /// what each is), looked up: schedulers ask for them several times per
    /// step.
    #[inline]
    pub fn props(self) -> OpProps {
        // A kind missing from the table (added since) is classified anew;
        // the test below keeps the table in declaration order.
        match PROPS.get(self as usize) {
            Some(props) => *props,
            None => self.classify(),
        }
    }

    /// The table behind [`props`](Self::props): the only place that
    /// classifies operations.
    const fn classify(self) -> OpProps {
        use Access::{Read as R, Write as W};
        use Acquires as A;
        use PureBoundary as P;
        use Releases as Rel;
        match self {
            // Atomics (they synchronise in their effect, by ordering).
            OpKind::Load => row(R, "load").memory(),
            OpKind::Store => row(W, "store").memory(),
            OpKind::Rmw => row(W, "read-modify-write").memory(),
            OpKind::CompareExchange => row(W, "compare_exchange").memory(),
            OpKind::Fence => row(W, "fence").silent().untagged().spin(SpinRole::Ignored),
            // Mutexes (and RwLocks in write mode).
            OpKind::Lock => row(W, "lock")
                .acquires(A::ReleaseAndReaders)
                .spin(SpinRole::LockOp),
            OpKind::TryLock => row(W, "try_lock")
                .try_op()
                .acquires(A::ReleaseAndReadersIfSucceeds)
                .spin(SpinRole::LockOp),
            OpKind::Unlock => row(W, "unlock")
                .releases(Rel::Replace)
                .spin(SpinRole::LockOp),
            // Reads only the poison flag, which no pure part changes (a
            // section that panics upgrades first): it never sees a pure
            // part's middle, so D1 neither checks nor tags it.
            OpKind::IsPoisoned => row(R, "is_poisoned").untagged(),
            OpKind::ClearPoison => row(W, "clear_poison"),
            // RwLocks in read mode.
            OpKind::ReadLock => row(R, "read").acquires(A::Release).spin(SpinRole::LockOp),
            OpKind::TryReadLock => row(R, "try_read")
                .try_op()
                .acquires(A::ReleaseIfSucceeds)
                .spin(SpinRole::LockOp),
            OpKind::ReadUnlock => row(R, "read unlock")
                .releases(Rel::ToWriters)
                .spin(SpinRole::LockOp),
            OpKind::Downgrade => row(W, "downgrade")
                .releases(Rel::Replace)
                .spin(SpinRole::LockOp),
            // Threads.
            OpKind::Spawn => row(W, "spawn").silent().untagged(),
            OpKind::Join => row(R, "join").acquires(A::Release),
            OpKind::IsFinished => row(R, "is_finished"),
            OpKind::Exit => row(W, "exit").releases(Rel::Replace).untagged(),
            OpKind::Yield => row(R, "yield").untagged().spin(SpinRole::Yield),
            OpKind::Park => row(W, "park").acquires(A::Release),
            OpKind::ParkTimeout => row(W, "park_timeout").acquires(A::ReleaseIfToken),
            OpKind::Unpark => row(W, "unpark").releases(Rel::Join),
            // Condition variables.
            OpKind::CondvarWait => row(W, "wait"),
            OpKind::CondvarWake => row(W, "wake"),
            OpKind::CondvarWakeOrTimeout => row(W, "wake or time out"),
            OpKind::NotifyOne => row(W, "notify_one"),
            OpKind::NotifyAll => row(W, "notify_all"),
            // Critical-section peeking (exec/peek).
            OpKind::PeekLock => row(R, "lock").pure(P::Start).acquires(A::Release),
            OpKind::PeekUnlock => row(R, "unlock")
                .pure(P::End)
                .releases(Rel::ToWriters)
                .spin(SpinRole::Ignored),
            OpKind::Upgrade => row(W, "critical section continues")
                .silent()
                .pure(P::End)
                .acquires(A::ReleaseAndReaders)
                .spin(SpinRole::LockOp),
            OpKind::DataRead => row(R, "read").silent().memory(),
            OpKind::DataWrite => row(W, "write").silent().memory(),
            OpKind::PeekReadLock => row(R, "read").pure(P::Start).acquires(A::Release),
            OpKind::PeekReadUnlock => row(R, "read unlock")
                .pure(P::End)
                .releases(Rel::ToWriters)
                .spin(SpinRole::Ignored),
            OpKind::ReadUpgrade => row(W, "read section continues")
                .silent()
                .pure(P::End)
                .spin(SpinRole::LockOp),
            OpKind::SharedLock => row(W, "read").acquires(A::Release).spin(SpinRole::LockOp),
            OpKind::SharedTryLock => row(W, "try_read")
                .try_op()
                .acquires(A::ReleaseIfSucceeds)
                .spin(SpinRole::LockOp),
            OpKind::SharedUnlock => row(W, "read unlock")
                .releases(Rel::ToWriters)
                .spin(SpinRole::LockOp),
            OpKind::PeekWriteUnlock => row(W, "unlock")
                .pure(P::End)
                .acquires(A::ReleaseAndReaders)
                .releases(Rel::Replace)
                .spin(SpinRole::LockOp),
        }
    }

    /// Whether the operation counts as a write of its object for
    /// independence: two operations of different threads on one object are
    /// dependent unless both are reads.
    #[inline]
    pub fn writes(self) -> bool {
        self.props().access == Access::Write
    }

    /// Whether it is an access to an atomic location (a load, store,
    /// read-modify-write or compare-exchange).
    pub fn is_atomic_access(self) -> bool {
        matches!(
            self,
            OpKind::Load | OpKind::Store | OpKind::Rmw | OpKind::CompareExchange
        )
    }

    /// Whether the operation starts a pure part of a critical section.
    pub fn starts_pure_part(self) -> bool {
        self.props().pure == PureBoundary::Start
    }

    /// Whether the operation ends a pure part of a critical section.
    pub fn ends_pure_part(self) -> bool {
        self.props().pure == PureBoundary::End
    }

    /// Whether the operation is an attempt to lock that may fail.
    pub fn is_try(self) -> bool {
        self.props().is_try
    }

    /// Whether a thread inside a pure part of a critical section may perform
    /// the operation without ending the part: memory accesses only.
    pub fn is_memory_access(self) -> bool {
        self.props().memory_access
    }

    /// Whether the scheduler must make a choice before this operation runs.
    pub fn is_scheduling_point(self) -> bool {
        self.props().scheduling_point
    }

    /// A short name for reports.
    pub fn name(self) -> &'static str {
        self.props().name
    }
}

/// How the reads since an object's last write are kept: each one (a list),
/// or only what matters of them together (a join of clocks).
pub trait Reads<T: 'static>: Default {
    /// Adds a read.
    fn add(&mut self, read: T);
    /// Forgets every read (a write came).
    fn clear(&mut self);
    /// The reads kept, one item per read or one for their join.
    fn items(&self) -> impl Iterator<Item = &T>;
}

impl<T: 'static> Reads<T> for Vec<T> {
    fn add(&mut self, read: T) {
        self.push(read);
    }
    fn clear(&mut self) {
        Vec::clear(self);
    }
    fn items(&self) -> impl Iterator<Item = &T> {
        self.iter()
    }
}

/// Dependence clocks: the reads since a write matter only as their join.
impl Reads<VectorClock> for VectorClock {
    fn add(&mut self, read: VectorClock) {
        self.join(&read);
    }
    fn clear(&mut self) {
        VectorClock::clear(self);
    }
    fn items(&self) -> impl Iterator<Item = &VectorClock> {
        std::iter::once(self)
    }
}

/// The last write of an object and the reads since: what a new access to
/// it depends on. `T` is how an access is remembered (an event, a tag, a
/// clock), `R` how the reads are kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LastAccesses<T, R = Vec<T>> {
    /// The last write (`None`: the initial value).
    pub write: Option<T>,
    /// The reads since it.
    pub reads: R,
}

impl<T: 'static, R: Reads<T>> Default for LastAccesses<T, R> {
    fn default() -> Self {
        LastAccesses {
            write: None,
            reads: R::default(),
        }
    }
}

impl<T: 'static, R: Reads<T>> LastAccesses<T, R> {
    /// Records `access` as the newest access to the object.
    pub fn record(&mut self, access: T, access_kind: Access) {
        match access_kind {
            Access::Write => {
                self.write = Some(access);
                self.reads.clear();
            }
            Access::Read => self.reads.add(access),
        }
    }

    /// Every access a new access of `access_kind` depends on: the last
    /// write, and for a write also the reads since it.
    pub fn depended_on(&self, access_kind: Access) -> impl Iterator<Item = &T> {
        let reads = (access_kind == Access::Write).then(|| self.reads.items());
        self.write.iter().chain(reads.into_iter().flatten())
    }
}

impl LastAccesses<VectorClock, VectorClock> {
    /// [`record`](Self::record) for dependence clocks, without a copy of
    /// `clock` for a read (it is only joined into the reads' clock): this
    /// runs at every visible operation.
    pub fn record_clock(&mut self, clock: &VectorClock, access_kind: Access) {
        match access_kind {
            Access::Write => {
                match &mut self.write {
                    Some(write) => write.clone_from(clock),
                    None => self.write = Some(clock.clone()),
                }
                self.reads.clear();
            }
            Access::Read => self.reads.join(clock),
        }
    }
}

impl<T: Copy + Ord> LastAccesses<T> {
    /// The *immediate* predecessors of a new access of `access_kind` (its
    /// object predecessors in the unfolding): a read follows the last
    /// write; a write follows the reads of it, sorted, or the write itself
    /// when nothing read it. The rest of [`depended_on`](Self::depended_on)
    /// is in their histories.
    pub fn immediate(&self, access_kind: Access) -> Immediate<T> {
        if access_kind == Access::Write && !self.reads.is_empty() {
            let mut reads = self.reads.clone();
            reads.sort_unstable();
            Immediate::Reads(reads)
        } else {
            Immediate::Write(self.write)
        }
    }
}

/// The immediate predecessors [`LastAccesses::immediate`] gives: the last
/// write (none, or one, kept inline: most accesses follow one write) or the
/// reads of it, sorted. Dereferences to a slice.
#[derive(Clone, Debug)]
pub enum Immediate<T> {
    /// The last write, if any.
    Write(Option<T>),
    /// The reads of the last write, sorted.
    Reads(Vec<T>),
}

impl<T: PartialEq> PartialEq for Immediate<T> {
    /// As slices: one write inline equals a list of that one read.
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl<T: Eq> Eq for Immediate<T> {}

impl<T> Default for Immediate<T> {
    fn default() -> Self {
        Immediate::Write(None)
    }
}

impl<T> std::ops::Deref for Immediate<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        match self {
            Immediate::Write(write) => write.as_slice(),
            Immediate::Reads(reads) => reads,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use OpKind::*;

    #[test]
    fn the_props_table_lists_every_kind_in_declaration_order() {
        for (i, kind) in ALL_KINDS.iter().enumerate() {
            assert_eq!(*kind as usize, i, "{kind:?} out of place in ALL_KINDS");
            assert_eq!(kind.props(), kind.classify());
        }
        // The last declared kind ends the table (one added after it would
        // be classified anew on every call).
        assert_eq!(PeekWriteUnlock as usize + 1, ALL_KINDS.len());
    }

    #[test]
    fn only_reads_commute() {
        for k in [
            Load,
            Join,
            IsFinished,
            IsPoisoned,
            ReadLock,
            TryReadLock,
            ReadUnlock,
            Yield,
            PeekLock,
            PeekUnlock,
            PeekReadLock,
            PeekReadUnlock,
            DataRead,
        ] {
            assert!(!k.writes(), "{k:?}");
        }
        for k in [
            Store,
            Rmw,
            CompareExchange,
            Lock,
            TryLock,
            Unlock,
            ClearPoison,
            Spawn,
            Exit,
            Upgrade,
            DataWrite,
            ReadUpgrade,
            SharedLock,
            SharedTryLock,
            SharedUnlock,
            PeekWriteUnlock,
        ] {
            assert!(k.writes(), "{k:?}");
        }
    }

    #[test]
    fn pure_parts_start_and_end_where_peeking_says() {
        let starts: Vec<_> = [PeekLock, PeekReadLock, Lock, ReadLock]
            .into_iter()
            .filter(|k| k.starts_pure_part())
            .collect();
        assert_eq!(starts, [PeekLock, PeekReadLock]);
        for k in [
            PeekUnlock,
            PeekReadUnlock,
            Upgrade,
            ReadUpgrade,
            PeekWriteUnlock,
        ] {
            assert!(k.ends_pure_part(), "{k:?}");
        }
        for k in [Spawn, Fence, DataRead, DataWrite, Upgrade, ReadUpgrade] {
            assert!(!k.is_scheduling_point(), "{k:?}");
        }
        assert!(Load.is_memory_access() && DataWrite.is_memory_access());
        assert!(!Lock.is_memory_access());
    }

    #[test]
    fn a_read_depends_on_the_last_write_a_write_on_the_reads_since() {
        let mut last: LastAccesses<u32> = LastAccesses::default();
        assert!(last.immediate(Access::Read).is_empty());
        last.record(1, Access::Write);
        last.record(3, Access::Read);
        last.record(2, Access::Read);
        assert_eq!(*last.immediate(Access::Read), [1]);
        assert_eq!(*last.immediate(Access::Write), [2, 3]);
        let all: Vec<_> = last.depended_on(Access::Write).copied().collect();
        assert_eq!(all, [1, 3, 2]);
        let read: Vec<_> = last.depended_on(Access::Read).copied().collect();
        assert_eq!(read, [1]);
        last.record(4, Access::Write);
        assert_eq!(*last.immediate(Access::Write), [4]);
    }

    #[test]
    fn clocks_keep_the_join_of_the_reads() {
        use super::super::action::ThreadIdx;
        let clock = |t: u32, n: u32| {
            let mut c = VectorClock::new();
            c.set(ThreadIdx(t), n);
            c
        };
        let mut last: LastAccesses<VectorClock, VectorClock> = LastAccesses::default();
        last.record(clock(0, 1), Access::Write);
        last.record(clock(1, 2), Access::Read);
        last.record(clock(2, 5), Access::Read);
        let mut joined = VectorClock::new();
        for c in last.depended_on(Access::Write) {
            joined.join(c);
        }
        assert_eq!(joined.get(ThreadIdx(0)), 1);
        assert_eq!(joined.get(ThreadIdx(1)), 2);
        assert_eq!(joined.get(ThreadIdx(2)), 5);
        // `record_clock` keeps the same state without copying reads.
        let mut by_ref: LastAccesses<VectorClock, VectorClock> = LastAccesses::default();
        by_ref.record_clock(&clock(0, 1), Access::Write);
        by_ref.record_clock(&clock(1, 2), Access::Read);
        by_ref.record_clock(&clock(2, 5), Access::Read);
        assert_eq!(by_ref, last);
    }
}

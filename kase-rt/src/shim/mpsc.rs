//! `std::sync::mpsc` with std's signatures: `channel`, `sync_channel`
//! (bounded, and rendezvous with bound 0), the sender and receiver types,
//! their iterators, and std's own error types.
//!
//! # How kase models it
//!
//! A channel is a queue and its bookkeeping (live senders, whether the
//! receiver is alive, who waits) under one kase [`Mutex`], with two kase
//! [`Condvar`]s: the receiver waits on one for a message or for the last
//! sender to go, blocked senders wait on the other for room, for their
//! message to be taken (rendezvous) or for the receiver to go. Every
//! operation is a lock, perhaps a wait, and an unlock; a notification is
//! sent only when someone waits. So a `recv` that no sender will ever serve
//! while a sender is alive is a deadlock, and `recv_timeout` explores both
//! a message arriving and the timeout (time does not pass in a model: the
//! wait times out exactly when it wakes before being notified).
//!
//! Semantics are std's: messages arrive in send order; when every sender is
//! gone, the receiver still gets the queued messages, then `Err`; when the
//! receiver is gone, sends fail with the message back (and queued messages
//! are dropped); `sync_channel(0)`'s `send` returns only once the receiver
//! has taken the message, and its `try_send` succeeds only if the receiver
//! is waiting.

use std::cell::Cell;
use std::collections::VecDeque;
use std::fmt;
use std::marker::PhantomData;
use std::panic::Location;
use std::sync::{Arc, PoisonError};
use std::time::{Duration, Instant};

pub use std::sync::mpsc::{RecvError, RecvTimeoutError, SendError, TryRecvError, TrySendError};

use super::condvar::Condvar;
use super::mutex::{Mutex, MutexGuard};
use crate::exec;
use crate::exec::error::OrInternal;

/// What the senders and the receiver share.
struct Shared<T> {
    state: Mutex<State<T>>,
    /// The receiver waits here for a message or for the last sender to go.
    receiver_wakeup: Condvar,
    /// Blocked senders wait here (for room, for their message to be taken,
    /// or for the receiver to go).
    sender_wakeup: Condvar,
    /// `None` for `channel()`; `Some(0)` for a rendezvous channel.
    bound: Option<usize>,
}

struct State<T> {
    queue: VecDeque<T>,
    /// Live `Sender`s / `SyncSender`s.
    senders: usize,
    receiver_alive: bool,
    receiver_waiting: bool,
    senders_waiting: usize,
    /// Rendezvous: messages handed to the receiver so far (a sender's
    /// ticket), and those it has taken.
    handed: u64,
    taken: u64,
}

type Guard<'a, T> = MutexGuard<'a, State<T>>;

/// Outcomes of calls, as reports show them (`exec/call.rs`).
const MESSAGE: &str = "message";
const DISCONNECTED: &str = "disconnected";

/// `send` of a `Sender` or a `SyncSender`: one call in reports.
#[track_caller]
fn send<T>(shared: &Shared<T>, t: T) -> Result<(), SendError<T>> {
    let call = exec::call("send", "channel");
    let sent = shared.send(t);
    if sent.is_err() {
        call.outcome(DISCONNECTED);
    }
    sent
}

impl<T> Shared<T> {
    fn new(bound: Option<usize>) -> Arc<Self> {
        Arc::new(Shared {
            state: Mutex::new(State {
                queue: VecDeque::new(),
                senders: 1,
                receiver_alive: true,
                receiver_waiting: false,
                senders_waiting: 0,
                handed: 0,
                taken: 0,
            }),
            receiver_wakeup: Condvar::new(),
            sender_wakeup: Condvar::new(),
            bound,
        })
    }

    #[track_caller]
    fn lock(&self) -> Guard<'_, T> {
        // No user code runs under this lock, so poison is never set; and if
        // it were, the state is still consistent.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues `t` (there is room) and wakes the receiver if it waits.
    #[track_caller]
    fn push(&self, state: &mut Guard<'_, T>, t: T) {
        state.queue.push_back(t);
        if self.bound == Some(0) {
            state.handed += 1;
        }
        if state.receiver_waiting {
            self.receiver_wakeup.notify_one();
        }
    }

    /// Blocks a sender on `sender_wakeup`.
    #[track_caller]
    fn sender_wait<'a>(&self, mut state: Guard<'a, T>) -> Guard<'a, T> {
        state.senders_waiting += 1;
        let mut state = self
            .sender_wakeup
            .wait(state)
            .unwrap_or_else(PoisonError::into_inner);
        state.senders_waiting -= 1;
        state
    }

    /// Blocking send: `channel`, `sync_channel(n)`, `sync_channel(0)`.
    #[track_caller]
    fn send(&self, t: T) -> Result<(), SendError<T>> {
        let mut state = self.lock();
        // Wait for room (a rendezvous channel holds at most the one message
        // being handed over).
        loop {
            if !state.receiver_alive {
                return Err(SendError(t));
            }
            match self.bound {
                Some(bound) if state.queue.len() >= bound.max(1) => {
                    state = self.sender_wait(state);
                }
                _ => break,
            }
        }
        self.push(&mut state, t);
        if self.bound != Some(0) {
            return Ok(());
        }
        // Rendezvous: wait until the receiver has taken it.
        let ticket = state.handed;
        loop {
            if state.taken >= ticket {
                return Ok(());
            }
            if !state.receiver_alive {
                // Not taken, so it is the one message queued.
                let t = state
                    .queue
                    .pop_front()
                    .or_internal("the message handed over");
                return Err(SendError(t));
            }
            state = self.sender_wait(state);
        }
    }

    #[track_caller]
    fn try_send(&self, t: T) -> Result<(), TrySendError<T>> {
        let mut state = self.lock();
        if !state.receiver_alive {
            return Err(TrySendError::Disconnected(t));
        }
        let room = match self.bound {
            None => true,
            Some(0) => state.receiver_waiting && state.queue.is_empty(),
            Some(bound) => state.queue.len() < bound,
        };
        if !room {
            return Err(TrySendError::Full(t));
        }
        self.push(&mut state, t);
        Ok(())
    }

    /// Takes the next message, if any, waking the senders it unblocks.
    #[track_caller]
    fn pop(&self, state: &mut Guard<'_, T>) -> Option<T> {
        let t = state.queue.pop_front()?;
        match self.bound {
            None => {}
            Some(0) => {
                state.taken += 1;
                // Both the sender of this message and those waiting for the
                // slot wait on the same condvar.
                if state.senders_waiting > 0 {
                    self.sender_wakeup.notify_all();
                }
            }
            // One message out makes room for one blocked sender.
            Some(_) if state.senders_waiting > 0 => self.sender_wakeup.notify_one(),
            Some(_) => {}
        }
        Some(t)
    }

    /// `recv` (no `timeout`) or `recv_timeout`.
    #[track_caller]
    fn recv(&self, timeout: Option<Duration>) -> Result<T, RecvTimeoutError> {
        let in_model = exec::in_model();
        // Time does not pass in a model: there, a wait times out when it
        // wakes before a notification.
        let deadline = match timeout {
            Some(timeout) if !in_model => match Instant::now().checked_add(timeout) {
                Some(deadline) => Some(deadline),
                None => return self.recv(None),
            },
            _ => None,
        };
        let mut state = self.lock();
        let mut timed_out = false;
        loop {
            if let Some(t) = self.pop(&mut state) {
                return Ok(t);
            }
            if state.senders == 0 {
                return Err(RecvTimeoutError::Disconnected);
            }
            if timed_out {
                return Err(RecvTimeoutError::Timeout);
            }
            state.receiver_waiting = true;
            state = match timeout {
                None => self
                    .receiver_wakeup
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner),
                Some(timeout) => {
                    let left = match deadline {
                        Some(deadline) => deadline.saturating_duration_since(Instant::now()),
                        None => timeout,
                    };
                    let (state, result) = self
                        .receiver_wakeup
                        .wait_timeout(state, left)
                        .unwrap_or_else(PoisonError::into_inner);
                    timed_out = match deadline {
                        Some(deadline) => Instant::now() >= deadline,
                        None => result.timed_out(),
                    };
                    state
                }
            };
            state.receiver_waiting = false;
        }
    }

    #[track_caller]
    fn try_recv(&self) -> Result<T, TryRecvError> {
        let mut state = self.lock();
        match self.pop(&mut state) {
            Some(t) => Ok(t),
            None if state.senders == 0 => Err(TryRecvError::Disconnected),
            None => Err(TryRecvError::Empty),
        }
    }

    #[track_caller]
    fn add_sender(&self) {
        self.lock().senders += 1;
    }

    #[track_caller]
    fn drop_sender(&self) {
        let mut state = self.lock();
        state.senders -= 1;
        if state.senders == 0 && state.receiver_waiting {
            self.receiver_wakeup.notify_one();
        }
    }

    /// Returns the queued messages, for the caller to drop once the call
    /// has ended (their `Drop` is user code).
    #[track_caller]
    fn drop_receiver(&self) -> VecDeque<T> {
        let mut state = self.lock();
        state.receiver_alive = false;
        // A blocked rendezvous sender takes its message back; otherwise the
        // queued messages go now, as in std.
        let dropped = if self.bound == Some(0) {
            VecDeque::new()
        } else {
            std::mem::take(&mut state.queue)
        };
        if state.senders_waiting > 0 {
            self.sender_wakeup.notify_all();
        }
        drop(state);
        dropped
    }
}

/// Creates an unbounded channel, like [`std::sync::mpsc::channel`]: `send`
/// never blocks.
///
/// ```
/// # extern crate kase_rt as kase;
/// use kase::sync::mpsc;
/// use kase::thread;
///
/// kase::model(|| {
///     let (tx, rx) = mpsc::channel();
///     let tx2 = tx.clone();
///     let a = thread::spawn(move || tx.send(1).unwrap());
///     let b = thread::spawn(move || tx2.send(2).unwrap());
///     let mut got: Vec<i32> = rx.iter().collect(); // ends when both senders are gone
///     got.sort();
///     assert_eq!(got, [1, 2]);
///     a.join().unwrap();
///     b.join().unwrap();
/// });
/// ```
#[must_use]
#[track_caller]
pub fn channel<T>() -> (Sender<T>, Receiver<T>) {
    let shared = Shared::new(None);
    (
        Sender {
            shared: shared.clone(),
            created: Location::caller(),
        },
        Receiver::new(shared),
    )
}

/// Creates a channel holding at most `bound` messages, like
/// [`std::sync::mpsc::sync_channel`]: `send` blocks while it is full. With
/// `bound` 0 it is a rendezvous channel: `send` blocks until the receiver
/// has taken the message.
///
/// ```
/// # extern crate kase_rt as kase;
/// use kase::sync::mpsc;
/// use kase::thread;
///
/// kase::model(|| {
///     let (tx, rx) = mpsc::sync_channel(0);
///     let t = thread::spawn(move || tx.send(7).unwrap()); // returns once received
///     assert_eq!(rx.recv(), Ok(7));
///     t.join().unwrap();
/// });
/// ```
#[must_use]
#[track_caller]
pub fn sync_channel<T>(bound: usize) -> (SyncSender<T>, Receiver<T>) {
    let shared = Shared::new(Some(bound));
    (
        SyncSender {
            shared: shared.clone(),
            created: Location::caller(),
        },
        Receiver::new(shared),
    )
}

/// The sending half of a [`channel`], like [`std::sync::mpsc::Sender`].
/// Cloneable; the channel disconnects when every sender is dropped.
pub struct Sender<T> {
    shared: Arc<Shared<T>>,
    /// Where it was created: reports show its drop there.
    created: &'static Location<'static>,
}

/// The sending half of a [`sync_channel`], like
/// [`std::sync::mpsc::SyncSender`].
pub struct SyncSender<T> {
    shared: Arc<Shared<T>>,
    /// Where it was created: reports show its drop there.
    created: &'static Location<'static>,
}

/// The receiving half of a channel, like [`std::sync::mpsc::Receiver`].
/// `Send` but not `Sync`: one thread receives at a time.
pub struct Receiver<T> {
    shared: Arc<Shared<T>>,
    /// Where it was created: reports show its drop there.
    created: &'static Location<'static>,
    _not_sync: PhantomData<Cell<()>>,
}

impl<T> Sender<T> {
    /// Sends `t`; never blocks. `Err` with the message if the receiver is
    /// gone.
    #[track_caller]
    pub fn send(&self, t: T) -> Result<(), SendError<T>> {
        send(&self.shared, t)
    }
}

impl<T> SyncSender<T> {
    /// Sends `t`, blocking while the channel is full (for a rendezvous
    /// channel: until the receiver has taken it). `Err` with the message if
    /// the receiver is gone.
    #[track_caller]
    pub fn send(&self, t: T) -> Result<(), SendError<T>> {
        send(&self.shared, t)
    }

    /// Sends `t` if there is room now (for a rendezvous channel: if the
    /// receiver is waiting); never blocks.
    #[track_caller]
    pub fn try_send(&self, t: T) -> Result<(), TrySendError<T>> {
        let call = exec::call("try_send", "channel");
        let sent = self.shared.try_send(t);
        call.outcome(match &sent {
            Ok(()) => "sent",
            Err(TrySendError::Full(_)) => "full",
            Err(TrySendError::Disconnected(_)) => DISCONNECTED,
        });
        sent
    }
}

impl<T> Receiver<T> {
    #[track_caller]
    fn new(shared: Arc<Shared<T>>) -> Self {
        Receiver {
            shared,
            created: Location::caller(),
            _not_sync: PhantomData,
        }
    }

    /// Takes a message without blocking: `Empty` if none is queued,
    /// `Disconnected` if none is and every sender is gone.
    #[track_caller]
    pub fn try_recv(&self) -> Result<T, TryRecvError> {
        let call = exec::call("try_recv", "channel");
        let got = self.shared.try_recv();
        call.outcome(match &got {
            Ok(_) => MESSAGE,
            Err(TryRecvError::Empty) => "empty",
            Err(TryRecvError::Disconnected) => DISCONNECTED,
        });
        got
    }

    /// Blocks until a message arrives; `Err` once none is queued and every
    /// sender is gone.
    #[track_caller]
    pub fn recv(&self) -> Result<T, RecvError> {
        let call = exec::call("recv", "channel");
        let got = self.shared.recv(None).map_err(|_| RecvError);
        call.outcome(if got.is_ok() { MESSAGE } else { DISCONNECTED });
        got
    }

    /// Like [`recv`](Self::recv), but gives up after `timeout`. In a model
    /// both endings are explored whenever the wait could be notified.
    #[track_caller]
    pub fn recv_timeout(&self, timeout: Duration) -> Result<T, RecvTimeoutError> {
        let call = exec::call("recv_timeout", "channel");
        let got = self.shared.recv(Some(timeout));
        call.outcome(match &got {
            Ok(_) => MESSAGE,
            Err(RecvTimeoutError::Timeout) => "timed out",
            Err(RecvTimeoutError::Disconnected) => DISCONNECTED,
        });
        got
    }

    /// A blocking iterator: yields messages until every sender is gone.
    pub fn iter(&self) -> Iter<'_, T> {
        Iter { rx: self }
    }

    /// An iterator over the messages queued now; never blocks.
    pub fn try_iter(&self) -> TryIter<'_, T> {
        TryIter { rx: self }
    }
}

impl<T> Clone for Sender<T> {
    /// Another sender on the same channel.
    #[track_caller]
    fn clone(&self) -> Self {
        let _call = exec::call("clone sender", "channel");
        self.shared.add_sender();
        Sender {
            shared: self.shared.clone(),
            created: Location::caller(),
        }
    }
}

impl<T> Clone for SyncSender<T> {
    /// Another sender on the same channel.
    #[track_caller]
    fn clone(&self) -> Self {
        let _call = exec::call("clone sender", "channel");
        self.shared.add_sender();
        SyncSender {
            shared: self.shared.clone(),
            created: Location::caller(),
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        let _call = exec::call_at("drop sender", "channel", self.created);
        self.shared.drop_sender();
    }
}

impl<T> Drop for SyncSender<T> {
    fn drop(&mut self) {
        let _call = exec::call_at("drop sender", "channel", self.created);
        self.shared.drop_sender();
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        let call = exec::call_at("drop receiver", "channel", self.created);
        let dropped = self.shared.drop_receiver();
        drop(call);
        // The messages still queued go now, as in std; their `Drop` is the
        // user's, not part of the call.
        drop(dropped);
    }
}

impl<T> fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sender").finish_non_exhaustive()
    }
}

impl<T> fmt::Debug for SyncSender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SyncSender").finish_non_exhaustive()
    }
}

impl<T> fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Receiver").finish_non_exhaustive()
    }
}

/// A blocking iterator over a [`Receiver`]'s messages, from
/// [`Receiver::iter`].
#[derive(Debug)]
pub struct Iter<'a, T> {
    rx: &'a Receiver<T>,
}

/// A non-blocking iterator over the messages queued now, from
/// [`Receiver::try_iter`].
#[derive(Debug)]
pub struct TryIter<'a, T> {
    rx: &'a Receiver<T>,
}

/// An owning blocking iterator over a [`Receiver`]'s messages.
#[derive(Debug)]
pub struct IntoIter<T> {
    rx: Receiver<T>,
}

impl<T> Iterator for Iter<'_, T> {
    type Item = T;

    #[track_caller]
    fn next(&mut self) -> Option<T> {
        self.rx.recv().ok()
    }
}

impl<T> Iterator for TryIter<'_, T> {
    type Item = T;

    #[track_caller]
    fn next(&mut self) -> Option<T> {
        self.rx.try_recv().ok()
    }
}

impl<T> Iterator for IntoIter<T> {
    type Item = T;

    #[track_caller]
    fn next(&mut self) -> Option<T> {
        self.rx.recv().ok()
    }
}

impl<'a, T> IntoIterator for &'a Receiver<T> {
    type Item = T;
    type IntoIter = Iter<'a, T>;

    fn into_iter(self) -> Iter<'a, T> {
        self.iter()
    }
}

impl<T> IntoIterator for Receiver<T> {
    type Item = T;
    type IntoIter = IntoIter<T>;

    fn into_iter(self) -> IntoIter<T> {
        IntoIter { rx: self }
    }
}

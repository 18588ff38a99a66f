//! `Barrier`, `Once`, `OnceLock`, `LazyLock` and `mpsc`: semantics in a
//! model, trace counts against the exhaustive oracle, statics restarting with
//! every execution, and std behaviour outside a model.

use std::collections::BTreeSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::AtomicUsize as StdAtomicUsize;
use std::time::Duration;

use kase::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use kase::sync::mpsc::{self, RecvError, RecvTimeoutError, SendError, TryRecvError, TrySendError};
use kase::sync::{Arc, Barrier, LazyLock, Mutex, Once, OnceLock};
use kase::{thread, Builder, FailureKind, Report};

use crate::common::optimal;

fn kind(report: &Report) -> Option<FailureKind> {
    report.failure().map(|f| f.kind())
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("")
}

/// Records what the executions of one exploration saw.
#[derive(Default)]
struct Outcomes(std::sync::Mutex<BTreeSet<String>>);

impl Outcomes {
    fn add(&self, outcome: impl std::fmt::Debug) {
        self.0.lock().unwrap().insert(format!("{outcome:?}"));
    }

    fn seen(&self) -> Vec<String> {
        self.0.lock().unwrap().iter().cloned().collect()
    }
}

// ---------------------------------------------------------------- Barrier

#[test]
fn barrier_with_too_few_threads_deadlocks() {
    let report = Builder::new().explore(|| {
        let barrier = Arc::new(Barrier::new(3));
        let b = barrier.clone();
        let t = thread::spawn(move || {
            b.wait();
        });
        barrier.wait();
        t.join().unwrap();
    });
    assert_eq!(kind(&report), Some(FailureKind::Deadlock), "{report}");
}

#[test]
fn barrier_with_enough_threads_has_exactly_one_leader() {
    let report = optimal(|| {
        let barrier = Arc::new(Barrier::new(2));
        let leaders = Arc::new(AtomicUsize::new(0));
        let (b, l) = (barrier.clone(), leaders.clone());
        let t = thread::spawn(move || {
            if b.wait().is_leader() {
                l.fetch_add(1, SeqCst);
            }
        });
        if barrier.wait().is_leader() {
            leaders.fetch_add(1, SeqCst);
        }
        t.join().unwrap();
        assert_eq!(leaders.load(SeqCst), 1);
    });
    assert!(report.executions() >= 2, "either thread may lead");
}

#[test]
fn barrier_is_reusable_and_orders_the_generations() {
    Builder::new().check(|| {
        let barrier = Arc::new(Barrier::new(2));
        let phase = Arc::new(AtomicUsize::new(0));
        let (b, p) = (barrier.clone(), phase.clone());
        let t = thread::spawn(move || {
            p.fetch_add(1, SeqCst);
            b.wait();
            assert_eq!(p.load(SeqCst), 2, "both arrived before either left");
            b.wait();
        });
        phase.fetch_add(1, SeqCst);
        barrier.wait();
        assert_eq!(phase.load(SeqCst), 2);
        barrier.wait();
        t.join().unwrap();
    });
}

#[test]
fn a_static_barrier_restarts_with_every_execution() {
    static BARRIER: Barrier = Barrier::new(2);
    // The first exploration leaves a thread counted in, blocked forever.
    let report = Builder::new().explore(|| {
        BARRIER.wait();
    });
    assert_eq!(kind(&report), Some(FailureKind::Deadlock));
    // The next starts from a fresh barrier: one more arrival is not enough
    // to lead, two are.
    Builder::new().check(|| {
        let t = thread::spawn(|| BARRIER.wait().is_leader());
        let me = BARRIER.wait().is_leader();
        assert!(me ^ t.join().unwrap());
    });
}

// ------------------------------------------------------------------- Once

#[test]
fn once_runs_its_closure_once_and_publishes_it() {
    let report = optimal(|| {
        let once = Arc::new(Once::new());
        let calls = Arc::new(AtomicUsize::new(0));
        let (o, c) = (once.clone(), calls.clone());
        let t = thread::spawn(move || {
            o.call_once(|| {
                c.fetch_add(1, SeqCst);
            });
            assert_eq!(c.load(SeqCst), 1, "call_once returns after the initialiser");
        });
        once.call_once(|| {
            calls.fetch_add(1, SeqCst);
        });
        assert!(once.is_completed());
        assert_eq!(calls.load(SeqCst), 1);
        t.join().unwrap();
    });
    assert!(report.executions() >= 2);
}

#[test]
fn once_is_poisoned_by_a_panicking_initialiser() {
    Builder::new().check(|| {
        let once = Once::new();
        let caught = catch_unwind(AssertUnwindSafe(|| {
            once.call_once(|| panic!("initialiser fails"));
        }));
        assert!(caught.is_err());
        assert!(!once.is_completed());
        let again = catch_unwind(AssertUnwindSafe(|| once.call_once(|| ())));
        assert_eq!(
            panic_message(&*again.unwrap_err()),
            "Once instance has previously been poisoned"
        );
        let wait = catch_unwind(AssertUnwindSafe(|| once.wait()));
        assert!(wait.is_err(), "wait panics on a poisoned Once");
        let mut saw_poison = false;
        once.call_once_force(|state| saw_poison = state.is_poisoned());
        assert!(saw_poison);
        assert!(once.is_completed());
        once.wait();
        once.call_once(|| unreachable!());
    });
}

#[test]
fn a_waiter_sees_the_poison_or_runs_first() {
    let outcomes = Outcomes::default();
    let report = Builder::new().explore(|| {
        let once = Arc::new(Once::new());
        let o = once.clone();
        let t = thread::spawn(move || {
            let r = catch_unwind(AssertUnwindSafe(|| o.call_once(|| panic!("boom"))));
            r.is_ok()
        });
        let mine = catch_unwind(AssertUnwindSafe(|| once.call_once(|| ())));
        let theirs = t.join().unwrap();
        outcomes.add((mine.is_ok(), theirs));
    });
    assert!(report.failure().is_none(), "{report}");
    // Main initialises first (the other closure never runs), or the
    // panicking one runs first and main finds it poisoned (maybe waiting).
    assert_eq!(outcomes.seen(), ["(false, false)", "(true, true)"]);
}

#[test]
fn wait_blocks_until_completion_and_deadlocks_without_one() {
    let report = Builder::new().explore(|| {
        let once = Once::new();
        once.wait();
    });
    assert_eq!(kind(&report), Some(FailureKind::Deadlock));
    optimal(|| {
        let once = Arc::new(Once::new());
        let done = Arc::new(AtomicBool::new(false));
        let (o, d) = (once.clone(), done.clone());
        let t = thread::spawn(move || {
            o.wait();
            assert!(d.load(SeqCst));
        });
        once.call_once(|| done.store(true, SeqCst));
        t.join().unwrap();
    });
}

#[test]
fn a_static_once_restarts_with_every_execution() {
    static ONCE: Once = Once::new();
    let report = Builder::new().explore(|| {
        assert!(!ONCE.is_completed(), "completed by an earlier execution");
        let t = thread::spawn(|| ONCE.call_once(|| ()));
        ONCE.call_once(|| ());
        t.join().unwrap();
    });
    assert!(report.failure().is_none(), "{report}");
    assert!(report.executions() >= 2);
}

// --------------------------------------------------------------- OnceLock

#[test]
fn once_lock_is_initialised_once_across_threads() {
    let report = optimal(|| {
        let cell = Arc::new(OnceLock::new());
        let calls = Arc::new(AtomicUsize::new(0));
        let handles: Vec<_> = (0..2)
            .map(|i| {
                let (cell, calls) = (cell.clone(), calls.clone());
                thread::spawn(move || {
                    *cell.get_or_init(|| {
                        calls.fetch_add(1, SeqCst);
                        i
                    })
                })
            })
            .collect();
        let seen: Vec<usize> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        assert_eq!(calls.load(SeqCst), 1, "one initialiser ran");
        assert_eq!(seen[0], seen[1], "both see the same value");
        assert_eq!(cell.get(), Some(&seen[0]));
    });
    assert!(report.executions() >= 2, "either thread may initialise");
}

#[test]
fn once_lock_set_get_and_wait() {
    let outcomes = Outcomes::default();
    let report = optimal(|| {
        let cell = Arc::new(OnceLock::new());
        let c = cell.clone();
        let t = thread::spawn(move || c.set(1));
        let mine = cell.set(2);
        let theirs = t.join().unwrap();
        assert!(mine.is_ok() ^ theirs.is_ok());
        outcomes.add(*cell.wait());
    });
    assert!(report.failure().is_none());
    assert_eq!(outcomes.seen(), ["1", "2"]);

    // `wait` blocks until another thread sets it; `get` never blocks.
    optimal(|| {
        let cell = Arc::new(OnceLock::new());
        let c = cell.clone();
        let t = thread::spawn(move || assert_eq!(*c.wait(), 5));
        let _ = cell.get();
        cell.set(5).unwrap();
        t.join().unwrap();
    });
}

#[test]
fn once_lock_panicking_initialiser_leaves_it_empty() {
    Builder::new().check(|| {
        let cell: OnceLock<u32> = OnceLock::new();
        let caught = catch_unwind(AssertUnwindSafe(|| {
            cell.get_or_init(|| panic!("no value"));
        }));
        assert!(caught.is_err());
        assert_eq!(cell.get(), None);
        assert_eq!(*cell.get_or_init(|| 3), 3);
    });
}

#[test]
fn once_lock_owned_methods_and_traits() {
    Builder::new().check(|| {
        let mut cell = OnceLock::from(String::from("a"));
        assert_eq!(cell.get_mut().map(|s| s.as_str()), Some("a"));
        cell.get_mut().unwrap().push('b');
        assert_eq!(cell.clone(), OnceLock::from(String::from("ab")));
        assert_ne!(cell, OnceLock::new());
        assert_eq!(format!("{cell:?}"), "OnceLock(\"ab\")");
        assert_eq!(cell.take().as_deref(), Some("ab"));
        assert_eq!(format!("{cell:?}"), "OnceLock(<uninit>)");
        assert_eq!(cell.set(String::from("c")), Ok(()));
        assert_eq!(cell.into_inner().as_deref(), Some("c"));
        assert_eq!(OnceLock::<u8>::default().into_inner(), None);
    });
}

#[test]
fn a_static_once_lock_restarts_with_every_execution() {
    static CELL: OnceLock<Vec<u32>> = OnceLock::new();
    let report = Builder::new().explore(|| {
        assert_eq!(CELL.get(), None, "set by an earlier execution");
        let t = thread::spawn(|| CELL.set(vec![1]).is_ok());
        let mine = CELL.set(vec![2]).is_ok();
        assert!(mine ^ t.join().unwrap());
    });
    assert!(report.failure().is_none(), "{report}");
    assert!(report.executions() >= 2);
}

// --------------------------------------------------------------- LazyLock

#[test]
fn a_static_lazy_lock_restarts_with_every_execution() {
    static INITS: StdAtomicUsize = StdAtomicUsize::new(0);
    static LAZY: LazyLock<Mutex<Vec<u32>>> = LazyLock::new(|| {
        INITS.fetch_add(1, SeqCst);
        Mutex::new(Vec::new())
    });
    let report = Builder::new().explore(|| {
        let t = thread::spawn(|| LAZY.lock().unwrap().push(1));
        LAZY.lock().unwrap().push(2);
        t.join().unwrap();
        assert_eq!(
            LAZY.lock().unwrap().len(),
            2,
            "values from earlier executions"
        );
    });
    assert!(report.failure().is_none(), "{report}");
    assert!(report.executions() >= 2);
    assert_eq!(
        INITS.load(SeqCst) as u64,
        report.executions(),
        "one initialisation per execution"
    );
}

#[test]
fn lazy_lock_initialises_once_and_poisons_like_std() {
    optimal(|| {
        let calls = Arc::new(AtomicUsize::new(0));
        let c = calls.clone();
        let lazy = Arc::new(LazyLock::new(move || c.fetch_add(1, SeqCst) + 10));
        let l = lazy.clone();
        let t = thread::spawn(move || **l);
        assert_eq!(**lazy, 10);
        assert_eq!(t.join().unwrap(), 10);
        assert_eq!(calls.load(SeqCst), 1);
    });
    Builder::new().check(|| {
        let lazy: LazyLock<u32> = LazyLock::new(|| panic!("no value"));
        assert!(catch_unwind(AssertUnwindSafe(|| *lazy)).is_err());
        let again = catch_unwind(AssertUnwindSafe(|| *lazy));
        assert_eq!(
            panic_message(&*again.unwrap_err()),
            "LazyLock instance has previously been poisoned"
        );
        assert_eq!(LazyLock::get(&lazy), None);
        assert_eq!(format!("{lazy:?}"), "LazyLock(<uninit>)");

        let mut lazy = LazyLock::new(|| 1);
        assert_eq!(LazyLock::get(&lazy), None);
        assert_eq!(LazyLock::get_mut(&mut lazy), None);
        *LazyLock::force_mut(&mut lazy) += 1;
        *lazy += 1;
        assert_eq!(*LazyLock::force(&lazy), 3);
        assert_eq!(LazyLock::get(&lazy), Some(&3));
        assert_eq!(format!("{lazy:?}"), "LazyLock(3)");
        let default: LazyLock<Vec<u8>> = LazyLock::default();
        assert!(default.is_empty());
    });
}

#[test]
fn a_reused_lazy_lock_with_an_owning_initialiser_explains_itself() {
    let owned = String::from("owned");
    let lazy: LazyLock<usize, Box<dyn FnOnce() -> usize + Send>> =
        LazyLock::new(Box::new(move || owned.len()));
    let report = Builder::new().explore(|| {
        // Two executions: the threads' stores go in either order.
        let flag = Arc::new(AtomicUsize::new(0));
        let f = flag.clone();
        let t = thread::spawn(move || f.store(1, SeqCst));
        flag.store(2, SeqCst);
        assert_eq!(*lazy, 5);
        t.join().unwrap();
    });
    let message = report.failure().and_then(|f| f.message()).unwrap_or("");
    assert!(message.contains("cannot run a second time"), "{report}");
}

// ------------------------------------------------------------------- mpsc

#[test]
fn rendezvous_send_returns_only_once_received() {
    fn handoff(bound: usize) -> Report {
        Builder::new().explore(move || {
            let (tx, rx) = mpsc::sync_channel(bound);
            let returned = Arc::new(AtomicBool::new(false));
            let r = returned.clone();
            let t = thread::spawn(move || {
                tx.send(1).unwrap();
                r.store(true, SeqCst);
            });
            assert!(!returned.load(SeqCst), "send returned before the receive");
            assert_eq!(rx.recv(), Ok(1));
            t.join().unwrap();
        })
    }
    let report = handoff(0);
    assert!(report.failure().is_none(), "{report}");
    // With room for one message, send does not wait for the receiver.
    assert_eq!(kind(&handoff(1)), Some(FailureKind::Panic));
    optimal(|| {
        let (tx, rx) = mpsc::sync_channel(0);
        let t = thread::spawn(move || tx.send(7).unwrap());
        assert_eq!(rx.recv(), Ok(7));
        t.join().unwrap();
    });
}

#[test]
fn rendezvous_try_send_needs_a_waiting_receiver() {
    let outcomes = Outcomes::default();
    let report = Builder::new().explore(|| {
        let (tx, rx) = mpsc::sync_channel(0);
        let t = thread::spawn(move || rx.recv_timeout(Duration::from_secs(1)));
        let sent = tx.try_send(3);
        let got = t.join().unwrap();
        // A successful try_send means the waiting receiver gets it.
        if sent.is_ok() {
            assert_eq!(got, Ok(3));
        }
        outcomes.add((sent.is_ok(), got.is_ok()));
    });
    assert!(report.failure().is_none(), "{report}");
    // `(false, true)` never: the receiver gets only what was sent.
    let seen = outcomes.seen();
    assert!(seen.contains(&"(true, true)".to_string()), "{seen:?}");
    assert!(seen.contains(&"(false, false)".to_string()), "{seen:?}");
    assert_eq!(seen.len(), 2, "{seen:?}");
}

#[test]
fn a_bounded_channel_blocks_when_full() {
    let report = Builder::new().explore(|| {
        let (tx, rx) = mpsc::sync_channel(1);
        let both = Arc::new(AtomicBool::new(false));
        let b = both.clone();
        let t = thread::spawn(move || {
            tx.send(1).unwrap();
            tx.send(2).unwrap(); // waits for room
            b.store(true, SeqCst);
        });
        assert!(!both.load(SeqCst), "the second send did not wait");
        assert_eq!(rx.recv(), Ok(1));
        assert_eq!(rx.recv(), Ok(2));
        t.join().unwrap();
    });
    assert!(report.failure().is_none(), "{report}");

    // Nobody receives: the second send blocks forever.
    let report = Builder::new().explore(|| {
        let (tx, _rx) = mpsc::sync_channel(1);
        tx.send(1).unwrap();
        tx.send(2).unwrap();
    });
    assert_eq!(kind(&report), Some(FailureKind::Deadlock));

    Builder::new().check(|| {
        let (tx, rx) = mpsc::sync_channel(1);
        assert_eq!(tx.try_send(1), Ok(()));
        assert_eq!(tx.try_send(2), Err(TrySendError::Full(2)));
        assert_eq!(rx.try_recv(), Ok(1));
        assert_eq!(tx.try_send(3), Ok(()));
        assert_eq!(rx.recv(), Ok(3));
    });
}

#[test]
fn disconnection_errors_follow_std() {
    Builder::new().check(|| {
        // Every sender gone: queued messages first, then errors.
        let (tx, rx) = mpsc::channel();
        let tx2 = tx.clone();
        tx.send(1).unwrap();
        drop(tx);
        assert_eq!(rx.try_recv(), Ok(1));
        assert_eq!(rx.try_recv(), Err(TryRecvError::Empty), "tx2 is alive");
        tx2.send(2).unwrap();
        drop(tx2);
        assert_eq!(rx.recv(), Ok(2));
        assert_eq!(rx.recv(), Err(RecvError));
        assert_eq!(rx.try_recv(), Err(TryRecvError::Disconnected));
        assert_eq!(
            rx.recv_timeout(Duration::from_secs(1)),
            Err(RecvTimeoutError::Disconnected)
        );

        // The receiver gone: sends give the message back.
        let (tx, rx) = mpsc::channel();
        drop(rx);
        assert_eq!(tx.send(5), Err(SendError(5)));
        let (tx, rx) = mpsc::sync_channel(1);
        drop(rx);
        assert_eq!(tx.send(6), Err(SendError(6)));
        assert_eq!(tx.try_send(7), Err(TrySendError::Disconnected(7)));
    });
    // A receiver blocked in recv wakes when the last sender goes.
    optimal(|| {
        let (tx, rx) = mpsc::channel::<u32>();
        let t = thread::spawn(move || drop(tx));
        assert_eq!(rx.recv(), Err(RecvError));
        t.join().unwrap();
    });
    // A rendezvous sender blocked in send wakes when the receiver goes.
    optimal(|| {
        let (tx, rx) = mpsc::sync_channel::<u32>(0);
        let t = thread::spawn(move || tx.send(9));
        drop(rx);
        assert_eq!(t.join().unwrap(), Err(SendError(9)));
    });
    // A sender alive that never sends: recv waits forever.
    let report = Builder::new().explore(|| {
        let (_tx, rx) = mpsc::channel::<u32>();
        let _ = rx.recv();
    });
    assert_eq!(kind(&report), Some(FailureKind::Deadlock));
}

#[test]
fn recv_timeout_explores_both_outcomes() {
    let outcomes = Outcomes::default();
    let report = optimal(|| {
        let (tx, rx) = mpsc::channel();
        let t = thread::spawn(move || tx.send(5).unwrap());
        let got = rx.recv_timeout(Duration::from_millis(10));
        assert!(matches!(got, Ok(5) | Err(RecvTimeoutError::Timeout)));
        outcomes.add(got);
        t.join().unwrap();
    });
    assert!(report.failure().is_none());
    assert_eq!(outcomes.seen(), ["Err(Timeout)", "Ok(5)"]);
}

#[test]
fn messages_arrive_in_order_through_the_iterators() {
    optimal(|| {
        let (tx, rx) = mpsc::channel();
        let t = thread::spawn(move || {
            for i in 0..3 {
                tx.send(i).unwrap();
            }
        });
        let got: Vec<u32> = rx.iter().collect();
        assert_eq!(got, [0, 1, 2]);
        t.join().unwrap();
    });
    Builder::new().check(|| {
        let (tx, rx) = mpsc::channel();
        tx.send(1).unwrap();
        tx.send(2).unwrap();
        assert_eq!(rx.try_iter().collect::<Vec<_>>(), [1, 2]);
        assert_eq!(rx.try_iter().next(), None);
        tx.send(3).unwrap();
        drop(tx);
        assert_eq!((&rx).into_iter().collect::<Vec<_>>(), [3]);
        let (tx, rx) = mpsc::sync_channel(2);
        let tx2 = tx.clone();
        tx.send(4).unwrap();
        tx2.send(5).unwrap();
        drop((tx, tx2));
        assert_eq!(rx.into_iter().collect::<Vec<_>>(), [4, 5]);
    });
}

// --------------------------------------------------------- outside a model

#[test]
fn outside_a_model_they_behave_like_std() {
    // Barrier: four real threads, one leader per generation.
    let barrier = Arc::new(Barrier::new(4));
    let leaders = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let (b, l) = (barrier.clone(), leaders.clone());
            std::thread::spawn(move || {
                for _ in 0..3 {
                    if b.wait().is_leader() {
                        l.fetch_add(1, SeqCst);
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(leaders.load(SeqCst), 3);
    assert!(Barrier::new(1).wait().is_leader());

    // Once / OnceLock / LazyLock: one initialiser among racing threads,
    // the others block until it is done.
    static ONCE: Once = Once::new();
    static CELL: OnceLock<usize> = OnceLock::new();
    static LAZY: LazyLock<usize> = LazyLock::new(|| {
        std::thread::sleep(Duration::from_millis(5));
        INITS.fetch_add(1, SeqCst);
        7
    });
    static INITS: StdAtomicUsize = StdAtomicUsize::new(0);
    let calls = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..8)
        .map(|i| {
            let calls = calls.clone();
            std::thread::spawn(move || {
                ONCE.call_once(|| {
                    std::thread::sleep(Duration::from_millis(5));
                    calls.fetch_add(1, SeqCst);
                });
                assert_eq!(calls.load(SeqCst), 1);
                let v = *CELL.get_or_init(|| {
                    std::thread::sleep(Duration::from_millis(5));
                    i
                });
                assert_eq!(*LAZY, 7);
                v
            })
        })
        .collect();
    let values: BTreeSet<usize> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert_eq!(values.len(), 1);
    assert_eq!(INITS.load(SeqCst), 1);
    assert!(ONCE.is_completed());
    ONCE.wait();
    assert_eq!(CELL.wait(), values.iter().next().unwrap());

    // Debug output is std's.
    assert_eq!(format!("{:?}", Once::new()), "Once { .. }");
    assert_eq!(format!("{:?}", Barrier::new(2)), "Barrier { .. }");
    assert_eq!(
        format!("{:?}", Barrier::new(0).wait()),
        "BarrierWaitResult { is_leader: true }"
    );
    Once::new().call_once_force(|s| assert_eq!(format!("{s:?}"), "OnceState { poisoned: false }"));
    let (tx, rx) = mpsc::channel::<u8>();
    let (stx, _srx) = mpsc::sync_channel::<u8>(1);
    assert_eq!(
        format!("{tx:?} {rx:?} {stx:?} {:?}", rx.iter()),
        "Sender { .. } Receiver { .. } SyncSender { .. } Iter { rx: Receiver { .. } }"
    );
}

#[test]
fn channels_outside_a_model_behave_like_std() {
    // Unbounded, several producers.
    let (tx, rx) = mpsc::channel();
    let handles: Vec<_> = (0..4)
        .map(|i| {
            let tx = tx.clone();
            std::thread::spawn(move || {
                for j in 0..50 {
                    tx.send(i * 100 + j).unwrap();
                }
            })
        })
        .collect();
    drop(tx);
    let got: Vec<u32> = rx.iter().collect();
    assert_eq!(got.len(), 200);
    for i in 0..4 {
        let mine: Vec<u32> = got.iter().copied().filter(|v| v / 100 == i).collect();
        assert!(mine.windows(2).all(|w| w[0] < w[1]), "per-sender order");
    }
    for h in handles {
        h.join().unwrap();
    }

    // Rendezvous: send returns only after the receive.
    let (tx, rx) = mpsc::sync_channel(0);
    let received = Arc::new(AtomicBool::new(false));
    let r = received.clone();
    let t = std::thread::spawn(move || {
        tx.send(1).unwrap();
        assert!(r.load(SeqCst), "send returned before the receive");
    });
    std::thread::sleep(Duration::from_millis(20));
    received.store(true, SeqCst);
    assert_eq!(rx.recv(), Ok(1));
    t.join().unwrap();

    // Bounded: blocks when full until a receive makes room.
    let (tx, rx) = mpsc::sync_channel(2);
    let sent = Arc::new(AtomicUsize::new(0));
    let s = sent.clone();
    let t = std::thread::spawn(move || {
        for i in 0..10 {
            tx.send(i).unwrap();
            s.fetch_add(1, SeqCst);
        }
    });
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(sent.load(SeqCst), 2, "two fit before the sender blocks");
    let all: Vec<_> = rx.iter().collect();
    assert_eq!(all, (0..10).collect::<Vec<_>>());
    t.join().unwrap();

    // Timeouts and disconnection.
    let (tx, rx) = mpsc::channel::<u8>();
    assert_eq!(
        rx.recv_timeout(Duration::from_millis(10)),
        Err(RecvTimeoutError::Timeout)
    );
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(10));
        tx.send(3).unwrap();
    });
    assert_eq!(rx.recv_timeout(Duration::from_secs(10)), Ok(3));
    t.join().unwrap();
    assert_eq!(
        rx.recv_timeout(Duration::MAX),
        Err(RecvTimeoutError::Disconnected)
    );
    let (tx, rx) = mpsc::sync_channel(0);
    let t = std::thread::spawn(move || tx.send(4));
    std::thread::sleep(Duration::from_millis(10));
    drop(rx);
    assert_eq!(t.join().unwrap(), Err(SendError(4)));
}

// -------------------------------------------------------- #[kase::test]

/// A body written against std: module-level imports and full paths are
/// rewritten onto the shims.
mod written_against_std {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{mpsc, Arc, Barrier, LazyLock, Once, OnceLock};
    use std::thread;

    #[kase::test(expect = "deadlock")]
    fn a_barrier_too_few_threads_reach() {
        let barrier = Arc::new(Barrier::new(2));
        barrier.wait();
    }

    #[kase::test(expect = "deadlock")]
    fn a_receive_nobody_serves() {
        let (_tx, rx) = mpsc::channel::<u8>();
        let _ = rx.recv();
    }

    #[kase::test(expect = "panic")]
    fn a_bounded_send_does_not_wait_for_the_receiver() {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let done = Arc::new(AtomicUsize::new(0));
        let d = done.clone();
        let t = thread::spawn(move || {
            tx.send(()).unwrap();
            d.store(1, Ordering::SeqCst);
        });
        assert_eq!(done.load(Ordering::SeqCst), 0);
        rx.recv().unwrap();
        t.join().unwrap();
    }

    #[kase::test]
    fn once_types_initialise_once() {
        static LAZY: LazyLock<AtomicUsize> = LazyLock::new(|| AtomicUsize::new(0));
        let once = Arc::new(Once::new());
        let cell = Arc::new(OnceLock::new());
        let (o, c) = (once.clone(), cell.clone());
        let t = thread::spawn(move || {
            o.call_once(|| {
                LAZY.fetch_add(1, Ordering::SeqCst);
            });
            *c.get_or_init(|| 1)
        });
        once.call_once(|| {
            LAZY.fetch_add(1, Ordering::SeqCst);
        });
        let mine = *cell.get_or_init(|| 2);
        assert_eq!(mine, t.join().unwrap());
        assert_eq!(LAZY.load(Ordering::SeqCst), 1);
    }
}

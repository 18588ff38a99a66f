//! `thread::scope`, `thread::Builder`, `thread::sleep` and `thread_local!`:
//! checked by kase inside a model, and behaving like std outside one.

use std::cell::{Cell, RefCell};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

use kase::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed, Ordering::SeqCst};
use kase::sync::{Arc, Condvar, Mutex};
use kase::{thread, Builder, FailureKind};

// ---------------------------------------------------------------- scope

#[test]
fn scoped_threads_increment_borrowed_data() {
    let report = Builder::new().explore(|| {
        let hits = AtomicUsize::new(0);
        let mut log = Vec::new();
        thread::scope(|s| {
            s.spawn(|| hits.fetch_add(1, SeqCst));
            s.spawn(|| hits.fetch_add(1, SeqCst));
            log.push("spawned"); // the spawner keeps using its own data
        });
        // Both threads were joined by the scope, whatever the interleaving.
        assert_eq!(hits.load(SeqCst), 2);
        assert_eq!(log, ["spawned"]);
    });
    assert!(report.failure().is_none(), "{report}");
    assert!(report.complete());
    // The two increments are dependent: both orders are explored.
    assert_eq!(report.executions(), 2, "{report}");
}

#[test]
fn scoped_lost_update_is_found() {
    let report = Builder::new().explore(|| {
        let n = AtomicUsize::new(0);
        thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| {
                    let v = n.load(SeqCst);
                    n.store(v + 1, SeqCst);
                });
            }
        });
        assert_eq!(n.load(SeqCst), 2, "lost update");
    });
    let failure = report.failure().expect("kase finds the lost update");
    assert_eq!(failure.kind(), FailureKind::Panic);
    assert!(
        failure.message().unwrap().contains("lost update"),
        "{failure}"
    );
}

#[test]
fn scoped_handles_join_values_and_report_finished() {
    let report = Builder::new().explore(|| {
        let data = [1, 2, 3];
        let total = thread::scope(|s| {
            let h = s.spawn(|| data.iter().sum::<i32>());
            let first = s.spawn(|| data[0]);
            // May or may not have finished yet: both are explored.
            let _ = first.is_finished();
            assert!(first.thread().name().is_none());
            let total = h.join().unwrap();
            assert_eq!(first.join().unwrap(), 1);
            total
        });
        assert_eq!(total, 6);
    });
    assert!(report.failure().is_none(), "{report}");
    assert!(report.executions() > 1, "is_finished is a choice: {report}");
}

#[test]
fn scope_joins_threads_spawned_by_scoped_threads() {
    let report = Builder::new().explore(|| {
        let flags = [AtomicBool::new(false), AtomicBool::new(false)];
        thread::scope(|s| {
            s.spawn(|| {
                flags[0].store(true, SeqCst);
                // A scoped thread may spawn more threads into the scope.
                s.spawn(|| flags[1].store(true, SeqCst));
            });
        });
        assert!(flags.iter().all(|f| f.load(SeqCst)));
    });
    assert!(report.failure().is_none(), "{report}");
}

#[test]
fn scoped_thread_panic_fails_the_execution_with_its_message() {
    let report = Builder::new().explore(|| {
        let x = AtomicUsize::new(0);
        thread::scope(|s| {
            s.spawn(|| {
                if x.load(SeqCst) == 0 {
                    panic!("boom in a scoped thread");
                }
            });
            x.store(1, SeqCst);
        });
    });
    let failure = report
        .failure()
        .expect("the panicking interleaving is found");
    assert_eq!(failure.kind(), FailureKind::Panic);
    assert_eq!(failure.message(), Some("boom in a scoped thread"));
}

#[test]
fn panic_in_the_scope_closure_waits_for_the_threads_then_propagates() {
    let report = Builder::new().explore(|| {
        let done = AtomicBool::new(false);
        let caught = catch_unwind(AssertUnwindSafe(|| {
            thread::scope(|s| {
                s.spawn(|| done.store(true, SeqCst));
                panic!("closure panicked");
            })
        }));
        // The scope joined its thread before resuming the panic.
        assert!(done.load(SeqCst));
        assert!(caught.is_err());
    });
    // The caught panic is no failure; the scope waited in every execution.
    assert!(report.failure().is_none(), "{report}");
}

/// The children of an execution stopped early are unwound before their
/// parents, so a scoped thread's destructors run while what it borrows from
/// its spawner's stack is still there.
#[test]
fn early_stop_unwinds_scoped_threads_before_their_spawner() {
    struct Log<'a>(&'a std::sync::Mutex<Vec<&'static str>>, &'static str);
    impl Drop for Log<'_> {
        fn drop(&mut self) {
            self.0.lock().unwrap().push(self.1);
        }
    }
    let order = std::sync::Mutex::new(Vec::new());
    let report = Builder::new().max_executions(1).explore(|| {
        order.lock().unwrap().clear();
        let m = Mutex::new(0);
        let _spawner = Log(&order, "spawner frame");
        thread::scope(|s| {
            s.spawn(|| {
                let _child = Log(&order, "scoped thread frame");
                let _g = m.lock().unwrap(); // suspended here, or later
                thread::yield_now();
            });
            s.spawn(|| panic!("stop the execution"));
        });
    });
    assert_eq!(report.failure().map(|f| f.kind()), Some(FailureKind::Panic));
    let order = order.into_inner().unwrap();
    assert_eq!(order, ["scoped thread frame", "spawner frame"]);
}

/// Unwinding a thread the execution stopped early is kase's doing, not a
/// panic of the program: a guard it drops does not poison its lock, so a
/// destructor that takes the lock again (a channel's `Drop` closing it and
/// waking its waiters) gets it. Before, the second `lock().unwrap()`
/// panicked during the unwind and the process aborted.
#[test]
fn early_stop_unwinding_a_critical_section_does_not_poison_its_lock() {
    struct Closer(Arc<Mutex<u32>>);
    impl Drop for Closer {
        fn drop(&mut self) {
            *self.0.lock().unwrap() += 1;
        }
    }
    // Peeking off: with it this model's first execution is discarded.
    let builder = Builder::new().peeking(false).max_executions(1);
    let report = builder.explore(|| {
        let m = Arc::new(Mutex::new(0));
        let inside = Arc::new(AtomicBool::new(false));
        let (m2, inside2) = (m.clone(), inside.clone());
        thread::spawn(move || {
            let _closer = Closer(m2.clone());
            let _g = m2.lock().unwrap();
            inside2.store(true, SeqCst);
            let never = AtomicBool::new(false);
            while !never.load(SeqCst) {
                thread::yield_now(); // holding the lock when main fails
            }
        });
        while !inside.load(SeqCst) {
            thread::yield_now();
        }
        panic!("stop the execution");
    });
    let failure = report.failure().expect("main's panic is found");
    assert_eq!(failure.kind(), FailureKind::Panic);
    assert_eq!(failure.message(), Some("stop the execution"));
}

/// A pool whose `Drop` stops its worker and joins it, in a model whose
/// executions often end early (RC11 with a condvar: the canonical
/// reduction cuts redundant ones short). The worker is torn down after the
/// pool's owner, so the join lets it run on and finish: before, it was
/// unwound first, the join got no value, and `unwrap` in the destructor
/// aborted the test process.
#[test]
fn early_stop_lets_a_joined_worker_finish_for_the_destructor() {
    struct Pool {
        stop: Arc<AtomicBool>,
        worker: Option<thread::JoinHandle<u32>>,
    }
    impl Drop for Pool {
        fn drop(&mut self) {
            self.stop.store(true, SeqCst);
            assert_eq!(self.worker.take().unwrap().join().unwrap(), 7);
        }
    }
    let report = Builder::new().explore(|| {
        let stop = Arc::new(AtomicBool::new(false));
        let x = Arc::new(AtomicUsize::new(0));
        let pair = Arc::new((Mutex::new(0), Condvar::new()));
        let (stop2, x2, pair2) = (stop.clone(), x.clone(), pair.clone());
        let _pool = Pool {
            stop,
            worker: Some(thread::spawn(move || {
                x2.store(1, Relaxed);
                *pair2.0.lock().unwrap() += 1;
                pair2.1.notify_one();
                x2.store(2, Relaxed);
                while !stop2.load(SeqCst) {
                    thread::yield_now();
                }
                7
            })),
        };
        x.load(Relaxed);
        drop(pair.0.lock().unwrap());
        x.load(Relaxed);
    });
    assert!(report.failure().is_none(), "{report}");
    assert!(
        report.sleep_set_blocked() > 0,
        "no execution ended early: {report}"
    );
}

/// A destructor that joins a worker that never finishes (nobody stops it)
/// while a failure tears the execution down: the join lets it run a
/// bounded number of steps, then unwinds it and returns no value, rather
/// than hang.
#[test]
fn early_stop_gives_up_on_a_joined_worker_that_never_finishes() {
    struct Owner(Option<thread::JoinHandle<()>>);
    impl Drop for Owner {
        fn drop(&mut self) {
            let joined = self.0.take().unwrap().join();
            if !std::thread::panicking() {
                joined.unwrap();
            }
        }
    }
    let report = Builder::new().max_executions(1).explore(|| {
        let never = Arc::new(AtomicBool::new(false));
        let never2 = never.clone();
        let _owner = Owner(Some(thread::spawn(move || {
            while !never2.load(SeqCst) {
                thread::yield_now();
            }
        })));
        // Its panic ends the execution while main waits here, owning the
        // worker; main is then torn down first.
        let _ = thread::spawn(|| panic!("stop the execution")).join();
    });
    let failure = report.failure().expect("main's panic is found");
    assert_eq!(failure.kind(), FailureKind::Panic);
}

/// The Rust book's thread pool: workers take jobs from a shared receiver;
/// the pool's `Drop` drops the sender and joins them. Another thread's
/// panic ends the execution while main owns the pool with a worker waiting
/// in `recv`: tearing down, the join lets the worker run on, its `recv`
/// sees the sender gone, and it returns; the panic is reported.
#[test]
fn a_failure_with_the_rust_book_thread_pool_alive_is_reported() {
    use kase::sync::mpsc;
    type Job = Box<dyn FnOnce() + Send>;
    struct Pool {
        sender: Option<mpsc::Sender<Job>>,
        workers: Vec<thread::JoinHandle<()>>,
        /// How many workers are in their loop.
        started: Arc<AtomicUsize>,
    }
    impl Pool {
        fn new(size: usize) -> Pool {
            let (sender, receiver) = mpsc::channel::<Job>();
            let receiver = Arc::new(Mutex::new(receiver));
            let started = Arc::new(AtomicUsize::new(0));
            let workers = (0..size)
                .map(|_| {
                    let (receiver, started) = (receiver.clone(), started.clone());
                    thread::spawn(move || {
                        started.fetch_add(1, SeqCst);
                        loop {
                            let job = receiver.lock().unwrap().recv();
                            match job {
                                Ok(job) => job(),
                                Err(_) => break,
                            }
                        }
                    })
                })
                .collect();
            Pool {
                sender: Some(sender),
                workers,
                started,
            }
        }
    }
    impl Drop for Pool {
        fn drop(&mut self) {
            drop(self.sender.take());
            for worker in self.workers.drain(..) {
                worker.join().unwrap();
            }
        }
    }
    let report = Builder::new().explore(|| {
        let pool = Pool::new(1);
        let ran = Arc::new(AtomicUsize::new(0));
        let ran2 = ran.clone();
        pool.sender
            .as_ref()
            .unwrap()
            .send(Box::new(move || {
                ran2.fetch_add(1, SeqCst);
            }))
            .unwrap();
        let _ = thread::spawn(|| panic!("stop the execution")).join();
    });
    let failure = report.failure().expect("the panic is found");
    assert_eq!(failure.kind(), FailureKind::Panic);
    assert_eq!(failure.message(), Some("stop the execution"));

    // And when main itself panics while it owns the pool, one worker
    // waiting in `recv` holding the receiver's lock and the other waiting
    // for that lock: unwinding, main joins them, and they run in its place
    // until both find the sender gone. The guard the first drops while main
    // unwinds does not poison the lock (the second would panic on it).
    let report = Builder::new().explore(|| {
        let pool = Pool::new(2);
        while pool.started.load(SeqCst) < 2 {
            thread::yield_now();
        }
        panic!("main's bug");
    });
    let failure = report.failure().expect("the panic is found");
    assert_eq!(failure.kind(), FailureKind::Panic, "{report}");
    assert_eq!(failure.message(), Some("main's bug"));
}

/// A thread panics while it owns a pool whose `Drop` stops and joins its
/// worker. It never switches away while it unwinds, so the join lets the
/// worker run on (its steps are the execution's) and the panic is what is
/// reported. Before, the join got no value and the destructor's `unwrap`
/// aborted the test process: the bug kase found was lost.
#[test]
fn a_panic_unwinding_through_a_pool_drop_is_reported() {
    struct Pool {
        stop: Arc<AtomicBool>,
        worker: Option<thread::JoinHandle<()>>,
    }
    impl Drop for Pool {
        fn drop(&mut self) {
            self.stop.store(true, SeqCst);
            self.worker.take().unwrap().join().unwrap();
        }
    }
    let report = Builder::new().explore(|| {
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = stop.clone();
        let _pool = Pool {
            stop,
            worker: Some(thread::spawn(move || {
                while !stop2.load(SeqCst) {
                    thread::yield_now();
                }
            })),
        };
        panic!("the bug");
    });
    let failure = report.failure().expect("the panic is found");
    assert_eq!(failure.kind(), FailureKind::Panic);
    assert_eq!(failure.message(), Some("the bug"));
}

/// A thread unwinding from a panic joins a thread that waits for a lock a
/// third thread holds until the joiner's destructor tells it to stop: the
/// other threads run in the joiner's place, the holder first, and the
/// panic is reported.
#[test]
fn a_panic_unwinding_into_a_join_lets_every_other_thread_run() {
    struct StopThenJoin(Arc<AtomicBool>, Option<thread::JoinHandle<()>>);
    impl Drop for StopThenJoin {
        fn drop(&mut self) {
            self.0.store(true, SeqCst);
            self.1.take().unwrap().join().unwrap();
        }
    }
    let report = Builder::new().explore(|| {
        let (m, stop, held) = (
            Arc::new(Mutex::new(())),
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicBool::new(false)),
        );
        let (m2, stop2, held2) = (m.clone(), stop.clone(), held.clone());
        let holder = thread::spawn(move || {
            let _g = m2.lock().unwrap();
            held2.store(true, SeqCst);
            while !stop2.load(SeqCst) {
                thread::yield_now();
            }
        });
        while !held.load(SeqCst) {
            thread::yield_now();
        }
        let waiter = thread::spawn(move || drop(m.lock().unwrap()));
        let _joins = StopThenJoin(stop, Some(waiter));
        let _holder = holder;
        panic!("the bug");
    });
    let failure = report.failure().expect("the panic is found");
    assert_eq!(failure.kind(), FailureKind::Panic, "{report}");
    assert_eq!(failure.message(), Some("the bug"));
}

/// Not only joins: a destructor that takes a lock another thread holds
/// while its thread unwinds waits in place too, the other threads running
/// until the holder lets go. Before, that was reported as a deadlock and
/// the lock was granted to both.
#[test]
fn a_panic_unwinding_into_a_held_lock_waits_for_its_holder() {
    struct StopThenLock(Arc<AtomicBool>, Arc<Mutex<u32>>);
    impl Drop for StopThenLock {
        fn drop(&mut self) {
            self.0.store(true, SeqCst);
            *self.1.lock().unwrap() += 1;
        }
    }
    let report = Builder::new().explore(|| {
        let (m, stop, held) = (
            Arc::new(Mutex::new(0)),
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicBool::new(false)),
        );
        let (m2, stop2, held2) = (m.clone(), stop.clone(), held.clone());
        thread::spawn(move || {
            let _g = m2.lock().unwrap();
            held2.store(true, SeqCst);
            while !stop2.load(SeqCst) {
                thread::yield_now();
            }
        });
        while !held.load(SeqCst) {
            thread::yield_now();
        }
        let _locks = StopThenLock(stop, m);
        panic!("the bug");
    });
    let failure = report.failure().expect("the panic is found");
    assert_eq!(failure.kind(), FailureKind::Panic, "{report}");
    assert_eq!(failure.message(), Some("the bug"));
}

/// The same with a worker nobody stops: the program hangs in the
/// destructor's join, a deadlock kase reports instead of aborting.
#[test]
fn a_panic_unwinding_into_a_join_that_never_returns_is_a_deadlock() {
    struct Owner(Option<thread::JoinHandle<()>>);
    impl Drop for Owner {
        fn drop(&mut self) {
            let joined = self.0.take().unwrap().join();
            if !std::thread::panicking() {
                joined.unwrap();
            }
        }
    }
    let report = Builder::new().explore(|| {
        let never = Arc::new(AtomicBool::new(false));
        let never2 = never.clone();
        let _owner = Owner(Some(thread::spawn(move || {
            while !never2.load(SeqCst) {
                thread::yield_now();
            }
        })));
        thread::yield_now();
        panic!("the bug");
    });
    let failure = report.failure().expect("the hang is found");
    assert_eq!(failure.kind(), FailureKind::Deadlock, "{report}");
}

#[test]
fn scope_outside_a_model_is_std() {
    let mut counter = 0;
    let hits = std::sync::atomic::AtomicUsize::new(0);
    let got = thread::scope(|s| {
        let h = s.spawn(|| {
            hits.fetch_add(1, SeqCst);
            7
        });
        s.spawn(|| hits.fetch_add(1, SeqCst));
        counter += 1;
        h.join().unwrap()
    });
    assert_eq!((got, counter, hits.load(SeqCst)), (7, 1, 2));

    // A joined panicking thread: `join` is `Err`, the scope is fine.
    let joined = thread::scope(|s| s.spawn(|| panic!("joined")).join().is_err());
    assert!(joined);
    // An un-joined one: the scope panics after joining everything.
    let finished = AtomicBool::new(false);
    let err = catch_unwind(AssertUnwindSafe(|| {
        thread::scope(|s| {
            s.spawn(|| panic!("not joined"));
            s.spawn(|| {
                std::thread::sleep(Duration::from_millis(20));
                finished.store(true, SeqCst);
            });
        })
    }))
    .unwrap_err();
    assert_eq!(
        err.downcast_ref::<&str>(),
        Some(&"a scoped thread panicked")
    );
    assert!(finished.load(SeqCst));

    let handle_finished = thread::scope(|s| {
        let h = s.spawn(|| ());
        while !h.is_finished() {
            std::thread::yield_now();
        }
        h.thread().id() != thread::current().id()
    });
    assert!(handle_finished);
}

// -------------------------------------------------------------- Builder

#[test]
fn builder_name_is_the_model_threads_name() {
    let report = Builder::new().explore(|| {
        let h = thread::Builder::new()
            .name("worker".to_owned())
            .stack_size(64 * 1024)
            .spawn(|| thread::current().name().map(str::to_owned))
            .unwrap();
        assert_eq!(h.thread().name(), Some("worker"));
        assert_eq!(h.join().unwrap().as_deref(), Some("worker"));
        assert_eq!(thread::current().name(), Some("main"));
        let mut seen = None;
        thread::scope(|s| {
            let h = thread::Builder::new()
                .name("scoped worker".to_owned())
                .spawn_scoped(s, || seen = thread::current().name().map(str::to_owned))
                .unwrap();
            assert_eq!(h.thread().name(), Some("scoped worker"));
        });
        assert_eq!(seen.as_deref(), Some("scoped worker"));
    });
    assert!(report.failure().is_none(), "{report}");
}

#[test]
fn builder_name_shows_in_the_failure_report() {
    let report = Builder::new().explore(|| {
        let flag = Arc::new(AtomicBool::new(false));
        let f = flag.clone();
        let h = thread::Builder::new()
            .name("flag-checker".to_owned())
            .spawn(move || assert!(f.load(SeqCst), "flag not set yet"))
            .unwrap();
        flag.store(true, SeqCst);
        h.join().unwrap();
    });
    let failure = report.failure().expect("the early check is found");
    let text = failure.to_string();
    assert!(text.contains("flag-checker"), "{text}");
}

#[test]
#[should_panic(expected = "thread name may not contain interior null bytes")]
fn builder_rejects_nul_in_names_in_a_model() {
    kase::model(|| {
        let _ = thread::Builder::new().name("a\0b".to_owned()).spawn(|| ());
    });
}

#[test]
fn builder_outside_a_model_is_std() {
    let h = thread::Builder::new()
        .name("real worker".to_owned())
        .stack_size(256 * 1024)
        .spawn(|| std::thread::current().name().map(str::to_owned))
        .unwrap();
    assert_eq!(h.thread().name(), Some("real worker"));
    assert_eq!(h.join().unwrap().as_deref(), Some("real worker"));
    let mut x = 0;
    thread::scope(|s| {
        let h = thread::Builder::new()
            .name("real scoped".to_owned())
            .spawn_scoped(s, || {
                x += 1;
                thread::current().name().map(str::to_owned)
            })
            .unwrap();
        assert_eq!(h.join().unwrap().as_deref(), Some("real scoped"));
    });
    assert_eq!(x, 1);
    assert!(thread::available_parallelism().unwrap().get() >= 1);
}

// ---------------------------------------------------------------- sleep

#[test]
fn sleep_does_not_order_threads_in_a_model() {
    let report = Builder::new().explore(|| {
        let done = Arc::new(AtomicBool::new(false));
        let d = done.clone();
        let t = thread::spawn(move || {
            thread::sleep(Duration::from_millis(10));
            d.store(true, SeqCst);
        });
        // "A second is surely enough": time does not pass in a model.
        thread::sleep(Duration::from_secs(1));
        assert!(done.load(SeqCst), "slept, but the thread has not run");
        t.join().unwrap();
    });
    let failure = report.failure().expect("sleeping does not synchronise");
    assert_eq!(failure.message(), Some("slept, but the thread has not run"));
}

#[test]
fn sleep_is_a_scheduling_point() {
    // Between the two stores of the spawned thread, nothing but the sleep;
    // `Exhaustive` explores every interleaving of scheduling points, so a
    // load can land between them only if the sleep is one.
    let report = Builder::new()
        .strategy(kase::Strategy::Exhaustive)
        .explore(|| {
            let x = Arc::new(AtomicUsize::new(0));
            let x2 = x.clone();
            let t = thread::spawn(move || {
                x2.store(1, SeqCst);
                thread::sleep(Duration::from_millis(1));
                x2.store(2, SeqCst);
            });
            let seen = x.load(SeqCst);
            t.join().unwrap();
            assert_ne!(seen, 1, "saw the value between the sleep's two sides");
        });
    let failure = report.failure().expect("another thread runs during sleep");
    assert!(failure.message().unwrap().contains("between"), "{failure}");
}

#[test]
fn sleep_outside_a_model_sleeps() {
    let start = Instant::now();
    thread::sleep(Duration::from_millis(15));
    assert!(start.elapsed() >= Duration::from_millis(15));
}

// -------------------------------------------------------- thread_local!

#[test]
fn thread_local_is_per_model_thread_and_lazy() {
    static INITS: AtomicUsize = AtomicUsize::new(0);
    kase::thread_local! {
        static ID: Cell<u32> = {
            INITS.fetch_add(1, SeqCst);
            Cell::new(0)
        };
    }
    let report = Builder::new().explore(|| {
        ID.set(1); // initialises without running the initialiser
        let t = thread::spawn(|| {
            let first = ID.get(); // initialised here, for this thread only
            ID.set(2);
            (first, ID.get())
        });
        let u = thread::spawn(|| ID.replace(3));
        assert_eq!(t.join().unwrap(), (0, 2));
        assert_eq!(u.join().unwrap(), 0);
        assert_eq!(ID.get(), 1);
        // Two lazy initialisations in this execution (the statics restart).
        assert_eq!(INITS.load(SeqCst), 2);
    });
    assert!(report.failure().is_none(), "{report}");
}

#[test]
fn thread_local_destructor_runs_at_thread_exit_and_is_seen_by_join() {
    static DROPPED: AtomicUsize = AtomicUsize::new(0);
    struct Noisy(usize);
    impl Drop for Noisy {
        fn drop(&mut self) {
            // A visible operation in the destructor, in the exiting thread.
            DROPPED.fetch_add(self.0, SeqCst);
        }
    }
    kase::thread_local!(static NOISY: RefCell<Noisy> = RefCell::new(Noisy(1)));
    let report = Builder::new().explore(|| {
        let t = thread::spawn(|| NOISY.with_borrow_mut(|n| n.0 = 10));
        let u = thread::spawn(|| NOISY.with_borrow(|n| n.0));
        let early = DROPPED.load(SeqCst); // 0, 1, 10 or 11: all explored
        assert!([0, 1, 10, 11].contains(&early));
        assert_eq!(u.join().unwrap(), 1);
        t.join().unwrap();
        // Both destructors ran before their thread's exit, so join sees them.
        assert_eq!(DROPPED.load(SeqCst), 11);
        NOISY.with(|_| ()); // main's own value: dropped when main exits
        assert_eq!(DROPPED.load(SeqCst), 11);
    });
    assert!(report.failure().is_none(), "{report}");
    assert!(report.executions() >= 4, "{report}");
}

#[test]
fn thread_local_destructor_may_fail_the_execution() {
    struct Checks;
    impl Drop for Checks {
        fn drop(&mut self) {
            panic!("thread-local destructor panicked");
        }
    }
    kase::thread_local!(static CHECKS: Checks = const { Checks });
    let report = Builder::new().explore(|| {
        thread::spawn(|| CHECKS.with(|_| ())).join().unwrap();
    });
    let failure = report
        .failure()
        .expect("the destructor's panic is a failure");
    assert_eq!(failure.message(), Some("thread-local destructor panicked"));
}

#[test]
fn thread_local_in_its_own_destructor_is_an_access_error() {
    static OUTCOME: AtomicUsize = AtomicUsize::new(0);
    struct Reentrant;
    impl Drop for Reentrant {
        fn drop(&mut self) {
            let v = if SELF.try_with(|_| ()).is_err() { 1 } else { 2 };
            OUTCOME.store(v, SeqCst);
        }
    }
    kase::thread_local!(static SELF: Reentrant = const { Reentrant });
    let report = Builder::new().explore(|| {
        thread::spawn(|| SELF.with(|_| ())).join().unwrap();
        assert_eq!(OUTCOME.load(SeqCst), 1);
    });
    assert!(report.failure().is_none(), "{report}");
}

#[test]
fn thread_local_outside_a_model_is_std() {
    kase::thread_local! {
        static COUNT: Cell<u32> = const { Cell::new(0) };
        static NAMES: RefCell<Vec<u32>> = RefCell::new(Vec::new());
    }
    static DROPS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    struct D;
    impl Drop for D {
        fn drop(&mut self) {
            DROPS.fetch_add(1, SeqCst);
        }
    }
    kase::thread_local!(static DROPPER: D = D);
    COUNT.set(5);
    NAMES.with_borrow_mut(|n| n.push(1));
    let other = std::thread::spawn(|| {
        DROPPER.with(|_| ());
        (COUNT.replace(9), NAMES.take())
    })
    .join()
    .unwrap();
    assert_eq!(other, (0, vec![]));
    assert_eq!(DROPS.load(SeqCst), 1, "std runs the destructor at exit");
    assert_eq!(COUNT.get(), 5);
    assert_eq!(NAMES.with_borrow(Vec::clone), [1]);
    assert_eq!(COUNT.take(), 5);
    NAMES.set(vec![2]);
    assert_eq!(NAMES.replace(vec![]), [2]);
    assert_eq!(COUNT.try_with(Cell::get), Ok(0));
}

/// `#[kase::test]` rewrites std's `thread_local!` onto kase's: each model
/// thread has its own value (with std's, all model threads would share the
/// one OS thread's value and the assertion below would fail).
#[kase::test]
fn attribute_rewrites_thread_local() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    thread_local!(static MINE: Cell<usize> = const { Cell::new(0) });
    let sum = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (1..=2)
        .map(|i| {
            let sum = sum.clone();
            std::thread::spawn(move || {
                MINE.set(MINE.get() + i);
                sum.fetch_add(MINE.get(), Ordering::SeqCst);
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(sum.load(Ordering::SeqCst), 3);
    assert_eq!(MINE.get(), 0);
}

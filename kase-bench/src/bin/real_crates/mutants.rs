//! Injected bugs (`--mutants`): each mutant is a small edit of a crate's
//! published source — an ordering weakened, a fence dropped, two stores
//! swapped, a wakeup or a free left out — applied to both copies of the
//! crate; the crate's own loom suite then runs under each tool, and a tool
//! finds the bug if a test that passes on the unchanged copy fails (or no
//! longer finishes). A few entries are not bugs but variants that isolate
//! one: oneshot with the open use-after-free #87 fixed, and with #73
//! restored on top of that fix.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use kase_bench::real_crates::{apply_edit, TestOutcome};

use super::{cell, run_suite, Run, Suite, VARIANTS};

/// What a mutant does to the crate.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An ordering that publishes data is weakened.
    Weakened,
    /// A fence is removed.
    DroppedFence,
    /// Two stores are exchanged, so a flag is published before its data.
    SwappedStores,
    /// A wakeup is removed.
    LostWakeup,
    /// A free is removed: the allocation leaks.
    MissingFree,
    /// Not a bug: a fix of a known bug, so that a test that shows it passes.
    Fix,
    /// A known bug put back (on top of other fixes, to show it alone).
    Restored,
}

impl Kind {
    fn label(self) -> &'static str {
        match self {
            Kind::Weakened => "ordering weakened",
            Kind::DroppedFence => "fence dropped",
            Kind::SwappedStores => "stores swapped",
            Kind::LostWakeup => "lost wakeup",
            Kind::MissingFree => "missing free",
            Kind::Fix => "fix of a known bug",
            Kind::Restored => "known bug restored",
        }
    }
}

/// One text replacement in one file of the crate. `from` is given line by
/// line (indentation included) and must occur exactly once in the file.
pub struct Edit {
    pub file: &'static str,
    pub from: &'static [&'static str],
    pub to: &'static [&'static str],
}

/// One injected bug (or isolating variant) of one crate.
pub struct Mutant {
    /// The suite's crate name.
    pub krate: &'static str,
    pub name: &'static str,
    pub kind: Kind,
    pub edits: &'static [Edit],
    /// What the change breaks (or shows), and which test should see it.
    pub about: &'static str,
}

/// Builds and runs every mutant of `suites` under both tools, against
/// each tool's run of the unchanged copy. The Markdown table.
pub fn run(suites: &[&Suite], work: &Path, timeout: Duration) -> String {
    let mut results = Vec::new();
    for suite in suites {
        let mutants: Vec<&Mutant> = MUTANTS.iter().filter(|m| m.krate == suite.name).collect();
        if mutants.is_empty() {
            continue;
        }
        let mut baseline = BTreeMap::new();
        for variant in VARIANTS {
            eprintln!(
                "== {} {} unchanged, under {variant}",
                suite.name, suite.version
            );
            baseline.insert(variant, run_suite(suite, variant, work, timeout));
        }
        for mutant in mutants {
            let mut verdicts = BTreeMap::new();
            for variant in VARIANTS {
                eprintln!("== {} mutant {} under {variant}", suite.name, mutant.name);
                let dir = work.join(format!("{}-{variant}", suite.name));
                let originals = apply(mutant, &dir);
                let run = run_suite(suite, variant, work, timeout);
                for (path, text) in originals {
                    fs::write(path, text).expect("restore a mutated file");
                }
                verdicts.insert(variant, verdict(&run, &baseline[variant].tests));
            }
            results.push((mutant, verdicts));
        }
    }
    table(&results)
}

/// Applies `mutant`'s edits in the copy `dir`; the original text of each
/// file it changed, to be written back.
fn apply(mutant: &Mutant, dir: &Path) -> Vec<(PathBuf, String)> {
    let mut originals: Vec<(PathBuf, String)> = Vec::new();
    for edit in mutant.edits {
        let path = dir.join(edit.file);
        let text = fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: read {}: {e}", mutant.name, path.display()));
        if !originals.iter().any(|(p, _)| *p == path) {
            originals.push((path.clone(), text.clone()));
        }
        let changed = apply_edit(&text, &edit.from.join("\n"), &edit.to.join("\n"))
            .unwrap_or_else(|e| panic!("mutant {} of {}: {e}", mutant.name, edit.file));
        fs::write(&path, changed).expect("write a mutated file");
    }
    originals
}

/// How a mutated run differs from the unchanged one, for one tool.
fn verdict(run: &Run, baseline: &BTreeMap<String, TestOutcome>) -> String {
    if let Err(e) = &run.built {
        return format!("does not compile: {}", cell(e));
    }
    let ok = |t: &TestOutcome| t.passed == Some(true) || t.ignored;
    let was_ok = |name: &str| baseline.get(name).is_some_and(ok);
    let found: Vec<(&String, &TestOutcome)> = run
        .tests
        .iter()
        .filter(|(name, t)| !ok(t) && was_ok(name))
        .collect();
    let fixed: Vec<&String> = run
        .tests
        .iter()
        .filter(|(name, t)| ok(t) && baseline.get(*name).is_some_and(|b| !ok(b)))
        .map(|(name, _)| name)
        .collect();
    let changed: Vec<(&String, &TestOutcome)> = run
        .tests
        .iter()
        .filter(|(name, t)| {
            !ok(t)
                && baseline
                    .get(*name)
                    .is_some_and(|b| !ok(b) && (b.message != t.message || b.sites != t.sites))
        })
        .collect();
    let mut parts = Vec::new();
    if !found.is_empty() {
        let names: Vec<String> = found.iter().map(|(n, t)| test_cell(n, t)).collect();
        parts.push(format!(
            "**found** by {} of {} tests: {}; {}",
            found.len(),
            run.tests.len(),
            names.join(", "),
            failure_cell(found[0].1)
        ));
    }
    for (name, t) in changed {
        parts.push(format!(
            "{} fails differently: {}",
            test_cell(name, t),
            failure_cell(t)
        ));
    }
    if !fixed.is_empty() {
        let names: Vec<String> = fixed.iter().map(|n| format!("`{n}`")).collect();
        parts.push(format!(
            "{} now pass{}",
            names.join(", "),
            s(fixed.len(), "es", "")
        ));
    }
    if parts.is_empty() {
        let failing = run.tests.values().filter(|t| !ok(t)).count();
        parts.push(if failing == 0 {
            format!("not found: all {} tests pass", run.tests.len())
        } else {
            format!("not found: no test fails that passed unchanged ({failing} fail as unchanged)")
        });
    }
    parts.join("; ")
}

fn s(n: usize, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 {
        one
    } else {
        many
    }
}

/// "`name` (3 executions)" or "`name` (killed)".
fn test_cell(name: &str, t: &TestOutcome) -> String {
    match (t.passed, t.executions) {
        (None, _) => format!("`{name}` (unfinished)"),
        (_, Some(1)) => format!("`{name}` (1 execution)"),
        (_, Some(n)) => format!("`{name}` ({n} executions)"),
        (_, None) => format!("`{name}`"),
    }
}

/// A failure's first message line and, for kase's reports of a free, the
/// sites it names.
fn failure_cell(t: &TestOutcome) -> String {
    let mut out = cell(t.message.as_deref().unwrap_or("no message"));
    if !t.sites.is_empty() {
        let _ = write!(out, " — {}", cell(&t.sites.join("; ")));
    }
    out
}

/// Each mutant with its verdict under each tool.
fn table(results: &[(&Mutant, BTreeMap<&str, String>)]) -> String {
    let mut md = String::from("| crate | mutant | kind | kase | loom |\n|---|---|---|---|---|\n");
    for (mutant, verdicts) in results {
        let _ = writeln!(
            md,
            "| {} | `{}` | {} | {} | {} |",
            mutant.krate,
            mutant.name,
            mutant.kind.label(),
            verdicts["kase"],
            verdicts["loom"],
        );
    }
    md.push_str("\nThe edits, and what each should break:\n\n");
    for (mutant, _) in results {
        let _ = writeln!(md, "- {} `{}`: {}", mutant.krate, mutant.name, mutant.about);
        for edit in mutant.edits {
            let _ = writeln!(
                md,
                "  - `{}`: `{}` → `{}`",
                edit.file,
                cell(&squeeze(edit.from)),
                cell(&squeeze(edit.to))
            );
        }
    }
    md
}

/// An edit's lines on one line, indentation collapsed.
fn squeeze(lines: &[&str]) -> String {
    let joined: Vec<&str> = lines
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .collect();
    if joined.is_empty() {
        "(nothing)".to_owned()
    } else {
        joined.join(" ").replace('`', "'")
    }
}

/// The mutants, by crate. Each `from` was checked against the pinned
/// version; `apply_edit` refuses one that does not occur exactly once.
pub const MUTANTS: &[Mutant] = &[
    Mutant {
        krate: "concurrent-queue",
        name: "bounded-push-stamp-relaxed",
        kind: Kind::Weakened,
        edits: &[Edit {
            file: "src/bounded.rs",
            from: &["                        slot.stamp.store(tail + 1, Ordering::Release);"],
            to: &["                        slot.stamp.store(tail + 1, Ordering::Relaxed);"],
        }],
        about: "spsc, spsc_force (2nd model: `ConcurrentQueue::bounded(2)`) — the consumer's `stamp.load(Acquire)` in `Bounded::pop` no longer synchronizes with the producer's slot write, so the consumer's `slot.value.with_mut` read is a loom \"Causality violation\" on the slot UnsafeCell (reached whenever the receiver pops a value pushed after its last condvar/mutex sync with the sender, e.g. sender preempted between `push` and `push_event.signal()`).",
    },
    Mutant {
        krate: "concurrent-queue",
        name: "single-push-unlock-relaxed",
        kind: Kind::Weakened,
        edits: &[Edit {
            file: "src/single.rs",
            from: &["            self.state.fetch_and(!LOCKED, Ordering::Release);", "            Ok(())"],
            to: &["            self.state.fetch_and(!LOCKED, Ordering::Relaxed);", "            Ok(())"],
        }],
        about: "spsc (1st model: `ConcurrentQueue::bounded(1)` = `Single`; spsc_force uses `Single::force_push`, whose own unlock is untouched) — the unlocking `fetch_and` in `Single::push` is the only release after the slot write (the locking CAS precedes the write, and loom's release-sequence rule only carries the CAS's older clock), so `Single::pop`'s CAS acquires nothing covering the write and its `slot.with_mut` read is a loom causality violation.",
    },
    Mutant {
        krate: "concurrent-queue",
        name: "unbounded-write-flag-relaxed",
        kind: Kind::Weakened,
        edits: &[Edit {
            file: "src/unbounded.rs",
            from: &["                    slot.state.fetch_or(WRITE, Ordering::Release);"],
            to: &["                    slot.state.fetch_or(WRITE, Ordering::Relaxed);"],
        }],
        about: "spsc, spsc_force (3rd model: `ConcurrentQueue::unbounded()`) — `Slot::wait_write` (Acquire load of `state`) no longer synchronizes with the value write (the slot's `state` has no earlier release store), so `Unbounded::pop`'s `slot.value.with_mut` read is a loom causality violation.",
    },
    Mutant {
        krate: "concurrent-queue",
        name: "bounded-push-stamp-before-value",
        kind: Kind::SwappedStores,
        edits: &[Edit {
            file: "src/bounded.rs",
            from: &["                        slot.value.with_mut(|slot| unsafe {", "                            slot.write(MaybeUninit::new(value));", "                        });", "                        slot.stamp.store(tail + 1, Ordering::Release);"],
            to: &["                        slot.stamp.store(tail + 1, Ordering::Release);", "                        slot.value.with_mut(|slot| unsafe {", "                            slot.write(MaybeUninit::new(value));", "                        });"],
        }],
        about: "spsc, spsc_force (bounded(2) model) — the stamp (the \"slot is full\" flag) is published before the value is written; the consumer that observes the stamp reads the slot with a clock that does not cover the (later) producer write, so loom reports a causality violation on the slot UnsafeCell (loom checks by vector clock, so this fires even though the producer's write runs before the next scheduling point).",
    },
    Mutant {
        krate: "concurrent-queue",
        name: "unbounded-write-flag-before-value",
        kind: Kind::SwappedStores,
        edits: &[Edit {
            file: "src/unbounded.rs",
            from: &["                    slot.value.with_mut(|slot| {", "                        slot.write(MaybeUninit::new(value));", "                    });", "                    slot.state.fetch_or(WRITE, Ordering::Release);"],
            to: &["                    slot.state.fetch_or(WRITE, Ordering::Release);", "                    slot.value.with_mut(|slot| {", "                        slot.write(MaybeUninit::new(value));", "                    });"],
        }],
        about: "spsc, spsc_force (unbounded model) — WRITE is set before the value is written, so the popper passing `wait_write` reads the slot without happens-before to the write: loom causality violation on `slot.value`.",
    },
    Mutant {
        krate: "concurrent-queue",
        name: "bounded-pop-dropped-fence",
        kind: Kind::DroppedFence,
        edits: &[Edit {
            file: "src/bounded.rs",
            from: &["                crate::full_fence();", "                let tail = self.tail.load(Ordering::Relaxed);"],
            to: &["                let tail = self.tail.load(Ordering::Relaxed);"],
        }],
        about: "(probably none) — the `SeqCst` fence (loom cfg: `atomic::fence(SeqCst)`) is reached in every model of spsc/spsc_force whenever `pop` finds an empty slot, but it only makes the empty-queue check linearizable; no UnsafeCell access depends on it, and a stale `tail` can only produce a spurious `Empty`, which the test's mutex/condvar `Event` recovers from (a `signal` sets a sticky bit under the mutex). Keep only as a negative control.",
    },
    Mutant {
        krate: "concurrent-queue",
        name: "unbounded-drop-leaks-last-block",
        kind: Kind::MissingFree,
        edits: &[Edit {
            file: "src/unbounded.rs",
            from: &["                        if !block.is_null() {", "                            drop(Box::from_raw(*block));", "                        }"],
            to: &["                        if !block.is_null() {", "                            let _ = *block;", "                        }"],
        }],
        about: "reached by the unbounded model of spsc/spsc_force (the queue is dropped with one block allocated); blocks are plain `alloc::boxed::Box`, NOT `loom::alloc`/`loom::sync::Arc`, so loom's leak check never sees it; kase-loom tracks the global allocator (feature `std-heap`, on by default) and reports the block, which holds the slots' atomics.",
    },
    Mutant {
        krate: "parking",
        name: "unpark-no-notify",
        kind: Kind::LostWakeup,
        edits: &[Edit {
            file: "src/lib.rs",
            from: &["        self.cvar.notify_one();"],
            to: &["        // mutant: notify_one removed"],
        }],
        about: "smoke, yield_then_unpark — when the parker is already in `cvar.wait` (state PARKED), `unpark` swaps to NOTIFIED and takes/releases the lock but never signals the condvar; loom's Condvar has no spurious wakeups, so the parked thread stays blocked forever and loom reports \"deadlock\".",
    },
    Mutant {
        krate: "parking",
        name: "unpark-no-lock-handshake",
        kind: Kind::LostWakeup,
        edits: &[Edit {
            file: "src/lib.rs",
            from: &["        drop(self.lock.lock().unwrap());"],
            to: &["        // mutant: lock handshake removed"],
        }],
        about: "smoke, yield_then_unpark — check-then-park race: the parker does the CAS EMPTY→PARKED under the lock, then loom can switch at `Condvar::wait`'s branch point before the thread is registered as a waiter; the unparker no longer waits for the lock, so its `notify_one` finds no waiter and is lost, then the parker waits forever → loom \"deadlock\" (needs ≤2 preemptions).",
    },
    Mutant {
        krate: "parking",
        name: "unpark-notify-before-lock",
        kind: Kind::SwappedStores,
        edits: &[Edit {
            file: "src/lib.rs",
            from: &["        drop(self.lock.lock().unwrap());", "        self.cvar.notify_one();"],
            to: &["        self.cvar.notify_one();", "        drop(self.lock.lock().unwrap());"],
        }],
        about: "smoke, yield_then_unpark — same lost-wakeup window as above: the notify is issued before the lock handshake, so it can happen after the parker published PARKED but before it is a condvar waiter → loom \"deadlock\". (parking has no data to publish, so the \"swapped\" mutant is the lock/notify pair.)",
    },
    Mutant {
        krate: "parking",
        name: "unpark-swap-relaxed",
        kind: Kind::Weakened,
        edits: &[Edit {
            file: "src/lib.rs",
            from: &["        match self.state.swap(NOTIFIED, SeqCst) {"],
            to: &["        match self.state.swap(NOTIFIED, std::sync::atomic::Ordering::Relaxed) {"],
        }],
        about: "(none expected) — reached by both tests, but the `state` atomic guards no data (all accesses are RMWs on one location, and the condvar handoff goes through the mutex), so weakening it changes nothing the tests observe. Negative control only.",
    },
    Mutant {
        krate: "sharded-slab",
        name: "transfer-stack-push-relaxed",
        kind: Kind::Weakened,
        edits: &[Edit {
            file: "src/page/stack.rs",
            from: &["                .compare_exchange(next, new_head, Ordering::Release, Ordering::Relaxed)"],
            to: &["                .compare_exchange(next, new_head, Ordering::Relaxed, Ordering::Relaxed)"],
        }],
        about: "page::stack::test::transfer_stack (and tests::loom_slab::concurrent_remove_remote_and_reuse, take_remote_and_reuse) — the pusher writes the UnsafeCell (`causalities[i]` in the test, `slot.next` / the taken item in the slab) before the CAS; `pop_all`'s Acquire swap no longer synchronizes with it, so the popper's `with` read is a loom causality violation (transfer_stack's cell even carries the message \"UnsafeCell write must happen-before index is pushed\").",
    },
    Mutant {
        krate: "sharded-slab",
        name: "initguard-release-acquire-only",
        kind: Kind::Weakened,
        edits: &[Edit {
            file: "src/page/slot.rs",
            from: &["            curr_lifecycle,", "            new_lifecycle,", "            Ordering::AcqRel,"],
            to: &["            curr_lifecycle,", "            new_lifecycle,", "            Ordering::Acquire,"],
        }],
        about: "tests::loom_slab::vacant_entry, vacant_entry_2 — `VacantEntry::insert` writes the item through `InitGuard::value_mut` and publishes it with this CAS (REMOVING→PRESENT); with AcqRel→Acquire the concurrent reader `t1: slab2.get(key)` (whose CAS reads this store; the earlier store is only the initial value) reads `slot.value()` without happens-before to the write → loom \"Causality violation: Concurrent read and write accesses\". This is the first CAS in `InitGuard::release2` (12-space indent; the second one is indented 16).",
    },
    Mutant {
        krate: "sharded-slab",
        name: "release-with-frees-slot-before-take",
        kind: Kind::SwappedStores,
        edits: &[Edit {
            file: "src/page/slot.rs",
            from: &["                        let value = self", "                            .item", "                            .with_mut(|item| mutator(Some(unsafe { &mut *item })));", "                        free.push(offset, self);"],
            to: &["                        free.push(offset, self);", "                        let value = self", "                            .item", "                            .with_mut(|item| mutator(Some(unsafe { &mut *item })));"],
        }],
        about: "tests::loom_slab::concurrent_remove_remote_and_reuse (every execution), take_remote_and_reuse (when the slot is reused) — the slot is pushed onto the (remote) free list, i.e. published as reusable, before its item is taken; the owner thread pops it (`pop_all`, Acquire) and re-initializes the item, and its `with`/`with_mut` on `slot.item` does not happen-after the remover's later `with_mut` → loom causality violation (concurrent write accesses on the item UnsafeCell).",
    },
    Mutant {
        krate: "sharded-slab",
        name: "array-drop-forgets-shard",
        kind: Kind::MissingFree,
        edits: &[Edit {
            file: "src/shard.rs",
            from: &["            drop(shard)"],
            to: &["            core::mem::forget(shard)"],
        }],
        about: "every loom_slab / loom_pool test that inserts (e.g. take_local, custom_page_sz) — shards are allocated as `Box<alloc::Track<Shard>>`; under `cfg(all(loom, test))` `crate::sync::alloc::Track` wraps `loom::alloc::Track`, so forgetting the box leaks a TRACKED allocation and loom panics \"Allocation leaked\" when the model execution ends (the slab is dropped inside the model closure).",
    },
    Mutant {
        krate: "sharded-slab",
        name: "entry-drop-skips-deferred-clear",
        kind: Kind::LostWakeup,
        edits: &[Edit {
            file: "src/lib.rs",
            from: &["            self.shard.clear_after_release(self.key)"],
            to: &["            let _ = (self.shard, self.key);"],
        }],
        about: "tests::loom_slab::remove_local — `slab.remove(idx)` while a guard is held only marks the slot and hands the removal to the last guard; when `drop(guard)` (release returns `true`) no longer performs it, the value is never dropped and `dropped.assert_dropped()` panics \"value should have been dropped!\" (every execution). There is no park/notify/wake in sharded-slab, so this \"lost notification\" is the closest analog.",
    },
    Mutant {
        krate: "sharded-slab",
        name: "clear-after-release-dropped-fence",
        kind: Kind::DroppedFence,
        edits: &[Edit {
            file: "src/shard.rs",
            from: &["        crate::sync::atomic::fence(crate::sync::atomic::Ordering::Acquire);"],
            to: &["        // mutant: fence(Acquire) removed"],
        }],
        about: "(probably none) — reached by remove_local, owned_entry_* and loom_pool tests, but every caller reaches `clear_after_release` only after a successful `compare_exchange(.., AcqRel, ..)` in `Slot::release` / `InitGuard::release2`, whose acquire half already provides what the fence provides. Negative control.",
    },
    Mutant {
        krate: "event-listener",
        name: "event-drop-leaks-inner-arc",
        kind: Kind::MissingFree,
        edits: &[Edit {
            file: "src/lib.rs",
            from: &["                    drop(Arc::from_raw(inner));"],
            to: &["                    let _ = inner;"],
        }],
        about: "all 9 tests (e.g. notify) — every test calls `event.listen()`, which lazily creates `Inner` with `Arc::new` (under `cfg(loom)` this is `loom::sync::Arc`); without `Event::drop` releasing the raw reference the refcount never reaches 0 and loom panics \"Arc leaked\" at the end of the execution. TRACKED by loom (loom::sync::Arc).",
    },
    Mutant {
        krate: "event-listener",
        name: "notify-skips-wake",
        kind: Kind::LostWakeup,
        edits: &[Edit {
            file: "src/intrusive.rs",
            from: &["                        task.wake();"],
            to: &["                        drop(task);"],
        }],
        about: "notify_all_fair — the three listeners are polled with recording wakers and `notify(usize::MAX)` must wake them in order; with the wake dropped, `assert_eq!(&*v.lock().unwrap(), &[1, 2, 3])` fails (v is empty). Deterministic (note: the other tests use no-op wakers and re-poll, so only this one catches it).",
    },
    Mutant {
        krate: "event-listener",
        name: "remove-propagates-before-uncounting",
        kind: Kind::SwappedStores,
        edits: &[Edit {
            file: "src/intrusive.rs",
            from: &["            self.notified -= 1;", "", "            if propagate {", "                let state = mem::replace(&mut state, State::NotifiedTaken);", "                if let State::Notified { additional, tag } = state {", "                    let tags = {", "                        let mut tag = Some(tag);", "                        move || tag.take().expect(\"tag already taken\")", "                    };", "                    self.notify(GenericNotify::new(1, additional, tags));", "                }", "            }", "        }"],
            to: &["            if propagate {", "                let state = mem::replace(&mut state, State::NotifiedTaken);", "                if let State::Notified { additional, tag } = state {", "                    let tags = {", "                        let mut tag = Some(tag);", "                        move || tag.take().expect(\"tag already taken\")", "                    };", "                    self.notify(GenericNotify::new(1, additional, tags));", "                }", "            }", "            self.notified -= 1;", "        }"],
        }],
        about: "drop_notified — dropping a notified listener must pass its notification on: with the `notified -= 1` update moved after the propagated `notify(1)`, that notify still counts the dropped listener (`n < notified` is false, `n -= notified` → 0) and notifies nobody, so `assert!(is_notified(&mut l2))` fails. Deterministic; a reordering of two state updates, not a memory-ordering bug.",
    },
    Mutant {
        krate: "event-listener",
        name: "update-notified-relaxed",
        kind: Kind::Weakened,
        edits: &[Edit {
            file: "src/intrusive.rs",
            from: &["    slot.store(notified, Ordering::Release);"],
            to: &["    slot.store(notified, Ordering::Relaxed);"],
        }],
        about: "(none expected) — reached on every list operation, but every loom test in tests/loom.rs runs on the model's main thread only (no `loom::thread::spawn`), so no ordering weakening can be observed. Negative control only.",
    },
    Mutant {
        krate: "event-listener",
        name: "notify-dropped-fence",
        kind: Kind::DroppedFence,
        edits: &[Edit {
            file: "src/notify.rs",
            from: &["        full_fence();"],
            to: &["        // mutant: full_fence removed"],
        }],
        about: "(none expected) — `Event::notify(usize)` reaches this fence (`impl NotificationPrivate for Notify`, which `usize` converts into; `Additional<Notify>` forwards to it) in every test, but the suite is single-threaded, so a missing SeqCst fence is unobservable. Negative control only.",
    },
    Mutant {
        krate: "oneshot",
        name: "async-waker-published-before-write",
        kind: Kind::SwappedStores,
        edits: &[Edit {
            file: "src/lib.rs",
            from: &["        self.write_waker(ReceiverWaker::task_waker(cx));", "", "        // ORDERING: we use release ordering on success so the sender can synchronize with", "        // our write of the waker. We use relaxed ordering on failure since the sender does", "        // not need to synchronize with our write and the individual match arms handle any", "        // additional synchronization", "        match self", "            .state", "            .compare_exchange(EMPTY, RECEIVING, Release, Relaxed)", "        {"],
            to: &["        // mutant: RECEIVING is published before the waker is written", "        let cas_result = self", "            .state", "            .compare_exchange(EMPTY, RECEIVING, Release, Relaxed);", "        self.write_waker(ReceiverWaker::task_waker(cx));", "", "        match cas_result", "        {"],
        }],
        about: "async_recv — `block_on(receiver)` polls: `write_async_waker` now does the CAS EMPTY→RECEIVING (the release) before writing the waker; the sender thread's `fetch_add(1, AcqRel)` reads RECEIVING and `take_waker` reads the waker cell, but its clock covers only the CAS, not the later write → loom \"Causality violation: Concurrent read and write accesses\". The Err arms behave as before (waker written, then dropped). Other async tests poll before spawning the sender (happens-before via spawn), so only async_recv sees it.",
    },
    // oneshot 0.1.13 (src/lib.rs).
    Mutant {
        krate: "oneshot",
        name: "send-relaxed",
        kind: Kind::Weakened,
        edits: &[Edit {
            file: "src/lib.rs",
            from: &["        match channel.state.fetch_add(1, AcqRel) {"],
            to: &["        match channel.state.fetch_add(1, Relaxed) {"],
        }],
        about: "`send` publishes the message (and, waking a receiver, its last use of the \
                channel) with a Relaxed RMW: the receiver's read of the message, and its free, \
                race with the sender's writes",
    },
    Mutant {
        krate: "oneshot",
        name: "try-recv-no-fence",
        kind: Kind::DroppedFence,
        edits: &[Edit {
            file: "src/lib.rs",
            from: &[
                "                // loop, and we only need to synchronize once the message has arrived.",
                "                fence(Acquire);",
            ],
            to: &["                // loop, and we only need to synchronize once the message has arrived."],
        }],
        about: "`try_recv` takes the message after a Relaxed load of MESSAGE without the Acquire \
                fence: its read of the message races with the sender's write (`try_recv`)",
    },
    Mutant {
        krate: "oneshot",
        name: "send-no-unpark",
        kind: Kind::LostWakeup,
        edits: &[Edit {
            file: "src/lib.rs",
            from: &["                waker.unpark();", "", "                Ok(())"],
            to: &["                drop(waker);", "", "                Ok(())"],
        }],
        about: "`send` to a waiting receiver takes its waker and drops it without waking it: a \
                blocking `recv` never returns (`send_recv_different_threads`)",
    },
    Mutant {
        krate: "oneshot",
        name: "receiver-drop-leaks",
        kind: Kind::MissingFree,
        edits: &[Edit {
            file: "src/lib.rs",
            from: &[
                "            // The sender was already dropped. We are responsible for freeing the channel.",
                "            DISCONNECTED => {",
                "                // SAFETY: The acquire ordering of the swap above synchronize with the sender's",
                "                // final write of the state. So we can safely deallocate it.",
                "                unsafe { dealloc(self.channel_ptr) };",
            ],
            to: &[
                "            // The sender was already dropped. We are responsible for freeing the channel.",
                "            DISCONNECTED => {",
            ],
        }],
        about: "a receiver dropped after its sender never frees the channel: a leak in every test \
                whose receiver is dropped last",
    },
    Mutant {
        krate: "oneshot",
        name: "fix-87",
        kind: Kind::Fix,
        edits: &[FIX_87],
        about: "a fix of the open use-after-free faern/oneshot#87 (not a bug): a receiver \
                dropped while the sender holds its waker (UNPARKING) waits for the sender's final \
                state before it publishes DISCONNECTED, instead of reading its own DISCONNECTED \
                back and freeing the channel under the sender. \
                `poll_then_drop_receiver_during_send` should then pass",
    },
    Mutant {
        krate: "oneshot",
        name: "fix-87-restore-73",
        kind: Kind::Restored,
        edits: &[RESTORE_73],
        about: "`fix-87`, then faern/oneshot#73 (RUSTSEC-2026-0005, fixed in 0.1.12 by #74) put \
                back: a receiver dropped in RECEIVING publishes DISCONNECTED first and drops its \
                waker after, as 0.1.11 did, so the sender may free the channel under that drop. \
                The edit is `fix-87`'s with 0.1.11's order in the RECEIVING arm (with AcqRel, so \
                that only #73 differs, not 0.1.11's weaker orderings that #72 fixed): \
                `poll_then_drop_receiver_during_send` should fail with the receiver's \
                `drop_waker` as the access and the sender's free",
    },
];

/// 0.1.13's #74 block in `Receiver::drop`: what `FIX_87` and `RESTORE_73` replace.
const RECEIVER_DROP_74: &[&str] = &[
    "        #[cfg(feature = \"async\")]",
    "        if channel.state.load(Relaxed) == RECEIVING",
    "            && channel",
    "                .state",
    "                .compare_exchange(RECEIVING, EMPTY, Relaxed, Relaxed)",
    "                .is_ok()",
    "        {",
    "            // SAFETY: The RECEIVING state guarantees we have written a waker.",
    "            unsafe { channel.drop_waker() };",
    "        }",
];

const FIX_87: Edit = Edit {
    file: "src/lib.rs",
    from: RECEIVER_DROP_74,
    to: &[
        "        #[cfg(feature = \"async\")]",
        "        loop {",
        "            match channel.state.load(Relaxed) {",
        "                RECEIVING => {",
        "                    if channel",
        "                        .state",
        "                        .compare_exchange(RECEIVING, EMPTY, Relaxed, Relaxed)",
        "                        .is_ok()",
        "                    {",
        "                        unsafe { channel.drop_waker() };",
        "                        break;",
        "                    }",
        "                }",
        "                // The sender holds the waker: wait for its final state.",
        "                UNPARKING => hint::spin_loop(),",
        "                _ => break,",
        "            }",
        "        }",
    ],
};

const RESTORE_73: Edit = Edit {
    file: "src/lib.rs",
    from: RECEIVER_DROP_74,
    to: &[
        "        #[cfg(feature = \"async\")]",
        "        loop {",
        "            match channel.state.load(Relaxed) {",
        "                RECEIVING => {",
        "                    if channel",
        "                        .state",
        "                        .compare_exchange(RECEIVING, DISCONNECTED, AcqRel, Relaxed)",
        "                        .is_ok()",
        "                    {",
        "                        // 0.1.11's order: the sender may free the channel from here on.",
        "                        unsafe { channel.drop_waker() };",
        "                        return;",
        "                    }",
        "                }",
        "                // The sender holds the waker: wait for its final state.",
        "                UNPARKING => hint::spin_loop(),",
        "                _ => break,",
        "            }",
        "        }",
    ],
};

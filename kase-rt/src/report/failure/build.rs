//! A [`Failure`] built from what stopped an execution (an
//! [`exec::Fault`](crate::exec::Fault)) or from a panic of kase itself.

use super::fold::{Fold, RowFolder};
use super::names::location;
use super::types::Step;
use super::{Failure, FailureKind, Names};
use crate::exec::error::{is_internal, UsageError};
use crate::exec::heap::{Site, Where};
use crate::exec::{Event, Fault, ObjectIdx, ThreadIdx};
use crate::report::Schedule;
use std::panic::Location;

/// What makes a model leave a schedule it followed before, and what to do.
const DIVERGENCE_CAUSES: &str =
    "kase runs each schedule again from the start and expects the same \
     operations; a model whose path depends on wall-clock time (a timeout or deadline computed \
     from `Instant::now()`, such as `recv_timeout` or `park_timeout` in a loop), randomness, \
     `HashMap` iteration order, thread ids or addresses used as values, or synchronisation kase \
     does not see takes another path. Make the \
     path a function of the schedule (in a model, a timeout of zero or one that never expires).";

/// The frames of `backtrace` in user code, innermost first: kase's own,
/// std's and the coroutine library's frames are left out.
fn user_frames(backtrace: &backtrace::Backtrace) -> Vec<String> {
    const NOT_USER: &[&str] = &[
        "kase_rt::",
        "<kase_rt::",
        "std::",
        "<std::",
        "core::",
        "<core::",
        "alloc::",
        "<alloc::",
        "corosensei::",
        "<corosensei::",
        "backtrace::",
        "<backtrace::",
        "scoped_tls::",
        "<scoped_tls::",
        "__rust",
        "rust_",
    ];
    let mut resolved = backtrace.clone();
    resolved.resolve();
    let mut frames = Vec::new();
    for symbol in resolved.frames().iter().flat_map(|f| f.symbols()) {
        let Some(name) = symbol.name().map(|n| format!("{n:#}")) else {
            continue;
        };
        if name.starts_with("corosensei::") || name == "stack_init_trampoline" {
            // The bottom of the model thread's stack: what lies beyond is
            // kase's driver and the test harness.
            break;
        }
        if NOT_USER.iter().any(|p| name.starts_with(p)) {
            continue;
        }
        let at = match (symbol.filename(), symbol.lineno()) {
            (Some(file), Some(line)) => format!(" ({}:{line})", file.display()),
            _ => String::new(),
        };
        frames.push(format!("{name}{at}"));
        if frames.len() == 8 {
            break;
        }
    }
    frames
}

impl Failure {
    pub(crate) fn new(
        fault: Fault,
        events: &[Event],
        weak: Option<&crate::exec::weak::WeakSummary>,
        schedule: Schedule,
        names: &Names<'_>,
    ) -> Self {
        let (mut steps, row_of_step) = rows(events, names);
        if let Some(weak) = weak {
            super::stale::annotate(&mut steps, &row_of_step, events, weak);
        }
        let mut panic_location = None;
        let (kind, headline, details, message, payload) = match fault {
            Fault::Panic { thread, info, payload } if is_internal(&*payload) => {
                // kase's own code panicked while it ran for a model thread
                // (inside a shim): not the model's failure.
                let at = info.location.as_ref().map(|l| format!(" at {l}")).unwrap_or_default();
                let headline = format!("kase failed while running {}{at}:", names.thread(thread));
                let details = internal_details(&info.message);
                (FailureKind::Internal, headline, details, Some(info.message), None)
            }
            Fault::Panic { thread, info, payload } => {
                // kase's message to the user (e.g. a `LazyLock` initialised
                // twice) is re-raised by `check` as its text, as a `panic!`
                // of it would be, for `#[should_panic(expected = …)]`.
                let payload = match payload.downcast::<UsageError>() {
                    Ok(usage) => Box::new(usage.to_string()),
                    Err(payload) => payload,
                };
                let at = info.location.as_ref().map(|l| format!(" at {l}")).unwrap_or_default();
                panic_location = info.location;
                let headline = format!("{} panicked{at}:", names.thread(thread));
                (FailureKind::Panic, headline, vec![info.message.clone()], Some(info.message), Some(payload))
            }
            Fault::Deadlock { blocked, spinning } => {
                let details = blocked
                    .iter()
                    .map(|(action, at, call)| {
                        let thread = names.thread(action.thread);
                        if let Some((_, objects)) = spinning.iter().find(|(t, _)| *t == action.thread) {
                            return spin_detail(names, &thread, at, objects);
                        }
                        match call {
                            Some(call) => format!(
                                "{thread} is blocked in {} at {}",
                                names.call(call, action.object),
                                location(call.location)
                            ),
                            // A yield blocked outside a read-only cycle waits
                            // for another thread to run (`exec/spin/alone.rs`).
                            None if action.kind == crate::exec::OpKind::Yield => format!(
                                "{thread} spins at {} without progress: its last two iterations ran alone \
                                 and wrote back what they read, so it waits for another thread to run, and \
                                 none can: it never leaves its loop",
                                location(at)
                            ),
                            None => {
                                let op = names.operation(action, None);
                                format!("{thread} is blocked: waits to {op} at {}", location(at))
                            }
                        }
                    })
                    .collect();
                (FailureKind::Deadlock, "no thread can run, but not all have finished:".into(), details, None, None)
            }
            Fault::Livelock { steps, cycle: None } => (
                FailureKind::Livelock,
                format!("an execution exceeded {steps} visible operations"),
                vec![
                    "a thread may be spinning forever; if the model is just long, raise the bound with \
                     `Builder::max_steps` or KASE_MAX_STEPS"
                        .into(),
                ],
                None,
                None,
            ),
            Fault::Livelock { cycle: Some(cycle), .. } => {
                let rows = super::rows_of_events(events, &row_of_step);
                let row = |event: usize| rows.get(event).copied().flatten();
                // The rows from the first event of the cycle to its last.
                let span = match (row(cycle.since), cycle.until.checked_sub(1).and_then(row)) {
                    (Some(first), Some(last)) => format!("steps {first}–{last}"),
                    _ => "the last steps".to_owned(),
                };
                let mut details: Vec<String> = cycle
                    .threads
                    .iter()
                    .map(|(action, at)| {
                        let op = names.operation(action, None);
                        format!("{} goes round: next it will {op} at {}", names.thread(action.thread), location(at))
                    })
                    .collect();
                details.push(format!(
                    "{span} bring every atomic and every thread back to where they were before them, and \
                     every thread that could run took part: repeating them forever starves no thread, and \
                     none gets anywhere"
                ));
                details.push(
                    "threads that undo what they did and retry (a flag raised and lowered, a value \
                     written and written back) can keep each other going; make one of them back off, or \
                     let one side win"
                        .into(),
                );
                (
                    FailureKind::Livelock,
                    "the threads can keep running forever without progress:".into(),
                    details,
                    None,
                    None,
                )
            }
            Fault::DataRace { earlier, later } => {
                let access = |a: &crate::exec::CellAccess| {
                    let op = if a.write { "writes" } else { "reads" };
                    format!("{} {op} the cell at {}", names.thread(a.thread), location(a.location))
                };
                (
                    FailureKind::DataRace,
                    "data race: two accesses to one cell, at least one a write, not ordered by happens-before:"
                        .into(),
                    vec![
                        access(&earlier),
                        access(&later),
                        "order them with a lock, a Release store read by an Acquire load, or a join".into(),
                    ],
                    None,
                    None,
                )
            }
            Fault::LeakedArcs { arcs } => {
                let mut details: Vec<String> = arcs
                    .iter()
                    .map(|(t, at)| format!("the Arc {} created at {} was never freed", names.thread(*t), location(at)))
                    .collect();
                details.push(
                    "a reference cycle keeps it alive (make one direction a `Weak`), or it was forgotten \
                     (`mem::forget`, `Box::leak`) or stored in a `static` that outlives the model"
                        .into(),
                );
                (
                    FailureKind::Leak,
                    "every thread finished, but Arcs created in the model are still alive:".into(),
                    details,
                    None,
                    None,
                )
            }
            Fault::UseAfterFree {
                allocated,
                freed,
                access,
                again,
            } => {
                let what = if again { "frees it again" } else { "accesses it" };
                (
                    FailureKind::UseAfterFree,
                    "use after free: memory is used after it was freed:".into(),
                    vec![
                        heap_site(names, &access, what),
                        heap_site(names, &freed, "freed it"),
                        heap_site(names, &allocated, "allocated it"),
                        "free it only after every other access (a join, a lock, or the Acquire side of \
                         the count that decides who frees)"
                            .into(),
                    ],
                    None,
                    None,
                )
            }
            Fault::FreeRace {
                allocated,
                access,
                free,
            } => {
                let op = if access.write { "writes it" } else { "reads it" };
                (
                    FailureKind::DataRace,
                    "data race with a free (a use after free in some runs): memory is freed while \
                     another thread's access to it is not ordered before the free:"
                        .into(),
                    vec![
                        site(names, access.thread, op, access.location),
                        heap_site(names, &free, "frees it"),
                        heap_site(names, &allocated, "allocated it"),
                        "order the access before the free with a lock, a Release store read by an \
                         Acquire load, or a join"
                            .into(),
                    ],
                    None,
                    None,
                )
            }
            Fault::LeakedAllocations { blocks } => {
                let mut details: Vec<String> = blocks
                    .iter()
                    .map(|b| match b.at {
                        Where::Call(at) => format!(
                            "the memory {} allocated at {} was never freed",
                            names.thread(b.thread),
                            location(at)
                        ),
                        Where::Std { .. } => format!(
                            "{}, holding atomics, cells or locks the model used, was never freed",
                            heap_site(names, b, "allocated memory")
                        ),
                    })
                    .collect();
                let hint = if blocks.iter().any(|b| matches!(b.at, Where::Std { .. })) {
                    "drop what owns it (a `Box`, a `Vec`, ...) before the model ends; one given to \
                     `mem::forget` or `Box::leak`, or kept in a `static`, outlives the model"
                } else {
                    "free it with `alloc::dealloc` (or drop what owns it) before the model ends"
                };
                details.push(hint.into());
                (
                    FailureKind::Leak,
                    "every thread finished, but memory allocated in the model was never freed:".into(),
                    details,
                    None,
                    None,
                )
            }
            // Every divergence (a re-run while exploring, a replay, the
            // determinism check) has the same usual causes.
            Fault::Divergence { message } => (
                FailureKind::Nondeterminism,
                "the model did not follow the schedule it was given:".into(),
                vec![message, DIVERGENCE_CAUSES.into()],
                None,
                None,
            ),
            // An exploration explores again without peeking instead; only a
            // replay of a `kase1p:` schedule or the search for a simpler
            // failure can end here.
            Fault::PeekingUnsound { reason } => (
                FailureKind::DataRace,
                "a possible data race (found with critical-section peeking; replay without peeking to \
                 confirm it):"
                    .into(),
                vec![reason],
                None,
                None,
            ),
        };
        Failure {
            kind,
            headline,
            details,
            steps,
            row_of_step,
            schedule,
            message,
            panic_location,
            payload,
            preempted: None,
            first_found: None,
            notes: Vec::new(),
            origin: None,
            saved: None,
            replay_command: None,
        }
    }

    /// A panic of kase's own code (an internal invariant failed) during the
    /// execution whose choices so far are `schedule`, after `executions`
    /// executions: a report that says it is a bug in kase.
    pub(crate) fn internal(
        message: String,
        location: Option<String>,
        schedule: Schedule,
        executions: u64,
    ) -> Self {
        let at = location.map(|l| format!(" at {l}")).unwrap_or_default();
        let mut details = internal_details(&message);
        details.push(format!(
            "it happened in execution {} of this exploration, after the choices in the schedule below \
             (the interleaving was lost with the execution)",
            executions.max(1)
        ));
        Failure {
            kind: FailureKind::Internal,
            headline: format!("kase failed while exploring{at}:"),
            details,
            steps: Vec::new(),
            row_of_step: Vec::new(),
            schedule,
            message: Some(message),
            panic_location: None,
            payload: None,
            preempted: None,
            first_found: None,
            notes: Vec::new(),
            origin: None,
            saved: None,
            replay_command: None,
        }
    }
}

/// The rows of the interleaving, and for each step (an event other than an
/// exit, as schedules and preemptions count them) the row showing it, as
/// [`RowFolder`] folds them: a shim's call is one row at the user's line,
/// named by its latest outcome.
fn rows(events: &[Event], names: &Names<'_>) -> (Vec<Step>, Vec<usize>) {
    let mut steps: Vec<Step> = Vec::new();
    let mut row_of_step = Vec::new();
    let mut folder = RowFolder::default();
    for e in events {
        let continued = match folder.push(e) {
            Fold::NotAStep => continue,
            Fold::Hidden => {
                row_of_step.push(steps.len().saturating_sub(1));
                continue;
            }
            Fold::SameRow => {
                // The same call goes on: its latest outcome names the row.
                let last = steps.last_mut().expect("a call's row");
                if let Some(call) = &e.call {
                    last.operation = names.call(call, None);
                }
                if last.continued {
                    last.operation.push_str(" (continued)");
                }
                row_of_step.push(steps.len() - 1);
                continue;
            }
            Fold::NewRow { continued } => continued,
        };
        let (mut operation, at) = match &e.call {
            Some(call) => (names.call(call, None), call.location),
            None => (names.operation(&e.action, e.value), e.location),
        };
        if continued {
            operation.push_str(" (continued)");
        }
        row_of_step.push(steps.len());
        steps.push(Step {
            thread: names.thread(e.action.thread),
            operation,
            location: location(at),
            frames: e.backtrace.as_deref().map(user_frames).unwrap_or_default(),
            continued,
        });
    }
    (steps, row_of_step)
}

/// What an internal error's report says besides where it happened.
fn internal_details(message: &str) -> Vec<String> {
    vec![
        message.to_owned(),
        format!(
            "This is a bug in kase, not in the code under test. Please report it at {}/issues with \
             this whole report (the schedule replays the execution up to the failure), the kase \
             version ({}) and, if you can, the test.",
            env!("CARGO_PKG_REPOSITORY"),
            env!("CARGO_PKG_VERSION")
        ),
    ]
}

/// "`thread` `did` at `at`": one site of a use after free or a free race.
fn site(names: &Names<'_>, thread: ThreadIdx, did: &str, at: &Location<'static>) -> String {
    format!("{} {did} at {}", names.thread(thread), location(at))
}

/// "`thread` `did` at …": one site of a tracked block. std's allocator sees
/// no caller: its sites name the thread's latest step and, for a free, the
/// innermost user frames of its call stack.
fn heap_site(names: &Names<'_>, site: &Site, did: &str) -> String {
    match &site.at {
        Where::Call(at) => self::site(names, site.thread, did, at),
        Where::Std { after, frames } => {
            let thread = names.thread(site.thread);
            let when = match after {
                Some(at) => format!("after its step at {}", location(at)),
                None => "before its first step".to_owned(),
            };
            let mut text = format!("{thread} {did} through std's allocator ({when})");
            let frames = frames.as_deref().map(user_frames).unwrap_or_default();
            if let Some((first, callers)) = frames.split_first() {
                text.push_str(&format!(", in {first}"));
                for caller in callers.iter().take(2) {
                    text.push_str(&format!(", called from {caller}"));
                }
            }
            text
        }
    }
}

/// A spinning thread in a deadlock: why its yield waits, and for what.
fn spin_detail(
    names: &Names<'_>,
    thread: &str,
    at: &Location<'static>,
    objects: &[ObjectIdx],
) -> String {
    let head = format!(
        "{thread} spins at {} without progress: it is back in a state it was in at an earlier \
         yield, having only read since,",
        location(at)
    );
    if objects.is_empty() {
        format!("{head} and it read nothing another thread can change: it never leaves its loop")
    } else {
        let objects: Vec<String> = objects.iter().map(|&o| names.object_name(o)).collect();
        format!(
            "{head} so it waits for another thread to change {}, and no thread that can run will",
            objects.join(" or ")
        )
    }
}

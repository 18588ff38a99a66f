//! Replaying one schedule exactly.
//!
//! Anything that does not fit is an error naming the step and the choice
//! point, what the schedule asked for and what the code did instead, never
//! a silent fallback.

use std::panic::Location;

use crate::exec::{
    Action, Call, ChoicePoint, Event, Execution, Outcome, Scheduler, Stop, ThreadIdx, WeakPoint,
};
use crate::report::{location, rows_of, Fold, Names, RowFolder, Schedule};

use super::Explorer;

/// The thread that performed the last step (it may go on without a
/// preemption); `main` before the first step.
pub(crate) fn last_thread(execution: &Execution) -> ThreadIdx {
    execution
        .events()
        .last()
        .map_or(ThreadIdx::MAIN, |e| e.action.thread)
}

/// Follows a schedule choice by choice, counting preemptions.
pub(crate) struct Replay {
    choices: Vec<ThreadIdx>,
    next: usize,
    /// Events of the replayed execution (set by `advance`).
    steps: usize,
    /// Steps (numbered as in the report) that preempted another thread.
    preempted: Vec<usize>,
    divergence: Option<Divergence>,
    /// Under RC11: the options of atomic accesses with several, in order.
    options: Vec<u32>,
    /// The next of `options`.
    next_option: usize,
}

impl Replay {
    pub(crate) fn new(schedule: &Schedule) -> Self {
        Replay {
            choices: schedule.choices().collect(),
            next: 0,
            steps: 0,
            preempted: Vec::new(),
            divergence: None,
            options: schedule.rc11_options().to_vec(),
            next_option: 0,
        }
    }

    /// The steps of the replayed execution that were preemptions: switches
    /// away from a thread that could have gone on.
    pub(crate) fn preempted(&self) -> &[usize] {
        &self.preempted
    }

    /// Choices of the schedule used so far, and how many it has.
    pub(crate) fn used(&self) -> (usize, usize) {
        (self.next.min(self.choices.len()), self.choices.len())
    }

    /// Events in the replayed execution.
    pub(crate) fn steps(&self) -> usize {
        self.steps
    }

    /// How the execution departed from the schedule, if it did.
    pub(crate) fn divergence(&self) -> Option<&Divergence> {
        self.divergence.as_ref()
    }

    fn diverge(&mut self, divergence: Divergence) -> Stop {
        let short = divergence.headline(&|t: ThreadIdx| t.to_string());
        self.divergence = Some(divergence);
        Stop::Diverged(short)
    }
}

/// What a thread was about to do.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Next {
    action: Action,
    location: &'static Location<'static>,
    /// The user's call of a shim the operation is part of: what to show.
    call: Option<Call>,
}

/// The step shown by the latest row of the report.
#[derive(Clone, Copy, Debug)]
struct Last {
    action: Action,
    value: Option<u64>,
    location: &'static Location<'static>,
    call: Option<Call>,
    /// Whether an earlier row showed the beginning of the same call.
    continued: bool,
}

impl Last {
    /// The event that names the last row `events` make, as the report's
    /// table names it (a call by its latest event).
    fn of(events: &[Event]) -> Option<Last> {
        let mut folder = RowFolder::default();
        let mut last: Option<Last> = None;
        for e in events {
            let continued = match folder.push(e) {
                Fold::NotAStep | Fold::Hidden => continue,
                Fold::SameRow => last.is_some_and(|l| l.continued),
                Fold::NewRow { continued } => continued,
            };
            last = Some(Last {
                action: e.action,
                value: e.value,
                location: e.location,
                call: e.call.as_deref().copied(),
                continued,
            });
        }
        last
    }
}

/// Why the picked thread could not run.
#[derive(Clone, Copy, Debug)]
enum Problem {
    /// It waits for something (its operation is not enabled).
    Blocked(Next),
    /// It already finished.
    Finished,
    /// No such thread (yet) in this execution.
    Unknown,
}

#[derive(Clone, Debug)]
enum Kind {
    /// The schedule picks a thread that cannot run.
    CannotRun { picked: ThreadIdx, problem: Problem },
    /// The model reached more choice points than the schedule has.
    ScheduleTooShort,
    /// The model finished before the schedule's end.
    ScheduleTooLong,
}

/// Where and how an execution departed from its schedule.
#[derive(Clone, Debug)]
pub(crate) struct Divergence {
    kind: Kind,
    /// The step about to run, numbered as the report's rows (the row after
    /// those run so far), or the number of rows for
    /// [`Kind::ScheduleTooLong`].
    step: usize,
    /// The choice point (1-based), or the choice points reached.
    choice: usize,
    total: usize,
    /// What the threads that could run were about to do.
    runnable: Vec<Next>,
    /// The last step that ran (the last row of the report).
    last: Option<Last>,
    /// Threads that exist at this point.
    threads: Vec<ThreadIdx>,
}

/// Steps (visible operations other than exits) performed so far, as
/// schedules and preemptions count them (the report maps them to rows).
pub(crate) fn steps_so_far(execution: &Execution) -> usize {
    execution
        .events()
        .iter()
        .filter(|e| e.action.kind != crate::exec::OpKind::Exit)
        .count()
}

fn known_threads(execution: &Execution) -> Vec<ThreadIdx> {
    let mut threads = vec![ThreadIdx::MAIN];
    threads.extend(
        execution
            .events()
            .iter()
            .filter(|e| e.action.kind == crate::exec::OpKind::Spawn)
            .filter_map(|e| Some(ThreadIdx(e.value? as u32))),
    );
    threads
}

fn next_of(execution: &Execution, t: ThreadIdx) -> Option<Next> {
    let thread = execution.thread(t);
    let pending = thread.pending?;
    Some(Next {
        action: pending.action,
        location: pending.location,
        call: thread.call,
    })
}

impl Divergence {
    fn at(
        execution: &Execution,
        enabled: &[ThreadIdx],
        kind: Kind,
        choice: usize,
        total: usize,
    ) -> Self {
        Divergence {
            kind,
            step: rows_of(execution.events()) + 1,
            choice,
            total,
            runnable: enabled
                .iter()
                .filter_map(|&t| next_of(execution, t))
                .collect(),
            last: Last::of(execution.events()),
            threads: known_threads(execution),
        }
    }

    fn headline(&self, thread: &dyn Fn(ThreadIdx) -> String) -> String {
        let (step, choice, total) = (self.step, self.choice, self.total);
        match &self.kind {
            Kind::CannotRun { picked, problem } => {
                let why = match problem {
                    Problem::Blocked(_) => "cannot run there".to_owned(),
                    Problem::Finished => "has already finished".to_owned(),
                    Problem::Unknown => {
                        let threads: Vec<String> = self.threads.iter().map(|&t| thread(t)).collect();
                        format!(
                            "does not exist at that point (threads so far: {})",
                            threads.join(", ")
                        )
                    }
                };
                format!(
                    "at step {step} (choice point {choice} of {total}) the schedule picks {}, which {why}",
                    thread(*picked)
                )
            }
            Kind::ScheduleTooShort => format!(
                "the schedule has {total} choices, but at step {step} the model reached choice point {choice}"
            ),
            Kind::ScheduleTooLong => format!(
                "the model finished after {step} steps and {choice} choice point{}, but the schedule has \
                 {total} choices",
                if choice == 1 { "" } else { "s" }
            ),
        }
    }

    /// The full explanation, naming objects and threads as the report does.
    pub(crate) fn describe(&self, names: &Names<'_>) -> String {
        let thread = |t: ThreadIdx| names.thread(t);
        // Inside a shim's call, the user's call at the user's line, as the
        // report's rows show it.
        let next = |n: &Next| match &n.call {
            Some(call) => format!(
                "{} at {}",
                names.call(call, n.action.object),
                location(call.location)
            ),
            None => format!(
                "{} at {}",
                names.operation(&n.action, None),
                location(n.location)
            ),
        };
        let mut lines = vec![self.headline(&thread)];
        if let Kind::CannotRun {
            picked,
            problem: Problem::Blocked(blocked),
        } = &self.kind
        {
            lines.push(format!("  {} waits to {}", thread(*picked), next(blocked)));
        }
        if !self.runnable.is_empty() {
            let what = match self.kind {
                Kind::CannotRun { .. } => "what could run instead:",
                _ => "what could run:",
            };
            lines.push(what.to_owned());
            for n in &self.runnable {
                lines.push(format!("  {}: {}", thread(n.action.thread), next(n)));
            }
        }
        if let Some(last) = &self.last {
            let (mut operation, at) = match &last.call {
                Some(call) => (names.call(call, last.action.object), call.location),
                None => (names.operation(&last.action, last.value), last.location),
            };
            if last.continued {
                operation.push_str(" (continued)");
            }
            lines.push(format!(
                "the step before: {} {operation} at {}",
                thread(last.action.thread),
                location(at)
            ));
        }
        lines.push(
            "The code no longer follows this schedule: it changed since the schedule was recorded, or it \
             depends on something other than the schedule."
                .to_owned(),
        );
        lines.join("\n")
    }
}

impl Scheduler for Replay {
    fn choose_weak(&mut self, point: &WeakPoint<'_>) -> Result<usize, Stop> {
        if point.options == 1 {
            return Ok(0);
        }
        let nth = self.next_option;
        self.next_option += 1;
        match self.options.get(nth) {
            Some(&k) if (k as usize) < point.options => Ok(k as usize),
            Some(&k) => Err(Stop::Diverged(format!(
                "store choice {} of the schedule is option {k}, but the atomic access of {} there \
                 can go only {} ways: the schedule is not of this model",
                nth + 1,
                point.thread,
                point.options
            ))),
            // Store choices are asked only when an RC11 schedule replays.
            None => Err(Stop::Diverged(format!(
                "the schedule's {nth} store choices ran out: the atomic access of {} can go {} \
                 ways and the schedule does not say which (is it of this model?)",
                point.thread, point.options
            ))),
        }
    }

    fn choose(&mut self, point: &ChoicePoint<'_>) -> Result<ThreadIdx, Stop> {
        if let [only] = point.enabled {
            return Ok(*only);
        }
        let i = self.next;
        self.next += 1;
        let total = self.choices.len();
        let execution = point.execution;
        let Some(&t) = self.choices.get(i) else {
            let d = Divergence::at(
                execution,
                point.enabled,
                Kind::ScheduleTooShort,
                i + 1,
                total,
            );
            return Err(self.diverge(d));
        };
        if !point.enabled.contains(&t) {
            let problem = if !known_threads(execution).contains(&t) {
                Problem::Unknown
            } else if execution.thread(t).finished {
                Problem::Finished
            } else {
                match next_of(execution, t) {
                    Some(n) => Problem::Blocked(n),
                    None => Problem::Finished,
                }
            };
            let kind = Kind::CannotRun { picked: t, problem };
            let d = Divergence::at(execution, point.enabled, kind, i + 1, total);
            return Err(self.diverge(d));
        }
        let last = last_thread(execution);
        if t != last && point.enabled.contains(&last) {
            self.preempted.push(steps_so_far(execution) + 1);
        }
        Ok(t)
    }
}

impl Explorer for Replay {
    fn advance(&mut self, outcome: &Outcome) -> Result<bool, String> {
        self.steps = outcome.events.len();
        if outcome.fault.is_none() && self.next < self.choices.len() {
            let d = Divergence {
                kind: Kind::ScheduleTooLong,
                step: rows_of(&outcome.events),
                choice: self.next,
                total: self.choices.len(),
                runnable: Vec::new(),
                last: Last::of(&outcome.events),
                threads: Vec::new(),
            };
            let short = d.headline(&|t: ThreadIdx| t.to_string());
            self.divergence = Some(d);
            return Err(short);
        }
        Ok(false)
    }
}

//! `Strategy::Exhaustive`: depth-first search over every interleaving, the
//! oracle the reductions are checked against; with a preemption bound, over
//! every interleaving with at most that many preemptions (the *bounded
//! oracle*, which also runs for `Strategy::Por` when a bound is set).
//!
//! A **preemption** is a choice of a thread other than the one that ran last
//! while that one is still enabled (as in CHESS and loom). Choosing any
//! thread when the last one is blocked or finished is free, and continuing
//! the last thread is always allowed, so every bound admits at least one
//! complete execution.

use crate::exec::{Action, ChoicePoint, Outcome, Scheduler, Stop, ThreadIdx, WeakPoint};

use super::canonical::Canonical;
use super::replay::last_thread;
use super::Explorer;

/// One choice point on the current path: the order in which its options are
/// tried and which one is being explored.
struct Frame {
    options: Vec<ThreadIdx>,
    /// What each option was about to do, to notice a re-run that differs.
    pending: Vec<Option<Action>>,
    /// How many threads were enabled (more than `options` when a bound
    /// pruned some).
    enabled: usize,
    next: usize,
    /// A choice of how an atomic access goes under RC11 (`options` then
    /// holds option numbers, not threads).
    weak: bool,
    /// The index of the event whose thread or way it chooses: the events
    /// before it repeat when the choices up to here are replayed.
    at: usize,
}

/// Stateless DFS: each execution re-runs the model, following the recorded
/// choices up to the deepest choice point with an untried option.
#[derive(Default)]
pub(crate) struct Dfs {
    frames: Vec<Frame>,
    depth: usize,
    /// At most this many preemptions per execution (`None`: unbounded).
    bound: Option<usize>,
    /// Preemptions on the current execution so far.
    preemptions: usize,
    /// The bound left out at least one option: the search is complete only
    /// up to it.
    pruned: bool,
    /// Under RC11 with reduction: only each graph's canonical interleaving
    /// (`canonical.rs`).
    canonical: Option<Canonical>,
    /// Executions that ended early as redundant (RC11 reduction).
    redundant: u64,
    /// A choice made while the model turned exploring off had other
    /// options, left untried.
    cut: bool,
}

impl Dfs {
    /// The bounded oracle: every interleaving with at most `bound`
    /// preemptions.
    pub(crate) fn bounded(bound: usize) -> Self {
        Dfs {
            bound: Some(bound),
            ..Dfs::default()
        }
    }

    /// The RC11 reduction: one execution per execution graph.
    pub(crate) fn canonical() -> Self {
        Dfs {
            canonical: Some(Canonical::default()),
            ..Dfs::default()
        }
    }

    /// The thread whose continuation is free: the one that ran last, as
    /// preemptions are counted (and as the failure report counts them);
    /// unbounded, the thread resumed last, as before.
    fn last(&self, point: &ChoicePoint<'_>) -> ThreadIdx {
        match self.bound {
            Some(_) => last_thread(point.execution),
            None => point.current,
        }
    }
}

impl Scheduler for Dfs {
    fn choose(&mut self, point: &ChoicePoint<'_>) -> Result<ThreadIdx, Stop> {
        if point.execution.repeated().is_some() {
            // The state is that at an earlier point, whose continuations
            // are all explored (`exec/spin/repeat.rs`).
            return Err(Stop::Redundant);
        }
        if let Some(canonical) = &mut self.canonical {
            let options = canonical.options(point);
            let chosen = self.pick(options, point)?;
            if let Some(canonical) = &mut self.canonical {
                canonical.chose(point, chosen);
            }
            return Ok(chosen);
        }
        if let [only] = point.enabled {
            return Ok(*only);
        }
        let depth = self.depth;
        self.depth += 1;
        let last = self.last(point);
        let can_continue = point.enabled.contains(&last);
        let chosen = self.choose_at(depth, last, can_continue, point)?;
        if can_continue && chosen != last {
            self.preemptions += 1;
        }
        Ok(chosen)
    }

    fn choose_weak(&mut self, point: &WeakPoint<'_>) -> Result<usize, Stop> {
        self.choose_weak_at(point)
    }

    fn replay_prefix(&self) -> Option<usize> {
        // After `advance`, the deepest frame takes its next option.
        Some(self.frames.last().map_or(0, |frame| frame.at))
    }
}

impl Dfs {
    /// Under RC11, which of `point.options` ways the access goes: every
    /// one in turn, the sequentially consistent one first. Reads-from and
    /// modification-order choices are not preemptions.
    fn choose_weak_at(&mut self, point: &WeakPoint<'_>) -> Result<usize, Stop> {
        let mut options = match &mut self.canonical {
            Some(canonical) => canonical.weak_options(point.sources),
            None => (0..point.options).collect(),
        };
        if point.latest_only {
            // The latest store only (kase's `Once` fast path); redundant if
            // the canonical reduction has that graph already.
            options.retain(|&k| k == 0);
        }
        match options[..] {
            [] => return Err(Stop::Redundant),
            [only] => return Ok(only),
            _ => {}
        }
        let depth = self.depth;
        self.depth += 1;
        if let Some(frame) = self.frames.get(depth) {
            if !frame.weak || frame.enabled != point.options {
                return Err(Stop::Diverged(format!(
                    "at choice point {}, re-running the same schedule found {} about to make an \
                     atomic access that can go {} ways, where the earlier run had {}: the model \
                     depends on something other than the schedule",
                    depth + 1,
                    point.thread,
                    point.options,
                    if frame.weak {
                        format!("{} ways", frame.enabled)
                    } else {
                        "a choice of threads".to_string()
                    }
                )));
            }
            return Ok(frame.options[frame.next].index());
        }
        if !point.explore {
            self.cut = true;
            options.truncate(1);
        }
        let first = options[0];
        self.frames.push(Frame {
            pending: vec![None; options.len()],
            options: options.into_iter().map(|k| ThreadIdx(k as u32)).collect(),
            enabled: point.options,
            next: 0,
            weak: true,
            at: point.event,
        });
        Ok(first)
    }

    /// One of `options` (threads, in the order to try them) at `point`: the
    /// recorded one when re-running, else the first of a new frame.
    fn pick(
        &mut self,
        options: Vec<ThreadIdx>,
        point: &ChoicePoint<'_>,
    ) -> Result<ThreadIdx, Stop> {
        match options[..] {
            [] => return Err(Stop::Redundant),
            [only] => return Ok(only),
            _ => {}
        }
        let depth = self.depth;
        self.depth += 1;
        if let Some(recorded) = self.recorded(depth, point)? {
            return Ok(recorded);
        }
        Ok(self.push_frame(options, point))
    }

    /// The thread recorded at choice point `depth` when re-running (after
    /// checking the run reached it the same way), `None` past the recorded
    /// path.
    fn recorded(&self, depth: usize, point: &ChoicePoint<'_>) -> Result<Option<ThreadIdx>, Stop> {
        let Some(frame) = self.frames.get(depth) else {
            return Ok(None);
        };
        check_same(frame, depth, point)?;
        Ok(Some(frame.options[frame.next]))
    }

    /// A new choice point trying `options` (threads, in that order) at
    /// `point`; returns the first.
    fn push_frame(&mut self, mut options: Vec<ThreadIdx>, point: &ChoicePoint<'_>) -> ThreadIdx {
        if !point.execution.exploring() {
            // The model asked for no other way here (loom's controls).
            self.cut |= options.len() > 1;
            options.truncate(1);
        }
        let pending = options
            .iter()
            .map(|&t| point.execution.pending(t))
            .collect();
        let first = options[0];
        self.frames.push(Frame {
            options,
            pending,
            enabled: point.enabled.len(),
            next: 0,
            weak: false,
            at: point.execution.events().len(),
        });
        first
    }

    /// The thread to run at choice point `depth`: the recorded one when
    /// re-running, else the first option of a new frame.
    fn choose_at(
        &mut self,
        depth: usize,
        last: ThreadIdx,
        can_continue: bool,
        point: &ChoicePoint<'_>,
    ) -> Result<ThreadIdx, Stop> {
        if let Some(recorded) = self.recorded(depth, point)? {
            return Ok(recorded);
        }
        // Keep running the current thread first: the first execution then has
        // as few context switches as possible, which makes it easy to read.
        let mut options = Vec::with_capacity(point.enabled.len());
        if can_continue {
            options.push(last);
        }
        // Switching away from a thread that could go on costs a preemption.
        let may_preempt = !can_continue || self.bound.map_or(true, |b| self.preemptions < b);
        if may_preempt {
            options.extend(point.enabled.iter().copied().filter(|&t| t != last));
        } else {
            self.pruned = true;
        }
        Ok(self.push_frame(options, point))
    }
}

impl Explorer for Dfs {
    fn advance(&mut self, outcome: &Outcome) -> Result<bool, String> {
        if outcome.fault.is_none() && !outcome.redundant && self.depth < self.frames.len() {
            return Err(format!(
                "the model finished after {} choice points, but the same schedule earlier had {}: the \
                 model depends on something other than the schedule",
                self.depth,
                self.frames.len()
            ));
        }
        self.redundant += u64::from(outcome.redundant);
        self.depth = 0;
        self.preemptions = 0;
        if let Some(canonical) = &mut self.canonical {
            canonical.reset();
        }
        Ok(next_path(&mut self.frames, |f| {
            (&mut f.next, f.options.len())
        }))
    }

    fn pruned(&self) -> bool {
        self.pruned
    }

    fn cut(&self) -> bool {
        self.cut
    }

    fn reduces(&self) -> bool {
        self.canonical.is_some()
    }

    fn redundant(&self) -> u64 {
        self.redundant
    }

    fn explored(&self) -> Option<f64> {
        // After `advance`, each frame's `next` options are behind it.
        Some(super::estimate::explored(
            self.frames.iter().map(|f| (f.next, f.options.len() as f64)),
        ))
    }
}

/// Whether a re-run reached the recorded choice point `depth` (`frame`) with
/// the same threads about to do the same things; if not, the model depends
/// on something other than the schedule.
fn check_same(frame: &Frame, depth: usize, point: &ChoicePoint<'_>) -> Result<(), Stop> {
    let same = !frame.weak
        && frame.enabled == point.enabled.len()
        && frame
            .options
            .iter()
            .zip(&frame.pending)
            .all(|(&t, p)| point.enabled.contains(&t) && point.execution.pending(t) == *p);
    if same {
        return Ok(());
    }
    Err(Stop::Diverged(format!(
        "at choice point {}, re-running the same schedule found threads {} about to run \
         different operations than the earlier run ({}): the model depends on something \
         other than the schedule",
        depth + 1,
        list(point.enabled),
        list(&frame.options)
    )))
}

/// The step of a stateless DFS to its next path (also `minimize`'s): the
/// deepest choice point with an untried option moves on to it, and the
/// exhausted ones below it are dropped; false when every path is done.
/// `cursor` gives a frame's index of the option it explores and its number
/// of options.
pub(super) fn next_path<F>(
    frames: &mut Vec<F>,
    cursor: impl Fn(&mut F) -> (&mut usize, usize),
) -> bool {
    while let Some(frame) = frames.last_mut() {
        let (next, options) = cursor(frame);
        if *next + 1 < options {
            *next += 1;
            return true;
        }
        frames.pop();
    }
    false
}

/// Threads as `[t1, t2]`, for messages.
pub(crate) fn list(threads: &[ThreadIdx]) -> String {
    let names: Vec<String> = threads.iter().map(|t| t.to_string()).collect();
    format!("[{}]", names.join(", "))
}

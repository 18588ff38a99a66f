//! Smaller counterexamples: after a failure, a bounded search for an
//! interleaving with the same failure and fewer preemptions (switches away
//! from a thread that could have gone on), which is usually much easier to
//! read.
//!
//! The search is iterative preemption bounding: a depth-first search over
//! the interleavings with at most 0 preemptions, then at most 1, and so on
//! below the first failure's count, stopping at the first failing execution
//! within an execution and time budget. Under RC11 it also tries every
//! store each atomic access may read or place (not preemptions).

use std::time::{Duration, Instant};

use crate::exec::{ChoicePoint, Outcome, Scheduler, Stop, ThreadIdx, WeakPoint};
use crate::report::{Failure, FailureKind, FirstFound};

use super::exhaustive::next_path;
use super::replay::{last_thread, steps_so_far};
use super::{Explorer, Runner, Settings};

/// Longest the search may take.
const MAX_TIME: Duration = Duration::from_secs(2);
/// The search may always run this many executions (within the budget)...
const BASE_EXECUTIONS: u64 = 100;
// ...plus as many as the exploration ran to find the failure: a failure
// found at once is usually simple already, and a test that explores a lot
// gets a proportionate effort.

/// One choice point on the current path.
struct Frame {
    options: Vec<ThreadIdx>,
    next: usize,
    /// Under RC11, a choice of how an atomic access goes (`options` then
    /// holds option numbers): every one is tried, none is a preemption.
    weak: bool,
}

/// Depth-first search over the interleavings with at most `bound`
/// preemptions (stateless: each execution re-runs the model, following the
/// recorded choices down to the deepest choice point with an untried option).
pub(crate) struct Bounded {
    bound: usize,
    frames: Vec<Frame>,
    depth: usize,
    /// Steps of the current execution that preempted another thread.
    preempted: Vec<usize>,
}

impl Bounded {
    pub(crate) fn new(bound: usize) -> Self {
        Bounded {
            bound,
            frames: Vec::new(),
            depth: 0,
            preempted: Vec::new(),
        }
    }
}

impl Scheduler for Bounded {
    fn choose_weak(&mut self, point: &WeakPoint<'_>) -> Result<usize, Stop> {
        if point.options == 1 {
            return Ok(0);
        }
        let depth = self.depth;
        self.depth += 1;
        match self.frames.get(depth) {
            Some(frame) if frame.weak && frame.options.len() == point.options => {
                Ok(frame.options[frame.next].index())
            }
            Some(_) => Err(Stop::Diverged(format!(
                "re-running the model with the same choices, {} made an atomic access with other \
                 options at choice point {}: the model depends on something other than the \
                 schedule",
                point.thread,
                depth + 1
            ))),
            None => {
                let options = (0..point.options).map(|k| ThreadIdx(k as u32)).collect();
                self.frames.push(Frame {
                    options,
                    next: 0,
                    weak: true,
                });
                Ok(0)
            }
        }
    }

    fn choose(&mut self, point: &ChoicePoint<'_>) -> Result<ThreadIdx, Stop> {
        if let [only] = point.enabled {
            return Ok(*only);
        }
        let last = last_thread(point.execution);
        let can_continue = point.enabled.contains(&last);
        let depth = self.depth;
        self.depth += 1;
        let t = match self.frames.get(depth) {
            Some(frame) if frame.weak => {
                return Err(Stop::Diverged(format!(
                    "re-running the model with the same choices, a choice of threads came where \
                     an atomic access chose its store at choice point {}: the model depends on \
                     something other than the schedule",
                    depth + 1
                )));
            }
            Some(frame) => {
                let t = frame.options[frame.next];
                if !point.enabled.contains(&t) {
                    return Err(Stop::Diverged(format!(
                        "re-running the model with the same choices, {t} could not run at choice point {}: \
                         the model depends on something other than the schedule",
                        depth + 1
                    )));
                }
                t
            }
            None => {
                let mut options = Vec::with_capacity(point.enabled.len());
                if can_continue {
                    options.push(last);
                    if self.preempted.len() < self.bound {
                        options.extend(point.enabled.iter().copied().filter(|&t| t != last));
                    }
                } else {
                    options.extend_from_slice(point.enabled);
                }
                let first = options[0];
                self.frames.push(Frame {
                    options,
                    next: 0,
                    weak: false,
                });
                first
            }
        };
        if can_continue && t != last {
            self.preempted.push(steps_so_far(point.execution) + 1);
        }
        Ok(t)
    }
}

impl Explorer for Bounded {
    fn advance(&mut self, _outcome: &Outcome) -> Result<bool, String> {
        self.depth = 0;
        self.preempted.clear();
        Ok(next_path(&mut self.frames, |f| {
            (&mut f.next, f.options.len())
        }))
    }
}

/// Counts the preemptions of `first` (found after `explored` executions) and
/// looks for the same failure with fewer, within the budget: at most
/// `config.minimize` executions, at most `BASE_EXECUTIONS + explored`, and
/// at most [`MAX_TIME`]. Returns the failure to report: a simpler one (which
/// remembers the first), or `first` with its preemption count.
pub(crate) fn simplify(
    runner: &mut Runner<'_>,
    config: &Settings,
    mut first: Failure,
    explored: u64,
) -> Failure {
    if matches!(
        first.kind(),
        FailureKind::Nondeterminism | FailureKind::Livelock
    ) {
        return first;
    }
    let (replayed, replay) = runner.replay(first.schedule());
    let original = match replayed {
        Some(again) if again.same_failure(&first) => replay.preempted().to_vec(),
        // The model does not fail the same way twice: leave it as it is.
        _ => return first,
    };
    let original_count = original.len();
    first.set_preempted(original);
    let original = original_count;
    if original == 0 || config.minimize == 0 {
        return first;
    }
    let max_time = config.max_duration.map_or(MAX_TIME, |d| d.min(MAX_TIME));
    let deadline = Instant::now() + max_time;
    let budget = config
        .minimize
        .min(BASE_EXECUTIONS.saturating_add(explored));
    let mut searched = 0u64;
    for bound in 0..original {
        let mut dfs = Bounded::new(bound);
        loop {
            if searched >= budget || Instant::now() >= deadline {
                return first;
            }
            let mut outcome = runner.execute(&mut dfs);
            searched += 1;
            let preempted = std::mem::take(&mut dfs.preempted);
            let next = dfs.advance(&outcome);
            if let Some(fault) = outcome.fault.take() {
                if matches!(fault, crate::exec::Fault::Divergence { .. }) {
                    return first;
                }
                let mut candidate = super::runner::failure(fault, &outcome);
                if candidate.same_failure(&first) {
                    candidate.set_preempted(preempted);
                    candidate.set_first_found(FirstFound {
                        schedule: first.schedule().clone(),
                        preemptions: original,
                        steps: first.steps(),
                        searched,
                    });
                    return candidate;
                }
            }
            runner.reclaim(outcome);
            if next != Ok(true) {
                break;
            }
        }
    }
    first
}

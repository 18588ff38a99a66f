//! `Strategy::Exhaustive`: depth-first search over every interleaving, the
//! oracle the reductions are checked against.

use crate::exec::{Action, ChoicePoint, Outcome, Scheduler, Stop, ThreadIdx};

use super::Explorer;

/// One choice point on the current path: the order in which its options are
/// tried and which one is being explored.
struct Frame {
    options: Vec<ThreadIdx>,
    /// What each option was about to do, to notice a re-run that differs.
    pending: Vec<Option<Action>>,
    next: usize,
}

/// Stateless DFS: each execution re-runs the model, following the recorded
/// choices up to the deepest choice point with an untried option.
#[derive(Default)]
pub(crate) struct Dfs {
    frames: Vec<Frame>,
    depth: usize,
}

impl Scheduler for Dfs {
    fn choose(&mut self, point: &ChoicePoint<'_>) -> Result<ThreadIdx, Stop> {
        if let [only] = point.enabled {
            return Ok(*only);
        }
        let depth = self.depth;
        self.depth += 1;
        if let Some(frame) = self.frames.get(depth) {
            let same =
                frame.options.len() == point.enabled.len()
                    && frame.options.iter().zip(&frame.pending).all(|(&t, p)| {
                        point.enabled.contains(&t) && point.execution.pending(t) == *p
                    });
            if !same {
                return Err(Stop::Diverged(format!(
                    "at choice point {}, re-running the same schedule found threads {} about to run \
                     different operations than the earlier run ({}): the model depends on something \
                     other than the schedule",
                    depth + 1,
                    list(point.enabled),
                    list(&frame.options)
                )));
            }
            return Ok(frame.options[frame.next]);
        }
        // Keep running the current thread first: the first execution then has
        // as few context switches as possible, which makes it easy to read.
        let mut options = Vec::with_capacity(point.enabled.len());
        if point.enabled.contains(&point.current) {
            options.push(point.current);
        }
        options.extend(
            point
                .enabled
                .iter()
                .copied()
                .filter(|&t| t != point.current),
        );
        let first = options[0];
        let pending = options
            .iter()
            .map(|&t| point.execution.pending(t))
            .collect();
        self.frames.push(Frame {
            options,
            pending,
            next: 0,
        });
        Ok(first)
    }
}

impl Explorer for Dfs {
    fn advance(&mut self, outcome: &Outcome) -> Result<bool, String> {
        if outcome.fault.is_none() && self.depth < self.frames.len() {
            return Err(format!(
                "the model finished after {} choice points, but the same schedule earlier had {}: the \
                 model depends on something other than the schedule",
                self.depth,
                self.frames.len()
            ));
        }
        self.depth = 0;
        while let Some(frame) = self.frames.last_mut() {
            if frame.next + 1 < frame.options.len() {
                frame.next += 1;
                return Ok(true);
            }
            self.frames.pop();
        }
        Ok(false)
    }
}

pub(crate) fn list(threads: &[ThreadIdx]) -> String {
    let names: Vec<String> = threads.iter().map(|t| t.to_string()).collect();
    format!("[{}]", names.join(", "))
}

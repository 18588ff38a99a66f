//! Replaying one schedule exactly.

use crate::exec::{ChoicePoint, Outcome, Scheduler, Stop, ThreadIdx};
use crate::report::Schedule;

use super::exhaustive::list;
use super::Explorer;

/// Follows a schedule choice by choice; anything that does not fit is an
/// error naming the choice point, never a silent fallback.
pub(crate) struct Replay {
    choices: Vec<ThreadIdx>,
    next: usize,
}

impl Replay {
    pub(crate) fn new(schedule: &Schedule) -> Self {
        Replay {
            choices: schedule.choices().collect(),
            next: 0,
        }
    }
}

impl Scheduler for Replay {
    fn choose(&mut self, point: &ChoicePoint<'_>) -> Result<ThreadIdx, Stop> {
        if let [only] = point.enabled {
            return Ok(*only);
        }
        let i = self.next;
        self.next += 1;
        let Some(&t) = self.choices.get(i) else {
            return Err(Stop::Diverged(format!(
                "the schedule has {} choices, but the model reached choice point {} (runnable: {}): the \
                 schedule does not fit this code",
                self.choices.len(),
                i + 1,
                list(point.enabled)
            )));
        };
        if !point.enabled.contains(&t) {
            return Err(Stop::Diverged(format!(
                "at choice point {} the schedule picks {t}, which cannot run now (runnable: {}): the \
                 schedule does not fit this code",
                i + 1,
                list(point.enabled)
            )));
        }
        Ok(t)
    }
}

impl Explorer for Replay {
    fn advance(&mut self, outcome: &Outcome) -> Result<bool, String> {
        if outcome.fault.is_none() && self.next < self.choices.len() {
            return Err(format!(
                "the model finished after {} choice points, but the schedule has {}: the schedule does \
                 not fit this code",
                self.next,
                self.choices.len()
            ));
        }
        Ok(false)
    }
}

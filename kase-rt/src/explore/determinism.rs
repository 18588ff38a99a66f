//! `Builder::check_determinism`: each new schedule runs twice and the two
//! runs must perform the same operations, on the same objects, at the same
//! places — catching `HashMap` iteration order, time, randomness or std
//! synchronisation used inside a model before they make exploration
//! unsound. Values are not compared (pointers legitimately differ).

use crate::exec::{ChoicePoint, Event, Scheduler, Stop, ThreadIdx, WeakPoint};

/// Follows a recorded list of choices (threads chosen where several could
/// run, and under RC11 how each atomic access with several ways went).
pub(crate) struct Follow {
    choices: Vec<ThreadIdx>,
    next: usize,
    weak: std::vec::IntoIter<usize>,
}

impl Follow {
    pub(crate) fn new(choices: Vec<ThreadIdx>, weak: Vec<usize>) -> Self {
        Follow {
            choices,
            next: 0,
            weak: weak.into_iter(),
        }
    }
}

impl Scheduler for Follow {
    fn choose(&mut self, point: &ChoicePoint<'_>) -> Result<ThreadIdx, Stop> {
        if let [only] = point.enabled {
            return Ok(*only);
        }
        let Some(&t) = self.choices.get(self.next) else {
            return Err(Stop::Diverged(format!(
                "check_determinism: the second run has more choice points than the first (at choice \
                 point {}); the model depends on something other than the schedule",
                self.next + 1
            )));
        };
        self.next += 1;
        if point.enabled.contains(&t) {
            Ok(t)
        } else {
            Err(Stop::Diverged(format!(
                "check_determinism: at choice point {}, {t} ran in the first run but cannot run in the \
                 second; the model depends on something other than the schedule",
                self.next
            )))
        }
    }

    fn choose_weak(&mut self, point: &WeakPoint<'_>) -> Result<usize, Stop> {
        if point.options == 1 {
            return Ok(0);
        }
        match self.weak.next() {
            Some(k) if k < point.options => Ok(k),
            _ => Err(Stop::Diverged(format!(
                "check_determinism: an atomic access of {} can go {} ways in the second run, not as \
                 in the first; the model depends on something other than the schedule",
                point.thread, point.options
            ))),
        }
    }
}

/// The first difference between two runs of one schedule, described.
pub(crate) fn first_difference(first: &[Event], second: &[Event]) -> Option<String> {
    let same = |a: &Event, b: &Event| a.action == b.action && a.location == b.location;
    let describe = |e: &Event| {
        format!(
            "{} {}{} at {}",
            e.action.thread,
            e.action.kind.name(),
            e.action
                .object
                .map(|o| format!(" object#{}", o.0))
                .unwrap_or_default(),
            e.location
        )
    };
    let step = first.iter().zip(second).position(|(a, b)| !same(a, b));
    let (what_first, what_second, at) = match step {
        Some(i) => (describe(&first[i]), describe(&second[i]), i),
        None if first.len() == second.len() => return None,
        None => {
            let i = first.len().min(second.len());
            let end = |events: &[Event]| {
                events
                    .get(i)
                    .map_or("nothing (the run ended)".into(), describe)
            };
            (end(first), end(second), i)
        }
    };
    Some(format!(
        "check_determinism: the same schedule ran differently twice. At step {}, the first run did {what_first}, \
         the second {what_second}. The model depends on something other than the schedule.",
        at + 1
    ))
}

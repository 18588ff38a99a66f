//! The exploration's deadline, seen from inside an explorer: computing what
//! to run next (POR's conflicting extensions, spikes and comb on a big
//! unfolding; the revisit explorer's alternatives of a long execution) can
//! take long, and `max_duration` must stop it there too, not only between
//! executions.

use std::cell::Cell;
use std::time::Instant;

/// How many checks go by between two looks at the clock.
const CLOCK_EVERY: u32 = 256;

/// A deadline checked cheaply from hot loops; once passed it stays passed.
#[derive(Default)]
pub(crate) struct Budget {
    deadline: Option<Instant>,
    checks: Cell<u32>,
    expired: Cell<bool>,
}

impl Budget {
    /// Sets (or clears) the deadline.
    pub(crate) fn set(&mut self, deadline: Option<Instant>) {
        self.deadline = deadline;
    }

    /// Whether the deadline has passed (the clock is read at the first call
    /// and then every [`CLOCK_EVERY`] calls).
    pub(crate) fn expired(&self) -> bool {
        if self.expired.get() {
            return true;
        }
        let Some(deadline) = self.deadline else {
            return false;
        };
        let n = self.checks.get().wrapping_add(1);
        self.checks.set(n);
        if n % CLOCK_EVERY == 1 && Instant::now() >= deadline {
            self.expired.set(true);
        }
        self.expired.get()
    }

    /// Whether the deadline has passed, reading the clock now (for loops
    /// whose every round may take long).
    pub(crate) fn expired_now(&self) -> bool {
        if !self.expired.get() && self.deadline.is_some_and(|d| Instant::now() >= d) {
            self.expired.set(true);
        }
        self.expired.get()
    }

    /// Whether the deadline was found passed, without checking again.
    pub(crate) fn was_hit(&self) -> bool {
        self.expired.get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_passed_deadline_is_noticed_within_a_round_of_checks_and_stays() {
        let mut budget = Budget::default();
        assert!(!budget.expired(), "no deadline");
        budget.set(Some(Instant::now()));
        assert!(budget.expired(), "the first check reads the clock");
        assert!(budget.was_hit() && budget.expired());
    }
}

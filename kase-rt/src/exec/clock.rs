//! Vector clocks indexed by [`ThreadIdx`].

use super::action::ThreadIdx;

/// A vector clock: for each thread, how many of its events are known.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct VectorClock(Vec<u32>);

impl VectorClock {
    /// The empty clock (nothing known).
    pub fn new() -> Self {
        VectorClock(Vec::new())
    }

    /// Sets the component of `thread`.
    pub fn set(&mut self, thread: ThreadIdx, value: u32) {
        let i = thread.index();
        if self.0.len() <= i {
            self.0.resize(i + 1, 0);
        }
        self.0[i] = value;
    }

    /// The component of `thread`.
    pub fn get(&self, thread: ThreadIdx) -> u32 {
        self.0.get(thread.index()).copied().unwrap_or(0)
    }

    /// Pointwise maximum with `other`.
    pub fn join(&mut self, other: &VectorClock) {
        if self.0.len() < other.0.len() {
            self.0.resize(other.0.len(), 0);
        }
        for (mine, theirs) in self.0.iter_mut().zip(&other.0) {
            *mine = (*mine).max(*theirs);
        }
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.0.clear();
    }

    /// The components, trailing zeros trimmed, so equal clocks compare equal
    /// whatever their allocated length.
    pub fn as_slice(&self) -> &[u32] {
        let len = self.0.iter().rposition(|&c| c != 0).map_or(0, |i| i + 1);
        &self.0[..len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn join_is_pointwise_max_and_trims() {
        let mut a = VectorClock::new();
        a.set(ThreadIdx(0), 3);
        let mut b = VectorClock::new();
        b.set(ThreadIdx(2), 1);
        b.set(ThreadIdx(0), 1);
        a.join(&b);
        assert_eq!(a.as_slice(), &[3, 0, 1]);
        let mut c = VectorClock::new();
        c.set(ThreadIdx(5), 0);
        assert_eq!(c.as_slice(), &[] as &[u32]);
    }
}

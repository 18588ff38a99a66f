//! `loom::model` and `loom::model::Builder`: run a closure under every
//! behaviour kase's explorer distinguishes.

use std::path::PathBuf;
use std::time::Duration;

/// Checks `f` under every interleaving (and, for orderings weaker than
/// `SeqCst`, every execution Rust's memory model allows) that kase
/// distinguishes, with the settings of [`Builder::new`] (the `LOOM_*`
/// variables). Panics with kase's report at the first failure.
#[track_caller]
pub fn model<F>(f: F)
where
    F: Fn() + Sync + Send + 'static,
{
    Builder::new().check(f);
}

/// loom's model builder: its public fields, read from the `LOOM_*`
/// variables by [`Builder::new`], map onto kase's settings.
///
/// | field | `LOOM_*` variable | in kase |
/// |---|---|---|
/// | `preemption_bound` | `LOOM_MAX_PREEMPTIONS` | `Builder::preemption_bound` (the bounded search, after a trial without the bound that explores a small model whole: `KASE_UNBOUNDED_TRIAL`) |
/// | `max_branches` | `LOOM_MAX_BRANCHES` | `Builder::max_steps`: visible operations per execution |
/// | `max_permutations` | `LOOM_MAX_PERMUTATIONS` | `Builder::max_executions` |
/// | `max_duration` | `LOOM_MAX_DURATION` (seconds) | `Builder::max_duration` |
/// | `max_threads` | — | kase has no thread limit; kept for source compatibility |
/// | `checkpoint_file`, `checkpoint_interval` | `LOOM_CHECKPOINT_FILE`, `LOOM_CHECKPOINT_INTERVAL` | not supported: kase saves a failing schedule instead (`kase-regressions/`) |
/// | `location`, `log` | `LOOM_LOCATION`, `LOOM_LOG` | kase's reports always have source locations |
///
/// A budget (`max_permutations`, `max_duration`) that stops the exploration
/// early is accepted, as loom accepts it; a preemption bound is a bounded
/// search, complete up to the bound.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Builder {
    /// Most threads a model may use (loom's limit; kase has none).
    pub max_threads: usize,
    /// Most visible operations one execution may perform.
    pub max_branches: usize,
    /// Most executions to explore (`None`: all).
    pub max_permutations: Option<usize>,
    /// Most time to spend exploring (`None`: no limit).
    pub max_duration: Option<Duration>,
    /// Explore only executions with at most this many preemptions.
    pub preemption_bound: Option<usize>,
    /// loom's checkpoints (not supported: a failure's schedule is saved).
    pub checkpoint_file: Option<PathBuf>,
    /// How often loom would write its checkpoint.
    pub checkpoint_interval: usize,
    /// loom's location tracking (kase's reports always have locations).
    pub location: bool,
    /// loom's logging of each execution.
    pub log: bool,
    /// loom's explicit-exploration mode (not supported: ignored).
    pub expect_explicit_explore: bool,
}

/// loom's default `max_branches`.
const DEFAULT_MAX_BRANCHES: usize = 1_000;

impl Builder {
    /// The settings the `LOOM_*` environment variables give, or loom's
    /// defaults. A variable that does not parse is a panic naming it.
    pub fn new() -> Self {
        Builder {
            max_threads: crate::MAX_THREADS,
            max_branches: var("LOOM_MAX_BRANCHES").unwrap_or(DEFAULT_MAX_BRANCHES),
            max_permutations: var("LOOM_MAX_PERMUTATIONS"),
            max_duration: var("LOOM_MAX_DURATION").map(Duration::from_secs),
            preemption_bound: var("LOOM_MAX_PREEMPTIONS"),
            checkpoint_file: std::env::var_os("LOOM_CHECKPOINT_FILE").map(PathBuf::from),
            checkpoint_interval: var("LOOM_CHECKPOINT_INTERVAL").unwrap_or(20_000),
            location: std::env::var_os("LOOM_LOCATION").is_some(),
            log: std::env::var_os("LOOM_LOG").is_some(),
            expect_explicit_explore: false,
        }
    }

    /// loom's checkpoint file (not supported by kase: the setting is kept,
    /// and a failure's schedule is saved in `kase-regressions/` instead).
    pub fn checkpoint_file(&mut self, file: &str) -> &mut Self {
        self.checkpoint_file = Some(file.into());
        self
    }

    /// Checks `f` with these settings; panics with kase's report at the
    /// first failure.
    #[track_caller]
    pub fn check<F>(&self, f: F)
    where
        F: Fn() + Sync + Send + 'static,
    {
        // loom's `thread::spawn` works only inside a model.
        let _in_model = crate::thread::InModel::enter();
        let _lazy_statics = LazyStatics;
        self.kase().check(move || {
            crate::lazy::begin_execution();
            f();
            crate::lazy::end_execution();
        });
    }

    /// The kase builder these settings make (on top of kase's own `KASE_*`
    /// variables).
    pub fn kase(&self) -> kase_rt::Builder {
        let mut builder = kase_rt::Builder::new()
            .max_steps(self.max_branches as u64)
            // loom accepts what a budget explored.
            .allow_incomplete(true);
        if let Some(n) = self.max_permutations {
            builder = builder.max_executions(n as u64);
        }
        if let Some(d) = self.max_duration {
            builder = builder.max_duration(d);
        }
        if let Some(n) = self.preemption_bound {
            builder = builder.preemption_bound(n);
        }
        builder
    }
}

impl Default for Builder {
    fn default() -> Self {
        Builder::new()
    }
}

/// The number in environment variable `name`, if set.
fn var<T: std::str::FromStr>(name: &str) -> Option<T> {
    let value = std::env::var(name).ok()?;
    match value.trim().parse() {
        Ok(n) => Some(n),
        Err(_) => panic!("kase-loom: {name}={value:?} is not a number"),
    }
}

/// Leaves the lazy statics' model phase when the check ends, failed or not.
struct LazyStatics;

impl Drop for LazyStatics {
    fn drop(&mut self) {
        crate::lazy::leave();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_map_onto_kase_settings() {
        let mut builder = Builder::new();
        builder.max_branches = 50;
        builder.preemption_bound = Some(1);
        builder.max_permutations = Some(3);
        // A model with more than 3 executions within one preemption: the
        // budget stops it, accepted as loom accepts it.
        // (The bound applied at once: a trial without it would stop at
        // the budget first.)
        let report = builder.kase().unbounded_trial(0).explore(|| {
            use kase_rt::sync::atomic::{AtomicUsize, Ordering::SeqCst};
            let n = AtomicUsize::new(0);
            kase_rt::thread::scope(|s| {
                s.spawn(|| n.fetch_add(1, SeqCst));
                s.spawn(|| n.fetch_add(1, SeqCst));
                n.fetch_add(1, SeqCst);
            });
        });
        assert_eq!(report.executions(), 3);
        assert_eq!(report.preemption_bound(), Some(1));
        assert!(!report.complete());
    }
}

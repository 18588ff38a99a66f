//! One call of `Builder::explore`: replay the test's saved schedules, explore,
//! look for a simpler failure, save it, and report progress.

use std::path::PathBuf;
use std::time::Instant;

use crate::exec::error::UsageError;
use crate::report::events;
use crate::report::persist::{self, Persist, TestId};
use crate::report::progress::{self, Counts, Progress};
use crate::report::{FailureKind, Report, Saved, Schedule};

use super::search::explore;
use super::{
    bounded, exhaustive, minimize, por, revisit, Explorer, GraphExplorer, MemoryModel, Runner,
    Settings, Strategy, Trail,
};
use crate::settings::Spent;

/// Shows `warning` past the test harness's capture and keeps it in the
/// report.
fn warn(config: &Settings, report: &mut Report, warning: String) {
    crate::stderr::warn(test_name(config).as_deref(), &warning);
    report.warnings.push(warning);
}

/// The test's name for labelling messages (see `crate::stderr`).
fn test_name(config: &Settings) -> Option<String> {
    crate::stderr::test_name(config.test.as_ref().map(TestId::full_name))
}

/// The test's regression file, if persistence applies.
fn regression_file(config: &Settings) -> Option<(PathBuf, &TestId)> {
    let test = config.test.as_ref()?;
    if config.persist == Persist::Off {
        return None;
    }
    let path = persist::file_path(
        config.regressions_dir.as_deref(),
        config.crate_dir.as_deref(),
        test,
    );
    Some((path, test))
}

pub(crate) fn run(config: &Settings, model: &(dyn Fn() + Sync)) -> Report {
    let start = Instant::now();
    let name = config.test.as_ref().map(TestId::full_name);
    let hint = progress::Hint {
        max_executions: config.max_executions,
        max_duration: config.max_duration,
        preemption_bound: config.preemption_bound,
        peeking: config.peeking,
    };
    let mut progress = Progress::new(config.progress, name.as_deref(), hint);
    let trail = Trail::default();
    // A panic that gets here did not come from the model (model threads
    // catch their own): it is kase's, and becomes a report saying so. Only
    // kase's deliberate messages to the user (a `UsageError`, e.g. a stack
    // it could not allocate) go on, as their text (`kase: …`).
    let explored = crate::exec::panic::in_exploration(|| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            // Blocks std's allocator is slow to serve are kept from one
            // execution to the next, and released when the exploration ends.
            let _slow_blocks = crate::exec::heap::slow_blocks::enable();
            let mut runner = Runner::new(config, model, &trail);
            match &config.replay {
                Some(schedule) => replay(&mut runner, schedule, &mut progress),
                None => explore_test(config, &mut runner, &mut progress),
            }
        }))
    });
    let mut report = match explored {
        Ok(report) => report,
        Err(payload) => {
            if let Some(usage) = payload.downcast_ref::<UsageError>() {
                std::panic::resume_unwind(Box::new(usage.to_string()));
            }
            let mut report = Report::empty();
            report.executions = trail.executions();
            report.failure = Some(trail.internal_failure(&*payload));
            report
        }
    };
    if let (Some(test), Some(failure)) = (&config.test, &mut report.failure) {
        let command = test.replay_command(failure.schedule());
        failure.set_replay_command(command);
    }
    report.duration = start.elapsed();
    progress.finish(&report);
    if let Some(failure) = &report.failure {
        events::failure(name.as_deref(), failure);
    }
    report
}

/// `Builder::replay`: exactly one execution.
fn replay(runner: &mut Runner<'_>, schedule: &Schedule, progress: &mut Progress) -> Report {
    let mut report = Report::empty();
    let (failure, replay) = runner.replay(schedule);
    report.executions = 1;
    progress.tick(
        Counts {
            executions: 1,
            sleep_set_blocked: 0,
            depth: replay.steps(),
        },
        &|| None,
    );
    report.complete = failure.is_none();
    report.failure = failure;
    report
}

fn explore_test(config: &Settings, runner: &mut Runner<'_>, progress: &mut Progress) -> Report {
    let mut report = Report::empty();
    let file = regression_file(config);

    // 1. The schedules saved for this test, before anything else.
    if let Some((path, test)) = &file {
        let entries = match persist::load(path, test) {
            Ok((entries, warnings)) => {
                for w in warnings {
                    warn(config, &mut report, w);
                }
                entries
            }
            Err(e) => {
                warn(
                    config,
                    &mut report,
                    format!(
                        "kase: warning: cannot read the regression file {}: {e}",
                        persist::shown(path)
                    ),
                );
                Vec::new()
            }
        };
        for entry in entries {
            let (failure, replay) = runner.replay(&entry.schedule);
            report.replayed += 1;
            report.executions += 1;
            let counts = Counts {
                executions: report.executions,
                sleep_set_blocked: 0,
                depth: replay.steps(),
            };
            progress.tick(counts, &|| None);
            let recorded = if entry.comment.is_empty() {
                String::new()
            } else {
                format!(" (when saved: {})", entry.comment)
            };
            let at = format!("{}:{}", persist::shown(path), entry.line);
            match failure {
                Some(f) if f.kind() == FailureKind::Nondeterminism => {
                    let why = f.to_string();
                    let why = why.split("\n\nInterleaving").next().unwrap_or_default();
                    warn(
                        config,
                        &mut report,
                        format!(
                            "kase: warning: {at}: the saved schedule {} of `{}` is stale{recorded}: it no \
                             longer fits the code, so it was skipped; delete the line if the test changed on \
                             purpose.\n{}",
                            entry.schedule,
                            test.name,
                            indent(why)
                        ),
                    );
                }
                Some(mut f) => {
                    f.set_origin(path.clone(), entry.line);
                    report.failure = Some(f);
                    return report;
                }
                None => warn(
                    config,
                    &mut report,
                    format!(
                        "kase: warning: {at}: the saved schedule {} of `{}` no longer fails{recorded}; keep \
                         the line as a regression check or delete it",
                        entry.schedule, test.name
                    ),
                ),
            }
        }
    }

    // 2. Explore: under a preemption bound, first without it while the
    // model is small; under a time budget, deepening the bound.
    let explored = match config.preemption_bound {
        Some(bound) => bounded(config, runner, progress, bound),
        None => explore_once(config, runner, progress),
    };
    let mut explored = explored;
    if let (Some(bound), None, None, true, false) = (
        explored.preemption_bound,
        &explored.failure,
        &explored.stopped_by,
        explored.complete_within_bound,
        explored.complete,
    ) {
        let note = format!(
            "kase: note: no failure in any execution with at most {}, but the bound left some \
             executions out: the result holds only up to it.",
            crate::report::preemptions(bound)
        );
        warn(config, &mut explored, note);
    }
    if explored.cut && explored.failure.is_none() && explored.stopped_by.is_none() {
        let note = "kase: note: no failure in the executions explored, but the model asked for \
                    some choices not to be explored (stop_exploring, skip_branch): the result \
                    holds only for the executions explored."
            .to_string();
        warn(config, &mut explored, note);
    }
    let mut warnings = std::mem::take(&mut report.warnings);
    warnings.extend(explored.warnings.iter().cloned());
    let replayed = report.replayed;
    report = Report {
        executions: explored.executions + replayed,
        replayed,
        warnings,
        ..explored
    };

    // 3. A simpler interleaving with the same failure (not for kase's own
    // errors: its state may be inconsistent).
    if let Some(first) = report
        .failure
        .take_if(|f| f.kind() != FailureKind::Internal)
    {
        let explored = report.executions - report.replayed;
        report.failure = Some(minimize::simplify(runner, config, first, explored));
    }

    // 4. Save it.
    if let (Some((path, test)), Some(failure)) = (&file, &mut report.failure) {
        if !matches!(
            failure.kind(),
            FailureKind::Nondeterminism | FailureKind::Internal
        ) {
            match config.persist {
                Persist::Print => {
                    let line = persist::line(test, failure);
                    crate::stderr::warn(
                        test_name(config).as_deref(),
                        &format!("kase: add this line to {}:\n{line}", persist::shown(path)),
                    );
                    failure.set_saved(Saved::Printed {
                        path: path.clone(),
                        line,
                    });
                }
                _ => match persist::append(path, test, failure) {
                    Ok(_) => failure.set_saved(Saved::File(path.clone())),
                    Err(e) => {
                        let warning = format!(
                            "kase: warning: cannot write the regression file {}: {e}",
                            persist::shown(path)
                        );
                        crate::stderr::warn(test_name(config).as_deref(), &warning);
                        report.warnings.push(warning);
                    }
                },
            }
        }
    }
    report
}

/// One exploration with `config`'s explorer; again without peeking if
/// peeking turned out unsafe here, and over RC11's execution graphs once
/// an atomic access weaker than `SeqCst` shows that interleavings do not
/// cover RC11 (both discard what was explored).
fn explore_once(config: &Settings, runner: &mut Runner<'_>, progress: &mut Progress) -> Report {
    // `reduced`: the reduction has not given up on this model yet.
    // `ordering_yields`: a spin waited for another thread to run, so the
    // bounded reduction orders yields with every step (`bounded.rs`).
    let explorer = |config: &Settings,
                    graphs: bool,
                    reduced: bool,
                    ordering_yields: bool|
     -> Box<dyn Explorer> {
        match (graphs, config.preemption_bound, config.strategy) {
            // Under a preemption bound: bounded partial-order reduction, or
            // the bounded oracle where it gives the model up.
            (_, Some(bound), Strategy::Por) if reduced => {
                let dpor = bounded::BoundedDpor::new(bound, graphs);
                Box::new(if ordering_yields {
                    dpor.ordering_yields()
                } else {
                    dpor
                })
            }
            (_, Some(bound), _) => Box::new(exhaustive::Dfs::bounded(bound)),
            (_, None, Strategy::Exhaustive) => Box::<exhaustive::Dfs>::default(),
            // Every graph once (`revisit.rs`), or, for models with locks and
            // other shim objects, every graph once to the end
            // (`canonical.rs`).
            (true, None, Strategy::Por) if reduced => Box::<revisit::Revisit>::default(),
            (true, None, Strategy::Por) => Box::new(exhaustive::Dfs::canonical()),
            (false, None, Strategy::Por) if reduced => Box::new(por::Por::new(config.alternatives)),
            // A spin over several objects (`exec/spin`): every interleaving.
            (false, None, Strategy::Por) => Box::<exhaustive::Dfs>::default(),
        }
    };
    let (mut discarded, mut warnings, mut graphs) = (0, Vec::new(), None);
    if config.graphs_from_start && config.memory_model == MemoryModel::Rc11 {
        runner.set_weak(true);
        graphs = Some("asked for from the first execution on".to_owned());
    }
    if runner.weak() {
        // Peeking is a reduction for sequential consistency.
        runner.set_peeking(false);
    } else {
        runner.set_peeking(config.peeking);
    }
    let (mut reduced, mut because, mut ordering_yields) = (true, None, false);
    let start = Instant::now();
    loop {
        let settings = Settings {
            peeking: runner.peeking(),
            // The budgets hold for what was discarded too.
            spent: config.spent.plus(discarded, start.elapsed()),
            ..config.clone()
        };
        let mut explored = explore(
            &settings,
            runner,
            explorer(&settings, runner.weak(), reduced, ordering_yields),
            progress,
        );
        if let Some(reason) = explored.peek_fallback.take() {
            let n = explored.executions;
            let warning = format!(
                "kase: note: critical-section peeking was turned off for this model after {n} \
                 execution{}, which {} discarded: {reason}. Exploring again without peeking.",
                if n == 1 { "" } else { "s" },
                if n == 1 { "is" } else { "are" }
            );
            crate::stderr::warn(test_name(config).as_deref(), &warning);
            warnings.push(warning);
            discarded += n;
            runner.set_peeking(false);
            continue;
        }
        if let Some(why) = explored.explorer_fallback.take() {
            discarded += explored.executions;
            let n = explored.executions;
            let plural = if n == 1 { "" } else { "s" };
            if explored.fallback_orders_yields && !ordering_yields {
                // A spin that waits for another thread to run: the bounded
                // reduction takes it once it orders yields with every step.
                ordering_yields = true;
                let warning = format!(
                    "kase: note: {why}; the bounded partial-order reduction now orders every yield \
                     with every other operation, after {n} discarded execution{plural}."
                );
                crate::stderr::warn(test_name(config).as_deref(), &warning);
                warnings.push(warning);
                continue;
            }
            reduced = false;
            let warning = match config.preemption_bound {
                Some(bound) => Some(format!(
                    "kase: note: the bounded partial-order reduction does not take this model \
                     ({why}); exploring every interleaving with at most {} instead, after {n} \
                     discarded execution{plural}.",
                    crate::report::preemptions(bound)
                )),
                // Over RC11's graphs the report names the explorer.
                None if runner.weak() => None,
                // A bound is set: this is the trial without it.
                None if config.trial_limit.is_some() => Some(format!(
                    "kase: note: the partial-order reduction does not take this model ({why}); \
                     trying every interleaving without the preemption bound first, after {n} \
                     discarded execution{plural}."
                )),
                None => Some(format!(
                    "kase: note: the partial-order reduction does not take this model ({why}); \
                     exploring every interleaving instead, after {n} discarded execution{plural}. \
                     A preemption bound (KASE_MAX_PREEMPTIONS=2) keeps a big model small."
                )),
            };
            if let Some(warning) = warning {
                crate::stderr::warn(test_name(config).as_deref(), &warning);
                warnings.push(warning);
            }
            because = Some(why);
            continue;
        }
        if let Some(why) = explored.rc11_fallback.take() {
            discarded += explored.executions;
            // The graph reduction gets its own chance.
            (reduced, because) = (true, None);
            graphs = Some(why);
            runner.set_weak(true);
            runner.set_peeking(false);
            continue;
        }
        explored.executions += discarded;
        explored.discarded = discarded;
        warnings.append(&mut explored.warnings);
        explored.warnings = warnings;
        if runner.weak() {
            explored.graphs = Some(graphs.unwrap_or_else(|| "an RC11 schedule".to_owned()));
            explored.graph_explorer =
                Some(match (config.preemption_bound, config.strategy, because) {
                    (None, Strategy::Por, None) => GraphExplorer::Revisits,
                    (None, Strategy::Por, Some(because)) => GraphExplorer::Canonical { because },
                    (Some(_), Strategy::Por, None) => GraphExplorer::BoundedReduction,
                    _ => GraphExplorer::Exhaustive,
                });
        }
        return explored;
    }
}

/// Under a preemption bound: first the search without it, for at most
/// `unbounded_trial` executions. A model that small is then explored
/// completely, in fewer executions than the bounded search takes (that one
/// may run a graph more than once), and the result holds without a bound.
/// If the trial does not finish, it is discarded and the bounded search
/// starts (deepening the bound under a time budget). A failure or a budget
/// met during the trial ends the exploration there, as anywhere.
fn bounded(
    config: &Settings,
    runner: &mut Runner<'_>,
    progress: &mut Progress,
    bound: usize,
) -> Report {
    let with_bound =
        |config: &Settings, runner: &mut Runner<'_>, progress: &mut Progress| match config
            .max_duration
        {
            Some(_) => deepen(config, runner, progress, bound),
            None => explore_once(config, runner, progress),
        };
    // The oracle stays bounded: it is what the bounded reduction is
    // checked against.
    if config.unbounded_trial == 0 || config.strategy != Strategy::Por {
        return with_bound(config, runner, progress);
    }
    let start = Instant::now();
    let trial = Settings {
        preemption_bound: None,
        trial_limit: Some(config.spent.executions + config.unbounded_trial),
        ..config.clone()
    };
    let mut trial = explore_once(&trial, runner, progress);
    if !trial.trial_exceeded {
        return trial;
    }
    let settings = Settings {
        spent: config.spent.plus(trial.executions, start.elapsed()),
        // Once peeking was found unsafe for this model, it stays off.
        peeking: trial.peeking,
        ..config.clone()
    };
    let mut report = with_bound(&settings, runner, progress);
    report.executions += trial.executions;
    report.discarded += trial.executions;
    trial.warnings.append(&mut report.warnings);
    report.warnings = trial.warnings;
    report
}

/// Iterative deepening: explores with at most 0 preemptions, then 1, …, up
/// to `bound`, within `config`'s budgets, so that the first bugs come fast.
/// Each round re-runs the executions of the rounds before it (the DFS is
/// stateless); all are counted. Stops at a failure, a budget, or a round the
/// bound left nothing out of (the search is then complete). The report is
/// the last round's, with the bound it holds up to: the deepest bound
/// explored fully.
fn deepen(
    config: &Settings,
    runner: &mut Runner<'_>,
    progress: &mut Progress,
    bound: usize,
) -> Report {
    let start = Instant::now();
    let (mut executions, mut discarded) = (0, 0);
    let mut warnings = Vec::new();
    let mut peeking = config.peeking;
    let mut round = 0;
    loop {
        let settings = Settings {
            preemption_bound: Some(round),
            // The budgets hold for all rounds together.
            spent: Spent {
                complete_up_to: round.checked_sub(1),
                ..config.spent.plus(executions, start.elapsed())
            },
            // Once peeking was found unsafe for this model, it stays off.
            peeking,
            ..config.clone()
        };
        let mut report = explore_once(&settings, runner, progress);
        executions += report.executions;
        discarded += report.discarded;
        warnings.append(&mut report.warnings);
        peeking = report.peeking;
        let stopped = report.stopped_by.is_some();
        if stopped {
            // This round is unfinished: the result holds up to the one before.
            report.preemption_bound = round.checked_sub(1);
            report.complete_within_bound = round > 0;
        }
        if report.complete {
            report.preemption_bound = Some(bound);
        }
        if stopped || report.complete || report.failure.is_some() || round == bound {
            report.executions = executions;
            report.discarded = discarded;
            report.warnings = warnings;
            return report;
        }
        progress.round_done(round, report.executions);
        round += 1;
    }
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

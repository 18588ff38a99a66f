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
use super::{exhaustive, minimize, por, Explorer, Runner, Settings, Strategy, Trail};

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
    let hint = progress::hint(config.max_executions, config.max_duration, config.peeking);
    let mut progress = Progress::new(config.progress, name.as_deref(), hint);
    let trail = Trail::default();
    // A panic that gets here did not come from the model (model threads
    // catch their own): it is kase's, and becomes a report saying so. Only
    // kase's deliberate messages to the user (a `UsageError`, e.g. a stack
    // it could not allocate) go on, as their text (`kase: …`).
    let explored = crate::exec::panic::in_exploration(|| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
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
    progress.tick(Counts {
        executions: 1,
        sleep_set_blocked: 0,
        depth: replay.steps(),
    });
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
            progress.tick(Counts {
                executions: report.executions,
                sleep_set_blocked: 0,
                depth: replay.steps(),
            });
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

    // 2. Explore; again without peeking if peeking turned out unsafe here.
    let explorer = |config: &Settings| -> Box<dyn Explorer> {
        match config.strategy {
            Strategy::Exhaustive => Box::<exhaustive::Dfs>::default(),
            Strategy::Por => Box::new(por::Por::new(config.alternatives)),
        }
    };
    runner.set_peeking(config.peeking);
    let mut explored = explore(config, runner, explorer(config), progress);
    if let Some(reason) = explored.peek_fallback.take() {
        let discarded = explored.executions;
        let warning = format!(
            "kase: note: critical-section peeking was turned off for this model after {discarded} \
             execution{}, which {} discarded: {reason}. Exploring again without peeking.",
            if discarded == 1 { "" } else { "s" },
            if discarded == 1 { "is" } else { "are" }
        );
        crate::stderr::warn(test_name(config).as_deref(), &warning);
        runner.set_peeking(false);
        let unpeeked = Settings {
            peeking: false,
            ..config.clone()
        };
        let mut again = explore(&unpeeked, runner, explorer(&unpeeked), progress);
        again.executions += discarded;
        again.discarded = discarded;
        again.warnings.insert(0, warning);
        explored = again;
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

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

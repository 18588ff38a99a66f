//! One exploration: runs an [`Explorer`]'s executions until it is done, a
//! failure is found, or a budget runs out.

use std::collections::HashSet;
use std::time::Instant;

use crate::exec::{self, Outcome};
use crate::report::progress::{Counts, Progress};
use crate::report::Report;
use crate::settings::Settings;

use super::runner::{failure, Runner};
use super::unseen::{self, OsThreads};
use super::{determinism, trace, Explorer, MemoryModel};

/// Runs `explorer` until it is done, a failure is found, or a budget runs
/// out.
pub(super) fn explore(
    config: &Settings,
    runner: &mut Runner<'_>,
    mut explorer: Box<dyn Explorer>,
    progress: &mut Progress,
) -> Report {
    // The DFS (the oracle, bounded or not) counts traces.
    let reduction = explorer.reduces();
    // Under RC11 graphs are counted always: the reduction's claim is one
    // execution per graph. Under a preemption bound the reduction may run
    // a trace more than once, so its traces are counted too.
    let count_traces = !reduction || runner.weak() || config.preemption_bound.is_some();
    let mut fingerprinter = trace::GraphFingerprinter::default();
    // Only the interleavings' trace fingerprint reads the events' dependence
    // clocks (and peeking, which keeps them): a reduction without it, or
    // RC11's graphs, need not pay for them at every step.
    runner.set_dependence_clocks(count_traces && !runner.weak());
    if runner.weak() {
        progress.over_rc11();
    }
    let mut traces = HashSet::new();
    let start = Instant::now();
    let mut report = Report {
        peeking: runner.peeking(),
        preemption_bound: config.preemption_bound,
        reduction,
        memory_model: config.memory_model,
        ..Report::empty()
    };
    // The budgets hold for the whole call: less of them is left after
    // explorations it discarded.
    let spent = config.spent;
    let deadline = config
        .max_duration
        .map(|max| start + max.saturating_sub(spent.time));
    explorer.set_deadline(deadline);
    // Signs that kase cannot see the model, from its first execution.
    let mut unseen = Vec::new();
    let test = config.test.as_ref().map(|t| t.full_name());
    loop {
        if let Some(max) = config
            .max_executions
            .filter(|&max| spent.executions + report.executions >= max)
        {
            report.stopped_by = Some(format!("max_executions = {max}"));
            break;
        }
        if let Some(max) = config
            .max_duration
            .filter(|&max| spent.time + start.elapsed() >= max)
        {
            report.stopped_by = Some(format!("max_duration = {max:?}"));
            break;
        }
        if let Some(limit) = config.trial_limit {
            if spent.executions + report.executions >= limit
                || trial_too_big(report.executions, limit - spent.executions, || {
                    explorer.explored()
                })
            {
                report.trial_exceeded = true;
                break;
            }
        }
        let os_threads = (report.executions == 0).then(|| OsThreads::first_of(test.as_deref()));
        let Some(mut outcome) = runner.execute_until(&mut *explorer, deadline) else {
            // An execution still running at the deadline: cut, not counted.
            let max = config.max_duration.unwrap_or_default();
            report.stopped_by = Some(format!(
                "max_duration = {max:?} (during execution {})",
                spent.executions + report.executions + 1
            ));
            break;
        };
        report.executions += 1;
        if let Some(os_threads) = os_threads {
            unseen.extend(unseen::nothing_visible(&outcome));
            unseen.extend(os_threads.spawned_since());
        }
        if config.memory_model == MemoryModel::Rc11 && !runner.weak() {
            if let Some(why) = outcome.weaker_ordering.take() {
                // Interleavings do not show every RC11 behaviour of this
                // model: the caller explores its execution graphs instead.
                report.rc11_fallback = Some(why);
                runner.reclaim(outcome);
                break;
            }
        }
        if let Some(reason) = peeking_unsound(&mut outcome) {
            // The reduced exploration may have missed behaviours: the caller
            // explores again without peeking (POR-DESIGN.md).
            report.peek_fallback = Some(reason);
            runner.reclaim(outcome);
            break;
        }
        if count_traces && outcome.fault.is_none() && !outcome.redundant {
            traces.insert(match &outcome.weak {
                Some(weak) => fingerprinter.fingerprint(&outcome.events, weak),
                None => trace::fingerprint(&outcome.events, &outcome.clocks),
            });
        }
        let next = explorer.advance(&outcome);
        if let Some(why) = explorer.unsupported() {
            // The caller explores with an explorer that takes this model.
            report.explorer_fallback = Some(why);
            report.fallback_orders_yields = explorer.takes_it_ordering_yields();
            runner.reclaim(outcome);
            break;
        }
        progress.tick(
            Counts {
                executions: report.executions,
                sleep_set_blocked: explorer.redundant(),
                depth: outcome.events.len(),
            },
            &|| explorer.explored(),
        );
        if let Err(message) = &next {
            if outcome.fault.is_none() {
                outcome.fault = Some(exec::Fault::Divergence {
                    message: message.clone(),
                });
            }
        }
        if let Some(fault) = outcome.fault.take() {
            report.failure = Some(failure(fault, &outcome));
            break;
        }
        if config.check_determinism && !outcome.redundant {
            let (events, choices, weak) = (
                std::mem::take(&mut outcome.events),
                outcome.schedule.clone(),
                outcome.weak_schedule.clone(),
            );
            runner.reclaim(outcome);
            let mut again = runner.execute(&mut determinism::Follow::new(choices, weak));
            let differs = match again.fault.take() {
                Some(exec::Fault::Divergence { message }) => Some(message),
                _ => determinism::first_difference(&events, &again.events),
            };
            if let Some(message) = differs {
                report.failure = Some(failure(exec::Fault::Divergence { message }, &again));
                break;
            }
            outcome = again;
        }
        runner.reclaim(outcome);
        if next == Ok(false) {
            if explorer.interrupted() {
                let max = config.max_duration.unwrap_or_default();
                report.stopped_by = Some(format!(
                    "max_duration = {max:?} (while computing what to run after execution {})",
                    spent.executions + report.executions
                ));
            } else {
                // Within the bound everything was explored; beyond it only
                // if the bound left nothing out.
                // The model's exploration controls (kase-loom) may have
                // left choices out within the bound too.
                report.cut = explorer.cut();
                report.complete_within_bound = config.preemption_bound.is_some() && !report.cut;
                report.complete = !explorer.pruned() && !report.cut;
            }
            break;
        }
    }
    report.duration = start.elapsed();
    report.sleep_set_blocked = explorer.redundant();
    report.peak_events = explorer.peak_events();
    if count_traces {
        report.traces = Some(traces.len() as u64);
    }
    let test = crate::stderr::test_name(config.test.as_ref().map(|t| t.full_name()));
    // (A trial's hold for the model whatever follows it: the check for OS
    // threads runs once per test, and a model with nothing visible has one
    // execution, so its trial is never discarded.)
    if report.failure.is_none() {
        for warning in unseen {
            crate::stderr::warn(test.as_deref(), &warning);
            report.warnings.push(warning);
        }
    }
    if let Some(budget) = &report.stopped_by {
        // An earlier round of the iterative deepening was complete.
        let within = match spent.complete_up_to {
            Some(bound) => format!(
                " Every execution with at most {} was explored before (an earlier round of the \
                 iterative deepening), with no failure: the result holds up to that bound.",
                crate::report::preemptions(bound)
            ),
            None => String::new(),
        };
        let warning = format!(
            "kase: WARNING: exploration stopped by {budget} after {} executions; the result is INCOMPLETE \
             (behaviours may be left unexplored).{within} Raise the budget to explore everything{}.{}",
            spent.executions + report.executions,
            if config.allow_incomplete {
                ""
            } else {
                ", or allow an incomplete result (allow_incomplete, KASE_ALLOW_INCOMPLETE=1)"
            },
            if runner.weak() {
                format!(" {}.", crate::report::progress::RC11_ADVICE)
            } else {
                String::new()
            }
        );
        crate::stderr::warn(test.as_deref(), &warning);
        report.warnings.push(warning);
    }
    report
}

/// Executions a trial runs before its explorer's estimate may end it.
const TRIAL_ESTIMATE_AFTER: u64 = 32;

/// Whether a trial that ran `executions` of its `budget` should give up
/// early: the explorer estimates (`explored`, the part of its tree done,
/// asked only once the trial ran a few executions) that the whole search
/// needs several times the budget. The estimate is rough early on, so it
/// is trusted only by a wide margin; giving up wrongly only costs the
/// bounded search the trial would have spared.
fn trial_too_big(executions: u64, budget: u64, explored: impl FnOnce() -> Option<f64>) -> bool {
    executions >= TRIAL_ESTIMATE_AFTER
        && explored().is_some_and(|part| executions as f64 > 4.0 * budget as f64 * part)
}

/// Why `outcome` shows that peeking may miss behaviours, if it does: a D1
/// violation, or a data race under peeking's happens-before.
fn peeking_unsound(outcome: &mut Outcome) -> Option<String> {
    if let Some(reason) = outcome.peek_violation.take() {
        return Some(reason);
    }
    match outcome.fault.take() {
        Some(exec::Fault::PeekingUnsound { reason }) => Some(reason),
        other => {
            outcome.fault = other;
            None
        }
    }
}

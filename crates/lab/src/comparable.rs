//! Whether two results files ran on comparable machines, for `lab compare`: a regression
//! called between a quiet machine and a busy one, or between two CPU models, is the
//! machine's, not the code's.
//!
//! Three checks, each skipped where a file predates what it needs:
//! - the host kind: CPU model, CPUs available, and debug against release builds;
//! - the reference measurement (`env.reference`, a fixed single-thread loop timed every
//!   round): the two medians within [`REFERENCE_TOLERANCE`] of each other;
//! - the interference: the median load (other processes' CPU plus steal) of each run's
//!   cells within the run's retake threshold (or [`crate::retake::DEFAULT_THRESHOLD`]);
//! - the machine's speed by the canary (`env.machine_speed`): each run's kept repetitions
//!   within [`STEADY`] of its usual speed (p10 and p90), and the two usual canaries within
//!   [`CANARY_TOLERANCE`] of each other. A host neighbour that slows the machine in phases
//!   shows here and nowhere else.
//!
//! Not here: judging cells (`compare`).

use crate::results::ResultsFile;

/// How far apart (as a fraction of the faster) the two runs' reference medians may be:
/// repeated quiet runs on one machine agree within a few percent, while another clock
/// speed or CPU generation moves it by tens.
pub const REFERENCE_TOLERANCE: f64 = 0.10;

/// How far from its usual speed a run's p10 or p90 repetition may have run for the run to
/// count as steady: beyond it, a difference of a cell's median between two runs may be a
/// phase of the machine that one run's repetitions caught more of.
pub const STEADY: f64 = 0.20;

/// How far apart (as a fraction of the faster) the two runs' usual canaries may be.
pub const CANARY_TOLERANCE: f64 = 0.25;

/// Why the machines behind `base` and `new` are not comparable, as one phrase, or `None`
/// when they are (as far as the files tell).
pub fn difference(base: &ResultsFile, new: &ResultsFile) -> Option<String> {
    let (b, n) = (&base.env, &new.env);
    let mut why = Vec::new();
    let known = |s: &str| !s.is_empty() && s != "unknown";
    if known(&b.cpu_model) && known(&n.cpu_model) && b.cpu_model != n.cpu_model {
        why.push(format!(
            "CPU {} in base, {} in new",
            b.cpu_model, n.cpu_model
        ));
    }
    if b.nproc > 0 && n.nproc > 0 && b.nproc != n.nproc {
        why.push(format!("{} CPUs in base, {} in new", b.nproc, n.nproc));
    }
    if b.debug_build != n.debug_build {
        let which = if b.debug_build { "base" } else { "new" };
        why.push(format!("{which} is a debug build"));
    }
    let timed = [
        (
            "the reference loop",
            b.reference.as_ref().map(|r| r.median_ms),
            n.reference.as_ref().map(|r| r.median_ms),
            REFERENCE_TOLERANCE,
        ),
        (
            "the canary",
            b.machine_speed.as_ref().map(|s| s.usual_canary_ms),
            n.machine_speed.as_ref().map(|s| s.usual_canary_ms),
            CANARY_TOLERANCE,
        ),
    ];
    for (what, base_ms, new_ms, tolerance) in timed {
        if let (Some(base_ms), Some(new_ms)) = (base_ms, new_ms) {
            why.extend(apart(what, base_ms, new_ms, tolerance));
        }
    }
    for (name, file) in [("base", base), ("new", new)] {
        if let Some(s) = file.env.machine_speed.as_ref() {
            if s.p10 < 1.0 - STEADY || s.p90 > 1.0 + STEADY {
                why.push(format!(
                    "the machine's speed moved {:.2}x-{:.2}x (p10-p90, by the canary) during {name}, beyond {:.2}x-{:.2}x",
                    s.p10,
                    s.p90,
                    1.0 - STEADY,
                    1.0 + STEADY
                ));
            }
        }
        if let Some((load, bound)) = busy(file) {
            why.push(format!(
                "{name} ran beside other work (a median {load:.2} CPU of other processes during its windows, above {bound:.2})"
            ));
        }
    }
    (!why.is_empty()).then(|| why.join("; "))
}

/// "`what` took .. ms in base and .. ms in new (..% apart, more than ..%)" when the two
/// timings are further apart than `tolerance` (a fraction of the faster).
fn apart(what: &str, base_ms: f64, new_ms: f64, tolerance: f64) -> Option<String> {
    let (lo, hi) = (base_ms.min(new_ms), base_ms.max(new_ms));
    (lo > 0.0 && hi / lo - 1.0 > tolerance).then(|| {
        format!(
            "{what} took {base_ms:.2} ms in base and {new_ms:.2} ms in new ({:.0}% apart, more than {:.0}%)",
            (hi / lo - 1.0) * 100.0,
            tolerance * 100.0
        )
    })
}

/// The run's median load and its bound, when the load is above the bound.
fn busy(file: &ResultsFile) -> Option<(f64, f64)> {
    let loads: Vec<f64> = file
        .cells
        .iter()
        .filter(|c| c.usable())
        .filter_map(|c| c.interference.as_ref().map(|i| i.load()))
        .collect();
    if loads.is_empty() {
        return None;
    }
    let load = harness::stats::median(&loads);
    let bound = file
        .env
        .interference_threshold
        .unwrap_or(crate::retake::DEFAULT_THRESHOLD);
    (load > bound).then_some((load, bound))
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness::env::Reference;
    use harness::interference::Interference;

    fn file(reference_ms: Option<f64>) -> ResultsFile {
        let mut f: ResultsFile = serde_json::from_value(serde_json::json!({
            "schema": 1, "run_id": "x", "started": "", "env": {
                "cpu_model": "Some CPU", "nproc": 2, "kernel": "", "rustc": "",
                "git_commit": "", "hostname": "", "affinity": "0-1"
            }, "cells": []
        }))
        .unwrap();
        f.env.reference = reference_ms.map(|ms| Reference {
            work: "w".into(),
            per_round_ms: vec![ms],
            median_ms: ms,
        });
        f
    }

    #[test]
    fn same_machine_same_speed_is_comparable() {
        assert_eq!(difference(&file(Some(10.0)), &file(Some(10.5))), None);
        // Files from before the reference: nothing to tell from it.
        assert_eq!(difference(&file(None), &file(Some(30.0))), None);
    }

    fn speed(usual_canary_ms: f64, p10: f64, p90: f64) -> Option<harness::env::MachineSpeed> {
        Some(harness::env::MachineSpeed {
            usual_canary_ms,
            p10,
            p50: 1.0,
            p90,
            repetitions: 100,
            ..Default::default()
        })
    }

    #[test]
    fn an_unsteady_machine_or_another_canary_differs() {
        let (mut base, mut new) = (file(Some(10.0)), file(Some(10.0)));
        base.env.machine_speed = speed(1.3, 0.9, 1.1);
        new.env.machine_speed = speed(1.4, 0.95, 1.05);
        assert_eq!(difference(&base, &new), None, "steady, canaries 8% apart");
        new.env.machine_speed = speed(1.4, 0.55, 1.34);
        let why = difference(&base, &new).unwrap();
        assert!(
            why.contains("moved 0.55x-1.34x (p10-p90, by the canary) during new"),
            "{why}"
        );
        new.env.machine_speed = speed(2.0, 0.9, 1.1);
        let why = difference(&base, &new).unwrap();
        assert!(
            why.contains("the canary took 1.30 ms in base and 2.00 ms in new"),
            "{why}"
        );
    }

    #[test]
    fn a_reference_thirty_percent_apart_differs() {
        let why = difference(&file(Some(10.0)), &file(Some(13.0))).unwrap();
        assert!(
            why.contains("10.00 ms in base and 13.00 ms in new (30% apart"),
            "{why}"
        );
    }

    #[test]
    fn another_cpu_or_a_busy_run_differs() {
        let mut other = file(Some(10.0));
        other.env.cpu_model = "Other CPU".into();
        other.env.nproc = 4;
        let why = difference(&file(Some(10.0)), &other).unwrap();
        assert!(
            why.contains("CPU Some CPU in base, Other CPU in new"),
            "{why}"
        );
        assert!(why.contains("2 CPUs in base, 4 in new"), "{why}");

        let mut busy_run = file(Some(10.0));
        let mut cell: harness::CellRecord = serde_json::from_value(serde_json::json!({
            "scenario": "noop", "variant": "noop", "params": {}, "threads": 1, "cores": 1,
            "status": "ok", "repeats": 5, "duration_s": 0.1, "ops_per_sec": 1.0,
            "ops_per_sec_min": 1.0, "ops_per_sec_max": 1.0, "per_thread_ops_per_sec": 1.0,
            "efficiency": null, "latency_ns": {"p50": 0, "p90": 0, "p99": 0, "p999": 0, "max": 0},
            "wait_share": null, "retries": 0, "errors": 0, "cpu_util": 0.5,
            "verified": true, "profile": null
        }))
        .unwrap();
        cell.interference = Some(Interference {
            other_cpu_share: 0.9,
            ..Interference::default()
        });
        busy_run.cells.push(cell);
        let why = difference(&file(Some(10.0)), &busy_run).unwrap();
        assert!(
            why.starts_with("new ran beside other work (a median 0.90 CPU"),
            "{why}"
        );
    }
}

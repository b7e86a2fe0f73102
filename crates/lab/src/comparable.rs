//! Whether two results files ran on comparable machines, for `lab compare`: a regression
//! called between a quiet machine and a busy one, or between two CPU models, is the
//! machine's, not the code's.
//!
//! Three checks, each skipped where a file predates what it needs:
//! - the host kind: CPU model, CPUs available, and debug against release builds;
//! - the reference measurement (`env.reference`, a fixed single-thread loop timed every
//!   round): the two medians within [`REFERENCE_TOLERANCE`] of each other;
//! - the interference: the median load (other processes' CPU plus steal) of each run's
//!   cells within the run's retake threshold (or [`crate::retake::DEFAULT_THRESHOLD`]).
//!
//! Not here: judging cells (`compare`).

use harness::schema::ResultsFile;

/// How far apart (as a fraction of the faster) the two runs' reference medians may be:
/// repeated quiet runs on one machine agree within a few percent, while another clock
/// speed or CPU generation moves it by tens.
pub const REFERENCE_TOLERANCE: f64 = 0.10;

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
    if let (Some(rb), Some(rn)) = (&b.reference, &n.reference) {
        let (lo, hi) = (
            rb.median_ms.min(rn.median_ms),
            rb.median_ms.max(rn.median_ms),
        );
        if lo > 0.0 && hi / lo - 1.0 > REFERENCE_TOLERANCE {
            why.push(format!(
                "the reference loop took {:.1} ms in base and {:.1} ms in new ({:.0}% apart, more than {:.0}%)",
                rb.median_ms,
                rn.median_ms,
                (hi / lo - 1.0) * 100.0,
                REFERENCE_TOLERANCE * 100.0
            ));
        }
    }
    for (name, file) in [("base", base), ("new", new)] {
        if let Some((load, bound)) = busy(file) {
            why.push(format!(
                "{name} ran beside other work (a median {load:.2} CPU of other processes during its windows, above {bound:.2})"
            ));
        }
    }
    (!why.is_empty()).then(|| why.join("; "))
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

    #[test]
    fn a_reference_thirty_percent_apart_differs() {
        let why = difference(&file(Some(10.0)), &file(Some(13.0))).unwrap();
        assert!(
            why.contains("10.0 ms in base and 13.0 ms in new (30% apart"),
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
        let mut cell: harness::RunRecord = serde_json::from_value(serde_json::json!({
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

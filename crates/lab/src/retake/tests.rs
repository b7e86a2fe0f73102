//! The retake rules, one test each: when an attempt is retaken, how often, what is kept
//! and how it is worded.

use super::*;
// The words for retakes are `words`'; their tests stay beside the retakes they word.
use crate::results::ResultsFile;
use crate::words::{retake_lines as lines, total_line};
use harness::interference::Interference;

/// A verified repetition under `other` CPU of other processes' load.
pub(crate) fn attempt(other: f64) -> Repetition {
    let mut r = Repetition(harness::testing::synthetic_cell(
        "noop",
        "",
        "noop",
        &[],
        1,
        1,
        0.0,
        0.0,
        1,
    ));
    r.interference = Some(Interference {
        other_cpu_share: other,
        resolution: 0.05,
        ..Interference::default()
    });
    r
}

fn unjudged() -> Speedometer {
    Speedometer::new(None, Vec::new())
}

fn run(loads: &[f64], threshold: Option<f64>) -> (Option<Repetition>, usize) {
    let mut calls = 0;
    let kept = Retaker::new(threshold, unjudged()).repetition(|| {
        calls += 1;
        loads.get(calls - 1).map(|&l| attempt(l))
    });
    (kept, calls)
}

#[test]
fn a_quiet_repetition_is_kept_at_once() {
    let (kept, calls) = run(&[0.1, 0.0], Some(0.25));
    assert_eq!(calls, 1);
    assert_eq!(kept.unwrap().0.interference.unwrap().retaken, 0);
}

#[test]
fn a_loaded_repetition_is_retaken_until_quiet() {
    let (kept, calls) = run(&[1.0, 0.9, 0.05], Some(0.25));
    assert_eq!(calls, 3);
    let i = kept.unwrap().0.interference.unwrap();
    assert_eq!((i.other_cpu_share, i.retaken), (0.05, 2));
    assert_eq!(i.retaken_loads, vec![1.0, 0.9]);
    assert_eq!(i.kept_over_threshold, 0);
    // Within the tick resolution of the threshold is not above it.
    assert_eq!(run(&[0.29, 0.0], Some(0.25)).1, 1);
}

#[test]
fn retakes_are_bounded_and_keep_the_least_loaded() {
    let (kept, calls) = run(&[1.0, 0.6, 0.8, 0.0], Some(0.25));
    assert_eq!(calls, 1 + MAX_RETAKES);
    let i = kept.unwrap().0.interference.unwrap();
    assert_eq!(i.other_cpu_share, 0.6);
    assert_eq!((i.retaken, i.kept_over_threshold), (2, 1));
    // Off: never retaken.
    assert_eq!(run(&[1.0, 0.0], None).1, 1);
}

#[test]
fn retakes_stop_while_the_machine_stays_busy_and_resume_once_it_is_quiet() {
    let mut retaker = Retaker::new(Some(0.25), unjudged());
    let mut calls = 0;
    let mut one = |load: f64| {
        let before = calls;
        let kept = retaker.repetition(|| {
            calls += 1;
            Some(attempt(load))
        });
        (kept.unwrap().0.interference.unwrap(), calls - before)
    };
    for _ in 0..IN_VAIN_LIMIT {
        assert_eq!(one(1.0).1, 1 + MAX_RETAKES);
    }
    // Busy throughout: one attempt each, still counted as kept over the threshold.
    let (i, tries) = one(1.0);
    assert_eq!((tries, i.retaken, i.kept_over_threshold), (1, 0, 1));
    // Quiet again: retakes are back for the next loaded repetition.
    assert_eq!(one(0.0).1, 1);
    assert_eq!(one(1.0).1, 1 + MAX_RETAKES);
}

#[test]
fn a_repetition_on_a_slow_machine_is_retaken_and_counted_by_its_speed() {
    // The usual canary is 10 ms; the first attempt's took 20 (a host neighbour's phase).
    let canaries = [20.0, 10.2];
    let mut calls = 0;
    let mut retaker = Retaker::new(Some(0.25), Speedometer::new(Some(0.15), vec![10.0; 5]));
    let kept = retaker
        .repetition(|| {
            calls += 1;
            let mut r = attempt(0.0);
            r.interference.as_mut().unwrap().canary_ms = Some(canaries[calls - 1]);
            Some(r)
        })
        .unwrap();
    assert_eq!(calls, 2);
    let i = kept.0.interference.unwrap();
    assert_eq!((i.retaken, i.retaken_speeds.clone()), (1, vec![0.5]));
    assert!(i.retaken_loads.is_empty(), "not retaken for load: {i:?}");
    assert!((i.machine_speed.unwrap() - 10.0 / 10.2).abs() < 1e-9);
    let speed = retaker.machine_speed().unwrap();
    assert_eq!(speed.repetitions, 1, "only the kept repetition counts");
    // Within the tolerance it is kept at once.
    let mut calls = 0;
    retaker.repetition(|| {
        calls += 1;
        let mut r = attempt(0.0);
        r.interference.as_mut().unwrap().canary_ms = Some(11.0);
        Some(r)
    });
    assert_eq!(calls, 1);
}

#[test]
fn failures_are_never_retaken_and_a_stop_discards_the_repetition() {
    let mut calls = 0;
    let kept = Retaker::new(Some(0.25), unjudged()).repetition(|| {
        calls += 1;
        let mut r = attempt(1.0);
        r.status = CellStatus::Failed;
        Some(r)
    });
    assert_eq!((calls, kept.unwrap().status), (1, CellStatus::Failed));
    // Interrupted during the retake: nothing is kept.
    let (kept, calls) = run(&[1.0], Some(0.25));
    assert_eq!((kept.is_none(), calls), (true, 2));
}

#[test]
fn the_lines_say_how_many_and_why() {
    let mut results: ResultsFile = serde_json::from_value(serde_json::json!({
        "schema": 1, "run_id": "x", "started": "", "env": {
            "cpu_model": "", "nproc": 2, "kernel": "", "rustc": "", "git_commit": "",
            "hostname": "", "affinity": "0-1"
        }, "cells": []
    }))
    .unwrap();
    results.env.interference_threshold = Some(0.25);
    let mut loaded = attempt(0.0);
    loaded.interference = Some(Interference {
        retaken: 1,
        retaken_loads: vec![0.9],
        ..Interference::default()
    });
    loaded.scenario_file = "lookup".into();
    let mut quiet = attempt(0.0);
    quiet.scenario_file = "pool".into();
    results.cells = vec![loaded.0, quiet.0];
    let lines = lines(&results);
    assert_eq!(lines.len(), 2);
    assert!(
        lines[0].starts_with("lookup.toml: 1 repetition(s) retaken for 1 kept: 1 because")
            && lines[0].contains("0.90-0.90 CPU")
            && lines[0].contains("above 0.25 CPU"),
        "{lines:?}"
    );
    assert!(
        lines[1].starts_with("pool.toml: no repetition retaken"),
        "{lines:?}"
    );
    assert!(total_line(&results)
        .unwrap()
        .starts_with("retaken: 1 repetition(s)"));
    results.cells.pop();
    results.cells[0].interference.as_mut().unwrap().retaken = 0;
    assert_eq!(total_line(&results), None);
}

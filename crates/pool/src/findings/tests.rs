//! The pool question on synthetic runs: each part can come out either way.

use std::collections::BTreeMap;

use harness::findings::{Run, Verdict};
use harness::testing::synthetic_cell;
use harness::RunRecord;
use serde_json::json;

use super::answer;

fn clients_cell(shape: (u64, u64), clients: usize, ops: f64, reps: usize) -> RunRecord {
    synthetic_cell(
        "pool",
        "pool-clients",
        "driver-v3",
        &[
            ("connections", json!(shape.0)),
            ("max_requests", json!(shape.1)),
            ("batch", json!(1)),
        ],
        clients,
        2,
        ops,
        ops * 0.02,
        reps,
    )
}

fn batch_cell(connections: u64, batch: u64, ops: f64) -> RunRecord {
    synthetic_cell(
        "pool",
        "pool-seed-batch",
        "driver-v3",
        &[
            ("connections", json!(connections)),
            (
                "max_requests",
                json!(if connections == 1 { 1024 } else { 5000 }),
            ),
            ("batch", json!(batch)),
        ],
        1000,
        2,
        ops,
        ops * 0.01,
        5,
    )
}

fn seeds() -> BTreeMap<String, serde_json::Value> {
    let mut seeds = BTreeMap::new();
    seeds.insert(
        "pool-seed-batch".to_owned(),
        json!({
            "batches": [1, 10, 100, 500, 5000],
            "gains": [0.0, 1.0, 2.0, 1.8, 1.3],
            "fitted_batches": [10, 100, 5000],
            "calibrated_on": ["cpu_us on the gain at batch 10 (+100%)"]
        }),
    );
    seeds
}

/// Default ops/s at 1000 and 2000 clients, fix at 2000, fix gains per batch (1 and 500).
fn run(default: (f64, f64), fix: f64, gains: (f64, f64), reps: usize) -> Vec<RunRecord> {
    vec![
        clients_cell((1, 1024), 1000, default.0, reps),
        clients_cell((1, 1024), 2000, default.1, reps),
        clients_cell((10, 5000), 2000, fix, reps),
        batch_cell(1, 1, 100.0),
        batch_cell(10, 1, 100.0 * (1.0 + gains.0)),
        batch_cell(1, 500, 100.0),
        batch_cell(10, 500, 100.0 * (1.0 + gains.1)),
    ]
}

fn judge(cells: &[RunRecord]) -> harness::findings::Answer {
    let seeds = seeds();
    answer(&Run {
        cells,
        seeds: &seeds,
        comparisons: &[],
    })
    .unwrap()
}

#[test]
fn the_seeds_plateau_and_its_fix_are_reproduced_and_the_calibration_is_named() {
    let a = judge(&run((48e3, 49e3), 94e3, (0.0, 2.08), 5));
    assert_eq!(a.verdict, Verdict::Reproduced);
    assert!(!a.calibrated_on.is_empty());
    assert!(a.sentences.iter().any(|s| s.contains("out of sample")));
}

#[test]
fn linear_growth_is_no_plateau() {
    // The default doubles with the clients; the fix gains nothing; the gains disagree.
    let a = judge(&run((48e3, 96e3), 96e3, (0.6, 0.2), 5));
    assert_eq!(a.verdict, Verdict::NotReproduced);
}

#[test]
fn single_runs_of_the_clients_file_cannot_tell_that_part() {
    let a = judge(&run((48e3, 49e3), 94e3, (0.0, 2.08), 1));
    // The batch cells still judge: only the clients parts are cannot tell.
    assert_eq!(a.verdict, Verdict::Partly);
}

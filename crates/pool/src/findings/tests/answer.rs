//! The answer from measured parts: the verdict follows from them alone, the sentences
//! carry their figures, every constant fitted to the seed is named, and a world where
//! the pool has no effect never comes out partly.

use harness::testing::synthetic_cell;
use harness::CellRecord;
use verdict::decide::Outcome;
use verdict::findings::{Answer, Finding, Run, Verdict};
use verdict::testing::parts_conformance;

use super::super::answer;
use super::*;
use verdict::testing::part;

fn clients_cell(shape: (u64, u64), clients: usize, ops: f64) -> CellRecord {
    synthetic_cell(
        "pool",
        CLIENTS_FILE,
        VARIANT,
        &[
            ("connections", json!(shape.0)),
            ("max_requests", json!(shape.1)),
            ("batch", json!(1)),
        ],
        clients,
        2,
        ops,
        ops * 0.02,
        5,
    )
}

fn batch_cell(connections: u64, batch: u64, ops: f64) -> CellRecord {
    synthetic_cell(
        "pool",
        BATCH_FILE,
        VARIANT,
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

/// The cells of a run: default ops/s at 1000 and 2000 clients, the fix at 2000, and the
/// fix's gains at batch 1 and 500 (context only).
fn cells(default: (f64, f64), fix: f64, gains: (f64, f64)) -> Vec<CellRecord> {
    vec![
        clients_cell((1, 1024), 1000, default.0),
        clients_cell((1, 1024), 2000, default.1),
        clients_cell((10, 5000), 2000, fix),
        batch_cell(1, 1, 100.0),
        batch_cell(10, 1, 100.0 * (1.0 + gains.0)),
        batch_cell(1, 500, 100.0),
        batch_cell(10, 500, 100.0 * (1.0 + gains.1)),
    ]
}

/// Pairs for each part of `claims` at its ratio in `ratios` (by name; see [`ratios`]).
fn measure(claims: &[Claim], ratios: [(&str, f64); 4]) -> Vec<Measured> {
    ratios
        .iter()
        .map(|(name, r)| measured(&named(claims, name), *r, 24))
        .collect()
}

/// The parts' names, in the registry's order.
fn names() -> Vec<String> {
    let seeds = seeds();
    registry(Seeds(&seeds))
        .names()
        .into_iter()
        .map(str::to_owned)
        .collect()
}

fn judge(cells: &[CellRecord], comparisons: &[Measured]) -> Answer {
    let seeds = seeds();
    answer(&Run {
        cells,
        seeds: &seeds,
        comparisons,
    })
    .unwrap()
}

/// The verdict a finding of `a` gets (the lab recomputes it from the parts).
fn finding(a: &Answer) -> Verdict {
    Finding::new("pool", "q", a.clone()).verdict
}

#[test]
fn the_seeds_plateau_lift_and_gain_are_shown_with_their_figures() {
    let run = cells((48e3, 49e3), 94e3, (0.0, 2.09));
    let a = judge(
        &run,
        &measure(&default_claims(), ratios(1.01, 1.93, 3.09, 1.0)),
    );
    let shown: Vec<&str> = a.parts.iter().map(|p| p.name.as_str()).collect();
    // "No change" cannot be asked in the default plan (nothing queues at batch 1): it
    // stays, inconclusive with its reason, so the verdict is partly, never reproduced.
    assert_eq!(shown, names());
    for name in [PLATEAU, LIFT, LARGE_BATCH_GAIN] {
        assert_eq!(part(&a, name).outcome, Outcome::Shown, "{name}");
    }
    let unchanged = part(&a, NO_CHANGE_AT_BATCH_1);
    assert_eq!(unchanged.outcome, Outcome::Inconclusive);
    assert_eq!(a.verdict, Verdict::Partly);
    assert_eq!(finding(&a), a.verdict);
    assert!(a.sentences.len() <= 3);
    for p in a.parts.iter().filter(|p| p.name != NO_CHANGE_AT_BATCH_1) {
        assert!(
            a.sentences.iter().any(|s| s.contains(&p.figure())),
            "{}: {:?}",
            p.name,
            a.sentences
        );
    }
    assert!(a.figure.contains("1.15x"), "{}", a.figure);
    assert!(a.details.iter().any(|d| d.contains("cannot queue")));
    assert!(!a.sentences.iter().any(|s| s.contains("noise")));
}

#[test]
fn with_a_queueing_batch_1_cell_every_part_can_be_shown() {
    let run = cells((48e3, 49e3), 94e3, (0.0, 2.09));
    let a = judge(
        &run,
        &measure(&queueing_claims(), ratios(1.01, 1.93, 3.09, 1.0)),
    );
    assert_eq!(a.verdict, Verdict::Reproduced);
    // As a finding: every part rests on the simulated server, fitted to the seed's own
    // gains, so the model agrees with the seed; it never reads `reproduced`.
    assert_eq!(finding(&a), Verdict::ModelAgrees);
}

#[test]
fn the_no_effect_fixture_is_never_partly() {
    // The pool has no effect: the default doubles with the clients, the fix does what it
    // does, at every batch size.
    let run = cells((48e3, 96e3), 96e3, (0.0, 0.0));
    for claims in [default_claims(), queueing_claims()] {
        let a = judge(&run, &measure(&claims, ratios(2.0, 1.0, 1.0, 1.0)));
        assert!(
            matches!(a.verdict, Verdict::NotReproduced | Verdict::CannotTell),
            "{:?}",
            a.verdict
        );
        assert_eq!(finding(&a), a.verdict);
        // Agreeing with "no change" is no evidence for the seed.
        assert_ne!(part(&a, NO_CHANGE_AT_BATCH_1).outcome, Outcome::Shown);
    }
    // Where it was measured and agreed, the answer says why it counts for nothing.
    let a = judge(
        &run,
        &measure(&queueing_claims(), ratios(2.0, 1.0, 1.0, 1.0)),
    );
    let why = &part(&a, NO_CHANGE_AT_BATCH_1).why;
    assert!(why.contains("no evidence"), "{why}");
}

#[test]
fn a_run_without_pairs_cannot_tell_and_lists_every_part() {
    let a = judge(&cells((48e3, 49e3), 94e3, (0.0, 2.09)), &[]);
    assert_eq!(a.verdict, Verdict::CannotTell);
    let shown: Vec<&str> = a.parts.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(shown, names(), "no part is dropped");
    assert!(a.parts.iter().all(|p| p.outcome == Outcome::Inconclusive));
    // The cells' medians alone decide nothing, however far apart.
    assert!(a.figure.is_empty());
}

#[test]
fn parts_decide_the_verdict_not_the_cells() {
    // Cells that look like the seed's, pairs that contradict the plateau and the gain.
    let run = cells((48e3, 49e3), 94e3, (0.0, 2.09));
    let a = judge(
        &run,
        &measure(&default_claims(), ratios(1.9, 1.93, 1.0, 1.0)),
    );
    assert_eq!(a.verdict, Verdict::Partly);
    let a = judge(
        &run,
        &measure(&default_claims(), ratios(1.9, 1.0, 1.0, 1.0)),
    );
    assert_eq!(a.verdict, Verdict::NotReproduced);
    assert!(
        a.sentences[0].contains("beyond the seed's plateau"),
        "{}",
        a.sentences[0]
    );
    // Throughput that fell as the clients doubled is no plateau, and says so.
    let a = judge(
        &run,
        &measure(&default_claims(), ratios(0.85, 1.93, 3.09, 1.0)),
    );
    assert_eq!(part(&a, PLATEAU).outcome, Outcome::Contradicted);
    assert!(a.sentences[0].contains("fell"), "{}", a.sentences[0]);
}

#[test]
fn every_constant_fitted_to_the_seed_is_named() {
    let run = cells((48e3, 49e3), 94e3, (0.0, 2.09));
    let a = judge(&run, &[]);
    let fits = |a: &Answer, what: &str| a.calibrated_on.iter().filter(|c| c.contains(what)).count();
    // From the `[seed]` tables: both files' base_us.
    assert_eq!(fits(&a, "base_us"), 2, "{:?}", a.calibrated_on);
    // Results without the tables: the built-in lists, just as complete.
    let b = answer(&Run {
        cells: &run,
        seeds: &BTreeMap::new(),
        comparisons: &[],
    })
    .unwrap();
    assert_eq!(fits(&b, "base_us"), 2, "{:?}", b.calibrated_on);
    for what in ["server_cores = 64", "cpu_us = 1500", "heap_points"] {
        assert_eq!(fits(&b, what), 1, "{what}: {:?}", b.calibrated_on);
    }
}

#[test]
fn the_seed_files_list_their_fitted_constants() {
    for (file, text) in [
        (
            CLIENTS_FILE,
            include_str!("../../../../../benches/pool-clients.toml"),
        ),
        (
            BATCH_FILE,
            include_str!("../../../../../benches/pool-seed-batch.toml"),
        ),
    ] {
        let seed = text.split("[seed]").nth(1).unwrap_or_default();
        assert!(seed.contains("calibrated_on"), "{file}");
        assert!(seed.contains("\"base_us = "), "{file}: base_us is fitted");
    }
}

#[test]
fn the_registry_conforms_to_a_plan_with_every_part_and_its_answer() {
    let (planned_cells, seeds) = (plan(2, &[1000, 2000]), seeds());
    let planned = Planned {
        cells: &planned_cells,
        seeds: &seeds,
    };
    let claims = claims_of(&planned_cells, &seeds);
    let a = judge(
        &cells((48e3, 49e3), 94e3, (0.0, 2.09)),
        &measure(&claims, ratios(1.01, 1.93, 3.09, 1.0)),
    );
    parts_conformance(&registry(Seeds(&seeds)), &planned, Some(&a)).unwrap();
}

#[test]
fn the_plateau_says_more_than_its_entry_where_the_interval_does() {
    let run = cells((48e3, 49e3), 94e3, (0.0, 2.09));
    let sentence = |plateau: f64| {
        let a = judge(
            &run,
            &measure(&default_claims(), ratios(plateau, 1.93, 3.09, 1.0)),
        );
        a.sentences[0].clone()
    };
    // Wholly under the seed's 1.15x: flatter than the seed's; near it: like the seed's.
    for (ratio, words) in [
        (1.01, "a plateau, flatter than the seed's"),
        (1.15, "a plateau like the seed's"),
        (1.9, "growth beyond the seed's plateau"),
        (0.85, "throughput fell as the clients doubled"),
    ] {
        let s = sentence(ratio);
        assert!(s.contains(words), "{ratio}: {s}");
    }
}

//! The question's parts on synthetic plans and pairs (no timing): every part comes out
//! shown, contradicted and inconclusive from plausible pairs; a plan without the real node
//! lists every part as undecidable with `just setup`; sides are at one threads and cores.

use std::collections::BTreeMap;

use harness::decide::{CellRef, Claim, Measured, Planned};
use harness::testing::synthetic_cell;
use serde_json::{json, Value};

use super::claims::{APPS, JUJU_CLIENT, K2, PARTS, POOL2, REAL, REAL_APPS, REAL_CLIENT, REAL_POOL};
use super::*;

fn planned_cell(file: &str, variant: &str, t: usize, c: usize, kv: &[(&str, Value)]) -> CellRef {
    // The full parameter map, as a plan has it: defaults plus the file's own.
    let base = CellRef::new(file, variant, t, c)
        .with(
            "backend",
            if file.starts_with(REAL) {
                "libdqlite"
            } else {
                "dqlite-model"
            },
        )
        .with("slots", "nproc")
        .with("pool_size", 64)
        .with("shards", 3)
        .with("client_us", 0)
        .with("data_dir", "/dev/shm");
    kv.iter().fold(base, |r, (k, v)| r.with(k, v.clone()))
}

/// The default plan's cells of the question's files at 48 threads on `cores` CPUs, the
/// real node's only when `real`.
fn plan(real: bool, cores: usize) -> Vec<CellRef> {
    let mut v = Vec::new();
    for s in [json!(2), json!(24), json!("unlimited")] {
        v.push(planned_cell(
            "sqlmix-dqlite",
            "semaphore",
            48,
            cores,
            &[("slots", s.clone())],
        ));
        if real {
            v.push(planned_cell(REAL, "semaphore", 48, cores, &[("slots", s)]));
        }
    }
    if real {
        for p in [2, 3, 64] {
            v.push(planned_cell(
                REAL_POOL,
                "pool",
                48,
                cores,
                &[("pool_size", json!(p))],
            ));
        }
        for s in [1, 3, 6] {
            v.push(planned_cell(
                REAL_APPS,
                "sharded",
                48,
                cores,
                &[("shards", json!(s)), ("slots", json!(2))],
            ));
        }
        for s in [json!(2), json!("unlimited")] {
            v.push(planned_cell(
                REAL_CLIENT,
                "semaphore",
                48,
                cores,
                &[("slots", s), ("client_us", json!(100))],
            ));
        }
    }
    v
}

fn claims_of(cells: &[CellRef]) -> Vec<Claim> {
    let seeds = BTreeMap::new();
    claims(&Planned {
        cells,
        seeds: &seeds,
    })
}

/// `n` pairs whose ratio is `ratio`, spread +-8e+00% ([`harness::testing::synthetic_pairs`]).
fn measured(claim: &Claim, ratio: f64, n: usize) -> Measured {
    harness::testing::synthetic_pairs(claim, ratio, 0.08, n)
}

fn seeds() -> BTreeMap<String, Value> {
    let mut s = BTreeMap::new();
    s.insert(
        "sqlmix-dqlite".to_owned(),
        json!({"default_slots": 24, "calibrated_on": ["serve_us = 200 us (the seed's best K = 2)"]}),
    );
    s.insert(
        REAL_CLIENT.to_owned(),
        json!({"go_client_ms_per_txn": 1.06, "go_client_k2_gain": 1.21,
               "calibrated_on": ["client_us = 100 us per request (a Go client's 1.06 ms)"]}),
    );
    s
}

fn record(file: &str, variant: &str, kv: &[(&str, Value)], ops: f64) -> RunRecord {
    let backend = if file.starts_with(REAL) {
        "libdqlite"
    } else {
        "dqlite-model"
    };
    let mut params = vec![("backend", json!(backend)), ("data_dir", json!("/dev/shm"))];
    params.extend(kv.iter().cloned());
    synthetic_cell("sqlmix", file, variant, &params, 48, 2, ops, ops * 0.05, 5)
}

/// Cells of a run: the model's sweep always, the real node's when `real`.
fn records(real: bool) -> Vec<RunRecord> {
    let mut v = vec![
        record("sqlmix-dqlite", "semaphore", &[("slots", json!(2))], 893.0),
        record(
            "sqlmix-dqlite",
            "semaphore",
            &[("slots", json!("unlimited"))],
            497.0,
        ),
    ];
    if real {
        v.push(record(
            REAL,
            "semaphore",
            &[("slots", json!(2)), ("client_us", json!(0))],
            4900.0,
        ));
        v.push(record(
            REAL,
            "semaphore",
            &[("slots", json!("unlimited")), ("client_us", json!(0))],
            2500.0,
        ));
        v.push(record(
            REAL_CLIENT,
            "semaphore",
            &[("slots", json!(2)), ("client_us", json!(100))],
            1890.0,
        ));
        v.push(record(
            REAL_CLIENT,
            "semaphore",
            &[("slots", json!("unlimited")), ("client_us", json!(100))],
            1560.0,
        ));
    }
    v
}

/// The answer with each part's pairs at `ratios` (in [`PARTS`] order).
fn answer_with(real: bool, ratios: [(f64, usize); 4]) -> Answer {
    let claims = claims_of(&plan(real, 2));
    let ms: Vec<Measured> = claims
        .iter()
        .zip(ratios)
        .map(|(c, (r, n))| {
            if c.comparison.is_some() {
                measured(c, r, n)
            } else {
                Measured::new(c.clone())
            }
        })
        .collect();
    let cells = records(real);
    let seeds = seeds();
    answer(&Run {
        cells: &cells,
        seeds: &seeds,
        comparisons: &ms,
    })
    .unwrap()
}

fn outcome(a: &Answer, part: &str) -> Outcome {
    a.parts.iter().find(|p| p.name == part).unwrap().outcome
}

#[test]
fn the_default_plan_decides_every_part_with_sides_at_one_threads_and_cores() {
    let claims = claims_of(&plan(true, 2));
    let names: Vec<&str> = claims.iter().map(|c| c.part.as_str()).collect();
    assert_eq!(names, [K2, POOL2, APPS, JUJU_CLIENT]);
    for c in &claims {
        let cmp = c
            .comparison
            .as_ref()
            .unwrap_or_else(|| panic!("{}: {}", c.part, c.missing));
        assert_eq!(
            (cmp.a.cell.threads, cmp.a.cell.cores),
            (cmp.b.cell.threads, cmp.b.cell.cores)
        );
        assert!(
            cmp.a.per.is_none() && cmp.b.per.is_none(),
            "single-cell sides"
        );
        // Each side matches exactly one planned cell.
        for side in [&cmp.a.cell, &cmp.b.cell] {
            let n = plan(true, 2)
                .iter()
                .filter(|p| side.matches(&p.file, &p.variant, p.threads, p.cores, &p.params))
                .count();
            assert_eq!(n, 1, "{}: {}", c.part, side.text());
        }
    }
    let k2 = claims[0].comparison.as_ref().unwrap();
    assert_eq!(k2.a.cell.params["slots"], json!(2));
    assert_eq!(k2.b.cell.params["slots"], json!("unlimited"));
    let pool = claims[1].comparison.as_ref().unwrap();
    assert_eq!(
        (pool.a.cell.file.as_str(), pool.b.cell.file.as_str()),
        (REAL_POOL, REAL)
    );
    let juju = claims[3].comparison.as_ref().unwrap();
    assert_eq!(juju.a.cell.params["client_us"], json!(100));
}

#[test]
fn sides_are_paired_where_both_exist_never_the_luckiest_of_each() {
    // K = 2 at 2 and 4 CPUs, unlimited only at 2: the pair is at 2, not 4 against 2.
    let mut cells = plan(true, 2);
    cells.push(planned_cell(
        REAL,
        "semaphore",
        48,
        4,
        &[("slots", json!(2))],
    ));
    let k2 = claims_of(&cells)[0].comparison.clone().unwrap();
    assert_eq!((k2.a.cell.cores, k2.b.cell.cores), (2, 2));
    // With both at 4 CPUs the widest point leads, derived from the plan.
    let wide = claims_of(&plan(true, 4))[0].comparison.clone().unwrap();
    assert_eq!((wide.a.cell.cores, wide.b.cell.cores), (4, 4));
}

#[test]
fn without_the_real_node_every_part_is_listed_and_says_just_setup() {
    let claims = claims_of(&plan(false, 2));
    assert_eq!(claims.len(), PARTS.len());
    for c in &claims {
        assert!(c.comparison.is_none(), "{}", c.part);
        assert!(
            c.missing.contains("just setup"),
            "{}: {}",
            c.part,
            c.missing
        );
    }
    let a = answer_with(false, [(2.0, 16); 4]);
    assert_eq!(a.verdict, Verdict::CannotTell);
    assert_eq!(a.parts.len(), 4);
    assert!(a.sentences[0].contains("just setup"), "{}", a.sentences[0]);
    // The model's figures are context, labelled, with what it was calibrated on.
    assert!(a.details.iter().any(|d| d.contains("dqlite model")));
    assert!(a.calibrated_on.iter().any(|c| c.contains("serve_us")));
}

#[test]
fn a_plan_lacking_one_file_says_which() {
    let cells: Vec<CellRef> = plan(true, 2)
        .into_iter()
        .filter(|c| c.file != REAL_POOL)
        .collect();
    let claims = claims_of(&cells);
    assert!(claims[0].comparison.is_some());
    assert!(claims[1].comparison.is_none());
    assert!(
        claims[1].missing.contains(REAL_POOL),
        "{}",
        claims[1].missing
    );
    let no_client: Vec<CellRef> = plan(true, 2)
        .into_iter()
        .filter(|c| c.file != REAL_CLIENT)
        .collect();
    assert!(claims_of(&no_client)[3].missing.contains(REAL_CLIENT));
}

#[test]
fn every_part_comes_out_shown_contradicted_and_inconclusive() {
    for (i, (name, _)) in PARTS.iter().enumerate() {
        for (ratio, n, want) in [
            (1.9, 9, Outcome::Shown),
            (0.9, 16, Outcome::Contradicted),
            (1.035, 9, Outcome::Inconclusive),
        ] {
            let mut ratios = [(1.9, 9); 4];
            ratios[i] = (ratio, n);
            let a = answer_with(true, ratios);
            assert_eq!(outcome(&a, name), want, "{name} at {ratio}");
        }
    }
}

#[test]
fn the_verdict_follows_the_parts() {
    let a = answer_with(true, [(1.9, 9); 4]);
    assert_eq!(a.verdict, Verdict::Reproduced);
    assert_eq!(a.basis, Basis::Real);
    assert!(a.figure.contains("pairs"), "{}", a.figure);
    let against = answer_with(true, [(0.9, 16); 4]);
    assert_eq!(against.verdict, Verdict::NotReproduced);
    let mixed = answer_with(true, [(1.9, 9), (0.9, 16), (1.035, 9), (1.2, 16)]);
    assert_eq!(mixed.verdict, Verdict::Partly);
}

#[test]
fn the_answer_names_the_setup_and_the_clients_time_per_transaction() {
    let a = answer_with(true, [(1.9, 9), (1.3, 9), (1.8, 9), (1.2, 16)]);
    let s = a.sentences.join(" ");
    assert!(s.contains("one node") && s.contains("tmpfs"), "{s}");
    assert!(s.contains("48 threads on 2 CPUs"), "{s}");
    // 2 / 4.9k txn/s = 0.41 ms; 2 / 1.89k = 1.06 ms; the Go client's figures beside them.
    assert!(
        s.contains("0.41 ms") && s.contains("1.06 ms") && s.contains("1.21x"),
        "{s}"
    );
    assert!(s.contains("100 us more per statement"), "{s}");
    assert!(a.calibrated_on.iter().any(|c| c.contains("client_us")));
    assert!(a.sentences.len() <= 3);
}

#[test]
fn local_sqlite_and_cell_intervals_never_decide() {
    // Cells whose intervals are far apart, no pairs: every part inconclusive.
    let cells = records(true);
    let seeds = seeds();
    let claims = claims_of(&plan(true, 2));
    let ms: Vec<Measured> = claims.into_iter().map(Measured::new).collect();
    let a = answer(&Run {
        cells: &cells,
        seeds: &seeds,
        comparisons: &ms,
    })
    .unwrap();
    assert_eq!(a.verdict, Verdict::CannotTell);
    assert!(a.parts.iter().all(|p| p.outcome == Outcome::Inconclusive));
}

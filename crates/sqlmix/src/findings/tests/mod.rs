//! The question's parts on synthetic plans and pairs (no timing): every part comes out
//! shown, contradicted and inconclusive from plausible pairs; a plan without the real node
//! lists every part as undecidable with `just setup`; sides are at one threads and cores.
//! Here the synthetic plans, cells and pairs, each part's read by its name; [`parts`] the
//! claims a plan gives, [`answer`] what the answer makes of their pairs.

mod answer;
mod parts;

use std::collections::BTreeMap;

use harness::testing::synthetic_cell;
use serde_json::{json, Value};
use verdict::decide::{CellRef, Claim, Comparison, Measured, Outcome, Planned};

use super::claims::{
    APPS, GO_K2, GO_POOL2, GO_SEED_K2, JUJU_CLIENT, K2, POOL2, REAL, REAL_APPS, REAL_CLIENT,
    REAL_GO, REAL_GO_POOL, REAL_GO_SEED, REAL_POOL, REAL_WRITES, WRITES,
};
use super::*;
use verdict::testing::claim;

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
        .with("client", "lab")
        .with("read_pct", 80)
        .with("data_dir", "/dev/shm");
    kv.iter().fold(base, |r, (k, v)| r.with(k, v.clone()))
}

/// The default plan's cells of the question's files at 48 threads on `cores` CPUs, the
/// real node's only when `real`.
fn plan(real: bool, cores: usize) -> Vec<CellRef> {
    let mut v = plan_without_go(real, cores);
    if real {
        for client in ["lab", "go"] {
            for s in [json!(2), json!("unlimited")] {
                v.push(planned_cell(
                    REAL_GO,
                    "semaphore",
                    48,
                    cores,
                    &[("slots", s), ("client", json!(client))],
                ));
            }
        }
        v.push(planned_cell(
            REAL_GO_POOL,
            "pool",
            48,
            cores,
            &[("pool_size", json!(2)), ("client", json!("go"))],
        ));
        for s in [json!(2), json!("unlimited")] {
            v.push(planned_cell(
                REAL_GO_SEED,
                "semaphore",
                210,
                cores,
                &[
                    ("slots", s),
                    ("client", json!("go")),
                    ("load", json!("seed")),
                ],
            ));
        }
    }
    v
}

/// The same plan on a machine without the Go client: its files skipped.
fn plan_without_go(real: bool, cores: usize) -> Vec<CellRef> {
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
        for pct in [100, 50] {
            v.push(planned_cell(
                REAL_WRITES,
                "semaphore",
                48,
                cores,
                &[("slots", json!(24)), ("read_pct", json!(pct))],
            ));
        }
    }
    v
}

fn claims_of(cells: &[CellRef]) -> Vec<Claim> {
    let seeds = BTreeMap::new();
    registry().claims(&Planned {
        cells,
        seeds: &seeds,
    })
}

/// Part `name`'s comparison among `claims`.
fn comparison<'c>(claims: &'c [Claim], name: &str) -> &'c Comparison {
    let c = claim(claims, name);
    c.comparison
        .as_ref()
        .unwrap_or_else(|| panic!("{name}: {}", c.missing))
}

/// `n` pairs whose ratio is `ratio`, spread +-8e+00% ([`verdict::testing::synthetic_pairs`]).
fn measured(claim: &Claim, ratio: f64, n: usize) -> Measured {
    verdict::testing::synthetic_pairs(claim, ratio, 0.08, n)
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

/// A cell of the clients' files with its time in the gate per transaction.
fn client_record(
    file: &str,
    variant: &str,
    kv: &[(&str, Value)],
    ops: f64,
    gate_ms: f64,
) -> CellRecord {
    let mut r = record(file, variant, kv, ops);
    r.extra.insert("gate_ms_per_txn".into(), json!(gate_ms));
    r
}

fn record(file: &str, variant: &str, kv: &[(&str, Value)], ops: f64) -> CellRecord {
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
fn records(real: bool) -> Vec<CellRecord> {
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
        for (client, slots, ops, gate, connects) in [
            ("lab", json!(2), 4700.0, 0.42, 0.0),
            ("lab", json!("unlimited"), 2600.0, 15.0, 0.0),
            ("go", json!(2), 847.0, 2.36, 3.0),
            ("go", json!("unlimited"), 1222.0, 30.0, 745.0),
        ] {
            let mut r = client_record(
                REAL_GO,
                "semaphore",
                &[("slots", slots), ("client", json!(client))],
                ops,
                gate,
            );
            r.extra.insert("connects_per_sec".into(), json!(connects));
            v.push(r);
        }
    }
    v
}

/// Pairs (ratio, how many) that give part `name` the outcome `want`: writes_tank_reads
/// claims a fall, every other part a gain.
fn pairs_for(name: &str, want: Outcome) -> (f64, usize) {
    match (want, name == WRITES) {
        (Outcome::Shown, false) => (1.9, 9),
        (Outcome::Shown, true) => (0.2, 9),
        (Outcome::Contradicted, false) => (0.9, 16),
        (Outcome::Contradicted, true) => (0.6, 16),
        // Between the thresholds.
        (Outcome::Inconclusive, false) => (1.035, 9),
        (Outcome::Inconclusive, true) => (0.40, 9),
    }
}

/// The measured parts of `claims`, each part's pairs giving it `want(name)`.
fn measured_all(claims: &[Claim], want: impl Fn(&str) -> Outcome) -> Vec<Measured> {
    claims
        .iter()
        .map(|c| match c.comparison {
            Some(_) => {
                let (r, n) = pairs_for(&c.part, want(&c.part));
                measured(c, r, n)
            }
            None => Measured::new(c.clone()),
        })
        .collect()
}

/// The answer with each part's pairs giving it `want(name)`.
fn answer_with(real: bool, want: impl Fn(&str) -> Outcome) -> Answer {
    let ms = measured_all(&claims_of(&plan(real, 2)), want);
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

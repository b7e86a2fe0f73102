//! The pool question on synthetic plans and runs, no timing: which parts a plan can
//! decide, and how measured pairs turn into parts and a verdict. Fixtures here; the
//! parts' rules in `parts`, the answer in `answer`.

mod answer;
mod parts;

use std::collections::BTreeMap;

use serde_json::json;
use verdict::decide::{CellRef, Claim, Measured, Planned};
use verdict::findings::Seeds;

use super::claims::{
    registry, BATCH_FILE, CLIENTS_FILE, LARGE_BATCH_GAIN, LIFT, NO_CHANGE_AT_BATCH_1, PLATEAU,
    VARIANT,
};

/// The `[seed]` tables of the two files, as `benches/` has them.
fn seeds() -> BTreeMap<String, serde_json::Value> {
    let mut seeds = BTreeMap::new();
    seeds.insert(
        CLIENTS_FILE.to_owned(),
        json!({
            "plateau_from": 1000,
            "plateau_to": 2000,
            "plateau_growth": 1.15,
            "default": "1 x 1024",
            "fix": "10 x 5000",
            "calibrated_on": ["base_us = 20000 (with cpu_us = 500) so that the ceiling ..."],
        }),
    );
    seeds.insert(
        BATCH_FILE.to_owned(),
        json!({
            "batches": [1, 10, 100, 500, 5000],
            "gains": [0.0, 1.0, 2.0, 1.8, 1.3],
            "fitted_batches": [10, 100, 5000],
            "calibrated_on": [
                "base_us = 100000 and server_cores = 8 ...",
                "cpu_us = 1500 and cpu_per_point_ns = 250000 on the gains at batch 10 (+100%)",
            ],
        }),
    );
    seeds
}

/// A planned cell of the seed's driver with the file's full parameter map.
fn cell(file: &str, shape: (u64, u64), clients: usize, cores: usize, batch: u64) -> CellRef {
    let mut c = CellRef::new(file, VARIANT, clients, cores)
        .with("connections", shape.0)
        .with("max_requests", shape.1)
        .with("batch", batch);
    let fixed: &[(&str, u64)] = if file == CLIENTS_FILE {
        &[
            ("base_us", 20_000),
            ("per_point_ns", 2000),
            ("server_cores", 64),
            ("cpu_us", 500),
            ("cpu_per_point_ns", 150),
            ("statement_points", 0),
        ]
    } else {
        &[
            ("base_us", 100_000),
            ("per_point_ns", 0),
            ("server_cores", 8),
            ("cpu_us", 1500),
            ("cpu_per_point_ns", 250_000),
            ("heap_points", 20_000_000),
            ("statement_points", 1),
        ]
    };
    for (k, v) in fixed {
        c = c.with(k, *v);
    }
    c.with("pool_timeout_ms", 5000)
}

/// The cells the default matrix plans on `cores` CPUs: pool-clients at 100 to 3000
/// clients, pool-seed-batch at `batch_clients` (1000 in the default plan), a few of
/// `pool.toml`'s.
fn plan(cores: usize, batch_clients: &[usize]) -> Vec<CellRef> {
    let shapes = [(1, 1024), (10, 5000)];
    let mut v = Vec::new();
    for shape in shapes {
        for clients in [100, 1000, 2000, 3000] {
            v.push(cell(CLIENTS_FILE, shape, clients, cores, 1));
        }
        for &clients in batch_clients {
            for batch in [1, 10, 100, 500, 5000] {
                v.push(cell(BATCH_FILE, shape, clients, cores, batch));
            }
        }
    }
    for threads in [1, 8, 12] {
        v.push(CellRef::new("pool", VARIANT, threads, cores).with("max_requests", 8));
    }
    v
}

/// The claims of a plan, as the hot path declares them: its registry's.
fn claims_of(cells: &[CellRef], seeds: &BTreeMap<String, serde_json::Value>) -> Vec<Claim> {
    registry(Seeds(seeds)).claims(&Planned { cells, seeds })
}

/// The default plan's claims on 2 CPUs.
fn default_claims() -> Vec<Claim> {
    claims_of(&plan(2, &[1000]), &seeds())
}

/// A plan whose batch file also runs 2000 clients, where the default pool can queue at
/// batch 1.
fn queueing_claims() -> Vec<Claim> {
    claims_of(&plan(2, &[1000, 2000]), &seeds())
}

/// The claim called `name`.
fn named(claims: &[Claim], name: &str) -> Claim {
    claims
        .iter()
        .find(|c| c.part == name)
        .cloned()
        .unwrap_or_else(|| panic!("no part {name}"))
}

/// Each part's ratio, by name: what the tests' pairs give each part.
fn ratios(plateau: f64, lift: f64, large: f64, unchanged: f64) -> [(&'static str, f64); 4] {
    [
        (PLATEAU, plateau),
        (LIFT, lift),
        (LARGE_BATCH_GAIN, large),
        (NO_CHANGE_AT_BATCH_1, unchanged),
    ]
}

/// `n` pairs whose ratio is `ratio`, spread +-2e+00% ([`verdict::testing::synthetic_pairs`]).
fn measured(claim: &Claim, ratio: f64, n: usize) -> Measured {
    verdict::testing::synthetic_pairs(claim, ratio, 0.02, n)
}

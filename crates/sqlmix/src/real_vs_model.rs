//! The seed's comparisons on the real dqlite node and on the model side by side, like
//! for like with the seed's own settings (48 threads, 80% reads, an open pool): the
//! semaphore at K = 24 (the seed's GOMAXPROCS) and K = 2 against none, and a 2-connection
//! pool against an open one, each row labelled by its basis (`real`: the
//! `sqlmix-libdqlite*` files, `model`: the `sqlmix-dqlite*` files with
//! `backend=dqlite-model`, or `dqlite` in older results).
//!
//! Data first ([`sides`]), then one [`Answer`] whose verdict rests on the real node
//! ([`answer`]). The comparisons go through [`harness::judge`]; nothing here renders.

use harness::findings::{Answer, Basis, Run, Table, Verdict};
use harness::judge::{self, Est};
use harness::RunRecord;

/// The real node's scenario files: the K sweep, the pool sizes, the apps.
pub const REAL_FILES: [&str; 3] = [
    "sqlmix-libdqlite",
    "sqlmix-libdqlite-pool",
    "sqlmix-libdqlite-apps",
];
/// The model's scenario files, in the same order.
pub const MODEL_FILES: [&str; 3] = ["sqlmix-dqlite", "sqlmix-dqlite-pool", "sqlmix-dqlite-apps"];

/// One basis's figures at the seed's settings; `None` where the run has no such cell.
#[derive(Debug, Clone, PartialEq)]
pub struct Side {
    /// `real` or `model`.
    pub basis: Basis,
    /// txn/s by K, in the order of [`KS`].
    pub by_k: Vec<Option<Est>>,
    /// Retries per transaction at K = 2 and unlimited.
    pub retries: (Option<f64>, Option<f64>),
    /// txn/s of the open pool (no semaphore) with 2, 3 and 64 connections.
    pub by_pool: Vec<Option<Est>>,
    /// txn/s with 1, 3 and 6 apps.
    pub by_apps: Vec<Option<Est>>,
}

/// The K values of the sweep, as the `slots` parameter writes them.
pub const KS: [&str; 5] = ["2", "12", "24", "48", "unlimited"];
const POOLS: [&str; 3] = ["2", "3", "64"];
const APPS: [&str; 3] = ["1", "3", "6"];

fn is_side(r: &RunRecord, basis: Basis) -> bool {
    let b = judge::param_text(r, "backend");
    match basis {
        Basis::Real => b == "libdqlite",
        _ => crate::is_model_backend(&b),
    }
}

fn cell<'a>(rows: &[&'a RunRecord], param: &str, value: &str) -> Option<&'a RunRecord> {
    rows.iter()
        .copied()
        .filter(|r| r.threads == 48)
        .find(|r| judge::param_text(r, param) == value)
}

/// The figures of each basis the run has cells of (real first).
pub fn sides(run: &Run<'_>) -> Vec<Side> {
    let mut out = Vec::new();
    for (basis, files) in [(Basis::Real, REAL_FILES), (Basis::Model, MODEL_FILES)] {
        let rows = |file: &str| -> Vec<&RunRecord> {
            run.of_file(file)
                .into_iter()
                .filter(|r| is_side(r, basis))
                .collect()
        };
        let (sweep, pool, apps) = (rows(files[0]), rows(files[1]), rows(files[2]));
        if sweep.is_empty() && pool.is_empty() && apps.is_empty() {
            continue;
        }
        let est = |rows: &[&RunRecord], p: &str, v: &str| cell(rows, p, v).map(Est::of);
        let retries =
            |v: &str| cell(&sweep, "slots", v).and_then(|r| judge::extra(r, "retries_per_txn"));
        out.push(Side {
            basis,
            by_k: KS.iter().map(|k| est(&sweep, "slots", k)).collect(),
            retries: (retries("2"), retries("unlimited")),
            by_pool: POOLS.iter().map(|p| est(&pool, "pool_size", p)).collect(),
            by_apps: APPS.iter().map(|a| est(&apps, "shards", a)).collect(),
        });
    }
    out
}

fn text(e: &Option<Est>) -> String {
    e.as_ref().map_or("-".to_owned(), Est::text)
}

fn ratio(a: &Option<Est>, b: &Option<Est>) -> Option<f64> {
    Some(a.as_ref()?.ratio(b.as_ref()?))
}

fn ratio_text(r: Option<f64>) -> String {
    r.map_or("-".to_owned(), |r| format!("{r:.2}x"))
}

fn above(a: &Option<Est>, b: &Option<Est>) -> Option<bool> {
    a.as_ref()?.above(b.as_ref()?)
}

/// The seed's three claims on one side: K = 24 beats no semaphore, K = 2 beats K = 24, a
/// 2-connection pool beats an open one.
pub fn parts(side: &Side) -> [Option<bool>; 3] {
    [
        above(&side.by_k[2], &side.by_k[4]),
        above(&side.by_k[0], &side.by_k[2]),
        above(&side.by_pool[0], &side.by_pool[2]),
    ]
}

/// Real and model side by side; the verdict is the real node's (the model's parts are in
/// the tables and the last sentence). `None` when the run has neither.
pub fn answer(run: &Run<'_>) -> Option<Answer> {
    let sides = sides(run);
    let first = sides.first()?;
    let real = sides.iter().find(|s| s.basis == Basis::Real);
    let verdict_side = real.unwrap_or(first);
    let verdict = Verdict::of_parts(&parts(verdict_side));
    let r24 = |s: &Side| ratio(&s.by_k[2], &s.by_k[4]);
    let r2 = |s: &Side| ratio(&s.by_k[0], &s.by_k[4]);
    let mut sentences = Vec::new();
    for s in &sides {
        let on = match s.basis {
            Basis::Real => "On the real dqlite node",
            _ => "On the model",
        };
        sentences.push(format!(
            "{on} (48 threads, 80% reads), K = 2 gives {} txn/s and K = 24 {} against {} \
             with no semaphore ({} and {}); retries per transaction {} at K = 2, {} unlimited.",
            text(&s.by_k[0]),
            text(&s.by_k[2]),
            text(&s.by_k[4]),
            ratio_text(r2(s)),
            ratio_text(r24(s)),
            s.retries.0.map_or("-".to_owned(), |r| format!("{r:.2}")),
            s.retries.1.map_or("-".to_owned(), |r| format!("{r:.2}")),
        ));
    }
    if let Some(s) = real {
        sentences.push(format!(
            "Without a semaphore on the real node, a 2-connection pool gives {} txn/s against \
             {} for 64 ({}).",
            text(&s.by_pool[0]),
            text(&s.by_pool[2]),
            ratio_text(ratio(&s.by_pool[0], &s.by_pool[2])),
        ));
    }
    sentences.truncate(3);
    let k_row = |s: &Side| {
        let mut row = vec![s.basis.word().to_owned()];
        row.extend(s.by_k.iter().map(text));
        row.push(ratio_text(r2(s)));
        row.push(ratio_text(r24(s)));
        row
    };
    let mut k_columns: Vec<String> = vec!["basis".into()];
    k_columns.extend(KS.iter().map(|k| format!("K = {k}")));
    k_columns.extend(["K=2 / unlimited".into(), "K=24 / unlimited".into()]);
    let other_row = |s: &Side| {
        let mut row = vec![s.basis.word().to_owned()];
        row.extend(s.by_pool.iter().chain(&s.by_apps).map(text));
        row
    };
    let mut other_columns: Vec<String> = vec!["basis".into()];
    other_columns.extend(POOLS.iter().map(|p| format!("pool {p}, no semaphore")));
    other_columns.extend(APPS.iter().map(|a| format!("{a} apps, K = 2 each")));
    Some(Answer {
        verdict,
        basis: verdict_side.basis,
        calibrated_on: Vec::new(),
        figure: format!(
            "K = 24 / no semaphore {} on the {} ({} / {} txn/s)",
            ratio_text(r24(verdict_side)),
            if verdict_side.basis == Basis::Real {
                "real node"
            } else {
                "model"
            },
            text(&verdict_side.by_k[2]),
            text(&verdict_side.by_k[4]),
        ),
        sentences,
        details: vec![
            "Real: a libdqlite 1.11 node in the cell's process, one database per model with \
             its own database/sql-like pool, Raft log on tmpfs; model: one serving thread per \
             app with serve_us, commit_us and rtt_us chosen, one database per app."
                .to_owned(),
        ],
        tables: vec![
            Table {
                title: "txn/s by semaphore size K at 48 threads, real node and model".into(),
                columns: k_columns,
                rows: sides.iter().map(k_row).collect(),
            },
            Table {
                title: "txn/s by pool size (no semaphore) and by apps, real node and model".into(),
                columns: other_columns,
                rows: sides.iter().map(other_row).collect(),
            },
        ],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness::schema::{CellKey, CellStatus};
    use std::collections::BTreeMap;

    fn record(
        file: &str,
        backend: &str,
        param: &str,
        value: &str,
        ops: f64,
        n: usize,
    ) -> RunRecord {
        let key = CellKey {
            scenario: "sqlmix".into(),
            variant: "semaphore".into(),
            params: [
                ("backend".to_owned(), serde_json::json!(backend)),
                (param.to_owned(), serde_json::json!(value)),
            ]
            .into(),
            threads: 48,
            cores: 2,
        };
        let mut r = RunRecord::failed(&key, "0-1", "x");
        r.status = CellStatus::Ok;
        r.failure = None;
        r.verified = true;
        r.scenario_file = file.into();
        r.ops_per_sec = ops;
        r.ops_per_sec_ci = [ops * 0.95, ops * 1.05];
        r.ops_per_sec_reps = vec![ops; n];
        r.repeats = n;
        r
    }

    fn cells(
        backend: &str,
        files: [&str; 3],
        ks: [f64; 5],
        pools: [f64; 3],
        n: usize,
    ) -> Vec<RunRecord> {
        let mut out: Vec<RunRecord> = KS
            .iter()
            .zip(ks)
            .map(|(k, ops)| record(files[0], backend, "slots", k, ops, n))
            .collect();
        out.extend(
            POOLS
                .iter()
                .zip(pools)
                .map(|(p, ops)| record(files[1], backend, "pool_size", p, ops, n)),
        );
        out
    }

    fn judged(cells: &[RunRecord]) -> Answer {
        let seeds = BTreeMap::new();
        answer(&Run {
            cells,
            seeds: &seeds,
        })
        .unwrap()
    }

    #[test]
    fn the_seeds_shape_on_the_real_node_is_reproduced_with_the_model_beside_it() {
        let mut all = cells(
            "libdqlite",
            REAL_FILES,
            [2400., 1800., 1600., 1500., 1000.],
            [1800., 1500., 1000.],
            5,
        );
        // Older results call the model `dqlite`.
        all.extend(cells(
            "dqlite",
            MODEL_FILES,
            [800., 750., 600., 480., 500.],
            [820., 870., 490.],
            5,
        ));
        let a = judged(&all);
        assert_eq!((a.verdict, a.basis), (Verdict::Reproduced, Basis::Real));
        assert_eq!(a.tables[0].rows.len(), 2);
        assert_eq!(a.tables[0].rows[0][0], "real");
        assert_eq!(a.tables[0].rows[1][0], "model");
        assert_eq!(a.tables[0].rows[0][6], "2.40x");
        assert!(a.sentences.len() <= 3);
    }

    #[test]
    fn no_gain_from_the_semaphore_on_the_real_node_is_not_reproduced() {
        let all = cells(
            "libdqlite",
            REAL_FILES,
            [1000., 1000., 1000., 1000., 1000.],
            [1000., 1000., 1000.],
            5,
        );
        assert_eq!(judged(&all).verdict, Verdict::NotReproduced);
    }

    #[test]
    fn three_repetitions_cannot_tell() {
        let all = cells(
            "libdqlite",
            REAL_FILES,
            [2400., 1800., 1600., 1500., 1000.],
            [1800., 1500., 1000.],
            3,
        );
        assert_eq!(judged(&all).verdict, Verdict::CannotTell);
        let seeds = BTreeMap::new();
        assert!(answer(&Run {
            cells: &[],
            seeds: &seeds
        })
        .is_none());
    }
}

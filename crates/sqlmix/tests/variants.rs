//! Every sqlmix design against real SQLite with several threads and a heavy write share:
//! each must verify (nothing lost, nothing failed applied, no half-seen write), and the
//! private database folder must be gone afterwards. Tampering with the database must be
//! caught. Correctness only; no speed is asserted.

use std::sync::Arc;
use std::time::Duration;

use harness::testing::{self, conformance, Case};
use harness::{HotPath, OpCtx, Params, RunSettings, Worker, Workload};
use sqlmix::runner::TxnRunner;
use sqlmix::workload::SqlmixWorkload;
use sqlmix::SqlmixHotPath;

/// A small mix with a heavy write share, its databases under `dir`.
fn small(dir: &std::path::Path) -> Vec<(&'static str, &str)> {
    vec![
        ("models", "6"),
        ("units", "4"),
        ("read_pct", "50"),
        ("pool_size", "3"),
        ("slots", "2"),
        ("data_dir", dir.to_str().unwrap()),
    ]
}

fn params(dir: &std::path::Path, extra: &[(&str, &str)]) -> Params {
    testing::params(&SqlmixHotPath, &[small(dir).as_slice(), extra].concat())
}

fn settings(threads: usize) -> RunSettings {
    testing::settings(threads, 20, 150)
}

#[test]
fn every_design_conforms_under_contended_writes_and_cleans_up() {
    let dir = tempfile::tempdir().unwrap();
    let small = small(dir.path());
    let wal = [small.as_slice(), &[("journal_mode", "wal")]].concat();
    let delete = [small.as_slice(), &[("journal_mode", "delete")]].concat();
    // The dqlite path is the only one that reports `connects_per_sec`; rw-split refuses it
    // (`every_design_but_rw_split_verifies_over_the_dqlite_serving_path`).
    let dqlite = [
        small.as_slice(),
        &[("backend", "dqlite-model"), ("commit_us", "200")],
    ]
    .concat();
    let served = ["single-conn", "pool", "semaphore", "sharded", "breaker"];
    let window = Duration::from_millis(150);
    let runs = conformance(
        &SqlmixHotPath,
        &[
            Case::every_variant(&wal).threads(4).window(window),
            Case::every_variant(&delete).threads(4).window(window),
            Case::every_variant(&dqlite)
                .only(&served)
                .threads(4)
                .window(window),
        ],
    );
    for run in runs {
        let (m, what) = (&run.measurement, (run.variant, run.case));
        let writes = m.extra["writes_per_sec"].as_f64().unwrap();
        let reads = m.extra["reads_per_sec"].as_f64().unwrap();
        assert!(writes > 0.0 && reads > 0.0, "{what:?}: {:?}", m.extra);
    }
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn an_unusable_data_dir_is_refused_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("not-a-folder");
    std::fs::write(&file, "x").unwrap();
    let p = params(&file, &[]);
    let err = SqlmixHotPath.check(&p).unwrap_err();
    assert!(
        err.starts_with("data_dir=") && err.contains("writable folder"),
        "{err}"
    );
    let failure = SqlmixHotPath.measure("pool", &p, settings(1)).unwrap_err();
    assert!(failure.reason.contains("data_dir"), "{failure}");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "only the file we made"
    );
}

#[test]
fn tampering_with_a_committed_write_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    let p = params(dir.path(), &[("read_pct", "0")]);
    let config = sqlmix::config("pool", &p).unwrap();
    let runner = Arc::new(TxnRunner::new(&config).unwrap());
    let workload = SqlmixWorkload::new(Arc::clone(&runner), config.models, config.units, 0);
    let mut worker = workload.worker(0, 1);
    let mut ctx = OpCtx::default();
    for _ in 0..50 {
        assert!(worker.op(&mut ctx).is_ok());
    }
    let workers = vec![worker];
    assert_eq!(workload.verify(&workers), Ok(()));
    let conn = rusqlite::Connection::open(&runner.paths()[0]).unwrap();
    conn.execute(
        "UPDATE units SET version = version + 1 WHERE rowid = (SELECT MIN(rowid) FROM units)",
        [],
    )
    .unwrap();
    let err = workload.verify(&workers).unwrap_err();
    assert!(err.contains("stored version"), "{err}");
}

/// Parameters for the dqlite backend with short round trips and commits, then `extra`.
fn dqlite(dir: &std::path::Path, extra: &[(&str, &str)]) -> Params {
    let mut pairs = vec![
        ("backend", "dqlite-model"),
        ("rtt_us", "20"),
        ("commit_us", "200"),
    ];
    pairs.extend_from_slice(extra);
    params(dir, &pairs)
}

#[test]
fn every_design_but_rw_split_verifies_over_the_dqlite_serving_path() {
    let dir = tempfile::tempdir().unwrap();
    for variant in SqlmixHotPath.variants() {
        let p = dqlite(dir.path(), &[]);
        let result = SqlmixHotPath.measure(variant.name, &p, settings(4));
        if variant.name == "rw-split" {
            let failure = result.unwrap_err();
            assert!(
                failure.reason.contains("backend=dqlite"),
                "{}",
                failure.reason
            );
            continue;
        }
        let m = result.unwrap();
        assert_eq!(m.verified, Ok(()), "{}", variant.name);
        assert_eq!(m.extra["backend"], "dqlite-model");
        assert!(m.extra["writes_per_sec"].as_f64().unwrap() > 0.0);
        assert!(m.waits_measured);
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "{} left files behind",
            variant.name
        );
    }
}

#[test]
fn the_old_backend_name_dqlite_still_means_the_model() {
    let dir = tempfile::tempdir().unwrap();
    // Results files written before the real node existed say backend=dqlite.
    let map = [("backend".to_owned(), serde_json::json!("dqlite"))].into();
    let p = Params::from_map(SqlmixHotPath.params(), &map).unwrap();
    assert!(sqlmix::is_model_backend(p.word("backend")));
    assert_eq!(sqlmix::backend_word("dqlite"), "dqlite-model");
    let p = dqlite(dir.path(), &[("backend", "dqlite")]);
    let m = SqlmixHotPath.measure("pool", &p, settings(2)).unwrap();
    assert_eq!(m.verified, Ok(()));
    assert_eq!(m.extra["backend"], "dqlite-model");
}

#[test]
fn sharded_splits_the_unsharded_totals_unless_told_each() {
    let dir = tempfile::tempdir().unwrap();
    for (mode, conns, permits) in [("split", 3, 3), ("each", 9, 6)] {
        let p = params(
            dir.path(),
            &[("shard_resources", mode), ("shards", "3"), ("slots", "2")],
        );
        let m = SqlmixHotPath.measure("sharded", &p, settings(2)).unwrap();
        assert_eq!(m.verified, Ok(()));
        assert_eq!(m.extra["shard_resources"], mode);
        // pool_size 3 and 2 permits: split gives 1+1+1 connections and 1+1+1 permits
        // (at least one each), each gives 3 x 3 and 3 x 2.
        assert_eq!(m.extra["connections_total"], conns, "{mode}");
        assert_eq!(m.extra["permits_total"], permits, "{mode}");
    }
    let p = params(dir.path(), &[]);
    let m = SqlmixHotPath.measure("pool", &p, settings(1)).unwrap();
    assert_eq!(m.extra["connections_total"], 3);
    assert!(m.extra.get("shard_resources").is_none());
}

#[test]
fn a_rejecting_breaker_counts_turned_away_transactions_apart_from_served_ones() {
    let dir = tempfile::tempdir().unwrap();
    // Writes only, each holding the lock through a long commit: busy errors pile up.
    let p = dqlite(
        dir.path(),
        &[
            ("breaker_mode", "reject"),
            ("read_pct", "0"),
            ("commit_us", "5000"),
            ("pool_size", "8"),
        ],
    );
    // A longer window than the other tests': the breaker trips on a run of busy errors in
    // a row across threads, which 150 ms on a busy 2-core machine did not always give.
    let m = SqlmixHotPath
        .measure("breaker", &p, testing::settings(8, 20, 600))
        .unwrap();
    assert_eq!(m.verified, Ok(()));
    let rejected = m.extra["rejected"].as_u64().unwrap();
    assert!(rejected > 0, "{:?}", m.extra);
    assert!(m.extra["breaker_trips"].as_u64().unwrap() > 0);
    assert!(m.errors >= rejected, "rejected are not counted as served");
}

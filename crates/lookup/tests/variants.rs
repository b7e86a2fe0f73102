//! Every lookup variant, run by the real harness with several threads and a share of
//! writes: each must answer every search with the right entry and lose no modification.
//! Correctness only; no figure here is a speed.

use std::time::Duration;

use harness::testing::{self, conformance, Case};
use harness::{HotPath, Params, RunSettings};
use lookup::LookupHotPath;

fn params(write_pct: &str, keys: &str) -> Params {
    let set = [
        SMALL.as_slice(),
        &[("write_pct", write_pct), ("keys", keys)],
    ]
    .concat();
    testing::params(&LookupHotPath, &set)
}

fn settings(threads: usize) -> RunSettings {
    testing::settings(threads, 10, 80)
}

/// The small directory every variant runs here.
const SMALL: [(&str, &str); 3] = [
    ("users", "800"),
    ("groups", "300"),
    ("cache_entries", "200"),
];

#[test]
fn every_variant_conforms_under_concurrent_writes() {
    let set = |keys| [SMALL.as_slice(), &[("write_pct", "20"), ("keys", keys)]].concat();
    let (uniform, zipf) = (set("uniform"), set("zipf"));
    let window = Duration::from_millis(80);
    let runs = conformance(
        &LookupHotPath,
        &[
            Case::every_variant(&uniform).threads(4).window(window),
            Case::every_variant(&zipf).threads(4).window(window),
        ],
    );
    for run in runs {
        let (m, what) = (&run.measurement, (run.variant, run.case));
        assert_eq!(m.errors, 0, "{what:?}");
        let modifications = m.extra["modifications"].as_u64().unwrap();
        assert!(modifications > 0, "{what:?}: no write ran at write_pct=20");
    }
}

#[test]
fn pure_reads_modify_nothing_and_the_cache_reports_hits() {
    let m = LookupHotPath
        .measure("entry-cache", &params("0", "zipf"), settings(2))
        .unwrap();
    assert_eq!(m.verified, Ok(()));
    assert_eq!(m.extra["modifications"], 0);
    let ratio = m.extra["cache_hit_ratio"].as_f64().unwrap();
    assert!(
        ratio > 0.0 && ratio < 1.0,
        "200-entry cache over 800 users: {ratio}"
    );
}

#[test]
fn lmdb_leaves_no_temporary_folder_behind() {
    let before = lmdb_folders();
    LookupHotPath
        .measure("lmdb", &params("10", "uniform"), settings(2))
        .unwrap();
    let after = lmdb_folders();
    assert!(
        after.iter().all(|f| before.contains(f)),
        "left behind: {after:?}"
    );
}

fn lmdb_folders() -> Vec<String> {
    std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("contention-lab-lmdb-"))
        .collect()
}

#[test]
fn unknown_variant_is_a_failure_not_a_panic() {
    let err = LookupHotPath
        .measure("impl2", &params("0", "uniform"), settings(1))
        .unwrap_err();
    assert!(err.reason.contains("accepted global-mutex"), "{err}");
}

//! Every lookup variant, run by the real harness with several threads and a share of
//! writes: each must answer every search with the right entry and lose no modification.
//! Correctness only; no figure here is a speed.

use std::time::Duration;

use harness::{HotPath, Params, RunSettings};
use lookup::LookupHotPath;

fn params(write_pct: &str, keys: &str) -> Params {
    let specs = LookupHotPath.params();
    let mut p = Params::defaults(specs);
    p.set(specs, "users", "800").unwrap();
    p.set(specs, "groups", "300").unwrap();
    p.set(specs, "cache_entries", "200").unwrap();
    p.set(specs, "write_pct", write_pct).unwrap();
    p.set(specs, "keys", keys).unwrap();
    p
}

fn settings(threads: usize) -> RunSettings {
    RunSettings {
        threads,
        warmup: Duration::from_millis(10),
        duration: Duration::from_millis(80),
    }
}

#[test]
fn every_variant_verifies_under_concurrent_writes() {
    for variant in LookupHotPath.variants() {
        for keys in ["uniform", "zipf"] {
            let m = LookupHotPath
                .measure(variant.name, &params("20", keys), settings(4))
                .unwrap_or_else(|e| panic!("{}: {e}", variant.name));
            assert_eq!(m.verified, Ok(()), "{} with {keys} keys", variant.name);
            assert!(m.ops > 0, "{} did no work", variant.name);
            assert_eq!(m.errors, 0, "{}", variant.name);
            let modifications = m.extra["modifications"].as_u64().unwrap();
            assert!(
                modifications > 0,
                "{}: no write ran at write_pct=20",
                variant.name
            );
        }
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

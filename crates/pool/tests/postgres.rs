//! The real pools against a real PostgreSQL: each of deadpool, bb8 and r2d2-postgres
//! runs a short window with more clients than connections, reads and durable writes
//! mixed, and passes its invariants (every request answered, rows read and written as
//! the server counts them, every connection back); the figures they report are shares
//! within [0, 1] computed from the measured times. Skipped, with the reason printed,
//! where PostgreSQL is not installed. Correctness only; no speed asserted.

use harness::testing;
use harness::{HotPath, Params, RunSettings};
use pool::PoolHotPath;

const REAL: &[&str] = &["deadpool", "bb8", "r2d2-postgres"];

/// The server the tests use: `POOL_TEST_POSTGRES_URL` when set, else the lab's own.
fn url() -> String {
    std::env::var("POOL_TEST_POSTGRES_URL").unwrap_or_default()
}

fn skip() -> bool {
    let p = params(&[]);
    match PoolHotPath.missing(&p) {
        Some(m) if url().is_empty() => {
            eprintln!(
                "skipped: {} is missing ({}); apt-get install {}",
                m.what,
                m.reason,
                m.packages.join(" ")
            );
            true
        }
        _ => false,
    }
}

fn params(extra: &[(&str, &str)]) -> Params {
    let url = url();
    let mut pairs = vec![
        ("server", "postgres"),
        ("connections", "2"),
        ("table_rows", "500"),
        ("read_pct", "50"),
        ("postgres_url", url.as_str()),
    ];
    pairs.extend_from_slice(extra);
    testing::params(&PoolHotPath, &pairs)
}

fn settings(threads: usize) -> RunSettings {
    testing::settings(threads, 20, 300)
}

#[test]
fn every_real_pool_answers_more_clients_than_connections_and_verifies() {
    if skip() {
        return;
    }
    for variant in REAL {
        // 6 clients on 2 connections: clients must wait for a connection.
        let m = PoolHotPath
            .measure(variant, &params(&[]), settings(6))
            .unwrap_or_else(|e| panic!("{variant}: {e}"));
        assert_eq!(m.verified, Ok(()), "{variant}");
        assert!(m.ops > 0, "{variant}: no request answered");
        assert_eq!(m.errors, 0, "{variant}");
        let f = |k: &str| {
            m.extra
                .get(k)
                .and_then(|v| v.as_f64())
                .unwrap_or_else(|| panic!("{variant}: no {k} in {:?}", m.extra))
        };
        let share = f("acquire_share");
        assert!(
            (0.0..=1.0).contains(&share),
            "{variant}: acquire_share {share}"
        );
        // 6 clients on 2 connections: some waited, or (a pool that lets a returning
        // client barge ahead of its waiters) some finished no request at all.
        let waited = f("waited_share");
        let starved = f("clients_starved");
        assert!(
            (waited > 0.0 && waited <= 1.0) || starved > 0.0,
            "{variant}: waited_share {waited}, clients_starved {starved}"
        );
        assert!(starved < 6.0, "{variant}: no client served");
        if waited > 0.0 {
            assert!(f("wait_p50_ns") > 0.0, "{variant}");
        }
        assert!(f("acquire_p50_ns") <= f("acquire_p99_ns"), "{variant}");
        assert!(
            f("reads_per_sec") > 0.0 && f("writes_per_sec") > 0.0,
            "{variant}"
        );
        assert!(m.wait_share().is_some(), "{variant}");
    }
}

#[test]
fn the_real_pools_refuse_the_simulated_server_and_the_designs_refuse_postgres() {
    let simulated = testing::params(&PoolHotPath, &[]);
    for variant in REAL {
        let e = PoolHotPath
            .measure(variant, &simulated, settings(1))
            .unwrap_err();
        assert!(e.to_string().contains("server=postgres"), "{variant}: {e}");
    }
    let e = PoolHotPath
        .measure(
            "driver-v3",
            &testing::params(&PoolHotPath, &[("server", "postgres")]),
            settings(1),
        )
        .unwrap_err();
    assert!(e.to_string().contains("server=simulated"), "{e}");
}

#[test]
fn a_bad_url_fails_the_cell_in_one_line_naming_it() {
    for variant in REAL {
        let p = testing::params(
            &PoolHotPath,
            &[
                ("server", "postgres"),
                (
                    "postgres_url",
                    "host=/nonexistent port=1 user=nobody connect_timeout=2",
                ),
            ],
        );
        let e = PoolHotPath
            .measure(variant, &p, settings(1))
            .unwrap_err()
            .to_string();
        assert!(
            !e.contains('\n') && e.contains("/nonexistent"),
            "{variant}: {e}"
        );
    }
}

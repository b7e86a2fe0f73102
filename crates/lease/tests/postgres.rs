//! The three stores on the lab's own PostgreSQL (`backend=postgres`): each passes the
//! workload's checks under several writers with leases lapsing and claimed again, and its
//! time per table is PostgreSQL's own (`pg_stat_statements`): the tables each store's
//! statements touch are named, and no other. Correctness only; no speed asserted.
//! Skipped, with the reason printed, where PostgreSQL is not installed.

use harness::testing;
use harness::HotPath;
use lease::LeaseHotPath;

#[test]
fn the_three_stores_on_postgres_verify_and_are_timed_per_table_by_the_server() {
    if let Err(reason) = launcher::postgres::bin_dir() {
        eprintln!("skipped: {reason}");
        return;
    }
    let params = testing::params(
        &LeaseHotPath,
        &[
            ("backend", "postgres"),
            ("applications", "60"),
            ("time_scale", "2000"),
        ],
    );
    let expected: [(&str, &[&str]); 3] = [
        (
            "txn-log",
            &["clock", "lease", "transaction", "txn_log", "txns"],
        ),
        ("global-clock", &["lease", "transaction"]),
        ("sql-update", &["lease", "transaction"]),
    ];
    for (variant, tables) in expected {
        let m = LeaseHotPath
            .measure(variant, &params, testing::settings(3, 100, 300))
            .unwrap_or_else(|e| panic!("{variant}: {e:?}"));
        assert_eq!(m.verified, Ok(()), "{variant}");
        assert_eq!(m.errors, 0, "{variant}");
        assert!(
            m.extra.get("server_account_error").is_none(),
            "{variant}: {:?}",
            m.extra
        );
        assert_eq!(m.extra["durable"], serde_json::json!(true), "{variant}");
        let named: Vec<&str> = m.extra["table_time"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            named,
            tables.to_vec(),
            "{variant}: the tables its statements touch"
        );
        for key in [
            "busy_ms_per_s_leases",
            "busy_ms_per_s_txns",
            "busy_ms_per_s_lease",
            "wal_bytes_per_extend",
        ] {
            let v = m.extra[key].as_f64().unwrap_or(0.0);
            assert!(v > 0.0, "{variant}: {key} = {v}");
        }
        assert!(
            m.extra["lock_wait_ms_per_s"].as_f64().is_some(),
            "{variant}: lock waits sampled"
        );
        // The server's own CPU, read from its processes: every store makes it work.
        let cpu = m.extra["server_cpu_us_per_extend"].as_f64().unwrap_or(0.0);
        assert!(
            cpu > 0.0,
            "{variant}: server_cpu_us_per_extend = {cpu}: {:?}",
            m.extra.keys().collect::<Vec<_>>()
        );
        assert_eq!(
            m.extra["wal_bytes_per_extend"], m.extra["bytes_per_extend"],
            "{variant}"
        );
    }
    let err = LeaseHotPath
        .measure("lmdb", &params, testing::settings(1, 10, 50))
        .expect_err("lmdb has no PostgreSQL store");
    assert!(
        format!("{err:?}").contains("accepted txn-log, global-clock, sql-update"),
        "{err:?}"
    );
}

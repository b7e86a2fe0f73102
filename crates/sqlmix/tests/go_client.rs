//! The Go client (`client=go`, Juju's stack: go-dqlite under database/sql) against a real
//! node in this process: it is built (on demand, from Debian's packages), completes a
//! short window through Juju's gate and through a pool with no gate, its writes verify
//! through the node, its record carries the lab client's figure names, and cells it
//! cannot run are refused in one line. Each test prints why it is skipped where
//! libdqlite.so.0, go or go-dqlite is missing (`scripts/setup.sh` installs them).

use harness::testing;
use harness::{HotPath, Params};
use sqlmix::libdqlite::{go, node};
use sqlmix::SqlmixHotPath;

/// Whether the node and the Go client are here; prints why not.
fn have_both(test: &str) -> bool {
    if let Err(e) = node::available() {
        println!("{test}: skipped: {e}");
        return false;
    }
    if let Err(e) = go::binary() {
        println!("{test}: skipped: {e}");
        return false;
    }
    true
}

fn small(dir: &std::path::Path, extra: &[(&str, &str)]) -> Params {
    let mut pairs = vec![
        ("backend", "libdqlite"),
        ("client", "go"),
        ("models", "4"),
        ("units", "3"),
        ("read_pct", "50"),
        ("pool_size", "3"),
        ("slots", "2"),
        ("dqlite_bind", "loopback"),
        ("data_dir", dir.to_str().unwrap()),
    ];
    pairs.extend_from_slice(extra);
    testing::params(&SqlmixHotPath, &pairs)
}

#[test]
fn the_go_client_completes_a_short_window_and_verifies_through_the_node() {
    if !have_both("the_go_client_completes_a_short_window_and_verifies_through_the_node") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Juju's gate, and no gate with a pool of 2, on a loopback TCP port (how Juju reaches
    // its node).
    for (variant, pool) in [("semaphore", "3"), ("pool", "2")] {
        let bind = "loopback";
        let p = small(dir.path(), &[("pool_size", pool)]);
        // A 300 ms window on a loaded two-core machine may hold no write now and then:
        // taken again, up to three times; every window must verify.
        let mut both = false;
        for _ in 0..3 {
            let m = SqlmixHotPath
                .measure(variant, &p, testing::settings(4, 100, 300))
                .unwrap_or_else(|f| panic!("{variant} on {bind}: {f}"));
            assert_eq!(m.verified, Ok(()), "{variant} on {bind}");
            assert_eq!(m.extra["client"], "go");
            assert_eq!(m.extra["backend"], "libdqlite");
            for k in ["gate_ms_per_txn", "gate_wait_ms_per_txn", "retries_per_txn"] {
                assert!(m.extra[k].is_number(), "{variant}: {k}");
            }
            let permits = &m.extra["permits_total"];
            match variant {
                "semaphore" => assert_eq!(permits, 2),
                _ => assert!(permits.is_null(), "{permits}"),
            }
            let counted = |k: &str| m.extra[k].as_f64().unwrap() > 0.0;
            if counted("writes_per_sec") && counted("reads_per_sec") {
                assert_eq!(
                    m.ops as f64,
                    ((m.extra["reads_per_sec"].as_f64().unwrap()
                        + m.extra["writes_per_sec"].as_f64().unwrap())
                        * m.window.as_secs_f64())
                    .round(),
                    "ops are the window's committed reads and writes"
                );
                assert!(m.extra["gate_ms_per_txn"].as_f64().unwrap() > 0.0);
                both = true;
                break;
            }
        }
        assert!(
            both,
            "{variant} on {bind}: no window of three held both a read and a write"
        );
    }
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn the_seed_load_paces_its_steps_and_its_change_streams_read_what_the_writes_changed() {
    if !have_both(
        "the_seed_load_paces_its_steps_and_its_change_streams_read_what_the_writes_changed",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // 4 step workers offering 100 transactions/s in all, half of them writes, on 4 model
    // databases, each with its change stream.
    let p = small(dir.path(), &[("load", "seed"), ("rate", "100")]);
    let mut seen = false;
    for _ in 0..3 {
        let m = SqlmixHotPath
            .measure("semaphore", &p, testing::settings(4, 200, 500))
            .unwrap_or_else(|f| panic!("load=seed: {f}"));
        assert_eq!(m.verified, Ok(()));
        let f = |k: &str| {
            m.extra[k]
                .as_f64()
                .unwrap_or_else(|| panic!("{k}: {}", m.extra[k]))
        };
        assert_eq!(m.extra["load"], "seed");
        assert_eq!(m.extra["offered_per_sec"], 100);
        // Paced, not a closed loop: the steps cannot outrun the offered rate (a worker
        // runs at most one step per 40 ms, plus the one each may start at the window's
        // edge), however fast the node answers.
        let steps = f("reads_per_sec") + f("writes_per_sec")
            - f("polls_per_sec")
            - f("watcher_reads_per_sec");
        let most = 100.0 + 4.0 / m.window.as_secs_f64();
        assert!(steps <= most, "{steps:.0} steps/s offered 100/s");
        assert!(f("polls_per_sec") > 0.0, "the change streams poll");
        assert!((0.0..=1.0).contains(&f("late_step_share")));
        // Writes made events; the streams found them and their watchers read the units.
        if f("writes_per_sec") > 0.0 && f("watcher_reads_per_sec") > 0.0 {
            seen = true;
            break;
        }
    }
    assert!(seen, "no window of three had a watcher read a changed unit");
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
}

#[test]
fn cells_the_go_client_cannot_run_are_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    for (extra, says) in [
        (&[("backend", "local")][..], "backend=libdqlite"),
        (&[("databases", "per-app")][..], "databases=per-model"),
        (&[("client_us", "50")][..], "client_us=0"),
        (&[("dqlite_bind", "abstract")][..], "dqlite_bind=loopback"),
        (&[("load", "seed")][..], "rate >= 1"),
        (
            &[("load", "seed"), ("client", "lab")][..],
            "load=seed: client=go",
        ),
    ] {
        let e = SqlmixHotPath.check(&small(dir.path(), extra)).unwrap_err();
        assert!(e.contains(says) && !e.contains('\n'), "{extra:?}: {e}");
    }
    assert_eq!(SqlmixHotPath.check(&small(dir.path(), &[])), Ok(()));
    // Juju's runner is a semaphore or none: the other designs are refused before any node.
    let e = SqlmixHotPath
        .measure(
            "breaker",
            &small(dir.path(), &[]),
            testing::settings(1, 10, 50),
        )
        .unwrap_err();
    assert!(e.reason.contains("client=go"), "{e}");
    // The same rules hold where a cell is measured without the plan's check.
    let abstract_socket = small(dir.path(), &[("dqlite_bind", "abstract")]);
    let e = SqlmixHotPath
        .measure("semaphore", &abstract_socket, testing::settings(1, 10, 50))
        .unwrap_err();
    assert!(e.reason.contains("dqlite_bind=loopback"), "{e}");
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
}

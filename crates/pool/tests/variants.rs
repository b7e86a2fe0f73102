//! Every pool design with real threads as clients: requests are answered, no connection
//! ever exceeds its limit, a pool too small for its clients makes them wait (and, with a
//! short timeout, time out, counted as errors). Correctness only; no speed asserted.

use std::time::Duration;

use harness::testing::{self, check_conformance, Case};
use harness::{HotPath, Params, RunSettings};
use pool::PoolHotPath;

fn params(pairs: &[(&str, &str)]) -> Params {
    testing::params(&PoolHotPath, pairs)
}

fn settings(threads: usize) -> RunSettings {
    testing::settings(threads, 20, 200)
}

#[test]
fn every_design_conforms_and_answers_every_request_within_the_limits() {
    // 40 clients on 2 x 8 = 16 slots, 1 ms per request: clients queue for slots.
    let queued = [
        ("connections", "2"),
        ("max_requests", "8"),
        ("base_us", "1000"),
        ("per_point_ns", "0"),
    ];
    // No service time: the only figure is the acquire + release cycle (`ns_per_cycle`).
    let acquire_only = [
        ("connections", "1"),
        ("max_requests", "2"),
        ("base_us", "0"),
        ("per_point_ns", "0"),
        ("cpu_us", "0"),
        ("cpu_per_point_ns", "0"),
    ];
    let window = Duration::from_millis(200);
    let simulated: Vec<&str> = PoolHotPath
        .variants()
        .iter()
        .map(|v| v.name)
        .filter(|v| !pool::real::NAMES.contains(v))
        .collect();
    // The real pools: 3 clients on 2 connections of a real PostgreSQL (tests/postgres.rs
    // checks them further), where one can be started here.
    let url = std::env::var("POOL_TEST_POSTGRES_URL").unwrap_or_default();
    let real = [
        ("server", "postgres"),
        ("connections", "2"),
        ("table_rows", "100"),
        ("postgres_url", url.as_str()),
    ];
    let lacking = PoolHotPath.missing(&params(&real));
    let mut cases = vec![
        Case::every_variant(&queued)
            .only(&simulated)
            .threads(40)
            .window(window),
        Case::every_variant(&acquire_only)
            .only(&simulated)
            .threads(4)
            .window(window),
    ];
    if lacking.is_none() {
        cases.push(
            Case::every_variant(&real)
                .only(pool::real::NAMES)
                .threads(3),
        );
    }
    let runs = match check_conformance(&PoolHotPath, &cases) {
        Ok(runs) => runs,
        Err(e) => {
            // Without PostgreSQL only the real pools may go unrun, and the test says so.
            let unrun = |line: &str| {
                line == "pool: charted extra \"acquire_share\" is a number in no run's extra"
                    || pool::real::NAMES
                        .iter()
                        .any(|v| line == format!("pool/{v}: no case runs it"))
            };
            match &lacking {
                Some(m) if e.lines().all(unrun) => {
                    eprintln!(
                        "the real pools skipped: {} is missing ({})",
                        m.what, m.reason
                    );
                    Vec::new()
                }
                _ => panic!("{e}"),
            }
        }
    };
    for run in runs.iter().filter(|r| r.case < 2) {
        let (m, what) = (&run.measurement, (run.variant, run.case));
        if run.case == 0 {
            assert_eq!(m.errors, 0, "{what:?}: no timeouts at 5 s");
            assert!(
                m.wait_share().unwrap() > 0.0,
                "{what:?}: 40 clients on 16 slots must wait"
            );
            let load = m.extra["pool_load"].as_f64().unwrap();
            assert!(load > 0.5 && load <= 1.05, "{what:?}: pool load {load}");
            assert!(m.extra.contains_key("littles_law_ceiling"));
            continue;
        }
        assert!(
            !m.extra.contains_key("littles_law_ceiling"),
            "{what:?}: no ceiling without a service time"
        );
        let per_cycle = m.extra["ns_per_cycle"].as_f64().unwrap();
        let expected = 4.0 * m.window.as_nanos() as f64 / m.ops as f64;
        assert!(
            (per_cycle - expected).abs() <= expected * 1e-6,
            "{what:?}: ns_per_cycle {per_cycle}, threads x window / cycles {expected}"
        );
    }
}

#[test]
fn timeouts_are_counted_errors() {
    // One slot, 50 ms requests, 5 ms pool timeout: most of 8 clients time out.
    let p = params(&[
        ("connections", "1"),
        ("max_requests", "1"),
        ("base_us", "50000"),
        ("per_point_ns", "0"),
        ("pool_timeout_ms", "5"),
    ]);
    let m = PoolHotPath.measure("driver-v3", &p, settings(8)).unwrap();
    assert_eq!(m.verified, Ok(()));
    // A timed-out request is neither an error nor a served request.
    assert!(m.timeouts > 0);
    assert_eq!(m.errors, 0);
    assert_eq!(m.extra["timeouts"].as_u64().unwrap(), m.timeouts);
}

#[test]
fn oversized_pools_are_refused() {
    let p = params(&[("connections", "1000"), ("max_requests", "100000")]);
    assert!(PoolHotPath.check(&p).unwrap_err().contains("leases in all"));
}

#[test]
fn a_server_short_of_cpu_binds_and_says_so() {
    // 8 clients, room for all of them, a 1-core server with 2 ms of CPU per request. The
    // server is simulated in virtual time, so what it can serve follows from its model,
    // not from this machine's speed: one core passes one request per 2 ms, and the cell
    // names the server as its bound exactly when its utilisation says so. (How busy the
    // clients keep it depends on how promptly a loaded machine wakes them: not asserted.)
    let p = params(&[
        ("connections", "1"),
        ("max_requests", "64"),
        ("base_us", "1000"),
        ("per_point_ns", "0"),
        ("server_cores", "1"),
        ("cpu_us", "2000"),
        ("cpu_per_point_ns", "0"),
    ]);
    let m = PoolHotPath.measure("lock-free", &p, settings(8)).unwrap();
    assert_eq!(m.verified, Ok(()));
    assert_eq!(m.extra["server_ceiling"].as_f64(), Some(500.0));
    let util = m.extra["server_util"].as_f64().unwrap();
    assert!((0.0..=1.0 + 1e-9).contains(&util), "one core: {util}");
    let says_server = m.extra["bound_by"] == "server";
    assert_eq!(says_server, util >= pool::workload::BUSY, "{util}");
    // Requests answered in the window: one per 2 ms of it, and each client's request
    // under way at the open and at the close (the window's length is read back, whatever
    // it was).
    let most = m.window.as_secs_f64() * 500.0 + 1.0 + 2.0 * 8.0;
    assert!(m.ops as f64 <= most, "{} requests in {:?}", m.ops, m.window);

    // The same server with 64 cores is not the limit: 8 clients with one request each
    // keep at most 8 of its cores busy, and the clients bind.
    let p = params(&[
        ("connections", "1"),
        ("max_requests", "64"),
        ("base_us", "1000"),
        ("per_point_ns", "0"),
        ("server_cores", "64"),
        ("cpu_us", "2000"),
        ("cpu_per_point_ns", "0"),
    ]);
    let m = PoolHotPath.measure("lock-free", &p, settings(8)).unwrap();
    assert_eq!(m.extra["bound_by"], "clients");
    let util = m.extra["server_util"].as_f64().unwrap();
    assert!(util <= 8.0 / 64.0 + 1e-9, "{util}");
}

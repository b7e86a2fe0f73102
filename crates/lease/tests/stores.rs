//! Every lease store under several worker threads with simulated time fast enough that
//! leases lapse, get swept and are claimed again: each must verify (one holder per lease,
//! acknowledged extends read back, non-holders refused) and report what an extend writes.
//! Correctness only; no speed asserted.

use std::time::Duration;

use harness::testing::{self, conformance, Case};
use harness::{HotPath, OpCtx, Params, RunSettings, Worker, Workload};
use lease::other_stores::MemoryLeases;
use lease::workload::{LeaseShape, LeaseWorkload, SimClock};
use lease::LeaseHotPath;

/// Few applications and time fast enough that leases lapse within a short window.
const SMALL: [(&str, &str); 2] = [("applications", "60"), ("time_scale", "2000")];

fn params(pairs: &[(&str, &str)]) -> Params {
    testing::params(&LeaseHotPath, &[SMALL.as_slice(), pairs].concat())
}

#[test]
fn every_store_conforms_and_accounts_its_writes() {
    let dir = tempfile::tempdir().unwrap();
    let small = [
        SMALL.as_slice(),
        &[("data_dir", dir.path().to_str().unwrap())],
    ]
    .concat();
    // Long enough at this time scale for leases to lapse and be claimed again.
    let case = Case::every_variant(&small)
        .threads(4)
        .window(Duration::from_millis(300));
    for run in conformance(&LeaseHotPath, &[case]) {
        let (m, variant) = (&run.measurement, LeaseHotPath.variant(run.variant).unwrap());
        assert_eq!(m.errors, 0, "{}", variant.name);
        let extends = m.extra["extends_per_sec"].as_f64().unwrap();
        assert!(extends > 0.0, "{}", variant.name);
        assert!(
            m.extra["claims"].as_u64().unwrap() > 0,
            "{}: lapsed leases are claimed again",
            variant.name
        );
        let writes = m.extra["writes_per_extend"].as_f64().unwrap();
        match variant.name {
            // Five rows per extend, plus two for each refused non-holder attempt (5%).
            "txn-log" => assert!(
                (5.0..5.5).contains(&writes),
                "txn-log writes {writes} rows per extend"
            ),
            "sql-update" | "batched" | "lmdb" | "memory" => {
                assert!((writes - 1.0).abs() < 0.01, "{}: {writes}", variant.name)
            }
            "global-clock" => assert!((1.0..2.0).contains(&writes), "global-clock: {writes}"),
            other => panic!("unexpected store {other}"),
        }
        assert!(
            m.extra["table_time"]
                .as_object()
                .unwrap()
                .contains_key("lease"),
            "{}",
            variant.name
        );
        if variant.name == "batched" {
            assert!(m.extra["batch_size_mean"].as_f64().unwrap() >= 1.0);
        }
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "{} left files",
            variant.name
        );
    }
}

#[test]
fn fixed_rate_mode_paces_operations() {
    // The schedule, not a measured rate (a loaded machine stalls and then catches up):
    // each worker's operations fall due threads / rate apart, from its first one on,
    // whatever the store took; the runner sleeps until each is due.
    let shape = LeaseShape {
        applications: 60,
        units: 3,
        lease_ms: 60_000,
        time_scale: 1.0,
        rate: 500,
    };
    let store = std::sync::Arc::new(MemoryLeases::new());
    let clock = std::sync::Arc::new(SimClock::new(1.0));
    let workload = LeaseWorkload::new(store, shape, clock).unwrap();
    let mut worker = workload.worker(0, 2);
    let mut ctx = OpCtx::default();
    let mut due = Vec::new();
    for _ in 0..6 {
        due.push(worker.next_due().expect("a paced worker has a due time"));
        worker.op(&mut ctx);
    }
    let gaps: Vec<Duration> = due.windows(2).map(|d| d[1] - d[0]).collect();
    assert!(
        gaps.iter().all(|&g| g == Duration::from_millis(4)),
        "two workers at 500 ops/s: one operation each 4 ms, {gaps:?}"
    );
    // Unpaced, nothing is due: the runner never sleeps.
    let store = std::sync::Arc::new(MemoryLeases::new());
    let clock = std::sync::Arc::new(SimClock::new(1.0));
    let unpaced = LeaseShape { rate: 0, ..shape };
    let workload = LeaseWorkload::new(store, unpaced, clock).unwrap();
    assert_eq!(workload.worker(0, 2).next_due(), None);
    // And a paced cell says so in its record.
    let m = LeaseHotPath
        .measure(
            "sql-update",
            &params(&[("rate", "500")]),
            testing::settings(2, 20, 100),
        )
        .unwrap();
    assert_eq!(m.verified, Ok(()));
    assert_eq!(m.extra["paced_ops_per_sec"].as_u64(), Some(500));
}

#[test]
fn bad_parameters_are_refused_before_anything_is_created() {
    let err = LeaseHotPath
        .check(&params(&[("lease_s", "30"), ("extend_s", "30")]))
        .unwrap_err();
    assert!(
        err.starts_with("lease_s=30 with extend_s=30")
            && err.contains("accepted lease_s > extend_s"),
        "{err}"
    );
    let err = LeaseHotPath
        .check(&params(&[("data_dir", "/proc/nope")]))
        .unwrap_err();
    assert!(err.starts_with("data_dir=\"/proc/nope\""), "{err}");
    let specs = LeaseHotPath.params();
    assert!(Params::defaults(specs)
        .set(specs, "applications", "0")
        .is_err());
    assert!(Params::defaults(specs).set(specs, "units", "0").is_err());
}

#[test]
fn stores_say_whether_they_ran_durably_count_what_they_checked_and_measure_waits() {
    let dir = tempfile::tempdir().unwrap();
    let dir_text = dir.path().to_str().unwrap().to_owned();
    for sync in ["normal", "full"] {
        for variant in LeaseHotPath.variants() {
            let p = params(&[("data_dir", &dir_text), ("synchronous", sync)]);
            let settings = RunSettings {
                threads: 3,
                warmup: Duration::from_millis(10),
                duration: Duration::from_millis(150),
            };
            let m = LeaseHotPath.measure(variant.name, &p, settings).unwrap();
            assert_eq!(m.verified, Ok(()), "{} {sync}", variant.name);
            let durable = sync == "full" && variant.name != "memory";
            assert_eq!(m.extra["durable"], durable, "{} {sync}", variant.name);
            assert!(
                m.extra["leases_checked"].as_u64().unwrap() > 0,
                "{} {sync}",
                variant.name
            );
            assert!(m.waits_measured, "{}", variant.name);
            // A store that extended and keeps its data in files wrote bytes in the window,
            // durable or not (a byte count marked at the wrong edge read 0).
            let extends = m.extra["extends_per_sec"].as_f64().unwrap();
            if variant.name != "memory" && extends > 0.0 {
                let bytes = m.extra["bytes_per_extend"].as_f64().unwrap();
                assert!(
                    bytes > 0.0,
                    "{} {sync}: {bytes} bytes per extend",
                    variant.name
                );
            }
        }
    }
}

#[test]
fn the_ack_log_records_every_acknowledged_extend() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("acks.log");
    let p = params(&[("ack_log", log.to_str().unwrap())]);
    let settings = RunSettings {
        threads: 2,
        warmup: Duration::from_millis(10),
        duration: Duration::from_millis(100),
    };
    let m = LeaseHotPath.measure("sql-update", &p, settings).unwrap();
    assert_eq!(m.verified, Ok(()));
    let lines = std::fs::read_to_string(&log).unwrap();
    assert!(lines.lines().count() > 0);
    for line in lines.lines() {
        let parts: Vec<&str> = line.split(' ').collect();
        assert_eq!(parts.len(), 3, "{line}");
        assert!(parts[1].starts_with(parts[0]), "{line}");
        parts[2].parse::<i64>().unwrap();
    }
}

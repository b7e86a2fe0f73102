//! Durability across a crash: a child `lab run` of a durable lease store
//! (`synchronous=full`) is killed with SIGKILL in the middle of its run; then this process
//! (a fresh one, as after a restart) reads the database the child left behind and finds
//! every extend the child acknowledged, as recorded in its append-only ack log.
//!
//! SIGKILL is a process crash: it shows that an acknowledged extend was committed, not
//! that it reached the platter (that needs a power cut; `synchronous=full` is what asks
//! for it). Correctness only; no speed asserted.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Acknowledged extends in the log: (lease, holder, expiry), whole lines only.
fn acks(log: &Path) -> Vec<(String, String, i64)> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            let mut it = l.split(' ');
            let (lease, holder, expiry) = (it.next()?, it.next()?, it.next()?);
            Some((lease.to_owned(), holder.to_owned(), expiry.parse().ok()?))
        })
        .collect()
}

/// The private folder the child made under `data_dir`.
fn child_folder(data_dir: &Path) -> PathBuf {
    std::fs::read_dir(data_dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            p.is_dir()
                && p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("contention-lab-lease-"))
        })
        .expect("the child left its database folder behind")
}

fn kill_mid_run_and_check(variant: &str) {
    let dir = tempfile::tempdir().unwrap();
    let data_dir = dir.path().join("data");
    std::fs::create_dir(&data_dir).unwrap();
    let log = dir.path().join("acks.log");
    let param = |kv: String| ["--param".to_owned(), kv];
    let mut args: Vec<String> = [
        "run",
        "--scenario",
        "lease",
        "--variant",
        variant,
        "--threads",
        "4",
        "--warmup",
        "1ms",
        "--duration",
        "30s",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    // Real time (time_scale 1) and an hour-long lease: nothing lapses or is swept during
    // the test, so every acknowledged extend must still be there.
    for kv in [
        "synchronous=full".to_owned(),
        "applications=40".to_owned(),
        "time_scale=1".to_owned(),
        "lease_s=3600".to_owned(),
        format!("data_dir={}", data_dir.display()),
        format!("ack_log={}", log.display()),
    ] {
        args.extend(param(kv));
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_lab"))
        .args(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while acks(&log).len() < 200 && start.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
    }
    // SIGKILL: no destructor, no flush, no clean close.
    child.kill().unwrap();
    child.wait().unwrap();
    let acked = acks(&log);
    assert!(
        acked.len() >= 200,
        "{variant}: the child acknowledged only {} extends in 20 s",
        acked.len()
    );
    let stored = lease::read_back_folder(variant, &child_folder(&data_dir)).unwrap();
    for (lease, holder, expiry) in &acked {
        let l = stored
            .get(lease)
            .unwrap_or_else(|| panic!("{variant}: {lease} acknowledged but missing"));
        assert_eq!(&l.holder, holder, "{variant}: {lease}");
        assert!(
            l.expiry >= *expiry,
            "{variant}: {lease} extended to {expiry} (acknowledged) but {} stored",
            l.expiry
        );
    }
}

#[test]
fn every_acknowledged_extend_survives_a_sigkill_of_a_durable_run() {
    for variant in ["sql-update", "batched", "txn-log", "lmdb"] {
        kill_mid_run_and_check(variant);
    }
}

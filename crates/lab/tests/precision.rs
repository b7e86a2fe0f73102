//! The instrument's own guards, as a user meets them: a repetition taken beside a busy
//! loop outside the cell is detected and retaken; the results carry the reference loop and
//! the cost of a child; a second matrix on the same machine is refused while one measures,
//! runs beside it with `force=true`, and is not blocked by a `kill -9`'d holder.
//!
//! Every matrix here gets a private `TMPDIR` (the machine's lock lives in the temporary
//! folder), and everything is bounded in time.

use std::path::{Path, PathBuf};
use std::process::{Child, Output};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use lab::results::ResultsFile;

mod common;

fn root() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    common::copy_benches(dir.path());
    dir
}

fn text(out: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn results(root: &Path) -> Vec<ResultsFile> {
    let Ok(dir) = std::fs::read_dir(root.join("reports/data")) else {
        return Vec::new();
    };
    dir.map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .map(|p| ResultsFile::from_json(&std::fs::read_to_string(p).unwrap()).unwrap())
        .collect()
}

/// A short noop matrix: one cell, one thread on one core.
const NOOP: &[&str] = &[
    "matrix",
    "scenarios=noop",
    "threads=1",
    "cores=1",
    "duration=100ms",
    "warmup=10ms",
    "profile=false",
    "timeout=20s",
];

fn with<'a>(base: &[&'a str], more: &[&'a str]) -> Vec<&'a str> {
    base.iter().chain(more).copied().collect()
}

/// Busy loops outside the cell, one per CPU, until dropped (or a minute has passed).
struct BusyLoops {
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl BusyLoops {
    fn start() -> BusyLoops {
        let stop = Arc::new(AtomicBool::new(false));
        let until = Instant::now() + Duration::from_secs(60);
        let threads = (0..harness::affinity::allowed_cpus().len())
            .map(|_| {
                let stop = Arc::clone(&stop);
                std::thread::spawn(move || {
                    let mut x = 0u64;
                    while !stop.load(Ordering::Relaxed) && Instant::now() < until {
                        for _ in 0..10_000 {
                            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(1));
                        }
                    }
                })
            })
            .collect();
        BusyLoops { stop, threads }
    }
}

impl Drop for BusyLoops {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

#[test]
fn a_repetition_beside_a_busy_loop_is_detected_and_retaken() {
    let root = root();
    let tmp = common::private_tmp(root.path());
    let busy = BusyLoops::start();
    let out = common::with_fault(root.path(), &tmp, &with(NOOP, &["repeats=2"]), None)
        .output()
        .unwrap();
    drop(busy);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let files = results(root.path());
    let cell = &files[0].cells[0];
    assert_eq!(cell.repeats, 2, "{cell:?}");
    let i = cell
        .interference
        .as_ref()
        .expect("interference is recorded");
    // Every attempt ran beside at least one busy CPU: each was retaken, up to the bound.
    assert!(
        i.retaken >= 1 && i.retaken <= 2 * 2,
        "{i:?}: retaken once or twice per repetition"
    );
    assert_eq!(i.retaken_loads.len(), i.retaken);
    assert!(i.retaken_loads.iter().all(|&l| l > 0.25), "{i:?}");
    assert!(i.other_cpu_share_max > 0.0, "{i:?}");
    // The terminal and the report say so.
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("retaken: "), "{stdout}");
    let summary = std::fs::read_to_string(
        root.path()
            .join(format!("reports/{}/summary.md", files[0].run_id)),
    )
    .unwrap();
    assert!(
        summary.contains("noop.toml: ") && summary.contains("retaken"),
        "{summary}"
    );
    // The reference loop once per round, the cost of a child, the threshold.
    let env = &files[0].env;
    let reference = env.reference.as_ref().expect("env.reference");
    assert_eq!(reference.per_round_ms.len(), 2);
    assert!(reference.median_ms > 0.0);
    assert!(env.run_overhead_s.is_some_and(|s| s > 0.0), "{env:?}");
    assert_eq!(env.interference_threshold, Some(0.25));
}

#[test]
fn retakes_can_be_switched_off() {
    let root = root();
    let tmp = common::private_tmp(root.path());
    let busy = BusyLoops::start();
    let out = common::with_fault(root.path(), &tmp, &with(NOOP, &["interference=off"]), None)
        .output()
        .unwrap();
    drop(busy);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let files = results(root.path());
    let i = files[0].cells[0].interference.clone().unwrap();
    assert_eq!(i.retaken, 0, "{i:?}");
    assert_eq!(files[0].env.interference_threshold, None);
}

fn lock_file(tmp: &Path) -> PathBuf {
    tmp.join("contention-lab.matrix.lock")
}

/// A matrix whose one cell hangs until killed: it holds the lock meanwhile.
fn holder(root: &Path, tmp: &Path) -> Child {
    let child = common::with_fault(root, tmp, NOOP, Some("hang"))
        .spawn()
        .unwrap();
    let pid = format!("pid {}", child.id());
    common::wait_until("the first matrix to lock", Duration::from_secs(30), || {
        std::fs::read_to_string(lock_file(tmp)).is_ok_and(|t| t.starts_with(&pid))
    });
    child
}

#[test]
fn a_second_matrix_is_refused_while_one_measures() {
    let (first, second) = (root(), root());
    let tmp = common::private_tmp(first.path());
    let mut running = holder(first.path(), &tmp);

    let out = common::with_fault(second.path(), &tmp, NOOP, None)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains(&format!("another lab matrix (pid {}", running.id()))
            && stderr.contains("force=true"),
        "{stderr}"
    );
    assert!(results(second.path()).is_empty(), "nothing ran");

    // force=true runs beside it, and says so.
    let out = common::with_fault(second.path(), &tmp, &with(NOOP, &["force=true"]), None)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("note: force=true: running beside another lab matrix"));

    // A holder killed with SIGKILL leaves its file but not its lock.
    running.kill().unwrap();
    running.wait().unwrap();
    assert!(lock_file(&tmp).exists());
    let out = common::with_fault(second.path(), &tmp, NOOP, None)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // A holder that ends normally removes it.
    assert!(!lock_file(&tmp).exists());
}

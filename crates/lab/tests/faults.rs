//! Fault injection: a small matrix in a scratch root meets a hanging cell, an aborting
//! cell, a child killed from outside (also while perf profiles it), SIGINT, SIGTERM and
//! SIGHUP mid-round, and SIGKILL of lab followed by `resume`. Each test checks that finished cells are kept with their
//! figures, the results file parses, no process of the run and no scratch folder is left,
//! and the exit status.
//!
//! Cells misbehave through the test-only `CONTENTION_LAB_TEST_FAULT` variable read by the
//! child `lab run` (see `crates/lab/src/fault.rs`). Every run gets its own `TMPDIR`, which
//! both scopes the scratch-folder checks and identifies the run's processes in `/proc`.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use harness::schema::{CellRecord, CellStatus};
use lab::results::ResultsFile;

mod common;

/// A scratch project root with the repository's scenario files and a private `TMPDIR`.
struct Root {
    dir: tempfile::TempDir,
}

impl Root {
    fn new() -> Root {
        let dir = tempfile::tempdir().unwrap();
        common::copy_benches(dir.path());
        std::fs::create_dir(dir.path().join("tmp")).unwrap();
        Root { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn tmp(&self) -> PathBuf {
        self.path().join("tmp")
    }

    /// `lab` with `args` in this root, in its own process group (as a shell job is), with
    /// `fault` asked of its children.
    fn command(&self, args: &[&str], fault: Option<&str>) -> Command {
        use std::os::unix::process::CommandExt;
        let mut command = common::with_fault(self.path(), &self.tmp(), args, fault);
        // lab keeps a stop signal ignored when it starts ignored (`nohup`, a shell's `&`),
        // as it should; these tests are about a lab that hears them, wherever they run.
        // SAFETY: signal() is async-signal-safe, called between fork and exec.
        unsafe {
            command.pre_exec(|| {
                for sig in [libc::SIGINT, libc::SIGHUP, libc::SIGTERM] {
                    libc::signal(sig, libc::SIG_DFL);
                }
                Ok(())
            });
        }
        command
    }

    fn run(&self, args: &[&str], fault: Option<&str>) -> Output {
        self.command(args, fault).output().unwrap()
    }

    fn spawn(&self, args: &[&str], fault: Option<&str>) -> Child {
        self.command(args, fault).spawn().unwrap()
    }

    fn results_path(&self) -> PathBuf {
        let files: Vec<PathBuf> = std::fs::read_dir(self.path().join("reports/data"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        assert_eq!(files.len(), 1, "{files:?}");
        files[0].clone()
    }

    fn results(&self) -> ResultsFile {
        ResultsFile::from_json(&std::fs::read_to_string(self.results_path()).unwrap()).unwrap()
    }

    /// Processes of this root's runs: lab and its children carry its `TMPDIR`.
    fn processes(&self) -> Vec<Process> {
        let marker = format!("TMPDIR={}", self.tmp().display());
        let mut found = Vec::new();
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
                continue;
            };
            let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
                continue;
            };
            let environ: Vec<String> = environ
                .split(|&b| b == 0)
                .map(|s| String::from_utf8_lossy(s).into_owned())
                .collect();
            if !environ.contains(&marker) {
                continue;
            }
            let args = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            found.push(Process {
                pid,
                args: args
                    .split(|&b| b == 0)
                    .map(|s| String::from_utf8_lossy(s).into_owned())
                    .collect(),
                environ,
            });
        }
        found
    }

    /// Waits for the child `lab run` with `threads` worker threads in round `round`.
    fn wait_for_child(&self, threads: usize, round: usize) -> Process {
        let threads = threads.to_string();
        let round = format!("CONTENTION_LAB_ROUND={round}");
        let mut found = None;
        common::wait_until("the child to start", Duration::from_secs(30), || {
            found = self.processes().into_iter().find(|p| {
                p.args.get(1).is_some_and(|a| a == "run")
                    && p.args
                        .windows(2)
                        .any(|w| w[0] == "--threads" && w[1] == threads)
                    && p.environ.contains(&round)
            });
            found.is_some()
        });
        // Let it get past its start into the fault.
        std::thread::sleep(Duration::from_millis(100));
        found.unwrap()
    }

    fn scratch_folders(&self) -> Vec<String> {
        std::fs::read_dir(self.tmp())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("contention-lab-"))
            .collect()
    }

    /// No process of this root's runs and no scratch folder is left.
    fn assert_clean(&self) {
        let mut left = Vec::new();
        common::wait_until("the run's processes to end", Duration::from_secs(5), || {
            left = self.processes();
            left.is_empty()
        });
        assert_eq!(self.scratch_folders(), Vec::<String>::new());
    }
}

struct Process {
    pid: i32,
    args: Vec<String>,
    environ: Vec<String>,
}

fn signal(pid: i32, signal: i32) {
    // SAFETY: kill has no memory-safety preconditions.
    assert_eq!(unsafe { libc::kill(pid, signal) }, 0, "kill {pid} {signal}");
}

/// A matrix of two noop cells (threads=1 and threads=2 on one core).
fn matrix(repeats: &str, timeout: &str) -> Vec<String> {
    [
        "matrix",
        "scenarios=noop",
        "threads=1,2",
        "cores=1",
        "duration=50ms",
        "warmup=10ms",
        "profile=false",
        repeats,
        timeout,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn args(list: &[String]) -> Vec<&str> {
    list.iter().map(String::as_str).collect()
}

fn cell(results: &ResultsFile, threads: usize) -> &CellRecord {
    results
        .cells
        .iter()
        .find(|c| c.threads == threads)
        .unwrap_or_else(|| panic!("no threads={threads} cell in {:?}", results.cells))
}

/// A cell that ran and kept its figures. (Not `ops_per_sec > 0`: on a loaded machine a
/// 50 ms window can pass without a worker being scheduled.)
fn assert_measured(cell: &CellRecord) {
    assert_eq!(cell.status, CellStatus::Ok, "{cell:?}");
    assert!(cell.verified, "{cell:?}");
    assert!(cell.repeats >= 1 && cell.duration_s > 0.0, "{cell:?}");
    assert!(
        cell.ops_per_sec.is_finite() && cell.cpu_util.is_finite(),
        "{cell:?}"
    );
    assert!(cell.ops_per_sec_min <= cell.ops_per_sec && cell.ops_per_sec <= cell.ops_per_sec_max);
}

fn text(out: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// One failing cell among good ones: the matrix goes on, exit 1, the failure is named.
fn one_cell_fails(fault: &str, timeout: &str, reason: &str) {
    let root = Root::new();
    let out = root.run(&args(&matrix("repeats=1", timeout)), Some(fault));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let results = root.results();
    assert!(results.complete);
    assert_measured(cell(&results, 1));
    let failed = cell(&results, 2);
    assert_eq!(failed.status, CellStatus::Failed);
    let failure = failed.failure.as_deref().unwrap_or_default();
    assert!(failure.contains(reason), "{failure}");
    root.assert_clean();
}

#[test]
fn a_hanging_cell_is_killed_at_its_timeout() {
    one_cell_fails(
        "hang,threads=2",
        // Long enough that the good cell beside it finishes on a busy host.
        "timeout=5s",
        "timed out after 5s (killed)",
    );
}

#[test]
fn an_aborting_cell_is_failed_and_the_matrix_goes_on() {
    one_cell_fails("abort,threads=2", "timeout=20s", "killed by SIGABRT");
}

#[test]
fn a_child_killed_from_outside_is_failed_and_the_matrix_goes_on() {
    let root = Root::new();
    let lab = root.spawn(
        &args(&matrix("repeats=1", "timeout=30s")),
        Some("hang,threads=2"),
    );
    let child = root.wait_for_child(2, 0);
    signal(child.pid, libc::SIGKILL);
    let out = lab.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let results = root.results();
    assert!(results.complete);
    assert_measured(cell(&results, 1));
    let failure = cell(&results, 2).failure.clone().unwrap_or_default();
    assert!(failure.contains("killed by SIGKILL"), "{failure}");
    root.assert_clean();
}

/// Stops a two-round matrix with `sig` while the threads=2 cell hangs in round 2: round 1
/// is kept, the hanging repetition is discarded (not failed), the report is written.
fn stopped_mid_round(sig: i32, to_group: bool, code: i32, name: &str) {
    let root = Root::new();
    let lab = root.spawn(
        &args(&matrix("repeats=2", "timeout=30s")),
        Some("hang,threads=2,round=1"),
    );
    let child = root.wait_for_child(2, 1);
    let lab_pid = lab.id() as i32;
    if to_group {
        // As if the child shared lab's group: it gets the signal too, and first.
        signal(-child.pid, sig);
        signal(-lab_pid, sig);
    } else {
        // Twice, as `timeout` does (the child, then its group): one stop, not an insistence.
        signal(lab_pid, sig);
        signal(lab_pid, sig);
    }
    let out = lab.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(code), "{}", text(&out));
    assert!(
        text(&out).contains(&format!("interrupted by {name}")),
        "{}",
        text(&out)
    );
    let results = root.results();
    assert!(!results.complete);
    assert_measured(cell(&results, 1));
    let hung = cell(&results, 2);
    assert_measured(hung);
    assert_eq!(hung.repeats, 1, "the interrupted repetition is discarded");
    assert!(root
        .path()
        .join(format!("reports/{}/index.html", results.run_id))
        .is_file());
    root.assert_clean();
}

#[test]
fn sigint_to_the_process_group_mid_round_keeps_finished_cells() {
    stopped_mid_round(libc::SIGINT, true, 130, "SIGINT");
}

#[test]
fn sigterm_to_lab_keeps_finished_cells() {
    stopped_mid_round(libc::SIGTERM, false, 143, "SIGTERM");
}

#[test]
fn sighup_to_lab_keeps_finished_cells() {
    stopped_mid_round(libc::SIGHUP, false, 129, "SIGHUP");
}

#[test]
fn sigkill_to_lab_loses_only_the_round_in_flight_and_resume_finishes_the_run() {
    let root = Root::new();
    let settings = matrix("repeats=2", "timeout=30s");
    let lab = root.spawn(&args(&settings), Some("hang,threads=2,round=1"));
    let child = root.wait_for_child(2, 1);
    signal(lab.id() as i32, libc::SIGKILL);
    let out = lab.wait_with_output().unwrap();
    assert_eq!(out.status.code(), None, "killed");
    // The child dies with lab (parent-death signal).
    common::wait_until("the child to die with lab", Duration::from_secs(5), || {
        !Path::new(&format!("/proc/{}/environ", child.pid)).exists()
            || std::fs::read(format!("/proc/{}/environ", child.pid)).is_ok_and(|e| e.is_empty())
    });
    let results = root.results();
    assert!(!results.complete);
    assert_measured(cell(&results, 1));
    assert_eq!(cell(&results, 2).repeats, 1, "round 1 was written");
    let stale = root.scratch_folders();
    assert_eq!(
        stale.len(),
        1,
        "lab's folder for the killed child: {stale:?}"
    );
    let id = results.run_id.clone();
    let resume = format!("resume={id}");

    // Another machine: refused in one line, nothing run.
    let path = root.results_path();
    let original = std::fs::read_to_string(&path).unwrap();
    let mut moved: serde_json::Value = serde_json::from_str(&original).unwrap();
    moved["env"]["hostname"] = "elsewhere".into();
    std::fs::write(&path, serde_json::to_string(&moved).unwrap()).unwrap();
    let out = root.run(&["matrix", &resume], None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("recorded on host elsewhere") && stderr.contains("force=true"),
        "{stderr}"
    );
    assert_eq!(root.scratch_folders(), stale, "nothing ran");

    // force=true resumes anyway and runs only what is missing.
    let out = root.run(&["matrix", &resume, "force=true"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("1 scratch folder(s)"), "{}", text(&out));
    let results = root.results();
    assert_eq!(results.run_id, id);
    assert!(results.complete);
    assert_eq!(results.cells.len(), 2);
    for threads in [1, 2] {
        assert_measured(cell(&results, threads));
        assert_eq!(cell(&results, threads).repeats, 2);
    }
    assert!(
        results.command.contains("threads=1,2"),
        "{}",
        results.command
    );
    root.assert_clean();

    // A complete run has nothing to resume.
    let out = root.run(&["matrix", &resume], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing to resume"));
}

#[test]
fn rounds_are_shuffled_with_a_recorded_seed_and_logged_line_by_line() {
    let root = Root::new();
    let out = root.run(&args(&matrix("repeats=2", "timeout=20s")), None);
    assert!(out.status.success(), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let rounds: Vec<&str> = stderr.lines().filter(|l| l.starts_with("round ")).collect();
    assert_eq!(rounds.len(), 2, "{stderr}");
    assert!(
        rounds[1].starts_with("round 2/2: 4/4 cell runs done, about 0s left"),
        "{stderr}"
    );
    let results = root.results();
    assert!(results.complete);
    assert!(results.order_seed > 0);
    let state = results.resume.expect("settings recorded");
    assert!(state.settings.contains(&"threads=1,2".to_owned()));
    assert!(state.repetitions.is_empty(), "only kept while incomplete");
    root.assert_clean();
}

#[test]
fn a_child_killed_mid_measurement_leaves_no_folder_in_the_data_dir() {
    let root = Root::new();
    let data = root.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let data_dir = format!("data_dir={}", data.display());
    let lab = root.spawn(
        &[
            "matrix",
            "scenarios=sqlmix",
            "variants=single-conn",
            "threads=1",
            "cores=1",
            "duration=20s",
            "warmup=10ms",
            "repeats=1",
            "profile=false",
            "models=5",
            &data_dir,
        ],
        None,
    );
    let child = root.wait_for_child(1, 0);
    let owned = format!("contention-lab-sqlmix-p{}-", child.pid);
    common::wait_until(
        "the child's database folder",
        Duration::from_secs(30),
        || {
            std::fs::read_dir(&data)
                .unwrap()
                .any(|e| e.unwrap().file_name().to_string_lossy().starts_with(&owned))
        },
    );
    signal(child.pid, libc::SIGKILL);
    let out = lab.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let failure = root.results().cells[0].failure.clone().unwrap_or_default();
    assert!(failure.contains("killed by SIGKILL"), "{failure}");
    assert_eq!(std::fs::read_dir(&data).unwrap().count(), 0);
    root.assert_clean();
}

/// Whether `perf record` can sample here (installed and allowed): without it the profiled
/// run falls back to pprof and keeps no folder for perf.
fn perf_records(dir: &Path) -> bool {
    Command::new("perf")
        .args(["record", "-q", "-e", "cpu-clock", "-o"])
        .arg(dir.join("probe.data"))
        .args(["--", "true"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn a_child_killed_while_perf_profiles_it_leaves_no_folder_behind() {
    let probe = tempfile::tempdir().unwrap();
    if !perf_records(probe.path()) {
        eprintln!("skipped: perf cannot record here");
        return;
    }
    let root = Root::new();
    // The profiling run comes after the counted one; both last `duration`.
    let lab = root.spawn(
        &[
            "matrix",
            "scenarios=noop",
            "threads=1",
            "cores=1",
            "duration=3s",
            "warmup=10ms",
            "repeats=1",
            "profile=all",
            "timeout=60s",
        ],
        None,
    );
    let mut profiled = None;
    common::wait_until("the profiling run", Duration::from_secs(30), || {
        profiled = root.processes().into_iter().find(|p| {
            p.args.get(1).is_some_and(|a| a == "run") && p.args.contains(&"--profile".to_owned())
        });
        profiled.is_some()
    });
    let child = profiled.unwrap();
    let perf_folder = || {
        std::fs::read_dir(root.tmp()).unwrap().flatten().any(|run| {
            std::fs::read_dir(run.path()).is_ok_and(|mut inner| {
                inner.any(|e| {
                    e.is_ok_and(|e| {
                        e.file_name()
                            .to_string_lossy()
                            .starts_with("contention-lab-perf-")
                    })
                })
            })
        })
    };
    common::wait_until("perf's folder", Duration::from_secs(10), perf_folder);
    signal(child.pid, libc::SIGKILL);
    let out = lab.wait_with_output().unwrap();
    assert_measured(&root.results().cells[0]);
    drop(out);
    root.assert_clean();
    // Not only the lab's own folders: nothing at all is left in the temporary folder.
    let left: Vec<_> = std::fs::read_dir(root.tmp())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

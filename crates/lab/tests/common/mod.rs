//! Helpers shared by the `lab` integration tests: run the binary against a scratch
//! project root.

// Each test binary compiles this module and uses some of its helpers.
#![allow(dead_code)]

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// Runs `lab` with `args` in `root`, which stands in for the project root.
pub fn lab(root: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lab"))
        .args(args)
        .env("LAB_ROOT", root)
        .env("TMPDIR", private_tmp(root))
        .current_dir(root)
        .output()
        .unwrap()
}

/// A one-cell matrix at one core whose window (60 s) outlasts the test: it ends only when
/// the test stops it.
pub const LONG_MATRIX: [&str; 7] = [
    "matrix",
    "cores=1",
    "repeats=1",
    "duration=60s",
    "warmup=10ms",
    "timeout=120s",
    "profile=false",
];

/// `lab` with `args` in `root` and temporary folder `tmp`, in a process group of its own
/// as a shell job is, reading nothing and its output discarded: a run a test signals or
/// kills (a caller that reads an output pipes it again).
pub fn job(root: &Path, tmp: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_lab"));
    command
        .args(args)
        .env("LAB_ROOT", root)
        .env("TMPDIR", tmp)
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0);
    command
}

/// [`job`] with its output read and `fault` asked of its children (`lab`'s test-only
/// fault injection), or none even where the test's own environment asks one.
pub fn with_fault(root: &Path, tmp: &Path, args: &[&str], fault: Option<&str>) -> Command {
    let mut command = job(root, tmp, args);
    command
        .env_remove("CONTENTION_LAB_TEST_FAULT")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(fault) = fault {
        command.env("CONTENTION_LAB_TEST_FAULT", fault);
    }
    command
}

/// A temporary folder of `root`'s own: the machine's matrix lock lives in the temporary
/// folder, and tests' matrices, which run side by side, must not refuse one another.
pub fn private_tmp(root: &Path) -> std::path::PathBuf {
    let tmp = root.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    tmp
}

/// Copies the `.toml` scenario files of the repository into `root/benches`.
pub fn copy_benches(root: &Path) {
    let benches = root.join("benches");
    std::fs::create_dir_all(&benches).unwrap();
    let repo_benches = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../benches");
    for entry in std::fs::read_dir(repo_benches).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            std::fs::copy(&path, benches.join(path.file_name().unwrap())).unwrap();
        }
    }
}

/// Processes whose environment carries `TMPDIR=tmp`: a test's lab, its children and the
/// servers they start, by pid and arguments.
pub fn processes_of(tmp: &Path) -> Vec<(i32, Vec<String>)> {
    let marker = format!("TMPDIR={}", tmp.display());
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        if !environ.split(|&b| b == 0).any(|v| v == marker.as_bytes()) {
            continue;
        }
        let args = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let args = args
            .split(|&b| b == 0)
            .map(|s| String::from_utf8_lossy(s).into_owned())
            .collect();
        found.push((pid, args));
    }
    found
}

/// Polls `done` every 20 ms; panics naming `what` after `limit`.
pub fn wait_until(what: &str, limit: std::time::Duration, mut done: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// A scratch project root holding copies of the repository's scenario files.
pub fn scratch_root() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    copy_benches(root.path());
    root
}

/// The results files under `root/reports/data`, none when the folder is missing.
pub fn results_files(root: &Path) -> Vec<std::path::PathBuf> {
    match std::fs::read_dir(root.join("reports/data")) {
        Ok(dir) => dir.map(|e| e.unwrap().path()).collect(),
        Err(_) => Vec::new(),
    }
}

/// After a server cell was stopped: its server `server_pid` dies, no process of the test's
/// `tmp` stays, `port` is free again, and `tmp` holds no folder but the template cache
/// (which lives there only on a machine with no home folder).
pub fn assert_server_gone(tmp: &Path, server_pid: i32, port: u16) {
    let limit = std::time::Duration::from_secs(5);
    let alive = |pid: i32| Path::new(&format!("/proc/{pid}")).exists();
    wait_until("the server to die", limit, || !alive(server_pid));
    wait_until("every process to end", limit, || {
        processes_of(tmp).is_empty()
    });
    let port_held = std::net::TcpStream::connect(("127.0.0.1", port)).is_ok();
    assert!(!port_held, "port {port} still held");
    let left: Vec<String> = std::fs::read_dir(tmp)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "contention-lab-cache")
        .collect();
    assert_eq!(left, Vec::<String>::new(), "folders left in TMPDIR");
}

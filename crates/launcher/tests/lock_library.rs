//! A server started with `locks=true` runs under the lock library, or its start fails in
//! one line saying why: here a shell that execs `sleep` as the server, once as it is
//! (the library loads: its table is the server's) and once with `LD_PRELOAD` cleared on
//! the way (the shell made the table under the same pid, but the server runs without the
//! library). Its own test binary: the preload switch is the process's.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use launcher::process::{Running, Start};

/// Starts `script` under `sh` as the server, ready once the process is `sleep`.
fn start(folder: &Path, script: &str) -> Result<Running, String> {
    harness::locks::set_preload(true);
    let mut command = Command::new("sh");
    command.args(["-c", script]);
    let start = Start {
        folder,
        port: 0,
        cpus: &[],
        leftovers: &[],
        logs: &[],
        timeout: Duration::from_secs(20),
        lock_wrappers: Some(&[]),
    };
    Running::start(command, start, |r| {
        let comm = std::fs::read_to_string(format!("/proc/{}/comm", r.pid)).unwrap_or_default();
        Ok(comm.trim() == "sleep")
    })
}

#[test]
fn a_server_under_the_library_starts_and_one_that_clears_ld_preload_is_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let running = start(dir.path(), "exec sleep 30").expect("sleep loads the library");
    let table = launcher::locks::table_of(running.pid).expect("its table is registered");
    assert_eq!(table.pid, running.pid as i32);
    drop(running);

    let dir = tempfile::tempdir().unwrap();
    let err = match start(dir.path(), "LD_PRELOAD= exec sleep 30") {
        Ok(_) => panic!("a server without the library was accepted"),
        Err(e) => e,
    };
    assert!(!err.contains('\n'), "{err}");
    assert!(
        err.contains("did not load the lock library") && err.contains("without locks=true"),
        "{err}"
    );
}

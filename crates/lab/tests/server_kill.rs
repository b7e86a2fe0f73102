//! A cell of the `server` hot path, on the tiny server (`lab tiny-server`, needing no
//! package), stopped in the middle of its window leaves nothing: no server process, no
//! scratch folder, no port held. Once the child `lab run` is killed with SIGKILL from
//! outside (no destructor runs, as a crash or an OOM kill would): its server must die with
//! it (parent-death signal) and lab must remove the child's scratch folder. Once the
//! matrix itself gets SIGTERM: it stops its child, which stops its server.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

mod common;

use common::{processes_of as processes, wait_until};

/// Starts a one-cell matrix of the tiny server with a 60 s window, waits until the server
/// runs, sends `signal` to the child `lab run` (`to_child`) or to the matrix, and checks
/// that nothing is left.
fn stop_mid_window_and_check(signal: libc::c_int, to_child: bool) {
    let root = tempfile::tempdir().unwrap();
    common::copy_benches(root.path());
    let tmp = root.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let mut lab = common::job(root.path(), &tmp, &common::LONG_MATRIX)
        .arg("scenarios=server-tiny")
        .arg("threads=2")
        .spawn()
        .unwrap();
    let mut found = None;
    wait_until("the server to start", Duration::from_secs(60), || {
        found = processes(&tmp)
            .into_iter()
            .find(|(_, args)| args.get(1).is_some_and(|a| a == "tiny-server"));
        found.is_some()
    });
    let (server_pid, args) = found.unwrap();
    let port: u16 = args
        .windows(2)
        .find(|w| w[0] == "--port")
        .map(|w| w[1].parse().unwrap())
        .unwrap();
    let child = processes(&tmp)
        .into_iter()
        .find(|(_, args)| args.get(1).is_some_and(|a| a == "run"))
        .expect("the child lab run");
    // Inside the window: the server answers, the clients send.
    std::thread::sleep(Duration::from_millis(500));
    let target = if to_child { child.0 } else { lab.id() as i32 };
    // SAFETY: signalling a process this test started (through lab).
    unsafe { libc::kill(target, signal) };
    let status = lab.wait().unwrap();
    assert_ne!(status.code(), Some(0), "a stopped matrix is no success");
    common::assert_server_gone(&tmp, server_pid, port);
}

#[test]
fn a_server_cell_killed_mid_window_leaves_no_process_folder_or_port() {
    stop_mid_window_and_check(libc::SIGKILL, true);
}

#[test]
fn a_matrix_terminated_mid_window_stops_its_server() {
    stop_mid_window_and_check(libc::SIGTERM, false);
}

/// A project root with the repository's scenario files and `benches/<name>.toml`, a
/// server file whose `[server] command` is `command` and whose threads are `threads`.
fn server_file(name: &str, threads: &str, command: &str) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    common::copy_benches(root.path());
    std::fs::write(
        root.path().join(format!("benches/{name}.toml")),
        format!(
            "hot_path = \"server\"\naxis = \"threads\"\nthreads = [{threads}]\nin_default = false\n\
             [server]\ncommand = \"{command}\"\n[load]\nbuiltin = \"line\"\n"
        ),
    )
    .unwrap();
    root
}

/// `lab matrix scenarios=<name>` of 100 ms windows, one repetition, no profile, to its end.
fn short_matrix(root: &Path, name: &str) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_lab"))
        .args([
            "matrix",
            &format!("scenarios={name}"),
            "cores=1",
            "repeats=1",
            "duration=100ms",
            "warmup=10ms",
            "profile=false",
        ])
        .env("LAB_ROOT", root)
        .env("TMPDIR", common::private_tmp(root))
        .current_dir(root)
        .output()
        .unwrap()
}

/// The processes of the test's lab with `marker` among their arguments.
fn with_arg(tmp: &Path, marker: &str) -> Vec<(i32, Vec<String>)> {
    processes(tmp)
        .into_iter()
        .filter(|(_, args)| args.iter().any(|a| a == marker))
        .collect()
}

#[test]
fn what_a_cell_leaves_in_its_process_group_goes_with_it() {
    // A server that leaves a process outside its own tree (a daemonised helper, or an
    // nginx worker whose master died): the cell's process group still holds it.
    let root = server_file(
        "orphan",
        "1",
        "sh -c '(sleep 41.3 &); exec {lab} tiny-server --threads {threads} --port {port}'",
    );
    let out = short_matrix(root.path(), "orphan");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Right after the return, without a pause: lab waits for its cells' processes to end.
    let tmp = common::private_tmp(root.path());
    assert_eq!(
        with_arg(&tmp, "41.3"),
        Vec::new(),
        "the orphan outlived the matrix"
    );
}

#[test]
fn a_server_that_daemonizes_leaves_nothing_once_the_matrix_returns() {
    // `setsid -f` is what a server's own `--daemonize yes` does: fork, leave the process
    // group and the session, and let the first process exit 0. The daemon is reached only
    // by the cell's cgroup; it must be gone the moment `lab matrix` returns.
    let root = server_file(
        "daemon",
        "1, 2",
        "sh -c 'setsid -f sleep 47.3 </dev/null >/dev/null 2>&1; exit 0'",
    );
    let out = short_matrix(root.path(), "daemon");
    let left = with_arg(&common::private_tmp(root.path()), "47.3");
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("without a cgroup of their own") {
        eprintln!("skipped: no writable cgroup2 here (not root?): {stderr}");
        return;
    }
    assert_eq!(left, Vec::new(), "daemons left: {stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        format!("{stdout}{stderr}").contains("went to the background"),
        "the cell's failure should say the server went to the background: {stdout}{stderr}"
    );
}

#[test]
fn a_daemon_of_a_server_dies_with_a_killed_matrix() {
    // `kill -9` of lab: no destructor runs and the daemon (setsid, re-parented) has no
    // death signal; lab's cgroup watchdog sees lab's end and kills the cells' cgroups.
    let root = server_file(
        "daemon",
        "1",
        "sh -c 'setsid -f sleep 47.5 </dev/null >/dev/null 2>&1; exec {lab} tiny-server --threads {threads} --port {port}'",
    );
    let tmp = common::private_tmp(root.path());
    let mut lab = common::job(root.path(), &tmp, &common::LONG_MATRIX)
        .arg("scenarios=daemon")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let daemon = || !with_arg(&tmp, "47.5").is_empty();
    wait_until("the daemon to start", Duration::from_secs(60), daemon);
    // SAFETY: signalling a process this test started.
    unsafe { libc::kill(lab.id() as i32, libc::SIGKILL) };
    lab.wait().unwrap();
    let mut stderr = String::new();
    use std::io::Read;
    lab.stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    if stderr.contains("without a cgroup of their own") {
        eprintln!("skipped: no writable cgroup2 here (not root?): {stderr}");
        return;
    }
    wait_until("every process to end", Duration::from_secs(5), || {
        processes(&tmp).is_empty()
    });
}

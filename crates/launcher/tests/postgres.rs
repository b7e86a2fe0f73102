//! The lab's PostgreSQL: it starts and answers, a bad start fails in one line quoting
//! its log, and nothing outlives it, whether it is dropped or its starter is killed.
//! Each test is skipped, with its reason printed, where PostgreSQL is not installed.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use launcher::postgres::{Postgres, PostgresOptions};

/// The environment variable that makes [`hold_a_server_until_killed`] run.
const HOLD_ENV: &str = "SERVERS_TEST_HOLD_POSTGRES";

fn installed() -> bool {
    match launcher::postgres::bin_dir() {
        Ok(_) => true,
        Err(reason) => {
            eprintln!("skipped: {reason}");
            false
        }
    }
}

/// Whether `pid` is gone (a zombie no one has reaped yet counts as gone: it runs nothing
/// and holds no port or file).
fn gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z') || rest.starts_with('X')),
    }
}

fn wait_gone(pid: u32) -> bool {
    let since = Instant::now();
    while since.elapsed() < Duration::from_secs(10) {
        if gone(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[test]
fn it_starts_answers_and_leaves_nothing_when_dropped() {
    if !installed() {
        return;
    }
    let parent = tempfile::tempdir().unwrap();
    let cpu = *harness::affinity::allowed_cpus().first().unwrap();
    let server = Postgres::start(&PostgresOptions {
        cpus: Some(vec![cpu]),
        parent: Some(parent.path().to_path_buf()),
        ..Default::default()
    })
    .unwrap();
    let mut client = server.client().unwrap();
    let row = client
        .query_one(
            "select current_setting('synchronous_commit'), current_setting('fsync'), \
             (select count(*) from pg_extension where extname = 'pg_stat_statements'), \
             pg_backend_pid(), current_setting('dynamic_shared_memory_type')",
            &[],
        )
        .unwrap();
    // Its shared memory lives in its folder, so a killed server leaves none in /dev/shm.
    assert_eq!(row.get::<_, String>(4), "mmap");
    assert_eq!(row.get::<_, String>(0), "on");
    assert_eq!(row.get::<_, String>(1), "on");
    assert_eq!(row.get::<_, i64>(2), 1);
    let backend = row.get::<_, i32>(3) as u32;
    let status = std::fs::read_to_string(format!("/proc/{backend}/status")).unwrap();
    let allowed = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap();
    assert_eq!(
        harness::affinity::parse_cpu_list(allowed.trim()).unwrap(),
        vec![cpu],
        "a backend runs on the server's CPUs"
    );
    let folder = server.folder().to_path_buf();
    let pid = server.pid();
    assert!(folder.join("data/PG_VERSION").is_file());
    assert!(folder.join("data/pg_dynshmem").is_dir());
    drop(client);
    drop(server);
    assert!(gone(pid), "the postmaster is gone once dropped");
    assert!(wait_gone(backend), "its backend is gone too");
    assert!(!folder.exists(), "its folder is removed");
}

#[test]
fn a_bad_setting_fails_in_one_line_quoting_the_log_and_leaves_no_folder() {
    if !installed() {
        return;
    }
    let parent = tempfile::tempdir().unwrap();
    let err = Postgres::start(&PostgresOptions {
        settings: vec![("max_connections".into(), "many".into())],
        parent: Some(parent.path().to_path_buf()),
        ..Default::default()
    })
    .err()
    .expect("a bad setting is refused");
    assert!(!err.contains('\n'), "one line: {err}");
    assert!(err.contains("max_connections"), "quotes the log: {err}");
    assert_eq!(std::fs::read_dir(parent.path()).unwrap().count(), 0);
}

#[test]
fn a_port_in_use_fails_in_one_line_quoting_the_log() {
    if !installed() {
        return;
    }
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let parent = tempfile::tempdir().unwrap();
    let err = Postgres::start(&PostgresOptions {
        port: Some(port),
        parent: Some(parent.path().to_path_buf()),
        ready_timeout: Some(Duration::from_secs(10)),
        ..Default::default()
    })
    .err()
    .expect("a port in use is refused");
    assert!(!err.contains('\n'), "one line: {err}");
    assert!(err.contains(&port.to_string()), "names the port: {err}");
    assert!(
        err.to_lowercase().contains("address already in use")
            || err.contains("could not create any TCP/IP sockets"),
        "quotes the log: {err}"
    );
    assert_eq!(std::fs::read_dir(parent.path()).unwrap().count(), 0);
}

#[test]
fn a_killed_starter_leaves_no_postgres() {
    if !installed() {
        return;
    }
    let parent = tempfile::tempdir().unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "hold_a_server_until_killed",
            "--ignored",
            "--nocapture",
        ])
        .env(HOLD_ENV, parent.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut pid = None;
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        if let Some(p) = line.strip_prefix("postmaster ") {
            pid = Some(p.trim().parse::<u32>().unwrap());
            break;
        }
    }
    let pid = pid.expect("the holder started a server");
    assert!(!gone(pid));
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        wait_gone(pid),
        "the postmaster {pid} outlived its killed starter"
    );
}

/// Not a test of its own: the process [`a_killed_starter_leaves_no_postgres`] starts
/// and kills. It starts a server, prints its pid and waits to be killed.
#[test]
#[ignore = "run by a_killed_starter_leaves_no_postgres"]
fn hold_a_server_until_killed() {
    let parent = std::env::var_os(HOLD_ENV).expect("run by a_killed_starter_leaves_no_postgres");
    let server = Postgres::start(&PostgresOptions {
        parent: Some(parent.into()),
        ..Default::default()
    })
    .unwrap();
    println!("postmaster {}", server.pid());
    std::thread::sleep(Duration::from_secs(60));
    panic!("was not killed within 60 s");
}

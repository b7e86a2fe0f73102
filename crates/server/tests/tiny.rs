//! The generic server path on the tiny test server (`lab-tiny-server`): a cell verifies
//! and accounts the server's time, with the lab's line load and with a load command; a
//! load whose pattern finds nothing, a server that is never ready, one that exits, one
//! that widens its own CPU mask and a port already taken each fail the cell with one
//! clear line; and after each, nothing the cell started is still running.

use std::time::Duration;

use harness::{HotPath, Params};
use server::{spec, ServerHotPath, VARIANT};

const BIN: &str = env!("CARGO_BIN_EXE_lab-tiny-server");

fn params(pairs: &[(&str, &str)]) -> Params {
    let mut p = Params::defaults(spec::PARAMS);
    for (k, v) in pairs {
        p.set(spec::PARAMS, k, v).unwrap();
    }
    p
}

/// A tiny server whose command line carries `marker` (its sleep), so a test can look for
/// its own processes only.
fn tiny(marker: u32) -> String {
    format!("{BIN} --threads {{threads}} --port {{port}} --spin-us 5 --sleep-us {marker}")
}

/// Processes whose command line holds `text`.
fn running(text: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(text) && pid != std::process::id() {
            found.push(pid);
        }
    }
    found
}

fn settings(threads: usize) -> harness::RunSettings {
    harness::RunSettings {
        threads,
        warmup: Duration::from_millis(50),
        duration: Duration::from_millis(200),
    }
}

fn measure(p: &Params, threads: usize) -> Result<harness::Measurement, String> {
    ServerHotPath.check(p).and_then(|()| {
        ServerHotPath
            .measure(VARIANT, p, settings(threads))
            .map_err(|f| f.reason)
    })
}

fn assert_gone(marker: &str) {
    // The server is reaped before `measure` returns; its threads' exit is immediate.
    assert!(
        running(marker).is_empty(),
        "left running: {:?}",
        running(marker)
    );
}

#[test]
fn a_cell_with_the_line_load_verifies_and_accounts_the_servers_time() {
    let p = params(&[
        ("server_command", &tiny(101)),
        ("load_builtin", "line"),
        ("connections", "4"),
    ]);
    let m = measure(&p, 2).unwrap();
    assert_eq!(m.verified, Ok(()));
    assert!(m.ops > 0);
    let share = m.server_time_share.expect("the server's time account");
    assert!(share.on_cpu > 0.0 && share.on_cpu <= 1.0, "{share:?}");
    for key in ["server_cpu_util", "client_cpu_util", "server_threads_seen"] {
        assert!(m.extra.contains_key(key), "{key} missing: {:?}", m.extra);
    }
    // Two workers, four connection threads, the acceptor.
    assert!(
        m.extra["server_threads_seen"].as_u64().unwrap() >= 3,
        "{:?}",
        m.extra
    );
    assert_eq!(m.extra["server_threads_setting"], "2");
    assert_gone("--sleep-us 101");
}

#[test]
fn a_load_command_gives_its_reported_rate_and_its_errors() {
    let load =
        format!("{BIN} --client --port {{port}} --clients {{clients}} --seconds {{seconds}}");
    let p = params(&[
        ("server_command", &tiny(102)),
        ("load_command", &load),
        ("load_throughput", r"requests/sec:\s+([0-9.]+)"),
        ("load_errors", r"errors:\s+([0-9]+)"),
        ("connections", "2"),
    ]);
    let m = measure(&p, 1).unwrap();
    assert_eq!(m.verified, Ok(()));
    let reported = m.extra["load_reported_ops_per_sec"].as_f64().unwrap();
    assert!(reported > 0.0);
    // The record's operations are the load's own rate over the lab's window, whatever
    // either was.
    let expected = (reported * m.window.as_secs_f64()).round() as u64;
    assert_eq!(m.ops, expected, "{reported} ops/s over {:?}", m.window);
    assert_eq!(m.extra["load_errors"], 0.0);
    assert!(m.server_time_share.is_some());
    assert_gone("--sleep-us 102");
}

#[test]
fn a_pattern_that_finds_nothing_fails_the_cell_in_one_line() {
    let load = format!("{BIN} --client --port {{port}} --clients 1 --seconds {{seconds}}");
    let p = params(&[
        ("server_command", &tiny(103)),
        ("load_command", &load),
        ("load_throughput", r"ops per second = ([0-9]+)"),
    ]);
    let err = measure(&p, 1).unwrap_err();
    assert!(
        err.contains("found no figure") && err.contains("ops per second"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_gone("--sleep-us 103");
}

#[test]
fn a_server_never_ready_fails_in_time_and_is_killed() {
    let p = params(&[
        ("server_command", "sleep 31.25"),
        ("server_ready_timeout", "1"),
        ("load_builtin", "line"),
    ]);
    let err = measure(&p, 1).unwrap_err();
    // The timeout's failure, not the server's exit after its 31.25 s ("exited ... before
    // it was ready"): the cell gave up on it and killed it.
    assert!(err.contains("not ready within 1 s"), "{err}");
    assert_gone("sleep 31.25");
}

#[test]
fn a_server_that_exits_says_what_it_printed() {
    let p = params(&[
        (
            "server_command",
            "sh -c 'echo no such option: --threadz >&2; exit 3'",
        ),
        ("load_builtin", "line"),
    ]);
    let err = measure(&p, 1).unwrap_err();
    assert!(
        err.contains("exited") && err.contains("no such option"),
        "{err}"
    );
}

#[test]
fn a_server_that_widens_its_cpu_mask_is_refused() {
    if harness::affinity::allowed_cpus().len() < 2 {
        return; // one CPU: no mask to widen
    }
    let command = format!("{} --own-mask", tiny(104));
    let p = params(&[("server_command", &command), ("load_builtin", "line")]);
    // The cell's cores are the calling thread's mask.
    let err = std::thread::spawn(move || {
        server::procstat::set_thread_cpus(&[0]).unwrap();
        measure(&p, 1).unwrap_err()
    })
    .join()
    .unwrap();
    assert!(err.contains("ignores its CPU mask"), "{err}");
    assert_gone("--sleep-us 104");
}

#[test]
fn a_fixed_port_in_use_is_refused() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let p = params(&[
        ("server_command", &tiny(105)),
        ("server_port", &port),
        ("load_builtin", "line"),
    ]);
    let err = measure(&p, 1).unwrap_err();
    assert!(err.contains("already listens"), "{err}");
    assert_gone("--sleep-us 105");
}

#[test]
fn templates_and_tables_are_checked_before_anything_runs() {
    let p = params(&[
        ("server_command", "memcached -t {thread}"),
        ("load_builtin", "line"),
    ]);
    let err = ServerHotPath.check(&p).unwrap_err();
    assert!(
        err.contains("unknown variable {thread}") && err.contains("{threads}"),
        "{err}"
    );
    let p = params(&[("server_command", "x {threads}")]);
    assert!(ServerHotPath
        .check(&p)
        .unwrap_err()
        .contains("[load] table must name"));
    let p = params(&[("load_builtin", "line")]);
    assert!(ServerHotPath
        .check(&p)
        .unwrap_err()
        .contains("server.command: missing"));
    let p = params(&[
        ("server_command", "x {threads}"),
        ("load_command", "wrk"),
        ("load_throughput", "no group"),
    ]);
    assert!(ServerHotPath
        .check(&p)
        .unwrap_err()
        .contains("needs a group"));
}

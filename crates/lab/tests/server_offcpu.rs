//! A profiled cell of the `server` hot path (the tiny server) has the server's off-CPU
//! time from the scheduler's switches where perf may trace them (root), and otherwise one
//! line saying why not; never neither.

use std::process::Stdio;

mod common;

/// Whether `perf` runs here.
fn perf_runs() -> bool {
    std::process::Command::new("perf")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn a_profiled_server_cell_has_the_servers_off_cpu_time_or_says_why_not() {
    let root = common::scratch_root();
    let prefix = root.path().join("profiles/t2");
    let out = common::lab(
        root.path(),
        &[
            "run",
            "--hot-path",
            "server",
            "--variant",
            "configured",
            "--threads",
            "2",
            "--duration",
            "300ms",
            "--warmup",
            "50ms",
            "--param",
            "server_command={lab} tiny-server --threads {threads} --port {port} --spin-us 20 --sleep-us 30",
            "--param",
            "server_comm=tiny-worker,tiny-conn",
            "--param",
            "load_builtin=line",
            "--param",
            "connections=2",
            "--profile",
            prefix.to_str().unwrap(),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let record: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let profile = &record["profile"];
    // SAFETY: geteuid has no preconditions.
    let root_user = unsafe { libc::geteuid() } == 0;
    match (
        &profile["server_off_cpu"],
        &profile["server_off_cpu_absent"],
    ) {
        (serde_json::Value::Object(off), _) => {
            let folded = std::fs::read_to_string(off["folded"].as_str().unwrap()).unwrap();
            // The server's threads, each stack ending in what it was off the CPU for.
            assert!(
                folded.lines().any(|l| l.starts_with("tiny-")
                    && (l.contains(";[asleep] ") || l.contains(";[waiting for a CPU] "))),
                "{folded}"
            );
            assert!(off["seconds"].as_f64().unwrap() > 0.0, "{off:?}");
        }
        (_, serde_json::Value::String(why)) => {
            assert!(!(root_user && perf_runs()), "root with perf, yet: {why}");
            assert!(why.starts_with("no off-CPU profile of the server") && !why.contains('\n'));
            println!("no server off-CPU profile here: {why}");
        }
        other => panic!("neither a server off-CPU profile nor why not: {other:?}"),
    }
}

//! One repetition of a `client=go` cell: the program run against the cell's node, its
//! report read back, verified against what the node stores, and made a [`Measurement`].
//! Not here: finding or building the program ([`super`]).

use std::collections::HashMap;
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use harness::account::TimeAccount;
use harness::{CellFailure, Measurement, RunSettings};
use serde::Deserialize;

use super::{binary, BINARY, GO};
use crate::runner::{Backend, Design, RunnerConfig, TxnRunner};
use crate::workload::{check_stored, Committed};

/// What the program prints: the window's figures and, over the whole run, every write it
/// reported committed or failed.
#[derive(Debug, Deserialize)]
pub struct Report {
    /// Transactions started in the window (committed or failed).
    pub txns: u64,
    /// Read transactions committed in the window.
    pub reads: u64,
    /// Write transactions committed in the window.
    pub writes: u64,
    /// Transactions that failed in the window.
    pub errors: u64,
    /// Attempts after the first, in the window.
    pub retries: u64,
    /// Busy or locked errors met, in the window.
    pub busy_errors: u64,
    /// Time slept in backoff, in the window.
    pub backoff_ns: u64,
    /// Time spent waiting for a slot of the gate, in the window.
    pub gate_wait_ns: u64,
    /// Time spent inside the gate (the attempts), in the window.
    pub gate_held_ns: u64,
    /// Transactions' whole time, first attempt to answer, in the window.
    pub latency_ns: u64,
    /// The window as the program's clock measured it.
    pub window_s: f64,
    /// Connections the pools opened in the window.
    pub connects: u64,
    /// Reads (whole run) that saw part of a write.
    pub partial_reads: u64,
    /// Units written, whole run.
    pub committed: Vec<ReportedUnit>,
    /// Statuses of writes reported failed, whole run (the first 1000 per goroutine).
    pub failed: Vec<String>,
    /// The first error a transaction failed with, if any.
    #[serde(default)]
    pub first_error: Option<String>,
    /// The Go version it was built with.
    pub go_version: String,
    /// `load=seed`: the change streams' polls in the window (also in `txns` and `reads`).
    #[serde(default)]
    pub polls: u64,
    /// `load=seed`: the watchers' reads of what the streams found (also in `txns` and
    /// `reads`).
    #[serde(default)]
    pub watcher_reads: u64,
    /// `load=seed`: steps that started behind their pace (the node could not keep it).
    #[serde(default)]
    pub late_steps: u64,
}

/// One unit's committed writes as the program reported them.
#[derive(Debug, Deserialize)]
pub struct ReportedUnit {
    /// Model index.
    pub model: usize,
    /// Unit index.
    pub unit: usize,
    /// Writes committed.
    pub count: u64,
    /// The highest version written.
    pub newest_version: i64,
    /// The status that write set.
    pub newest_status: String,
}

/// What a cell asks of the program beyond the runner's configuration: its parameters
/// `read_pct`, `retry`, `load` and `rate`.
#[derive(Debug, Clone, Copy)]
pub struct Options<'a> {
    /// Percent of the transactions that only read.
    pub read_pct: u32,
    /// The retry policy ([`super::RETRIES`]).
    pub retry: &'a str,
    /// The load's shape ([`super::LOADS`]).
    pub load: &'a str,
    /// `load=seed`: the step workers' transactions/s in all.
    pub rate: u64,
}

/// The program's flags for this cell: the node's address, the gate (K, or 0 for none:
/// `pool` and `slots=unlimited`), the pools, the mix and the load.
fn flags(address: &str, config: &RunnerConfig, o: Options<'_>, s: RunSettings) -> Vec<String> {
    let slots = match config.design {
        Design::Semaphore => config.slots.unwrap_or(0),
        _ => 0,
    };
    let idle = match config.backend {
        Backend::Libdqlite { idle_conns, .. } => idle_conns,
        _ => 2,
    };
    let ns = |d: Duration| format!("{}ns", d.as_nanos());
    [
        ("-address", address.to_owned()),
        ("-threads", s.threads.to_string()),
        ("-slots", slots.to_string()),
        ("-read-pct", o.read_pct.to_string()),
        ("-models", config.models.to_string()),
        ("-units", config.units.to_string()),
        ("-max-open", config.pool_size.to_string()),
        ("-max-idle", idle.to_string()),
        ("-warmup", ns(s.warmup)),
        ("-duration", ns(s.duration)),
        ("-retry", o.retry.to_owned()),
        ("-load", o.load.to_owned()),
        ("-rate", o.rate.to_string()),
    ]
    .into_iter()
    .flat_map(|(k, v)| [k.to_owned(), v])
    .collect()
}

fn cpu_of(who: i32) -> Duration {
    // SAFETY: getrusage fills the zeroed struct it is given.
    let u = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(who, &mut u);
        u
    };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(u.ru_utime) + tv(u.ru_stime)
}

/// What one run of the program gave: its output, and the wall time, CPU time (this
/// process's node and the program together) and the machine's interference over its
/// whole run (warm-up and window: the program's window is inside it).
struct Ran {
    output: String,
    elapsed: Duration,
    cpu: Duration,
    interference: Option<harness::interference::Interference>,
}

/// Runs the program with `args`, killing it past `limit`.
fn run_program(args: &[String], limit: Duration) -> Result<Ran, String> {
    let program = binary()?;
    let measured = harness::interference::Window::open();
    let cpu_before = cpu_of(libc::RUSAGE_SELF) + cpu_of(libc::RUSAGE_CHILDREN);
    let start = Instant::now();
    let mut child = Command::new(&program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("starting {}: {e}", program.display()))?;
    let mut stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{BINARY} ran past {:.0} s and was killed",
                    limit.as_secs_f64()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(format!("waiting for {BINARY}: {e}")),
        }
    };
    let elapsed = start.elapsed();
    let cpu =
        (cpu_of(libc::RUSAGE_SELF) + cpu_of(libc::RUSAGE_CHILDREN)).saturating_sub(cpu_before);
    let output = out.join().unwrap_or_default();
    let said = err.join().unwrap_or_default();
    if !status.success() {
        return Err(format!(
            "{BINARY} failed ({status}): {}",
            said.lines().last().unwrap_or("no message")
        ));
    }
    Ok(Ran {
        output,
        elapsed,
        cpu,
        interference: measured.close(),
    })
}

/// Checks what the node stores against the program's report, as the lab's workers are
/// checked.
fn verify(runner: &TxnRunner, config: &RunnerConfig, r: &Report) -> Result<(), String> {
    if r.partial_reads > 0 {
        return Err(format!("{} reads saw part of a write", r.partial_reads));
    }
    let mut expected: HashMap<(String, String), Committed> = HashMap::new();
    for u in &r.committed {
        if u.model >= config.models || u.unit >= config.units {
            return Err(format!(
                "{BINARY} reported model {} unit {}, outside {} x {}",
                u.model, u.unit, config.models, config.units
            ));
        }
        let key = (
            runner.model_name(u.model).to_owned(),
            crate::db::unit_name(u.unit),
        );
        // One entry per goroutine and unit: several goroutines write the same unit.
        let e = expected.entry(key).or_default();
        e.count += u.count;
        if u.newest_version > e.newest_version {
            e.newest_version = u.newest_version;
            e.newest_status = u.newest_status.clone();
        }
    }
    let failed: Vec<&String> = r.failed.iter().collect();
    check_stored(
        expected,
        &failed,
        runner.stored()?,
        config.models * config.units,
    )
}

/// One repetition of a `client=go` cell: `runner`'s node driven by the Go program for
/// `settings`' warm-up and window.
pub fn measure(
    runner: &TxnRunner,
    config: &RunnerConfig,
    options: Options<'_>,
    settings: RunSettings,
) -> Result<Measurement, CellFailure> {
    let address = runner
        .real_apps()
        .next()
        .map(|a| a.address().to_owned())
        .ok_or_else(|| CellFailure::new("client=go needs backend=libdqlite (a real node)"))?;
    let args = flags(&address, config, options, settings);
    let limit = settings.warmup + settings.duration + Duration::from_secs(30);
    let Ran {
        output,
        elapsed,
        cpu,
        interference,
    } = run_program(&args, limit).map_err(CellFailure::new)?;
    let report: Report = serde_json::from_str(output.trim()).map_err(|e| {
        CellFailure::new(format!(
            "{BINARY} printed no report ({e}): {}",
            output.lines().last().unwrap_or("nothing")
        ))
    })?;
    let window = Duration::from_secs_f64(report.window_s.max(1e-9));
    let ops = report.reads + report.writes;
    let txns = report.txns.max(1);
    let threads = settings.threads.max(1);
    let total_ns = window.as_nanos() as u64 * threads as u64;
    // The CPU of the whole run (node and program), its window's share of it.
    let cpu_window = cpu.mul_f64((window.as_secs_f64() / elapsed.as_secs_f64()).min(1.0));
    let ms_per_txn = |ns: u64| ns as f64 / 1e6 / txns as f64;
    let per_sec = |n: u64| n as f64 / window.as_secs_f64();
    let mut extra = serde_json::Map::new();
    let mut put = |k: &str, v: serde_json::Value| {
        extra.insert(k.to_owned(), v);
    };
    put("reads_per_sec", per_sec(report.reads).into());
    put("writes_per_sec", per_sec(report.writes).into());
    put(
        "retries_per_txn",
        (report.retries as f64 / txns as f64).into(),
    );
    put("busy_errors", report.busy_errors.into());
    put(
        "backoff_share",
        (report.backoff_ns as f64 / total_ns.max(1) as f64).into(),
    );
    put("gate_ms_per_txn", ms_per_txn(report.gate_held_ns).into());
    put(
        "gate_wait_ms_per_txn",
        ms_per_txn(report.gate_wait_ns).into(),
    );
    put("txn_ms_mean", ms_per_txn(report.latency_ns).into());
    put("backend", "libdqlite".into());
    put("client", GO.into());
    put("go_version", report.go_version.clone().into());
    put("connects_per_sec", per_sec(report.connects).into());
    put("connections_total", config.pool_size.into());
    put(
        "permits_total",
        match config.design {
            Design::Semaphore => config.slots.into(),
            _ => serde_json::Value::Null,
        },
    );
    put(
        "latency",
        "not sampled: the Go client reports its mean (txn_ms_mean)".into(),
    );
    if options.load == super::SEED {
        put("load", super::SEED.into());
        put("offered_per_sec", options.rate.into());
        put("polls_per_sec", per_sec(report.polls).into());
        put(
            "watcher_reads_per_sec",
            per_sec(report.watcher_reads).into(),
        );
        // The share of the window's steps (not polls or watchers' reads) that started
        // late: 0 while the node keeps the offered pace.
        let steps = report
            .txns
            .saturating_sub(report.polls + report.watcher_reads);
        put(
            "late_step_share",
            (report.late_steps as f64 / steps.max(1) as f64).into(),
        );
    }
    if let Some(e) = &report.first_error {
        put("first_error", e.clone().into());
    }
    Ok(Measurement {
        threads,
        window,
        ops,
        retries: report.retries,
        errors: report.errors,
        timeouts: 0,
        idle: 0,
        // The program times its gate and backoff, not each request to the node (the lab's
        // client counts those as waits too), so a wait share would not mean the same.
        waits_measured: false,
        waited: Duration::ZERO,
        time: TimeAccount {
            total_ns,
            on_cpu_ns: (cpu_window.as_nanos() as u64).min(total_ns),
            run_queue_ns: None,
            blocked_ns: 0,
            waited_ns: 0,
        },
        clock_read_ns: 0.0,
        latency: harness::stats::new_histogram(),
        cpu_time: cpu_window,
        interference,
        verified: verify(runner, config, &report),
        extra,
        server_time_share: None,
        locks: None,
    })
}

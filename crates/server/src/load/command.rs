//! A load the user names as a command (wrk, memcslap, ldclt, pgbench): run once for the
//! warm-up and once for the window, on the clients' CPUs, its figures read from its
//! output by the file's patterns.
//!
//! A load command is a whole process, so its window is its run: the server's account is
//! read when it starts and when it exits, and its throughput is what it reports (its own
//! clock), while the record's window is the lab's (spawn to exit); `ops` is the reported
//! rate times that window, so `ops_per_sec` is the load's figure. Its latencies are its
//! own and not read: the record's latency histogram is empty and says so. A command that
//! fails, runs past its time or prints no figure the pattern finds fails the cell with
//! the reason in one line, never a number.

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use harness::account::TimeAccount;
use harness::{interference, probe, Measurement, RunSettings};

use crate::procstat::{self, Snapshot};
use crate::spec::Pattern;
use crate::template;

/// A load command's output and what the lab saw of it.
struct Ran {
    output: String,
    elapsed: Duration,
    cpu: Duration,
    open: Option<Snapshot>,
    close: Option<Snapshot>,
    interference: Option<interference::Interference>,
}

/// Seconds a load command is told to run for a span: whole seconds (what wrk, ldclt and
/// memcslap accept), at least 1.
pub fn seconds(span: Duration) -> u64 {
    span.as_secs_f64().ceil().max(1.0) as u64
}

/// The CPU time of this process's reaped children so far (the load commands).
fn children_cpu() -> Duration {
    // SAFETY: getrusage fills the zeroed struct it is given.
    let usage = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut u);
        u
    };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// Runs `line` with `sh -c` in `folder` on `cpus`, for at most `limit`; the server's
/// threads (`server`) are read at its start and its exit. `is_window`: whether this run
/// is the measured window, which a profiler records.
fn run(
    line: &str,
    folder: &Path,
    cpus: &[usize],
    (limit, is_window): (Duration, bool),
    server: &[u32],
) -> Result<Ran, String> {
    let out_path = folder.join("load.out");
    let out =
        std::fs::File::create(&out_path).map_err(|e| format!("{}: {e}", out_path.display()))?;
    let err = out.try_clone().map_err(|e| e.to_string())?;
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(line)
        .current_dir(folder)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0);
    // The child inherits this thread's mask; the server keeps its own.
    let before = harness::affinity::allowed_cpus();
    procstat::set_thread_cpus(cpus)?;
    let cpu0 = children_cpu();
    let measured = interference::Window::open();
    let open = Snapshot::read_all(server);
    let started = Instant::now();
    let spawned = command.spawn();
    procstat::set_thread_cpus(&before)?;
    let mut child = spawned.map_err(|e| format!("cannot start the load command: {e}"))?;
    if is_window {
        probe::window_opened();
    }
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        if started.elapsed() > limit {
            if is_window {
                probe::window_closed();
            }
            // The whole group: `sh -c` would leave the load program itself running.
            // SAFETY: kill has no memory-safety preconditions; the group is our child's.
            unsafe { libc::kill(-(child.id() as libc::pid_t), libc::SIGKILL) };
            let _ = child.wait();
            return Err(format!(
                "the load command ran past {} s and was stopped: {}",
                limit.as_secs(),
                last_line(&std::fs::read_to_string(&out_path).unwrap_or_default())
            ));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let elapsed = started.elapsed();
    let close = Snapshot::read_all(server);
    if is_window {
        probe::window_closed();
    }
    let interference = measured.close();
    let output = std::fs::read_to_string(&out_path).unwrap_or_default();
    if !status.success() {
        return Err(format!(
            "the load command failed ({status}): {}",
            last_line(&output)
        ));
    }
    Ok(Ran {
        output,
        elapsed,
        cpu: children_cpu().saturating_sub(cpu0),
        open,
        close,
        interference,
    })
}

/// The last non-empty line of `text`, or a word saying there was none.
pub fn last_line(text: &str) -> String {
    text.lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map_or("it printed nothing".to_owned(), |l| {
            l.chars().take(200).collect()
        })
}

/// What one window of a load command needs.
pub struct Window<'a> {
    /// The command template.
    pub command: &'a str,
    /// Its throughput pattern.
    pub throughput: &'a Pattern,
    /// Its errors pattern.
    pub errors: Option<&'a Pattern>,
    /// The template's values but `{seconds}`.
    pub values: BTreeMap<&'static str, String>,
    /// Where it runs (its output is kept there).
    pub folder: &'a Path,
    /// The clients' CPUs.
    pub cpus: &'a [usize],
    /// The server's processes.
    pub server: &'a [u32],
    /// Clients (`{clients}`).
    pub clients: usize,
}

impl Window<'_> {
    fn line(&self, span: Duration) -> String {
        let mut values = self.values.clone();
        values.insert("seconds", seconds(span).to_string());
        template::fill(self.command, &values)
    }

    /// The warm-up run (its figures unread), then the window; `Err` when a run fails or
    /// the window's output has no throughput.
    pub fn measure(
        &self,
        settings: RunSettings,
    ) -> Result<(Measurement, Option<(Snapshot, Snapshot)>), String> {
        let limit = |span: Duration| Duration::from_secs(3 * seconds(span) + 30);
        if !settings.warmup.is_zero() {
            run(
                &self.line(settings.warmup),
                self.folder,
                self.cpus,
                (limit(settings.warmup), false),
                self.server,
            )
            .map_err(|e| format!("warming up: {e}"))?;
        }
        let line = self.line(settings.duration);
        let ran = run(
            &line,
            self.folder,
            self.cpus,
            (limit(settings.duration), true),
            self.server,
        )?;
        let rate = self.throughput.find(&ran.output).ok_or_else(|| {
            format!(
                "load.throughput {:?} found no figure in the load's output (last line: {})",
                self.throughput.text(),
                last_line(&ran.output)
            )
        })?;
        let errors = self.errors.and_then(|p| p.find(&ran.output)).unwrap_or(0.0);
        let window = ran.elapsed;
        let total_ns = window.as_nanos() as u64 * self.clients.max(1) as u64;
        let mut m = Measurement {
            threads: self.clients,
            window,
            ops: (rate * window.as_secs_f64()).round().max(0.0) as u64,
            retries: 0,
            errors: errors.max(0.0) as u64,
            timeouts: 0,
            idle: 0,
            waits_measured: false,
            waited: Duration::ZERO,
            time: TimeAccount {
                total_ns,
                on_cpu_ns: (ran.cpu.as_nanos() as u64).min(total_ns),
                run_queue_ns: None,
                blocked_ns: 0,
                waited_ns: 0,
            },
            clock_read_ns: 0.0,
            latency: harness::stats::new_histogram(),
            cpu_time: ran.cpu,
            interference: ran.interference,
            verified: Ok(()),
            extra: serde_json::Map::new(),
            server_time_share: None,
            locks: None,
        };
        if errors > 0.0 {
            m.verified = Err(format!(
                "the load reported {errors:.0} failed operations (load.errors {:?})",
                self.errors.map(Pattern::text).unwrap_or_default()
            ));
        }
        let extra = &mut m.extra;
        extra.insert("load_command".into(), line.into());
        extra.insert("load_reported_ops_per_sec".into(), rate.into());
        extra.insert("load_errors".into(), errors.into());
        extra.insert(
            "latency".into(),
            "not read: a load command's latencies are its own (see its output)".into(),
        );
        let edges = ran.open.zip(ran.close);
        Ok((m, edges))
    }
}

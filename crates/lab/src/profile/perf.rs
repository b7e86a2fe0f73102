//! On-CPU sampling with `perf record`: the `cpu-clock` software event on every thread of
//! this process, with DWARF call stacks (user, libc and kernel frames; nothing dropped),
//! enabled only while the measured window is open, folded with inferno's `collapse-perf`
//! (the pipeline cargo-flamegraph uses).
//!
//! perf starts disabled (`--delay=-1`) before the workers exist and follows the threads
//! the process starts (perf's inherit); the window's edges are `enable`/`disable`
//! commands on perf's control FIFO, each acknowledged, so warm-up and teardown are not
//! sampled. This module does not decide whether perf is allowed: a failure to start is an
//! `Err` that the caller turns into the pprof fallback.

use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use inferno::collapse::Collapse;

use super::stacks::{tidy, Stacks};

/// Samples per second asked of perf, per CPU the process runs on.
pub const RATE_HZ: u32 = 2000;

/// A `perf record` attached to this process, events disabled until [`PerfRecorder::enable`].
pub struct PerfRecorder {
    perf: String,
    child: Option<Child>,
    dir: PathBuf,
    ctl: File,
    ack: File,
}

/// What perf saw, folded.
pub struct PerfProfile {
    /// Folded lines (`cell;frame;frame count`), sorted.
    pub lines: Vec<String>,
    /// Samples in `lines`.
    pub samples: u64,
    /// Share of samples whose innermost frame lies outside this executable (kernel,
    /// libc and other shared libraries).
    pub outside_binary: f64,
    /// Share of samples whose innermost frame is in the kernel.
    pub kernel: f64,
}

impl PerfRecorder {
    /// Starts `perf record` (the binary `perf`) on this process, events disabled; returns
    /// once perf says its events are open.
    pub fn start(perf: &str) -> Result<PerfRecorder, String> {
        let events: Vec<String> = ["-e", "cpu-clock", "-F", &RATE_HZ.to_string()]
            .map(str::to_owned)
            .to_vec();
        Self::start_recording(perf, &events, &profiled_pids())
    }

    /// Starts `perf record` with `events` (its event and call-graph arguments) on the
    /// processes `pids` (perf's `-p` list), events disabled.
    pub fn start_recording(
        perf: &str,
        events: &[String],
        pids: &str,
    ) -> Result<PerfRecorder, String> {
        // perf can lose a race with a thread that exits while it attaches: try twice.
        Self::start_once(perf, events, pids).or_else(|_| Self::start_once(perf, events, pids))
    }

    fn start_once(perf: &str, events: &[String], pids: &str) -> Result<PerfRecorder, String> {
        // A scratch folder of the harness's: inside the one `lab matrix` removes after the
        // child ends (a child killed for hanging never reaches `Drop`), and named with this
        // process's id so that a later run sweeps it if it was not.
        let dir = harness::scratch::private_folder(None, "contention-lab-perf-")?.keep();
        let recorder = Self::start_in(perf, &dir, events, pids);
        if recorder.is_err() {
            let _ = std::fs::remove_dir_all(&dir);
        }
        recorder
    }

    fn start_in(
        perf: &str,
        dir: &Path,
        events: &[String],
        pids: &str,
    ) -> Result<PerfRecorder, String> {
        let (ctl_path, ack_path) = (dir.join("ctl"), dir.join("ack"));
        for fifo in [&ctl_path, &ack_path] {
            make_fifo(fifo)?;
        }
        let mut child = spawn_record(perf, dir, &ctl_path, &ack_path, events, pids)?;
        let deadline = Instant::now() + Duration::from_secs(10);
        // Opening a FIFO for writing fails (ENXIO) until perf opens it for reading.
        let ctl = loop {
            match std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(&ctl_path)
            {
                Ok(f) => break f,
                Err(_) if Instant::now() < deadline => {}
                Err(_) => return Err(failed(&mut child, dir, "perf did not start")),
            }
            if let Ok(Some(_)) = child.try_wait() {
                return Err(failed(&mut child, dir, "perf record exited"));
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let ack = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&ack_path)
            .map_err(|e| format!("cannot open {}: {e}", ack_path.display()))?;
        // perf says "Events disabled" once its events are open on every thread.
        loop {
            if said(dir).contains("Events disabled") {
                break;
            }
            if let Ok(Some(_)) = child.try_wait() {
                return Err(failed(&mut child, dir, "perf record exited"));
            }
            if Instant::now() >= deadline {
                return Err(failed(&mut child, dir, "perf did not open its events"));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        Ok(PerfRecorder {
            perf: perf.to_owned(),
            child: Some(child),
            dir: dir.to_path_buf(),
            ctl,
            ack,
        })
    }

    fn command(&mut self, what: &str) -> Result<(), String> {
        self.ctl
            .write_all(format!("{what}\n").as_bytes())
            .map_err(|e| format!("perf control: {e}"))?;
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut got = Vec::new();
        let mut buf = [0u8; 16];
        // perf writes "ack\n" and its C string's NUL.
        while !got.windows(4).any(|w| w == b"ack\n") {
            match self.ack.read(&mut buf) {
                Ok(n) if n > 0 => got.extend_from_slice(&buf[..n]),
                _ if Instant::now() >= deadline => {
                    let said = std::fs::read_to_string(self.dir.join("stderr")).unwrap_or_default();
                    return Err(format!(
                        "perf did not acknowledge {what}: {}",
                        said.lines().collect::<Vec<_>>().join(" / ")
                    ));
                }
                _ => std::thread::sleep(Duration::from_micros(200)),
            }
        }
        Ok(())
    }

    /// Starts sampling (the measured window opened).
    pub fn enable(&mut self) -> Result<(), String> {
        self.command("enable")
    }

    /// Stops sampling (the measured window closed).
    pub fn disable(&mut self) -> Result<(), String> {
        self.command("disable")
    }

    /// Ends perf, reads its samples and folds them; worker stacks get `cell` as their root.
    pub fn finish(self, cell: &str) -> Result<PerfProfile, String> {
        let inline = std::env::var(super::PERF_INLINE_ENV).is_ok_and(|v| v == "1");
        // Without the period field inferno counts one per sample, not nanoseconds.
        let out = self.script(&[
            if inline { "--inline" } else { "--no-inline" },
            "-F",
            "comm,tid,time,event,ip,sym,dso",
        ])?;
        fold_script(&out, cell)
    }

    /// Ends perf and returns what `perf script` with `args` prints of its samples.
    pub fn script(mut self, args: &[&str]) -> Result<Vec<u8>, String> {
        let mut child = self.child.take().expect("started");
        // SAFETY: signalling our own child by its pid.
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
        let _ = child.wait();
        let data = self.dir.join("perf.data");
        let out = Command::new(&self.perf)
            .arg("script")
            .args(args)
            .arg("-i")
            .arg(&data)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run {} script: {e}", self.perf))?;
        if !out.status.success() {
            return Err(format!("{} script failed: {}", self.perf, out.status));
        }
        Ok(out.stdout)
    }
}

impl Drop for PerfRecorder {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `<this pid>[,<companion pid>...]`, perf's `-p` list for on-CPU samples: this process
/// and any server the hot path runs (`harness::probe::companions`), since a server started
/// before perf is not this process's to inherit.
fn profiled_pids() -> String {
    std::iter::once(std::process::id())
        .chain(harness::probe::companions())
        .map(|p| p.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// Folds `perf script` output with inferno and tidies each stack (see [`tidy`]).
pub fn fold_script(script: &[u8], cell: &str) -> Result<PerfProfile, String> {
    let (outside_binary, kernel) = leaf_shares(script);
    let mut options = inferno::collapse::perf::Options::default();
    options.annotate_kernel = true;
    options.nthreads = 1;
    let mut folded = Vec::new();
    inferno::collapse::perf::Folder::from(options)
        .collapse(script, &mut folded)
        .map_err(|e| format!("cannot fold the perf samples: {e}"))?;
    let mut stacks = Stacks::default();
    for line in String::from_utf8_lossy(&folded).lines() {
        let Some((stack, count)) = line.rsplit_once(' ') else {
            continue;
        };
        let Ok(count) = count.trim().parse::<u64>() else {
            continue;
        };
        let mut frames: Vec<String> = stack.split(';').map(str::to_owned).collect();
        let thread = frames.remove(0);
        stacks.add(&tidy(&thread, &frames, cell), count);
    }
    let (lines, samples) = stacks.into_lines();
    Ok(PerfProfile {
        lines,
        samples,
        outside_binary,
        kernel,
    })
}

/// Shares of samples whose innermost frame is outside this executable, and in the
/// kernel, read from the DSO perf prints beside each sample's first frame.
fn leaf_shares(script: &[u8]) -> (f64, f64) {
    let exe = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    let text = String::from_utf8_lossy(script);
    let (mut total, mut outside, mut kernel) = (0u64, 0u64, 0u64);
    let mut expect_leaf = false;
    for line in text.lines() {
        if line.is_empty() {
            continue;
        }
        if !line.starts_with(char::is_whitespace) {
            expect_leaf = true;
            continue;
        }
        if !expect_leaf {
            continue;
        }
        expect_leaf = false;
        let dso = line
            .rsplit_once('(')
            .map(|(_, d)| d.trim_end_matches(')'))
            .unwrap_or("");
        total += 1;
        if dso.contains("kernel") || dso.starts_with('[') {
            kernel += 1;
            outside += 1;
        } else if !dso.ends_with(&format!("/{exe}")) && dso != exe {
            outside += 1;
        }
    }
    if total == 0 {
        return (0.0, 0.0);
    }
    (outside as f64 / total as f64, kernel as f64 / total as f64)
}

/// Creates the FIFO `path` (perf's control and acknowledgement channels).
fn make_fifo(path: &Path) -> Result<(), String> {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| "temporary path holds a NUL".to_owned())?;
    // SAFETY: a valid NUL-terminated path; mkfifo only creates a file.
    if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } != 0 {
        return Err(format!(
            "cannot create {}: {}",
            path.display(),
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

/// Starts `perf record` of `events` on `pids`, its events disabled until the control
/// FIFO enables them, its stderr into `dir/stderr`.
fn spawn_record(
    perf: &str,
    dir: &Path,
    ctl: &Path,
    ack: &Path,
    events: &[String],
    pids: &str,
) -> Result<Child, String> {
    let stderr = File::create(dir.join("stderr")).map_err(|e| e.to_string())?;
    Command::new(perf)
        .arg("record")
        .args(events)
        // No build-id collection at exit: it reads every mapped binary (lab's own, with
        // its debug info) and cost about a second per profile here; the samples are
        // read back at once from the same binaries, so the ids are not needed.
        .args([
            "--call-graph",
            "dwarf",
            "--no-buildid",
            "--delay=-1",
            "--control",
        ])
        .arg(format!("fifo:{},{}", ctl.display(), ack.display()))
        .arg("-p")
        .arg(pids)
        .arg("-o")
        .arg(dir.join("perf.data"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .map_err(|e| format!("cannot run {perf}: {e}"))
}

/// What perf wrote on its stderr so far.
fn said(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("stderr")).unwrap_or_default()
}

/// Stops a perf that failed to start, and says why with its first words.
fn failed(child: &mut Child, dir: &Path, why: &str) -> String {
    let _ = child.kill();
    let _ = child.wait();
    let text = said(dir);
    let last = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .take(2)
        .collect::<Vec<_>>()
        .join(" ");
    format!(
        "{why}: {}",
        if last.is_empty() { "no output" } else { &last }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_perf_script_output_with_cell_root_and_leaf_shares() {
        let exe = std::env::current_exe().unwrap();
        let exe = exe.display();
        let script = format!(
            "worker-1 10 1.0: cpu-clock:\n\
             \t 1 __GI___libc_write+0x1 (/usr/lib/x86_64-linux-gnu/libc.so.6)\n\
             \t 2 spin_here+0x1 ({exe})\n\
             \t 3 harness::runner::worker_loop+0x1 ({exe})\n\
             \t 4 start_thread+0x1 (/usr/lib/x86_64-linux-gnu/libc.so.6)\n\n\
             worker-2 11 1.1: cpu-clock:\n\
             \t 2 spin_here+0x1 ({exe})\n\
             \t 3 harness::runner::worker_loop+0x1 ({exe})\n\n\
             worker-2 11 1.2: cpu-clock:\n\
             \t 9 do_syscall_64+0x1 ([kernel.kallsyms])\n\
             \t 2 spin_here+0x1 ({exe})\n\
             \t 3 harness::runner::worker_loop+0x1 ({exe})\n\n"
        );
        let p = fold_script(script.as_bytes(), "t/x").unwrap();
        assert_eq!(p.samples, 3);
        assert!(
            p.lines
                .contains(&"t/x;spin_here;__GI___libc_write 1".to_owned()),
            "{:?}",
            p.lines
        );
        assert!(
            p.lines
                .iter()
                .any(|l| l.starts_with("t/x;spin_here;do_syscall_64_[k]")),
            "{:?}",
            p.lines
        );
        assert!((p.outside_binary - 2.0 / 3.0).abs() < 1e-9);
        assert!((p.kernel - 1.0 / 3.0).abs() < 1e-9);
    }
}

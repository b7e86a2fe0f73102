//! One child `lab run` from start to end, so that no child outlives lab and no child's
//! folder outlives the child.
//!
//! - Each child leads its own process group: Ctrl-C in a terminal reaches lab alone, and
//!   lab ends a child by killing its whole group.
//! - Each child asks the kernel for SIGKILL when lab dies (`PR_SET_PDEATHSIG`), so even a
//!   `kill -9` of lab takes its child along. The kernel sends it when the *thread* that
//!   started the child ends, so children must be started from the matrix's main thread.
//! - Each child runs in a cgroup of its own (`contain`), killed whole once the child has
//!   ended: a server that daemonized, leaving both the group and the death signal, goes
//!   too, and lab goes on only when every process of the cell is gone.
//! - Lab makes a scratch folder per child (`contention-lab-run-p<lab pid>-XXXXXX`), passes
//!   it in through [`harness::scratch::SCRATCH_ENV`] and removes it after the child ends,
//!   however it ended; folders a child made in a user's `data_dir` carry the child's pid
//!   and are removed too. Folders left by a lab that was itself killed are swept by the
//!   next run ([`harness::scratch::sweep_stale`]).
//!
//! It does not interpret what the child printed: that is the matrix's business.

use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use harness::scratch;

use crate::{contain, signals};

/// The environment variable telling a child which round (0-based repetition) it belongs
/// to; read only by test faults (`fault`).
pub const ROUND_ENV: &str = "CONTENTION_LAB_ROUND";

/// How long lab waits, after a child ended by SIGINT/SIGTERM/SIGHUP, for the same signal
/// to reach lab itself (a signal sent to several processes arrives in no fixed order).
const STOP_GRACE: Duration = Duration::from_millis(300);

/// One child to run.
pub struct Launch<'a> {
    /// The `lab` executable.
    pub exe: &'a Path,
    /// The project root, the child's working folder.
    pub root: &'a Path,
    /// Arguments of `lab run`.
    pub args: &'a [String],
    /// The child is killed after this long.
    pub timeout: Duration,
    /// The round this repetition belongs to.
    pub round: usize,
    /// Folders given as `data_dir` where the child may make folders of its own.
    pub data_dirs: Vec<PathBuf>,
}

/// How a child ended.
#[derive(Debug)]
pub enum Ended {
    /// It exited or was killed by something other than lab; what it printed.
    Exited {
        /// Its exit status.
        status: ExitStatus,
        /// Its standard output.
        stdout: String,
        /// Its standard error.
        stderr: String,
    },
    /// Lab killed it at its timeout.
    TimedOut,
    /// Lab is stopping (a signal): the repetition is to be discarded, not counted as failed.
    Stopped,
    /// It could not be started.
    NotStarted(String),
}

/// Runs one child to its end, killing it at its timeout or when `stop` is set.
pub fn run(launch: &Launch<'_>, stop: &AtomicBool) -> Ended {
    // In the system's temporary folder even if lab itself was handed one: lab's folders
    // are its own.
    let folder = match scratch::private_folder(Some(&std::env::temp_dir()), "contention-lab-run-") {
        Ok(folder) => folder,
        Err(e) => return Ended::NotStarted(e),
    };
    let mut command = Command::new(launch.exe);
    command
        .args(launch.args)
        .current_dir(launch.root)
        .env(scratch::SCRATCH_ENV, folder.path())
        .env(ROUND_ENV, launch.round.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let cgroup = contained();
    let procs = cgroup.as_ref().map(contain::Cell::procs);
    // SAFETY: only async-signal-safe calls (open/write/close in `enter`) between fork and
    // exec. Entered before the death signal is asked for, as the cell's first step.
    unsafe {
        command.pre_exec(move || {
            if let Some(procs) = &procs {
                contain::Cell::enter(procs)?;
            }
            Ok(())
        });
    }
    launcher::death::die_with_parent(&mut command);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => return Ended::NotStarted(format!("could not start the cell: {e}")),
    };
    let pid = child.id();
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let ended = wait(&mut child, launch.timeout, stop);
    // Before the pipes are drained to their end: a daemon that kept them open would hold
    // them forever. After this, nothing the cell started is left.
    if let Some(cgroup) = cgroup {
        if let Err(e) = cgroup.end() {
            eprintln!("warning: {e}");
        }
    }
    let stdout = stdout.join().unwrap_or_default();
    let stderr = stderr.join().unwrap_or_default();
    drop(folder);
    for dir in &launch.data_dirs {
        scratch::remove_owned_by(dir, pid);
    }
    match ended {
        Some(status) if stopped_by_lab(&status, stop) => Ended::Stopped,
        Some(status) => Ended::Exited {
            status,
            stdout,
            stderr,
        },
        None if stop.load(Ordering::SeqCst) => Ended::Stopped,
        None => Ended::TimedOut,
    }
}

/// A cgroup for the next child, or `None` (said once) where this machine has none to give.
fn contained() -> Option<contain::Cell> {
    static WARNED: std::sync::Once = std::sync::Once::new();
    match contain::Cell::new() {
        Ok(cell) => Some(cell),
        Err(e) => {
            WARNED.call_once(|| {
                eprintln!(
                    "warning: cells run without a cgroup of their own ({e}); a server that daemonizes would outlive its cell"
                )
            });
            None
        }
    }
}

/// Waits for the child; `None` when lab killed it (timeout or stop).
fn wait(child: &mut Child, timeout: Duration, stop: &AtomicBool) -> Option<ExitStatus> {
    let deadline = Instant::now() + timeout;
    loop {
        match exited(child) {
            Ok(true) => {
                // Whatever the cell left in its group (a server's worker processes, whose
                // parent died with the cell) goes with it, before the child is reaped and
                // its pid, the group's id, can be reused.
                // SAFETY: kill has no memory-safety preconditions.
                unsafe { libc::kill(-(child.id() as libc::pid_t), libc::SIGKILL) };
                match child.wait() {
                    Ok(status) => return Some(status),
                    Err(_) => return None,
                }
            }
            Ok(false) => {}
            Err(_) => {
                kill_group(child);
                return None;
            }
        }
        if stop.load(Ordering::SeqCst) || Instant::now() >= deadline {
            kill_group(child);
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Whether the child has ended, without reaping it (`WNOWAIT`), so that its group can
/// still be signalled by its id.
fn exited(child: &Child) -> std::io::Result<bool> {
    // SAFETY: waitid fills the zeroed siginfo it is given.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
        if libc::waitid(libc::P_PID, child.id(), &mut info, flags) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(info.si_pid() != 0)
    }
}

/// Whether a child that died of a stopping signal got it as part of lab's own stop: then
/// its repetition is discarded rather than stored as failed.
fn stopped_by_lab(status: &ExitStatus, stop: &AtomicBool) -> bool {
    if !signals::is_stop_status(status) {
        return false;
    }
    let until = Instant::now() + STOP_GRACE;
    while Instant::now() < until {
        if stop.load(Ordering::SeqCst) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    stop.load(Ordering::SeqCst)
}

/// Kills the child's whole process group, then reaps the child. The group id is the
/// child's pid, which cannot be reused before the child is reaped.
fn kill_group(child: &mut Child) {
    // SAFETY: kill has no memory-safety preconditions.
    unsafe {
        libc::kill(-(child.id() as libc::pid_t), libc::SIGKILL);
    }
    let _ = child.kill();
    let _ = child.wait();
}

fn drain<R: Read + Send + 'static>(pipe: Option<R>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_string(&mut text);
        }
        text
    })
}

/// How a status reads in a failure reason: `exit status 1`, `killed by SIGABRT`.
pub fn describe(status: &ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(signal)) => format!("killed by {}", signals::name(signal)),
        (None, None) => status.to_string(),
    }
}

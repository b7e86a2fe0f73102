//! One server process for one cell: started in a folder of the cell's, pinned to the
//! cell's CPUs, and gone when the cell is, however the cell ends.
//!
//! Why nothing outlives the cell: the server is a plain child of `lab run`, so it stays
//! in the process group `lab matrix` kills at a timeout or a stop; it asks the kernel for
//! SIGKILL when the thread that started it ends (`PR_SET_PDEATHSIG`, for a `kill -9` of
//! the cell alone); it must run in the foreground (a server that forks into the
//! background or calls setsid leaves both, and only lab's cgroup of the cell reaches it,
//! when the cell ends); and its folder is inside the cell's
//! scratch folder, which lab removes. [`Running`] kills it and every process it started
//! (nginx's workers, say) on drop. A server's data is a throwaway copy, so it is stopped
//! with SIGKILL: a clean stop writes nothing the next cell needs.
//!
//! This module does not know any server's configuration or how to ask it whether it is
//! ready: the caller passes that in.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a ready server's loader may take to map the lock library before the start
/// fails: a loader maps a library in well under a millisecond, so this only outlasts a
/// busy machine's scheduling.
const LIBRARY_GRACE: Duration = Duration::from_millis(500);

/// A free TCP port on 127.0.0.1 (the kernel's pick; released for the server to take).
pub fn free_port() -> Result<u16, String> {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("cannot pick a free port on 127.0.0.1: {e}"))
}

/// Whether something listens on 127.0.0.1:`port`.
pub fn port_in_use(port: u16) -> bool {
    TcpStream::connect_timeout(&([127, 0, 0, 1], port).into(), Duration::from_millis(200)).is_ok()
}

/// A started server.
pub struct Running {
    child: Option<Child>,
    /// Its process id.
    pub pid: u32,
    /// The port it listens on (127.0.0.1 only).
    pub port: u16,
    /// Its folder (config, data, logs), inside the cell's scratch folder.
    pub folder: PathBuf,
    /// From spawn to ready.
    pub started_in: Duration,
    log: PathBuf,
    /// Other logs worth a failure's tail (389 DS writes its reasons to `log/errors`).
    logs: Vec<PathBuf>,
    /// What the server makes outside its folder and a SIGKILL leaves behind, removed once
    /// it is gone, however the start or the cell ends.
    leftovers: Vec<PathBuf>,
    /// Whether it runs under the lock library (its table registered by pid).
    lock_table: bool,
}

/// What [`Running::start`] needs besides the command.
pub struct Start<'a> {
    /// The server's folder; its output goes to `server.log` there.
    pub folder: &'a Path,
    /// The port it will listen on.
    pub port: u16,
    /// The CPUs it is pinned to.
    pub cpus: &'a [usize],
    /// Files it makes outside its folder, removed once it is gone.
    pub leftovers: &'a [PathBuf],
    /// Logs under its folder (relative) whose lines a failure quotes too.
    pub logs: &'a [&'a str],
    /// How long it may take to become ready.
    pub timeout: Duration,
    /// Whether it may run under the lock library when `harness::locks::preload_on` is
    /// set, and the symbol prefixes of its own lock wrappers ([`crate::locks::Preload`]);
    /// `None` for a server whose locks are not pthreads (PostgreSQL's LWLocks).
    pub lock_wrappers: Option<&'a [&'a str]>,
}

impl Running {
    /// Starts `command` (which must stay in the foreground) as `start` says and waits
    /// until `ready` says it is: `Ok(true)` ready, `Ok(false)` not yet, `Err` never.
    pub fn start(
        mut command: Command,
        start: Start<'_>,
        mut ready: impl FnMut(&Running) -> Result<bool, String>,
    ) -> Result<Running, String> {
        let folder = start.folder;
        let log = folder.join("server.log");
        let out = std::fs::File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
        let err = out.try_clone().map_err(|e| e.to_string())?;
        command
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .current_dir(folder);
        crate::death::die_with_parent(&mut command);
        crate::death::pin(&mut command, start.cpus);
        let preload = match start.lock_wrappers {
            Some(wrappers) if harness::locks::preload_on() => {
                let delay = harness::locks::delay::asked().map(|d| d.text());
                let preload = crate::locks::Preload::into(folder, wrappers, delay.as_deref())?;
                command.envs(preload.env.iter().map(|(k, v)| (k, v)));
                Some(preload)
            }
            _ => None,
        };
        let spawned = Instant::now();
        let program = command.get_program().to_string_lossy().into_owned();
        let child = command
            .spawn()
            .map_err(|e| format!("cannot start {program}: {e}"))?;
        let mut running = Running {
            pid: child.id(),
            child: Some(child),
            port: start.port,
            folder: folder.to_path_buf(),
            started_in: Duration::ZERO,
            log,
            logs: start.logs.iter().map(|l| folder.join(l)).collect(),
            leftovers: start.leftovers.to_vec(),
            lock_table: false,
        };
        loop {
            if !running.alive() {
                let status = running
                    .child
                    .as_mut()
                    .and_then(|c| c.try_wait().ok().flatten())
                    .map_or("gone".to_owned(), |s| s.to_string());
                // Exit status 0 before ready is a server that went to the background:
                // its daemon left the cell's process tree and is killed with its cgroup.
                let hint = if status == "exit status: 0" {
                    " (it went to the background: run it in the foreground, e.g. redis-server --daemonize no, nginx -g 'daemon off;', slapd -d 0)"
                } else {
                    ""
                };
                return Err(format!(
                    "{program} exited ({status}) before it was ready{hint}: {}",
                    running.log_tail()
                ));
            }
            if ready(&running)? {
                break;
            }
            if spawned.elapsed() > start.timeout {
                return Err(format!(
                    "{program} was not ready within {} s: {}",
                    start.timeout.as_secs(),
                    running.log_tail()
                ));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        running.started_in = spawned.elapsed();
        if let Some(preload) = preload {
            running.under_lock_library(&program, preload)?;
        }
        Ok(running)
    }

    /// Checks that the ready server made its lock table (it loaded the library) and
    /// registers the table for its snapshots.
    fn under_lock_library(
        &mut self,
        program: &str,
        preload: crate::locks::Preload,
    ) -> Result<(), String> {
        // The table's pid alone would pass a shell that made the table and then exec'd a
        // server with LD_PRELOAD cleared (same pid): the library must be mapped in the
        // server now. A ready check can pass the moment the server's exec does (its
        // comm changes then), before the loader has mapped the preloaded library: a
        // test here failed so once in a few runs; a short grace lets the loader finish,
        // while a server without the library stays unmapped however long it is given.
        let loaded = |pid: u32| {
            let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap_or_default();
            maps.contains(crate::locks::LIBRARY_FILE)
                && crate::locks::Table::read(&preload.table).is_ok_and(|t| t.pid == pid as i32)
        };
        let since = Instant::now();
        while !loaded(self.pid) {
            if since.elapsed() > LIBRARY_GRACE {
                return Err(format!(
                    "{program} did not load the lock library (a statically linked program, a setuid one, or one that clears LD_PRELOAD): run it without locks=true"
                ));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        crate::locks::register(self.pid, preload.table);
        self.lock_table = true;
        Ok(())
    }

    /// Whether the process is still running.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.as_mut().map(|c| c.try_wait()), Some(Ok(None)))
    }

    /// The server and every process it started, each once: the ones whose threads its
    /// time account and profile cover.
    pub fn processes(&self) -> Vec<u32> {
        let mut all = vec![self.pid];
        let mut i = 0;
        while i < all.len() && all.len() < 4096 {
            for child in children(all[i]) {
                if !all.contains(&child) {
                    all.push(child);
                }
            }
            i += 1;
        }
        all
    }

    /// The last lines the server wrote, for a failure reason.
    pub fn log_tail(&self) -> String {
        let mut text = std::fs::read_to_string(&self.log).unwrap_or_default();
        for log in &self.logs {
            text.push_str(&std::fs::read_to_string(log).unwrap_or_default());
        }
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let tail = lines[lines.len().saturating_sub(3)..].join(" / ");
        if tail.is_empty() {
            "it printed nothing".to_owned()
        } else {
            tail
        }
    }

    /// Kills the server and waits for it to be gone (its port is free once it is reaped).
    pub fn stop(mut self) {
        self.kill();
    }

    fn kill(&mut self) {
        // Stopped first, so that it cannot start a worker in place of one killed (nginx's
        // master respawns its workers); then its own children, which once the server is
        // gone would be re-parented and out of reach of `processes`; then the server.
        if self.child.is_some() {
            // SAFETY: kill has no memory effects; the pid is our own unreaped child's.
            unsafe { libc::kill(self.pid as libc::pid_t, libc::SIGSTOP) };
        }
        let started = self.processes();
        for &pid in started.iter().skip(1) {
            // SAFETY: kill has no memory effects; a pid reused meanwhile is the only risk,
            // and these were read from the server's own children an instant ago.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
        }
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        for path in self.leftovers.drain(..) {
            let _ = std::fs::remove_file(path);
        }
        if std::mem::take(&mut self.lock_table) {
            crate::locks::forget(self.pid);
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The children of every thread of `pid` (`/proc/<pid>/task/<tid>/children`).
fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
        .flat_map(|text| harness::interference::parse_children(&text))
        .collect()
}

/// The CPUs a thread may run on, from its `/proc/<pid>/task/<tid>/status`.
fn allowed(pid: u32, tid: &str) -> Option<Vec<usize>> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/status")).ok()?;
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?;
    harness::affinity::parse_cpu_list(list.trim()).ok()
}

/// `Err` naming the first thread of `pids` allowed on a CPU outside `cpus`: a server
/// that sets its own CPU mask (a `worker_cpu_affinity`, say) cannot be measured on the
/// cell's cores.
pub fn check_mask(pids: &[u32], cpus: &[usize]) -> Result<(), String> {
    for &pid in pids {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let tid = task.file_name().to_string_lossy().into_owned();
            if let Some(mask) = allowed(pid, &tid) {
                if mask.iter().any(|c| !cpus.contains(c)) {
                    return Err(format!(
                        "the server ignores its CPU mask: thread {tid} of process {pid} may run on CPUs {} where the cell gave it {}; remove the server's own affinity setting",
                        harness::affinity::format_cpu_list(&mask),
                        harness::affinity::format_cpu_list(cpus)
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Where an executable lies: on `PATH`, or in an `sbin` folder (where Debian puts many
/// servers, and which a user's `PATH` may lack).
pub fn find_program(name: &str) -> Option<PathBuf> {
    if name.contains('/') {
        let p = PathBuf::from(name);
        return p.is_file().then_some(p);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/usr/local/sbin", "/sbin"].map(PathBuf::from))
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// The name of the user this process runs as (a server told to run as another user
/// would change user and so lose its death signal).
pub fn user_name() -> String {
    // SAFETY: getpwuid returns a pointer into static storage or null; read at once.
    unsafe {
        let pw = libc::getpwuid(libc::geteuid());
        if pw.is_null() {
            return "root".to_owned();
        }
        std::ffi::CStr::from_ptr((*pw).pw_name)
            .to_string_lossy()
            .into_owned()
    }
}

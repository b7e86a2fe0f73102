//! One directory server process for one cell: started from the cell's own copy of a
//! template, pinned to the cell's CPUs, listening on 127.0.0.1 on a port picked free, and
//! gone when the cell is, however the cell ends.
//!
//! Why nothing outlives the cell: the server is a plain child of `lab run`, so it stays
//! in the process group `lab matrix` kills at a timeout or a stop; it asks the kernel for
//! SIGKILL when the thread that started it ends (`PR_SET_PDEATHSIG`, for a `kill -9` of
//! the cell alone); it runs in the foreground (`-d 0`: neither server forks or calls
//! setsid then) as the same user (a change of user would clear the death signal); and its
//! folder is inside the cell's scratch folder, which lab removes. [`Running`] kills it on
//! drop. A server's data is a throwaway copy, so it is stopped with SIGKILL: a clean stop
//! of ns-slapd takes 3-4 s and writes nothing the next cell needs.
//!
//! This module does not know either server's configuration: [`crate::ds389`] and
//! [`crate::openldap`] build the command.

use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a server may take to answer its first search.
pub const START_TIMEOUT: Duration = Duration::from_secs(20);

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
    /// From spawn to the first answered search.
    pub started_in: Duration,
    log: PathBuf,
    /// What the server makes outside its folder and a SIGKILL leaves behind, removed once
    /// it is gone, however the start or the cell ends.
    leftovers: Vec<PathBuf>,
}

impl Running {
    /// Starts `command` (which must stay in the foreground) with its output in
    /// `folder/server.log`, on `cpus`, and waits until a search on `port` is answered.
    /// `leftovers`: files the server makes outside `folder`, removed once it is gone.
    pub fn start(
        mut command: Command,
        folder: &Path,
        port: u16,
        cpus: &[usize],
        leftovers: &[PathBuf],
    ) -> Result<Running, String> {
        let log = folder.join("server.log");
        let out = std::fs::File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
        let err = out.try_clone().map_err(|e| e.to_string())?;
        let cpus = cpus.to_vec();
        let parent = std::process::id() as libc::pid_t;
        command
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .current_dir(folder);
        // SAFETY: only async-signal-safe calls (prctl, getppid, raise, sched_setaffinity)
        // between fork and exec.
        unsafe {
            command.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::getppid() != parent {
                    libc::raise(libc::SIGKILL);
                }
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                for &cpu in &cpus {
                    libc::CPU_SET(cpu, &mut set);
                }
                if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let spawned = Instant::now();
        let program = command.get_program().to_string_lossy().into_owned();
        let child = command
            .spawn()
            .map_err(|e| format!("cannot start {program}: {e}"))?;
        let mut running = Running {
            pid: child.id(),
            child: Some(child),
            port,
            folder: folder.to_path_buf(),
            started_in: Duration::ZERO,
            log,
            leftovers: leftovers.to_vec(),
        };
        running.wait_ready(&program, spawned)?;
        running.started_in = spawned.elapsed();
        Ok(running)
    }

    fn wait_ready(&mut self, program: &str, spawned: Instant) -> Result<(), String> {
        let url = self.url();
        loop {
            if let Some(status) = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                return Err(format!(
                    "{program} exited ({status}) before answering: {}",
                    self.log_tail()
                ));
            }
            if port_in_use(self.port) && crate::workload::probe_search(&url).is_ok() {
                return Ok(());
            }
            if spawned.elapsed() > START_TIMEOUT {
                return Err(format!(
                    "{program} did not answer a search within {} s: {}",
                    START_TIMEOUT.as_secs(),
                    self.log_tail()
                ));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// `ldap://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("ldap://127.0.0.1:{}", self.port)
    }

    /// Whether the process is still running.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.as_mut().map(|c| c.try_wait()), Some(Ok(None)))
    }

    /// The last lines the server wrote, for a failure reason.
    pub fn log_tail(&self) -> String {
        let mut text = std::fs::read_to_string(&self.log).unwrap_or_default();
        // 389 DS writes its reasons to its own error log rather than to the terminal.
        text.push_str(&std::fs::read_to_string(self.folder.join("log/errors")).unwrap_or_default());
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
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        for path in self.leftovers.drain(..) {
            let _ = std::fs::remove_file(path);
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Where an executable lies: on `PATH`, or in an `sbin` folder (where Debian puts both
/// servers, and which a user's `PATH` may lack).
pub fn find_program(name: &str) -> Option<PathBuf> {
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

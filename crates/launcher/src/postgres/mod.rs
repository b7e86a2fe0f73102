//! The lab's own PostgreSQL: started in a scratch folder on a free port, from a data
//! folder prepared once by `initdb` ([`install::image`]), pinned to the CPUs it is
//! given, with `pg_stat_statements` loaded, and gone with the [`Postgres`] value, or
//! with the thread that started it however that ends.
//!
//! Why nothing outlives it: the server leads its own process group, killed whole on
//! drop; it asks the kernel for SIGKILL when the thread that started it ends (as root
//! through `setpriv --pdeathsig KILL`, since changing user clears the signal); its
//! backends leave when the postmaster is gone; and its folder is removed on drop, or
//! with the cell's scratch folder it was made in. Its data is a throwaway copy, so it is
//! stopped with SIGKILL.
//!
//! This module does not know any hot path's tables or statements.

pub mod install;

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

pub use install::bin_dir;

/// How a [`Postgres`] is started. `PostgresOptions::default()` is a server on a free
/// port, on every CPU, with the lab's settings only.
#[derive(Clone, Debug, Default)]
pub struct PostgresOptions {
    /// The CPUs the server (and every backend) runs on; `None`: those this process may.
    pub cpus: Option<Vec<usize>>,
    /// Settings (`-c name=value`) after the lab's own, so they win.
    pub settings: Vec<(String, String)>,
    /// The TCP port on 127.0.0.1; `None`: a free one.
    pub port: Option<u16>,
    /// Where its scratch folder is made; `None`: the cell's scratch folder under `lab`,
    /// else the system's temporary folder ([`harness::scratch::default_parent`]).
    pub parent: Option<PathBuf>,
    /// How long it may take to accept a connection; `None`: 30 s.
    pub ready_timeout: Option<Duration>,
}

/// The lab's settings, before the caller's: statements timed per table, durable commits,
/// enough connections for 12 clients and more beside the lab's own.
const SETTINGS: &[(&str, &str)] = &[
    ("listen_addresses", "127.0.0.1"),
    ("shared_preload_libraries", "pg_stat_statements"),
    ("pg_stat_statements.track", "all"),
    ("pg_stat_statements.max", "1000"),
    ("fsync", "on"),
    ("synchronous_commit", "on"),
    ("full_page_writes", "on"),
    ("max_connections", "100"),
    ("logging_collector", "off"),
    // Dynamic shared memory as files in the data folder (`pg_dynshmem`), not POSIX
    // segments in /dev/shm: a server killed whole (SIGKILL, as every cell's end and a
    // killed lab leave it) never unlinks its segments, and 272 of them (143 MB of RAM)
    // piled up in /dev/shm over a day's runs here. In the folder they go with it. The
    // lab's statements run no parallel query, the one heavy user of these segments.
    ("dynamic_shared_memory_type", "mmap"),
];

/// A running PostgreSQL; dropping it kills it and removes its folder.
pub struct Postgres {
    child: Option<Child>,
    pid: u32,
    port: u16,
    folder: Option<tempfile::TempDir>,
    log: PathBuf,
    started_in: Duration,
}

impl Postgres {
    /// Starts a server as `options` say and waits until it accepts a connection, with
    /// the `pg_stat_statements` extension created when it is loaded. `Err` is one line;
    /// a server that would not start quotes the last lines of its log, and leaves no
    /// process and no folder.
    pub fn start(options: &PostgresOptions) -> Result<Postgres, String> {
        let bin = install::bin_dir()?;
        let user = install::run_as()?;
        let image = install::image(&bin, user)?;
        let parent = options
            .parent
            .clone()
            .unwrap_or_else(harness::scratch::default_parent);
        let folder = harness::scratch::private_folder(Some(&parent), "contention-lab-pg-")?;
        if user.is_some() {
            let_user_through(&parent)?;
        }
        crate::cache::copy_into(&image, folder.path(), &[])?;
        // PostgreSQL refuses a data folder others may enter; a copy gets the default mode.
        let data = folder.path().join("data");
        std::fs::set_permissions(&data, std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .map_err(|e| format!("{}: {e}", data.display()))?;
        install::chown_tree(folder.path(), user)?;
        let port = match options.port {
            Some(port) => port,
            None => free_port()?,
        };
        let log = folder.path().join("postgres.log");
        let out = std::fs::File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
        let err = out.try_clone().map_err(|e| e.to_string())?;
        let mut command = install::command(&bin, "postgres", user);
        command
            .arg("-D")
            .arg(&data)
            .arg("-p")
            .arg(port.to_string())
            .arg("-k")
            .arg(folder.path());
        let settings = SETTINGS
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .chain(options.settings.iter().cloned());
        let mut preloaded = false;
        for (name, value) in settings {
            if name == "shared_preload_libraries" {
                preloaded = value.contains("pg_stat_statements");
            }
            command.arg("-c").arg(format!("{name}={value}"));
        }
        command
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .current_dir(folder.path())
            .process_group(0);
        crate::death::die_with_parent(&mut command);
        if let Some(cpus) = &options.cpus {
            crate::death::pin(&mut command, cpus);
        }
        let spawned = Instant::now();
        let child = command
            .spawn()
            .map_err(|e| format!("cannot start PostgreSQL ({}): {e}", bin.display()))?;
        let mut server = Postgres {
            pid: child.id(),
            child: Some(child),
            port,
            folder: Some(folder),
            log,
            started_in: Duration::ZERO,
        };
        server.wait_ready(options.ready_timeout.unwrap_or(Duration::from_secs(30)))?;
        server.started_in = spawned.elapsed();
        if preloaded {
            let mut client = server.client()?;
            client
                .batch_execute("create extension if not exists pg_stat_statements")
                .map_err(|e| format!("PostgreSQL: cannot create pg_stat_statements: {e}"))?;
        }
        Ok(server)
    }

    fn wait_ready(&mut self, timeout: Duration) -> Result<(), String> {
        let since = Instant::now();
        loop {
            if let Some(status) = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                return Err(format!(
                    "PostgreSQL on port {} exited ({status}) before it was ready: {}",
                    self.port,
                    self.log_tail()
                ));
            }
            // Over its own socket: a port taken by another program may accept the TCP
            // connection and never answer.
            match postgres::Client::connect(&self.socket_url(), postgres::NoTls) {
                Ok(_) => return Ok(()),
                Err(e) if since.elapsed() > timeout => {
                    return Err(format!(
                        "PostgreSQL on port {} was not ready within {} s ({e}): {}",
                        self.port,
                        timeout.as_secs(),
                        self.log_tail()
                    ))
                }
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    }

    /// A libpq key=value connection string to it over TCP on 127.0.0.1, as user
    /// `postgres`, database `postgres` (trust authentication: no password).
    pub fn url(&self) -> String {
        format!(
            "host=127.0.0.1 port={} user=postgres dbname=postgres connect_timeout=5 application_name=contention-lab",
            self.port
        )
    }

    /// The same over its unix socket (in its folder), for a client that wants no TCP.
    pub fn socket_url(&self) -> String {
        format!(
            "host={} port={} user=postgres dbname=postgres connect_timeout=5 application_name=contention-lab",
            self.folder().display(),
            self.port
        )
    }

    /// The TCP port it listens on (127.0.0.1 only).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The postmaster's process id (it leads its own process group).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Its scratch folder: the data folder `data/`, its log and its unix socket.
    pub fn folder(&self) -> &Path {
        self.folder.as_ref().map_or(Path::new(""), |f| f.path())
    }

    /// From spawn to the first accepted connection.
    pub fn started_in(&self) -> Duration {
        self.started_in
    }

    /// A new connection to it (sync client, no TLS), or a one-line reason.
    pub fn client(&self) -> Result<postgres::Client, String> {
        postgres::Client::connect(&self.url(), postgres::NoTls)
            .map_err(|e| format!("cannot connect to PostgreSQL on port {}: {e}", self.port))
    }

    /// The last lines the server wrote, joined with " / ", for a failure reason.
    pub fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let tail = lines[lines.len().saturating_sub(2)..].join(" / ");
        if tail.is_empty() {
            "its log is empty".to_owned()
        } else {
            tail
        }
    }

    /// Whether the postmaster is still running.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.as_mut().map(|c| c.try_wait()), Some(Ok(None)))
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let group = self.pid as libc::pid_t;
            // SAFETY: kill has no memory effects; the group is led by our unreaped child.
            unsafe { libc::kill(-group, libc::SIGKILL) };
            let _ = child.wait();
            // Backends are reaped by whoever adopts them; their files may stay open an
            // instant after the postmaster is gone.
            let since = Instant::now();
            // SAFETY: signal 0 only checks that the group exists.
            while unsafe { libc::kill(-group, 0) } == 0 && since.elapsed() < Duration::from_secs(2)
            {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        drop(self.folder.take());
    }
}

/// A free TCP port on 127.0.0.1 (the kernel's pick, released for the server to take).
fn free_port() -> Result<u16, String> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("cannot pick a free port on 127.0.0.1: {e}"))
}

/// Lets the `postgres` user pass through `parent` (to reach the folder made in it) when
/// `parent` is one of this user's private folders, as a cell's scratch folder is: it may
/// then pass, not list or read.
fn let_user_through(parent: &Path) -> Result<(), String> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let meta = std::fs::metadata(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    // SAFETY: geteuid has no memory effects.
    if meta.uid() == unsafe { libc::geteuid() } && meta.mode() & 0o001 == 0 {
        let mode = (meta.mode() & 0o7777) | 0o001;
        std::fs::set_permissions(parent, std::fs::Permissions::from_mode(mode))
            .map_err(|e| format!("{}: {e}", parent.display()))?;
    }
    Ok(())
}

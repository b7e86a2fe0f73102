//! One server started for measuring ([`Resident`]) and one measured window against it
//! ([`Resident::window`]): what a repetition ([`crate::LdapHotPath`]'s `measure`: one
//! server, one window) and a block of pairs ([`crate::pairs`]: two servers, many windows)
//! share, so that a window is measured the same way in both.
//!
//! A window: the server's thread count read back, the clients pinned to the client CPUs,
//! the runner's warm-up and window ([`harness::runner::run`]), the server's time account
//! from its schedstat at the window's edges, and the record's extras. The directory's
//! warm-up (every entry read once) belongs to the start, not to a window: a resident
//! server's entry cache stays full between its windows.
//!
//! Not here: which windows run in what order, and the other server's pause (`pairs`).

use std::time::{Instant, SystemTime};

use harness::{affinity, probe, runner, scratch, Measurement, Params, RunSettings};
use serde_json::json;
use tempfile::TempDir;

use crate::server::Running;
use crate::workload::{self, LdapWorkload};
use crate::{ds389, procstat, Design};

pub use launcher::procstat::Cpus;

/// A server started from its image in a private folder, warmed up, and ready for
/// windows; killed and its folder removed when dropped, however the caller ends.
pub struct Resident {
    /// Declared before `_folder`: fields drop in order, so the server is killed before
    /// its folder goes.
    server: Running,
    _folder: TempDir,
    /// Which server.
    pub design: Design,
    /// Its worker-thread setting (the cell's threads).
    pub threads: usize,
    users: usize,
    connections: usize,
    warmed: usize,
    warm_s: f64,
}

impl Resident {
    /// Starts `design` with `threads` workers on `cpus.server` for the directory of
    /// `params` (users, groups) in a folder under its `data_dir`, and reads every entry
    /// once so that its windows measure a warm server. Call on the thread that will
    /// measure: the server dies with the thread that started it (`PR_SET_PDEATHSIG`).
    pub fn start(
        design: Design,
        params: &Params,
        threads: usize,
        cpus: &Cpus,
    ) -> Result<Resident, String> {
        let (users, groups) = (params.count("users"), params.count("groups"));
        let image = design.image(users, groups)?;
        let folder = scratch::private_folder(scratch::data_dir(params), "contention-lab-ldap-")?;
        let server = design.start(&image, folder.path(), threads, &cpus.server, users + groups)?;
        let warming = Instant::now();
        let warmed = workload::warm(&crate::server::url(server.port))?;
        Ok(Resident {
            server,
            _folder: folder,
            design,
            threads,
            users,
            connections: params.count("connections"),
            warmed,
            warm_s: warming.elapsed().as_secs_f64(),
        })
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.server.pid
    }

    /// Whether it still runs.
    pub fn alive(&mut self) -> bool {
        self.server.alive()
    }

    /// Its last log lines, for a failure reason.
    pub fn log_tail(&self) -> String {
        self.server.log_tail()
    }

    /// Stops every thread of it (SIGSTOP) until [`Resident::resume`]: a stopped process
    /// takes no CPU at all, where an idle ns-slapd's main thread still wakes every 1 ms
    /// (about 2% of a CPU, measured on 389 DS 2.3 here). A SIGKILL still ends it.
    pub fn pause(&self) -> Result<(), String> {
        self.signal(libc::SIGSTOP, "stop")
    }

    /// Lets it run again after [`Resident::pause`].
    pub fn resume(&self) -> Result<(), String> {
        self.signal(libc::SIGCONT, "continue")
    }

    fn signal(&self, signal: libc::c_int, what: &str) -> Result<(), String> {
        // SAFETY: kill has no memory effects; the pid is our own unreaped child's.
        if unsafe { libc::kill(self.server.pid as libc::pid_t, signal) } == 0 {
            Ok(())
        } else {
            Err(format!(
                "cannot {what} the server (pid {}): {}",
                self.server.pid,
                std::io::Error::last_os_error()
            ))
        }
    }

    /// Kills it and removes its folder (what dropping it does).
    pub fn stop(self) {
        drop(self);
    }

    /// One measured window: `connections` clients on `cpus.clients` search for
    /// `settings.warmup` then `settings.duration` (`settings.threads` is ignored: the
    /// server's threads are [`Resident::threads`]). An unverified window (a wrong answer,
    /// the server dead, another thread count than the cell's) comes back with its reason
    /// in `verified`; `Err` when there are no figures at all.
    pub fn window(&mut self, cpus: &Cpus, settings: RunSettings) -> Result<Measurement, String> {
        let (design, threads) = (self.design, self.threads);
        // The worker threads the server says it runs (389 DS: `-1` resolved), read after
        // the warm-up (every worker started) and before the window, which it costs nothing.
        let url = crate::server::url(self.server.port);
        let read_back = (design == Design::Ds389).then(|| ds389::read_threadnumber(&url));
        let rng_seed = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64);
        let workload = LdapWorkload::new(url, self.server.pid, self.users, rng_seed);
        probe::set_companions(&[self.server.pid]);
        // The clients' threads inherit this thread's mask; the server keeps its own.
        let result = procstat::set_thread_cpus(&cpus.clients).map(|()| {
            runner::run(
                &workload,
                RunSettings {
                    threads: self.connections,
                    ..settings
                },
            )
        });
        let restored = procstat::set_thread_cpus(&cpus.server);
        probe::set_companions(&[]);
        let died = (!self.server.alive()).then(|| self.server.log_tail());
        restored?;
        let mut m = result?.map_err(|f| f.reason)?;
        if let Some(tail) = died {
            m.verified = Err(format!("the server died during the window: {tail}"));
        }
        let cpu_list = affinity::format_cpu_list;
        let extra = &mut m.extra;
        extra.insert("server_threads".into(), json!(threads));
        extra.insert("server_cpus".into(), json!(cpu_list(&cpus.server)));
        if design == Design::Ds389 {
            let setting = ds389::threadnumber_setting(threads, cpus.server.len());
            extra.insert("nsslapd_threadnumber".into(), json!(setting.clone()));
            match read_back {
                Some(Ok((n, seen))) => {
                    extra.insert("threadnumber_read_back".into(), json!(n));
                    extra.insert("monitor_threads".into(), json!(seen));
                    // A cell named for a thread count must run that many; the autotuned
                    // cell's count is the server's to choose, so it is checked here.
                    if n != threads && m.verified.is_ok() {
                        m.verified = Err(format!(
                            "389 DS runs {n} worker threads (nsslapd-threadnumber: {setting}; cn=monitor says {seen} threads), not the cell's {threads}"
                        ));
                    }
                }
                Some(Err(why)) => {
                    extra.insert("threadnumber_read_back_error".into(), json!(why));
                }
                None => {}
            }
        }
        extra.insert("client_cpus".into(), json!(cpu_list(&cpus.clients)));
        extra.insert(
            "server_start_s".into(),
            json!(self.server.started_in.as_secs_f64()),
        );
        extra.insert("entries_warmed".into(), json!(self.warmed));
        extra.insert("server_warm_s".into(), json!(self.warm_s));
        // Said in every record so a reader of a profiled cell knows which off-CPU graph is
        // the server's: the clients measure no waits of their own.
        extra.insert(
            "server_off_cpu".into(),
            json!("in a profiled cell's profile: server_off_cpu (the scheduler's switch-outs of the server's threads with their stacks, weighted by the time until each ran again; perf as root), or server_off_cpu_absent saying why not"),
        );
        let (open, close) = workload.edges();
        procstat::record_window(
            &mut m,
            cpus,
            open.zip(close),
            "the first client never saw the window open",
        );
        Ok(m)
    }
}

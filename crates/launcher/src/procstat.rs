//! The server's side of the time account, read from outside the server: every thread's
//! `/proc/<pid>/task/<tid>/schedstat` (time on CPU, time waiting on a run queue) at the
//! window's edges, and which CPUs the clients may use.
//!
//! Why schedstat rather than `/proc/<pid>/stat`: its figures are in nanoseconds, where
//! utime + stime count 10 ms ticks (a 0.4 s window on one CPU is 40 ticks). One caveat
//! the harness's own account avoids by reading on the thread itself: a thread waiting on
//! a run queue at an edge has that wait added only when it next runs, so each edge can
//! misplace up to one scheduling delay per thread. This module does not decide when the
//! edges are: the caller does (a load's first client, or the lab around a load command).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use harness::account::{parse_schedstat, TimeShare};

/// Every thread of one process at one instant: tid -> (on CPU ns, run queue ns).
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// When it was read.
    pub at: Instant,
    /// Per thread: nanoseconds on CPU and waiting for a CPU so far.
    pub threads: BTreeMap<u32, (u64, u64)>,
    /// The lock library's table, where the server runs under it ([`crate::locks`]).
    pub locks: Option<crate::locks::Table>,
}

impl Snapshot {
    /// Reads every thread of `pid`; `None` when the process is gone.
    pub fn read(pid: u32) -> Option<Snapshot> {
        Snapshot::read_all(&[pid])
    }

    /// Reads every thread of every process of `pids` (a server and the workers it
    /// started); `None` when the first is gone.
    pub fn read_all(pids: &[u32]) -> Option<Snapshot> {
        let mut threads = BTreeMap::new();
        for (i, pid) in pids.iter().enumerate() {
            match std::fs::read_dir(format!("/proc/{pid}/task")) {
                Ok(dir) => read_threads(dir, &mut threads),
                Err(_) if i == 0 => return None,
                Err(_) => {}
            }
        }
        Some(Snapshot {
            at: Instant::now(),
            threads,
            locks: crate::locks::table_of(pids[0]),
        })
    }
}

fn read_threads(dir: std::fs::ReadDir, threads: &mut BTreeMap<u32, (u64, u64)>) {
    for entry in dir.flatten() {
        let Some(tid) = entry.file_name().to_str().and_then(|t| t.parse().ok()) else {
            continue;
        };
        if let Some(v) = std::fs::read_to_string(entry.path().join("schedstat"))
            .ok()
            .and_then(|t| parse_schedstat(&t))
        {
            threads.insert(tid, v);
        }
    }
}

/// `pid` and every process descended from it, `pid` first: a server (PostgreSQL's
/// postmaster) and the processes it forked (its backends, WAL writer, checkpointer), which
/// a window's CPU account must count with it. By parentage, not process group: each of
/// PostgreSQL's children calls setsid() and leads a group of its own. Empty when `pid` is
/// gone.
pub fn descendants(pid: u32) -> Vec<u32> {
    // /proc/<pid>/stat: "pid (comm) state ppid ...", comm may hold spaces and ')'.
    let ppid_of = |p: u32| {
        let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).ok()?;
        let rest = &stat[stat.rfind(')')? + 1..];
        rest.split_whitespace().nth(1)?.parse::<u32>().ok()
    };
    if ppid_of(pid).is_none() {
        return Vec::new();
    }
    let parents: Vec<(u32, u32)> = std::fs::read_dir("/proc")
        .map(|dir| {
            dir.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
                .filter_map(|p| Some((p, ppid_of(p)?)))
                .collect()
        })
        .unwrap_or_default();
    let mut found = vec![pid];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        let mut children: Vec<u32> = parents
            .iter()
            .filter(|&&(p, pp)| pp == parent && p != pid)
            .map(|&(p, _)| p)
            .collect();
        children.sort_unstable();
        found.extend(children);
        i += 1;
    }
    found
}

/// The server's threads over one window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ServerAccount {
    /// The window between the two readings.
    pub window: Duration,
    /// Threads present at both edges.
    pub threads: usize,
    /// Threads that ran at least 1% of the window: the ones doing the work, whose time
    /// the share accounts (housekeeping threads asleep throughout would only dilute it).
    pub active: usize,
    /// CPU time of every thread, nanoseconds.
    pub on_cpu_ns: u64,
    /// Where the active threads' time went: on CPU, waiting for a CPU, and the rest
    /// (asleep: waiting for work, for a lock or for I/O; the kernel does not tell which,
    /// the off-CPU profile does), so `blocked` is null.
    pub share: TimeShare,
}

impl ServerAccount {
    /// The account between two snapshots of the same process.
    pub fn between(open: &Snapshot, close: &Snapshot) -> ServerAccount {
        let window = close.at.saturating_duration_since(open.at);
        let span = window.as_nanos() as u64;
        let mut deltas = Vec::new();
        for (tid, &(cpu1, rq1)) in &close.threads {
            if let Some(&(cpu0, rq0)) = open.threads.get(tid) {
                deltas.push((cpu1.saturating_sub(cpu0), rq1.saturating_sub(rq0)));
            }
        }
        let on_cpu_ns = deltas.iter().map(|d| d.0).sum();
        let active: Vec<_> = deltas
            .iter()
            .filter(|d| d.0 * 100 >= span.max(1))
            .copied()
            .collect();
        let total = span * active.len() as u64;
        let share = |ns: u64| {
            if total == 0 {
                0.0
            } else {
                (ns as f64 / total as f64).min(1.0)
            }
        };
        let cpu = share(active.iter().map(|d| d.0).sum());
        let rq = share(active.iter().map(|d| d.1).sum());
        ServerAccount {
            window,
            threads: deltas.len(),
            active: active.len(),
            on_cpu_ns,
            share: TimeShare {
                on_cpu: cpu,
                run_queue: Some(rq.min(1.0 - cpu)),
                blocked: None,
                other: (1.0 - cpu - rq).max(0.0),
            },
        }
    }

    /// CPU time of every server thread / (window x `cpus`), clamped to 0..1.
    pub fn cpu_util(&self, cpus: usize) -> f64 {
        let denom = self.window.as_nanos() as f64 * cpus.max(1) as f64;
        if denom == 0.0 {
            0.0
        } else {
            (self.on_cpu_ns as f64 / denom).min(1.0)
        }
    }
}

/// Where a cell's server and clients run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cpus {
    /// The server's: the cell's cores.
    pub server: Vec<usize>,
    /// The clients': the machine's other CPUs, or the server's when it has them all.
    pub clients: Vec<usize>,
}

impl Cpus {
    /// The calling thread's mask is the cell's cores (`lab run` narrows the child to
    /// them): those are the server's.
    pub fn of_cell() -> Cpus {
        let server = harness::affinity::allowed_cpus();
        let clients = client_cpus(&server, &machine_cpus());
        Cpus { server, clients }
    }
}

/// Writes one window's server and client figures into `m`: the clients' CPU use over
/// their CPUs, and from the server's threads at the window's edges (`None` when they were
/// not both read, `why` saying why) its time account, CPU use and threads seen.
pub fn record_window(
    m: &mut harness::Measurement,
    cpus: &Cpus,
    edges: Option<(Snapshot, Snapshot)>,
    why: &str,
) {
    use serde_json::json;
    let window_cpus = m.window.as_secs_f64() * cpus.clients.len() as f64;
    let client_util = (m.cpu_time.as_secs_f64() / window_cpus.max(1e-9)).min(1.0);
    m.extra.insert("client_cpu_util".into(), json!(client_util));
    let Some((open, close)) = edges else {
        m.extra
            .insert("server_account".into(), json!(format!("not read: {why}")));
        return;
    };
    if let (Some(a), Some(b)) = (&open.locks, &close.locks) {
        crate::locks::record_window(m, a, b);
    }
    let account = ServerAccount::between(&open, &close);
    m.server_time_share = Some(account.share);
    let util = account.cpu_util(cpus.server.len());
    m.extra.insert("server_cpu_util".into(), json!(util));
    m.extra
        .insert("server_threads_seen".into(), json!(account.threads));
    m.extra
        .insert("server_threads_active".into(), json!(account.active));
}

/// The CPUs of this machine that the lab may use: the cgroup's effective cpuset where
/// there is one, else every online CPU.
pub fn machine_cpus() -> Vec<usize> {
    let from = |path: &str| {
        std::fs::read_to_string(path)
            .ok()
            .and_then(|t| harness::affinity::parse_cpu_list(&t).ok())
    };
    let cgroup = std::fs::read_to_string("/proc/self/cgroup")
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("0::").map(str::to_owned))
        })
        .and_then(|rel| from(&format!("/sys/fs/cgroup{rel}/cpuset.cpus.effective")));
    cgroup
        .or_else(|| from("/sys/devices/system/cpu/online"))
        .unwrap_or_else(harness::affinity::allowed_cpus)
}

/// The clients' CPUs: the machine's CPUs the server does not have, or the server's own
/// when it has them all.
pub fn client_cpus(server: &[usize], machine: &[usize]) -> Vec<usize> {
    let rest: Vec<usize> = machine
        .iter()
        .copied()
        .filter(|c| !server.contains(c))
        .collect();
    if rest.is_empty() {
        server.to_vec()
    } else {
        rest
    }
}

/// Sets the calling thread's CPU mask (threads it starts afterwards inherit it).
pub fn set_thread_cpus(cpus: &[usize]) -> Result<(), String> {
    // SAFETY: the set is zeroed and filled with CPU_SET before the call.
    let rc = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &cpu in cpus {
            libc::CPU_SET(cpu, &mut set);
        }
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(format!(
            "could not set CPU affinity to {}: {}",
            harness::affinity::format_cpu_list(cpus),
            std::io::Error::last_os_error()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(at: Instant, threads: &[(u32, u64, u64)]) -> Snapshot {
        Snapshot {
            at,
            threads: threads.iter().map(|&(t, c, r)| (t, (c, r))).collect(),
            locks: None,
        }
    }

    #[test]
    fn the_account_covers_threads_that_worked_and_sums_to_one() {
        let t = Instant::now();
        let ms = 1_000_000;
        let open = snap(t, &[(1, 0, 0), (2, 0, 0), (3, 0, 0), (9, 0, 0)]);
        // Thread 1 ran 60 ms and waited 20 ms for a CPU, thread 2 ran 20 ms, thread 3
        // slept throughout, thread 4 appeared late (not in both), thread 9 ended.
        let close = snap(
            t + Duration::from_millis(100),
            &[
                (1, 60 * ms, 20 * ms),
                (2, 20 * ms, 0),
                (3, 0, 0),
                (4, 50 * ms, 0),
            ],
        );
        let a = ServerAccount::between(&open, &close);
        assert_eq!((a.threads, a.active), (3, 2));
        assert!((a.share.on_cpu - 0.4).abs() < 1e-9, "{a:?}");
        assert!((a.share.run_queue.unwrap() - 0.1).abs() < 1e-9, "{a:?}");
        assert!((a.share.other - 0.5).abs() < 1e-9, "{a:?}");
        assert_eq!(a.share.blocked, None);
        assert!((a.cpu_util(2) - 0.4).abs() < 1e-9);
        assert!((a.cpu_util(1) - 0.8).abs() < 1e-9);
    }

    #[test]
    fn a_server_is_itself_and_every_process_it_forked() {
        // A parent that forks a child that forks a grandchild (each its own session, as
        // PostgreSQL's children are), and one process outside it.
        let mut parent = std::process::Command::new("sh")
            .args(["-c", "setsid sh -c 'sleep 30 & wait' & wait"])
            .spawn()
            .unwrap();
        let mut outside = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = parent.id();
        let mut pids = Vec::new();
        for _ in 0..200 {
            pids = descendants(pid);
            if pids.len() == 3 {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        for p in pids.iter().rev() {
            // SAFETY: kill(2) on processes this test started.
            unsafe { libc::kill(*p as i32, libc::SIGKILL) };
        }
        let _ = outside.kill();
        let _ = (parent.wait(), outside.wait());
        assert_eq!(pids.len(), 3, "{pids:?}");
        assert_eq!(pids[0], pid);
        assert!(!pids.contains(&outside.id()));
        assert!(descendants(4_999_999).is_empty());
    }

    #[test]
    fn this_process_reads_and_clients_get_the_other_cpus() {
        let s = Snapshot::read(std::process::id()).unwrap();
        assert!(!s.threads.is_empty());
        assert!(Snapshot::read(4_999_999).is_none());
        assert_eq!(client_cpus(&[0], &[0, 1, 2]), vec![1, 2]);
        assert_eq!(client_cpus(&[0, 1], &[0, 1]), vec![0, 1]);
        assert!(!machine_cpus().is_empty());
    }
}

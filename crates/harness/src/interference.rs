//! Interference: what the rest of the machine did while one repetition measured, so that
//! `lab` can tell a slow repetition of the code from a repetition hit by something else,
//! and retake it.
//!
//! Three readings, taken at the window's edges (by the runner, or by any measurer that
//! opens a window of its own) and differenced:
//!
//! - CPU time used on the machine by processes outside the cell's own process tree:
//!   `/proc/stat`'s busy jiffies of all CPUs (user, nice, system, irq, softirq) less the
//!   cell's own CPU time (`getrusage` of the process and of its reaped children, plus the
//!   live descendants' `/proc/<pid>/stat`), over the window: a share of ONE CPU (1.0 is a
//!   busy loop beside the cell, whatever the machine's size).
//! - Steal time (`/proc/stat`'s steal), the CPU a hypervisor gave to other guests, also in
//!   CPUs.
//! - Involuntary context switches of the cell's threads (`getrusage`'s `ru_nivcsw`, every
//!   thread of the process): recorded, not judged, since a cell with more threads than
//!   cores preempts itself.
//!
//! `/proc/stat` counts whole ticks (`USER_HZ`, 100 a second), so each CPU busy during the
//! window adds up to one tick of error either way; [`Interference::resolution`] states
//! about two standard deviations of that error for the repetition, and retakes judge the
//! load beyond it. This module measures and merges; the threshold and the retakes are
//! `lab`'s (`crates/lab/src/retake.rs`).

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::stats;

/// The interference a cell ran under (`interference` in each record of the schema).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Interference {
    /// CPU time used by processes outside the cell's process tree during its windows, over
    /// the window: a share of one CPU (1.0 = one busy CPU), median over repetitions.
    pub other_cpu_share: f64,
    /// The largest `other_cpu_share` of a kept repetition.
    #[serde(default)]
    pub other_cpu_share_max: f64,
    /// Steal time over the window, in CPUs like `other_cpu_share`, median over repetitions.
    #[serde(default)]
    pub steal_share: f64,
    /// CPUs not idle on the whole machine over the window: the cell's own use, everyone
    /// else's and what the hypervisor stole (`/proc/stat`'s busy and steal jiffies over
    /// the window), median over repetitions. Why kept: a window whose machine was busy
    /// well below the usual for its cell is one where the work stalled with CPUs idle (a
    /// server's workers asleep while requests wait), which `lab`'s pairs say of a part
    /// whose windows did so. Steal counts as busy: a CPU the hypervisor took was not left
    /// idle by the cell. 0 in records from before it.
    #[serde(default)]
    pub busy_cpus: f64,
    /// About two standard deviations of the tick-counting error of `other_cpu_share` for
    /// one repetition (CPUs): a load within it cannot be told from none.
    #[serde(default)]
    pub resolution: f64,
    /// Involuntary context switches of the cell's threads in one window, median over
    /// repetitions.
    #[serde(default)]
    pub involuntary_switches: f64,
    /// Repetitions taken again because the load (`other_cpu_share + steal_share`) was above
    /// the run's threshold (`env.interference_threshold`), summed over the cell's
    /// repetitions.
    #[serde(default)]
    pub retaken: usize,
    /// The load of each repetition that was retaken (discarded), in CPUs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retaken_loads: Vec<f64>,
    /// Repetitions kept although above the threshold, because their retakes were spent.
    #[serde(default)]
    pub kept_over_threshold: usize,
    /// The canary ([`crate::canary`]): milliseconds of its walk, the mean of its readings
    /// before and after the repetition on every CPU of the cell; median over repetitions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canary_ms: Option<f64>,
    /// The canary's slowest reading over its fastest within one repetition (1.0: the
    /// machine's speed did not move across it); median over repetitions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canary_spread: Option<f64>,
    /// The machine's speed during the repetition: the run's usual canary over this one's
    /// (1.0 = the run's usual speed, 0.8 = the machine ran 20% slow), set by `lab` from
    /// the canaries of the run so far; median over repetitions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_speed: Option<f64>,
    /// The machine speed of each repetition that was retaken because the machine ran
    /// slow or fast (beyond `env.machine_speed.tolerance`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retaken_speeds: Vec<f64>,
}

impl Interference {
    /// The load a retake is judged on: other processes' CPU plus steal, in CPUs.
    pub fn load(&self) -> f64 {
        self.other_cpu_share + self.steal_share
    }

    /// Whether this repetition's load is above `threshold` beyond what the tick counting
    /// can resolve.
    pub fn above(&self, threshold: f64) -> bool {
        self.load() > threshold + self.resolution
    }

    /// The interference of several repetitions of one cell: medians of the shares, the
    /// largest share, retakes summed. `None` when no repetition recorded any.
    pub fn merge<'a>(all: impl IntoIterator<Item = &'a Interference>) -> Option<Interference> {
        let all: Vec<&Interference> = all.into_iter().collect();
        if all.is_empty() {
            return None;
        }
        let median = |f: fn(&Interference) -> f64| {
            stats::median(&all.iter().map(|i| f(i)).collect::<Vec<_>>())
        };
        let median_of = |f: fn(&Interference) -> Option<f64>| {
            let some: Vec<f64> = all.iter().filter_map(|i| f(i)).collect();
            (!some.is_empty()).then(|| stats::median(&some))
        };
        Some(Interference {
            other_cpu_share: median(|i| i.other_cpu_share),
            other_cpu_share_max: all
                .iter()
                .map(|i| i.other_cpu_share_max.max(i.other_cpu_share))
                .fold(0.0, f64::max),
            steal_share: median(|i| i.steal_share),
            busy_cpus: median(|i| i.busy_cpus),
            resolution: median(|i| i.resolution),
            involuntary_switches: median(|i| i.involuntary_switches),
            retaken: all.iter().map(|i| i.retaken).sum(),
            retaken_loads: all
                .iter()
                .flat_map(|i| i.retaken_loads.iter().copied())
                .collect(),
            kept_over_threshold: all.iter().map(|i| i.kept_over_threshold).sum(),
            canary_ms: median_of(|i| i.canary_ms),
            canary_spread: median_of(|i| i.canary_spread),
            machine_speed: median_of(|i| i.machine_speed),
            retaken_speeds: all
                .iter()
                .flat_map(|i| i.retaken_speeds.iter().copied())
                .collect(),
        })
    }
}

/// The machine-wide counters of `/proc/stat`'s `cpu` line that interference needs, in
/// ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTicks {
    /// user + nice + system + irq + softirq of all CPUs (guest time is inside user).
    pub busy: u64,
    /// steal of all CPUs.
    pub steal: u64,
}

/// Parses the aggregate `cpu` line of `/proc/stat` text.
pub fn parse_proc_stat(text: &str) -> Option<CpuTicks> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let fields: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    // user nice system idle iowait irq softirq steal [guest guest_nice]
    let get = |i: usize| fields.get(i).copied().unwrap_or(0);
    if fields.len() < 4 {
        return None;
    }
    Some(CpuTicks {
        busy: get(0) + get(1) + get(2) + get(5) + get(6),
        steal: get(7),
    })
}

/// utime + stime + cutime + cstime (ticks) of a `/proc/<pid>/stat` line: the process's own
/// CPU and that of the children it reaped.
pub fn parse_pid_stat(text: &str) -> Option<u64> {
    // The command name may hold spaces and parentheses: fields start after the last ')'.
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // Field 3 (state) is index 0, so utime (14) .. cstime (17) are 11..=14.
    let sum = fields
        .get(11..15)?
        .iter()
        .map(|f| f.parse::<i64>().ok().map(|v| v.max(0) as u64))
        .sum::<Option<u64>>()?;
    Some(sum)
}

/// Parses a `/proc/<pid>/task/<tid>/children` file: the pids it lists.
pub fn parse_children(text: &str) -> Vec<u32> {
    text.split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

fn ticks_per_second() -> f64 {
    // SAFETY: sysconf has no memory-safety preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if hz > 0 {
        hz as f64
    } else {
        100.0
    }
}

/// CPU time of the live processes below `pid` (not `pid` itself), in ticks, with what they
/// reaped. Processes that end between the reads are missed; a cell starts its servers
/// before its window, and their end after it is counted by `getrusage` of the children.
fn descendants_ticks(pid: u32, depth: usize) -> u64 {
    if depth > 16 {
        return 0;
    }
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    let mut total = 0;
    for task in tasks.flatten() {
        let Ok(text) = std::fs::read_to_string(task.path().join("children")) else {
            continue;
        };
        for child in parse_children(&text) {
            let own = std::fs::read_to_string(format!("/proc/{child}/stat"))
                .ok()
                .and_then(|t| parse_pid_stat(&t))
                .unwrap_or(0);
            total += own + descendants_ticks(child, depth + 1);
        }
    }
    total
}

fn rusage(who: libc::c_int) -> libc::rusage {
    // SAFETY: getrusage only writes into the struct we pass.
    unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(who, &mut usage);
        usage
    }
}

fn cpu_of(usage: &libc::rusage) -> Duration {
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, (t.tv_usec as u32) * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// The counters at one edge of a window.
#[derive(Debug, Clone, Copy)]
struct Reading {
    at: Instant,
    machine: CpuTicks,
    /// The cell's own CPU: this process, its reaped children and its live descendants.
    own: Duration,
    involuntary: u64,
}

impl Reading {
    fn take() -> Option<Reading> {
        let machine = parse_proc_stat(&std::fs::read_to_string("/proc/stat").ok()?)?;
        let me = rusage(libc::RUSAGE_SELF);
        let reaped = rusage(libc::RUSAGE_CHILDREN);
        let live = descendants_ticks(std::process::id(), 0) as f64 / ticks_per_second();
        Some(Reading {
            at: Instant::now(),
            machine,
            own: cpu_of(&me) + cpu_of(&reaped) + Duration::from_secs_f64(live),
            involuntary: me.ru_nivcsw.max(0) as u64,
        })
    }
}

/// An open window's first readings; [`Window::close`] gives its [`Interference`].
#[derive(Debug, Clone, Copy)]
pub struct Window {
    opened: Option<Reading>,
}

impl Window {
    /// Reads the counters as a window opens (call it before the window's clock starts).
    pub fn open() -> Window {
        Window {
            opened: Reading::take(),
        }
    }

    /// Reads them again as the window closes (after its clock stops); `None` where
    /// `/proc/stat` cannot be read.
    pub fn close(&self) -> Option<Interference> {
        let (opened, closed) = (self.opened?, Reading::take()?);
        Some(between(
            opened.machine,
            closed.machine,
            closed.own.saturating_sub(opened.own),
            closed.involuntary.saturating_sub(opened.involuntary),
            closed.at - opened.at,
            ticks_per_second(),
        ))
    }
}

/// The interference of a window of `elapsed` whose machine counters went from `open` to
/// `close` while the cell itself used `own` CPU time.
pub fn between(
    open: CpuTicks,
    close: CpuTicks,
    own: Duration,
    involuntary: u64,
    elapsed: Duration,
    hz: f64,
) -> Interference {
    let secs = elapsed.as_secs_f64();
    if secs <= 0.0 {
        return Interference::default();
    }
    let busy = close.busy.saturating_sub(open.busy) as f64 / hz;
    let steal = close.steal.saturating_sub(open.steal) as f64 / hz;
    let other = ((busy - own.as_secs_f64()) / secs).max(0.0);
    // Each busy CPU miscounts by up to a tick, uniformly either way (variance 1/6 of a
    // tick squared); two standard deviations of the sum over the busy CPUs.
    let counted = (busy / secs).ceil().max(1.0);
    let resolution = 2.0 * (counted / 6.0).sqrt() / hz / secs;
    Interference {
        other_cpu_share: other,
        other_cpu_share_max: other,
        steal_share: (steal / secs).max(0.0),
        busy_cpus: (busy + steal) / secs,
        resolution,
        involuntary_switches: involuntary as f64,
        ..Interference::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROC_STAT: &str = "cpu  56882 7 8919 26665 355 3 225 191 40 0\n\
        cpu0 28731 0 4031 13682 75 0 7 78 0 0\n\
        cpu1 28151 7 4887 12982 280 3 218 113 40 0\n\
        intr 1234 0 0\nctxt 99\nbtime 1764576000\n";

    #[test]
    fn proc_stat_busy_is_user_nice_system_irq_softirq_and_steal_apart() {
        let t = parse_proc_stat(PROC_STAT).unwrap();
        assert_eq!(t.busy, 56882 + 7 + 8919 + 3 + 225);
        assert_eq!(t.steal, 191);
        // An old kernel's line without steal still parses; garbage does not.
        let old = parse_proc_stat("cpu  10 0 5 100 0 0 0\n").unwrap();
        assert_eq!((old.busy, old.steal), (15, 0));
        assert_eq!(parse_proc_stat("cpu0 1 2 3 4\n"), None);
        assert_eq!(parse_proc_stat("cpu  1 x 3 4\n"), None);
    }

    #[test]
    fn pid_stat_sums_own_and_reaped_cpu_past_an_odd_command_name() {
        let line = "4242 (lab (run) x) S 7775 7784 7784 0 -1 4194560 6242 62057 0 7 \
                    12 5 62 15 20 0 1 0 30134 5124096 896";
        assert_eq!(parse_pid_stat(line), Some(12 + 5 + 62 + 15));
        assert_eq!(parse_pid_stat("4242 (short) S 1 2"), None);
        assert_eq!(parse_children("13709 13710 \n"), vec![13709, 13710]);
        assert!(parse_children("").is_empty());
    }

    #[test]
    fn a_busy_loop_beside_the_cell_is_one_cpu_of_interference() {
        let open = CpuTicks {
            busy: 1000,
            steal: 10,
        };
        // 200 ms: the cell used one CPU (20 ticks) and something else another 20.
        let close = CpuTicks {
            busy: 1040,
            steal: 12,
        };
        let i = between(
            open,
            close,
            Duration::from_millis(200),
            7,
            Duration::from_millis(200),
            100.0,
        );
        assert!((i.other_cpu_share - 1.0).abs() < 1e-9, "{i:?}");
        assert!((i.steal_share - 0.1).abs() < 1e-9, "{i:?}");
        // The machine's busy CPUs count the cell's own and the stolen too.
        assert!((i.busy_cpus - 2.1).abs() < 1e-9, "{i:?}");
        assert_eq!(i.involuntary_switches, 7.0);
        // Two busy CPUs over 200 ms at 100 Hz: about 0.058 CPU cannot be resolved.
        assert!(i.resolution > 0.04 && i.resolution < 0.08, "{i:?}");
        assert!(i.above(0.25) && !i.above(1.2));
        // The cell alone: no interference, never a negative one from tick rounding.
        let alone = between(
            open,
            CpuTicks {
                busy: 1019,
                steal: 10,
            },
            Duration::from_millis(200),
            0,
            Duration::from_millis(200),
            100.0,
        );
        assert_eq!(alone.other_cpu_share, 0.0);
        assert!(!alone.above(0.25));
    }

    #[test]
    fn merging_takes_medians_and_sums_retakes() {
        let one = |other: f64, retaken: usize| Interference {
            other_cpu_share: other,
            other_cpu_share_max: other,
            retaken,
            retaken_loads: vec![0.9; retaken],
            ..Interference::default()
        };
        let m = Interference::merge(&[one(0.1, 0), one(0.3, 2), one(0.2, 1)]).unwrap();
        assert_eq!(m.other_cpu_share, 0.2);
        assert_eq!(m.other_cpu_share_max, 0.3);
        assert_eq!(m.retaken, 3);
        assert_eq!(m.retaken_loads.len(), 3);
        assert_eq!(m.canary_ms, None, "no repetition had a canary");
        let timed = |ms: f64| Interference {
            canary_ms: Some(ms),
            ..one(0.0, 0)
        };
        let m = Interference::merge(&[timed(3.0), one(0.0, 0), timed(5.0), timed(4.0)]).unwrap();
        assert_eq!(m.canary_ms, Some(4.0), "the median of those that had one");
        assert_eq!(Interference::merge(&[]), None);
    }

    #[test]
    fn a_window_on_this_machine_reads_its_own_cpu() {
        let w = Window::open();
        let start = Instant::now();
        let mut x = 0u64;
        while start.elapsed() < Duration::from_millis(50) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let i = w.close().expect("Linux has /proc/stat");
        // Bounds only: other processes on the machine are not this test's to control.
        assert!(
            i.other_cpu_share >= 0.0 && i.other_cpu_share.is_finite(),
            "{i:?}"
        );
        assert!(i.resolution > 0.0, "{i:?}");
    }
}

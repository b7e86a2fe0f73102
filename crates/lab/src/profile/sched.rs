//! Off-CPU time of a server the hot path runs (a companion process, not this one): where
//! its threads sleep (futex waits, epoll, a socket read) or wait for a CPU, from the
//! scheduler itself. perf records `sched:sched_switch` on the server's threads with DWARF
//! stacks (the switch-out, with the stack the thread left the CPU from) and perf's own
//! switch records (`--switch-events`: when each thread comes back on); each switch-out is
//! weighted by the time until the same thread is switched in again, or until the window
//! ends for a thread that never comes back. The tracepoint needs root where
//! `perf_event_paranoid` is above -1 (2 here); without it there is no such profile and the
//! profile says why in one line.
//!
//! Not here: the in-process waits a hot path measures ([`super::offcpu`]), on-CPU samples.

use std::collections::HashMap;

use super::perf::PerfRecorder;
use super::stacks::{tidy, Stacks};

/// perf's event arguments for the server's switches.
pub fn record_args() -> Vec<String> {
    ["-e", "sched:sched_switch", "--switch-events"]
        .map(str::to_owned)
        .to_vec()
}

/// What `perf script` prints of the recording (`--show-switch-events` for the switch-ins).
pub const SCRIPT_ARGS: [&str; 4] = [
    "--no-inline",
    "--show-switch-events",
    "-F",
    "comm,tid,time,event,ip,sym,dso,trace",
];

/// Why the server's threads cannot be followed off the CPU here, or `None` if they can.
pub fn refused() -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()
        .and_then(|t| t.trim().parse::<i32>().ok());
    match (root, paranoid) {
        (true, _) | (false, Some(i32::MIN..=-1)) => None,
        (false, p) => Some(format!(
            "no off-CPU profile of the server: perf's sched:sched_switch tracepoint needs root (perf_event_paranoid {})",
            p.map_or("unknown".to_owned(), |p| p.to_string())
        )),
    }
}

/// Starts perf on the server processes `pids`, events disabled until enabled.
pub fn start(perf: &str, pids: &[u32]) -> Result<PerfRecorder, String> {
    let pids: Vec<String> = pids.iter().map(u32::to_string).collect();
    PerfRecorder::start_recording(perf, &record_args(), &pids.join(","))
}

/// The server's off-CPU stacks, folded and weighted in microseconds.
#[derive(Debug, Default)]
pub struct SwitchProfile {
    /// Folded lines (`thread;frame;...;[state] µs`), sorted.
    pub lines: Vec<String>,
    /// Off-CPU time the lines cover, summed over threads, in seconds.
    pub seconds: f64,
    /// Switch-outs counted.
    pub switches: u64,
}

/// A thread's switch-out waiting for its switch-in.
struct Out {
    at: f64,
    stack: Vec<String>,
}

/// Folds `perf script` output of a recording made with [`record_args`] and printed with
/// [`SCRIPT_ARGS`].
pub fn fold(script: &str) -> SwitchProfile {
    let mut pending: HashMap<u32, Out> = HashMap::new();
    let mut stacks = Stacks::default();
    let (mut total_us, mut switches) = (0u64, 0u64);
    let mut last = 0.0f64;
    let mut add = |out: Out, until: f64, total_us: &mut u64| {
        let us = ((until - out.at).max(0.0) * 1e6).round() as u64;
        if us > 0 {
            *total_us += us;
            stacks.add(&out.stack, us);
        }
    };
    let mut lines = script.lines().peekable();
    while let Some(line) = lines.next() {
        if line.trim().is_empty() || line.starts_with(char::is_whitespace) {
            continue;
        }
        let Some((comm, tid, at, rest)) = header(line) else {
            continue;
        };
        last = last.max(at);
        if rest.starts_with("PERF_RECORD_SWITCH IN") {
            if let Some(out) = pending.remove(&tid) {
                add(out, at, &mut total_us);
            }
            continue;
        }
        if !rest.starts_with("sched:sched_switch:") {
            continue;
        }
        // The frames under the header, innermost first.
        let mut frames: Vec<String> = Vec::new();
        while let Some(f) = lines.next_if(|l| l.starts_with(char::is_whitespace)) {
            if let Some(name) = frame(f) {
                frames.push(name);
            }
        }
        frames.reverse();
        let state = rest
            .split_whitespace()
            .find_map(|w| w.strip_prefix("prev_state="))
            .unwrap_or("");
        // R: preempted, still runnable (waiting for a CPU); anything else is asleep.
        frames.push(if state.starts_with('R') {
            "[waiting for a CPU]".to_owned()
        } else {
            "[asleep]".to_owned()
        });
        // Rooted at the thread's name without its index, thread start cut, as on-CPU.
        let stack = tidy(comm, &frames, "");
        switches += 1;
        if let Some(old) = pending.insert(tid, Out { at, stack }) {
            // A second switch-out without a switch-in between: the first ended here.
            add(old, at, &mut total_us);
        }
    }
    // Threads still off the CPU when the window closed: asleep until then.
    for (_, out) in pending.drain() {
        add(out, last, &mut total_us);
    }
    let (lines, _) = stacks.into_lines();
    SwitchProfile {
        lines,
        seconds: total_us as f64 / 1e6,
        switches,
    }
}

/// `comm tid time: rest` (comm may hold spaces: the tid is the last number before the
/// time).
fn header(line: &str) -> Option<(&str, u32, f64, &str)> {
    let (head, rest) = line.split_once(": ")?;
    // perf pads its columns (the time to a width, so a machine up for less than about
    // three hours prints two spaces before it), and a thread's name may hold spaces: the
    // last two words are the time and the tid, whatever the spaces between them.
    let (head, at) = head.trim_end().rsplit_once(char::is_whitespace)?;
    let at = at.trim_end_matches(':').parse::<f64>().ok()?;
    let (comm, tid) = head.trim_end().rsplit_once(char::is_whitespace)?;
    let tid = tid.parse::<u32>().ok()?;
    Some((comm.trim(), tid, at, rest.trim()))
}

/// A frame line's symbol (`ip sym+off (dso)`), kernel frames marked `_[k]` as the on-CPU
/// profile's are.
fn frame(line: &str) -> Option<String> {
    let rest = line.trim().split_once(' ')?.1;
    let (sym, dso) = rest.rsplit_once(" (").unwrap_or((rest, ""));
    let sym = sym
        .rsplit_once("+0x")
        .map_or(sym, |(s, _)| s)
        .replace(';', ":");
    Some(if dso.starts_with("[kernel") {
        format!("{sym}_[k]")
    } else {
        sym
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_read_however_perf_pads_its_columns() {
        for line in [
            "tiny-worker-1 11115  2221.641810: PERF_RECORD_SWITCH IN",
            "tiny-worker-1 11115 12221.641810: PERF_RECORD_SWITCH IN",
            "tiny conn   215 100.000600: sched:sched_switch: prev_comm=tiny conn",
        ] {
            let (comm, tid, at, rest) = header(line).unwrap_or_else(|| panic!("{line}"));
            assert!(comm.starts_with("tiny") && !comm.ends_with(' '), "{comm:?}");
            assert!(tid == 11115 || tid == 215, "{tid}");
            assert!(at > 100.0, "{at}");
            assert!(
                rest.starts_with("PERF_RECORD") || rest.starts_with("sched:"),
                "{rest}"
            );
        }
    }

    #[test]
    fn a_switch_out_weighs_until_the_same_thread_is_back() {
        let script = "\
tiny-worker-1 11 100.000100: PERF_RECORD_SWITCH IN
tiny-worker-1 11 100.000500: sched:sched_switch: prev_comm=tiny-worker-1 prev_pid=11 prev_prio=120 prev_state=S ==> next_comm=x next_pid=9 next_prio=120
\tffffffff82266208 __schedule ([kernel.kallsyms])
\tffffffff8226ded0 futex_wait ([kernel.kallsyms])
\t10a974 __libc_recv (/usr/lib/x86_64-linux-gnu/libc.so.6)
\t61f69 server::tiny::serve::{{closure}} (/bin/tiny)

tiny conn 12 100.000600: sched:sched_switch: prev_comm=tiny conn prev_pid=12 prev_prio=120 prev_state=R ==> next_comm=x next_pid=9 next_prio=120
\tffffffff82266208 __schedule ([kernel.kallsyms])

tiny conn 12 100.000700: PERF_RECORD_SWITCH OUT preempt
tiny-worker-1 11 100.002500: PERF_RECORD_SWITCH IN
tiny conn 12 100.003600: PERF_RECORD_SWITCH IN
tiny-worker-1 11 100.004000: sched:sched_switch: prev_comm=tiny-worker-1 prev_pid=11 prev_prio=120 prev_state=S ==> next_comm=x next_pid=9 next_prio=120
\tffffffff82266208 __schedule ([kernel.kallsyms])

tiny conn 12 100.005000: PERF_RECORD_SWITCH OUT
";
        let p = fold(script);
        assert_eq!(p.switches, 3);
        assert_eq!(
            p.lines,
            vec![
                "tiny conn;__schedule_[k];[waiting for a CPU] 3000",
                // Never back before the end (the last event at 100.005): 1000 µs.
                "tiny-worker;__schedule_[k];[asleep] 1000",
                "tiny-worker;server::tiny::serve::{{closure}};__libc_recv;futex_wait_[k];__schedule_[k];[asleep] 2000",
            ]
        );
        assert!((p.seconds - 0.006).abs() < 1e-9, "{}", p.seconds);
    }
}

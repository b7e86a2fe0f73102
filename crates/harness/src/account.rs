//! The time account of a measured window: where each worker thread's time went.
//!
//! Every worker thread reads its own CPU time and run-queue delay when it sees the window
//! open and again when it sees it close ([`ThreadClock`]); the hot path reports the time
//! it spent blocked through [`crate::OpCtx`]. Summed over threads and divided by
//! threads x window they give a [`TimeShare`]: on CPU, waiting for a CPU, blocked on the
//! hot path, and the rest (pacing sleeps, page faults, the runner's own loop, anything a
//! hot path does not measure).
//!
//! Each thread is accounted over its own span: from the instant it saw the window open to
//! the instant it saw it close, the span in which its operations were counted. A thread
//! waiting for a CPU when the window opens sees it only when next scheduled, which with
//! 16 threads on 2 busy cores was up to 140 ms into a 340 ms window (while the close is
//! seen within about 10 ms, as threads leave and the queue drains); measured over the
//! controller's window, that delay showed as a third of the time unaccounted. Over its own
//! span no operation straddles a thread's edges, so no wait needs clipping.
//!
//! Why per thread and on its own thread: `/proc/thread-self/schedstat` brings the
//! run-queue delay up to date only when the task is scheduled in, and a thread reading its
//! own file is by definition running, so its reading is exact. Reading every worker's file
//! from the controller would also cost one file read per thread at each end of the window,
//! which for a thousand-client pool stretches the window's edges.
//!
//! This module does not decide when the window opens or what counts as blocked: the
//! runner and the hot paths do.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::stats;

/// One thread's handle on its own scheduler statistics; use it on the thread it reads.
///
/// It keeps no file open: a pool cell runs thousands of client threads, and a descriptor
/// each would crowd the process's limit. The file is opened at each reading, which happens
/// twice per window.
#[derive(Debug, Default)]
pub struct ThreadClock {
    _not_shared: std::marker::PhantomData<*const ()>,
}

/// What a thread's clocks said at one instant.
#[derive(Debug, Clone, Copy)]
pub struct ThreadReading {
    /// When the reading was taken.
    pub at: Instant,
    /// CPU time the thread has consumed so far.
    pub cpu_ns: u64,
    /// Time the thread has spent runnable but waiting for a CPU so far; `None` where the
    /// kernel does not say (no schedstat).
    pub run_queue_ns: Option<u64>,
}

impl ThreadClock {
    /// A clock for the calling thread.
    pub fn open() -> ThreadClock {
        ThreadClock::default()
    }

    /// Reads CPU time and run-queue delay now. Must run on the thread that opened it.
    pub fn read(&self) -> ThreadReading {
        let from_schedstat = std::fs::read_to_string("/proc/thread-self/schedstat")
            .ok()
            .and_then(|text| parse_schedstat(&text));
        let at = Instant::now();
        match from_schedstat {
            Some((cpu_ns, run_queue_ns)) => ThreadReading {
                at,
                cpu_ns,
                run_queue_ns: Some(run_queue_ns),
            },
            None => ThreadReading {
                at,
                cpu_ns: thread_cpu_ns(),
                run_queue_ns: None,
            },
        }
    }
}

/// The first two fields of a schedstat line: time on CPU and time waiting on a run queue,
/// both in nanoseconds.
pub fn parse_schedstat(text: &str) -> Option<(u64, u64)> {
    let mut fields = text.split_whitespace().map(|f| f.parse::<u64>().ok());
    Some((fields.next()??, fields.next()??))
}

/// CPU time of the calling thread (`CLOCK_THREAD_CPUTIME_ID`).
pub fn thread_cpu_ns() -> u64 {
    // SAFETY: clock_gettime only writes into the struct we pass.
    let ts = unsafe {
        let mut ts: libc::timespec = std::mem::zeroed();
        libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts);
        ts
    };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// One thread's time over the measured window, in nanoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ThreadAccount {
    /// The span this thread is accounted over: from when it saw the window open to when
    /// it saw it close, the span in which its operations were counted. Zero for a thread
    /// that never saw the window open (it counted nothing).
    pub window_ns: u64,
    /// CPU time between the thread's two readings.
    pub on_cpu_ns: u64,
    /// Run-queue delay between the two readings; `None` where not available.
    pub run_queue_ns: Option<u64>,
    /// Time the hot path reported blocked, less what the kernel counted already.
    pub blocked_ns: u64,
    /// Time the hot path reported blocked, whole: the wall time inside its waits,
    /// including any part of it the thread spent runnable (spinning, yielding, waking).
    pub waited_ns: u64,
}

impl ThreadAccount {
    /// The account of a thread read at `open` and `close`, having been blocked `blocked`
    /// (as the hot path measured it) in between.
    ///
    /// The kernel's figures take precedence: a measured wait is wall time, and includes
    /// any spinning (on CPU) and the wake-up delay before the woken thread runs again (run
    /// queue), which the kernel already counted. So blocked is the measured waits up to
    /// what is left of the span after CPU and run queue, and the three never add up to
    /// more than the span.
    pub fn between(
        open: &ThreadReading,
        close: &ThreadReading,
        blocked: Duration,
    ) -> ThreadAccount {
        let window_ns = close.at.saturating_duration_since(open.at).as_nanos() as u64;
        let mut on_cpu = close.cpu_ns.saturating_sub(open.cpu_ns);
        let mut run_queue = match (open.run_queue_ns, close.run_queue_ns) {
            (Some(a), Some(b)) => Some(b.saturating_sub(a)),
            _ => None,
        };
        // The clock and the scheduler's counters are read a few nanoseconds apart.
        let kernel = on_cpu + run_queue.unwrap_or(0);
        if kernel > window_ns {
            on_cpu = scaled(on_cpu, window_ns, kernel);
            run_queue = run_queue.map(|v| scaled(v, window_ns, kernel));
        }
        let left = window_ns.saturating_sub(on_cpu + run_queue.unwrap_or(0));
        ThreadAccount {
            window_ns,
            on_cpu_ns: on_cpu,
            run_queue_ns: run_queue,
            blocked_ns: (blocked.as_nanos() as u64).min(left),
            waited_ns: (blocked.as_nanos() as u64).min(window_ns),
        }
    }
}

/// `v x num / den` without overflow.
fn scaled(v: u64, num: u64, den: u64) -> u64 {
    (u128::from(v) * u128::from(num) / u128::from(den.max(1))) as u64
}

/// Every worker thread's account added up.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TimeAccount {
    /// The threads' spans added up (threads x window, less the moments each thread took
    /// to notice the window open).
    pub total_ns: u64,
    /// CPU time, all threads.
    pub on_cpu_ns: u64,
    /// Run-queue delay, all threads; `None` if any thread could not read it.
    pub run_queue_ns: Option<u64>,
    /// Blocked time reported by the hot path, all threads, less what the kernel counted
    /// as on CPU or run queue (the time account's exclusive share).
    pub blocked_ns: u64,
    /// Blocked time reported by the hot path, all threads, whole (see
    /// [`ThreadAccount::waited_ns`]): what `wait_share` and the off-CPU profile count.
    pub waited_ns: u64,
}

impl TimeAccount {
    /// The sum of `threads`' accounts.
    pub fn sum(threads: &[ThreadAccount]) -> TimeAccount {
        // A thread with an empty span has no readings, and must not make the others'
        // run-queue share "not available".
        let run_queue = threads
            .iter()
            .filter(|t| t.window_ns > 0)
            .map(|t| t.run_queue_ns)
            .try_fold(0u64, |acc, rq| rq.map(|v| acc + v));
        TimeAccount {
            total_ns: threads.iter().map(|t| t.window_ns).sum(),
            on_cpu_ns: threads.iter().map(|t| t.on_cpu_ns).sum(),
            run_queue_ns: run_queue,
            blocked_ns: threads.iter().map(|t| t.blocked_ns).sum(),
            waited_ns: threads.iter().map(|t| t.waited_ns).sum(),
        }
    }

    /// The shares; `blocked` is `None` when the hot path does not measure its waits.
    pub fn shares(&self, waits_measured: bool) -> TimeShare {
        let total = Duration::from_nanos(self.total_ns);
        let share = |ns: u64| stats::share(Duration::from_nanos(ns), total);
        let on_cpu = share(self.on_cpu_ns);
        let run_queue = self.run_queue_ns.map(share);
        let blocked = waits_measured.then(|| share(self.blocked_ns));
        let other = (1.0 - on_cpu - run_queue.unwrap_or(0.0) - blocked.unwrap_or(0.0)).max(0.0);
        TimeShare {
            on_cpu,
            run_queue,
            blocked,
            other,
        }
    }
}

/// Shares of threads x window (the schema's `time_share`), summing to about 1.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct TimeShare {
    /// On a CPU (thread CPU time).
    pub on_cpu: f64,
    /// Runnable but waiting for a CPU (schedstat run-queue delay); null where the kernel
    /// does not report it.
    pub run_queue: Option<f64>,
    /// Blocked on the hot path (locks, permits, connections, busy-handler and backoff
    /// sleeps): the hot path's measured waits less what the kernel already counted as on
    /// CPU or run queue; null where the hot path does not measure its waits.
    pub blocked: Option<f64>,
    /// The rest: pacing sleeps, waits the hot path does not measure, the edges of the
    /// window each thread noticed late. Never below 0.
    pub other: f64,
}

impl TimeShare {
    /// Field-by-field median over repetitions; a share that is null in any repetition is
    /// null in the result.
    pub fn median_of(all: &[TimeShare]) -> Option<TimeShare> {
        if all.is_empty() {
            return None;
        }
        let m = |f: fn(&TimeShare) -> f64| stats::median(&all.iter().map(f).collect::<Vec<_>>());
        let m_opt = |f: fn(&TimeShare) -> Option<f64>| {
            let v: Option<Vec<f64>> = all.iter().map(f).collect();
            v.map(|v| stats::median(&v))
        };
        Some(TimeShare {
            on_cpu: m(|s| s.on_cpu),
            run_queue: m_opt(|s| s.run_queue),
            blocked: m_opt(|s| s.blocked),
            other: m(|s| s.other),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(at: Instant, cpu_ns: u64, rq: u64) -> ThreadReading {
        ThreadReading {
            at,
            cpu_ns,
            run_queue_ns: Some(rq),
        }
    }

    #[test]
    fn schedstat_lines_parse() {
        assert_eq!(parse_schedstat("205760 17 1\n"), Some((205760, 17)));
        assert_eq!(parse_schedstat("12"), None);
        assert_eq!(parse_schedstat(""), None);
    }

    #[test]
    fn this_threads_clock_moves_forward() {
        let clock = ThreadClock::open();
        let a = clock.read();
        let mut x = 0u64;
        for i in 0..2_000_000u64 {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
        }
        let b = clock.read();
        assert!(b.cpu_ns > a.cpu_ns);
        assert!(b.at > a.at);
    }

    #[test]
    fn shares_sum_to_one_and_null_stays_null() {
        let t = Instant::now();
        let w = Duration::from_millis(100);
        let one = ThreadAccount::between(
            &reading(t, 0, 0),
            &reading(t + w, 40_000_000, 30_000_000),
            Duration::from_millis(20),
        );
        let idle = ThreadAccount::between(&reading(t, 0, 0), &reading(t + w, 0, 0), Duration::ZERO);
        // A thread that never saw the window open counted nothing and adds no time.
        let acc = TimeAccount::sum(&[one, idle, ThreadAccount::default()]);
        let s = acc.shares(true);
        assert!((s.on_cpu - 0.2).abs() < 1e-9, "{s:?}");
        assert!((s.run_queue.unwrap() - 0.15).abs() < 1e-9, "{s:?}");
        assert!((s.blocked.unwrap() - 0.1).abs() < 1e-9, "{s:?}");
        assert!((s.other - 0.55).abs() < 1e-9, "{s:?}");
        assert_eq!(acc.shares(false).blocked, None);
    }

    #[test]
    fn a_thread_never_accounts_for_more_than_its_window() {
        let t = Instant::now();
        let w = Duration::from_millis(10);
        let a = ThreadAccount::between(
            &reading(t, 0, 0),
            &reading(t + w, 8_000_000, 8_000_000),
            Duration::from_millis(4),
        );
        let sum = a.on_cpu_ns + a.run_queue_ns.unwrap() + a.blocked_ns;
        assert!(sum <= a.window_ns && sum + 3 >= a.window_ns, "{a:?}");
        // The kernel's figures stand; the measured waits get what is left.
        let b = ThreadAccount::between(
            &reading(t, 0, 0),
            &reading(t + w, 3_000_000, 4_000_000),
            Duration::from_millis(6),
        );
        assert_eq!(
            (b.on_cpu_ns, b.run_queue_ns, b.blocked_ns),
            (3_000_000, Some(4_000_000), 3_000_000)
        );
    }

    #[test]
    fn median_over_repetitions() {
        let s = |c: f64, b: Option<f64>| TimeShare {
            on_cpu: c,
            run_queue: Some(0.1),
            blocked: b,
            other: 0.0,
        };
        let m =
            TimeShare::median_of(&[s(0.1, Some(0.5)), s(0.3, Some(0.2)), s(0.2, None)]).unwrap();
        assert_eq!(m.on_cpu, 0.2);
        assert_eq!(m.blocked, None);
        assert_eq!(TimeShare::median_of(&[]), None);
    }
}

//! What the runner asks of the kernel: the process's CPU time and a thread's timer slack.
//!
//! Not here: per-thread CPU and run-queue accounts ([`crate::account`]).

use std::time::Duration;

/// Sets the calling thread's timer slack: a paced worker's sleep otherwise overshoots its
/// due instant by the default 50 µs, which the due-time latency would then include.
pub(super) fn set_timer_slack_ns(ns: u64) {
    // SAFETY: PR_SET_TIMERSLACK takes a plain integer and touches only this thread.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, ns as libc::c_ulong, 0, 0, 0);
    }
}

/// CPU time (user + system) of the whole process so far.
pub fn process_cpu_time() -> Duration {
    // SAFETY: getrusage only writes into the struct we pass.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, (t.tv_usec as u32) * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

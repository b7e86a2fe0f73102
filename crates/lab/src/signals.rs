//! How `lab matrix` hears that it should stop: SIGINT (Ctrl-C), SIGTERM (CI, `timeout`,
//! systemd) and SIGHUP (a closed terminal) all set one flag and remember which signal came,
//! so the matrix can end its children, keep what finished and exit with 128 + the signal.
//!
//! The handler only stores into atomics (all that is safe in a signal handler); the matrix
//! polls the flag. A second signal a second or more after the first ends lab at once, for
//! a user who does not want to wait for the report; the children then die with lab (see
//! `children`) and the next run sweeps their folders. One sooner is the same stop delivered
//! twice and is ignored.
//!
//! Not for `lab run`: a child keeps the default actions, and `lab matrix` never forwards
//! a signal to it (it kills the child's process group itself).

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);
static SIGNAL: AtomicI32 = AtomicI32::new(0);
/// When the first stopping signal arrived, in milliseconds of the monotonic clock.
static FIRST_MS: AtomicU64 = AtomicU64::new(0);

/// A signal within this long of the first is the same stop delivered twice (`timeout`
/// signals its child and then the whole group; `just` forwards what it gets), not a user
/// insisting.
const INSIST_AFTER_MS: u64 = 1000;

/// The signals that stop a matrix.
const STOPPING: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// The monotonic clock in milliseconds; clock_gettime is async-signal-safe.
fn now_ms() -> u64 {
    // SAFETY: clock_gettime writes only into the timespec it is given.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000
}

extern "C" fn on_signal(signal: libc::c_int) {
    let now = now_ms();
    if STOP.swap(true, Ordering::SeqCst) {
        if now.saturating_sub(FIRST_MS.load(Ordering::SeqCst)) >= INSIST_AFTER_MS {
            // A second signal well after the first: the user insists.
            // SAFETY: _exit is async-signal-safe.
            unsafe { libc::_exit(128 + signal) };
        }
        return;
    }
    FIRST_MS.store(now, Ordering::SeqCst);
    SIGNAL.store(signal, Ordering::SeqCst);
}

/// Installs the handlers (again is harmless) and returns the stop flag, set once any of
/// the stopping signals arrives. A signal lab was started ignoring (`nohup` ignores
/// SIGHUP) stays ignored.
pub fn install() -> &'static AtomicBool {
    for signal in STOPPING {
        // SAFETY: a zeroed sigaction with a plain handler and an empty mask is valid; the
        // handler only touches atomics and _exit.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(signal, std::ptr::null(), &mut old) == 0
                && old.sa_sigaction == libc::SIG_IGN
            {
                continue;
            }
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            action.sa_flags = libc::SA_RESTART;
            // The handlers never interrupt one another.
            libc::sigemptyset(&mut action.sa_mask);
            for other in STOPPING {
                libc::sigaddset(&mut action.sa_mask, other);
            }
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
    &STOP
}

/// The stopping signal that arrived, if any.
pub fn received() -> Option<i32> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 if STOP.load(Ordering::SeqCst) => Some(libc::SIGINT),
        0 => None,
        n => Some(n),
    }
}

/// The exit status the shell convention gives a process ended by `signal`: 130 for
/// SIGINT, 143 for SIGTERM, 129 for SIGHUP.
pub fn exit_status(signal: i32) -> u8 {
    u8::try_from(128 + signal).unwrap_or(130)
}

/// Whether a child that ended with this raw wait status was ended by one of the stopping
/// signals, or exited the way a process does after catching one (128 + the signal).
pub fn is_stop_status(status: &std::process::ExitStatus) -> bool {
    use std::os::unix::process::ExitStatusExt;
    match (status.signal(), status.code()) {
        (Some(sig), _) => STOPPING.contains(&sig),
        (None, Some(code)) => STOPPING.iter().any(|&s| code == 128 + s),
        (None, None) => false,
    }
}

/// The name of a signal, e.g. `SIGABRT`, for failure reasons a reader understands.
pub fn name(signal: i32) -> String {
    let known = [
        (libc::SIGHUP, "SIGHUP"),
        (libc::SIGINT, "SIGINT"),
        (libc::SIGQUIT, "SIGQUIT"),
        (libc::SIGILL, "SIGILL"),
        (libc::SIGABRT, "SIGABRT"),
        (libc::SIGBUS, "SIGBUS"),
        (libc::SIGFPE, "SIGFPE"),
        (libc::SIGKILL, "SIGKILL"),
        (libc::SIGSEGV, "SIGSEGV"),
        (libc::SIGPIPE, "SIGPIPE"),
        (libc::SIGTERM, "SIGTERM"),
    ];
    known
        .iter()
        .find(|(n, _)| *n == signal)
        .map_or(format!("signal {signal}"), |(_, name)| (*name).to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_statuses_follow_the_shell_convention() {
        assert_eq!(exit_status(libc::SIGINT), 130);
        assert_eq!(exit_status(libc::SIGTERM), 143);
        assert_eq!(exit_status(libc::SIGHUP), 129);
        assert_eq!(name(libc::SIGABRT), "SIGABRT");
        assert_eq!(name(64), "signal 64");
    }

    #[test]
    fn stop_statuses_are_recognised() {
        use std::os::unix::process::ExitStatusExt;
        let by_signal = |s: i32| std::process::ExitStatus::from_raw(s);
        let by_code = |c: i32| std::process::ExitStatus::from_raw(c << 8);
        assert!(is_stop_status(&by_signal(libc::SIGINT)));
        assert!(is_stop_status(&by_signal(libc::SIGTERM)));
        assert!(is_stop_status(&by_code(130)));
        assert!(!is_stop_status(&by_signal(libc::SIGKILL)));
        assert!(!is_stop_status(&by_signal(libc::SIGABRT)));
        assert!(!is_stop_status(&by_code(1)));
    }
}

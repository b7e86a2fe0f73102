//! `pre_exec` steps for a child process: die with the parent, run on given CPUs.
//!
//! Why here: every place that starts a process that must not outlive its starter (lab's
//! cells, a hot path's server) needs the same few async-signal-safe lines, and a copy
//! that drifts (a missing `getppid` check) leaves an orphan only a crash would show.
//! This module does not start anything; its callers own the [`Command`].

use std::os::unix::process::CommandExt;
use std::process::Command;

/// Makes the child ask the kernel for SIGKILL when the *thread* that spawns it ends
/// (`PR_SET_PDEATHSIG`), so that even a `kill -9` of the parent takes the child along.
/// Start long-lived children from a thread that lives as long as they should.
///
/// A program that changes its user id loses the signal (the kernel clears it on a change
/// of credentials): such a program must set it again itself (`setpriv --pdeathsig KILL`).
pub fn die_with_parent(command: &mut Command) {
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: only async-signal-safe calls (prctl, getppid, raise) between fork and exec.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent died between fork and prctl: nobody would send the signal.
            if libc::getppid() != parent {
                libc::raise(libc::SIGKILL);
            }
            Ok(())
        });
    }
}

/// Makes the child (and what it starts, which inherits the mask) run only on `cpus`.
/// An empty list leaves the mask as it is.
pub fn pin(command: &mut Command, cpus: &[usize]) {
    if cpus.is_empty() {
        return;
    }
    // Built before the fork: no allocation between fork and exec.
    // SAFETY: cpu_set_t is plain data; all zeroes is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus {
        // SAFETY: CPU_SET ignores a CPU beyond the set's size.
        unsafe { libc::CPU_SET(cpu, &mut set) };
    }
    // SAFETY: sched_setaffinity is async-signal-safe and reads only `set`.
    unsafe {
        command.pre_exec(move || {
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pinned_child_runs_on_its_cpus_only() {
        let cpu = *harness::affinity::allowed_cpus().last().unwrap();
        let mut command = Command::new("grep");
        command.args(["Cpus_allowed_list", "/proc/self/status"]);
        pin(&mut command, &[cpu]);
        die_with_parent(&mut command);
        let out = command.output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let list = text.split(':').nth(1).unwrap().trim();
        assert_eq!(harness::affinity::parse_cpu_list(list).unwrap(), vec![cpu]);
    }
}

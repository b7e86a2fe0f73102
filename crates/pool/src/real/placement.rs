//! Where a real-pool cell's server and clients run: the server on the cell's cores (the
//! mask `lab run` gave this process), the clients, and the threads the pools start (the
//! async pools' runtime, r2d2's helpers), on the machine's other CPUs where it has
//! others, so that 12 client threads do not take the server's CPU; on the same CPUs
//! where it has none.
//!
//! The server hot path has the same rule for its servers (`server::procstat::Cpus`); a
//! hot path may not depend on another, so this is the pool's copy until the rule moves
//! below the hot paths with the code that starts servers.

/// The CPUs of a cell's server and of its clients.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    /// The server's: the cell's cores.
    pub server: Vec<usize>,
    /// The clients': the others this process may be given, or the server's.
    pub clients: Vec<usize>,
}

impl Placement {
    /// The calling thread's mask is the cell's cores: those are the server's.
    pub fn of_cell() -> Placement {
        let server = harness::affinity::allowed_cpus();
        Placement::of(server, &machine_cpus())
    }

    /// The server on `server`, the clients on the rest of `machine`, or on `server`.
    pub fn of(server: Vec<usize>, machine: &[usize]) -> Placement {
        let rest: Vec<usize> = machine
            .iter()
            .copied()
            .filter(|c| !server.contains(c))
            .collect();
        let clients = if rest.is_empty() {
            server.clone()
        } else {
            rest
        };
        Placement { server, clients }
    }
}

/// The CPUs this process's cgroup may use (every online CPU outside one).
fn machine_cpus() -> Vec<usize> {
    let read = |path: &str| {
        std::fs::read_to_string(path)
            .ok()
            .and_then(|t| harness::affinity::parse_cpu_list(&t).ok())
    };
    std::fs::read_to_string("/proc/self/cgroup")
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("0::").map(str::to_owned))
        })
        .and_then(|rel| read(&format!("/sys/fs/cgroup{rel}/cpuset.cpus.effective")))
        .or_else(|| read("/sys/devices/system/cpu/online"))
        .unwrap_or_else(harness::affinity::allowed_cpus)
}

/// Runs `f` with the calling thread's mask set to `cpus` (threads it starts inherit it)
/// and puts the mask back after.
pub fn on_cpus<T>(cpus: &[usize], f: impl FnOnce() -> T) -> Result<T, String> {
    let before = harness::affinity::allowed_cpus();
    set_thread_cpus(cpus)?;
    let out = f();
    set_thread_cpus(&before)?;
    Ok(out)
}

fn set_thread_cpus(cpus: &[usize]) -> Result<(), String> {
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

    #[test]
    fn clients_take_the_other_cpus_or_share_the_servers() {
        let p = Placement::of(vec![0], &[0, 1, 2]);
        assert_eq!(p.clients, [1, 2]);
        let p = Placement::of(vec![0, 1], &[0, 1]);
        assert_eq!(p.clients, [0, 1]);
    }

    #[test]
    fn the_mask_is_put_back_after() {
        let before = harness::affinity::allowed_cpus();
        let inside = on_cpus(&before[..1], harness::affinity::allowed_cpus).unwrap();
        assert_eq!(inside, before[..1]);
        assert_eq!(harness::affinity::allowed_cpus(), before);
    }
}

//! Where a real-pool cell's server and clients run: the server on the cell's cores (the
//! mask `lab run` gave this process), the clients, and the threads the pools start (the
//! async pools' runtime, r2d2's helpers), on the machine's other CPUs where it has
//! others, so that 12 client threads do not take the server's CPU; on the same CPUs
//! where it has none.
//!
//! The rule is the one every real server of the lab follows (`launcher::procstat`); this
//! module only names the two sides for the pool.

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
        let clients = launcher::procstat::client_cpus(&server, machine);
        Placement { server, clients }
    }
}

/// The CPUs this process's cgroup may use (every online CPU outside one).
fn machine_cpus() -> Vec<usize> {
    launcher::procstat::machine_cpus()
}

/// Runs `f` with the calling thread's mask set to `cpus` (threads it starts inherit it)
/// and puts the mask back after.
pub fn on_cpus<T>(cpus: &[usize], f: impl FnOnce() -> T) -> Result<T, String> {
    let before = harness::affinity::allowed_cpus();
    launcher::procstat::set_thread_cpus(cpus)?;
    let out = f();
    launcher::procstat::set_thread_cpus(&before)?;
    Ok(out)
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

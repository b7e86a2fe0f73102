//! The simulated server's CPU: `cores` virtual cores served first come, first served.
//!
//! Simulated in virtual time, not by running anything: each core remembers when it next
//! falls idle; a request arriving at `now` takes the core that falls idle first, starts at
//! the later of `now` and that moment, and keeps the core for its CPU time. The caller
//! learns when its CPU part ends and sleeps until then (plus the latency that uses no
//! CPU). So the server's capacity is `cores` seconds of CPU per second whatever this
//! machine's own cores are, and a late wake-up of a client thread delays that client only,
//! never the server.
//!
//! Not a model of scheduling inside a server (no time slicing, no priorities): a FIFO
//! queue in front of `cores` identical slots, which is what bounds throughput.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

/// The server's cores, each as the instant it next falls idle.
pub struct Server {
    idle_at: Mutex<BinaryHeap<Reverse<Instant>>>,
    cores: usize,
}

impl Server {
    /// A server of `cores` virtual cores, all idle now.
    pub fn new(cores: usize) -> Self {
        let now = Instant::now();
        Server {
            idle_at: Mutex::new((0..cores.max(1)).map(|_| Reverse(now)).collect()),
            cores: cores.max(1),
        }
    }

    /// Virtual cores.
    pub fn cores(&self) -> usize {
        self.cores
    }

    /// Queues `cpu` of work arriving at `now`; returns when it will be done.
    pub fn schedule(&self, now: Instant, cpu: Duration) -> Instant {
        let mut idle_at = self.idle_at.lock();
        let mut first = idle_at.peek_mut().expect("at least one core");
        let done = first.0.max(now) + cpu;
        first.0 = done;
        done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_queue_once_every_core_is_busy() {
        let server = Server::new(2);
        let t = Instant::now() + Duration::from_secs(1);
        let ms = Duration::from_millis;
        // Two cores take the first two at once; the third waits for the first to finish.
        assert_eq!(server.schedule(t, ms(10)), t + ms(10));
        assert_eq!(server.schedule(t, ms(30)), t + ms(30));
        assert_eq!(server.schedule(t, ms(10)), t + ms(20));
        assert_eq!(server.schedule(t, ms(5)), t + ms(25));
        // Arriving after every core fell idle: no queue.
        assert_eq!(server.schedule(t + ms(100), ms(1)), t + ms(101));
    }
}

//! The simulated server: `cores` virtual cores served first come, first served, and
//! optionally a heap whose garbage collection makes its CPU work cost more as it fills.
//!
//! Simulated in virtual time, not by running anything: each core remembers when it next
//! falls idle; work arriving at `now` takes the core that falls idle first, starts at the
//! later of `now` and that moment, and keeps the core for its CPU time. The caller learns
//! when its CPU part ends and sleeps until then (plus the latency that uses no CPU). So
//! the server's capacity is `cores` seconds of CPU per second whatever this machine's own
//! cores are, and a late wake-up of a client thread delays that client only, never the
//! server.
//!
//! The heap holds every datapoint of the requests the server has received and not yet
//! answered (the seed's server parsed a request's JSON and kept it until every statement
//! of it came back). A copying collector's work per allocated byte grows as
//! `live / (heap - live)` (Appel, "Garbage collection can be faster than stack
//! allocation", 1987); taking the work to collect a byte equal to the work that allocated
//! it, every CPU charge is stretched by `heap / (heap - live)`. The stretch costs
//! throughput only where the CPU is the limit: a server waiting on something else (a full
//! pool) has idle cores that absorb it.
//!
//! Not a model of scheduling inside a server (no time slicing, no priorities, no pauses):
//! a FIFO queue in front of `cores` identical slots, which is what bounds throughput.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

/// Most a full heap may stretch CPU work: past this the server is out of memory in all
/// but name, and `lab` refuses such settings before anything runs (see
/// `PoolHotPath::check_threads`).
pub const MAX_STRETCH: f64 = 20.0;

/// The server's cores, each as the instant it next falls idle, and its heap.
pub struct Server {
    cores_state: Mutex<Cores>,
    cores: usize,
    heap_points: u64,
    live_points: AtomicU64,
}

/// Each core as the instant it next falls idle, and every piece of work as it ran.
struct Cores {
    idle_at: BinaryHeap<Reverse<Instant>>,
    ran: Vec<Ran>,
}

/// One piece of work on a core: from `start` to `done`, `gc` of it collecting.
#[derive(Debug, Clone, Copy)]
struct Ran {
    start: Instant,
    done: Instant,
    gc_share: f64,
}

/// The server's busy time within a span, and the part of it spent collecting.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Busy {
    /// Core time busy with work, collection included.
    pub cpu: Duration,
    /// The part of `cpu` spent collecting.
    pub gc: Duration,
}

/// What one piece of work cost the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Charge {
    /// When its CPU part ends.
    pub done: Instant,
    /// CPU the server spent, collection included.
    pub cpu: Duration,
    /// The part of `cpu` that went to garbage collection.
    pub gc: Duration,
}

impl Server {
    /// A server of `cores` virtual cores, all idle now, with a heap of `heap_points`
    /// datapoints (0: no heap limit, so no collection cost).
    pub fn new(cores: usize, heap_points: u64) -> Self {
        let now = Instant::now();
        Server {
            cores_state: Mutex::new(Cores {
                idle_at: (0..cores.max(1)).map(|_| Reverse(now)).collect(),
                ran: Vec::new(),
            }),
            cores: cores.max(1),
            heap_points,
            live_points: AtomicU64::new(0),
        }
    }

    /// Virtual cores.
    pub fn cores(&self) -> usize {
        self.cores
    }

    /// A request of `points` datapoints arrived and is held until answered.
    pub fn hold(&self, points: u64) {
        self.live_points.fetch_add(points, Ordering::Relaxed);
    }

    /// A request of `points` datapoints was answered and its memory is garbage.
    pub fn free(&self, points: u64) {
        self.live_points.fetch_sub(points, Ordering::Relaxed);
    }

    /// Whether the heap is limited, so that collection costs CPU.
    pub fn heap_limited(&self) -> bool {
        self.heap_points > 0
    }

    /// Datapoints held now.
    pub fn live_points(&self) -> u64 {
        self.live_points.load(Ordering::Relaxed)
    }

    /// Share of the heap held now; 0 without a heap limit.
    pub fn heap_used(&self) -> f64 {
        if self.heap_points == 0 {
            0.0
        } else {
            self.live_points() as f64 / self.heap_points as f64
        }
    }

    /// How much collection stretches CPU work with the heap as it is now.
    pub fn stretch(&self) -> f64 {
        let used = self.heap_used();
        if used >= 1.0 - 1.0 / MAX_STRETCH {
            MAX_STRETCH
        } else {
            1.0 / (1.0 - used)
        }
    }

    /// Queues `cpu` of work arriving at `now`, stretched by collection; returns when it
    /// will be done and what it cost.
    pub fn schedule(&self, now: Instant, cpu: Duration) -> Charge {
        let charged = if self.heap_points == 0 {
            cpu
        } else {
            cpu.mul_f64(self.stretch())
        };
        let gc = charged - cpu;
        let mut state = self.cores_state.lock();
        let mut first = state.idle_at.peek_mut().expect("at least one core");
        let start = first.0.max(now);
        let done = start + charged;
        first.0 = done;
        drop(first);
        state.ran.push(Ran {
            start,
            done,
            gc_share: gc.as_secs_f64() / charged.as_secs_f64().max(f64::MIN_POSITIVE),
        });
        Charge {
            done,
            cpu: charged,
            gc,
        }
    }

    /// Core time busy between `from` and `to` (the part of each piece of work that ran
    /// then, wherever it was queued), and the part of it spent collecting: the server's
    /// own account of a window, whose work is often queued before the window opens and
    /// answered after it closes.
    pub fn busy_between(&self, from: Instant, to: Instant) -> Busy {
        let state = self.cores_state.lock();
        state
            .ran
            .iter()
            .filter(|r| r.done > from && r.start < to)
            .fold(Busy::default(), |busy, r| {
                let ran = r.done.min(to) - r.start.max(from);
                Busy {
                    cpu: busy.cpu + ran,
                    gc: busy.gc + ran.mul_f64(r.gc_share),
                }
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn requests_queue_once_every_core_is_busy() {
        let server = Server::new(2, 0);
        let t = Instant::now() + Duration::from_secs(1);
        let done = |cpu| server.schedule(t, MS(cpu)).done;
        // Two cores take the first two at once; the third waits for the first to finish.
        assert_eq!(done(10), t + MS(10));
        assert_eq!(done(30), t + MS(30));
        assert_eq!(done(10), t + MS(20));
        assert_eq!(done(5), t + MS(25));
        // Arriving after every core fell idle: no queue.
        assert_eq!(server.schedule(t + MS(100), MS(1)).done, t + MS(101));
    }

    #[test]
    fn a_filling_heap_stretches_work_and_frees_with_the_answers() {
        let server = Server::new(1, 1000);
        let t = Instant::now() + Duration::from_secs(1);
        // Empty heap: no collection.
        let c = server.schedule(t, MS(10));
        assert_eq!((c.cpu, c.gc), (MS(10), Duration::ZERO));
        // Three quarters held: work costs heap / (heap - live) = 4 times as much.
        server.hold(750);
        let c = server.schedule(t + MS(100), MS(10));
        assert_eq!((c.cpu, c.gc, c.done), (MS(40), MS(30), t + MS(140)));
        // Answered: the memory is garbage and the cost falls back.
        server.free(750);
        assert_eq!(server.schedule(t + MS(200), MS(10)).cpu, MS(10));
        // The server's account of a span counts what ran in it, clipped to it.
        let busy = server.busy_between(t + MS(110), t + MS(200));
        assert_eq!((busy.cpu, busy.gc), (MS(30), MS(30) * 3 / 4));
        let busy = server.busy_between(t, t + MS(1000));
        assert_eq!((busy.cpu, busy.gc), (MS(60), MS(30)));
        // A heap all but full stretches by at most MAX_STRETCH.
        server.hold(1000);
        assert_eq!(server.stretch(), MAX_STRETCH);
    }

    #[test]
    fn without_a_heap_limit_holding_costs_nothing() {
        let server = Server::new(1, 0);
        server.hold(1 << 40);
        let c = server.schedule(Instant::now(), MS(3));
        assert_eq!((c.cpu, c.gc), (MS(3), Duration::ZERO));
        assert_eq!(server.heap_used(), 0.0);
    }
}

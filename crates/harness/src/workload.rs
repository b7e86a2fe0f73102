//! The contract between the runner and a hot path.
//!
//! A hot path implements [`Workload`] (shared, read by every thread) and [`Worker`] (one
//! per thread, owning everything the thread needs). This module only defines the shapes;
//! the timing lives in [`crate::runner`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::locks::{Held, Hold, LockCounters, LockId, LockSet};

/// How one step of a worker ended. Only [`Status::Ok`] counts as an operation: a reader
/// of `ops_per_sec` sizes a server from it, so failures, timeouts and steps that did no
/// work have counts of their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// The operation did what it was asked (after any retries).
    Ok,
    /// The operation gave up with an error (after any retries).
    Failed,
    /// The operation gave up waiting for a resource (a connection, a permit).
    TimedOut,
    /// The step did no work of the hot path (nothing to do, a simulated event such as a
    /// leader dying): neither a success nor a failure.
    Idle,
}

/// What one step of a worker did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    /// How many times the operation had to be retried before it ended.
    pub retries: u32,
    /// How it ended.
    pub status: Status,
}

impl Outcome {
    /// The operation succeeded at the first attempt.
    pub const OK: Outcome = Outcome {
        retries: 0,
        status: Status::Ok,
    };

    /// A step that did no work of the hot path.
    pub const IDLE: Outcome = Outcome {
        retries: 0,
        status: Status::Idle,
    };

    /// The operation succeeded after `retries` retries.
    pub fn retried(retries: u32) -> Outcome {
        Outcome {
            retries,
            status: Status::Ok,
        }
    }

    /// The operation failed, after `retries` retries.
    pub fn failed(retries: u32) -> Outcome {
        Outcome {
            retries,
            status: Status::Failed,
        }
    }

    /// The operation gave up waiting, after `retries` retries.
    pub fn timed_out(retries: u32) -> Outcome {
        Outcome {
            retries,
            status: Status::TimedOut,
        }
    }

    /// Whether this step counts as an operation done.
    pub fn is_ok(&self) -> bool {
        self.status == Status::Ok
    }
}

/// Per-operation context the runner lends a worker: where it reports time spent waiting.
///
/// Waiting is measured by the hot path itself, at its synchronization point, because a CPU
/// profile cannot see a thread asleep on a futex.
#[derive(Debug, Default)]
pub struct OpCtx {
    pub(crate) waited_ns: u64,
    pub(crate) window_ends_at: Option<Instant>,
    pub(crate) closed: Option<Arc<AtomicBool>>,
    pub(crate) locks: LockCounters,
}

impl OpCtx {
    /// Adds `waited` to the time this thread spent waiting on a synchronization point.
    #[inline]
    pub fn record_wait(&mut self, waited: Duration) {
        self.waited_ns += waited.as_nanos() as u64;
        crate::probe::waited(waited);
    }

    /// Acquires something (a lock guard, a permit) and accounts the time it took.
    ///
    /// `try_now` is tried first and costs no timer reads when it succeeds, so uncontended
    /// acquisitions are not slowed by the accounting; only when it fails is `block` timed.
    #[inline]
    pub fn acquire<G>(
        &mut self,
        try_now: impl FnOnce() -> Option<G>,
        block: impl FnOnce() -> G,
    ) -> G {
        if let Some(guard) = try_now() {
            return guard;
        }
        let start = Instant::now();
        let guard = block();
        self.record_wait(start.elapsed());
        guard
    }

    /// Takes lock `id` of the hot path's [`LockSet`] as [`OpCtx::acquire`] does (`try_now`
    /// first, `block` timed only when it fails) and counts it in the lock table; the
    /// returned guard times the hold when this acquisition is sampled, until it drops.
    ///
    /// The count and the sampling decision come before the lock is tried, and the wait
    /// and the hold are recorded after its release, so that while the lock is held the
    /// instrument does nothing beyond what `acquire` does but a sampled hold's two clock
    /// reads (a contended acquisition's one read when it gets the lock, which `acquire`
    /// makes too, is also its hold's start). With the instrument off
    /// ([`crate::locks::set_instrument`]) this is `acquire`.
    #[inline]
    pub fn lock<G>(
        &mut self,
        id: LockId,
        try_now: impl FnOnce() -> Option<G>,
        block: impl FnOnce() -> G,
    ) -> Held<G> {
        if self.locks.off {
            // Not counted, but known by its id: the delay experiment finds it.
            return Held::new(self.acquire(try_now, block), Hold::begin(id, false, None));
        }
        let timed = self.locks.count(id);
        if let Some(guard) = try_now() {
            return Held::new(guard, Hold::begin(id, timed, None));
        }
        let start = Instant::now();
        let guard = block();
        let got = Instant::now();
        let waited = got - start;
        self.record_wait(waited);
        Held::new(
            guard,
            Hold::started_at(id, timed.then_some(got), Some(waited)),
        )
    }

    /// Counts an acquisition of lock `id` that the hot path made (and whose wait it
    /// accounted through [`OpCtx::record_wait`]) itself: `waited` is `Some` when it had to
    /// wait. Keep the returned [`Hold`] for as long as the lock, permit or lease is held.
    #[inline]
    pub fn acquired(&mut self, id: LockId, waited: Option<Duration>) -> Hold {
        self.locks.acquired(id, waited)
    }

    /// When the measured window is due to close, once it has opened; `None` in the
    /// warm-up and outside the runner (criterion benchmarks). The window really closes
    /// when [`OpCtx::window_closed`] says so, a timer slip later.
    pub fn window_ends_at(&self) -> Option<Instant> {
        self.window_ends_at
    }

    /// Whether the measured window has closed. The operation under way then still counts
    /// (it started inside the window) and is the thread's last: a worker whose operation
    /// would wait seconds more for an answer already determined (a simulated server's
    /// queue) may complete it at once instead.
    pub fn window_closed(&self) -> bool {
        self.closed
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Acquire))
    }

    /// Time waited so far in the current measured window.
    pub fn waited(&self) -> Duration {
        Duration::from_nanos(self.waited_ns)
    }
}

/// One thread's handle on a hot path: made before the clock starts, used by one thread.
pub trait Worker: Send {
    /// Performs one operation and says how it went.
    fn op(&mut self, ctx: &mut OpCtx) -> Outcome;

    /// Called on the worker's own thread when the measured window opens (after the
    /// warm-up), so a worker that keeps figures of its own for `extra` can count only the
    /// window. Tallies used by `verify` must not be reset here.
    fn window_opened(&mut self) {}

    /// Called on the worker's own thread after the window has closed and the thread's
    /// time account is read, before [`Workload::verify`]: a worker whose operations leave
    /// work under way past their return (requests still in flight) settles it here, so
    /// that verify sees a state at rest. Nothing done here is measured.
    fn finish(&mut self) {}

    /// When the next operation is due, for a worker paced to a fixed rate; `None` (the
    /// default) runs operations back to back.
    ///
    /// The runner calls it before each operation, sleeps until the instant returned and
    /// times the operation from that instant, not from when it actually started: an
    /// operation delayed by a stall ahead of it is late by the stall, and its latency
    /// says so (no coordinated omission). A worker behind schedule returns instants in
    /// the past and the runner starts at once. Each call advances the schedule by one.
    fn next_due(&mut self) -> Option<Instant> {
        None
    }
}

/// A hot path ready to be measured: shared state plus a way to make per-thread workers.
pub trait Workload: Sync {
    /// The per-thread handle.
    type Worker: Worker;

    /// Makes the worker for thread `index` of `threads`. Called outside the timed window.
    fn worker(&self, index: usize, threads: usize) -> Self::Worker;

    /// Checks the invariants after the run, given every worker back (with whatever
    /// tallies they kept). An `Err` carries the reason and marks the cell `verified: false`.
    fn verify(&self, workers: &[Self::Worker]) -> Result<(), String>;

    /// Record the latency of one operation in this many. Operations that take well under a
    /// microsecond set this above 1 so that reading the clock does not dominate them.
    fn latency_sample_every(&self) -> u32 {
        1
    }

    /// Whether this hot path reports the time its workers spend blocked (through
    /// [`OpCtx::record_wait`] or [`OpCtx::acquire`]) at every point where they can block.
    /// When false the record's `wait_share` is null ("not measured"), never a misleading 0.
    fn waits_measured(&self) -> bool {
        false
    }

    /// The locks this hot path names ([`OpCtx::lock`], [`OpCtx::acquired`]) for the lock
    /// table, and what it leaves unnamed; `None` (the default) when it names none, and
    /// the record's `locks` is then null rather than an empty table.
    fn locks(&self) -> Option<LockSet> {
        None
    }

    /// Time the hold of one acquisition in this many (every one for 1); by default the
    /// latency sampling rate, which already says what a clock read costs here.
    fn lock_sample_every(&self) -> u32 {
        self.latency_sample_every()
    }

    /// Figures that belong to this hot path (the `extra` object of a record), computed
    /// from the workers after the run; `window` is the measured duration.
    fn extra(
        &self,
        _workers: &[Self::Worker],
        _window: Duration,
    ) -> serde_json::Map<String, serde_json::Value> {
        serde_json::Map::new()
    }
}

/// One worker per thread, `0..threads`, as the runner and a benchmark's thread team make
/// them (outside any timed region).
pub fn workers<W: Workload>(workload: &W, threads: usize) -> Vec<W::Worker> {
    (0..threads).map(|i| workload.worker(i, threads)).collect()
}

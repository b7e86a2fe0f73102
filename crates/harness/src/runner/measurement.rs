//! The figures of a repetition: each worker's [`Tally`], and the [`Measurement`] that the
//! controller assembles from the tallies, the time accounts and the window it read.
//!
//! Not here: turning a measurement into a results record ([`crate::schema`]).

use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use super::window::Window;
use super::{panic_message, CellFailure};
use crate::account::{ThreadAccount, TimeAccount, TimeShare};
use crate::interference::Interference;
use crate::locks::{self, LockMeasurement, LockTally};
use crate::stats;
use crate::workload::{Outcome, Status, Workload};

/// The raw figures of one repetition, before they become a [`crate::CellRecord`].
#[derive(Debug, Clone)]
pub struct Measurement {
    /// Worker threads that ran.
    pub threads: usize,
    /// The measured window as the controller saw it.
    pub window: Duration,
    /// Operations that succeeded in the window, all threads.
    pub ops: u64,
    /// Retries in the window, all threads.
    pub retries: u64,
    /// Failed operations in the window, all threads (not in `ops`).
    pub errors: u64,
    /// Operations that gave up waiting in the window, all threads (not in `ops`).
    pub timeouts: u64,
    /// Steps that did no work of the hot path, all threads (not in `ops`).
    pub idle: u64,
    /// Whether the hot path measures its blocked time ([`Workload::waits_measured`]).
    pub waits_measured: bool,
    /// Time workers spent inside the hot path's waits, summed over threads, whole (what
    /// [`Measurement::wait_share`] and the off-CPU profile count); the time account's
    /// `blocked` keeps only the part the kernel did not count as on CPU or run queue.
    pub waited: Duration,
    /// Where the threads' time went during the window.
    pub time: TimeAccount,
    /// The cost of one clock read on this run's threads (nanoseconds, median of pairs
    /// measured before the window); every timed latency sample includes one.
    pub clock_read_ns: f64,
    /// Latency of the sampled operations, merged over threads (nanoseconds).
    pub latency: Histogram<u64>,
    /// Process CPU time (user + system) consumed during the window.
    pub cpu_time: Duration,
    /// What the rest of the machine did during the window ([`crate::interference`]);
    /// `None` where `/proc/stat` cannot be read.
    pub interference: Option<Interference>,
    /// `Ok` if the invariants held, else the reason they did not.
    pub verified: Result<(), String>,
    /// Hot-path-specific figures.
    pub extra: serde_json::Map<String, serde_json::Value>,
    /// Where the threads of a server process outside this one went during the window
    /// (a hot path whose variants are real servers reads their schedstat); `None` for
    /// every other hot path.
    pub server_time_share: Option<TimeShare>,
    /// The lock table's figures, when the hot path names its locks
    /// ([`Workload::locks`]).
    pub locks: Option<LockMeasurement>,
}

impl Measurement {
    /// Operations per second over the window.
    pub fn ops_per_sec(&self) -> f64 {
        stats::rate(self.ops, self.window)
    }

    /// Share of worker time spent inside the hot path's waits (locks, permits,
    /// connections, busy and backoff sleeps), whole: a thread that waits for a lock by
    /// yielding is runnable, and the kernel counts that time as run queue, but it is still
    /// time the lock cost. So this can exceed the time account's `blocked`, which is the
    /// part the kernel did not count as on CPU or run queue. `None` when the hot path does
    /// not measure its waits.
    pub fn wait_share(&self) -> Option<f64> {
        self.waits_measured.then(|| {
            stats::share(
                Duration::from_nanos(self.time.waited_ns),
                Duration::from_nanos(self.time.total_ns),
            )
        })
    }

    /// Shares of threads x window on CPU, waiting for a CPU, blocked on the hot path and
    /// the rest; `blocked` is at most [`Measurement::wait_share`].
    pub fn time_share(&self) -> TimeShare {
        self.time.shares(self.waits_measured)
    }

    /// Process CPU time over wall time x cores, clamped to 0..1.
    pub fn cpu_util(&self, cores: usize) -> f64 {
        stats::share(self.cpu_time, self.window * cores.max(1) as u32)
    }
}

/// One worker's counts over the window, kept on its own thread: never a shared counter in
/// the hot loop, which would itself be a contention point.
pub(super) struct Tally {
    ops: u64,
    retries: u64,
    errors: u64,
    timeouts: u64,
    idle: u64,
    latency: Histogram<u64>,
    /// Per-lock counts, filled in at the close from the context and the thread's holds.
    pub(super) locks: Vec<LockTally>,
}

impl Tally {
    /// Nothing counted yet.
    pub(super) fn new() -> Tally {
        Tally {
            ops: 0,
            retries: 0,
            errors: 0,
            timeouts: 0,
            idle: 0,
            latency: stats::new_histogram(),
            locks: Vec::new(),
        }
    }

    /// Counts one operation's outcome, and its latency from `started` when it was timed.
    // Inlined so that profiles keep the worker loop's frame as the operation's caller.
    #[inline(always)]
    pub(super) fn record(&mut self, outcome: &Outcome, started: Option<Instant>) {
        if let Some(started) = started {
            self.latency
                .saturating_record(started.elapsed().as_nanos() as u64);
        }
        self.retries += u64::from(outcome.retries);
        match outcome.status {
            Status::Ok => self.ops += 1,
            Status::Failed => self.errors += 1,
            Status::TimedOut => self.timeouts += 1,
            Status::Idle => self.idle += 1,
        }
    }

    /// Adds another worker's counts to these.
    fn add(&mut self, other: &Tally) {
        self.ops += other.ops;
        self.retries += other.retries;
        self.errors += other.errors;
        self.timeouts += other.timeouts;
        self.idle += other.idle;
        stats::merge_into(&mut self.latency, &other.latency);
        locks::add_tallies(&mut self.locks, &other.locks);
    }
}

/// What a worker thread hands back when it joins: the worker, its tally and its time
/// account, or the payload of its panic.
pub(super) type Joined<K> = std::thread::Result<(K, Tally, ThreadAccount)>;

/// The repetition's measurement from the joined workers and the controller's readings;
/// a [`CellFailure`] naming the first worker that panicked.
pub(super) fn assemble<W: Workload>(
    workload: &W,
    joined: Vec<Joined<W::Worker>>,
    window: Window,
    clock_read_ns: f64,
) -> Result<Measurement, CellFailure> {
    let threads = joined.len();
    let mut workers = Vec::with_capacity(threads);
    let mut total = Tally::new();
    let mut accounts = Vec::with_capacity(threads);
    for (index, result) in joined.into_iter().enumerate() {
        match result {
            Ok((worker, tally, account)) => {
                total.add(&tally);
                accounts.push(account);
                workers.push(worker);
            }
            Err(payload) => {
                return Err(CellFailure::new(format!(
                    "worker thread {index} panicked: {}",
                    panic_message(payload.as_ref())
                )))
            }
        }
    }
    let time = TimeAccount::sum(&accounts);

    let verified = workload.verify(&workers);
    let extra = workload.extra(&workers, window.length);
    Ok(Measurement {
        threads,
        window: window.length,
        ops: total.ops,
        retries: total.retries,
        errors: total.errors,
        timeouts: total.timeouts,
        idle: total.idle,
        waits_measured: workload.waits_measured(),
        waited: Duration::from_nanos(time.waited_ns),
        time,
        clock_read_ns,
        latency: total.latency,
        cpu_time: window.cpu_time,
        interference: window.interference,
        verified,
        extra,
        server_time_share: None,
        locks: workload.locks().map(|set| LockMeasurement {
            set,
            tallies: total.locks,
        }),
    })
}

//! Runs one workload with a fixed number of threads for a fixed window and measures it.
//!
//! The timeline of one repetition: workers are made on the calling thread (outside any
//! clock), `threads` scoped threads start and meet at a barrier, run a warm-up that is not
//! counted, then count a measured window, then stop. A controller (the calling thread)
//! moves a shared phase flag through warm-up, measure and stop; workers only read it, so
//! the flag costs a load of a cache line that nobody writes during the window.
//!
//! The controller reads the window's clock and the process CPU time *before* it flips the
//! flag to measure, and again *after* it flips it to stop, so every counted operation
//! starts inside the window it is divided by. Each worker reads its own CPU time and run-queue
//! delay when it notices a flip (see [`crate::account`]). Latency is timed for a random
//! subset of operations ([`crate::sampler`]), from the instant an operation was due where
//! the worker is paced ([`Worker::next_due`]).
//!
//! This module does not pin threads, repeat runs or write files: `lab` does.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Barrier, OnceLock};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use crate::account::{ThreadAccount, ThreadClock, TimeAccount, TimeShare};
use crate::interference::{self, Interference};
use crate::locks::{self, LockCounters, LockMeasurement, LockTally};
use crate::sampler::{self, LatencySampler};
use crate::stats;
use crate::workload::{OpCtx, Status, Worker, Workload};

const WARMUP: u8 = 0;
const MEASURE: u8 = 1;
const STOP: u8 = 2;

/// How one repetition runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunSettings {
    /// Worker threads.
    pub threads: usize,
    /// Time run before counting starts.
    pub warmup: Duration,
    /// The measured window.
    pub duration: Duration,
}

/// Why a repetition produced no figures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CellFailure {
    /// One line saying what went wrong, e.g. `worker thread 3 panicked: index out of bounds`.
    pub reason: String,
}

impl CellFailure {
    /// A failure with the given reason.
    pub fn new(reason: impl Into<String>) -> Self {
        CellFailure {
            reason: reason.into(),
        }
    }
}

impl std::fmt::Display for CellFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.reason)
    }
}

impl std::error::Error for CellFailure {}

/// The raw figures of one repetition, before they become a [`crate::RunRecord`].
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

struct Tally {
    ops: u64,
    retries: u64,
    errors: u64,
    timeouts: u64,
    idle: u64,
    latency: Histogram<u64>,
    locks: Vec<LockTally>,
}

impl Tally {
    fn new() -> Tally {
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
}

/// Runs `workload` once with `settings` and measures it.
///
/// A worker that panics ends its own thread; the others run to the end of the window and
/// the repetition is reported as a [`CellFailure`] naming the thread and the panic message.
/// The same holds for a panic while making workers or verifying.
pub fn run<W: Workload>(workload: &W, settings: RunSettings) -> Result<Measurement, CellFailure> {
    if settings.threads == 0 {
        return Err(CellFailure::new("threads must be at least 1"));
    }
    catch_unwind(AssertUnwindSafe(|| run_inner(workload, settings))).unwrap_or_else(|payload| {
        Err(CellFailure::new(format!(
            "panicked: {}",
            panic_message(payload.as_ref())
        )))
    })
}

fn run_inner<W: Workload>(workload: &W, settings: RunSettings) -> Result<Measurement, CellFailure> {
    let threads = settings.threads;
    let sample_every = workload.latency_sample_every().max(1);
    let lock_every = workload.lock_sample_every().max(1);
    let workers = crate::workload::workers(workload, threads);
    let phase = AtomicU8::new(WARMUP);
    // What a worker's `OpCtx` may know of the window: its planned end, and a flag of its
    // own for the close (not `phase`, which lives on this stack; a context owns a handle).
    let window_ends = OnceLock::new();
    let closed = Arc::new(AtomicBool::new(false));
    let barrier = Barrier::new(threads + 1);
    // Measured on the calling thread, which runs under the cell's affinity like the workers.
    let clock_read_ns = sampler::clock_read_ns();

    // The machine's speed with the cell idle, before its threads start and after they end.
    let canary_before = crate::canary::measure();
    let (joined, window, cpu_time, interference) = std::thread::scope(|scope| {
        let handles: Vec<_> = workers
            .into_iter()
            .enumerate()
            .map(|(index, worker)| {
                let phase = &phase;
                let barrier = &barrier;
                let window_ends = &window_ends;
                let closed = &closed;
                std::thread::Builder::new()
                    .name(format!("worker-{index}"))
                    .spawn_scoped(scope, move || {
                        let sampler = LatencySampler::new(sample_every, index as u64);
                        let samplers = (sampler, lock_every, index as u64);
                        worker_loop(worker, phase, (window_ends, closed), barrier, samplers)
                    })
                    .expect("spawning a worker thread")
            })
            .collect();

        barrier.wait();
        if !settings.warmup.is_zero() {
            std::thread::sleep(settings.warmup);
        }
        // A profiler gets ready before the window opens, so that it samples all of it.
        crate::probe::window_opened();
        // The machine's counters just outside the window's clock, so that they cover it.
        let machine = interference::Window::open();
        // Clock and CPU time first, then the flag: nothing counted precedes the window.
        let cpu_start = process_cpu_time();
        let start = Instant::now();
        let _ = window_ends.set(start + settings.duration);
        phase.store(MEASURE, Ordering::Release);
        std::thread::sleep(settings.duration);
        // And the flag first at the close: every counted operation starts inside the window.
        phase.store(STOP, Ordering::Release);
        closed.store(true, Ordering::Release);
        let end = Instant::now();
        let cpu_time = process_cpu_time().saturating_sub(cpu_start);
        let interference = machine.close();
        // After the figures are read: a profiler may take a while to stop.
        crate::probe::window_closed();
        let joined: Vec<_> = handles.into_iter().map(|h| h.join()).collect();
        (joined, end - start, cpu_time, interference)
    });
    let canary = crate::canary::Readings {
        before: canary_before,
        after: crate::canary::measure(),
    };
    let interference = interference.map(|i| Interference {
        canary_ms: canary.mean_ms(),
        canary_spread: canary.spread(),
        ..i
    });

    let mut workers = Vec::with_capacity(threads);
    let mut total = Tally::new();
    let mut accounts = Vec::with_capacity(threads);
    for (index, result) in joined.into_iter().enumerate() {
        match result {
            Ok((worker, tally, account)) => {
                total.ops += tally.ops;
                total.retries += tally.retries;
                total.errors += tally.errors;
                total.timeouts += tally.timeouts;
                total.idle += tally.idle;
                stats::merge_into(&mut total.latency, &tally.latency);
                locks::add_tallies(&mut total.locks, &tally.locks);
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
    let extra = workload.extra(&workers, window);
    Ok(Measurement {
        threads,
        window,
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
        cpu_time,
        interference,
        verified,
        extra,
        server_time_share: None,
        locks: workload.locks().map(|set| LockMeasurement {
            set,
            tallies: total.locks,
        }),
    })
}

#[inline(never)] // Profiles root worker stacks at this frame (`lab`'s profile::stacks).
fn worker_loop<K: Worker>(
    mut worker: K,
    phase: &AtomicU8,
    (window_ends, closed): (&OnceLock<Instant>, &Arc<AtomicBool>),
    barrier: &Barrier,
    (mut sampler, lock_every, seed): (LatencySampler, u32, u64),
) -> (K, Tally, ThreadAccount) {
    let mut tally = Tally::new();
    let mut ctx = OpCtx {
        closed: Some(Arc::clone(closed)),
        ..OpCtx::default()
    };
    let mut seen = WARMUP;
    let clock = ThreadClock::open();
    let mut opened = None;
    let mut precise_sleep = false;
    barrier.wait();
    let account = loop {
        let now = phase.load(Ordering::Acquire);
        if now != seen {
            let reading = clock.read();
            if now == STOP {
                let Some(opened) = opened else {
                    // This thread never saw the window open: nothing it did was measured.
                    tally = Tally::new();
                    crate::probe::thread_reset();
                    locks::thread_take();
                    worker.window_opened();
                    break ThreadAccount::default();
                };
                // The lock table: the context's counts and the holds timed on this thread.
                tally.locks = std::mem::take(&mut ctx.locks.tallies);
                locks::add_tallies(&mut tally.locks, &locks::thread_take());
                // Every counted operation started after `opened` and ended before
                // `reading`, so every wait it recorded lies inside this span.
                break ThreadAccount::between(&opened, &reading, ctx.waited());
            }
            // The window opens: forget the warm-up.
            tally = Tally::new();
            ctx = OpCtx {
                window_ends_at: window_ends.get().copied(),
                closed: Some(Arc::clone(closed)),
                locks: LockCounters::sampled(lock_every, seed),
                ..OpCtx::default()
            };
            crate::probe::thread_reset();
            locks::thread_reset(lock_every, seed);
            worker.window_opened();
            opened = Some(reading);
            seen = now;
        }
        let sampled = sampler.time_next();
        let started = match worker.next_due() {
            Some(due) => {
                let now = Instant::now();
                if due > now {
                    if !precise_sleep {
                        precise_sleep = true;
                        set_timer_slack_ns(1);
                    }
                    std::thread::sleep(due - now);
                }
                sampled.then_some(due)
            }
            None => sampled.then(Instant::now),
        };
        let outcome = worker.op(&mut ctx);
        if let Some(started) = started {
            tally
                .latency
                .saturating_record(started.elapsed().as_nanos() as u64);
        }
        tally.retries += u64::from(outcome.retries);
        match outcome.status {
            Status::Ok => tally.ops += 1,
            Status::Failed => tally.errors += 1,
            Status::TimedOut => tally.timeouts += 1,
            Status::Idle => tally.idle += 1,
        }
    };
    worker.finish();
    (worker, tally, account)
}

/// Sets the calling thread's timer slack: a paced worker's sleep otherwise overshoots its
/// due instant by the default 50 µs, which the due-time latency would then include.
fn set_timer_slack_ns(ns: u64) {
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

/// The text of a panic payload (`&str` or `String`), or a placeholder.
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Outcome;
    use std::sync::atomic::AtomicU64;

    /// Counts its operations in a shared total so the test can compare with the tallies.
    struct Counting {
        total: AtomicU64,
        fail_verify: bool,
        panic_in_thread: Option<usize>,
    }

    struct CountingWorker<'a> {
        index: usize,
        done: u64,
        total: &'a AtomicU64,
        panic_after: Option<u64>,
    }

    impl Worker for CountingWorker<'_> {
        fn op(&mut self, ctx: &mut OpCtx) -> Outcome {
            self.done += 1;
            self.total.fetch_add(1, Ordering::Relaxed);
            if self.panic_after == Some(self.done) {
                panic!("worker {} gave up", self.index);
            }
            ctx.record_wait(Duration::from_nanos(1));
            if self.done % 10 == 0 {
                Outcome::failed(2)
            } else {
                Outcome::OK
            }
        }
    }

    impl<'a> Workload for &'a Counting {
        type Worker = CountingWorker<'a>;
        fn worker(&self, index: usize, _threads: usize) -> Self::Worker {
            CountingWorker {
                index,
                done: 0,
                total: &self.total,
                panic_after: (self.panic_in_thread == Some(index)).then_some(100),
            }
        }
        fn verify(&self, workers: &[Self::Worker]) -> Result<(), String> {
            let done: u64 = workers.iter().map(|w| w.done).sum();
            if self.fail_verify {
                return Err("deliberately failed".into());
            }
            if done != self.total.load(Ordering::Relaxed) {
                return Err(format!("tallies {done} != total"));
            }
            Ok(())
        }
    }

    fn settings(threads: usize) -> RunSettings {
        RunSettings {
            threads,
            warmup: Duration::from_millis(5),
            duration: Duration::from_millis(30),
        }
    }

    fn counting(fail_verify: bool, panic_in_thread: Option<usize>) -> Counting {
        Counting {
            total: AtomicU64::new(0),
            fail_verify,
            panic_in_thread,
        }
    }

    #[test]
    fn counts_only_the_window_and_every_thread_works() {
        let w = counting(false, None);
        let m = run(&&w, settings(3)).unwrap();
        assert_eq!(m.threads, 3);
        assert!(m.ops > 0);
        // The warm-up ran too, so the whole-run total exceeds the measured count.
        assert!(m.ops < w.total.load(Ordering::Relaxed));
        assert!(m.verified.is_ok());
        // Every tenth operation of each thread fails after two retries.
        assert!(m.errors > 0 && m.retries == 2 * m.errors);
        // Failed operations are timed but are not operations done: nine in ten succeed.
        assert_eq!(m.latency.len(), m.ops + m.errors);
        let expected = 9 * m.errors;
        assert!(
            m.ops + 30 >= expected && m.ops <= expected + 30,
            "{} ops for {} errors",
            m.ops,
            m.errors
        );
        assert!(m.window >= Duration::from_millis(30));
    }

    #[test]
    fn failed_invariant_is_reported_not_raised() {
        let w = counting(true, None);
        let m = run(&&w, settings(2)).unwrap();
        assert_eq!(m.verified, Err("deliberately failed".to_owned()));
    }

    #[test]
    fn panicking_worker_becomes_a_failure() {
        let w = counting(false, Some(1));
        let err = run(&&w, settings(2)).unwrap_err();
        assert!(err.reason.contains("worker thread 1 panicked"), "{err}");
        assert!(err.reason.contains("worker 1 gave up"), "{err}");
    }

    /// A hot path with a scripted operation, for the accounting tests.
    struct Scripted<F: Fn(u64, &mut OpCtx) -> Outcome + Sync> {
        op: F,
        waits_measured: bool,
        interval: Option<Duration>,
    }

    struct ScriptedWorker<'a, F: Fn(u64, &mut OpCtx) -> Outcome + Sync> {
        op: &'a F,
        done: u64,
        due: Option<(Instant, Duration)>,
    }

    impl<F: Fn(u64, &mut OpCtx) -> Outcome + Sync> Worker for ScriptedWorker<'_, F> {
        fn op(&mut self, ctx: &mut OpCtx) -> Outcome {
            self.done += 1;
            (self.op)(self.done, ctx)
        }
        fn next_due(&mut self) -> Option<Instant> {
            let (due, interval) = self.due.as_mut()?;
            let this = *due;
            *due += *interval;
            Some(this)
        }
    }

    impl<'a, F: Fn(u64, &mut OpCtx) -> Outcome + Sync> Workload for &'a Scripted<F> {
        type Worker = ScriptedWorker<'a, F>;
        fn worker(&self, _index: usize, _threads: usize) -> Self::Worker {
            ScriptedWorker {
                op: &self.op,
                done: 0,
                due: self.interval.map(|i| (Instant::now(), i)),
            }
        }
        fn verify(&self, _workers: &[Self::Worker]) -> Result<(), String> {
            Ok(())
        }
        fn waits_measured(&self) -> bool {
            self.waits_measured
        }
    }

    fn scripted<F: Fn(u64, &mut OpCtx) -> Outcome + Sync>(op: F) -> Scripted<F> {
        Scripted {
            op,
            waits_measured: true,
            interval: None,
        }
    }

    fn spin(iterations: u64) {
        let mut x = 0u64;
        for i in 0..iterations {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
        }
    }

    #[test]
    fn a_workload_that_fails_every_other_operation_counts_half_the_ops() {
        let w = scripted(|n, _| {
            if n % 2 == 0 {
                Outcome::failed(0)
            } else {
                Outcome::OK
            }
        });
        let m = run(&&w, settings(2)).unwrap();
        assert!(m.ops > 0);
        // Each thread alternates, so successes and failures differ by at most one per thread.
        assert!(
            m.ops.abs_diff(m.errors) <= 2,
            "{} ops, {} errors",
            m.ops,
            m.errors
        );
    }

    #[test]
    fn a_hot_path_without_wait_measurement_reports_null() {
        let mut w = scripted(|_, _| Outcome::OK);
        w.waits_measured = false;
        let m = run(&&w, settings(2)).unwrap();
        assert_eq!(m.wait_share(), None);
        let share = m.time_share();
        assert_eq!(share.blocked, None);
        let record = crate::RunRecord::from_measurement(
            &crate::schema::CellKey {
                hot_path: "x".into(),
                variant: "y".into(),
                params: Default::default(),
                threads: 2,
                cores: 1,
            },
            "0",
            &m,
        );
        let json = serde_json::to_value(&record).unwrap();
        assert!(json["wait_share"].is_null(), "{json}");
        assert!(json["time_share"]["blocked"].is_null(), "{json}");
        assert!(
            json["time_share"]["on_cpu"].as_f64().unwrap() > 0.0,
            "{json}"
        );
    }

    #[test]
    fn four_threads_on_one_core_wait_for_it_three_quarters_of_the_time() {
        // Pins this test's thread; the workers it starts inherit the mask.
        crate::affinity::limit_to_cores(1).unwrap();
        let w = scripted(|_, _| {
            spin(20_000);
            Outcome::OK
        });
        let m = run(
            &&w,
            RunSettings {
                threads: 4,
                warmup: Duration::from_millis(50),
                duration: Duration::from_millis(400),
            },
        )
        .unwrap();
        let s = m.time_share();
        let rq = s.run_queue.expect("schedstat is available on this kernel");
        // Ideally 3/4 (three of four threads wait while one runs); other processes on
        // the same core push it up: generous bounds.
        assert!((0.55..=0.99).contains(&rq), "{s:?}");
        assert!(s.on_cpu > 0.0 && s.on_cpu <= 0.4, "{s:?}");
        let sum = s.on_cpu + rq + s.blocked.unwrap() + s.other;
        assert!((0.9..=1.1).contains(&sum), "{s:?}");
    }

    #[test]
    fn a_thread_blocked_throughout_accounts_the_whole_window_as_blocked() {
        // Every operation blocks 30 ms, so operations straddle both edges of a 100 ms
        // window; the thread's account spans the operations it counted, all blocked.
        let w = scripted(|_, ctx| {
            std::thread::sleep(Duration::from_millis(30));
            ctx.record_wait(Duration::from_millis(30));
            Outcome::OK
        });
        let m = run(
            &&w,
            RunSettings {
                threads: 1,
                warmup: Duration::from_millis(15),
                duration: Duration::from_millis(100),
            },
        )
        .unwrap();
        let blocked = m.wait_share().unwrap();
        assert!((0.8..=1.0).contains(&blocked), "{:?}", m.time_share());
        // Asleep in its wait, the thread is neither on a CPU nor on a run queue, so most of
        // the wait is blocked in the exclusive account too (less the wake-up delays a
        // loaded machine adds to the run queue).
        let exclusive = m.time_share().blocked.unwrap();
        assert!(
            exclusive <= blocked + 1e-9 && exclusive > 0.5,
            "{blocked} vs {exclusive}"
        );
    }

    #[test]
    fn fixed_rate_latency_counts_from_when_an_operation_was_due() {
        // Due every millisecond; operation 20 stalls 60 ms. The operations queued behind
        // the stall were due long before they started, and their latency says so.
        let mut w = scripted(|n, _| {
            if n == 20 {
                std::thread::sleep(Duration::from_millis(60));
            }
            Outcome::OK
        });
        w.interval = Some(Duration::from_millis(1));
        let m = run(
            &&w,
            RunSettings {
                threads: 1,
                warmup: Duration::ZERO,
                duration: Duration::from_millis(150),
            },
        )
        .unwrap();
        // The stall itself plus tens of late operations behind it, each over 10 ms late.
        let late = m.latency.count_between(10_000_000, u64::MAX);
        assert!(late >= 10, "{late} late samples of {}", m.latency.len());
    }

    #[test]
    fn the_clock_read_cost_is_measured_in_every_run() {
        let w = scripted(|_, _| Outcome::OK);
        let m = run(&&w, settings(1)).unwrap();
        assert!(m.clock_read_ns.is_finite() && m.clock_read_ns >= 0.0);
    }

    #[test]
    fn zero_threads_is_refused() {
        let w = counting(false, None);
        assert!(run(&&w, settings(0)).is_err());
    }
}

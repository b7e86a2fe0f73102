//! The runner's tests: counts agree with the workers' own, failures name their thread,
//! the window excludes the warm-up.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::*;
use crate::workload::Outcome;

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
    let record = crate::Repetition::from_measurement(
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

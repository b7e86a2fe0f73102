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
    /// Every operation falls due this long before the runner asks when it is due.
    due_ago: Option<Duration>,
}

struct ScriptedWorker<'a, F: Fn(u64, &mut OpCtx) -> Outcome + Sync> {
    op: &'a F,
    done: u64,
    due_ago: Option<Duration>,
}

impl<F: Fn(u64, &mut OpCtx) -> Outcome + Sync> Worker for ScriptedWorker<'_, F> {
    fn op(&mut self, ctx: &mut OpCtx) -> Outcome {
        self.done += 1;
        (self.op)(self.done, ctx)
    }
    fn next_due(&mut self) -> Option<Instant> {
        Some(Instant::now() - self.due_ago?)
    }
}

impl<'a, F: Fn(u64, &mut OpCtx) -> Outcome + Sync> Workload for &'a Scripted<F> {
    type Worker = ScriptedWorker<'a, F>;
    fn worker(&self, _index: usize, _threads: usize) -> Self::Worker {
        ScriptedWorker {
            op: &self.op,
            done: 0,
            due_ago: self.due_ago,
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
        due_ago: None,
    }
}

/// A run whose window counted an operation. On a loaded machine a worker may not run at
/// all while a short window is open, and then it counted nothing, which says nothing
/// about the accounting: such a run is taken again rather than made longer, so that no
/// check waits on the machine's speed.
fn counted<W: Workload>(workload: &W, settings: RunSettings) -> Measurement {
    (0..50)
        .map(|_| run(workload, settings).unwrap())
        .find(|m| m.ops > 0)
        .expect("a window with an operation in 50 tries")
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
    let m = counted(&&w, settings(2));
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
fn four_threads_on_one_core_account_their_wait_for_it_as_run_queue() {
    // Pins this test's thread; the workers it starts inherit the mask.
    crate::affinity::limit_to_cores(1).unwrap();
    let w = scripted(|_, _| {
        spin(20_000);
        Outcome::OK
    });
    let m = counted(
        &&w,
        RunSettings {
            threads: 4,
            warmup: Duration::from_millis(20),
            duration: Duration::from_millis(100),
        },
    );
    let s = m.time_share();
    // Three of four spinning threads always wait for the one core: the account has a
    // run queue beside the CPU time. How much of each is the scheduler's (a loaded
    // machine moves both) and not asserted; the arithmetic of the shares is
    // `account`'s tests, on readings whose answers are known.
    let rq = s.run_queue.expect("schedstat is available on this kernel");
    assert!(rq > 0.0 && s.on_cpu > 0.0, "{s:?}");
    // The kernel's figures and the measured waits never account for more than the
    // window, and the rest is what they leave.
    let counted = s.on_cpu + rq + s.blocked.unwrap();
    assert!(counted <= 1.0 + 1e-9, "{s:?}");
    assert!((counted + s.other - 1.0).abs() < 1e-9, "{s:?}");
}

#[test]
fn a_thread_blocked_throughout_accounts_its_waits_as_blocked() {
    // Every operation blocks 30 ms and says so, so operations straddle both edges of a
    // 100 ms window; the thread's account spans the operations it counted.
    let w = scripted(|_, ctx| {
        std::thread::sleep(Duration::from_millis(30));
        ctx.record_wait(Duration::from_millis(30));
        Outcome::OK
    });
    let m = counted(
        &&w,
        RunSettings {
            threads: 1,
            warmup: Duration::from_millis(15),
            duration: Duration::from_millis(100),
        },
    );
    // The waits are the hot path's, so they are shared out; the exclusive account gives
    // them what the kernel did not count as on a CPU or a run queue, never more. (How
    // close either comes to the whole window is the scheduler's: not asserted.)
    let waited = m.wait_share().unwrap();
    let s = m.time_share();
    let exclusive = s.blocked.unwrap();
    assert!(waited > 0.0 && waited <= 1.0, "{s:?}");
    assert!(
        exclusive > 0.0 && exclusive <= waited + 1e-9,
        "{waited} vs {s:?}"
    );
}

#[test]
fn fixed_rate_latency_counts_from_when_an_operation_was_due() {
    // Every operation was due 20 ms before it started (a backlog behind a stall): its
    // latency counts from then, so none is shorter, however fast it ran. Counted from
    // its start, each would be a few nanoseconds.
    let mut w = scripted(|_, _| Outcome::OK);
    w.due_ago = Some(Duration::from_millis(20));
    let settings = RunSettings {
        threads: 1,
        warmup: Duration::ZERO,
        duration: Duration::from_millis(20),
    };
    // Retaken as `counted` does, until a window has a latency sample.
    let m = (0..50)
        .map(|_| run(&&w, settings).unwrap())
        .find(|m| !m.latency.is_empty())
        .expect("a window with a latency sample in 50 tries");
    let late = m.latency.count_between(20_000_000, u64::MAX);
    assert_eq!(late, m.latency.len(), "every sample at least 20 ms");
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

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

mod measurement;
mod settings;
mod sys;
mod window;

pub use measurement::Measurement;
pub use settings::{panic_message, CellFailure, RunSettings};
pub use sys::process_cpu_time;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use measurement::{Joined, Tally};
use window::{Shared, MEASURE, PAUSED, STOP, WARMUP, WOKEN};

use crate::account::{ThreadAccount, ThreadClock};
use crate::interference::Interference;
use crate::locks::{self, LockCounters};
use crate::sampler::{self, LatencySampler};
use crate::workload::{OpCtx, Worker, Workload};

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
    // A lock delay asked for by name (`crate::locks::delay`) finds its lock's id here.
    crate::locks::delay::resolve(workload.locks().as_ref()).map_err(CellFailure::new)?;
    let sample_every = workload.latency_sample_every().max(1);
    let lock_every = workload.lock_sample_every().max(1);
    let workers = crate::workload::workers(workload, threads);
    // A side of a block of interleaved pairs (`crate::slices`) runs its conductor's turns.
    let resident = crate::slices::take_side();
    let shared = Shared::new(threads, resident.is_some());
    // Measured on the calling thread, which runs under the cell's affinity like the workers.
    let clock_read_ns = sampler::clock_read_ns();

    // The machine's speed with the cell idle, before its threads start and after they end.
    let canary_before = crate::canary::measure();
    let (joined, window) = std::thread::scope(|scope| {
        let handles: Vec<_> = workers
            .into_iter()
            .enumerate()
            .map(|(index, worker)| {
                let shared = &shared;
                std::thread::Builder::new()
                    .name(format!("worker-{index}"))
                    .spawn_scoped(scope, move || {
                        let sampler = LatencySampler::new(sample_every, index as u64);
                        let samplers = (sampler, lock_every, index as u64);
                        worker_loop(worker, shared, samplers)
                    })
                    .expect("spawning a worker thread")
            })
            .collect();
        let window = match &resident {
            Some((conductor, side)) => window::conduct(&shared, threads, conductor, *side),
            None => window::control(&settings, &shared),
        };
        let joined: Vec<Joined<W::Worker>> = handles.into_iter().map(|h| h.join()).collect();
        // After the figures are read (a profiler may take a while to stop) and after the
        // workers have ended: an operation in flight at the close is counted (it ends
        // before its thread's last reading), so its wait must reach the probe too. A
        // thread starved on an unfair mutex can wait hundreds of milliseconds past the
        // close; closing the probe with the window lost those waits (a profile's
        // off-CPU total read 0.40 s against 0.96 s measured).
        if resident.is_none() {
            crate::probe::window_closed();
        }
        (joined, window)
    });
    let canary = crate::canary::Readings {
        before: canary_before,
        after: crate::canary::measure(),
    };
    let window = window::Window {
        interference: window.interference.map(|i| Interference {
            canary_ms: canary.mean_ms(),
            canary_spread: canary.spread(),
            ..i
        }),
        ..window
    };
    measurement::assemble(workload, joined, window, clock_read_ns)
}

#[inline(never)] // Profiles root worker stacks at this frame (`lab`'s profile::stacks).
fn worker_loop<K: Worker>(
    mut worker: K,
    shared: &Shared,
    (mut sampler, lock_every, seed): (LatencySampler, u32, u64),
) -> (K, Tally, ThreadAccount) {
    let mut tally = Tally::new();
    let mut ctx = OpCtx {
        closed: Some(Arc::clone(&shared.closed)),
        ..OpCtx::default()
    };
    let mut seen = WARMUP;
    let clock = ThreadClock::open();
    let mut opened = None;
    let mut precise_sleep = false;
    // A resident side's running count of completed operations (`crate::slices`).
    let done = shared.done.get(seed as usize).map(|d| &d.0);
    let mut completed = 0u64;
    let _gone = Gone(shared);
    shared.barrier.wait();
    let account = loop {
        let now = shared.phase.load(Ordering::Acquire);
        if now != seen {
            if now == PAUSED {
                shared.park_worker();
                // Whatever the phase is now, it is news: it may already be PAUSED again
                // (a turn that ended before this thread woke), which must park it again
                // rather than read as no change.
                seen = WOKEN;
                continue;
            }
            if now == WARMUP || (now == MEASURE && opened.is_some()) {
                // A resident side's next turn: the warm-up, or its window going on.
                seen = now;
                continue;
            }
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
                window_ends_at: shared.window_ends.get().copied(),
                closed: Some(Arc::clone(&shared.closed)),
                locks: LockCounters::sampled(lock_every, seed),
                ..OpCtx::default()
            };
            crate::probe::thread_reset();
            locks::thread_reset(lock_every, seed);
            worker.window_opened();
            opened = Some(reading);
            seen = now;
        }
        let started = start_of(&mut worker, sampler.time_next(), &mut precise_sleep);
        let outcome = worker.op(&mut ctx);
        tally.record(&outcome, started);
        if let Some(done) = done {
            completed += u64::from(outcome.is_ok());
            done.store(completed, Ordering::Relaxed);
        }
    };
    worker.finish();
    (worker, tally, account)
}

/// Tells the controller, when a worker's thread ends (a panic included), to stop waiting
/// for it to park.
struct Gone<'a>(&'a Shared);

impl Drop for Gone<'_> {
    fn drop(&mut self) {
        self.0.worker_gone();
    }
}

/// Waits until a paced worker's next operation is due, and the instant its latency counts
/// from when it is `sampled`: when it was due for a paced worker, now for any other.
// Inlined so that profiles keep the worker loop's frame as the caller of the sleep.
#[inline(always)]
fn start_of<K: Worker>(worker: &mut K, sampled: bool, precise_sleep: &mut bool) -> Option<Instant> {
    match worker.next_due() {
        Some(due) => {
            let now = Instant::now();
            if due > now {
                if !*precise_sleep {
                    *precise_sleep = true;
                    sys::set_timer_slack_ns(1);
                }
                std::thread::sleep(due - now);
            }
            sampled.then_some(due)
        }
        None => sampled.then(Instant::now),
    }
}

#[cfg(test)]
mod tests;

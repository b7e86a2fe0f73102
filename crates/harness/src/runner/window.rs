//! The controller's side of a repetition's window: the phase flag every worker reads, and
//! the calling thread moving it through warm-up, measure and stop while it reads the
//! window's clock, the process CPU time and the machine's counters around it.
//!
//! Not here: what a worker does when it sees the flag move ([`super::worker_loop`]).

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Barrier, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use super::sys::process_cpu_time;
use super::RunSettings;
use crate::interference::{self, Interference};
use crate::slices::{Conductor, Counts, Next};

/// Phase before the window: the workers run but nothing is counted.
pub(super) const WARMUP: u8 = 0;
/// Phase of the measured window.
pub(super) const MEASURE: u8 = 1;
/// Phase after the window: the workers stop.
pub(super) const STOP: u8 = 2;
/// Phase between a resident side's turns ([`crate::slices`]): the workers park.
pub(super) const PAUSED: u8 = 3;
/// Never a phase: what a worker just woken from [`PAUSED`] has seen, so that whatever
/// the phase is then counts as a change.
pub(super) const WOKEN: u8 = u8::MAX;

/// The team's parked workers.
#[derive(Default)]
pub(super) struct Parked {
    /// Workers parked now.
    pub parked: usize,
    /// Workers whose thread has ended (a panic, or the stop).
    pub gone: usize,
}

/// One worker's running count of completed operations, on a cache line of its own: the
/// worker writes it after every operation of a resident side, the controller reads it at
/// the ends of a counted span.
#[repr(align(128))]
#[derive(Default)]
pub(super) struct Done(pub AtomicU64);

/// What the controller and the workers share for one repetition.
pub(super) struct Shared {
    /// The phase flag, written by the controller alone.
    pub phase: AtomicU8,
    /// The window's planned end, set as it opens: what a worker's `OpCtx` may know of it.
    pub window_ends: OnceLock<Instant>,
    /// Set at the close; a flag of its own (not `phase`, which lives on the controller's
    /// stack) because a worker's context owns a handle to it.
    pub closed: Arc<AtomicBool>,
    /// Where the workers and the controller meet before the warm-up.
    pub barrier: Barrier,
    /// Where a resident side's workers park between turns; the controller is told of
    /// every change through `moved`.
    pub park: Mutex<Parked>,
    /// Signalled when a worker parks or leaves, and when the phase leaves [`PAUSED`].
    pub moved: Condvar,
    /// Each worker's completed operations, kept only for a resident side (empty else).
    pub done: Box<[Done]>,
}

impl Shared {
    /// The shared state for `threads` workers and the controller; a resident side's
    /// team starts parked.
    pub fn new(threads: usize, resident: bool) -> Shared {
        Shared {
            phase: AtomicU8::new(if resident { PAUSED } else { WARMUP }),
            window_ends: OnceLock::new(),
            closed: Arc::new(AtomicBool::new(false)),
            barrier: Barrier::new(threads + 1),
            park: Mutex::new(Parked::default()),
            moved: Condvar::new(),
            done: (0..if resident { threads } else { 0 })
                .map(|_| Done::default())
                .collect(),
        }
    }

    fn parked(&self) -> MutexGuard<'_, Parked> {
        self.park.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A worker's side of a pause: sleeps until the phase leaves [`PAUSED`].
    pub fn park_worker(&self) {
        let mut p = self.parked();
        p.parked += 1;
        self.moved.notify_all();
        while self.phase.load(Ordering::Acquire) == PAUSED {
            p = self.moved.wait(p).unwrap_or_else(|e| e.into_inner());
        }
        p.parked -= 1;
    }

    /// A worker's thread is ending (normally or by a panic): the controller stops
    /// waiting for it to park.
    pub fn worker_gone(&self) {
        self.parked().gone += 1;
        self.moved.notify_all();
    }

    /// Moves the team to `phase` and wakes its parked workers.
    fn release(&self, phase: u8) {
        let _p = self.parked();
        self.phase.store(phase, Ordering::Release);
        self.moved.notify_all();
    }

    /// Waits until each of `threads` workers is parked or gone.
    fn wait_parked(&self, threads: usize) {
        let mut p = self.parked();
        while p.parked + p.gone < threads {
            p = self.moved.wait(p).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// The team's completed operations so far, and when they were read.
    fn completed(&self) -> (u64, Instant) {
        let ops = self.done.iter().map(|d| d.0.load(Ordering::Relaxed)).sum();
        (ops, Instant::now())
    }
}

/// What the controller read of the window.
pub(super) struct Window {
    /// The window as the controller's clock saw it.
    pub length: Duration,
    /// Process CPU time inside it.
    pub cpu_time: Duration,
    /// What the rest of the machine did during it.
    pub interference: Option<Interference>,
}

/// Runs the window from the controller: releases the workers, waits out the warm-up,
/// opens the window, waits it out and closes it.
pub(super) fn control(settings: &RunSettings, shared: &Shared) -> Window {
    shared.barrier.wait();
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
    let _ = shared.window_ends.set(start + settings.duration);
    shared.phase.store(MEASURE, Ordering::Release);
    std::thread::sleep(settings.duration);
    // And the flag first at the close: every counted operation starts inside the window.
    shared.phase.store(STOP, Ordering::Release);
    shared.closed.store(true, Ordering::Release);
    let end = Instant::now();
    let cpu_time = process_cpu_time().saturating_sub(cpu_start);
    let interference = machine.close();
    // The probe's window closes once the workers have ended (`run`), not here.
    Window {
        length: end - start,
        cpu_time,
        interference,
    }
}

/// Runs a resident side's turns ([`crate::slices`]) from its controller: waits for the
/// team to park, joins the block, then for each turn the conductor hands it releases the
/// team, waits the turn out and parks it again. A warm-up reports its second half's
/// completed operations (the side's response time), a measured turn those of its counted
/// span after the re-warm. The window is the counted spans' lengths added up.
pub(super) fn conduct(
    shared: &Shared,
    threads: usize,
    conductor: &Conductor,
    side: usize,
) -> Window {
    shared.barrier.wait();
    shared.wait_parked(threads);
    conductor.join();
    let mut finished = None;
    let mut length = Duration::ZERO;
    let mut cpu_time = Duration::ZERO;
    // Completed operations over `span`, the team running.
    let count = |span: Duration| {
        let (before, start) = shared.completed();
        std::thread::sleep(span);
        let (after, end) = shared.completed();
        Counts {
            ops: after - before,
            window: end - start,
            threads,
        }
    };
    loop {
        match conductor.next(side, finished.take()) {
            Next::Warmup(d) => {
                shared.release(WARMUP);
                std::thread::sleep(d / 2);
                finished = Some(count(d / 2));
                shared.phase.store(PAUSED, Ordering::Release);
                shared.wait_parked(threads);
            }
            Next::Measure { rewarm, counted } => {
                shared.release(MEASURE);
                std::thread::sleep(rewarm);
                let cpu_start = process_cpu_time();
                let counts = count(counted);
                cpu_time += process_cpu_time().saturating_sub(cpu_start);
                shared.phase.store(PAUSED, Ordering::Release);
                shared.wait_parked(threads);
                length += counts.window;
                finished = Some(counts);
            }
            Next::Stop => break,
        }
    }
    shared.closed.store(true, Ordering::Release);
    shared.release(STOP);
    Window {
        length,
        cpu_time,
        // Turns this short are not what `interference` reads; the pairs cancel the host.
        interference: None,
    }
}

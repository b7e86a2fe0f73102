//! The controller's side of a repetition's window: the phase flag every worker reads, and
//! the calling thread moving it through warm-up, measure and stop while it reads the
//! window's clock, the process CPU time and the machine's counters around it.
//!
//! Not here: what a worker does when it sees the flag move ([`super::worker_loop`]).

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Barrier, OnceLock};
use std::time::{Duration, Instant};

use super::sys::process_cpu_time;
use super::RunSettings;
use crate::interference::{self, Interference};

/// Phase before the window: the workers run but nothing is counted.
pub(super) const WARMUP: u8 = 0;
/// Phase of the measured window.
pub(super) const MEASURE: u8 = 1;
/// Phase after the window: the workers stop.
pub(super) const STOP: u8 = 2;

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
}

impl Shared {
    /// The shared state for `threads` workers and the controller.
    pub fn new(threads: usize) -> Shared {
        Shared {
            phase: AtomicU8::new(WARMUP),
            window_ends: OnceLock::new(),
            closed: Arc::new(AtomicBool::new(false)),
            barrier: Barrier::new(threads + 1),
        }
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
    // After the figures are read: a profiler may take a while to stop.
    crate::probe::window_closed();
    Window {
        length: end - start,
        cpu_time,
        interference,
    }
}

//! Hooks through which a profiler (in `lab`) learns when the measured window opens and
//! closes and where workers block, without the harness depending on any profiler.
//!
//! The runner calls [`window_opened`] on the controller thread before the window opens
//! and [`window_closed`] once the window's workers have ended (so that an operation in
//! flight at the close, which the runner counts, reaches the probe too), and
//! [`OpCtx::record_wait`](crate::OpCtx::record_wait) calls [`waited`] for every measured
//! wait. With no probe installed (every counted repetition) each call is one relaxed load
//! of a flag. A hot path that runs a server process of its own names it through
//! [`set_companions`], so that a profiler samples that process with this one. This module
//! samples nothing and writes nothing.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

/// What a profiler does at the edges of the measured window and at each measured wait.
pub trait Probe: Send + Sync {
    /// The measured window opened (called on the controller thread).
    fn window_opened(&self);
    /// The measured window closed (called on the controller thread).
    fn window_closed(&self);
    /// The calling thread waited `waited` at a synchronization point inside the window.
    fn waited(&self, waited: Duration);
    /// The calling worker forgot its figures so far (it saw the window open late, or
    /// never): waits it passed on before this are not in its measured blocked time.
    fn thread_reset(&self) {}
}

static PROBE: RwLock<Option<Arc<dyn Probe>>> = RwLock::new(None);
/// Set only between `window_opened` and `window_closed` of an installed probe, so the
/// wait hook costs one load when nothing profiles.
static WINDOW_OPEN: AtomicBool = AtomicBool::new(false);

/// Installs `probe` for the runs that follow (`None` removes it). One probe per process.
pub fn install(probe: Option<Arc<dyn Probe>>) {
    WINDOW_OPEN.store(false, Ordering::SeqCst);
    *PROBE.write().unwrap_or_else(|e| e.into_inner()) = probe;
}

fn current() -> Option<Arc<dyn Probe>> {
    PROBE.read().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Tells the installed probe, if any, that the measured window opened.
pub fn window_opened() {
    if let Some(probe) = current() {
        probe.window_opened();
        WINDOW_OPEN.store(true, Ordering::SeqCst);
    }
}

/// Tells the installed probe, if any, that the measured window closed. Waits keep
/// reaching the probe until it has stopped, so that the operations in flight at the stop,
/// which the runner still counts, are seen by both.
pub fn window_closed() {
    if WINDOW_OPEN.load(Ordering::SeqCst) {
        if let Some(probe) = current() {
            probe.window_closed();
        }
        WINDOW_OPEN.store(false, Ordering::SeqCst);
    }
}

/// Passes a measured wait to the installed probe while the window is open.
#[inline]
pub fn waited(waited: Duration) {
    if WINDOW_OPEN.load(Ordering::Relaxed) {
        waited_slow(waited);
    }
}

#[cold]
#[inline(never)]
fn waited_slow(waited: Duration) {
    if let Some(probe) = current() {
        probe.waited(waited);
    }
}

/// Tells the installed probe that the calling worker reset its figures, so that the
/// probe's wait total keeps matching the runner's measured blocked time.
#[inline]
pub fn thread_reset() {
    if WINDOW_OPEN.load(Ordering::Relaxed) {
        if let Some(probe) = current() {
            probe.thread_reset();
        }
    }
}

static COMPANIONS: Mutex<Vec<u32>> = Mutex::new(Vec::new());

/// Names the processes besides this one that a profiler should sample with it (a server
/// the hot path started and is measuring); an empty list removes them. Set it before the
/// window opens, clear it after.
pub fn set_companions(pids: &[u32]) {
    *COMPANIONS.lock().unwrap_or_else(|e| e.into_inner()) = pids.to_vec();
}

/// The processes named by [`set_companions`].
pub fn companions() -> Vec<u32> {
    COMPANIONS.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

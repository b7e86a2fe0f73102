//! The lock table's own cost, measured in the process that measures a cell: an
//! uncontended mutex of this thread's own taken a few thousand times plainly (through
//! [`OpCtx::acquire`], what an uninstrumented hot path does), counted (through
//! [`OpCtx::lock`], no hold timed) and with every hold timed; the differences per
//! acquisition are the instrument's. The fastest of a few blocks counts, so a block that
//! another process preempted does not inflate the figure.
//!
//! It is not the cost a hot path pays in its critical section: of the figures here only a
//! timed hold's two clock reads run while the lock is held (see [`crate::locks`]). The
//! `noop` hot path (`lock=plain` against `lock=named`) measures the same difference in a
//! full run, where the sampling rate is the workload's.

use std::hint::black_box;
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::{thread_swap, LockCounters, LockId, MAX_LOCKS};
use crate::sampler::LatencySampler;
use crate::workload::OpCtx;

/// What the instrument adds per acquisition, nanoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct InstrumentCost {
    /// An acquisition counted, its hold not timed (most acquisitions): the counter and
    /// the sampler's countdown, both before the lock is tried.
    pub counted_ns: f64,
    /// An acquisition whose hold is timed: the above, two clock reads (inside the lock)
    /// and the hold's record (after the release).
    pub timed_ns: f64,
}

/// Acquisitions per block: about 0.3 ms per way in a release build.
const PER_BLOCK: u32 = 10_000;
/// Blocks per way; the fastest counts.
const BLOCKS: usize = 5;
/// A lock id no hot path's figures are kept under (the calibration's are discarded).
const CALIBRATION: LockId = LockId((MAX_LOCKS - 1) as u8);

/// The instrument's cost in this process, measured at the first call (a few
/// milliseconds) and remembered: a `lab run` measures one cell, on one CPU mask.
pub fn instrument_cost() -> InstrumentCost {
    static COST: OnceLock<InstrumentCost> = OnceLock::new();
    *COST.get_or_init(measure)
}

/// How an acquisition of the calibration mutex is taken.
#[derive(Clone, Copy)]
enum Way {
    Plain,
    Counted,
    Timed,
}

fn measure() -> InstrumentCost {
    // The timed holds are recorded on this thread: keep them out of its own figures.
    let saved = thread_swap(LockCounters::default());
    let mut best = [f64::INFINITY; 3];
    for _ in 0..BLOCKS {
        for (i, way) in [Way::Plain, Way::Counted, Way::Timed]
            .into_iter()
            .enumerate()
        {
            best[i] = best[i].min(block(way));
        }
    }
    thread_swap(saved);
    let [plain, counted, timed] = best;
    InstrumentCost {
        counted_ns: (counted - plain).max(0.0),
        timed_ns: (timed - plain).max(0.0),
    }
}

/// Nanoseconds per acquisition taken `way`.
fn block(way: Way) -> f64 {
    let own = Mutex::new(0u64);
    let take = || own.try_lock().ok();
    let wait = || own.lock().unwrap_or_else(|e| e.into_inner());
    let mut ctx = OpCtx {
        locks: LockCounters {
            tallies: Vec::new(),
            sampler: matches!(way, Way::Timed).then(|| LatencySampler::new(1, 0)),
            off: false,
        },
        ..OpCtx::default()
    };
    let start = Instant::now();
    for _ in 0..PER_BLOCK {
        match way {
            Way::Plain => *ctx.acquire(take, wait) += 1,
            Way::Counted | Way::Timed => **ctx.lock(CALIBRATION, take, wait) += 1,
        }
    }
    let ns = start.elapsed().as_nanos() as f64;
    black_box(&own);
    ns / f64::from(PER_BLOCK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cost_is_measured_once_and_leaves_the_thread_figures_alone() {
        super::super::thread_reset(1, 3);
        let _ = super::super::thread_acquired(LockId(1), None);
        let cost = instrument_cost();
        assert!(cost.counted_ns >= 0.0 && cost.timed_ns >= 0.0, "{cost:?}");
        assert!(
            cost.timed_ns.is_finite() && cost.counted_ns < 1e6,
            "{cost:?}"
        );
        assert_eq!(instrument_cost(), cost, "remembered");
        let t = super::super::thread_take();
        assert_eq!(t.len(), 2, "only the thread's own lock: {t:?}");
        assert_eq!((t[1].acquisitions, t[1].hold_samples), (1, 1));
    }
}

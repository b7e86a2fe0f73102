//! Arithmetic over measurements: rates, shares, medians with spread and confidence
//! intervals, efficiency, latency histograms, a rank test for comparing two samples, and
//! a small seeded random generator for resampling.
//!
//! Everything here is pure and deterministic so that it can be tested without timing. It
//! runs nothing in parallel: callers that bootstrap (`lab report`) bring their own threads.

mod histogram;
mod median;
mod random;
mod rank;

pub use histogram::{merge_into, new_histogram, LatencySummary};
pub use median::{
    median, median_ci, median_ci_coverage, median_spread, quantile_sorted, MedianCi,
    MEDIAN_CI_LEVEL, MIN_VALUES_FOR_CI, MIN_VALUES_FOR_OUTLIER_FREE_CI,
};
pub use random::SplitMix64;
pub use rank::{mann_whitney, RankTest};

use std::time::Duration;

/// Events per second over `window`; zero for an empty window.
pub fn rate(count: u64, window: Duration) -> f64 {
    per_second(count as f64, window)
}

/// An amount (busy seconds, datapoints) per second of `window`; zero for an empty window,
/// so that a figure never becomes infinite or NaN in a record.
pub fn per_second(amount: f64, window: Duration) -> f64 {
    let secs = window.as_secs_f64();
    if secs > 0.0 {
        amount / secs
    } else {
        0.0
    }
}

/// `part / whole`, clamped to 0..=1; zero when `whole` is zero.
pub fn share(part: Duration, whole: Duration) -> f64 {
    if whole.is_zero() {
        return 0.0;
    }
    (part.as_secs_f64() / whole.as_secs_f64()).clamp(0.0, 1.0)
}

/// Scaling efficiency: `ops / (min(threads, cores) x single_thread_ops)`.
///
/// 1.0 means every thread that can run at once adds a full single thread's throughput;
/// threads beyond the core count are not expected to add anything, hence the `min`.
/// `None` when there is no usable single-thread figure.
pub fn efficiency(ops: f64, threads: usize, cores: usize, single_thread_ops: f64) -> Option<f64> {
    let parallel = threads.min(cores);
    if parallel == 0 || single_thread_ops <= 0.0 || !single_thread_ops.is_finite() {
        return None;
    }
    Some(ops / (parallel as f64 * single_thread_ops))
}

#[cfg(test)]
mod tests;

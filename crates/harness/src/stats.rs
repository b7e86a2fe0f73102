//! Arithmetic over measurements: rates, shares, medians with spread, efficiency, and
//! latency histograms.
//!
//! Everything here is pure and deterministic so that it can be tested without timing.

use std::time::Duration;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Highest latency a histogram tracks exactly: one minute, in nanoseconds. Longer values
/// saturate rather than fail.
const HISTOGRAM_MAX_NS: u64 = 60_000_000_000;

/// An empty latency histogram in nanoseconds with two significant figures (1% precision).
///
/// Two, not three: a cell may run thousands of client threads, each with its own
/// histograms, and three figures cost about 220 KB per histogram against 30 KB.
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HISTOGRAM_MAX_NS, 2).expect("valid histogram bounds")
}

/// Adds every count of `from` into `into` (histograms from different threads).
pub fn merge_into(into: &mut Histogram<u64>, from: &Histogram<u64>) {
    // Both come from `new_histogram`, so their ranges agree and `add` cannot fail.
    into.add(from).expect("histograms with the same bounds");
}

/// Latency percentiles in nanoseconds, as the result schema's `latency_ns`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p999: u64,
    /// Largest value recorded.
    pub max: u64,
}

impl LatencySummary {
    /// Percentiles of `h`; all zero for an empty histogram.
    pub fn of(h: &Histogram<u64>) -> LatencySummary {
        if h.is_empty() {
            return LatencySummary::default();
        }
        LatencySummary {
            p50: h.value_at_quantile(0.50),
            p90: h.value_at_quantile(0.90),
            p99: h.value_at_quantile(0.99),
            p999: h.value_at_quantile(0.999),
            max: h.max(),
        }
    }

    /// Field-by-field median of several summaries (one per repetition).
    pub fn median_of(all: &[LatencySummary]) -> LatencySummary {
        let m = |f: fn(&LatencySummary) -> u64| {
            median(&all.iter().map(|s| f(s) as f64).collect::<Vec<_>>()).round() as u64
        };
        LatencySummary {
            p50: m(|s| s.p50),
            p90: m(|s| s.p90),
            p99: m(|s| s.p99),
            p999: m(|s| s.p999),
            max: all.iter().map(|s| s.max).max().unwrap_or(0),
        }
    }
}

/// Events per second over `window`; zero for an empty window.
pub fn rate(count: u64, window: Duration) -> f64 {
    let secs = window.as_secs_f64();
    if secs > 0.0 {
        count as f64 / secs
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

/// The median of `values` (mean of the two middle values for an even count); NaN-free
/// input expected; zero for an empty slice.
pub fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    if v.len() % 2 == 1 {
        v[mid]
    } else {
        (v[mid - 1] + v[mid]) / 2.0
    }
}

/// Median, minimum and maximum of `values`.
pub fn median_spread(values: &[f64]) -> (f64, f64, f64) {
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if values.is_empty() {
        return (0.0, 0.0, 0.0);
    }
    (median(values), min, max)
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
mod tests {
    use super::*;

    #[test]
    fn efficiency_counts_only_runnable_threads() {
        // 4 threads on 2 cores can at best double one thread's figure.
        assert_eq!(efficiency(200.0, 4, 2, 100.0), Some(1.0));
        assert_eq!(efficiency(150.0, 2, 4, 100.0), Some(0.75));
        assert_eq!(efficiency(100.0, 1, 1, 100.0), Some(1.0));
        assert_eq!(efficiency(100.0, 1, 1, 0.0), None);
        assert_eq!(efficiency(100.0, 0, 1, 10.0), None);
    }

    #[test]
    fn median_and_spread() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
        assert_eq!(median_spread(&[5.0, 1.0, 9.0]), (5.0, 1.0, 9.0));
    }

    #[test]
    fn rate_and_share() {
        assert_eq!(rate(500, Duration::from_millis(500)), 1000.0);
        assert_eq!(rate(5, Duration::ZERO), 0.0);
        assert_eq!(share(Duration::from_secs(1), Duration::from_secs(4)), 0.25);
        assert_eq!(share(Duration::from_secs(9), Duration::from_secs(4)), 1.0);
        assert_eq!(share(Duration::from_secs(1), Duration::ZERO), 0.0);
    }

    #[test]
    fn merged_histograms_give_percentiles_of_the_union() {
        let mut a = new_histogram();
        let mut b = new_histogram();
        for v in 1..=900u64 {
            a.record(v * 1000).unwrap();
        }
        for v in 901..=1000u64 {
            b.record(v * 1000).unwrap();
        }
        merge_into(&mut a, &b);
        assert_eq!(a.len(), 1000);
        let s = LatencySummary::of(&a);
        // Two significant figures: within 1% of the exact order statistic.
        let close = |got: u64, want: u64| (got as f64 - want as f64).abs() <= want as f64 * 0.01;
        assert!(close(s.p50, 500_000), "{s:?}");
        assert!(close(s.p90, 900_000), "{s:?}");
        assert!(close(s.p99, 990_000), "{s:?}");
        assert!(close(s.max, 1_000_000), "{s:?}");
        assert!(s.p50 <= s.p90 && s.p90 <= s.p99 && s.p99 <= s.p999 && s.p999 <= s.max);
    }

    #[test]
    fn latency_median_over_repetitions() {
        let one = |p: u64| LatencySummary {
            p50: p,
            p90: 2 * p,
            p99: 3 * p,
            p999: 4 * p,
            max: 5 * p,
        };
        let m = LatencySummary::median_of(&[one(10), one(30), one(20)]);
        assert_eq!(
            m,
            LatencySummary {
                max: 150,
                ..one(20)
            }
        );
        assert_eq!(
            LatencySummary::of(&new_histogram()),
            LatencySummary::default()
        );
    }
}

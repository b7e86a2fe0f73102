//! Latency histograms: how they are made and merged over threads, and the percentiles a
//! record keeps of them ([`LatencySummary`]).
//!
//! Not here: timing the operations ([`crate::sampler`]).

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::median::median;

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

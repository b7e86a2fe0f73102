//! Arithmetic over measurements: rates, shares, medians with spread and confidence
//! intervals, efficiency, latency histograms, a rank test for comparing two samples, and
//! a small seeded random generator for resampling.
//!
//! Everything here is pure and deterministic so that it can be tested without timing. It
//! runs nothing in parallel: callers that bootstrap (`lab report`) bring their own threads.

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

/// Confidence level that [`median_ci`] aims for.
pub const MEDIAN_CI_LEVEL: f64 = 0.95;

/// Fewest values for which an order-statistics interval reaches [`MEDIAN_CI_LEVEL`]:
/// with 5 or fewer, even min-max misses the median with probability 2 x 2^-n > 5%.
pub const MIN_VALUES_FOR_CI: usize = 6;

/// Fewest values for which [`median_ci`] leaves out the smallest and the largest value, so
/// that no single outlier is an end of the interval (see [`median_ci`]).
pub const MIN_VALUES_FOR_OUTLIER_FREE_CI: usize = 9;

/// A confidence interval for a median and the confidence it actually has.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MedianCi {
    /// Lower end (an observed value).
    pub low: f64,
    /// Upper end (an observed value).
    pub high: f64,
    /// Probability that the interval covers the true median, whatever the distribution:
    /// at least [`MEDIAN_CI_LEVEL`] from [`MIN_VALUES_FOR_CI`] values on; below it for
    /// fewer (0.9375 for 5 values, 0.5 for 2, 0 for 1).
    pub coverage: f64,
}

/// `P(B <= k)` for `B ~ Binomial(n, 1/2)`, summed in log space so large `n` cannot
/// underflow the first term.
fn binomial_half_cdf(n: usize, k: usize) -> f64 {
    let ln_half_n = -(n as f64) * std::f64::consts::LN_2;
    let mut ln_choose = 0.0f64;
    let mut total = 0.0;
    for i in 0..=k.min(n) {
        if i > 0 {
            ln_choose += ((n - i + 1) as f64).ln() - (i as f64).ln();
        }
        total += (ln_choose + ln_half_n).exp();
    }
    total.min(1.0)
}

/// The distribution-free confidence interval for the median from order statistics: the
/// `k`-th smallest and `k`-th largest value, with the largest `k` whose coverage
/// `1 - 2 P(Binomial(n, 1/2) < k)` is still at least 95%.
///
/// With fewer than [`MIN_VALUES_FOR_CI`] values no `k` reaches 95%; the interval is then
/// min-max and `coverage` says how much less than 95% it is, so a reader can be told.
/// An empty slice gives zeros with no coverage.
///
/// Whether one outlier can set the interval depends on `n` alone: for n = 6, 7 and 8
/// the interval is still min-max (the 2nd to the 2nd-largest value would cover only 78%,
/// 88% and 93%), so one repetition hit by something else is an end of it. From
/// [`MIN_VALUES_FOR_OUTLIER_FREE_CI`] = 9 on it is the 2nd to the 2nd-largest value or
/// narrower (k = 2 for n = 9..=11, 3 for 12..=14, 4 for 15..=16, ...): a single outlier,
/// however far out, never reaches either end.
pub fn median_ci(values: &[f64]) -> MedianCi {
    if values.is_empty() {
        return MedianCi {
            low: 0.0,
            high: 0.0,
            coverage: 0.0,
        };
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let alpha_half = (1.0 - MEDIAN_CI_LEVEL) / 2.0;
    // k is 1-based; k = 1 is min-max, the fallback when nothing better reaches 95%.
    let mut k = 1;
    while k < n.div_ceil(2) && binomial_half_cdf(n, k) <= alpha_half {
        k += 1;
    }
    MedianCi {
        low: v[k - 1],
        high: v[n - k],
        coverage: median_ci_coverage_k(n, k),
    }
}

fn median_ci_coverage_k(n: usize, k: usize) -> f64 {
    (1.0 - 2.0 * binomial_half_cdf(n, k - 1)).max(0.0)
}

/// The coverage [`median_ci`] reaches with `n` values.
pub fn median_ci_coverage(n: usize) -> f64 {
    if n == 0 {
        return 0.0;
    }
    let values: Vec<f64> = (0..n).map(|i| i as f64).collect();
    median_ci(&values).coverage
}

/// The `q` quantile (0..=1) of `sorted`, by linear interpolation between order
/// statistics; zero for an empty slice.
pub fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    match sorted.len() {
        0 => 0.0,
        1 => sorted[0],
        n => {
            let pos = q.clamp(0.0, 1.0) * (n - 1) as f64;
            let (i, frac) = (pos.floor() as usize, pos.fract());
            if i + 1 >= n {
                sorted[n - 1]
            } else if frac == 0.0 {
                // Spares `inf - inf` when a bootstrap quantile lands on infinite values.
                sorted[i]
            } else {
                sorted[i] + frac * (sorted[i + 1] - sorted[i])
            }
        }
    }
}

/// The outcome of a Mann-Whitney U test of two samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RankTest {
    /// U of the first sample: how many (a, b) pairs have a > b, ties counting half.
    pub u: f64,
    /// Two-sided p-value: the chance of a U at least this far from `n_a n_b / 2` if both
    /// samples came from one distribution.
    pub p: f64,
}

/// Largest `n_a + n_b` for which [`mann_whitney`] counts the exact distribution of U;
/// above it, U's normal approximation is good, and exact counts would lose precision in
/// f64.
const EXACT_RANK_TEST_MAX: usize = 40;

/// The Mann-Whitney U test (Wilcoxon rank-sum) of `a` against `b`: distribution-free,
/// so one slow outlier repetition cannot manufacture a verdict the way a t-test can.
///
/// Exact p-values when there are no ties and the samples are small; otherwise the normal
/// approximation with tie and continuity corrections. Two empty-handed samples give
/// `p = 1`.
pub fn mann_whitney(a: &[f64], b: &[f64]) -> RankTest {
    let (m, n) = (a.len(), b.len());
    if m == 0 || n == 0 {
        return RankTest { u: 0.0, p: 1.0 };
    }
    let mut u = 0.0f64;
    let mut ties = false;
    for x in a {
        for y in b {
            if x > y {
                u += 1.0;
            } else if x == y {
                u += 0.5;
                ties = true;
            }
        }
    }
    let mean = (m * n) as f64 / 2.0;
    let p = if !ties && m + n <= EXACT_RANK_TEST_MAX {
        let dist = u_distribution(m, n);
        let lower = u.min(2.0 * mean - u) as usize;
        let tail: f64 = dist[..=lower].iter().sum();
        (2.0 * tail).min(1.0)
    } else {
        let mut all: Vec<f64> = a.iter().chain(b).copied().collect();
        all.sort_by(f64::total_cmp);
        let total = all.len() as f64;
        let mut tie_term = 0.0;
        let mut i = 0;
        while i < all.len() {
            let j = all[i..].iter().take_while(|v| **v == all[i]).count();
            tie_term += (j * j * j - j) as f64;
            i += j;
        }
        let var = (m * n) as f64 / 12.0 * ((total + 1.0) - tie_term / (total * (total - 1.0)));
        if var <= 0.0 {
            1.0
        } else {
            let z = ((u - mean).abs() - 0.5).max(0.0) / var.sqrt();
            erfc(z / std::f64::consts::SQRT_2).min(1.0)
        }
    };
    RankTest { u, p }
}

/// Probabilities of U = 0..=m n for samples of sizes `m` and `n` from one continuous
/// distribution: the coefficients of the Gaussian binomial [m+n choose m](q) over C(m+n, m),
/// built as the product of (1 - q^(n+i)) / (1 - q^i), i = 1..=m, in truncated power series.
fn u_distribution(m: usize, n: usize) -> Vec<f64> {
    let max = m * n;
    let mut c = vec![0.0f64; max + 1];
    c[0] = 1.0;
    for i in 1..=m {
        for u in (n + i..=max).rev() {
            c[u] -= c[u - n - i];
        }
        for u in i..=max {
            c[u] += c[u - i];
        }
    }
    let total: f64 = c.iter().sum();
    c.iter().map(|x| x / total).collect()
}

/// The complementary error function (Numerical Recipes' Chebyshev fit, relative error
/// below 1.2e-7: plenty for a p-value).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.26551223
            + t * (1.00002368
                + t * (0.37409196
                    + t * (0.09678418
                        + t * (-0.18628806
                            + t * (0.27886807
                                + t * (-1.13520398
                                    + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))))
            .exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

/// A small, fast, seeded random generator (SplitMix64) for resampling: reproducible from
/// its seed, so a report redrawn from the same results shows the same intervals. Not for
/// anything that needs unpredictability.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator starting from `seed`.
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in 0..n (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }

    /// Standard normal (Box-Muller), for synthetic samples in tests.
    pub fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.next_f64();
        let u2 = self.next_f64();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }
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

    #[test]
    fn median_interval_from_order_statistics() {
        // n = 9: P(B <= 1) = 10/512 < 2.5%, P(B <= 2) = 46/512 > 2.5%: 2nd smallest to
        // 2nd largest, coverage 1 - 20/512.
        let v: Vec<f64> = (1..=9).rev().map(f64::from).collect();
        let ci = median_ci(&v);
        assert_eq!((ci.low, ci.high), (2.0, 8.0));
        assert!((ci.coverage - (1.0 - 20.0 / 512.0)).abs() < 1e-12, "{ci:?}");
        // n = 6 is the smallest count reaching 95%: min-max, 1 - 2/64.
        let ci = median_ci(&[6.0, 1.0, 5.0, 2.0, 4.0, 3.0]);
        assert_eq!((ci.low, ci.high), (1.0, 6.0));
        assert!(ci.coverage >= MEDIAN_CI_LEVEL);
        // Fewer: min-max, and the coverage says it falls short.
        let ci = median_ci(&[3.0, 1.0, 2.0, 5.0, 4.0]);
        assert_eq!((ci.low, ci.high), (1.0, 5.0));
        assert!((ci.coverage - 0.9375).abs() < 1e-12);
        assert_eq!(median_ci(&[7.0, 9.0]).coverage, 0.5);
        assert_eq!(median_ci(&[7.0]).coverage, 0.0);
        assert_eq!(median_ci_coverage(0), 0.0);
        // Many values: the interval narrows around the median and keeps 95%.
        let v: Vec<f64> = (0..101).map(f64::from).collect();
        let ci = median_ci(&v);
        assert!(ci.low > 35.0 && ci.high < 65.0 && ci.low < 50.0 && ci.high > 50.0);
        assert!(ci.coverage >= 0.95 && ci.coverage < 0.97, "{ci:?}");
    }

    #[test]
    fn one_low_outlier_among_nine_does_not_reach_the_interval() {
        // Eight repetitions at the machine's one speed and one hit by something else.
        let mut v = vec![100.0, 101.0, 99.5, 100.5, 98.9, 101.2, 100.2, 99.8];
        v.insert(3, 55.0);
        let ci = median_ci(&v);
        assert!(ci.low >= 98.9, "{ci:?}: the outlier (55) is left out");
        assert!(ci.high <= 101.0, "{ci:?}: the largest is left out too");
        assert!(ci.coverage >= MEDIAN_CI_LEVEL);
        // Every count from 9 on leaves both extremes out; 8 does not (min-max).
        for n in MIN_VALUES_FOR_OUTLIER_FREE_CI..=40 {
            let mut v: Vec<f64> = (0..n).map(|i| 100.0 + i as f64 * 0.01).collect();
            v[0] = 1.0;
            v[n - 1] = 1e9;
            let ci = median_ci(&v);
            assert!(ci.low > 1.0 && ci.high < 1e9, "n={n}: {ci:?}");
        }
        let mut eight: Vec<f64> = (0..8).map(|i| 100.0 + i as f64).collect();
        eight[0] = 1.0;
        assert_eq!(median_ci(&eight).low, 1.0, "n = 8 is still min-max at 95%");
    }

    #[test]
    fn median_interval_covers_the_median_as_often_as_it_says() {
        let mut rng = SplitMix64::new(7);
        for n in [5usize, 6, 10, 20] {
            let trials = 4000;
            let covered = (0..trials)
                .filter(|_| {
                    let v: Vec<f64> = (0..n).map(|_| rng.normal()).collect();
                    let ci = median_ci(&v);
                    ci.low <= 0.0 && 0.0 <= ci.high
                })
                .count();
            let rate = covered as f64 / trials as f64;
            let want = median_ci_coverage(n);
            assert!((rate - want).abs() < 0.02, "n={n}: {rate} vs {want}");
        }
    }

    #[test]
    fn quantiles_interpolate() {
        let v = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(quantile_sorted(&v, 0.5), 3.0);
        assert_eq!(quantile_sorted(&v, 0.0), 1.0);
        assert_eq!(quantile_sorted(&v, 1.0), 5.0);
        assert_eq!(quantile_sorted(&v, 0.125), 1.5);
        assert_eq!(quantile_sorted(&[1.0, f64::INFINITY], 1.0), f64::INFINITY);
        assert_eq!(quantile_sorted(&[], 0.5), 0.0);
    }

    #[test]
    fn rank_test_exact_and_approximate() {
        // Completely separated samples of 5: U = 0, p = 2 / C(10, 5).
        let t = mann_whitney(&[1.0, 2.0, 3.0, 4.0, 5.0], &[6.0, 7.0, 8.0, 9.0, 10.0]);
        assert_eq!(t.u, 0.0);
        assert!((t.p - 2.0 / 252.0).abs() < 1e-12, "{t:?}");
        // Known table value: m = n = 5, U <= 2 has probability 4/252.
        let dist = u_distribution(5, 5);
        assert!((dist[..=2].iter().sum::<f64>() - 4.0 / 252.0).abs() < 1e-12);
        assert!((dist.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        // Identical samples (all ties between them): no evidence at all.
        let same = [3.0, 1.0, 2.0, 5.0, 4.0];
        assert!(mann_whitney(&same, &same).p > 0.9);
        assert_eq!(mann_whitney(&[1.0; 5], &[1.0; 5]).p, 1.0);
        // Large samples use the normal approximation and still find a clear shift.
        let a: Vec<f64> = (0..30).map(f64::from).collect();
        let b: Vec<f64> = (0..30).map(|i| f64::from(i) + 15.0).collect();
        let t = mann_whitney(&a, &b);
        assert!(t.p < 0.001, "{t:?}");
        assert!(mann_whitney(&a, &a).p > 0.9);
        assert_eq!(mann_whitney(&[], &a).p, 1.0);
        assert!(
            (erfc(0.0) - 1.0).abs() < 1e-7
                && (erfc(1.959964 / std::f64::consts::SQRT_2) - 0.05).abs() < 1e-6
        );
    }

    #[test]
    fn seeded_generator_is_reproducible_and_in_range() {
        let (mut a, mut b) = (SplitMix64::new(1), SplitMix64::new(1));
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
        for _ in 0..100 {
            let x = a.next_f64();
            assert!((0.0..1.0).contains(&x));
            assert!(a.below(7) < 7);
        }
    }
}

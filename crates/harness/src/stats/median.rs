//! Medians over repetitions, their spread and their order-statistics confidence interval
//! (with the coverage that interval really has for few values), and quantiles.
//!
//! Not here: comparing two samples ([`super::rank`]).

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

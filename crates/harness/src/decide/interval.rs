//! The interval of a comparison's median paired ratio, valid although the matrix looks at
//! it more than once: alpha is spent evenly over a fixed schedule of looks ([`LOOKS`]), a
//! Bonferroni bound, so the chance that any look's interval misses the true median is at
//! most [`ALPHA`] however the looks end.
//!
//! Why the median and the sign test: a repetition's throughput here has heavy tails (the
//! host's phases slow one side by 0.2x-1.4x now and then), so a mean and a t interval are
//! led by the tail; the order-statistic interval of the median assumes nothing of the
//! distribution but that pairs are independent. Why Bonferroni rather than a confidence
//! sequence: with at most a dozen looks it is nearly as tight, and it is easy to check.
//!
//! Not here: what a ratio means for a part (`decide`), running pairs (`lab`).

/// The error rate the interval allows over all its looks.
pub const ALPHA: f64 = 0.05;

/// The pair counts at which a comparison may be judged, and so may stop. The first is the
/// fewest pairs whose extremes already give an interval at the per-look alpha; the last
/// is the most pairs a comparison ever gets. A comparison whose budget runs out between
/// two looks is judged once more at its count, which stands in for the next look, so no
/// comparison is looked at more than `LOOKS.len()` times.
pub const LOOKS: &[usize] = &[9, 16, 24, 32, 48, 64, 96, 128, 192];

/// The alpha each look may spend.
pub fn alpha_per_look() -> f64 {
    ALPHA / LOOKS.len() as f64
}

/// The next look after `pairs` pairs, `None` past the last.
pub fn next_look(pairs: usize) -> Option<usize> {
    LOOKS.iter().copied().find(|&n| n > pairs)
}

/// Whether `pairs` is a look of the schedule, or past the last one.
pub fn is_look(pairs: usize) -> bool {
    LOOKS.contains(&pairs)
}

/// The median of `values` and its distribution-free interval at confidence `1 - alpha`:
/// the k-th smallest and k-th largest, with k the largest such that a binomial(n, 1/2) is
/// below k with probability at most alpha/2. `None` when too few values give any interval.
pub fn median_interval(values: &[f64], alpha: f64) -> Option<(f64, f64, f64)> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    let n = v.len();
    if n == 0 {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let k = order_statistic(n, alpha)?;
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    Some((median, v[k - 1], v[n - k]))
}

/// The largest k (1-based) with P(Binomial(n, 1/2) <= k - 1) <= alpha / 2, `None` when
/// even k = 1 (the extremes) is too narrow.
fn order_statistic(n: usize, alpha: f64) -> Option<usize> {
    let mut cdf = 0.0;
    let mut k = 0;
    // P(X = j) in logs, so n in the hundreds does not underflow.
    let ln_half_n = n as f64 * 0.5f64.ln();
    let mut ln_choose = 0.0;
    for j in 0..=n / 2 {
        if j > 0 {
            ln_choose += ((n - j + 1) as f64).ln() - (j as f64).ln();
        }
        cdf += (ln_choose + ln_half_n).exp();
        if cdf <= alpha / 2.0 {
            k = j + 1;
        } else {
            break;
        }
    }
    (k >= 1).then_some(k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_look_is_the_fewest_pairs_that_give_an_interval() {
        let a = alpha_per_look();
        assert!(order_statistic(LOOKS[0], a).is_some());
        assert!(order_statistic(LOOKS[0] - 1, a).is_none());
    }

    #[test]
    fn order_statistics_match_the_binomial_table() {
        // n = 20 at 95%: the 6th smallest and 6th largest (P(X <= 5) = 0.0207).
        assert_eq!(order_statistic(20, 0.05), Some(6));
        // n = 10 at 95%: the 2nd (P(X <= 1) = 0.0107; P(X <= 2) = 0.0547).
        assert_eq!(order_statistic(10, 0.05), Some(2));
        assert_eq!(order_statistic(5, 0.05), None);
    }

    #[test]
    fn the_interval_holds_the_median() {
        let v: Vec<f64> = (0..40).map(|i| i as f64).collect();
        let (m, lo, hi) = median_interval(&v, 0.05).unwrap();
        assert_eq!(m, 19.5);
        assert!(lo < m && m < hi);
        assert!(lo >= 10.0 && hi <= 29.0, "{lo} {hi}");
    }

    #[test]
    fn looks_go_up() {
        assert_eq!(next_look(0), Some(9));
        assert_eq!(next_look(9), Some(16));
        assert_eq!(next_look(192), None);
        assert!(is_look(24) && !is_look(25));
    }
}

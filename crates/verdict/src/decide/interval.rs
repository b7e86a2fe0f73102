//! The interval of a comparison's median paired ratio, valid although the matrix looks at
//! it more than once: every look of a fixed schedule ([`Looks`]) uses one per-look level,
//! Pocock's constant boundary for that schedule ([`Looks::z`]), so the chance that any
//! look's interval misses the true median is at most [`ALPHA`] however the looks end.
//!
//! Why the Hodges-Lehmann estimate and the signed-rank interval: a repetition's throughput
//! here has heavy tails (the host's phases slow one side by 0.2x-1.4x now and then), so a
//! mean and a t interval are led by the tail. The signed-rank interval is as robust, and
//! at 9-16 pairs about half as wide as the sign test's (whose interval at 9 pairs is the
//! extremes); it assumes a pair's log ratio is symmetric about its centre, which running
//! the two sides in alternating order (a b, then b a) makes plausible, and its centre is
//! then the median. The sign test's interval ([`median_interval`]), which assumes nothing
//! of the shape, is kept for the tests' cross-check.
//!
//! Why Pocock's boundary rather than Bonferroni: the looks are nested (look 24 holds look
//! 16's pairs), so their statistics are correlated (sqrt(16/24)) and a union bound over
//! nine looks (z 2.77 a look) spends the error on coincidences that cannot happen. The
//! boundary that spends exactly [`ALPHA`] over this schedule, for a statistic that grows
//! as a random walk (the signed-rank statistic does, asymptotically), is z 2.61 at every
//! look: about 11% fewer pairs for one width than Bonferroni. Why a constant boundary
//! rather than O'Brien-Fleming's falling one: most parts decide at 24-64 pairs, and a real
//! server's parts (tens of seconds a pair) must be able to stop early; O'Brien-Fleming
//! would ask z 3.6 at 24 pairs. The tests check the guarantee by simulation over every
//! look, with heavy tails and serially correlated pairs.
//!
//! Why three schedules ([`Looks`]): the boundary pays for every look a part *could* take,
//! not only those it takes. A run with a budget never gives a part more than 64 pairs
//! (`lab`'s plan keeps at most 64, and a 15-minute run here gave none more than 32), so
//! its parts need not pay for looks at 96, 128 and 192: z 2.47 instead of 2.61, 5% narrower
//! for the same pairs. A size stops at a count fixed before it runs, whatever its pairs
//! say, so it is looked at once, at [`ALPHA`] itself (z 1.96). The placebo is judged as
//! the deciding parts are: it is the error of their instrument.
//!
//! Not here: what a ratio means for a part (`decide`), running pairs (`lab`).

use serde::{Deserialize, Serialize};

/// The error rate the interval allows over all its looks.
pub const ALPHA: f64 = 0.05;

/// The pair counts at which a comparison may be judged, and so may stop. The first gives
/// an interval from its extremes at the per-look alpha; the last
/// is the most pairs a comparison ever gets. A comparison whose budget runs out between
/// two looks is judged once more at its count, which stands in for the next look, so no
/// comparison is looked at more than `LOOKS.len()` times.
pub const LOOKS: &[usize] = &[9, 16, 24, 32, 48, 64, 96, 128, 192];

/// Pocock's boundary for [`LOOKS`] at [`ALPHA`]: the z with P(max over the looks of
/// |W(n)/sqrt(n)| > z) = 0.05 for a random walk W observed at the looks (2.61 by a
/// simulation of 60 000 walks; `tests::pocock_boundary_of_the_schedule` recomputes it).
pub const POCOCK_Z: f64 = 2.61;

/// The looks of a run with a budget: [`LOOKS`] up to 64, a prefix of it by construction,
/// so a budgeted part stops only where a part of every look could.
const BUDGETED: &[usize] = LOOKS.split_at(6).0;

/// Pocock's boundary for the looks of a run with a budget (2.47 by the same simulation).
pub const BUDGETED_Z: f64 = 2.47;

/// The pairs of a part looked at once ([`Looks::Once`]): the fewest whose signed-rank
/// interval at [`ALPHA`] leaves out the two most extreme of its 28 pairwise means on
/// each side, so one stray pair (a host phase, 0.74x in a placebo here) cannot set an
/// end. At the noise here it is narrower than nine pairs at the per-look level were
/// (about 0.92 against 1.13 sds of a pair's log ratio), in seven ninths of the time.
pub const ONCE_PAIRS: usize = 7;

/// How a part's pairs are looked at: where it may stop, and the level each look spends.
/// Kept with the part in the results file, so `lab report` judges a file as its run did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Looks {
    /// Every look of [`LOOKS`], at Pocock's boundary over them ([`POCOCK_Z`]): a run
    /// without a budget, and every part of a results file from before this was kept.
    #[default]
    All,
    /// The looks of [`LOOKS`] up to 64, at their boundary ([`BUDGETED_Z`]): a deciding
    /// part or the placebo of a run with a budget.
    Budgeted,
    /// One look at [`ONCE_PAIRS`] pairs, at [`ALPHA`]: a size, whose count is fixed
    /// before it runs (it stops there whatever its pairs say).
    Once,
}

impl Looks {
    /// The pair counts at which a part may be judged.
    pub fn counts(self) -> &'static [usize] {
        match self {
            Looks::All => LOOKS,
            Looks::Budgeted => BUDGETED,
            Looks::Once => &[ONCE_PAIRS],
        }
    }

    /// The z every look uses.
    pub fn z(self) -> f64 {
        match self {
            Looks::All => POCOCK_Z,
            Looks::Budgeted => BUDGETED_Z,
            Looks::Once => 1.959_964,
        }
    }

    /// The alpha each look may spend: the two-sided tail beyond [`Looks::z`] (0.0091 for
    /// every look of [`LOOKS`], where Bonferroni's would be 0.0056; 0.05 looked at once).
    pub fn alpha(self) -> f64 {
        match self {
            Looks::Once => ALPHA,
            _ => 2.0 * normal_upper_tail(self.z()),
        }
    }

    /// The first look: the least pairs that give an interval.
    pub fn first(self) -> usize {
        self.counts()[0]
    }

    /// The last look: the most pairs a part takes.
    pub fn last(self) -> usize {
        *self.counts().last().unwrap_or(&0)
    }

    /// The next look after `pairs` pairs, `None` past the last.
    pub fn next(self, pairs: usize) -> Option<usize> {
        self.counts().iter().copied().find(|&n| n > pairs)
    }

    /// Whether `pairs` is a look of the schedule.
    pub fn is_look(self, pairs: usize) -> bool {
        self.counts().contains(&pairs)
    }
}

/// The alpha each look of [`LOOKS`] may spend ([`Looks::All`]).
pub fn alpha_per_look() -> f64 {
    Looks::All.alpha()
}

/// P(Z > z) for a standard normal, by the complementary error function (Numerical
/// Recipes' erfc, relative error below 1.2e-7).
pub fn normal_upper_tail(z: f64) -> f64 {
    let x = z / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.5 * x.abs());
    let poly = -x * x - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let erfc = t * poly.exp();
    let erfc = if x >= 0.0 { erfc } else { 2.0 - erfc };
    erfc / 2.0
}

/// The next look of [`LOOKS`] after `pairs` pairs, `None` past the last.
pub fn next_look(pairs: usize) -> Option<usize> {
    Looks::All.next(pairs)
}

/// Whether `pairs` is a look of [`LOOKS`].
pub fn is_look(pairs: usize) -> bool {
    Looks::All.is_look(pairs)
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

/// The Hodges-Lehmann centre of `values` (the median of all pairwise means, the values
/// themselves included) and its signed-rank interval at confidence `1 - alpha`: the k-th
/// smallest and k-th largest of those means, with k the largest such that the signed-rank
/// statistic of n values is below k with probability at most alpha / 2. `None` when too
/// few values give any interval.
pub fn centre_interval(values: &[f64], alpha: f64) -> Option<(f64, f64, f64)> {
    let v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    let n = v.len();
    if n == 0 {
        return None;
    }
    let k = signed_rank_statistic(n, alpha)?;
    let mut walsh = Vec::with_capacity(n * (n + 1) / 2);
    for i in 0..n {
        for j in i..n {
            walsh.push((v[i] + v[j]) / 2.0);
        }
    }
    walsh.sort_by(f64::total_cmp);
    let m = walsh.len();
    let centre = if m % 2 == 1 {
        walsh[m / 2]
    } else {
        (walsh[m / 2 - 1] + walsh[m / 2]) / 2.0
    };
    Some((centre, walsh[k - 1], walsh[m - k]))
}

/// The largest k (1-based) with P(T <= k - 1) <= alpha / 2 for the signed-rank statistic
/// T of n values under the null (each rank's sign a fair coin), from its exact
/// distribution; `None` when even k = 1 is too narrow.
fn signed_rank_statistic(n: usize, alpha: f64) -> Option<usize> {
    // The distribution takes n^3 / 2 steps; a matrix asks for the same few n again and
    // again (at every look of every part).
    thread_local! {
        static KNOWN: std::cell::RefCell<std::collections::HashMap<(usize, u64), Option<usize>>> =
            std::cell::RefCell::new(std::collections::HashMap::new());
    }
    let key = (n, alpha.to_bits());
    if let Some(k) = KNOWN.with(|m| m.borrow().get(&key).copied()) {
        return k;
    }
    let k = signed_rank_exact(n, alpha);
    KNOWN.with(|m| m.borrow_mut().insert(key, k));
    k
}

/// [`signed_rank_statistic`] from the exact distribution, uncached.
fn signed_rank_exact(n: usize, alpha: f64) -> Option<usize> {
    let most = n * (n + 1) / 2;
    // ways[t]: subsets of ranks 1..=n summing to t; counted in f64, divided by 2^n.
    let mut ways = vec![0.0f64; most + 1];
    ways[0] = 1.0;
    for r in 1..=n {
        for t in (r..=most).rev() {
            ways[t] += ways[t - r];
        }
    }
    let total = 2f64.powi(n as i32);
    let mut cdf = 0.0;
    let mut k = 0;
    for (t, w) in ways.iter().enumerate() {
        cdf += w / total;
        if cdf <= alpha / 2.0 {
            k = t + 1;
        } else {
            break;
        }
    }
    (k >= 1).then_some(k)
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
        // Pocock's level gives an interval at 8 pairs too; 7 give none.
        assert!(order_statistic(LOOKS[0] - 2, a).is_none());
    }

    #[test]
    fn the_normal_tail_matches_its_table() {
        assert!((normal_upper_tail(1.959_964) - 0.025).abs() < 1e-6);
        assert!((normal_upper_tail(0.0) - 0.5).abs() < 1e-7);
        assert!((normal_upper_tail(-1.0) - 0.841_344_7).abs() < 1e-6);
        assert!((alpha_per_look() - 0.009_06).abs() < 1e-4);
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
    fn signed_rank_critical_values_match_the_table() {
        // Two-sided 5%: n = 10 rejects at T <= 8 (k = 9), n = 20 at T <= 52 (k = 53).
        assert_eq!(signed_rank_statistic(10, 0.05), Some(9));
        assert_eq!(signed_rank_statistic(20, 0.05), Some(53));
        assert_eq!(signed_rank_statistic(5, 0.05), None);
        assert!(signed_rank_statistic(LOOKS[0], alpha_per_look()).is_some());
    }

    #[test]
    fn the_centre_interval_is_narrower_than_the_sign_tests_and_holds_the_centre() {
        let v: Vec<f64> = (0..16).map(|i| ((i * 7) % 16) as f64 / 10.0).collect();
        let (c, lo, hi) = centre_interval(&v, alpha_per_look()).unwrap();
        let (_, slo, shi) = median_interval(&v, alpha_per_look()).unwrap();
        assert!(lo <= c && c <= hi);
        assert!(hi - lo < shi - slo, "{lo}-{hi} against {slo}-{shi}");
        assert!((c - 0.75).abs() < 1e-9, "{c}");
    }

    #[test]
    fn looks_go_up() {
        assert_eq!(next_look(0), Some(9));
        assert_eq!(next_look(9), Some(16));
        assert_eq!(next_look(192), None);
        assert!(is_look(24) && !is_look(25));
    }
}

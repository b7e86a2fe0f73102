//! The Mann-Whitney rank test of two samples, exact for small ones.
//!
//! Not here: the intervals a sample's median has on its own ([`mod@super::median`]).

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
/// distribution: the coefficients of the Gaussian binomial \[m+n choose m\](q) over C(m+n, m),
/// built as the product of (1 - q^(n+i)) / (1 - q^i), i = 1..=m, in truncated power series.
pub(super) fn u_distribution(m: usize, n: usize) -> Vec<f64> {
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
pub(super) fn erfc(x: f64) -> f64 {
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

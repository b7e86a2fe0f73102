//! The Universal Scalability Law fit: throughput against concurrency N,
//!
//! ```text
//! X(N) = λ N / (1 + σ (N - 1) + κ N (N - 1))
//! ```
//!
//! σ is contention (the serial share: queueing on a lock), κ coherency (the cost of
//! keeping shared data consistent, which grows with pairs of threads and makes throughput
//! fall past a peak), λ the throughput of one thread. Where κ > 0 the peak is at
//! N* = floor(sqrt((1 - σ) / κ)).
//!
//! The fit minimises squared error in X with Nelder-Mead over transformed parameters that
//! keep 0 <= σ <= 1, κ >= 0 and λ > 0, from several starting points; it reproduces the
//! published reference fit of the Cisco data set (see the tests). A three-parameter fit
//! needs at least [`MIN_POINTS`] distinct thread counts to mean anything; with fewer the
//! fit refuses rather than print numbers. (A hand-written Nelder-Mead because a
//! three-parameter least-squares problem did not justify an optimisation crate.)
//!
//! Uncertainty comes from a bootstrap over repetitions: [`bootstrap_one`] redraws each
//! level's repetitions with replacement and refits, and [`UslIntervals`] takes percentile
//! intervals over many such refits. Each resample is seeded by its index, so the intervals
//! are reproducible and the caller may run resamples in any order or in parallel (`lab
//! report` uses rayon); nothing here starts a thread, so measuring processes never do.
//!
//! What this module does not decide: which points are fit to apply (in-core points only),
//! nor whether a fit is good enough to advise on; `lab`'s report does both.

use serde::{Deserialize, Serialize};

/// Fewest distinct thread counts a fit accepts.
pub const MIN_POINTS: usize = 4;

/// Fitted parameters and how well they explain the points.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct UslFit {
    /// Contention, 0..=1.
    pub sigma: f64,
    /// Coherency, >= 0.
    pub kappa: f64,
    /// Throughput of one thread (ops/s).
    pub lambda: f64,
    /// Coefficient of determination of the fitted X against the measured X.
    pub r_squared: f64,
    /// Distinct thread counts fitted.
    pub points: usize,
}

impl UslFit {
    /// Modelled throughput at `n` threads.
    pub fn throughput(&self, n: f64) -> f64 {
        usl(self.sigma, self.kappa, self.lambda, n)
    }

    /// N* = floor(sqrt((1 - σ) / κ)), at least 1; `None` when κ is (numerically) zero.
    pub fn peak_threads(&self) -> Option<usize> {
        if self.kappa <= 1e-9 {
            return None;
        }
        Some((((1.0 - self.sigma) / self.kappa).sqrt().floor() as usize).max(1))
    }

    /// N* without rounding: sqrt((1 - σ) / κ); infinite when κ is (numerically) zero,
    /// i.e. no peak at all.
    pub fn peak_concurrency(&self) -> f64 {
        if self.kappa <= 1e-9 {
            f64::INFINITY
        } else {
            ((1.0 - self.sigma) / self.kappa).sqrt()
        }
    }
}

fn usl(sigma: f64, kappa: f64, lambda: f64, n: f64) -> f64 {
    lambda * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))
}

/// Maps unconstrained optimiser coordinates to (σ, κ, λ) within their ranges.
fn params(p: [f64; 3], scale: f64) -> (f64, f64, f64) {
    (p[0].sin().powi(2), p[1] * p[1], scale * p[2].exp())
}

/// Fits `(threads, ops_per_sec)` points. Points with the same thread count are all used.
pub fn fit(points: &[(f64, f64)]) -> Result<UslFit, String> {
    let mut starts = Vec::new();
    for s0 in [0.05f64, 0.3, 0.9] {
        for k0 in [0.0f64, 0.01, 0.1] {
            starts.push((s0, k0, None));
        }
    }
    fit_with_starts(points, &starts)
}

/// Fits `points` from one start, `near` (a fit of similar points): what a bootstrap
/// resample needs, at a ninth of [`fit`]'s cost.
pub fn fit_from(points: &[(f64, f64)], near: &UslFit) -> Result<UslFit, String> {
    fit_with_starts(points, &[(near.sigma, near.kappa, Some(near.lambda))])
}

/// Starting points as (σ, κ, λ); `None` for λ starts at the largest throughput.
type Start = (f64, f64, Option<f64>);

fn fit_with_starts(points: &[(f64, f64)], starts: &[Start]) -> Result<UslFit, String> {
    let mut distinct: Vec<f64> = points.iter().map(|p| p.0).collect();
    distinct.sort_by(f64::total_cmp);
    distinct.dedup();
    if distinct.len() < MIN_POINTS {
        return Err(format!(
            "too few points to fit: {} thread count(s), need at least {MIN_POINTS}",
            distinct.len()
        ));
    }
    if points
        .iter()
        .any(|&(n, x)| n < 1.0 || !x.is_finite() || x < 0.0)
    {
        return Err("points need threads >= 1 and a finite, non-negative throughput".into());
    }
    let scale = points.iter().map(|p| p.1).fold(0.0, f64::max);
    if scale <= 0.0 {
        return Err("every throughput is zero".into());
    }
    let sse = |p: [f64; 3]| {
        let (s, k, l) = params(p, scale);
        points
            .iter()
            .map(|&(n, x)| ((usl(s, k, l, n) - x) / scale).powi(2))
            .sum::<f64>()
    };
    let mut best: Option<([f64; 3], f64)> = None;
    for &(s0, k0, l0) in starts {
        let lambda_start = l0.map_or(0.0, |l| (l / scale).max(1e-12).ln());
        let start = [
            s0.clamp(0.0, 1.0).sqrt().asin(),
            k0.max(0.0).sqrt(),
            lambda_start,
        ];
        let (p, v) = nelder_mead(&sse, start, 4000);
        if best.is_none_or(|(_, bv)| v < bv) {
            best = Some((p, v));
        }
    }
    let (p, _) = best.expect("at least one start");
    let (sigma, kappa, lambda) = params(p, scale);
    let mean = points.iter().map(|p| p.1).sum::<f64>() / points.len() as f64;
    let total: f64 = points.iter().map(|p| (p.1 - mean).powi(2)).sum();
    let residual: f64 = points
        .iter()
        .map(|&(n, x)| (usl(sigma, kappa, lambda, n) - x).powi(2))
        .sum();
    let r_squared = if total > 0.0 {
        1.0 - residual / total
    } else {
        1.0
    };
    Ok(UslFit {
        sigma,
        kappa,
        lambda,
        r_squared,
        points: distinct.len(),
    })
}

/// One concurrency level: the thread count and every repetition's throughput there.
#[derive(Debug, Clone, PartialEq)]
pub struct Level {
    /// Concurrency (threads).
    pub n: f64,
    /// Throughput of each repetition (ops/s).
    pub samples: Vec<f64>,
}

/// One point per level: the median of its repetitions. What the fit is drawn through.
pub fn medians(levels: &[Level]) -> Vec<(f64, f64)> {
    levels
        .iter()
        .map(|l| (l.n, crate::stats::median(&l.samples)))
        .collect()
}

/// Resamples to draw for [`UslIntervals`]: enough for stable 2.5% and 97.5% percentiles
/// (about 10 resamples lie beyond each) at a cost `lab report` can afford.
pub const BOOTSTRAP_RESAMPLES: usize = 400;

/// Fewest repetitions per level for a bootstrap: with one, every resample is the same.
pub const MIN_SAMPLES_PER_LEVEL: usize = 2;

/// Resample number `index`: every level's repetitions drawn again with replacement (so
/// every level stays, as a fit needs them all), their medians refitted from `near`.
/// `None` when the refit fails. Deterministic in `index`.
pub fn bootstrap_one(levels: &[Level], near: &UslFit, index: usize) -> Option<UslFit> {
    let mut rng =
        crate::stats::SplitMix64::new(0x5EED_0000_0000_0000 ^ (index as u64).wrapping_mul(0x9E37));
    let points: Vec<(f64, f64)> = levels
        .iter()
        .map(|l| {
            let draw: Vec<f64> = (0..l.samples.len())
                .map(|_| l.samples[rng.below(l.samples.len())])
                .collect();
            (l.n, crate::stats::median(&draw))
        })
        .collect();
    fit_from(&points, near).ok()
}

/// 95% percentile-bootstrap intervals of σ, κ and N*.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UslIntervals {
    /// σ, (low, high).
    pub sigma: (f64, f64),
    /// κ, (low, high).
    pub kappa: (f64, f64),
    /// N* without rounding, (low, high); `high` is infinite when at least 2.5% of the
    /// resamples found no coherency penalty (no peak at all).
    pub peak: (f64, f64),
    /// Resamples whose refit succeeded.
    pub resamples: usize,
}

impl UslIntervals {
    /// Percentile intervals over bootstrap refits; `None` for fewer than 40 (too few for a
    /// 2.5% tail to mean anything).
    pub fn from_fits(fits: &[UslFit]) -> Option<UslIntervals> {
        if fits.len() < 40 {
            return None;
        }
        let interval = |f: fn(&UslFit) -> f64| {
            let mut v: Vec<f64> = fits.iter().map(f).collect();
            v.sort_by(f64::total_cmp);
            (
                crate::stats::quantile_sorted(&v, 0.025),
                crate::stats::quantile_sorted(&v, 0.975),
            )
        };
        Some(UslIntervals {
            sigma: interval(|f| f.sigma),
            kappa: interval(|f| f.kappa),
            peak: interval(|f| f.peak_concurrency()),
            resamples: fits.len(),
        })
    }

    /// Whether N*'s interval is bounded: finite, and within 10x the largest concurrency
    /// measured (`max_level`), beyond which a peak is an extrapolation the points cannot
    /// support.
    pub fn peak_bounded(&self, max_level: f64) -> bool {
        self.peak.1.is_finite() && self.peak.1 <= 10.0 * max_level
    }
}

/// All [`BOOTSTRAP_RESAMPLES`] resamples in this thread (tests; the report runs
/// [`bootstrap_one`] in parallel).
pub fn bootstrap_serial(levels: &[Level], near: &UslFit) -> Option<UslIntervals> {
    let fits: Vec<UslFit> = (0..BOOTSTRAP_RESAMPLES)
        .filter_map(|i| bootstrap_one(levels, near, i))
        .collect();
    UslIntervals::from_fits(&fits)
}

/// Minimises `f` from `start` with the Nelder-Mead simplex method.
fn nelder_mead(
    f: &impl Fn([f64; 3]) -> f64,
    start: [f64; 3],
    iterations: usize,
) -> ([f64; 3], f64) {
    let mut simplex: Vec<([f64; 3], f64)> = (0..4)
        .map(|i| {
            let mut p = start;
            if i > 0 {
                p[i - 1] += 0.2;
            }
            (p, f(p))
        })
        .collect();
    let lerp = |a: [f64; 3], b: [f64; 3], t: f64| {
        [
            a[0] + t * (b[0] - a[0]),
            a[1] + t * (b[1] - a[1]),
            a[2] + t * (b[2] - a[2]),
        ]
    };
    for _ in 0..iterations {
        simplex.sort_by(|a, b| a.1.total_cmp(&b.1));
        if (simplex[3].1 - simplex[0].1).abs() < 1e-16 {
            break;
        }
        let mut centroid = [0.0; 3];
        for (p, _) in &simplex[..3] {
            for d in 0..3 {
                centroid[d] += p[d] / 3.0;
            }
        }
        let worst = simplex[3];
        let reflected = lerp(centroid, worst.0, -1.0);
        let fr = f(reflected);
        if fr < simplex[0].1 {
            let expanded = lerp(centroid, worst.0, -2.0);
            let fe = f(expanded);
            simplex[3] = if fe < fr {
                (expanded, fe)
            } else {
                (reflected, fr)
            };
        } else if fr < simplex[2].1 {
            simplex[3] = (reflected, fr);
        } else {
            let contracted = lerp(centroid, worst.0, 0.5);
            let fc = f(contracted);
            if fc < worst.1 {
                simplex[3] = (contracted, fc);
            } else {
                let best = simplex[0].0;
                for entry in simplex.iter_mut().skip(1) {
                    let p = lerp(best, entry.0, 0.5);
                    *entry = (p, f(p));
                }
            }
        }
    }
    simplex.sort_by(|a, b| a.1.total_cmp(&b.1));
    simplex[0]
}

#[cfg(test)]
mod tests;

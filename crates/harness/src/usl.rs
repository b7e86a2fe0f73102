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
//! keep 0 <= σ <= 1, κ >= 0 and λ > 0, from several starting points. A three-parameter
//! fit needs at least [`MIN_POINTS`] distinct thread counts to mean anything; with fewer
//! the fit refuses rather than print numbers. (A hand-written Nelder-Mead because a
//! three-parameter least-squares problem did not justify an optimisation crate.)

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

    /// One plain sentence recommending a worker-thread count on `cores` CPUs.
    pub fn recommendation(&self, cores: usize) -> String {
        match self.peak_threads() {
            Some(peak) if peak <= cores => format!(
                "Throughput peaks at about {peak} thread(s) (N*) and falls beyond: run {peak} worker thread(s) on {cores} core(s); more threads than that make it slower."
            ),
            Some(peak) => format!(
                "Throughput would peak near {peak} threads, past the {cores} core(s) here: run one worker thread per core ({cores}); extra threads only add coordination."
            ),
            None if self.sigma < 0.05 => format!(
                "No coherency penalty measured and little contention: scale threads with cores ({cores} here); threads beyond the cores add nothing."
            ),
            None => format!(
                "Contention (σ = {:.2}) caps throughput near {:.3} x one thread: more than {cores} thread(s) will not help; remove the serial section rather than add threads.",
                self.sigma,
                1.0 / self.sigma
            ),
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
    for s0 in [0.05f64, 0.3, 0.9] {
        for k0 in [0.0f64, 0.01, 0.1] {
            let start = [s0.sqrt().asin(), k0.sqrt(), 0.0];
            let (p, v) = nelder_mead(&sse, start, 4000);
            if best.is_none_or(|(_, bv)| v < bv) {
                best = Some((p, v));
            }
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
mod tests {
    use super::*;

    const THREADS: [f64; 8] = [1.0, 2.0, 4.0, 6.0, 8.0, 12.0, 16.0, 24.0];

    fn curve(sigma: f64, kappa: f64, lambda: f64, noise: f64) -> Vec<(f64, f64)> {
        // Deterministic noise in [-noise, +noise]: a fixed-seed LCG.
        let mut state = 12345u64;
        THREADS
            .iter()
            .map(|&n| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let u = (state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
                (n, usl(sigma, kappa, lambda, n) * (1.0 + noise * u))
            })
            .collect()
    }

    #[test]
    fn recovers_known_parameters_without_noise() {
        for &(s, k, l) in &[
            (0.05, 0.002, 1000.0),
            (0.3, 0.0, 5e6),
            (0.0, 0.02, 250.0),
            (0.6, 0.05, 1e4),
        ] {
            let fit = fit(&curve(s, k, l, 0.0)).unwrap();
            assert!((fit.sigma - s).abs() < 1e-3, "σ {s} -> {fit:?}");
            assert!((fit.kappa - k).abs() < 1e-4, "κ {k} -> {fit:?}");
            assert!((fit.lambda - l).abs() / l < 1e-3, "λ {l} -> {fit:?}");
            assert!(fit.r_squared > 0.9999);
            assert_eq!(fit.points, THREADS.len());
        }
    }

    #[test]
    fn recovers_the_peak_through_noise() {
        // σ = 0.05, κ = 0.002: N* = floor(sqrt(0.95 / 0.002)) = 21.
        let fit = fit(&curve(0.05, 0.002, 1000.0, 0.03)).unwrap();
        assert!((fit.sigma - 0.05).abs() < 0.05, "{fit:?}");
        assert!((fit.lambda - 1000.0).abs() < 100.0, "{fit:?}");
        let peak = fit.peak_threads().unwrap();
        assert!((16..=27).contains(&peak), "peak {peak}: {fit:?}");
        assert!(fit.r_squared > 0.95);
    }

    #[test]
    fn peak_formula_and_recommendations() {
        let f = UslFit {
            sigma: 0.1,
            kappa: 0.1,
            lambda: 1.0,
            r_squared: 1.0,
            points: 5,
        };
        assert_eq!(f.peak_threads(), Some(3)); // sqrt(0.9 / 0.1) = 3
        assert!(f.recommendation(4).contains("run 3 worker thread(s)"));
        assert!(f
            .recommendation(2)
            .contains("one worker thread per core (2)"));
        let flat = UslFit {
            kappa: 0.0,
            sigma: 0.01,
            ..f
        };
        assert_eq!(flat.peak_threads(), None);
        assert!(flat.recommendation(8).contains("scale threads with cores"));
        let serial = UslFit {
            kappa: 0.0,
            sigma: 0.5,
            ..f
        };
        assert!(serial.recommendation(2).contains("σ = 0.50"));
    }

    #[test]
    fn too_few_points_are_refused() {
        let err = fit(&[(1.0, 10.0), (2.0, 18.0), (4.0, 30.0), (4.0, 31.0)]).unwrap_err();
        assert!(err.contains("3 thread count(s)"), "{err}");
        assert!(fit(&[(1.0, 0.0), (2.0, 0.0), (3.0, 0.0), (4.0, 0.0)]).is_err());
    }
}

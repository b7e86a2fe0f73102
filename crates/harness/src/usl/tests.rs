//! The USL fit's tests: synthetic curves with known parameters, and the bootstrap's intervals.

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
fn peak_formula() {
    let f = UslFit {
        sigma: 0.1,
        kappa: 0.1,
        lambda: 1.0,
        r_squared: 1.0,
        points: 5,
    };
    assert_eq!(f.peak_threads(), Some(3)); // sqrt(0.9 / 0.1) = 3
    assert!((f.peak_concurrency() - 3.0).abs() < 1e-12);
    let flat = UslFit { kappa: 0.0, ..f };
    assert_eq!(flat.peak_threads(), None);
    assert_eq!(flat.peak_concurrency(), f64::INFINITY);
}

fn levels_with_noise(sigma: f64, kappa: f64, noise: f64, threads: &[f64]) -> Vec<Level> {
    let mut rng = crate::stats::SplitMix64::new(99);
    threads
        .iter()
        .map(|&n| Level {
            n,
            samples: (0..6)
                .map(|_| usl(sigma, kappa, 1e6, n) * (1.0 + noise * rng.normal()))
                .collect(),
        })
        .collect()
}

#[test]
fn bootstrap_intervals_cover_the_truth_and_bound_a_visible_peak() {
    // N* = sqrt(0.95 / 0.01) = 9.7, inside the measured 1..16.
    let levels = levels_with_noise(0.05, 0.01, 0.03, &[1.0, 2.0, 4.0, 8.0, 12.0, 16.0]);
    let point = fit(&medians(&levels)).unwrap();
    let ci = bootstrap_serial(&levels, &point).unwrap();
    assert!(ci.resamples > 350, "{ci:?}");
    assert!(ci.kappa.0 <= 0.01 && 0.01 <= ci.kappa.1, "{ci:?}");
    assert!(ci.sigma.0 <= 0.05 && 0.05 <= ci.sigma.1, "{ci:?}");
    assert!(ci.peak.0 <= 9.75 && 9.74 <= ci.peak.1, "{ci:?}");
    assert!(ci.peak_bounded(16.0), "{ci:?}");
    assert!(ci.peak.0 <= point.peak_concurrency() && point.peak_concurrency() <= ci.peak.1);
    // Same input, same intervals: resamples are seeded by their index.
    assert_eq!(bootstrap_serial(&levels, &point), Some(ci));
}

#[test]
fn a_flat_curve_has_no_bounded_peak() {
    // Linear scaling: κ = 0, so resamples often find no peak at all.
    let levels = levels_with_noise(0.0, 0.0, 0.05, &[1.0, 2.0, 3.0, 4.0]);
    let point = fit(&medians(&levels)).unwrap();
    let ci = bootstrap_serial(&levels, &point).unwrap();
    assert!(!ci.peak_bounded(4.0), "{ci:?}");
    // One repetition per level: every resample is the point fit; too few is refused.
    assert!(UslIntervals::from_fits(&[point; 39]).is_none());
}

#[test]
fn too_few_points_are_refused() {
    let err = fit(&[(1.0, 10.0), (2.0, 18.0), (4.0, 30.0), (4.0, 31.0)]).unwrap_err();
    assert!(err.contains("3 thread count(s)"), "{err}");
    assert!(fit(&[(1.0, 0.0), (2.0, 0.0), (3.0, 0.0), (4.0, 0.0)]).is_err());
}

/// The Cisco benchmark from Baron Schwartz, "Practical Scalability Analysis with the
/// Universal Scalability Law" (as in usl4j's ModelTest): (concurrency, throughput).
const CISCO: [(f64, f64); 32] = [
    (1.0, 955.16),
    (2.0, 1878.91),
    (3.0, 2688.01),
    (4.0, 3548.68),
    (5.0, 4315.54),
    (6.0, 5130.43),
    (7.0, 5931.37),
    (8.0, 6531.08),
    (9.0, 7219.8),
    (10.0, 7867.61),
    (11.0, 8278.71),
    (12.0, 8646.7),
    (13.0, 9047.84),
    (14.0, 9426.55),
    (15.0, 9645.37),
    (16.0, 9897.24),
    (17.0, 10097.6),
    (18.0, 10240.5),
    (19.0, 10532.39),
    (20.0, 10798.52),
    (21.0, 11151.43),
    (22.0, 11518.63),
    (23.0, 11806.0),
    (24.0, 12089.37),
    (25.0, 12075.41),
    (26.0, 12177.29),
    (27.0, 12211.41),
    (28.0, 12158.93),
    (29.0, 12155.27),
    (30.0, 12118.04),
    (31.0, 12140.4),
    (32.0, 12074.39),
];

#[test]
fn matches_the_published_reference_fit() {
    let fit = fit(&CISCO).unwrap();
    let close = |got: f64, want: f64| (got - want).abs() <= want.abs() * 1e-3;
    assert!(close(fit.sigma, 0.02671591), "{fit:?}");
    assert!(close(fit.kappa, 7.690945e-4), "{fit:?}");
    assert!(close(fit.lambda, 995.6486), "{fit:?}");
    assert_eq!(fit.peak_threads(), Some(35));
}

//! The statistics' tests: exact figures on small inputs, coverage by simulation.

use std::time::Duration;

use super::rank::{erfc, u_distribution};
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

//! Which operations get their latency timed, and what one clock read costs.
//!
//! A fixed stride (1 in 16) times the same positions of a hot path's plan on every pass:
//! lookup's plan is 16,384 operations long, so every thread would time the same 1,024
//! searches. [`LatencySampler`] instead skips a random, geometrically distributed number
//! of operations drawn from the worker's own generator, so every position is equally
//! likely to be timed and the mean rate stays 1 in `mean`.
//!
//! Every timed sample includes one clock read; [`clock_read_ns`] measures its cost so the
//! report can show it next to the percentiles (it is not subtracted: a percentile minus a
//! median cost is not a percentile of anything).
//!
//! This module does not time anything itself; the runner does.

use std::time::Instant;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Decides, operation by operation, whether to time it: on average one in `mean`.
#[derive(Debug)]
pub struct LatencySampler {
    /// `ln(1 - 1/mean)`, or 0 when every operation is timed.
    ln_miss: f64,
    countdown: u64,
    rng: SmallRng,
}

impl LatencySampler {
    /// A sampler timing one operation in `mean` on average (every one for `mean <= 1`),
    /// drawing from a generator seeded with `rng_seed` (give each worker its own).
    pub fn new(mean: u32, rng_seed: u64) -> LatencySampler {
        let ln_miss = if mean <= 1 {
            0.0
        } else {
            (1.0 - 1.0 / f64::from(mean)).ln()
        };
        let mut sampler = LatencySampler {
            ln_miss,
            countdown: 0,
            rng: SmallRng::seed_from_u64(rng_seed ^ 0x5eed_1a7e_0c10_c4ad),
        };
        // A random first skip too, so threads do not all time their first operation.
        sampler.countdown = sampler.skip();
        sampler
    }

    /// Operations to let pass before the next timed one: geometric, mean `mean - 1`.
    fn skip(&mut self) -> u64 {
        if self.ln_miss == 0.0 {
            return 0;
        }
        // 1 - U lies in (0, 1], so its logarithm is finite.
        let u: f64 = 1.0 - self.rng.random::<f64>();
        (u.ln() / self.ln_miss).floor().min(u32::MAX as f64) as u64
    }

    /// Whether to time the next operation.
    #[inline]
    pub fn time_next(&mut self) -> bool {
        if self.countdown == 0 {
            self.countdown = self.skip();
            true
        } else {
            self.countdown -= 1;
            false
        }
    }
}

/// The cost of one `Instant::now()` on the calling thread in nanoseconds: the median gap
/// between back-to-back reads over a few thousand pairs (about 0.1 ms).
pub fn clock_read_ns() -> f64 {
    const PAIRS: usize = 4001;
    let mut gaps: Vec<f64> = (0..PAIRS)
        .map(|_| {
            let a = Instant::now();
            let b = Instant::now();
            b.duration_since(a).as_nanos() as f64
        })
        .collect();
    gaps.sort_by(f64::total_cmp);
    gaps[PAIRS / 2]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn a_sampler_over_a_16384_long_plan_touches_more_than_1024_positions() {
        // lookup's plan: 16,384 operations replayed in a loop, one in 16 timed.
        const PLAN: usize = 16_384;
        let mut sampler = LatencySampler::new(16, 7);
        let mut timed = HashSet::new();
        let mut count = 0u64;
        for op in 0..PLAN * 8 {
            if sampler.time_next() {
                timed.insert(op % PLAN);
                count += 1;
            }
        }
        assert!(
            timed.len() > 1024,
            "{} distinct positions timed",
            timed.len()
        );
        // The mean rate stays about one in 16 (8,192 expected; generous bounds).
        assert!((6_000..11_000).contains(&count), "{count} timed");
    }

    #[test]
    fn mean_one_times_every_operation() {
        let mut sampler = LatencySampler::new(1, 3);
        assert!((0..1000).all(|_| sampler.time_next()));
    }

    #[test]
    fn workers_with_different_seeds_time_different_operations() {
        let pick = |seed| {
            let mut s = LatencySampler::new(16, seed);
            (0..4096).filter(|_| s.time_next()).count()
        };
        let mut a = LatencySampler::new(16, 1);
        let mut b = LatencySampler::new(16, 2);
        let same = (0..4096).filter(|_| a.time_next() == b.time_next()).count();
        assert!(same < 4096, "two seeds gave the same sequence");
        assert!(pick(1) > 0 && pick(2) > 0);
    }

    #[test]
    fn a_clock_read_costs_something_finite() {
        let ns = clock_read_ns();
        assert!(ns.is_finite() && ns >= 0.0);
    }
}

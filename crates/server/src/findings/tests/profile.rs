//! Part (d) on profiles drawn at random from one workload: two equal workloads never show
//! a shift, a real one does. Each profile is its own draw (its own seed), as two child runs
//! of the same cell are: the stacks' weights vary from run to run, then a few thousand
//! samples are taken of them.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::findings::profile::{growth, judge, Shares, SHOWN_GROWTH};
use verdict::decide::Outcome;

const ROOT: &str = "memcached";

/// A workload: stacks (frames below the root) and their weights.
struct Workload(Vec<(String, f64)>);

impl Workload {
    /// 150 stacks three to six frames deep over 60 function names, weights spread over two
    /// orders of magnitude; the same `shape` gives the same workload.
    fn new(shape: u64) -> Workload {
        let mut rng = SmallRng::seed_from_u64(shape);
        let stacks = (0..150)
            .map(|_| {
                let depth = rng.random_range(3..=6);
                let frames: Vec<String> = (0..depth)
                    .map(|d| format!("fn{}_{}", d, rng.random_range(0..10)))
                    .collect();
                (frames.join(";"), 10f64.powf(rng.random_range(0.0..2.0)))
            })
            .collect();
        Workload(stacks)
    }

    /// The same workload with `share` of its weight moved to a futex wait.
    fn with_futex(&self, share: f64) -> Workload {
        let total: f64 = self.0.iter().map(|s| s.1).sum();
        let mut v: Vec<(String, f64)> = self
            .0
            .iter()
            .map(|(s, w)| (s.clone(), w * (1.0 - share)))
            .collect();
        v.push(("fn0_0;futex_wait_[k]".to_owned(), total * share));
        Workload(v)
    }

    /// One profile of one run: each stack's weight varies by up to +-40% between runs,
    /// then `samples` samples are drawn.
    fn profile(&self, run_seed: u64, samples: usize) -> Shares {
        let mut rng = SmallRng::seed_from_u64(run_seed);
        let weights: Vec<f64> = self
            .0
            .iter()
            .map(|(_, w)| w * rng.random_range(0.6..1.4))
            .collect();
        let total: f64 = weights.iter().sum();
        let mut counts = vec![0u64; weights.len()];
        for _ in 0..samples {
            let mut x = rng.random_range(0.0..total);
            let i = weights
                .iter()
                .position(|w| {
                    x -= w;
                    x < 0.0
                })
                .unwrap_or(weights.len() - 1);
            counts[i] += 1;
        }
        let folded: String = self
            .0
            .iter()
            .zip(&counts)
            .filter(|(_, n)| **n > 0)
            .map(|((s, _), n)| format!("{ROOT};{s} {n}\nlab/cell;client 3\n"))
            .collect();
        Shares::of_folded(&folded, &[ROOT])
    }
}

/// Two profiles of each of `one` and `most`, four runs of their own.
fn outcome(one: &Workload, most: &Workload, seed: u64) -> (Outcome, f64, String) {
    let a = [one.profile(4 * seed, 2000), one.profile(4 * seed + 1, 2000)];
    let b = [
        most.profile(4 * seed + 2, 2000),
        most.profile(4 * seed + 3, 2000),
    ];
    // What the rule before the floor read: one profile a side, 5 points of growth.
    let old = growth(&a[0], &b[0]).first().map_or(0.0, |r| r.2 - r.1);
    let p = judge(&a, &b, (16, 2), &[ROOT], "claim");
    (p.outcome, old, p.why)
}

#[test]
fn two_equal_workloads_never_show_a_shift() {
    let mut old_shown = 0;
    for shape in 0..4 {
        let w = Workload::new(shape);
        for seed in 0..12 {
            let (o, old, why) = outcome(&w, &w, 100 * shape + seed);
            assert_ne!(o, Outcome::Shown, "shape {shape} seed {seed}: {why}");
            old_shown += usize::from(old >= SHOWN_GROWTH);
        }
    }
    // Noise alone cleared the old rule's 5 points: the floor is what keeps them out.
    assert!(old_shown > 0, "no draw cleared 5 points without the floor");
}

#[test]
fn a_workload_that_moves_its_time_to_a_futex_shows_it() {
    for shape in 0..4 {
        let w = Workload::new(shape);
        let busy = w.with_futex(0.2);
        for seed in 0..6 {
            let (o, _, why) = outcome(&w, &busy, 100 * shape + seed);
            assert_eq!(o, Outcome::Shown, "shape {shape} seed {seed}: {why}");
            assert!(why.contains("futex_wait_[k]"), "{why}");
        }
    }
}

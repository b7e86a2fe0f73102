//! Synthetic pairs, no timing: the sequential rule decides real effects, decides no effect
//! as inside its band, leaves an effect at its threshold undecided until the most pairs,
//! and its interval covers the true ratio at least 95% of the time over repeated looks (400 seeded sequences a noise).

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::*;

/// A comparison of two one-cell sides judged by `rule`.
fn comparison(rule: Rule) -> Comparison {
    Comparison::throughput(
        Side::cell(CellRef::new("f", "a", 1, 1)),
        Side::cell(CellRef::new("f", "b", 1, 1)),
        rule,
    )
}

/// A standard normal draw (Box-Muller).
fn normal(rng: &mut SmallRng) -> f64 {
    let u: f64 = rng.random_range(f64::EPSILON..1.0);
    let v: f64 = rng.random();
    (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
}

/// Adds pairs whose log ratio is `ln(ratio)` plus noise of sd `sd` (with a heavy tail
/// when `tail`: one pair in ten five times as noisy, as the host's phases do) until
/// `done`, looking only at the schedule's looks; returns the measured comparison.
fn sequence(rule: Rule, ratio: f64, sd: f64, tail: bool, seed: u64, precision: f64) -> Measured {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut m = Measured::new(Claim::decided_by("p", "claim", comparison(rule)));
    m.precision = precision;
    loop {
        let scale = if tail && rng.random_range(0..10) == 0 {
            5.0
        } else {
            1.0
        };
        let log = ratio.ln() + sd * scale * normal(&mut rng);
        // Both sides move with the machine; only their ratio matters.
        let machine = 1e6 * (0.2 * normal(&mut rng)).exp();
        m.pairs.push(vec![machine * log.exp(), machine]);
        if m.done() {
            return m;
        }
    }
}

#[test]
fn a_five_percent_effect_under_ten_percent_noise_is_shown() {
    let rule = Rule::Above {
        shown: 1.0,
        contradicted: 0.98,
    };
    let most = *interval::LOOKS.last().unwrap();
    let mut shown = 0;
    for seed in 0..50 {
        let m = sequence(rule, 1.05, 0.10, false, seed, 1.0);
        assert_ne!(m.outcome(), Outcome::Contradicted, "seed {seed}");
        if m.outcome() == Outcome::Shown {
            shown += 1;
            assert!(
                m.pairs.len() <= most,
                "seed {seed}: {} pairs",
                m.pairs.len()
            );
        }
    }
    assert!(shown >= 45, "shown in {shown} of 50");
}

#[test]
fn no_effect_is_decided_inside_the_band() {
    let rule = Rule::Within {
        low: 0.95,
        high: 1.05,
    };
    let mut shown = 0;
    for seed in 0..50 {
        let m = sequence(rule, 1.0, 0.10, false, 100 + seed, 1.0);
        assert_ne!(m.outcome(), Outcome::Contradicted, "seed {seed}");
        shown += usize::from(m.outcome() == Outcome::Shown);
    }
    assert!(shown >= 45, "inside the band in {shown} of 50");
}

#[test]
fn an_effect_at_the_threshold_stays_inconclusive_until_the_most_pairs() {
    let rule = Rule::Above {
        shown: 1.05,
        contradicted: 1.05,
    };
    let most = *interval::LOOKS.last().unwrap();
    let mut undecided = 0;
    for seed in 0..50 {
        let m = sequence(rule, 1.05, 0.10, false, 200 + seed, 1.0);
        if m.outcome() == Outcome::Inconclusive {
            undecided += 1;
            assert_eq!(m.pairs.len(), most, "seed {seed} stopped early");
        }
    }
    assert!(undecided >= 45, "undecided in {undecided} of 50");
}

#[test]
fn an_undecided_part_says_when_its_centre_lies_between_the_thresholds() {
    let rule = Rule::Below {
        shown: 0.95,
        contradicted: 0.98,
    };
    // A centre between the thresholds: no count of pairs decides it.
    let between = sequence(rule, 0.965, 0.10, false, 300, 1.0);
    assert_eq!(between.outcome(), Outcome::Inconclusive);
    assert!(
        between.part().why.contains("lies between the thresholds"),
        "{}",
        between.part().why
    );
    // A clear effect cut short by noise: inconclusive, but more pairs would decide it.
    let mut noisy = Measured::new(Claim::decided_by("p", "claim", comparison(rule)));
    for k in 0..9 {
        let log = 0.80f64.ln() + if k % 2 == 0 { 0.4 } else { -0.4 };
        noisy.pairs.push(vec![log.exp(), 1.0]);
    }
    assert_eq!(noisy.outcome(), Outcome::Inconclusive);
    assert!(!noisy.part().why.contains("between the thresholds"));
}

#[test]
fn the_interval_covers_the_true_ratio_over_repeated_looks() {
    // Stopping as soon as a look decides is the case that breaks a naive interval.
    let rule = Rule::Above {
        shown: 1.02,
        contradicted: 1.0,
    };
    for tail in [false, true] {
        let trials = 400;
        let covered = (0..trials)
            .filter(|&seed| {
                let m = sequence(rule, 1.01, 0.08, tail, 1000 + seed, 1.0);
                let i = m.interval().unwrap();
                i.low <= 1.01 && 1.01 <= i.high
            })
            .count();
        assert!(
            covered as f64 >= 0.95 * trials as f64,
            "covered {covered} of {trials} (heavy tail: {tail})"
        );
    }
}

#[test]
fn precision_keeps_a_decided_comparison_going() {
    let rule = Rule::Above {
        shown: 1.0,
        contradicted: 0.98,
    };
    let loose = sequence(rule, 1.3, 0.06, false, 7, 1.0);
    let tight = sequence(rule, 1.3, 0.06, false, 7, 0.03);
    assert_eq!(loose.outcome(), Outcome::Shown);
    assert_eq!(loose.pairs.len(), interval::LOOKS[0]);
    assert!(tight.pairs.len() > loose.pairs.len());
    assert!(tight.interval().unwrap().half_width() <= 0.03);
}

#[test]
fn rules_read_intervals_as_they_say() {
    let above = Rule::Above {
        shown: 1.05,
        contradicted: 1.0,
    };
    assert_eq!(above.outcome(1.06, 1.2), Outcome::Shown);
    assert_eq!(above.outcome(0.8, 0.99), Outcome::Contradicted);
    assert_eq!(above.outcome(1.01, 1.04), Outcome::Inconclusive);
    assert_eq!(above.thresholds(), vec![1.0, 1.05]);
    let below = Rule::Below {
        shown: 0.95,
        contradicted: 1.0,
    };
    assert_eq!(below.outcome(0.8, 0.9), Outcome::Shown);
    assert_eq!(below.outcome(1.01, 1.1), Outcome::Contradicted);
    assert_eq!(below.outcome(0.9, 1.01), Outcome::Inconclusive);
    let within = Rule::Within {
        low: 0.97,
        high: 1.03,
    };
    assert_eq!(within.outcome(0.98, 1.02), Outcome::Shown);
    assert_eq!(within.outcome(1.05, 1.2), Outcome::Contradicted);
    assert_eq!(within.outcome(0.99, 1.05), Outcome::Inconclusive);
}

#[test]
fn a_side_may_be_a_ratio_of_two_cells() {
    // Design a's 2 threads over its 1 thread, against design b's.
    let c = Comparison::throughput(
        Side::ratio(CellRef::new("f", "a", 2, 2), CellRef::new("f", "a", 1, 2)),
        Side::ratio(CellRef::new("f", "b", 2, 2), CellRef::new("f", "b", 1, 2)),
        Rule::Below {
            shown: 0.9,
            contradicted: 0.97,
        },
    );
    assert_eq!(c.cells().len(), 4);
    // a scales 1.0x, b 2.0x: a's scaling is half b's.
    assert!((c.ratio_of(&[10.0, 10.0, 40.0, 20.0]) - 0.5).abs() < 1e-12);
}

#[test]
fn a_part_without_pairs_is_inconclusive_and_says_why() {
    let m = Measured::new(Claim::cannot("p", "claim", "needs more than 4 CPUs"));
    let p = m.part();
    assert_eq!(p.outcome, Outcome::Inconclusive);
    assert_eq!(p.why, "needs more than 4 CPUs");
    assert!(p.ratio.is_none());
    let json = serde_json::to_value(&p).unwrap();
    for key in [
        "name",
        "outcome",
        "ratio",
        "low",
        "high",
        "pairs",
        "thresholds",
        "seconds",
    ] {
        assert!(json.get(key).is_some(), "{key} missing from {json}");
    }
    assert_eq!(json["outcome"], "inconclusive");
}

#[test]
fn sides_name_only_the_parameters_that_tell_them_apart() {
    let cell = |v: &str, k: u64| {
        CellRef::new("f", v, 48, 2)
            .with("users", 6000)
            .with("slots", k)
    };
    let c = Comparison::throughput(
        Side::cell(cell("semaphore", 2)),
        Side::cell(cell("semaphore", 0)),
        Rule::Above {
            shown: 1.05,
            contradicted: 1.0,
        },
    );
    let text = c.sides_text();
    assert!(
        text.contains("slots=2") && text.contains("slots=0"),
        "{text}"
    );
    assert!(!text.contains("users"), "{text}");
}

/// The largest |W(n)/sqrt(n)| over the looks `looks` of a random walk W of standard
/// normal steps.
fn walk_maximum(rng: &mut SmallRng, looks: &[usize]) -> f64 {
    let (mut sum, mut at, mut most) = (0.0f64, 0usize, 0.0f64);
    for &n in looks {
        while at < n {
            sum += normal(rng);
            at += 1;
        }
        most = most.max(sum.abs() / (n as f64).sqrt());
    }
    most
}

#[test]
fn pocock_boundary_of_the_schedule() {
    // The constant each schedule uses is the 95th percentile of the walk's maximum over
    // its looks; a schedule change without a new constant fails here.
    for looks in [interval::Looks::All, interval::Looks::Budgeted] {
        let mut rng = SmallRng::seed_from_u64(42);
        let mut maxima: Vec<f64> = (0..40_000)
            .map(|_| walk_maximum(&mut rng, looks.counts()))
            .collect();
        maxima.sort_by(f64::total_cmp);
        let z = maxima[(0.95 * maxima.len() as f64) as usize];
        assert!(
            (z - looks.z()).abs() < 0.03,
            "{looks:?}: the schedule's boundary is {z:.3}, the constant {}",
            looks.z()
        );
    }
    assert_eq!(interval::Looks::All.z(), interval::POCOCK_Z);
    // A run with a budget stops at a look of the whole schedule, so a results file's
    // parts read the same looks whichever schedule took them.
    assert!(interval::LOOKS.starts_with(interval::Looks::Budgeted.counts()));
}

#[test]
fn a_size_looked_at_once_covers_at_its_level_and_is_narrower_than_a_deciding_part() {
    // A size's pairs stop at their fixed count whatever they say, so its interval is at
    // 95% itself. Seeded, 2000 sets of seven pairs a noise kind: a standard error of
    // about half a point, so 93% leaves four of them for the heavy tail and the drift.
    let rule = Rule::Above {
        shown: 1.02,
        contradicted: 1.0,
    };
    let size = |pairs: Vec<Vec<f64>>| {
        let mut m = Measured::new(Claim::decided_by("p", "claim", comparison(rule)).sized());
        m.pairs = pairs;
        m
    };
    assert_eq!(size(Vec::new()).looks, interval::Looks::Once);
    for kind in 0..3 {
        let trials = 2000;
        let mut covered = 0;
        for seed in 0..trials {
            let mut rng = SmallRng::seed_from_u64(9000 + seed + 10_000 * kind as u64);
            let mut phase = 0.0;
            let pairs = (0..interval::ONCE_PAIRS)
                .map(|_| {
                    let log = 1.01f64.ln() + noisy_log(kind, &mut rng, &mut phase);
                    vec![1e6 * log.exp(), 1e6]
                })
                .collect();
            let i = size(pairs)
                .interval()
                .expect("seven pairs give an interval");
            covered += usize::from(i.low <= 1.01 && 1.01 <= i.high);
        }
        assert!(
            covered as f64 >= 0.93 * trials as f64,
            "noise kind {kind}: covered in {covered} of {trials}"
        );
    }
    // The same nine pairs, as a size and as a deciding part of every look.
    let pairs: Vec<Vec<f64>> = (0..9)
        .map(|i| vec![1e6 * (1.0 + 0.01 * (i as f64 - 4.0)), 1e6])
        .collect();
    let once = size(pairs.clone()).interval().unwrap();
    let mut deciding = Measured::new(Claim::decided_by("p", "claim", comparison(rule)));
    deciding.pairs = pairs;
    let every = deciding.interval().unwrap();
    assert!(
        once.half_width() < every.half_width(),
        "{once} against {every}"
    );
    // A part from a results file that kept no schedule is judged at every look, as the
    // run that wrote it judged it.
    let mut old = serde_json::to_value(size(Vec::new())).unwrap();
    old.as_object_mut().unwrap().remove("looks");
    let old: Measured = serde_json::from_value(old).unwrap();
    assert_eq!(old.looks, interval::Looks::All);
}

/// A pair's log ratio for noise `kind`: i.i.d. normal, heavy-tailed (one pair in ten five
/// times as noisy), or each side on a host phase that drifts as an AR(1) (0.9 a window),
/// which the two sides of a pair, run back to back, share only in part.
fn noisy_log(kind: usize, rng: &mut SmallRng, phase: &mut f64) -> f64 {
    match kind {
        0 => 0.08 * normal(rng),
        1 => {
            let scale = if rng.random_range(0..10) == 0 {
                5.0
            } else {
                1.0
            };
            0.08 * scale * normal(rng)
        }
        _ => {
            let mut side = || {
                *phase = 0.9 * *phase + 0.06 * normal(rng);
                *phase + 0.05 * normal(rng)
            };
            side() - side()
        }
    }
}

#[test]
fn every_look_together_misses_at_most_five_percent() {
    // The guarantee the interval claims: over all nine looks of one sequence, the chance
    // that any look's interval misses the true ratio is at most 5%. Seeded, so the
    // figure is the same every run; 400 sequences a noise kind give a standard error of
    // about 1.1 points, so 8% leaves three of them for the approximation's error.
    let rule = Rule::Above {
        shown: 1.02,
        contradicted: 1.0,
    };
    let most = *interval::LOOKS.last().unwrap();
    for kind in 0..3 {
        let trials = 400;
        let mut missed = 0;
        for seed in 0..trials {
            let mut rng = SmallRng::seed_from_u64(5000 + seed + 1000 * kind as u64);
            let mut m = Measured::new(Claim::decided_by("p", "claim", comparison(rule)));
            let mut phase = 0.0;
            let mut miss = false;
            while m.pairs.len() < most {
                let log = 1.01f64.ln() + noisy_log(kind, &mut rng, &mut phase);
                m.pairs.push(vec![1e6 * log.exp(), 1e6]);
                if interval::is_look(m.pairs.len()) {
                    let i = m.interval().unwrap();
                    miss |= !(i.low <= 1.01 && 1.01 <= i.high);
                }
            }
            missed += usize::from(miss);
        }
        assert!(
            missed as f64 <= 0.08 * trials as f64,
            "noise kind {kind}: some look missed in {missed} of {trials}"
        );
    }
}

/// A part whose side `a` ran `stalled` of 16 windows with the machine at 1.40 busy CPUs
/// against 1.96 in the others (as 389 DS's 2-thread windows did when a worker waited out
/// a 100 ms poll), side `b` always busy.
fn with_stalls(stalled: usize) -> Measured {
    let mut m = Measured::new(Claim::decided_by(
        "p",
        "claim",
        comparison(Rule::Above {
            shown: 1.05,
            contradicted: 1.02,
        }),
    ));
    for k in 0..16 {
        let a = if k < stalled { 1.40 } else { 1.96 };
        m.push(
            vec![1.1e4 * (1.0 + 0.01 * (k % 3) as f64), 1e4],
            vec![a, 1.97],
        );
    }
    m
}

#[test]
fn windows_that_ran_the_machine_well_below_their_usual_are_said() {
    let said = with_stalls(3)
        .stalls()
        .expect("three stalled windows are said");
    assert!(
        said.starts_with("3 of 16 windows of `a` 1 threads"),
        "{said}"
    );
    assert!(
        said.contains("1.40-1.40 busy CPUs against its usual 1.96"),
        "{said}"
    );
    // Only side a stalled: side b is not named.
    assert!(!said.contains("`b`"), "{said}");
    // The part says it apart from why it stopped, which answers quote.
    let part = with_stalls(3).part();
    assert_eq!(part.stalls, said);
    assert!(!part.why.contains("stalled"), "{}", part.why);
    // One stalled window could be a miscounted tick: not said; nor where no window read.
    assert_eq!(with_stalls(1).stalls(), None);
    assert_eq!(with_stalls(0).stalls(), None);
    let mut unread = with_stalls(3);
    unread.busy.clear();
    assert_eq!(unread.stalls(), None);
    assert_eq!(unread.part().stalls, "");
    // Pairs kept before busy CPUs were (a resumed file) are padded: the next pairs count.
    let mut resumed = Measured::new(with_stalls(0).claim);
    resumed.pairs = vec![vec![1.1e4, 1e4]; 4];
    for k in 0..16 {
        let a = if k < 3 { 1.40 } else { 1.96 };
        resumed.push(vec![1.1e4, 1e4], vec![a, 1.97]);
    }
    let said = resumed
        .stalls()
        .expect("the pairs after the resume are read");
    assert!(said.starts_with("3 of 16 windows"), "{said}");
    // At a hundred windows two stalls are too few to be the server's habit; five are not.
    let mut many = Measured::new(with_stalls(0).claim);
    for k in 0..100 {
        let a = if k < 2 {
            1.40
        } else if k < 5 {
            1.42
        } else {
            1.96
        };
        many.push(vec![1.1e4, 1e4], vec![a, 1.97]);
    }
    assert!(many.stalls().unwrap().starts_with("5 of 100"));
    many.busy[2][0] = 1.96;
    many.busy[3][0] = 1.96;
    many.busy[4][0] = 1.96;
    assert_eq!(many.stalls(), None);
    // A cell that leaves its cores idle by design (a paced load: 0.37 of its 1 core) is
    // not judged, however its few busy CPUs move.
    let mut paced = with_stalls(0);
    for b in paced.busy.iter_mut() {
        b[0] = 0.37;
    }
    for b in paced.busy.iter_mut().take(3) {
        b[0] = 0.28;
    }
    assert_eq!(paced.stalls(), None);
}

#[test]
fn a_placebos_stalls_name_the_side_that_stalled() {
    let cell = || Side::cell(CellRef::new("f", "a", 2, 2));
    let mut m = Measured::new(Claim::decided_by(
        "placebo",
        "claim",
        Comparison::throughput(
            cell(),
            cell(),
            Rule::Within {
                low: 0.97,
                high: 1.03,
            },
        ),
    ));
    for k in 0..16 {
        let b = if k < 3 { 1.40 } else { 1.96 };
        m.push(vec![1e4, 1e4], vec![1.96, b]);
    }
    let said = m.stalls().unwrap();
    assert!(said.contains("as side b"), "{said}");
    assert!(!said.contains("as side a"), "{said}");
}

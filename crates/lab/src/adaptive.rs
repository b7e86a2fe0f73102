//! The adaptive stop: after its planned repetitions, a cell whose 95% interval is still
//! wider than ±[`TARGET_HALF_WIDTH`] of its median gets more, at most [`EXTRA_ROUNDS`],
//! in extra rounds at the end of the matrix (shuffled like the others).
//!
//! Why: the order-statistics interval of the median is min-max up to 8 repetitions, so
//! one repetition hit by something else sets it; a 9th already leaves both extremes out
//! (`harness::stats::median_ci`). Extra repetitions go only where they narrow something:
//! a cell that is already tight costs nothing more.
//!
//! Not for modes that plan fewer than [`MIN_PLANNED`] repetitions (quick and smoke run
//! one): they ask for a glance, not an interval.

use harness::Repetition;

/// Half-width of the interval, as a share of the median, that a cell need not beat.
pub const TARGET_HALF_WIDTH: f64 = 0.05;

/// Extra repetitions per cell at most, so the matrix's time stays bounded: two take 8
/// planned repetitions to 10, whose interval is the 2nd to the 9th value.
pub const EXTRA_ROUNDS: usize = 2;

/// Fewest planned repetitions for which extra ones are added.
pub const MIN_PLANNED: usize = 5;

/// Whether a cell with `reps` so far, `planned` of them planned, gets one more.
pub fn wants_more(reps: &[Repetition], planned: usize) -> bool {
    if planned < MIN_PLANNED || reps.len() < planned || reps.len() >= planned + EXTRA_ROUNDS {
        return false;
    }
    let Some(merged) = harness::CellRecord::merge_repetitions(reps) else {
        return false;
    };
    if !merged.usable() || merged.ops_per_sec <= 0.0 {
        return false;
    }
    let (low, high) = merged.ops_ci();
    (high - low) / 2.0 / merged.ops_per_sec > TARGET_HALF_WIDTH
}

/// How many cells get a repetition in extra round `rep` (0-based over all rounds): those
/// that have had every round so far and whose interval is still wide.
pub fn wide_cells(reps: &[Vec<Repetition>], planned: &[usize], rep: usize) -> usize {
    reps.iter()
        .zip(planned)
        .filter(|(r, &p)| r.len() == rep && wants_more(r, p))
        .count()
}

/// The log line of extra round `extra` (0-based).
pub fn round_line(extra: usize, cells: usize) -> String {
    format!(
        "extra round {}/{EXTRA_ROUNDS}: {cells} cell(s) whose interval is wider than ±{:.0}%",
        extra + 1,
        TARGET_HALF_WIDTH * 100.0
    )
}

/// The terminal's line about extra repetitions, when there were any.
pub fn total_line(extra: usize) -> Option<String> {
    (extra > 0).then(|| {
        format!(
            "extra repetitions: {extra}, for cells whose interval was wider than ±{:.0}% after their planned ones",
            TARGET_HALF_WIDTH * 100.0
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reps(values: &[f64]) -> Vec<Repetition> {
        values
            .iter()
            .map(|&ops| {
                let mut r = crate::retake::tests::attempt(0.0);
                r.ops_per_sec = ops;
                r.ops_per_sec_min = ops;
                r.ops_per_sec_max = ops;
                r.ops_per_sec_reps = vec![ops];
                r
            })
            .collect()
    }

    #[test]
    fn a_wide_cell_gets_at_most_two_more_and_a_tight_one_none() {
        let mut wide = vec![100.0, 101.0, 99.0, 100.5, 99.5, 100.2, 99.8, 60.0];
        assert!(
            wants_more(&reps(&wide), 8),
            "one outlier among 8 sets min-max"
        );
        wide.push(100.1);
        // The 9th leaves the outlier out: tight now, no 10th.
        assert!(!wants_more(&reps(&wide), 8));
        let noisy = [100.0, 130.0, 70.0, 115.0, 85.0, 120.0, 80.0, 100.0];
        assert!(wants_more(&reps(&noisy), 8));
        assert!(wants_more(&reps(&[&noisy[..], &[100.0]].concat()), 8));
        assert!(!wants_more(
            &reps(&[&noisy[..], &[100.0, 100.0]].concat()),
            8
        ));
        // Not yet at the planned count, or a mode of single repetitions: no.
        assert!(!wants_more(&reps(&noisy[..4]), 8));
        assert!(!wants_more(&reps(&[100.0]), 1));
    }
}

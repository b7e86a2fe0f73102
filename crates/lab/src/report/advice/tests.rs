//! Thread advice and USL rows on synthetic cells.

use super::*;
use harness::schema::{CellKey, CellStatus};

/// A usable cell whose repetitions are `reps`.
fn cell(variant: &str, threads: usize, cores: usize, reps: &[f64]) -> CellRecord {
    let key = CellKey {
        hot_path: "lookup".into(),
        variant: variant.into(),
        params: Default::default(),
        threads,
        cores,
    };
    let mut r = CellRecord::failed(&key, "0-1", "x");
    r.status = CellStatus::Ok;
    r.failure = None;
    r.verified = true;
    r.repeats = reps.len();
    r.ops_per_sec = harness::stats::median(reps);
    r.ops_per_sec_reps = reps.to_vec();
    let ci = harness::stats::median_ci(reps);
    r.ops_per_sec_ci = [ci.low, ci.high];
    r.per_thread_ops_per_sec = r.ops_per_sec / threads as f64;
    r
}

/// Six repetitions within ±1% of `ops`.
fn six(ops: f64) -> Vec<f64> {
    [-1.0, -0.6, -0.2, 0.2, 0.6, 1.0]
        .iter()
        .map(|d| ops * (1.0 + d / 100.0))
        .collect()
}

#[test]
fn recommends_the_smallest_count_within_the_noise_of_the_best() {
    let mut two = cell("m", 2, 2, &six(190.0));
    two.efficiency = Some(0.95);
    // 4 threads are best in the median, but 2 threads' interval overlaps theirs.
    let wide: Vec<f64> = [180.0, 186.0, 190.0, 194.0, 198.0, 202.0].to_vec();
    let cells = [
        cell("m", 1, 2, &six(100.0)),
        two,
        cell("m", 4, 2, &wide),
        cell("m", 8, 2, &six(150.0)),
        cell("other", 1, 2, &six(1.0)),
    ];
    let refs: Vec<&CellRecord> = cells.iter().collect();
    let a = thread_advice(&refs, "m", 2).unwrap();
    assert_eq!(a.best.threads, 4);
    assert_eq!(a.recommended.threads, 2);
    assert_eq!(a.at_cores.map(|p| p.threads), Some(2));
    assert_eq!(a.efficiency_at_cores, Some(0.95));
    assert_eq!(a.largest.map(|p| p.threads), Some(8));
    assert!((a.oversubscription.unwrap() - 150.0 / 190.0).abs() < 1e-9);
    assert!(a.min_coverage >= 0.95);
    let s = thread_sentence(&a);
    assert!(
        s.starts_with("m on 2 cores: run 2 threads: 190 ops/s"),
        "{s}"
    );
    assert!(s.contains("at 4 threads (the intervals overlap)"), "{s}");
    assert!(
        s.contains("scales almost linearly: each thread does 0.95"),
        "{s}"
    );
    assert!(
        s.contains("8 threads cost 21% of the throughput against 2 (0.79x)"),
        "{s}"
    );
    assert!(!s.contains("coverage"), "{s}");

    // Different numbers, different words: a clear winner and a cheap oversubscription.
    let cells = [
        cell("m", 1, 2, &six(100.0)),
        cell("m", 2, 2, &six(130.0)),
        cell("m", 8, 2, &six(131.0)),
    ];
    let refs: Vec<&CellRecord> = cells.iter().collect();
    let a = thread_advice(&refs, "m", 2).unwrap();
    assert_eq!(a.recommended.threads, 2, "8's interval overlaps 2's");
    let s = thread_sentence(&a);
    assert!(
        s.contains("8 threads change little against 2 (1.01x, within the noise"),
        "{s}"
    );
    assert!(
        thread_advice(&refs[..1], "m", 2).is_none(),
        "one count: no choice"
    );
}

#[test]
fn few_repetitions_are_said() {
    let cells = [
        cell("m", 1, 1, &[100.0, 104.0]),
        cell("m", 2, 1, &[90.0, 91.0]),
    ];
    let refs: Vec<&CellRecord> = cells.iter().collect();
    let s = thread_sentence(&thread_advice(&refs, "m", 1).unwrap());
    assert!(s.starts_with("m on 1 core: run 1 thread:"), "{s}");
    assert!(s.contains("more threads add nothing"), "{s}");
    assert!(
        s.contains("as few as 2 repetition(s) (50% coverage, not 95%)"),
        "{s}"
    );
}

#[test]
fn usl_refuses_points_past_the_cores() {
    // Six thread counts but only 1 and 2 in-core: no fit, whatever the rest show.
    let cells: Vec<CellRecord> = [1, 2, 4, 6, 8, 12]
        .iter()
        .map(|&t| cell("m", t, 2, &six(100.0 * (t.min(2) as f64))))
        .collect();
    let refs: Vec<&CellRecord> = cells.iter().collect();
    let row = usl_row(&refs, "m", 2);
    assert!(row.fit.is_err() && !row.advises);
    assert_eq!(row.levels, vec![1, 2]);
    assert!(
        row.sentence
            .contains("2 in-core point(s) (threads 1, 2) on this 2-core machine"),
        "{}",
        row.sentence
    );
    let row = usl_row(&refs, "m", 64);
    assert!(
        row.sentence.contains("with at most 2 core(s) measured"),
        "{}",
        row.sentence
    );
}

#[test]
fn usl_across_core_counts_and_a_poor_fit_gives_no_advice() {
    // threads = cores at 1, 2, 4 and 8 cores: four in-core levels across core counts,
    // zig-zagging so that no USL curve fits them.
    let cells: Vec<CellRecord> = [(1, 100.0), (2, 400.0), (4, 150.0), (8, 500.0)]
        .iter()
        .map(|&(n, x)| cell("m", n, n, &six(x)))
        .collect();
    let refs: Vec<&CellRecord> = cells.iter().collect();
    let row = usl_row(&refs, "m", 8);
    assert_eq!(row.basis, "threads = cores across core counts");
    assert_eq!(row.levels, vec![1, 2, 4, 8]);
    let fit = row.fit.as_ref().unwrap();
    assert!(fit.r_squared < MIN_R_SQUARED);
    assert!(!row.advises);
    assert!(
        row.sentence.starts_with("No advice from the USL: R² = "),
        "{}",
        row.sentence
    );
}

#[test]
fn interval_text_says_when_it_is_min_max() {
    assert_eq!(ci_text(&cell("m", 1, 1, &six(1000.0))), "95% CI 990–1.01k");
    assert_eq!(
        ci_text(&cell("m", 1, 1, &[900.0, 1000.0, 1100.0])),
        "min–max 900–1.10k (n = 3)"
    );
    let md = markdown_cell(Some(&cell("m", 4, 2, &[900.0, 1000.0, 1100.0])));
    assert_eq!(md, "1.00k [900–1.10k]/250\\*");
    assert_eq!(markdown_cell(None), "-");
}

/// A USL curve with its peak inside 8 cores: rising to 4 threads, then falling.
fn peaked(reps: usize, fall: f64) -> Vec<CellRecord> {
    [
        (1, 100.0),
        (2, 180.0),
        (4, 250.0),
        (6, 250.0 - fall / 2.0),
        (8, 250.0 - fall),
    ]
    .iter()
    .map(|&(n, x)| cell("m", n, 8, &six(x)[..reps]))
    .collect()
}

#[test]
fn usl_advice_needs_five_repetitions_a_level_and_a_drop_beyond_the_noise() {
    let three = peaked(3, 60.0);
    let refs: Vec<&CellRecord> = three.iter().collect();
    let row = usl_row(&refs, "m", 8);
    assert!(row.intervals.is_none() && !row.advises, "{}", row.sentence);
    assert!(
        row.sentence.contains("too few to resample"),
        "{}",
        row.sentence
    );
    // Six repetitions and a fall of a quarter past the peak: advice.
    let falls = peaked(6, 60.0);
    let refs: Vec<&CellRecord> = falls.iter().collect();
    let row = usl_row(&refs, "m", 8);
    assert!(row.advises, "{}", row.sentence);
}

//! The Universal Scalability Law fit of a group's in-core points, with bootstrap intervals
//! and advice only where the fit earns it. Returns data (`UslRow`); `render` lays it out.

use harness::usl::{self, Level, UslFit, UslIntervals};
use harness::CellRecord;
use rayon::prelude::*;

use super::super::Group;
use super::usable_at;

/// Least R² for which a USL fit may advise.
pub const MIN_R_SQUARED: f64 = 0.9;

/// A USL fit of one variant, or why there is none.
#[derive(Debug, Clone, PartialEq)]
pub struct UslRow {
    /// Variant.
    pub variant: String,
    /// Which points were fitted, e.g. `threads 1-8 at 8 cores`.
    pub basis: String,
    /// The core count the advice is for (the largest of the basis).
    pub cores: usize,
    /// Concurrency levels fitted.
    pub levels: Vec<usize>,
    /// The fit of the levels' medians, or why there is none.
    pub fit: Result<UslFit, String>,
    /// Bootstrap intervals, when the repetitions allow them.
    pub intervals: Option<UslIntervals>,
    /// Thread count with the highest measured throughput at `cores`.
    pub best_measured: Option<usize>,
    /// Whether `sentence` advises (R² >= 0.9 and N*'s interval bounded).
    pub advises: bool,
    /// The advice, or why there is none.
    pub sentence: String,
}

/// In-core candidate data sets of `variant`: per core count, threads <= cores at that
/// count; and threads = cores across core counts. As (basis, cores, cells).
fn candidates<'a>(
    all: &[&'a CellRecord],
    variant: &str,
) -> Vec<(String, usize, Vec<&'a CellRecord>)> {
    let usable = |c: &&&CellRecord| c.variant == variant && c.usable();
    let mut core_counts: Vec<usize> = all.iter().map(|c| c.cores).collect();
    core_counts.sort_unstable();
    core_counts.dedup();
    let mut out = Vec::new();
    if core_counts.len() > 1 {
        let mut cells: Vec<&CellRecord> = all
            .iter()
            .filter(usable)
            .filter(|c| c.threads == c.cores)
            .copied()
            .collect();
        cells.sort_by_key(|c| c.threads);
        let cores = cells.iter().map(|c| c.cores).max().unwrap_or(0);
        out.push((
            "threads = cores across core counts".to_owned(),
            cores,
            cells,
        ));
    }
    for cores in core_counts {
        let mut cells: Vec<&CellRecord> = all
            .iter()
            .filter(usable)
            .filter(|c| c.cores == cores && c.threads <= cores)
            .copied()
            .collect();
        cells.sort_by_key(|c| c.threads);
        out.push((format!("threads <= cores at {cores} core(s)"), cores, cells));
    }
    out
}

pub(super) fn list(levels: &[usize]) -> String {
    levels
        .iter()
        .map(|l| l.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The USL row of every variant of `g`; `nproc` is the CPUs of the machine that ran it.
pub fn usl_rows(g: &Group<'_>, nproc: usize) -> Vec<UslRow> {
    g.variants
        .iter()
        .map(|v| usl_row(&g.cells, v, nproc))
        .collect()
}

/// The USL row of `variant` among a group's `cells`; `nproc` is the CPUs of the machine
/// that ran them.
pub fn usl_row(all: &[&CellRecord], variant: &str, nproc: usize) -> UslRow {
    // The candidate with most levels; ties go to the later one, the most cores.
    let (basis, cores, cells) = candidates(all, variant)
        .into_iter()
        .fold(
            None,
            |best: Option<(String, usize, Vec<&CellRecord>)>, c| match &best {
                Some(b) if b.2.len() > c.2.len() => best,
                _ => Some(c),
            },
        )
        .unwrap_or_default();
    let levels: Vec<usize> = cells.iter().map(|c| c.threads).collect();
    let best_measured = usable_at(all, variant, cores)
        .into_iter()
        .max_by(|a, b| a.ops_per_sec.total_cmp(&b.ops_per_sec))
        .map(|c| c.threads);
    let mut row = UslRow {
        variant: variant.to_owned(),
        basis,
        cores,
        levels: levels.clone(),
        fit: Err(String::new()),
        intervals: None,
        best_measured,
        advises: false,
        sentence: String::new(),
    };
    if levels.len() < usl::MIN_POINTS {
        row.fit = Err(format!(
            "{} in-core point(s), need {}",
            levels.len(),
            usl::MIN_POINTS
        ));
        row.sentence = too_few_points(all, &levels, nproc);
        return row;
    }
    let lv: Vec<Level> = cells
        .iter()
        .map(|c| Level {
            n: c.threads as f64,
            samples: if c.ops_per_sec_reps.is_empty() {
                vec![c.ops_per_sec]
            } else {
                c.ops_per_sec_reps.clone()
            },
        })
        .collect();
    let fit = match usl::fit(&usl::medians(&lv)) {
        Ok(f) => f,
        Err(why) => {
            row.sentence = format!("No USL fit: {why}.");
            row.fit = Err(why);
            return row;
        }
    };
    row.fit = Ok(fit);
    let fewest = lv.iter().map(|l| l.samples.len()).min().unwrap_or(0);
    // A 95% interval from two repetitions a level is a resample of noise: the same
    // threshold as every other comparison the report makes.
    if fewest >= verdict::judge::MIN_REPS.max(usl::MIN_SAMPLES_PER_LEVEL) {
        let fits: Vec<UslFit> = (0..usl::BOOTSTRAP_RESAMPLES)
            .into_par_iter()
            .filter_map(|i| usl::bootstrap_one(&lv, &fit, i))
            .collect();
        row.intervals = UslIntervals::from_fits(&fits);
    }
    let max_level = *levels.last().expect("4 levels") as f64;
    (row.sentence, row.advises) = verdict(&fit, row.intervals, fewest, max_level, cores, &cells);
    row
}

/// Why there is no fit with too few in-core points, and what would give one.
fn too_few_points(all: &[&CellRecord], levels: &[usize], nproc: usize) -> String {
    let max_cores = all.iter().map(|c| c.cores).max().unwrap_or(0);
    let machine = if max_cores == nproc {
        format!("on this {nproc}-core machine")
    } else {
        format!("with at most {max_cores} core(s) measured")
    };
    format!(
        "No USL fit: {} in-core point(s) (threads {}) {machine}, and the law needs at least {} distinct thread counts at or below the core count; points past the cores measure the CPU limit, not contention. Run on more cores, or merge results from a larger machine with `lab report a.json b.json`.",
        levels.len(),
        if levels.is_empty() { "none".to_owned() } else { list(levels) },
        usl::MIN_POINTS
    )
}

/// What a fit says, and whether it advises: advice only where R² is high enough, N* has
/// a bounded interval and, within the cores, the measured drop past it is beyond the
/// noise.
fn verdict(
    fit: &UslFit,
    intervals: Option<UslIntervals>,
    fewest: usize,
    max_level: f64,
    cores: usize,
    cells: &[&CellRecord],
) -> (String, bool) {
    if fit.r_squared < MIN_R_SQUARED {
        return (format!(
            "No advice from the USL: R² = {:.2}, below {MIN_R_SQUARED}, so the law does not describe these {} points; go by the measured thread advice.",
            fit.r_squared,
            cells.len()
        ), false);
    }
    let sentence = match intervals {
        None => format!(
            "No advice from the USL: {fewest} repetition(s) at some thread count are too few to resample (it needs {}), so N* has no interval; rerun with repeats={} or more.",
            verdict::judge::MIN_REPS,
            verdict::judge::MIN_REPS
        ),
        Some(ci) if !ci.peak_bounded(max_level) => format!(
            "No advice from the USL: N*'s 95% interval ({} to {}) is unbounded, so these points place no peak (κ may be 0); σ = {:.3} [{:.3}–{:.3}].",
            fmt_peak(ci.peak.0),
            fmt_peak(ci.peak.1),
            fit.sigma,
            ci.sigma.0,
            ci.sigma.1
        ),
        Some(ci) if ci.peak.1 <= cores as f64 && !drop_measured(cells) => format!(
            "No advice from the USL: N* = {} lies within the {cores} core(s) measured, but the measured throughput past it does not fall beyond the noise; go by the measured thread advice.",
            peak_text(fit)
        ),
        Some(ci) => return (usl_advice(fit, &ci, cores), true),
    };
    (sentence, false)
}

/// Whether the fitted points fall after their best one beyond the noise: the largest
/// thread count's interval lies below the best cell's, with enough repetitions to judge.
fn drop_measured(cells: &[&CellRecord]) -> bool {
    use verdict::judge::Est;
    let best = cells
        .iter()
        .max_by(|a, b| a.ops_per_sec.total_cmp(&b.ops_per_sec));
    match (best, cells.last()) {
        (Some(best), Some(last)) if best.threads < last.threads => {
            Est::of(last).below(&Est::of(best)) == Some(true)
        }
        _ => false,
    }
}

/// N* unrounded, or `none (κ = 0)`.
pub(super) fn peak_text(fit: &UslFit) -> String {
    let n = fit.peak_concurrency();
    if n.is_finite() {
        format!("{n:.1}")
    } else {
        "none (κ = 0)".to_owned()
    }
}

fn fmt_peak(n: f64) -> String {
    if n.is_finite() {
        format!("{n:.1}")
    } else {
        "∞".to_owned()
    }
}

/// The USL's advice for a fit that earned it.
fn usl_advice(fit: &UslFit, ci: &UslIntervals, cores: usize) -> String {
    // The better of the two whole thread counts around the continuous peak.
    let n = fit.peak_concurrency();
    let (below, above) = (n.floor().max(1.0), n.ceil().max(1.0));
    let peak = if fit.throughput(above) > fit.throughput(below) {
        above
    } else {
        below
    } as usize;
    let (lo, hi) = ci.peak;
    let range = format!(
        "N* = {:.1} (95% interval {lo:.1}–{hi:.1})",
        fit.peak_concurrency()
    );
    if hi <= cores as f64 {
        format!(
            "{range} lies within the {cores} core(s) measured: run about {peak} worker thread(s); past that each added thread slows the rest (κ = {:.2e}).",
            fit.kappa
        )
    } else if lo > cores as f64 {
        format!(
            "{range} lies beyond the {cores} core(s) measured: throughput still rises at threads = cores, so run one worker thread per core ({cores}); the fit expects more cores to help up to about {peak}."
        )
    } else {
        format!(
            "{range} straddles the {cores} core(s) measured: run {} worker thread(s) and measure around it before going further.",
            peak.min(cores)
        )
    }
}

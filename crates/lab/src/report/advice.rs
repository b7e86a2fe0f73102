//! Advice a reader can act on, drawn from the measured figures and their 95% intervals:
//!
//! - thread advice per variant and core count ([`thread_advice`]): the smallest thread
//!   count whose interval overlaps the best cell's, the cost of oversubscription and the
//!   per-thread efficiency at threads = cores, and one sentence worded from those numbers
//!   ([`thread_sentence`]);
//! - the Universal Scalability Law only where it applies ([`usl_rows`]): in-core points
//!   (threads <= cores, or threads = cores across core counts), at least 4 of them,
//!   bootstrap intervals for σ, κ and N* (resampled in parallel with rayon: `lab report`
//!   runs this, never a measuring child), and advice only when R² >= 0.9 and N*'s
//!   interval is bounded; otherwise a sentence saying why there is none.
//!
//! Each piece is data plus a sentence builder, so that a page can place them where it
//! likes; [`html_section`] and [`markdown_section`] are the group-level renderings. Not
//! here: the matrix tables and charts (see `html`, `summary` and `charts`).

use super::markup::esc;
use std::fmt::Write;

use harness::usl::{self, Level, UslFit, UslIntervals};
use harness::RunRecord;
use rayon::prelude::*;

use super::Group;
use crate::table::si;

/// Least R² for which a USL fit may advise.
pub const MIN_R_SQUARED: f64 = 0.9;

/// A measured cell reduced to what advice needs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// Worker threads.
    pub threads: usize,
    /// Median ops/s.
    pub ops: f64,
    /// Its interval, (low, high).
    pub ci: (f64, f64),
}

impl Point {
    fn of(r: &RunRecord) -> Point {
        Point {
            threads: r.threads,
            ops: r.ops_per_sec,
            ci: r.ops_ci(),
        }
    }

    fn overlaps(&self, other: &Point) -> bool {
        self.ci.0 <= other.ci.1 && other.ci.0 <= self.ci.1
    }

    fn text(&self) -> String {
        format!(
            "{} ops/s [{}–{}]",
            si(self.ops),
            si(self.ci.0),
            si(self.ci.1)
        )
    }
}

/// Thread advice for one variant at one core count, from measured cells only.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadAdvice {
    /// Variant.
    pub variant: String,
    /// Core count.
    pub cores: usize,
    /// The cell with the highest median.
    pub best: Point,
    /// The smallest thread count whose interval overlaps `best`'s.
    pub recommended: Point,
    /// The smallest thread count measured.
    pub smallest: usize,
    /// The cell at threads = cores, when measured.
    pub at_cores: Option<Point>,
    /// Its efficiency: ops / (cores x ops at 1 thread), when both were measured.
    pub efficiency_at_cores: Option<f64>,
    /// The cell with the most threads, when that is more than the cores.
    pub largest: Option<Point>,
    /// Throughput at the largest thread count / throughput at threads = cores.
    pub oversubscription: Option<f64>,
    /// Fewest repetitions behind any cell used.
    pub min_repeats: usize,
    /// Lowest coverage of the intervals used (below 0.95 with fewer than 6 repetitions).
    pub min_coverage: f64,
}

/// The usable cells of `variant` at `cores` among `cells`, ascending in threads.
fn usable_at<'a>(cells: &[&'a RunRecord], variant: &str, cores: usize) -> Vec<&'a RunRecord> {
    let mut out: Vec<&RunRecord> = cells
        .iter()
        .filter(|c| c.variant == variant && c.cores == cores && c.usable())
        .copied()
        .collect();
    out.sort_by_key(|c| c.threads);
    out
}

/// Thread advice for `variant` at `cores` from a group's `cells` (one scenario and
/// parameter set); `None` with fewer than two usable thread counts (nothing to choose
/// between).
pub fn thread_advice(cells: &[&RunRecord], variant: &str, cores: usize) -> Option<ThreadAdvice> {
    let cells = usable_at(cells, variant, cores);
    if cells.len() < 2 {
        return None;
    }
    let points: Vec<Point> = cells.iter().map(|c| Point::of(c)).collect();
    let best = *points
        .iter()
        .max_by(|a, b| a.ops.total_cmp(&b.ops))
        .expect("two cells");
    // `points` ascend in threads, so the first overlap is the smallest.
    let recommended = *points
        .iter()
        .find(|p| p.overlaps(&best))
        .expect("best overlaps itself");
    let at_cells = cells.iter().find(|c| c.threads == cores);
    let at_cores = at_cells.map(|c| Point::of(c));
    let largest = points.last().copied().filter(|p| p.threads > cores);
    let oversubscription = match (largest, at_cores) {
        (Some(l), Some(c)) if c.ops > 0.0 => Some(l.ops / c.ops),
        _ => None,
    };
    Some(ThreadAdvice {
        variant: variant.to_owned(),
        cores,
        best,
        recommended,
        smallest: points[0].threads,
        at_cores,
        efficiency_at_cores: at_cells.and_then(|c| c.efficiency),
        largest,
        oversubscription,
        min_repeats: cells.iter().map(|c| reps_of(c)).min().unwrap_or(0),
        min_coverage: cells
            .iter()
            .map(|c| c.ops_ci_coverage())
            .fold(1.0, f64::min),
    })
}

fn reps_of(r: &RunRecord) -> usize {
    if r.ops_per_sec_reps.is_empty() {
        r.repeats
    } else {
        r.ops_per_sec_reps.len()
    }
}

/// Thread advice for every variant and core count of `g`.
pub fn thread_advice_all(g: &Group<'_>) -> Vec<ThreadAdvice> {
    g.variants
        .iter()
        .flat_map(|v| {
            g.cores
                .iter()
                .filter_map(|&c| thread_advice(&g.cells, v, c))
        })
        .collect()
}

fn threads_word(n: usize) -> &'static str {
    if n == 1 {
        "thread"
    } else {
        "threads"
    }
}

/// One sentence (a few clauses) saying what `a` measured, worded from its numbers.
pub fn thread_sentence(a: &ThreadAdvice) -> String {
    let mut s = format!(
        "{} on {} {}: ",
        a.variant,
        a.cores,
        if a.cores == 1 { "core" } else { "cores" }
    );
    let r = &a.recommended;
    if r.threads == a.best.threads && r.threads == a.smallest {
        let _ = write!(
            s,
            "run {} {}: {}, the highest median measured; more threads add nothing.",
            r.threads,
            threads_word(r.threads),
            r.text()
        );
    } else if r.threads == a.best.threads {
        let _ = write!(
            s,
            "run {} {}: {}, the best measured, and every smaller count's interval lies below it.",
            r.threads,
            threads_word(r.threads),
            r.text()
        );
    } else {
        let _ = write!(
            s,
            "run {} {}: {} is within the noise of the best, {} at {} threads (the intervals overlap), so more threads buy nothing measurable.",
            r.threads,
            threads_word(r.threads),
            r.text(),
            a.best.text(),
            a.best.threads
        );
    }
    if let Some(e) = a.efficiency_at_cores.filter(|_| a.cores > 1) {
        let how = if e >= 0.9 {
            "scales almost linearly"
        } else if e >= 0.5 {
            "scales partly"
        } else if e * a.cores as f64 >= 1.1 {
            "scales poorly"
        } else {
            "does not scale"
        };
        let _ = write!(
            s,
            " At threads = cores ({}) it {how}: each thread does {:.2} of a lone thread's work ({:.2}x one thread in all).",
            a.cores,
            e,
            e * a.cores as f64
        );
    }
    if let (Some(ratio), Some(l)) = (a.oversubscription, a.largest) {
        let change = if ratio < 0.95 {
            format!("cost {:.0}% of the throughput", (1.0 - ratio) * 100.0)
        } else if ratio > 1.05 {
            format!("gain {:.0}%", (ratio - 1.0) * 100.0)
        } else {
            "change little".to_owned()
        };
        let noise = match a.at_cores {
            Some(c) if c.overlaps(&l) => ", within the noise (the intervals overlap)",
            _ => "",
        };
        let _ = write!(
            s,
            " Oversubscribed, {} threads {change} against {} ({ratio:.2}x{noise}).",
            l.threads, a.cores
        );
    }
    if a.min_coverage < 0.9 {
        let _ = write!(
            s,
            " Intervals are min–max of as few as {} repetition(s) ({:.0}% coverage, not 95%): rerun with repeats=6 or more before acting on this.",
            a.min_repeats,
            a.min_coverage * 100.0
        );
    } else if a.min_coverage < 0.95 {
        let _ = write!(
            s,
            " (Intervals are min–max of {} repetitions: {:.1}% coverage.)",
            a.min_repeats,
            a.min_coverage * 100.0
        );
    }
    s
}

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
    all: &[&'a RunRecord],
    variant: &str,
) -> Vec<(String, usize, Vec<&'a RunRecord>)> {
    let usable = |c: &&&RunRecord| c.variant == variant && c.usable();
    let mut core_counts: Vec<usize> = all.iter().map(|c| c.cores).collect();
    core_counts.sort_unstable();
    core_counts.dedup();
    let mut out = Vec::new();
    if core_counts.len() > 1 {
        let mut cells: Vec<&RunRecord> = all
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
        let mut cells: Vec<&RunRecord> = all
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

fn list(levels: &[usize]) -> String {
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
pub fn usl_row(all: &[&RunRecord], variant: &str, nproc: usize) -> UslRow {
    // The candidate with most levels; ties go to the later one, the most cores.
    let (basis, cores, cells) = candidates(all, variant)
        .into_iter()
        .fold(
            None,
            |best: Option<(String, usize, Vec<&RunRecord>)>, c| match &best {
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
        let max_cores = all.iter().map(|c| c.cores).max().unwrap_or(0);
        let machine = if max_cores == nproc {
            format!("on this {nproc}-core machine")
        } else {
            format!("with at most {max_cores} core(s) measured")
        };
        row.fit = Err(format!(
            "{} in-core point(s), need {}",
            levels.len(),
            usl::MIN_POINTS
        ));
        row.sentence = format!(
            "No USL fit: {} in-core point(s) (threads {}) {machine}, and the law needs at least {} distinct thread counts at or below the core count; points past the cores measure the CPU limit, not contention. Run on more cores, or merge results from a larger machine with `lab report a.json b.json`.",
            levels.len(),
            if levels.is_empty() { "none".to_owned() } else { list(&levels) },
            usl::MIN_POINTS
        );
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
    if fewest >= usl::MIN_SAMPLES_PER_LEVEL {
        let fits: Vec<UslFit> = (0..usl::BOOTSTRAP_RESAMPLES)
            .into_par_iter()
            .filter_map(|i| usl::bootstrap_one(&lv, &fit, i))
            .collect();
        row.intervals = UslIntervals::from_fits(&fits);
    }
    let max_level = *levels.last().expect("4 levels") as f64;
    row.sentence = if fit.r_squared < MIN_R_SQUARED {
        format!(
            "No advice from the USL: R² = {:.2}, below {MIN_R_SQUARED}, so the law does not describe these {} points; go by the measured thread advice.",
            fit.r_squared,
            levels.len()
        )
    } else {
        match row.intervals {
            None => format!(
                "No advice from the USL: {fewest} repetition(s) at some thread count leave nothing to resample, so N* has no interval; rerun with repeats=5 or more."
            ),
            Some(ci) if !ci.peak_bounded(max_level) => format!(
                "No advice from the USL: N*'s 95% interval ({} to {}) is unbounded, so these points place no peak (κ may be 0); σ = {:.3} [{:.3}–{:.3}].",
                fmt_peak(ci.peak.0),
                fmt_peak(ci.peak.1),
                fit.sigma,
                ci.sigma.0,
                ci.sigma.1
            ),
            Some(ci) => {
                row.advises = true;
                usl_advice(&fit, &ci, cores)
            }
        }
    };
    row
}

/// N* unrounded, or `none (κ = 0)`.
fn peak_text(fit: &UslFit) -> String {
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

/// The interval of a record as text: `95% CI lo–hi`, or `min–max lo–hi (n = 2)` when
/// too few repetitions give it less than 95% coverage.
pub fn ci_text(r: &RunRecord) -> String {
    let (lo, hi) = r.ops_ci();
    if r.ops_ci_coverage() >= 0.95 {
        format!("95% CI {}–{}", si(lo), si(hi))
    } else {
        format!("min–max {}–{} (n = {})", si(lo), si(hi), reps_of(r))
    }
}

/// A Markdown matrix cell: `ops [lo–hi]/per-thread`, `*` when oversubscribed.
pub fn markdown_cell(record: Option<&RunRecord>) -> String {
    match record {
        Some(r) if r.usable() => {
            let (lo, hi) = r.ops_ci();
            format!(
                "{} [{}–{}]/{}{}",
                si(r.ops_per_sec),
                si(lo),
                si(hi),
                si(r.per_thread_ops_per_sec),
                if r.oversubscribed() { "\\*" } else { "" }
            )
        }
        other => crate::table::cell_text(other),
    }
}

fn interval(
    ci: Option<&UslIntervals>,
    pick: fn(&UslIntervals) -> (f64, f64),
    digits: usize,
) -> String {
    ci.map_or(String::new(), |ci| {
        let (lo, hi) = pick(ci);
        let f = |v: f64| {
            if v.is_finite() {
                format!("{v:.digits$}")
            } else {
                "∞".to_owned()
            }
        };
        format!(" [{}–{}]", f(lo), f(hi))
    })
}

/// The group's thread advice and USL table as HTML.
pub fn html_section(g: &Group<'_>) -> String {
    let mut out = String::new();
    if !g.thread_advice.is_empty() {
        out.push_str("<h4>Thread advice from measured data</h4>\n<ul class=\"thread-advice\">\n");
        for a in &g.thread_advice {
            let _ = writeln!(out, "<li>{}</li>", esc(&thread_sentence(a)));
        }
        out.push_str("</ul>\n");
    }
    if g.fits.is_empty() {
        return out;
    }
    out.push_str("<h4>Scalability (Universal Scalability Law, in-core points only)</h4>\n<p><small>Fitted to thread counts at or below the core count (past it, throughput measures the CPU limit, not contention), with at least 4 of them; 95% bootstrap intervals in brackets. Advice only where R² &ge; 0.9 and N*'s interval is bounded.</small></p>\n");
    out.push_str("<table class=\"usl\"><tr><th>variant</th><th>points fitted</th><th>σ contention</th><th>κ coherency</th><th>λ (ops/s, 1 thread)</th><th>R²</th><th>N*</th><th>best measured threads</th><th>advice</th></tr>\n");
    for f in &g.fits {
        let best = f.best_measured.map_or("-".to_owned(), |t| t.to_string());
        let basis = format!("{} ({})", f.basis, list(&f.levels));
        match &f.fit {
            Ok(fit) => {
                let ci = f.intervals.as_ref();
                let _ = writeln!(
                    out,
                    "<tr><td>{}</td><td>{}</td><td>{:.3}{}</td><td>{:.2e}{}</td><td>{}</td><td>{:.3}</td><td>{}{}</td><td>{best}</td><td>{}</td></tr>",
                    esc(&f.variant),
                    esc(&basis),
                    fit.sigma,
                    interval(ci, |c| c.sigma, 3),
                    fit.kappa,
                    ci.map_or(String::new(), |c| format!(" [{:.1e}–{:.1e}]", c.kappa.0, c.kappa.1)),
                    si(fit.lambda),
                    fit.r_squared,
                    peak_text(fit),
                    interval(ci, |c| c.peak, 1),
                    esc(&f.sentence)
                );
            }
            Err(_) => {
                let _ = writeln!(
                    out,
                    "<tr><td>{}</td><td>{}</td><td colspan=\"5\">no fit</td><td>{best}</td><td>{}</td></tr>",
                    esc(&f.variant),
                    esc(&basis),
                    esc(&f.sentence)
                );
            }
        }
    }
    out.push_str("</table>\n");
    out
}

/// The group's thread advice and USL lines as Markdown.
pub fn markdown_section(g: &Group<'_>) -> String {
    let mut out = String::new();
    if !g.thread_advice.is_empty() {
        out.push_str("Thread advice from measured data:\n\n");
        for a in &g.thread_advice {
            let _ = writeln!(out, "- {}", thread_sentence(a));
        }
        out.push('\n');
    }
    if g.fits.is_empty() {
        return out;
    }
    out.push_str("Scalability (USL, in-core points only):\n\n");
    for f in &g.fits {
        match &f.fit {
            Ok(fit) => {
                let ci = f.intervals.as_ref();
                let _ = writeln!(
                    out,
                    "- {} ({}: {}): σ={:.3}{} κ={:.2e}{} λ={} R²={:.2} N*={}{}. {}",
                    f.variant,
                    f.basis,
                    list(&f.levels),
                    fit.sigma,
                    interval(ci, |c| c.sigma, 3),
                    fit.kappa,
                    ci.map_or(String::new(), |c| format!(
                        " [{:.1e}–{:.1e}]",
                        c.kappa.0, c.kappa.1
                    )),
                    si(fit.lambda),
                    fit.r_squared,
                    peak_text(fit),
                    interval(ci, |c| c.peak, 1),
                    f.sentence
                );
            }
            Err(_) => {
                let _ = writeln!(out, "- {}: {}", f.variant, f.sentence);
            }
        }
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness::schema::{CellKey, CellStatus};

    /// A usable cell whose repetitions are `reps`.
    fn cell(variant: &str, threads: usize, cores: usize, reps: &[f64]) -> RunRecord {
        let key = CellKey {
            scenario: "lookup".into(),
            variant: variant.into(),
            params: Default::default(),
            threads,
            cores,
        };
        let mut r = RunRecord::failed(&key, "0-1", "x");
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
        let refs: Vec<&RunRecord> = cells.iter().collect();
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
        let refs: Vec<&RunRecord> = cells.iter().collect();
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
        let refs: Vec<&RunRecord> = cells.iter().collect();
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
        let cells: Vec<RunRecord> = [1, 2, 4, 6, 8, 12]
            .iter()
            .map(|&t| cell("m", t, 2, &six(100.0 * (t.min(2) as f64))))
            .collect();
        let refs: Vec<&RunRecord> = cells.iter().collect();
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
        let cells: Vec<RunRecord> = [(1, 100.0), (2, 400.0), (4, 150.0), (8, 500.0)]
            .iter()
            .map(|&(n, x)| cell("m", n, n, &six(x)))
            .collect();
        let refs: Vec<&RunRecord> = cells.iter().collect();
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
}

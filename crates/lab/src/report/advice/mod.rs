//! Advice a reader can act on, drawn from the measured figures and their 95% intervals:
//!
//! - thread advice per variant and core count ([`thread_advice`]): the smallest thread
//!   count whose interval overlaps the best cell's, the cost of oversubscription and the
//!   per-thread efficiency at threads = cores, and one sentence worded from those numbers
//!   ([`thread_sentence`]); only for files whose axis is threads (`figures` decides);
//! - the Universal Scalability Law only where it applies (`usl`): in-core points, at least
//!   4 of them, bootstrap intervals from at least [`verdict::judge::MIN_REPS`] repetitions a
//!   level, and advice only when R² >= 0.9, N*'s interval is bounded and, where N* lies
//!   within the cores, the measured drop past it is beyond the noise;
//! - `render` builds a group's section of both from them (blocks, for every format).
//!
//! Analysis returns data; rendering is apart. Not here: the matrix tables and charts.

mod render;
mod usl;

use std::fmt::Write;

use harness::CellRecord;

use super::Group;
use crate::words::si;

pub use render::{ci_text, markdown_cell, section};
#[cfg(test)]
use usl::{usl_row, MIN_R_SQUARED};
pub use usl::{usl_rows, UslRow};

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
    fn of(r: &CellRecord) -> Point {
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
pub(super) fn usable_at<'a>(
    cells: &[&'a CellRecord],
    variant: &str,
    cores: usize,
) -> Vec<&'a CellRecord> {
    let mut out: Vec<&CellRecord> = cells
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
pub fn thread_advice(cells: &[&CellRecord], variant: &str, cores: usize) -> Option<ThreadAdvice> {
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

pub(super) fn reps_of(r: &CellRecord) -> usize {
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

#[cfg(test)]
mod tests;

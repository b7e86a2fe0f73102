//! The one rule by which findings compare cells, and the one way their figures are
//! written: a cell's median with its 95% interval ([`Est`]), differences judged only when
//! both sides have at least [`MIN_REPS`] repetitions and their intervals are apart (the
//! same threshold as `lab compare`'s test), numbers in three significant figures with an
//! SI suffix ([`si`]).
//!
//! Also the small lookups every question needs (a cell by variant and threads, the best of
//! a row, a parameter as text). Not where sentences are chosen: each hot path's
//! `findings` module does that.

use harness::schema::CellRecord;

/// Fewest repetitions a side for a comparison to be judged: with fewer the interval is
/// min-max of a handful and one repetition hit by other work sets it (the same threshold
/// as `lab compare`'s Mann-Whitney test).
pub const MIN_REPS: usize = 5;

/// A median with its 95% interval and the repetitions behind it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Est {
    /// The median.
    pub median: f64,
    /// Lower end of the interval.
    pub low: f64,
    /// Upper end of the interval.
    pub high: f64,
    /// Repetitions behind it.
    pub n: usize,
}

/// Repetitions behind a record's figures.
pub fn reps(r: &CellRecord) -> usize {
    if r.ops_per_sec_reps.is_empty() {
        r.repeats
    } else {
        r.ops_per_sec_reps.len()
    }
}

impl Est {
    /// The cell's throughput.
    pub fn of(r: &CellRecord) -> Est {
        let (low, high) = r.ops_ci();
        Est {
            median: r.ops_per_sec,
            low,
            high,
            n: reps(r),
        }
    }

    /// The cell's throughput per thread.
    pub fn per_thread(r: &CellRecord) -> Est {
        Est::of(r).scaled(1.0 / r.threads.max(1) as f64)
    }

    /// Every figure times `k` (a unit change, or the linear expectation of `k` threads).
    pub fn scaled(self, k: f64) -> Est {
        Est {
            median: self.median * k,
            low: self.low * k,
            high: self.high * k,
            ..self
        }
    }

    /// Whether a comparison with this estimate can be judged.
    pub fn judged(&self) -> bool {
        self.n >= MIN_REPS && self.high >= self.low
    }

    /// `Some(true)` when this interval lies wholly above `other`'s, `Some(false)` when it
    /// does not, `None` when either side has too few repetitions to judge.
    pub fn above(&self, other: &Est) -> Option<bool> {
        (self.judged() && other.judged()).then_some(self.low > other.high)
    }

    /// As [`Est::above`], the other way round.
    pub fn below(&self, other: &Est) -> Option<bool> {
        other.above(self)
    }

    /// `Some(true)` when the two intervals do not overlap; `None` when not judged.
    pub fn apart(&self, other: &Est) -> Option<bool> {
        Some(self.above(other)? || self.below(other)?)
    }

    /// `self / other` of the medians.
    pub fn ratio(&self, other: &Est) -> f64 {
        ratio(self.median, other.median)
    }

    /// "4.42M [2.95M–4.45M]", or the median alone for a single repetition.
    pub fn text(&self) -> String {
        if self.n < 2 || self.high <= self.low {
            return si(self.median);
        }
        format!("{} [{}–{}]", si(self.median), si(self.low), si(self.high))
    }
}

/// A number in three significant figures with an SI suffix: 4.42M, 950k, 12.3, 0.52.
pub fn si(value: f64) -> String {
    let (scaled, suffix) = match value.abs() {
        v if v >= 1e9 => (value / 1e9, "G"),
        v if v >= 1e6 => (value / 1e6, "M"),
        v if v >= 1e3 => (value / 1e3, "k"),
        _ => (value, ""),
    };
    let digits = match scaled.abs() {
        v if v >= 100.0 => 0,
        v if v >= 10.0 => 1,
        _ => 2,
    };
    format!("{scaled:.digits$}{suffix}")
}

/// `a / b`, NaN when `b` is not positive.
pub fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        f64::NAN
    }
}

/// A gain as a signed whole percentage, "+0%" rather than "-0%" for one that rounds to
/// nothing.
pub fn percent(gain: f64) -> String {
    let whole = (gain * 100.0).round();
    format!("{:+.0}%", if whole == 0.0 { 0.0 } else { whole })
}

/// "1.23x `of`", with "; within the noise" when the two are judged and not apart, and
/// "; too few repetitions to judge" when they cannot be judged.
pub fn times(a: &CellRecord, b: &CellRecord, of: &str) -> String {
    let (ea, eb) = (Est::of(a), Est::of(b));
    format!(
        "{:.2}x{}{of}{}",
        ea.ratio(&eb),
        if of.is_empty() { "" } else { " " },
        match ea.apart(&eb) {
            Some(true) => "",
            Some(false) => "; within the noise",
            None => "; too few repetitions to judge",
        }
    )
}

/// A number of the record's `extra`.
pub fn extra(r: &CellRecord, key: &str) -> Option<f64> {
    r.extra.get(key).and_then(|v| v.as_f64())
}

/// A word of the record's `extra`.
pub fn extra_str<'a>(r: &'a CellRecord, key: &str) -> Option<&'a str> {
    r.extra.get(key).and_then(|v| v.as_str())
}

/// A parameter of the record as text ("-" when absent).
pub fn param_text(r: &CellRecord, key: &str) -> String {
    match r.params.get(key) {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
        None => "-".to_owned(),
    }
}

/// The cell of `variant` at `threads` and `cores`.
pub fn find<'a>(
    cells: &[&'a CellRecord],
    variant: &str,
    threads: usize,
    cores: usize,
) -> Option<&'a CellRecord> {
    cells
        .iter()
        .copied()
        .find(|c| c.variant == variant && c.threads == threads && c.cores == cores)
}

/// The highest-throughput cell of `rows`.
pub fn best_of<'a>(rows: impl Iterator<Item = &'a CellRecord>) -> Option<&'a CellRecord> {
    rows.max_by(|a, b| a.ops_per_sec.total_cmp(&b.ops_per_sec))
}

/// The largest core count of `cells`, and the thread counts run at it, ascending.
pub fn widest(cells: &[&CellRecord]) -> Option<(usize, Vec<usize>)> {
    let cores = cells.iter().map(|c| c.cores).max()?;
    let mut threads: Vec<usize> = cells
        .iter()
        .filter(|c| c.cores == cores)
        .map(|c| c.threads)
        .collect();
    threads.sort_unstable();
    threads.dedup();
    Some((cores, threads))
}

/// Variants of `rows` in the order first seen.
pub fn variants_of<'a>(rows: &[&'a CellRecord]) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for r in rows {
        if !out.contains(&r.variant.as_str()) {
            out.push(&r.variant);
        }
    }
    out
}

/// The distinct values of `param` among `rows`, as text, in the order first seen.
pub fn values_of(rows: &[&CellRecord], param: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in rows {
        let v = param_text(r, param);
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

/// Why comparisons among `rows` cannot be judged, if some cannot: "3 of its 10 cells ran
/// fewer than 5 repetitions (rerun with repeats=5 or more)"; `None` when all can.
pub fn too_few(rows: &[&CellRecord]) -> Option<String> {
    let short = rows.iter().filter(|r| reps(r) < MIN_REPS).count();
    (short > 0).then(|| {
        format!(
            "{short} of its {} cells ran fewer than {MIN_REPS} repetitions, so no difference \
             involving them is judged (rerun with repeats={MIN_REPS} or more)",
            rows.len()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est(median: f64, spread: f64, n: usize) -> Est {
        Est {
            median,
            low: median - spread,
            high: median + spread,
            n,
        }
    }

    #[test]
    fn comparisons_need_enough_repetitions_and_apart_intervals() {
        let a = est(100.0, 2.0, 5);
        let b = est(90.0, 2.0, 5);
        assert_eq!(a.above(&b), Some(true));
        assert_eq!(b.above(&a), Some(false));
        assert_eq!(b.below(&a), Some(true));
        assert_eq!(a.apart(&b), Some(true));
        let wide = est(95.0, 10.0, 8);
        assert_eq!(a.apart(&wide), Some(false));
        let few = est(10.0, 1.0, 3);
        assert_eq!(a.above(&few), None);
        assert_eq!(few.apart(&a), None);
    }

    #[test]
    fn figures_are_written_one_way() {
        assert_eq!(si(4_420_000.0), "4.42M");
        assert_eq!(si(950.0), "950");
        assert_eq!(si(0.523), "0.52");
        assert_eq!(est(1000.0, 100.0, 5).text(), "1.00k [900–1.10k]");
        assert_eq!(est(1000.0, 100.0, 1).text(), "1.00k");
        assert_eq!(percent(-0.004), "+0%");
        assert_eq!(percent(2.13), "+213%");
    }
}

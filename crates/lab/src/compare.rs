//! `lab compare BASE NEW`: per cell, the ratio of NEW's median throughput to BASE's and a
//! verdict from a Mann-Whitney U test on the per-repetition values (`ops_per_sec_reps`).
//!
//! A verdict needs at least [`MIN_REPS`] repetitions on each side: with fewer, even a
//! test at 5% cannot tell a change from the noise of this kind of machine, and the cell is
//! printed `inconclusive (n = 2)` and never fails the gate. A cell counts as REGRESSED,
//! and the command exits 1, only when the slowdown is significant at [`ALPHA`] and the
//! ratio of medians is below `1 - threshold`. Exit 2 for bad input: files of different
//! scenarios, with no cells in common, or with different parameters for the same cells.
//! Two runs from machines that are not comparable (`comparable`: another CPU, a reference
//! loop more than 10% apart, a run beside other work) are not judged at all: one line
//! `machine differed: ...`, exit 0.
//!
//! Before the cells, the findings' parts of both runs side by side (`compare_parts`).
//!
//! Not here: any averaging across cells or machines; each cell is judged alone.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::ExitCode;

use anyhow::bail;
use harness::stats;
use harness::CellRecord;

use crate::report;
use crate::table::si;

/// Fewest repetitions per side for a verdict.
pub const MIN_REPS: usize = 5;

/// Two-sided significance level of each cell's test: an unchanged cell is called slower
/// about 2.5% of the time, and faster as often.
pub const ALPHA: f64 = 0.05;

/// How one cell changed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Verdict {
    /// Too few repetitions on a side (the smaller count): no verdict.
    Inconclusive {
        /// Repetitions on the side with fewer.
        n: usize,
    },
    /// No change the test can tell from noise.
    NoChange {
        /// Two-sided p-value.
        p: f64,
    },
    /// Significantly faster.
    Faster {
        /// Two-sided p-value.
        p: f64,
    },
    /// Significantly slower, but by less than the threshold.
    Slower {
        /// Two-sided p-value.
        p: f64,
    },
    /// Significantly slower, and by more than the threshold: fails the gate.
    Regressed {
        /// Two-sided p-value.
        p: f64,
    },
}

impl Verdict {
    /// The verdict as printed.
    pub fn text(&self) -> String {
        match self {
            Verdict::Inconclusive { n } => format!("inconclusive (n = {n})"),
            Verdict::NoChange { p } => format!("no change (p = {p:.2})"),
            Verdict::Faster { p } => format!("FASTER (p = {p:.3})"),
            Verdict::Slower { p } => format!("slower, within threshold (p = {p:.3})"),
            Verdict::Regressed { p } => format!("REGRESSED (p = {p:.3})"),
        }
    }
}

/// Judges NEW's repetitions against BASE's.
pub fn judge(base: &[f64], new: &[f64], threshold: f64) -> Verdict {
    let n = base.len().min(new.len());
    if n < MIN_REPS {
        return Verdict::Inconclusive { n };
    }
    let (mb, mn) = (stats::median(base), stats::median(new));
    let p = stats::mann_whitney(new, base).p;
    if p >= ALPHA || mb <= 0.0 || mn == mb {
        Verdict::NoChange { p }
    } else if mn > mb {
        Verdict::Faster { p }
    } else if mn / mb < 1.0 - threshold {
        Verdict::Regressed { p }
    } else {
        Verdict::Slower { p }
    }
}

/// The per-repetition values of a record; for a file written before they were kept, none,
/// with the record's repetition count.
fn reps(r: &CellRecord) -> (Vec<f64>, usize) {
    (r.ops_per_sec_reps.clone(), r.repeats)
}

/// A cell's name: what it ran, without its parameters.
type Name = (String, String, usize, usize);

fn name(r: &CellRecord) -> Name {
    (r.hot_path.clone(), r.variant.clone(), r.threads, r.cores)
}

fn params_text(p: &BTreeMap<String, serde_json::Value>, keys: &BTreeSet<&String>) -> String {
    keys.iter()
        .map(|k| {
            format!(
                "{k}={}",
                p.get(*k)
                    .map_or("(none)".to_owned(), crate::plan::value_text)
            )
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// What differs between the parameters of cells that share a name, as one phrase, for
/// the first such name with no parameters in common; `None` when every shared name has a
/// matching cell.
fn params_conflict(b: &[CellRecord], n: &[CellRecord]) -> Option<String> {
    let names: BTreeSet<Name> = n.iter().map(name).collect();
    for nm in names {
        let ours: Vec<&CellRecord> = n.iter().filter(|c| name(c) == nm).collect();
        let theirs: Vec<&CellRecord> = b.iter().filter(|c| name(c) == nm).collect();
        if theirs.is_empty()
            || ours
                .iter()
                .any(|o| theirs.iter().any(|t| t.params == o.params))
        {
            continue;
        }
        let (o, t) = (&ours[0].params, &theirs[0].params);
        let keys: BTreeSet<&String> = o
            .keys()
            .chain(t.keys())
            .filter(|k| o.get(*k) != t.get(*k))
            .collect();
        return Some(format!(
            "{}/{} threads={} cores={} ran with {} in one and {} in the other",
            nm.0,
            nm.1,
            nm.2,
            nm.3,
            params_text(t, &keys),
            params_text(o, &keys)
        ));
    }
    None
}

/// The lock whose mean hold grew most from `old` to `new` (by more than 10%), in words:
/// `hold of directory mutex grew 2.10x (390 ns -> 820 ns)`. What a regressed cell's
/// reader looks at first: a lock held longer serialises more.
pub fn grown_lock(old: &CellRecord, new: &CellRecord) -> Option<String> {
    let (before, after) = (old.locks.as_deref()?, new.locks.as_deref()?);
    let hold = |r: &harness::lock_table::LockRow| r.hold_ns.map(|h| h.mean).filter(|&m| m > 0.0);
    after
        .iter()
        .filter_map(|a| {
            let b = before.iter().find(|b| b.name == a.name)?;
            let (hb, ha) = (hold(b)?, hold(a)?);
            Some((a.name.as_str(), hb, ha, ha / hb))
        })
        .filter(|&(_, _, _, grew)| grew > 1.10)
        .max_by(|x, y| x.3.total_cmp(&y.3))
        .map(|(name, hb, ha, grew)| {
            format!("hold of {name} grew {grew:.2}x ({hb:.0} ns -> {ha:.0} ns)")
        })
}

/// Runs `lab compare`.
pub fn run(base: &Path, new: &Path, threshold: f64) -> anyhow::Result<ExitCode> {
    if !(threshold > 0.0 && threshold < 1.0) {
        bail!("--threshold {threshold}: expected a fraction between 0 and 1, e.g. 0.10 for 10%");
    }
    let sources = report::load(&[base.to_path_buf(), new.to_path_buf()])?;
    let (b, n) = (&sources[0].results, &sources[1].results);
    let pairs = matched(base, new, &b.cells, &n.cells)?;
    // Each run's parts rest on its own pairs: set side by side whatever the machines.
    for line in crate::compare_parts::lines(b, n) {
        println!("{line}");
    }
    if let Some(why) = crate::comparable::difference(b, n) {
        // A regression between two machines is the machines': no cell is judged.
        println!("machine differed: {why}; no cell judged");
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{:<10} {:<20} {:>4} {:>4} {:>10} {:>10} {:>7}  verdict (Mann-Whitney U at p < {ALPHA}; regression beyond {:.0}%)",
        "hot path",
        "variant",
        "thr",
        "cor",
        "base",
        "new",
        "ratio",
        threshold * 100.0
    );
    let (mut regressed, mut inconclusive, mut compared) = (0, 0, 0);
    for (old, cell) in pairs {
        let Some(verdict) = compare_cell(old, cell, threshold) else {
            continue;
        };
        compared += 1;
        match verdict {
            Verdict::Regressed { .. } => regressed += 1,
            Verdict::Inconclusive { .. } => inconclusive += 1,
            _ => {}
        }
    }
    let unmatched = (n.cells.len() + b.cells.len()).saturating_sub(2 * compared);
    println!(
        "{compared} cell(s) compared, {regressed} regressed; {inconclusive} inconclusive (fewer than {MIN_REPS} repetitions a side){}",
        if unmatched > 0 {
            format!("; {unmatched} cell(s) not compared (failed, or in one file only)")
        } else {
            String::new()
        }
    );
    if compared > inconclusive {
        println!(
            "Each cell is tested alone: among {} unchanged cells, about {:.1} would be called slower by chance.",
            compared - inconclusive,
            (compared - inconclusive) as f64 * ALPHA / 2.0
        );
    }
    Ok(if regressed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// The cells of `n` with their match in `b`, after checking that the two runs ran the
/// same scenarios with the same settings and have cells in common.
fn matched<'r>(
    base: &Path,
    new: &Path,
    b: &'r [CellRecord],
    n: &'r [CellRecord],
) -> anyhow::Result<Vec<(&'r CellRecord, &'r CellRecord)>> {
    let hot_paths = |cells: &[CellRecord]| -> BTreeSet<String> {
        cells.iter().map(|c| c.hot_path.clone()).collect()
    };
    let (bs, ns) = (hot_paths(b), hot_paths(n));
    if bs != ns {
        bail!(
            "{} holds hot paths {:?} but {} holds {:?}: compare runs of the same hot paths",
            base.display(),
            bs,
            new.display(),
            ns
        );
    }
    if let Some(what) = params_conflict(b, n) {
        bail!(
            "{} and {} ran different parameters for the same cells: {what}; compare runs of the same settings",
            base.display(),
            new.display()
        );
    }
    let pairs: Vec<(&CellRecord, &CellRecord)> = n
        .iter()
        .filter_map(|cell| Some((b.iter().find(|o| o.key() == cell.key())?, cell)))
        .collect();
    if pairs.is_empty() {
        bail!(
            "{} and {} have no cells in common (same hot path, variant, parameters, threads and cores): compare runs of the same matrix",
            base.display(),
            new.display()
        );
    }
    Ok(pairs)
}

/// Judges one cell against its base and prints its line; `None` (and a line saying so)
/// when a side is not usable.
fn compare_cell(old: &CellRecord, cell: &CellRecord, threshold: f64) -> Option<Verdict> {
    if !cell.usable() || !old.usable() {
        println!(
            "{:<10} {:<20} {:>4} {:>4}  not comparable: a side failed or was not verified",
            cell.hot_path, cell.variant, cell.threads, cell.cores
        );
        return None;
    }
    let ((bv, bn), (nv, nn)) = (reps(old), reps(cell));
    let verdict = if bv.is_empty() || nv.is_empty() {
        // A file from before per-repetition values were kept: nothing to test.
        Verdict::Inconclusive { n: bn.min(nn) }
    } else {
        judge(&bv, &nv, threshold)
    };
    let mut text = verdict.text();
    if matches!(verdict, Verdict::Regressed { .. } | Verdict::Slower { .. }) {
        if let Some(lock) = grown_lock(old, cell) {
            text.push_str(&format!("; {lock}"));
        }
    }
    if (bv.is_empty() || nv.is_empty()) && bn.min(nn) >= MIN_REPS {
        text.push_str(": a file predates per-repetition values");
    }
    println!(
        "{:<10} {:<20} {:>4} {:>4} {:>10} {:>10} {:>7.3}  {text}",
        cell.hot_path,
        cell.variant,
        cell.threads,
        cell.cores,
        si(old.ops_per_sec),
        si(cell.ops_per_sec),
        cell.ops_per_sec / old.ops_per_sec,
    );
    Some(verdict)
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness::stats::SplitMix64;

    fn sample(rng: &mut SplitMix64, n: usize, median: f64, noise: f64) -> Vec<f64> {
        (0..n)
            .map(|_| median * (1.0 + noise * rng.normal()))
            .collect()
    }

    #[test]
    fn a_twenty_percent_slowdown_at_five_repetitions_is_flagged() {
        let mut flagged = 0;
        for seed in 0..100 {
            let mut rng = SplitMix64::new(seed);
            let base = sample(&mut rng, 5, 1e6, 0.05);
            let new = sample(&mut rng, 5, 0.8e6, 0.05);
            if matches!(judge(&base, &new, 0.10), Verdict::Regressed { .. }) {
                flagged += 1;
            }
        }
        assert!(flagged >= 95, "flagged {flagged} of 100");
    }

    #[test]
    fn identical_distributions_are_rarely_flagged() {
        let mut flagged = 0;
        for seed in 0..100 {
            let mut rng = SplitMix64::new(1000 + seed);
            let base = sample(&mut rng, 5, 1e6, 0.05);
            let new = sample(&mut rng, 5, 1e6, 0.05);
            if !matches!(judge(&base, &new, 0.10), Verdict::NoChange { .. }) {
                flagged += 1;
            }
        }
        assert!(flagged <= 5, "flagged {flagged} of 100");
    }

    #[test]
    fn too_few_repetitions_never_fail_the_gate() {
        // Halved throughput, but two repetitions a side: no verdict.
        let v = judge(&[100.0, 101.0], &[50.0, 51.0, 52.0, 53.0, 54.0], 0.10);
        assert_eq!(v, Verdict::Inconclusive { n: 2 });
        assert_eq!(v.text(), "inconclusive (n = 2)");
    }

    #[test]
    fn significance_and_threshold_both_count() {
        let base = [100.0, 101.0, 102.0, 103.0, 104.0];
        // 5% slower and clearly separated: significant, but within a 10% threshold.
        let five = [95.0, 96.0, 96.5, 97.0, 97.5];
        assert!(matches!(judge(&base, &five, 0.10), Verdict::Slower { .. }));
        assert!(matches!(
            judge(&base, &five, 0.02),
            Verdict::Regressed { .. }
        ));
        let faster = [120.0, 121.0, 122.0, 123.0, 124.0];
        assert!(matches!(
            judge(&base, &faster, 0.10),
            Verdict::Faster { .. }
        ));
        // 30% slower in the median but overlapping wildly: not significant.
        let wild = [40.0, 70.0, 72.0, 150.0, 160.0];
        assert!(matches!(
            judge(&base, &wild, 0.10),
            Verdict::NoChange { .. }
        ));
    }

    #[test]
    fn a_regressed_cell_names_the_lock_held_longer() {
        let with_holds = |holds: &[(&str, f64)]| {
            let key = harness::schema::CellKey {
                hot_path: "lookup".into(),
                variant: "global-mutex".into(),
                params: Default::default(),
                threads: 2,
                cores: 2,
            };
            let mut r = CellRecord::failed(&key, "0-1", "x");
            r.locks = Some(
                holds
                    .iter()
                    .map(|&(name, mean)| harness::lock_table::LockRow {
                        name: name.into(),
                        hold_ns: Some(harness::lock_table::Quantiles {
                            mean,
                            ..Default::default()
                        }),
                        ..Default::default()
                    })
                    .collect(),
            );
            r
        };
        let old = with_holds(&[("directory mutex", 400.0), ("entry cache", 100.0)]);
        let new = with_holds(&[("directory mutex", 840.0), ("entry cache", 105.0)]);
        let text = grown_lock(&old, &new).unwrap();
        assert_eq!(
            text,
            "hold of directory mutex grew 2.10x (400 ns -> 840 ns)"
        );
        // Within 10%: nothing to name; no table: nothing either.
        assert_eq!(grown_lock(&old, &old), None);
        assert_eq!(grown_lock(&old, &with_holds(&[])), None);
    }
}

//! `lab compare BASE NEW`: per cell, the ratio of NEW's throughput to BASE's, flagged when
//! the two runs' min-max ranges do not overlap (a change beyond the spread). Exits 1 when
//! some cell got slower by more than `--threshold` and beyond the spread, so it can gate a
//! CI job; 2 for bad input, such as files of different scenarios.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::ExitCode;

use anyhow::bail;
use harness::RunRecord;

use crate::report;
use crate::table::si;

/// How one cell changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// The ranges overlap: no change that the noise can't explain.
    WithinSpread,
    /// Faster, beyond the spread.
    Faster,
    /// Slower beyond the spread, but by less than the threshold.
    Slower,
    /// Slower beyond the spread and by more than the threshold.
    Regressed,
}

/// Classifies NEW against BASE.
pub fn classify(base: &RunRecord, new: &RunRecord, threshold: f64) -> Change {
    let ratio = new.ops_per_sec / base.ops_per_sec;
    if new.ops_per_sec_max < base.ops_per_sec_min {
        if ratio < 1.0 - threshold {
            Change::Regressed
        } else {
            Change::Slower
        }
    } else if new.ops_per_sec_min > base.ops_per_sec_max {
        Change::Faster
    } else {
        Change::WithinSpread
    }
}

/// Runs `lab compare`.
pub fn run(base: &Path, new: &Path, threshold: f64) -> anyhow::Result<ExitCode> {
    if !(threshold > 0.0 && threshold < 1.0) {
        bail!("--threshold {threshold}: expected a fraction between 0 and 1, e.g. 0.10 for 10%");
    }
    let sources = report::load(&[base.to_path_buf(), new.to_path_buf()])?;
    let (b, n) = (&sources[0].results, &sources[1].results);
    let scenarios = |cells: &[RunRecord]| -> BTreeSet<String> {
        cells.iter().map(|c| c.scenario.clone()).collect()
    };
    let (bs, ns) = (scenarios(&b.cells), scenarios(&n.cells));
    if bs != ns {
        bail!(
            "{} holds scenarios {:?} but {} holds {:?}: compare runs of the same scenarios",
            base.display(),
            bs,
            new.display(),
            ns
        );
    }
    println!(
        "{:<10} {:<20} {:>4} {:>4} {:>10} {:>10} {:>7}  change (threshold {:.0}%)",
        "scenario",
        "variant",
        "thr",
        "cor",
        "base",
        "new",
        "ratio",
        threshold * 100.0
    );
    let mut regressed = 0;
    let mut compared = 0;
    for cell in &n.cells {
        let Some(old) = b.cells.iter().find(|o| o.key() == cell.key()) else {
            continue;
        };
        if !cell.usable() || !old.usable() {
            println!(
                "{:<10} {:<20} {:>4} {:>4}  not comparable: a side failed or was not verified",
                cell.scenario, cell.variant, cell.threads, cell.cores
            );
            continue;
        }
        compared += 1;
        let change = classify(old, cell, threshold);
        if change == Change::Regressed {
            regressed += 1;
        }
        println!(
            "{:<10} {:<20} {:>4} {:>4} {:>10} {:>10} {:>7.3}  {}",
            cell.scenario,
            cell.variant,
            cell.threads,
            cell.cores,
            si(old.ops_per_sec),
            si(cell.ops_per_sec),
            cell.ops_per_sec / old.ops_per_sec,
            match change {
                Change::WithinSpread => "within spread",
                Change::Faster => "FASTER",
                Change::Slower => "slower",
                Change::Regressed => "REGRESSED",
            }
        );
    }
    if compared == 0 {
        bail!(
            "no cell of {} matches a cell of {} (same variant, params, threads and cores)",
            new.display(),
            base.display()
        );
    }
    println!("{compared} cell(s) compared, {regressed} regressed");
    Ok(if regressed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness::schema::{CellKey, CellStatus};

    fn rec(median: f64, min: f64, max: f64) -> RunRecord {
        let key = CellKey {
            scenario: "lookup".into(),
            variant: "dashmap".into(),
            params: Default::default(),
            threads: 2,
            cores: 2,
        };
        let mut r = RunRecord::failed(&key, "0-1", "x");
        r.status = CellStatus::Ok;
        r.verified = true;
        (r.ops_per_sec, r.ops_per_sec_min, r.ops_per_sec_max) = (median, min, max);
        r
    }

    #[test]
    fn changes_count_only_beyond_the_spread() {
        let base = rec(100.0, 95.0, 105.0);
        assert_eq!(
            classify(&base, &rec(90.0, 85.0, 96.0), 0.05),
            Change::WithinSpread
        );
        assert_eq!(
            classify(&base, &rec(92.0, 90.0, 94.0), 0.10),
            Change::Slower
        );
        assert_eq!(
            classify(&base, &rec(80.0, 78.0, 82.0), 0.10),
            Change::Regressed
        );
        assert_eq!(
            classify(&base, &rec(120.0, 110.0, 130.0), 0.10),
            Change::Faster
        );
    }
}

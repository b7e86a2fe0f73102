//! The lab's figures and a results file's circumstances in words, shared by the terminal
//! (`lab run`, `lab matrix`, `lab compare`) and the report: numbers in three significant
//! figures, parameter values, a cell in a few characters, and what the retakes and the
//! machine's speed were. It reads records and results files and decides nothing; the
//! retake policy is `retake`'s, the speed tolerance `speed`'s and `comparable`'s.

use crate::results::ResultsFile;
use harness::env::MachineSpeed;
use harness::schema::CellStatus;
use harness::CellRecord;
use serde_json::Value;

use crate::comparable::STEADY;
use crate::retake::{IN_VAIN_LIMIT, MAX_RETAKES};

/// Numbers are written one way across the lab: the judge's three significant figures.
pub use verdict::judge::si;

/// The value a sweep gives a parameter, as text.
pub fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// What one table cell shows.
pub fn cell_text(record: Option<&CellRecord>) -> String {
    match record {
        None => "-".to_owned(),
        Some(r) if r.status == CellStatus::Failed => "FAILED".to_owned(),
        Some(r) if !r.verified => "UNVERIFIED".to_owned(),
        Some(r) => format!(
            "{}{}/{}{}",
            si(r.ops_per_sec),
            spread(r),
            si(r.per_thread_ops_per_sec),
            if r.oversubscribed() { "*" } else { "" }
        ),
    }
}

/// `±3%`: how far the record's interval reaches from its median; empty when it has none.
fn spread(r: &CellRecord) -> String {
    let (low, high) = r.ops_ci();
    if r.ops_per_sec <= 0.0 || !(low.is_finite() && high.is_finite()) || high <= low {
        return String::new();
    }
    let half = (r.ops_per_sec - low).max(high - r.ops_per_sec) / r.ops_per_sec;
    format!("±{:.0}%", half * 100.0)
}

/// Retakes summed over some cells.
#[derive(Debug, Default)]
struct Tally {
    /// Repetitions kept.
    reps: usize,
    /// Repetitions retaken, for either reason.
    retaken: usize,
    /// Kept although over a bound.
    over: usize,
    /// The loads of those retaken for load.
    loads: Vec<f64>,
    /// The machine speeds of those retaken for the machine's speed.
    speeds: Vec<f64>,
}

fn tally<'a>(cells: impl Iterator<Item = &'a CellRecord>) -> Tally {
    let mut t = Tally::default();
    for cell in cells {
        t.reps += cell.repeats;
        if let Some(i) = &cell.interference {
            t.retaken += i.retaken;
            t.over += i.kept_over_threshold;
            t.loads.extend(&i.retaken_loads);
            t.speeds.extend(&i.retaken_speeds);
        }
    }
    t.loads.sort_by(f64::total_cmp);
    t.speeds.sort_by(f64::total_cmp);
    t
}

/// Why a repetition is kept although over a bound.
fn over_why() -> String {
    format!(
        "after {MAX_RETAKES} retakes, or with none once {IN_VAIN_LIMIT} repetitions in a row had retaken in vain"
    )
}

fn cpus(x: f64) -> String {
    format!("{x:.2}")
}

/// The reasons of a tally's retakes, in words: for load and for the machine's speed.
fn reasons(t: &Tally, threshold: Option<f64>) -> Vec<String> {
    let mut out = Vec::new();
    if let (Some(lo), Some(hi)) = (t.loads.first(), t.loads.last()) {
        out.push(format!(
            "{} because other processes and steal took {}-{} CPU during their windows{}",
            t.loads.len(),
            cpus(*lo),
            cpus(*hi),
            threshold.map_or(String::new(), |t| format!(", above {} CPU", cpus(t)))
        ));
    }
    if let (Some(lo), Some(hi)) = (t.speeds.first(), t.speeds.last()) {
        out.push(format!(
            "{} because the machine ran at {lo:.2}x-{hi:.2}x its usual speed (canary)",
            t.speeds.len()
        ));
    }
    out
}

/// One line per scenario file: how many of its repetitions were retaken and why, and the
/// load and machine speed its kept repetitions ran under. Empty for files without
/// interference figures.
pub fn retake_lines(results: &ResultsFile) -> Vec<String> {
    let mut files: Vec<&str> = Vec::new();
    for cell in &results.cells {
        if cell.interference.is_some() && !files.contains(&cell.scenario_file.as_str()) {
            files.push(&cell.scenario_file);
        }
    }
    let threshold = results.env.interference_threshold;
    files
        .iter()
        .map(|file| {
            let cells: Vec<&CellRecord> = results
                .cells
                .iter()
                .filter(|c| c.scenario_file == *file)
                .collect();
            let t = tally(cells.iter().copied());
            let shares: Vec<f64> = cells
                .iter()
                .filter_map(|c| c.interference.as_ref().map(|i| i.other_cpu_share))
                .collect();
            let speeds: Vec<f64> = cells
                .iter()
                .filter_map(|c| c.interference.as_ref()?.machine_speed)
                .collect();
            let name = if file.is_empty() { "cells" } else { file };
            let mut kept = format!(
                "its cells' repetitions saw a median {} CPU of other processes",
                cpus(harness::stats::median(&shares))
            );
            if !speeds.is_empty() {
                kept.push_str(&format!(
                    " and ran at a median {:.2}x the machine's usual speed",
                    harness::stats::median(&speeds)
                ));
            }
            if t.retaken == 0 {
                let bound = match threshold {
                    Some(threshold) => format!("threshold {} CPU", cpus(threshold)),
                    None => "load not judged".to_owned(),
                };
                return format!("{name}.toml: no repetition retaken ({bound}); {kept}");
            }
            let mut line = format!(
                "{name}.toml: {} repetition(s) retaken for {} kept: {}",
                t.retaken,
                t.reps,
                reasons(&t, threshold).join("; ")
            );
            if t.over > 0 {
                line.push_str(&format!("; {} kept over a bound ({})", t.over, over_why()));
            }
            format!("{line}; {kept}")
        })
        .collect()
}

/// Rows for the report's environment table: the reference loop, the cost of a child and
/// the retake threshold, where the results file has them.
pub fn env_rows(env: &harness::env::EnvInfo) -> Vec<(&'static str, String)> {
    let mut rows = Vec::new();
    if let Some(r) = &env.reference {
        rows.push((
            "reference loop",
            format!(
                "{:.2} ms median over {} round(s) ({})",
                r.median_ms,
                r.per_round_ms.len(),
                r.work
            ),
        ));
    }
    if let Some(s) = env.run_overhead_s {
        rows.push((
            "child overhead",
            format!(
                "{:.0} ms per repetition beyond warm-up and window (median)",
                s * 1e3
            ),
        ));
    }
    if env.reference.is_some() {
        rows.push((
            "retakes",
            match env.interference_threshold {
                Some(t) => format!(
                    "a repetition during which other processes and steal took more than {t:.2} CPU is retaken, up to {MAX_RETAKES} times"
                ),
                None => "off (interference=off)".to_owned(),
            },
        ));
    }
    rows.extend(env.machine_speed.as_ref().map(speed_row));
    rows
}

/// The run's total, for the terminal; `None` when nothing was retaken.
pub fn total_line(results: &ResultsFile) -> Option<String> {
    let t = tally(results.cells.iter());
    (t.retaken > 0).then(|| {
        format!(
            "retaken: {} repetition(s) for {} kept: {}{} (the report says which files)",
            t.retaken,
            t.reps,
            reasons(&t, results.env.interference_threshold).join("; "),
            if t.over > 0 {
                format!("; {} kept over a bound ({})", t.over, over_why())
            } else {
                String::new()
            }
        )
    })
}

/// The report's environment row for the machine's speed.
pub fn speed_row(speed: &MachineSpeed) -> (&'static str, String) {
    (
        "machine speed",
        format!(
            "kept repetitions ran at {:.2}x-{:.2}x (p10-p90, median {:.2}x) of the machine's usual speed, by a canary of {:.2} ms ({}) timed before and after each; {}",
            speed.p10,
            speed.p90,
            speed.p50,
            speed.usual_canary_ms,
            speed.work,
            match speed.tolerance {
                Some(t) => format!(
                    "a repetition whose canary ran outside {:.2}x-{:.2}x is retaken",
                    1.0 - t,
                    1.0 + t
                ),
                None => "no repetition retaken for it (machine_speed=off)".to_owned(),
            }
        ),
    )
}

/// A sentence for the findings when the run's machine was not steady (its p10 or p90
/// repetition beyond `comparable::STEADY` of the usual speed); `None` when it was, or
/// when the file has no canary.
pub fn unsteady_note(env: &harness::env::EnvInfo) -> Option<String> {
    let s = env.machine_speed.as_ref()?;
    let steady = STEADY;
    (s.p10 < 1.0 - steady || s.p90 > 1.0 + steady).then(|| {
        format!(
            "The machine was not steady during this run: its speed by the canary moved {:.2}x-{:.2}x (p10-p90 of {} repetitions), beyond {:.2}x-{:.2}x. Intervals are as wide as the machine made them, and a \"cannot tell\" may be the machine's, not the code's.",
            s.p10,
            s.p90,
            s.repetitions,
            1.0 - steady,
            1.0 + steady
        )
    })
}

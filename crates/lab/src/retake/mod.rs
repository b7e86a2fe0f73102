//! Retakes: a repetition measured while other processes (or a hypervisor) took more than a
//! threshold of CPU from the machine, or while the machine ran outside its usual speed by
//! the canary (`speed`), is run again, a bounded number of times, so that a cell's figures
//! come from the machine at its own speed rather than from whatever else ran beside it.
//! The interference and the canary are measured in the child (`harness::interference`,
//! `harness::canary`); this module decides, and words what it did.
//!
//! What a retake keeps of the failure policy: an attempt that failed (crashed, timed out,
//! unverified) is kept as it is, never retaken, since a failure is a finding; an attempt
//! interrupted by lab's own stop discards the whole repetition, retakes and all; the
//! results file is still written once per round, so a `kill -9` loses at most the round in
//! flight, retakes included.
//!
//! Not here: the threshold's setting (`settings`, `interference=`) and the loop over
//! rounds (`matrix`).

use harness::schema::{CellStatus, ResultsFile};
use harness::RunRecord;

use crate::speed::Speedometer;

/// Load (other processes' CPU plus steal, in CPUs) above which a repetition is retaken,
/// beyond what the tick counting can resolve. A quarter of a CPU: on the 2-core machine
/// this was written on, the quiet runs' repetitions see a median 0.02-0.05 CPU of
/// others, while a repetition beside a build or a busy loop sees 0.5-1.5; a quarter of a
/// core lost to others costs a single-thread cell up to a quarter of its speed, more than
/// the ±5% the intervals aim for, and a lower bound would retake for the tick noise of
/// short windows. `interference=0.1` or `interference=off` change it.
pub const DEFAULT_THRESHOLD: f64 = 0.25;

/// Retakes per repetition at most: a machine that stays busy must not stall the matrix.
/// After them the least loaded attempt is kept and counted as kept over the threshold.
pub const MAX_RETAKES: usize = 2;

/// Repetitions in a row whose retakes were all in vain, after which retakes stop until a
/// repetition comes in under the threshold by itself: on a machine that stays busy for
/// minutes, retaking would triple the run's time and keep the same load.
pub const IN_VAIN_LIMIT: usize = 3;

/// Retakes repetitions over a run, remembering whether the machine stays busy.
#[derive(Debug)]
pub struct Retaker {
    threshold: Option<f64>,
    in_vain: usize,
    speed: Speedometer,
}

impl Retaker {
    /// Retakes above `threshold` (CPUs; none when `None`) or outside the speedometer's
    /// tolerance.
    pub fn new(threshold: Option<f64>, speed: Speedometer) -> Retaker {
        Retaker {
            threshold,
            in_vain: 0,
            speed,
        }
    }

    /// The run's machine speed so far, for `env.machine_speed`.
    pub fn machine_speed(&self) -> Option<harness::env::MachineSpeed> {
        self.speed.summary()
    }

    /// Runs one repetition through `attempt` and retakes it while its load is above the
    /// threshold, at most [`MAX_RETAKES`] times (none while the machine has stayed busy,
    /// see [`IN_VAIN_LIMIT`]). `attempt` returns `None` when lab is stopping: then the
    /// repetition is discarded, whatever was tried before.
    pub fn repetition(
        &mut self,
        mut attempt: impl FnMut() -> Option<RunRecord>,
    ) -> Option<RunRecord> {
        let retakes = if self.in_vain >= IN_VAIN_LIMIT {
            0
        } else {
            MAX_RETAKES
        };
        let mut tried: Vec<RunRecord> = Vec::new();
        let (kept, over) = loop {
            let mut record = attempt()?;
            self.speed.mark(&mut record);
            if self.badness(&record) == 0.0 {
                break (self.keep(record, tried, false), false);
            }
            tried.push(record);
            if tried.len() > retakes {
                let best = (0..tried.len())
                    .min_by(|&a, &b| self.badness(&tried[a]).total_cmp(&self.badness(&tried[b])))
                    .expect("attempts were made");
                let kept = tried.remove(best);
                break (self.keep(kept, tried, true), true);
            }
        };
        if over {
            self.in_vain += 1;
        } else {
            self.in_vain = 0;
        }
        self.speed.kept(&kept);
        Some(kept)
    }

    /// How far over its bounds an attempt is: 0.0 within both (or a failure, which is a
    /// finding and never retaken), else the larger of its load over the threshold and its
    /// machine speed outside the tolerance, each in units of its bound.
    fn badness(&self, record: &RunRecord) -> f64 {
        if record.status != CellStatus::Ok || !record.verified {
            return 0.0;
        }
        let loaded = match (self.threshold, &record.interference) {
            (Some(t), Some(i)) if i.above(t) => i.load() / t,
            _ => 0.0,
        };
        loaded.max(self.speed.excess(record))
    }

    /// `kept` with the discarded attempts counted in its interference, each under the
    /// reason it was retaken for.
    fn keep(&self, mut kept: RunRecord, discarded: Vec<RunRecord>, over: bool) -> RunRecord {
        let slow: Vec<f64> = discarded
            .iter()
            .filter(|r| self.speed.excess(r) > 0.0)
            .filter_map(|r| r.interference.as_ref()?.machine_speed)
            .collect();
        let loaded = discarded.iter().filter(|r| self.speed.excess(r) == 0.0);
        if let Some(i) = kept.interference.as_mut() {
            i.retaken += discarded.len();
            i.retaken_loads.extend(loaded.map(load));
            i.retaken_speeds.extend(slow);
            i.kept_over_threshold += usize::from(over);
        }
        kept
    }
}

fn load(r: &RunRecord) -> f64 {
    r.interference.as_ref().map_or(0.0, |i| i.load())
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

fn tally<'a>(cells: impl Iterator<Item = &'a RunRecord>) -> Tally {
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
pub fn lines(results: &ResultsFile) -> Vec<String> {
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
            let cells: Vec<&RunRecord> = results
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
    rows.extend(env.machine_speed.as_ref().map(crate::speed::env_row));
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

#[cfg(test)]
pub(crate) mod tests;

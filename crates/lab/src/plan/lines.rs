//! What `lab matrix` says a plan will run, before it runs (and all `plan=true` prints):
//! one line per scenario file, `<file>.toml: cores <list>; threads <list>; <n> cells, <n>
//! runs, about <duration>` (`clients <list>` or `fixed at threads <list>` for those
//! axes), with `; trimmed ...` after it when the budget trimmed that file, then `plan:
//! <n> cells, <n> runs, about <duration>`. Scripts read these lines: durations have no
//! spaces (`12m30s`). Notes (where the costs came from, an unmet budget) are separate
//! lines from [`MatrixPlan::plan_notes`].

use std::time::Duration;

use super::MatrixPlan;
use crate::scenario_file::{join, Axis};

/// `45s`, `2m10s`, `1h5m0s`: whole seconds, no spaces.
pub fn short(d: Duration) -> String {
    let secs = d.as_secs_f64().round() as u64;
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    match (h, m) {
        (0, 0) => format!("{s}s"),
        (0, _) => format!("{m}m{s}s"),
        _ => format!("{h}h{m}m{s}s"),
    }
}

impl MatrixPlan {
    /// One line per scenario file, then the total.
    pub fn plan_lines(&self) -> Vec<String> {
        let mut lines: Vec<String> = self
            .scenarios
            .iter()
            .zip(self.estimates())
            .map(|(s, e)| {
                let axis = match s.axis {
                    Axis::Threads => "threads",
                    Axis::Clients => "clients",
                    Axis::Fixed => "fixed at threads",
                };
                let mut line = format!(
                    "{}.toml: cores {}; {axis} {}; {} cells, {} runs, about {}",
                    s.file,
                    join(&s.cores),
                    join(&s.threads),
                    e.cells,
                    e.runs,
                    short(e.time)
                );
                if !s.trimmed.is_empty() {
                    line.push_str(&format!("; trimmed {}", s.trimmed.join(", ")));
                }
                line
            })
            .collect();
        let total = self.estimate();
        lines.push(format!(
            "plan: {} cells, {} runs, about {}",
            total.cells,
            total.runs,
            short(total.time)
        ));
        lines
    }

    /// What the estimate rests on and whether it meets the budget, one line each.
    pub fn plan_notes(&self) -> Vec<String> {
        let mut from: Vec<String> = Vec::new();
        for s in &self.scenarios {
            let entry = format!(
                "{} {}ms ({})",
                s.file,
                s.overhead.as_millis(),
                s.overhead_from
            );
            from.push(entry);
        }
        let mut notes = vec![format!(
            "costs: {} CPUs; per-run overhead beyond warm-up and window: {}",
            self.nproc,
            from.join(", ")
        )];
        match self.budget {
            Some(b) if self.over_budget() => notes.push(format!(
                "over budget: about {} against budget={} with everything trimmed that may be; give a larger budget= or fewer scenarios=",
                short(self.estimate().time),
                short(b)
            )),
            Some(b) => notes.push(format!(
                "budget: {} left for the matrix{}",
                short(b),
                match super::spent_before() {
                    d if d.is_zero() => String::new(),
                    d => format!(" ({} went to the build before it)", short(d)),
                }
            )),
            None => notes.push("budget: none (nothing trimmed)".to_owned()),
        }
        notes.push(match (self.pairs, self.budget) {
            (false, _) => "comparisons: none (quick and smoke runs answer no question: their findings' parts are inconclusive)".to_owned(),
            (true, Some(b)) => format!(
                "comparisons: the findings' parts measured as pairs after the rounds, about {} ({:.0}% of the budget) and whatever the rounds leave",
                short(b.mul_f64(super::PAIRS_SHARE)),
                super::PAIRS_SHARE * 100.0
            ),
            (true, None) => format!(
                "comparisons: the findings' parts measured as pairs after the rounds, each until decided or {} pairs",
                harness::decide::interval::LOOKS.last().unwrap_or(&0)
            ),
        });
        notes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_whole_seconds_without_spaces() {
        assert_eq!(short(Duration::from_millis(44_600)), "45s");
        assert_eq!(short(Duration::from_secs(130)), "2m10s");
        assert_eq!(short(Duration::from_secs(3900)), "1h5m0s");
        assert_eq!(short(Duration::ZERO), "0s");
    }
}

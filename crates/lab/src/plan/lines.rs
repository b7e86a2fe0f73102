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
            let profile = s
                .profile_overhead
                .map(|p| format!("; a profiled run {}ms", p.as_millis()))
                .unwrap_or_default();
            let entry = format!(
                "{} {}ms ({}{profile})",
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
        if let Some(build) = self.build_seconds {
            notes.push(format!(
                "build: {} before the run, not counted in budget= (it covers the measurement only)",
                short(Duration::from_secs_f64(build))
            ));
        }
        match self.budget {
            Some(b) if self.over_budget() => notes.push(format!(
                "over budget: about {} against budget={} with everything trimmed that may be; give a larger budget= or fewer scenarios=",
                short(self.estimate().time),
                short(b)
            )),
            Some(b) => {
                notes.push(format!(
                    "budget: {} of measurement: the parts' pairs kept first, the rounds in what is left, the profiles kept too",
                    short(b)
                ));
                let left = super::rounds_share(b, self.pairs, super::parts::reserve(&self.parts));
                if self.estimate().time > left {
                    notes.push(format!(
                        "rounds: about {} of rounds and profiles planned against {} left to them: the rounds stop when their time is up, but every cell keeps {} repetitions and the profiles keep theirs, about {} in all{}",
                        short(self.estimate().time),
                        short(left),
                        super::budget::KEPT_REPEATS,
                        short(self.least_rounds()),
                        if self.pairs {
                            "; what the pairs leave goes to the repetitions left out, before the placebos' pairs past their floors"
                        } else {
                            ""
                        }
                    ));
                }
            }
            None => notes.push("budget: none (nothing trimmed)".to_owned()),
        }
        if !self.pairs {
            notes.push("comparisons: none (quick and smoke runs answer no question: their findings' parts are inconclusive)".to_owned());
        }
        notes.extend(self.parts_lines());
        notes
    }

    /// The parts' planned pairs, one line each, and a line for what the budget cannot give.
    fn parts_lines(&self) -> Vec<String> {
        if self.parts.is_empty() {
            return Vec::new();
        }
        let asked: Vec<&super::parts::PartPlan> =
            self.parts.iter().filter(|p| p.missing.is_empty()).collect();
        let reserve = super::parts::reserve(&self.parts);
        let mut lines = vec![format!(
            "pairs: {} of {} part(s) can be asked here, about {} of pairs planned; a decided part stops once its interval is +-{}% narrow (precision=)",
            asked.len(),
            self.parts.len(),
            short(reserve),
            // To a tenth of a percent: 0.07 x 100 is 7.000000000000001.
            (self.precision * 1000.0).round() / 10.0
        )];
        for p in &self.parts {
            lines.push(if p.missing.is_empty() && !p.shares.is_empty() {
                format!(
                    "  {}: {} pairs, shared with {} (the same cells: one pair of windows gives both figures)",
                    p.name, p.pairs, p.shares
                )
            } else if p.missing.is_empty() {
                format!(
                    "  {}: {} pairs ({}), about {} (noise {:.2}, {})",
                    p.name,
                    p.pairs,
                    p.how,
                    short(p.cost),
                    p.noise.0,
                    p.noise.1
                )
            } else {
                let why: String = p.missing.chars().take(110).collect();
                format!("  {}: not asked: {why}", p.name)
            });
        }
        if let Some(b) = self.budget {
            // What the rounds leave, not the share kept for the pairs (`pairs_room`).
            let room = self.pairs_room(b);
            if reserve > room {
                lines.push(format!(
                    "  the budget may not give every part its pairs: about {} planned, as if each deciding part took its planned pairs ({} or more), against about {} the rounds leave them; a part that decides sooner leaves its time to the repetitions the rounds left out, and parts that run out stop with reason `budget` (a larger budget= or a wider precision= helps)",
                    short(reserve),
                    super::parts::MIN_PAIRS,
                    short(room)
                ));
            }
        }
        lines
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

//! The pairs measured for a claim ([`Measured`]), the interval they give ([`Interval`]) and
//! the part of a finding they make ([`Part`]).
//!
//! Not here: running the pairs or deciding when to stop spending on them (`lab`).

use serde::{Deserialize, Serialize};

use super::claim::{Claim, Comparison};
use super::interval::{self, Looks};
use super::rule::Outcome;

/// A claim with the pairs measured for it: what the results file keeps
/// (`comparisons`), and what an answer turns into a [`Part`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    /// The claim.
    pub claim: Claim,
    /// Each pair's figures, in [`Comparison::cells`] order.
    #[serde(default)]
    pub pairs: Vec<Vec<f64>>,
    /// Seconds spent measuring its pairs.
    #[serde(default)]
    pub seconds: f64,
    /// Why it stopped: `decided`, `most pairs`, `budget spent`, `interrupted`, or the
    /// failure of a side.
    #[serde(default)]
    pub stopped: String,
    /// Slices per side in each pair: above 1 where the sides stayed resident and
    /// alternated in short turns (`harness::slices`), 1 (or 0, in files from before it
    /// was kept) where each pair measured whole windows.
    #[serde(default)]
    pub slices: usize,
    /// How its pairs are looked at: the looks it may stop at and each look's level
    /// ([`Looks::All`] in files from before it was kept, as their runs looked).
    #[serde(default)]
    pub looks: Looks,
    /// How narrow a decided part's interval must be (half its width, relative) before it
    /// stops taking pairs: `lab matrix precision=`, [`PRECISION`] by default and in files
    /// from before it was kept. Kept with the part so that a resumed run stops it where
    /// its first half would have.
    #[serde(default = "default_precision")]
    pub precision: f64,
    /// Each pair's machine-wide busy CPUs in each window (`harness::Interference::
    /// busy_cpus`), in [`Comparison::cells`] order beside [`Measured::pairs`] (0 where a
    /// window did not read it or was interleaved with another side's turns, which it then
    /// spans; an empty entry for a pair kept before busy CPUs were); empty in files from
    /// before it was kept. What [`Measured::stalls`] reads.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub busy: Vec<Vec<f64>>,
}

/// A window counts as stalled when the machine's busy CPUs in it fell below this share of
/// the usual (the median) for its cell's windows: 389 DS's 400 ms 2-thread windows here
/// ran the machine at 1.38-1.65 busy CPUs against 1.94-1.99 (0.70-0.84 of the usual) when
/// a worker waited out a 100 ms poll holding a connection's mutex (docs/findings.md). Why
/// this far below: `/proc/stat` counts 10 ms ticks, so a 100 ms window (lookup's) on 2
/// CPUs reads its busy CPUs to about 6% (one sd), a 400 ms one to about 1.5%. Not told
/// apart: a neighbour that ran through most of a cell's windows and left in a few.
pub const STALLED: f64 = 0.85;

/// A cell's windows are judged for stalls only where it keeps its CPUs busy: its usual
/// busy CPUs at least this share of its cores. Why: a paced or sleeping workload (the pool
/// model's simulated server, lease's seed load, a dqlite node waiting on its log) leaves
/// CPUs idle by design, and its few busy CPUs move with whatever else runs on the machine;
/// run 20261207T214815Z flagged such cells at 0.10-1.03 usual busy CPUs of 2 cores.
pub const SATURATED: f64 = 0.9;

/// The fewest stalled windows of one cell that [`Measured::stalls`] reports, and at least
/// one in twenty of its windows: one could be a tick miscounted or a neighbour leaving,
/// and at a hundred windows two are too few to be the server's habit.
pub const STALLS_WORTH_SAYING: usize = 2;

/// How narrow a decided part's interval must be (half its width, relative) before its
/// pairs stop, unless `lab matrix precision=` says otherwise: +-3%, the figure a reader
/// compares across runs (two default runs here agreed to within it on every part).
pub const PRECISION: f64 = 0.03;

fn default_precision() -> f64 {
    PRECISION
}

/// A ratio's median and interval over some pairs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// The median paired ratio.
    pub ratio: f64,
    /// Lower end of its interval.
    pub low: f64,
    /// Upper end.
    pub high: f64,
    /// Pairs behind it.
    pub pairs: usize,
}

/// "1.930x [1.850-2.010], 32 pairs", as reports and tests print it.
impl std::fmt::Display for Interval {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:.3}x [{:.3}-{:.3}], {} pairs",
            self.ratio, self.low, self.high, self.pairs
        )
    }
}

impl Interval {
    /// Half the interval's width relative to the ratio, e.g. 0.03 for +-3%.
    pub fn half_width(&self) -> f64 {
        ((self.high / self.low).ln() / 2.0).exp_m1()
    }
}

impl Measured {
    /// A claim with no pairs yet: a size looked at once ([`Looks::Once`]), a deciding
    /// part and the placebo at every look of [`interval::LOOKS`] (a run with a budget
    /// narrows that to [`Looks::Budgeted`]). Why not the placebo once: it is the error of
    /// the instrument the deciding parts' intervals rest on, so it is measured and judged
    /// as they are. Two runs here with it at seven pairs at 95% (20261207T014858Z and the
    /// one after) each had one miss: pool's 1.004 [1.001-1.009] (sd 0.004), where a bias
    /// of 0.4% is nothing a deciding part's interval could show, and 389 DS's 0.968
    /// [0.853-0.998].
    pub fn new(claim: Claim) -> Measured {
        let looks = if claim.size_only && !claim.placebo {
            Looks::Once
        } else {
            Looks::All
        };
        Measured {
            claim,
            pairs: Vec::new(),
            seconds: 0.0,
            stopped: String::new(),
            slices: 1,
            looks,
            precision: PRECISION,
            busy: Vec::new(),
        }
    }

    /// Adds one pair: its figures and each window's machine-wide busy CPUs, both in
    /// [`Comparison::cells`] order, so that the two stay aligned.
    pub fn push(&mut self, figures: Vec<f64>, busy: Vec<f64>) {
        // Pairs kept without busy CPUs (a results file from before them, resumed) are
        // padded with empty entries, so that the pairs after them keep theirs in step.
        self.busy.resize(self.pairs.len(), Vec::new());
        self.busy.push(busy);
        self.pairs.push(figures);
    }

    /// Where some of a cell's windows ran the machine well below its usual busy CPUs
    /// ([`STALLED`]), in words: for each such cell, how many of its windows, how busy, and
    /// the usual. Only cells that keep their cores busy are judged ([`SATURATED`]). `None`
    /// when no cell had [`STALLS_WORTH_SAYING`] such windows, or the pairs kept no busy
    /// CPUs. Why: a part whose sides' windows stall now and then has a
    /// heavy-tailed ratio, and the stall (work waiting while CPUs idle) is the server's
    /// own behaviour, worth a reader's attention beyond the width it costs.
    pub fn stalls(&self) -> Option<String> {
        let c = self.claim.comparison.as_ref()?;
        let (cells, common) = (c.cells(), c.common_params());
        if self.busy.len() != self.pairs.len() || self.busy.is_empty() {
            return None;
        }
        // Which side each cell is, in [`Comparison::cells`] order: named where one cell
        // stands on both sides (a placebo), so a reader knows which side stalled.
        let sides: Vec<&str> = [
            Some("a"),
            c.a.per.as_ref().map(|_| "a's divisor"),
            Some("b"),
            c.b.per.as_ref().map(|_| "b's divisor"),
        ]
        .into_iter()
        .flatten()
        .collect();
        let texts: Vec<String> = cells.iter().map(|c| c.text_without(&common)).collect();
        let said: Vec<String> = cells
            .iter()
            .enumerate()
            .filter_map(|(k, cell)| {
                let busy: Vec<f64> = self
                    .busy
                    .iter()
                    .filter_map(|b| b.get(k).copied())
                    .filter(|&b| b > 0.0 && b.is_finite())
                    .collect();
                if busy.is_empty() {
                    return None;
                }
                let usual = harness::stats::median(&busy);
                if usual < SATURATED * cell.cores as f64 {
                    return None;
                }
                let stalled: Vec<f64> = busy
                    .iter()
                    .copied()
                    .filter(|&b| b < STALLED * usual)
                    .collect();
                let worth = STALLS_WORTH_SAYING.max(busy.len().div_ceil(20));
                (stalled.len() >= worth).then(|| {
                    let name = if texts.iter().filter(|t| **t == texts[k]).count() > 1 {
                        format!("{} as side {}", texts[k], sides.get(k).unwrap_or(&"?"))
                    } else {
                        texts[k].clone()
                    };
                    let (lo, hi) = stalled
                        .iter()
                        .fold((f64::MAX, f64::MIN), |(l, h), &b| (l.min(b), h.max(b)));
                    format!(
                        "{} of {} windows of {} ran the machine at {lo:.2}-{hi:.2} busy CPUs \
                         against its usual {usual:.2}: the work stalled with CPUs idle",
                        stalled.len(),
                        busy.len(),
                        name
                    )
                })
            })
            .collect();
        (!said.is_empty()).then(|| said.join("; "))
    }

    /// The logs of the pairs' ratios.
    fn log_ratios(&self) -> Vec<f64> {
        let Some(c) = &self.claim.comparison else {
            return Vec::new();
        };
        self.pairs.iter().map(|p| c.ratio_of(p).ln()).collect()
    }

    /// The sd of the pairs' log ratios (the instrument's noise for this part); `None`
    /// with fewer than two pairs.
    pub fn sd(&self) -> Option<f64> {
        let logs = self.log_ratios();
        (logs.len() >= 2).then(|| {
            let n = logs.len() as f64;
            let mean = logs.iter().sum::<f64>() / n;
            (logs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
        })
    }

    /// The median paired ratio (the Hodges-Lehmann centre of the log ratios) and its
    /// signed-rank interval at the per-look alpha of its [`Looks`]; `None` with too few
    /// pairs.
    pub fn interval(&self) -> Option<Interval> {
        let logs = self.log_ratios();
        let (m, lo, hi) = interval::centre_interval(&logs, self.looks.alpha())?;
        Some(Interval {
            ratio: m.exp(),
            low: lo.exp(),
            high: hi.exp(),
            pairs: logs.len(),
        })
    }

    /// The outcome its pairs give.
    pub fn outcome(&self) -> Outcome {
        match (&self.claim.comparison, self.interval()) {
            (Some(c), Some(i)) => c.rule.outcome(i.low, i.high),
            _ => Outcome::Inconclusive,
        }
    }

    /// Whether it needs no more pairs: decided and as narrow as its
    /// [`Measured::precision`], or at the last look. Checked only at looks, as the
    /// interval's alpha assumes.
    pub fn done(&self) -> bool {
        let n = self.pairs.len();
        if n >= self.looks.last() {
            return true;
        }
        self.looks.is_look(n)
            && self.outcome() != Outcome::Inconclusive
            && self
                .interval()
                .is_some_and(|i| i.half_width() <= self.precision)
    }

    /// The part as `findings.json` has it.
    pub fn part(&self) -> Part {
        let interval = self.interval();
        let why = if let Some(c) = &self.claim.comparison {
            match (interval, self.outcome()) {
                (None, _) => format!(
                    "{} pair(s) measured ({}); {} give an interval",
                    self.pairs.len(),
                    if self.stopped.is_empty() {
                        "not measured as pairs in this run"
                    } else {
                        &self.stopped
                    },
                    self.looks.first()
                ),
                // Why say where the centre lies: a ratio between the thresholds is an
                // effect too small to show and too large to contradict, which more pairs
                // only confirm (the real 389 DS's 0.954 against 0.95-0.98 on one host);
                // a reader should rerun a noisy part, not that one.
                (Some(i), Outcome::Inconclusive) => format!(
                    "the interval still spans a threshold ({}){}; stopped: {}",
                    c.rule.text(),
                    if c.rule.outcome(i.ratio, i.ratio) == Outcome::Inconclusive {
                        format!(
                            "; its centre {:.3} lies between the thresholds, where more pairs \
                             would not decide it",
                            i.ratio
                        )
                    } else {
                        String::new()
                    },
                    self.stopped
                ),
                (Some(i), _) if self.stopped == "budget spent" => format!(
                    "{}; decided, and the budget ran out before it was narrower than +-{:.1}%",
                    c.rule.text(),
                    i.half_width() * 100.0
                ),
                (Some(_), _) => format!("{}; stopped: {}", c.rule.text(), self.stopped),
            }
        } else {
            self.claim.missing.clone()
        };
        Part {
            name: self.claim.part.clone(),
            claim: self.claim.claim.clone(),
            outcome: self.outcome(),
            ratio: interval.map(|i| i.ratio),
            low: interval.map(|i| i.low),
            high: interval.map(|i| i.high),
            pairs: self.pairs.len(),
            sd: self.sd(),
            slices: self.slices.max(1),
            thresholds: self
                .claim
                .comparison
                .as_ref()
                .map(|c| c.rule.thresholds())
                .unwrap_or_default(),
            seconds: self.seconds,
            sides: self
                .claim
                .comparison
                .as_ref()
                .map(Comparison::sides_text)
                .unwrap_or_default(),
            reason: self.reason().to_owned(),
            weight: if self.claim.placebo {
                PLACEBO_WEIGHT
            } else if self.claim.size_only {
                SIZE_ONLY
            } else {
                DECIDES
            }
            .to_owned(),
            basis: self.claim.basis.clone(),
            why,
            stalls: self.stalls().unwrap_or_default(),
        }
    }

    /// Why it stopped, as [`Part::reason`] words it.
    pub fn reason(&self) -> &'static str {
        if self.claim.comparison.is_none() {
            return reason::of_missing(&self.claim.missing);
        }
        if self.outcome() != Outcome::Inconclusive {
            return reason::DECIDED;
        }
        match self.stopped.as_str() {
            reason::NO_PAIRS_STOP => reason::NO_PAIRS,
            "most pairs" => reason::FUTILE,
            s if s.starts_with("would not decide") => reason::FUTILE,
            s if s.starts_with("failed") || s.starts_with("not measured") => reason::NO_CELLS,
            _ => reason::BUDGET,
        }
    }
}

/// One part of a finding as `findings.json`, `index.html` and `summary.md` show it.
/// Field names are read by scripts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Part {
    /// The part's name, e.g. `threads_past_cpus`.
    pub name: String,
    /// What it claims.
    #[serde(default)]
    pub claim: String,
    /// `shown`, `contradicted` or `inconclusive`.
    pub outcome: Outcome,
    /// The median paired ratio; null without an interval.
    pub ratio: Option<f64>,
    /// Lower end of its 95% interval (valid over every look).
    pub low: Option<f64>,
    /// Upper end.
    pub high: Option<f64>,
    /// Pairs behind it.
    pub pairs: usize,
    /// The sd of its pairs' log ratios; null with fewer than two pairs.
    #[serde(default)]
    pub sd: Option<f64>,
    /// Slices per side in each pair: 1 where each pair measured whole windows in turn,
    /// more where the sides stayed resident and alternated in short turns.
    #[serde(default = "one_slice")]
    pub slices: usize,
    /// The rule's thresholds, ascending.
    pub thresholds: Vec<f64>,
    /// Seconds its pairs took.
    pub seconds: f64,
    /// The two sides in words.
    #[serde(default)]
    pub sides: String,
    /// Why it came out so, or why it could not be measured.
    #[serde(default)]
    pub why: String,
    /// Why it stopped, in one word read by scripts: `decided`, `futile` (it would not
    /// decide within the most pairs at this noise), `budget` (the time ran out first),
    /// `needs_cpus` (this machine has too few CPUs to ask it), `no_cells` (the plan lacks
    /// its cells, or a side failed).
    #[serde(default)]
    pub reason: String,
    /// `decides` (the verdict rests on it), `size_only` (how much, by construction) or
    /// `placebo` (a cell against itself: the instrument's own error).
    #[serde(default = "decides")]
    pub weight: String,
    /// Where some of a cell's windows ran the machine well below its usual busy CPUs
    /// ([`Measured::stalls`]): the work stalled with CPUs idle. Empty where none did. Apart
    /// from `why`: it explains a width, not an outcome, and answers quote `why`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub stalls: String,
    /// What its sides run on: `real` (the seed's own kind of system), `lab` (the lab's
    /// implementations) or `model` (a simulated part with chosen parameters).
    #[serde(default)]
    pub basis: String,
}

fn decides() -> String {
    DECIDES.to_owned()
}

fn one_slice() -> usize {
    1
}

/// [`Part::weight`] of a part the verdict rests on.
pub const DECIDES: &str = "decides";
/// [`Part::weight`] of a measurement of size only.
pub const SIZE_ONLY: &str = "size_only";
/// [`Part::weight`] of a placebo ([`super::Claim::placebo`]): the instrument's own error.
pub const PLACEBO_WEIGHT: &str = "placebo";

/// The words [`Part::reason`] takes.
pub mod reason {
    /// The part's interval cleared its rule.
    pub const DECIDED: &str = "decided";
    /// It would not decide within the most pairs at this noise (a size: it did not at
    /// its fixed count, [`crate::decide::interval::ONCE_PAIRS`]).
    pub const FUTILE: &str = "futile";
    /// The time ran out first.
    pub const BUDGET: &str = "budget";
    /// This machine has too few CPUs to ask it.
    pub const NEEDS_CPUS: &str = "needs_cpus";
    /// The plan lacks its cells, or a side failed.
    pub const NO_CELLS: &str = "no_cells";
    /// The run measured no pairs at all (quick, smoke, `pairs=false`).
    pub const NO_PAIRS: &str = "no_pairs";

    /// How `lab` marks a part it declared in a run that measures no pairs.
    pub const NO_PAIRS_STOP: &str =
        "no pairs in this run (quick and smoke runs measure none; the default `just matrix` does)";

    /// The reason a part without a comparison gives, from why it has none: the hot paths
    /// word a lack of CPUs as "needs ... CPUs or more" or "this machine has N CPU(s)".
    pub fn of_missing(missing: &str) -> &'static str {
        let cpus = missing.contains("CPUs or more")
            || missing.contains("machine has")
            || missing.contains("needs a machine");
        if cpus {
            NEEDS_CPUS
        } else {
            NO_CELLS
        }
    }
}

impl Part {
    /// A part decided otherwise than by pairs (a profile's shares, say), or not at all.
    pub fn other(name: &str, claim: &str, outcome: Outcome, why: impl Into<String>) -> Part {
        Part {
            name: name.to_owned(),
            claim: claim.to_owned(),
            outcome,
            ratio: None,
            low: None,
            high: None,
            pairs: 0,
            sd: None,
            slices: 1,
            thresholds: Vec::new(),
            seconds: 0.0,
            sides: String::new(),
            reason: if outcome == Outcome::Inconclusive {
                reason::NO_CELLS
            } else {
                reason::DECIDED
            }
            .to_owned(),
            weight: decides(),
            basis: String::new(),
            why: why.into(),
            stalls: String::new(),
        }
    }

    /// Whether the verdict rests on it (not a measurement of size only, nor a placebo).
    pub fn decides(&self) -> bool {
        self.weight != SIZE_ONLY && self.weight != PLACEBO_WEIGHT
    }

    /// Whether it is a placebo, the instrument's own error.
    pub fn is_placebo(&self) -> bool {
        self.weight == PLACEBO_WEIGHT
    }

    /// Whether its interval holds `ratio` (1.0 for a placebo); `None` without one.
    pub fn holds(&self, ratio: f64) -> Option<bool> {
        Some(self.low? <= ratio && ratio <= self.high?)
    }

    /// Whether the part was measured to its end: decided, or found unable to decide at
    /// this noise. A part stopped by the budget or never asked is not.
    pub fn asked(&self) -> bool {
        self.outcome != Outcome::Inconclusive || self.reason == reason::FUTILE
    }

    /// "1.93x [1.85-2.01], 32 pairs", or the outcome's reason where there is no ratio.
    pub fn figure(&self) -> String {
        match (self.ratio, self.low, self.high) {
            (Some(ratio), Some(low), Some(high)) => Interval {
                ratio,
                low,
                high,
                pairs: self.pairs,
            }
            .to_string(),
            _ => self.why.clone(),
        }
    }
}

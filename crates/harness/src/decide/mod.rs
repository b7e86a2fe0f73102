//! What decides a part of a seed's claim: a comparison of two sides measured as pairs
//! adjacent in time, and the rule that turns its interval into an outcome.
//!
//! A hot path declares its question's parts with [`Claim`]s (in its crate, next to its
//! question, from the cells a plan will run, [`Planned`]); each claim names the
//! [`Comparison`] that decides it, or why none can here. `lab matrix` measures each
//! comparison as pairs (A then B, then B then A, alternated) until its interval
//! ([`interval`]) lies wholly on one side of the thresholds or inside the no-effect band,
//! or its share of the budget is spent, and keeps the pairs as [`Measured`]. The answer
//! turns them into [`Part`]s, and the verdict follows from the parts alone
//! ([`crate::findings::Verdict::of_outcomes`]).
//!
//! Not here: running pairs or spending the budget (`lab`), wording (each hot path).

pub mod interval;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::schema::RunRecord;

/// One cell of a plan, named as a comparison names its sides: scenario file, variant,
/// threads, cores and the parameters that tell it apart from the file's other cells.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellRef {
    /// Scenario file name, e.g. `lookup`.
    pub file: String,
    /// Variant.
    pub variant: String,
    /// Threads (clients, on a client axis).
    pub threads: usize,
    /// CPUs in the cell's mask.
    pub cores: usize,
    /// Parameters the cell must have; those not named may be anything.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<String, serde_json::Value>,
}

impl CellRef {
    /// `variant` of `file` at `threads` and `cores`, any parameters.
    pub fn new(file: &str, variant: &str, threads: usize, cores: usize) -> CellRef {
        CellRef {
            file: file.to_owned(),
            variant: variant.to_owned(),
            threads,
            cores,
            params: BTreeMap::new(),
        }
    }

    /// The same cell with parameter `key` set to `value`.
    pub fn with(mut self, key: &str, value: impl Into<serde_json::Value>) -> CellRef {
        self.params.insert(key.to_owned(), value.into());
        self
    }

    /// Whether a cell of `file` with these figures is this one.
    pub fn matches(
        &self,
        file: &str,
        variant: &str,
        threads: usize,
        cores: usize,
        params: &BTreeMap<String, serde_json::Value>,
    ) -> bool {
        self.file == file
            && self.variant == variant
            && self.threads == threads
            && self.cores == cores
            && self.params.iter().all(|(k, v)| params.get(k) == Some(v))
    }

    /// Whether the record is this cell.
    pub fn matches_record(&self, r: &RunRecord) -> bool {
        self.matches(
            crate::findings::file_of(r),
            &r.variant,
            r.threads,
            r.cores,
            &r.params,
        )
    }

    /// "`entry-cache` 12 threads on 2 CPUs (lookup)", with any parameters named.
    pub fn text(&self) -> String {
        self.text_without(&BTreeMap::new())
    }

    /// [`CellRef::text`] without the parameters `common` holds with the same value (those
    /// every side of a comparison shares, which tell nothing apart).
    pub fn text_without(&self, common: &BTreeMap<String, serde_json::Value>) -> String {
        let params: Vec<String> = self
            .params
            .iter()
            .filter(|(k, v)| common.get(*k) != Some(v))
            .map(|(k, v)| match v {
                serde_json::Value::String(s) => format!("{k}={s}"),
                v => format!("{k}={v}"),
            })
            .collect();
        format!(
            "`{}` {} threads on {} CPU{}{} ({})",
            self.variant,
            self.threads,
            self.cores,
            if self.cores == 1 { "" } else { "s" },
            if params.is_empty() {
                String::new()
            } else {
                format!(", {}", params.join(", "))
            },
            self.file
        )
    }
}

/// One side of a comparison: a cell's figure, or a ratio of two cells' figures (a
/// design's 2-thread over its 1-thread throughput, say), so a side can be a scaling.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Side {
    /// The cell whose figure is the numerator.
    pub cell: CellRef,
    /// The cell whose figure divides it, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per: Option<CellRef>,
}

impl Side {
    /// A side that is one cell's figure.
    pub fn cell(cell: CellRef) -> Side {
        Side { cell, per: None }
    }

    /// A side that is `cell`'s figure over `per`'s.
    pub fn ratio(cell: CellRef, per: CellRef) -> Side {
        Side {
            cell,
            per: Some(per),
        }
    }

    /// The side in words.
    pub fn text(&self) -> String {
        self.text_without(&BTreeMap::new())
    }

    /// The side in words, without the parameters in `common`.
    pub fn text_without(&self, common: &BTreeMap<String, serde_json::Value>) -> String {
        match &self.per {
            None => self.cell.text_without(common),
            Some(per) => format!(
                "{} over {}",
                self.cell.text_without(common),
                per.text_without(common)
            ),
        }
    }
}

/// What a ratio must do for its part to count as shown or contradicted. Between the
/// thresholds an interval decides nothing: a true ratio there stays inconclusive however
/// many pairs are taken, which is the honest answer for an effect of that size.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Rule {
    /// Shown when the interval lies wholly above `shown`; contradicted when wholly below
    /// `contradicted` (no effect, or the other way). `contradicted <= shown`.
    Above {
        /// The smallest ratio that counts as the effect.
        shown: f64,
        /// The largest ratio that counts as its absence.
        contradicted: f64,
    },
    /// Shown when the interval lies wholly below `shown`; contradicted when wholly above
    /// `contradicted`. `shown <= contradicted`.
    Below {
        /// The largest ratio that counts as the effect.
        shown: f64,
        /// The smallest ratio that counts as its absence.
        contradicted: f64,
    },
    /// A claim of no effect: shown when the interval lies inside the band, contradicted
    /// when it lies wholly outside it.
    Within {
        /// The band's lower end.
        low: f64,
        /// The band's upper end.
        high: f64,
    },
}

impl Rule {
    /// The thresholds, ascending, as `findings.json` lists them.
    pub fn thresholds(&self) -> Vec<f64> {
        let (a, b) = match *self {
            Rule::Above {
                shown,
                contradicted,
            } => (contradicted, shown),
            Rule::Below {
                shown,
                contradicted,
            } => (shown, contradicted),
            Rule::Within { low, high } => (low, high),
        };
        vec![a.min(b), a.max(b)]
    }

    /// The outcome of an interval `[low, high]`.
    pub fn outcome(&self, low: f64, high: f64) -> Outcome {
        let (shown, contradicted) = match *self {
            Rule::Above {
                shown,
                contradicted,
            } => (low > shown, high < contradicted),
            Rule::Below {
                shown,
                contradicted,
            } => (high < shown, low > contradicted),
            Rule::Within { low: a, high: b } => (a <= low && high <= b, high < a || low > b),
        };
        match (shown, contradicted) {
            (true, _) => Outcome::Shown,
            (_, true) => Outcome::Contradicted,
            _ => Outcome::Inconclusive,
        }
    }

    /// The rule in words, e.g. "shown above 1.05, contradicted below 1.00".
    pub fn text(&self) -> String {
        match *self {
            Rule::Above {
                shown,
                contradicted,
            } => format!("shown above {shown:.2}, contradicted below {contradicted:.2}"),
            Rule::Below {
                shown,
                contradicted,
            } => format!("shown below {shown:.2}, contradicted above {contradicted:.2}"),
            Rule::Within { low, high } => {
                format!("shown inside {low:.2}-{high:.2}, contradicted wholly outside")
            }
        }
    }
}

/// Two sides and what their ratio means: `scale x figure(a) / figure(b)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// The numerator.
    pub a: Side,
    /// The denominator.
    pub b: Side,
    /// The figure compared: `ops_per_sec`, or a key of the records' `extra`.
    pub figure: String,
    /// A constant the ratio is multiplied by (per-core or per-thread figures: the ratio of
    /// the counts); 1 for a plain ratio.
    #[serde(default = "one")]
    pub scale: f64,
    /// What the ratio must do.
    pub rule: Rule,
}

fn one() -> f64 {
    1.0
}

impl Comparison {
    /// `a` against `b` on throughput, judged by `rule`.
    pub fn throughput(a: Side, b: Side, rule: Rule) -> Comparison {
        Comparison {
            a,
            b,
            figure: "ops_per_sec".to_owned(),
            scale: 1.0,
            rule,
        }
    }

    /// The cells a pair measures, in the order its figures are kept: a, a's divisor, b,
    /// b's divisor.
    pub fn cells(&self) -> Vec<&CellRef> {
        [
            Some(&self.a.cell),
            self.a.per.as_ref(),
            Some(&self.b.cell),
            self.b.per.as_ref(),
        ]
        .into_iter()
        .flatten()
        .collect()
    }

    /// "a against b" in words, naming only the parameters that tell the cells apart.
    pub fn sides_text(&self) -> String {
        let cells = self.cells();
        let mut common = cells[0].params.clone();
        common.retain(|k, v| cells.iter().all(|c| c.params.get(k) == Some(v)));
        format!(
            "{} against {}",
            self.a.text_without(&common),
            self.b.text_without(&common)
        )
    }

    /// The comparison's figure of a record; `None` where the record lacks it.
    pub fn figure_of(&self, r: &RunRecord) -> Option<f64> {
        if !r.usable() {
            return None;
        }
        let v = if self.figure == "ops_per_sec" {
            r.ops_per_sec
        } else {
            crate::judge::extra(r, &self.figure)?
        };
        (v.is_finite() && v > 0.0).then_some(v)
    }

    /// The ratio of one pair's figures (in [`Comparison::cells`] order).
    pub fn ratio_of(&self, figures: &[f64]) -> f64 {
        let mut it = figures.iter().copied();
        let mut side = |s: &Side| {
            let v = it.next().unwrap_or(f64::NAN);
            match s.per {
                Some(_) => v / it.next().unwrap_or(f64::NAN),
                None => v,
            }
        };
        let a = side(&self.a);
        let b = side(&self.b);
        self.scale * a / b
    }
}

/// A part of a hot path's question as its crate declares it: the part's name (read by
/// scripts), the claim in words, and the comparison that decides it, or why none can in
/// this plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Claim {
    /// The hot path that declared it (`lab` fills it in, so two hot paths may name parts
    /// alike).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub hot_path: String,
    /// The part's name, e.g. `threads_past_cpus`.
    pub part: String,
    /// What the part claims, in the user's words.
    pub claim: String,
    /// The comparison that decides it; `None` when the plan lacks its cells.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comparison: Option<Comparison>,
    /// Why no comparison decides it here (empty when one does).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub missing: String,
}

impl Claim {
    /// A part decided by `comparison`.
    pub fn decided_by(part: &str, claim: impl Into<String>, comparison: Comparison) -> Claim {
        Claim {
            hot_path: String::new(),
            part: part.to_owned(),
            claim: claim.into(),
            comparison: Some(comparison),
            missing: String::new(),
        }
    }

    /// A part this plan cannot decide, and why.
    pub fn cannot(part: &str, claim: impl Into<String>, why: impl Into<String>) -> Claim {
        Claim {
            hot_path: String::new(),
            part: part.to_owned(),
            claim: claim.into(),
            comparison: None,
            missing: why.into(),
        }
    }
}

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

impl Interval {
    /// Half the interval's width relative to the ratio, e.g. 0.03 for +-3%.
    pub fn half_width(&self) -> f64 {
        ((self.high / self.low).ln() / 2.0).exp_m1()
    }
}

impl Measured {
    /// A claim with no pairs yet.
    pub fn new(claim: Claim) -> Measured {
        Measured {
            claim,
            pairs: Vec::new(),
            seconds: 0.0,
            stopped: String::new(),
        }
    }

    /// The logs of the pairs' ratios.
    fn log_ratios(&self) -> Vec<f64> {
        let Some(c) = &self.claim.comparison else {
            return Vec::new();
        };
        self.pairs.iter().map(|p| c.ratio_of(p).ln()).collect()
    }

    /// The median paired ratio (the Hodges-Lehmann centre of the log ratios) and its
    /// signed-rank interval at the per-look alpha; `None` with too few pairs.
    pub fn interval(&self) -> Option<Interval> {
        let logs = self.log_ratios();
        let (m, lo, hi) = interval::centre_interval(&logs, interval::alpha_per_look())?;
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

    /// Whether it needs no more pairs: decided and as narrow as `precision` (e.g. 0.03),
    /// or at the last look. Checked only at looks, as the interval's alpha assumes.
    pub fn done(&self, precision: f64) -> bool {
        let n = self.pairs.len();
        if n >= *interval::LOOKS.last().unwrap_or(&0) {
            return true;
        }
        interval::is_look(n)
            && self.outcome() != Outcome::Inconclusive
            && self.interval().is_some_and(|i| i.half_width() <= precision)
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
                    interval::LOOKS[0]
                ),
                (Some(_), Outcome::Inconclusive) => format!(
                    "the interval still spans a threshold ({}); stopped: {}",
                    c.rule.text(),
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
            why,
        }
    }
}

/// How a part came out. The JSON words are read by scripts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Its interval lies where the claim says.
    Shown,
    /// Its interval lies where the claim's absence (or the opposite) says.
    Contradicted,
    /// Its interval spans a threshold, or it could not be measured.
    Inconclusive,
}

impl Outcome {
    /// The word as `findings.json` has it.
    pub fn word(self) -> &'static str {
        match self {
            Outcome::Shown => "shown",
            Outcome::Contradicted => "contradicted",
            Outcome::Inconclusive => "inconclusive",
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
            thresholds: Vec::new(),
            seconds: 0.0,
            sides: String::new(),
            why: why.into(),
        }
    }

    /// "1.93x [1.85-2.01], 32 pairs", or the outcome's reason where there is no ratio.
    pub fn figure(&self) -> String {
        match (self.ratio, self.low, self.high) {
            (Some(r), Some(l), Some(h)) => {
                format!("{r:.3}x [{l:.3}-{h:.3}], {} pairs", self.pairs)
            }
            _ => self.why.clone(),
        }
    }
}

/// The cells a plan will run and the `[seed]` tables of its files: what a hot path's
/// [`crate::HotPath::claims`] declares its comparisons from.
#[derive(Debug, Clone, Copy)]
pub struct Planned<'a> {
    /// Every planned cell.
    pub cells: &'a [CellRef],
    /// `[seed]` tables by scenario file name.
    pub seeds: &'a BTreeMap<String, serde_json::Value>,
}

impl<'a> Planned<'a> {
    /// Cells of scenario file `file`.
    pub fn of_file(&self, file: &str) -> Vec<&'a CellRef> {
        self.cells.iter().filter(|c| c.file == file).collect()
    }

    /// The planned cell of `file` with this variant, threads and cores, if any.
    pub fn find(
        &self,
        file: &str,
        variant: &str,
        threads: usize,
        cores: usize,
    ) -> Option<&'a CellRef> {
        self.cells.iter().find(|c| {
            c.file == file && c.variant == variant && c.threads == threads && c.cores == cores
        })
    }

    /// The core counts of `file`, ascending.
    pub fn cores(&self, file: &str) -> Vec<usize> {
        let mut v: Vec<usize> = self.of_file(file).iter().map(|c| c.cores).collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// The thread counts of `file` at `cores`, ascending.
    pub fn threads(&self, file: &str, cores: usize) -> Vec<usize> {
        let mut v: Vec<usize> = self
            .of_file(file)
            .iter()
            .filter(|c| c.cores == cores)
            .map(|c| c.threads)
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// The `[seed]` tables, as a question reads them.
    pub fn seeds(&self) -> crate::findings::Seeds<'a> {
        crate::findings::Seeds(self.seeds)
    }
}

//! What a hot path claims and what decides it: the [`Side`]s compared, the [`Comparison`]
//! of their figures, and the [`Claim`] that names it (or why none can in a plan).
//!
//! Not here: the pairs measured for a claim and what they give ([`super::measured`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::cell::CellRef;
use super::rule::Rule;
use harness::schema::CellRecord;

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

/// The name of every hot path's placebo part ([`Claim::placebo`]), read by scripts.
pub const PLACEBO: &str = "placebo";

/// The band a placebo's interval is judged by: shown (the instrument's error is within
/// the precision a part is measured to) inside it, contradicted wholly outside.
pub const PLACEBO_BAND: (f64, f64) = (0.97, 1.03);

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
        let common = self.common_params();
        format!(
            "{} against {}",
            self.a.text_without(&common),
            self.b.text_without(&common)
        )
    }

    /// The comparison's figure of a record; `None` where the record lacks it.
    pub fn figure_of(&self, r: &CellRecord) -> Option<f64> {
        if !r.usable() {
            return None;
        }
        let v = if self.figure == "ops_per_sec" {
            r.ops_per_sec
        } else {
            r.extra.get(&self.figure).and_then(|v| v.as_f64())?
        };
        (v.is_finite() && v > 0.0).then_some(v)
    }

    /// The parameters every cell of the comparison shares with the same value: what
    /// tells its cells apart is the rest.
    pub fn common_params(&self) -> BTreeMap<String, serde_json::Value> {
        let cells = self.cells();
        let mut common = cells[0].params.clone();
        common.retain(|k, v| cells.iter().all(|c| c.params.get(k) == Some(v)));
        common
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
    /// A measurement of size only: its outcome follows from how the lab is built (two
    /// sides that do different work by construction), so it says how much, and the
    /// verdict does not rest on it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub size_only: bool,
    /// What its sides run on, where it differs from its hot path's (`real`, `lab`,
    /// `model`); empty: the hot path's.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub basis: String,
    /// The instrument's own error: both sides are one cell ([`Claim::placebo`]), so its
    /// interval should hold 1.0 as often as its 95% promises; no verdict rests on it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub placebo: bool,
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
            size_only: false,
            basis: String::new(),
            placebo: false,
        }
    }

    /// The same part as a measurement of size only (see [`Claim::size_only`]).
    pub fn sized(mut self) -> Claim {
        self.size_only = true;
        self
    }

    /// The same part on `basis` (`real`, `lab`, `model`).
    pub fn on(mut self, basis: &str) -> Claim {
        self.basis = basis.to_owned();
        self
    }

    /// The placebo part [`PLACEBO`]: `cell` against itself on `figure`, the same method
    /// as the hot path's parts (two builds, or two servers, of one cell), judged inside
    /// [`PLACEBO_BAND`]. Why every run has one: a probe here found the side of a pair
    /// built first in a process ran a contended mutex 26-42% faster than an identical
    /// second instance; only a comparison of a cell with itself shows such a bias.
    pub fn placebo(cell: CellRef, figure: &str) -> Claim {
        let (low, high) = PLACEBO_BAND;
        Claim {
            placebo: true,
            ..Claim::decided_by(
                PLACEBO,
                format!(
                    "the instrument's own error: {} against itself should come out 1.0 \
                     on {figure}",
                    cell.text()
                ),
                Comparison {
                    figure: figure.to_owned(),
                    ..Comparison::throughput(
                        Side::cell(cell.clone()),
                        Side::cell(cell),
                        Rule::Within { low, high },
                    )
                },
            )
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
            size_only: false,
            basis: String::new(),
            placebo: false,
        }
    }
}

//! What a run answered of a hot path's seed question, as data: the verdict word, what the
//! figures rest on, the sentences and tables that say why.
//!
//! A hot path asks its seed's question through [`crate::HotPath::answer`], over a [`Run`]
//! (the run's cells and the `[seed]` tables of its scenario files), and returns an
//! [`Answer`]; `lab` adds the hot path's name and question, writes `findings.json` and
//! lays the same objects out in `index.html` and `summary.md`. The comparisons an answer
//! makes go through [`crate::judge`], so every hot path judges by one rule.
//!
//! This module words nothing and renders nothing; it is the shape both sides agree on.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::decide::{Measured, Outcome, Part};
pub use crate::seeds::Seeds;
use harness::schema::CellRecord;

/// How a seed's effect came out. The JSON words are read by scripts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Every part of the seed's claim that was tested showed, beyond the noise.
    Reproduced,
    /// Some parts showed and others did not or could not be told: the sentences say which.
    Partly,
    /// The parts that could be judged did not show.
    NotReproduced,
    /// Nothing could be judged: too few repetitions, too few cores, cells missing.
    CannotTell,
    /// Every deciding part was shown, and some rest on a model whose parameters were
    /// chosen (often fitted to the seed's own figures): the model agrees with the seed,
    /// which is not the seed's effect reproduced on a real system.
    ModelAgrees,
}

impl Verdict {
    /// The word as `findings.json` has it.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Reproduced => "reproduced",
            Verdict::Partly => "partly",
            Verdict::NotReproduced => "not_reproduced",
            Verdict::CannotTell => "cannot_tell",
            Verdict::ModelAgrees => "model_agrees",
        }
    }

    /// The verdict of a claim made of parts, each `Some(shown)` where it could be judged
    /// and `None` where it could not: all shown is reproduced, none judged is cannot tell,
    /// none shown is not reproduced, anything else is partly.
    pub fn of_parts(parts: &[Option<bool>]) -> Verdict {
        let shown = parts.iter().filter(|p| **p == Some(true)).count();
        let judged = parts.iter().filter(|p| p.is_some()).count();
        match (judged, shown) {
            (0, _) => Verdict::CannotTell,
            (_, 0) => Verdict::NotReproduced,
            (j, s) if s == parts.len() && j == parts.len() => Verdict::Reproduced,
            _ => Verdict::Partly,
        }
    }

    /// The verdict of a claim from its parts' outcomes: reproduced when every part is
    /// shown, cannot tell when none was decided (or there are none), not reproduced when
    /// a part is contradicted and none is shown, partly otherwise (both occur, or some
    /// shown and some inconclusive). Overlapping intervals are never read as "not shown".
    pub fn of_outcomes(outcomes: &[Outcome]) -> Verdict {
        let shown = outcomes.iter().filter(|o| **o == Outcome::Shown).count();
        let contradicted = outcomes
            .iter()
            .filter(|o| **o == Outcome::Contradicted)
            .count();
        if outcomes.is_empty() || shown + contradicted == 0 {
            Verdict::CannotTell
        } else if shown == outcomes.len() {
            Verdict::Reproduced
        } else if shown == 0 {
            Verdict::NotReproduced
        } else {
            Verdict::Partly
        }
    }
}

/// What an answer's figures rest on. The JSON words are read by scripts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// A real implementation of each design, measured here.
    Measured,
    /// A simulated part (a server, a serving thread, a heap) whose parameters were chosen:
    /// its rates depend on them.
    Model,
    /// The seed's own system (its server or database), measured here.
    Real,
}

impl Basis {
    /// The word a part's `basis` takes: `real`, `lab` (a real implementation of each
    /// design, the lab's own) or `model`.
    pub fn part_word(self) -> &'static str {
        match self {
            Basis::Measured => "lab",
            Basis::Model => "model",
            Basis::Real => "real",
        }
    }

    /// The word as `findings.json` has it.
    pub fn word(self) -> &'static str {
        match self {
            Basis::Measured => "measured",
            Basis::Model => "model",
            Basis::Real => "real",
        }
    }
}

/// A table an answer shows: the report lays it out as HTML and Markdown alike.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Table {
    /// One line above the table.
    pub title: String,
    /// Column headings.
    pub columns: Vec<String>,
    /// Rows, each as long as `columns`.
    pub rows: Vec<Vec<String>>,
}

/// The one chart that answers a question, named by what it plots; `lab` finds the file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Chart {
    /// Per-thread throughput against threads of one scenario file, at its most cores.
    PerThread {
        /// Scenario file.
        file: String,
    },
    /// Throughput against threads of one scenario file, at its most cores.
    Throughput {
        /// Scenario file.
        file: String,
    },
    /// Throughput against a swept parameter of one scenario file.
    Sweep {
        /// Scenario file.
        file: String,
        /// The parameter swept.
        param: String,
    },
}

/// What a hot path's question returns for one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The verdict: [`Verdict::of_outcomes`] of `parts` where there are parts (`lab`
    /// makes it so), else chosen by comparisons with intervals ([`crate::judge`]).
    pub verdict: Verdict,
    /// The question's parts, every one of its fixed list, each with its outcome.
    pub parts: Vec<Part>,
    /// What the figures rest on.
    pub basis: Basis,
    /// The seed figures a model's parameters were fitted to, as "what (seed's value)";
    /// empty for a measured or real basis.
    pub calibrated_on: Vec<String>,
    /// The one figure that decides the verdict, with its interval, e.g. "efficiency 0.51
    /// [0.49–0.53] at 2 threads on 2 cores"; empty when nothing decided it.
    pub figure: String,
    /// The answer in at most three short sentences, each with its figures.
    pub sentences: Vec<String>,
    /// What a reader may unfold: per-variant details, caveats, sensitivity.
    pub details: Vec<String>,
    /// Tables of the answer (folded with the details).
    pub tables: Vec<Table>,
    /// The chart that answers the question, when the run drew it.
    pub chart: Option<Chart>,
}

impl Answer {
    /// An answer that cannot tell, for `why`.
    pub fn cannot_tell(basis: Basis, why: impl Into<String>) -> Answer {
        Answer {
            verdict: Verdict::CannotTell,
            parts: Vec::new(),
            basis,
            calibrated_on: Vec::new(),
            figure: String::new(),
            sentences: vec![why.into()],
            details: Vec::new(),
            tables: Vec::new(),
            chart: None,
        }
    }
}

/// One finding as `findings.json`, `index.html` and `summary.md` have it: an [`Answer`]
/// with the hot path and question it answers. Field names are read by scripts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// The hot path, e.g. `lookup`.
    pub hot_path: String,
    /// The question its seed asked.
    pub question: String,
    /// `reproduced`, `partly`, `not_reproduced`, `cannot_tell` or `model_agrees`.
    pub verdict: Verdict,
    /// The parts the verdict follows from, each with its ratio, interval, pairs,
    /// thresholds, outcome and time (empty in findings written before parts).
    #[serde(default)]
    pub parts: Vec<Part>,
    /// How many of [`Finding::parts`] were decided (shown or contradicted): the verdict
    /// rests on these.
    #[serde(default)]
    pub decided: usize,
    /// `measured`, `model` or `real`.
    pub basis: Basis,
    /// Seed figures a model was fitted to; empty when none.
    pub calibrated_on: Vec<String>,
    /// The deciding figure with its interval.
    #[serde(default)]
    pub figure: String,
    /// The answer, at most three sentences.
    pub sentences: Vec<String>,
    /// Folded details.
    #[serde(default)]
    pub details: Vec<String>,
    /// Folded tables.
    #[serde(default)]
    pub tables: Vec<Table>,
    /// The chart that answers the question, as the answer named it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chart: Option<Chart>,
    /// That chart's file, relative to the project root, once `lab` has found it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub chart_svg: String,
}

impl Finding {
    /// `answer` to `question` of `hot_path`.
    /// Where the answer has parts, its verdict is theirs, whatever the answer said.
    /// A part the budget stopped before it decided makes the verdict `cannot_tell`: the
    /// parts that did decide are a partial answer, not "partly" (which says the parts
    /// were asked and came out differently).
    pub fn new(hot_path: &str, question: &str, mut answer: Answer) -> Finding {
        for p in &mut answer.parts {
            if p.basis.is_empty() {
                p.basis = answer.basis.part_word().to_owned();
            }
        }
        // A measurement of size only, or a placebo, has no weight in the verdict.
        let outcomes: Vec<Outcome> = answer
            .parts
            .iter()
            .filter(|p| p.decides())
            .map(|p| p.outcome)
            .collect();
        let decided = outcomes
            .iter()
            .filter(|o| **o != Outcome::Inconclusive)
            .count();
        let cut_short = answer.parts.iter().any(|p| {
            p.decides()
                && p.outcome == Outcome::Inconclusive
                && p.reason == crate::decide::reason::BUDGET
        });
        // A model that agrees with the seed it was fitted to is not a reproduction.
        let on_a_model = answer.parts.iter().any(|p| {
            p.decides() && p.outcome == Outcome::Shown && p.basis == Basis::Model.part_word()
        }) || (answer.parts.is_empty() && answer.basis == Basis::Model);
        // A verdict rests on parts that decide: an answer whose parts are all sizes,
        // placebos or profiles cannot tell, whatever its own sentence chose.
        let verdict = match (outcomes.is_empty(), Verdict::of_outcomes(&outcomes)) {
            (true, _) if !answer.parts.is_empty() => Verdict::CannotTell,
            (true, _) => answer.verdict,
            (false, Verdict::Partly) if cut_short => Verdict::CannotTell,
            (false, v) => v,
        };
        Finding {
            hot_path: hot_path.to_owned(),
            question: question.to_owned(),
            verdict: match verdict {
                Verdict::Reproduced if on_a_model => Verdict::ModelAgrees,
                v => v,
            },
            decided,
            parts: answer.parts,
            basis: answer.basis,
            calibrated_on: answer.calibrated_on,
            figure: answer.figure,
            sentences: answer.sentences,
            details: answer.details,
            tables: answer.tables,
            chart: answer.chart,
            chart_svg: String::new(),
        }
    }
}

/// One run as a question sees it: its cells, the `[seed]` table of each scenario file
/// (the seed's baseline, figures and settings, as data) and the comparisons measured as
/// pairs for the questions' parts.
#[derive(Debug, Clone, Copy)]
pub struct Run<'a> {
    /// Every cell of the run, failed ones included.
    pub cells: &'a [CellRecord],
    /// `[seed]` tables by scenario file name.
    pub seeds: &'a BTreeMap<String, serde_json::Value>,
    /// Every claim the plan declared, with the pairs measured for it.
    pub comparisons: &'a [Measured],
}

impl<'a> Run<'a> {
    /// Usable cells (ran and verified) of scenario file `file`.
    pub fn of_file(&self, file: &str) -> Vec<&'a CellRecord> {
        self.cells
            .iter()
            .filter(|c| c.usable() && file_of(c) == file)
            .collect()
    }

    /// Part `name` as the run measured it; inconclusive, saying so, where the run did not
    /// declare it (a run of other files, or results written before parts).
    pub fn part(&self, name: &str, claim: &str) -> Part {
        match self.comparisons.iter().find(|m| m.claim.part == name) {
            Some(m) => m.part(),
            None => Part::other(
                name,
                claim,
                Outcome::Inconclusive,
                "not measured as pairs in this run (quick and smoke runs measure none, nor a \
                 run without this part's files; the default `just matrix` does)",
            ),
        }
    }

    /// The `[seed]` tables, as a question reads them.
    pub fn seeds(&self) -> Seeds<'a> {
        Seeds(self.seeds)
    }

    /// The `[seed]` table of `file`, if its results carry one.
    pub fn seed(&self, file: &str) -> Option<&'a serde_json::Map<String, serde_json::Value>> {
        self.seeds().table(file)
    }

    /// A number of `file`'s `[seed]` table.
    pub fn seed_f64(&self, file: &str, key: &str) -> Option<f64> {
        self.seeds().f64(file, key)
    }

    /// A list of words of `file`'s `[seed]` table (empty when absent).
    pub fn seed_strs(&self, file: &str, key: &str) -> Vec<String> {
        self.seeds().strs(file, key)
    }
}

/// The scenario file a record came from (older results carry none: the hot path's name).
pub fn file_of(r: &CellRecord) -> &str {
    r.file()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdict_of_parts() {
        use Verdict::*;
        assert_eq!(Verdict::of_parts(&[Some(true), Some(true)]), Reproduced);
        assert_eq!(Verdict::of_parts(&[Some(true), None]), Partly);
        assert_eq!(Verdict::of_parts(&[Some(true), Some(false)]), Partly);
        assert_eq!(Verdict::of_parts(&[Some(false), None]), NotReproduced);
        assert_eq!(Verdict::of_parts(&[None, None]), CannotTell);
        assert_eq!(Verdict::of_parts(&[]), CannotTell);
    }

    #[test]
    fn verdict_of_outcomes() {
        use Outcome::*;
        use Verdict::*;
        assert_eq!(Verdict::of_outcomes(&[Shown, Shown]), Reproduced);
        assert_eq!(Verdict::of_outcomes(&[Shown, Inconclusive]), Partly);
        assert_eq!(Verdict::of_outcomes(&[Shown, Contradicted]), Partly);
        assert_eq!(
            Verdict::of_outcomes(&[Contradicted, Inconclusive]),
            NotReproduced
        );
        assert_eq!(Verdict::of_outcomes(&[Contradicted]), NotReproduced);
        assert_eq!(
            Verdict::of_outcomes(&[Inconclusive, Inconclusive]),
            CannotTell
        );
        assert_eq!(Verdict::of_outcomes(&[]), CannotTell);
    }

    fn part(outcome: Outcome, basis: Basis) -> Part {
        let mut p = Part::other("p", "claim", outcome, "");
        p.basis = basis.part_word().to_owned();
        p
    }

    fn verdict_of(parts: Vec<Part>, basis: Basis) -> Verdict {
        let mut answer = Answer::cannot_tell(basis, "");
        answer.parts = parts;
        Finding::new("h", "q", answer).verdict
    }

    #[test]
    fn a_model_that_agrees_with_its_seed_is_never_reproduced() {
        use Outcome::*;
        let real = |o| part(o, Basis::Real);
        let model = |o| part(o, Basis::Model);
        assert_eq!(
            verdict_of(vec![real(Shown), real(Shown)], Basis::Real),
            Verdict::Reproduced
        );
        assert_eq!(
            verdict_of(vec![model(Shown), model(Shown)], Basis::Model),
            Verdict::ModelAgrees
        );
        // One shown part on a model is enough: the verdict rests on it too.
        assert_eq!(
            verdict_of(vec![real(Shown), model(Shown)], Basis::Real),
            Verdict::ModelAgrees
        );
        // A model's contradicted part is counted like any other, and keeps its word.
        assert_eq!(
            verdict_of(vec![real(Shown), model(Contradicted)], Basis::Real),
            Verdict::Partly
        );
        // Parts of an answer's basis take its word: a model answer's parts are the model's.
        assert_eq!(
            verdict_of(vec![Part::other("p", "c", Shown, "")], Basis::Model),
            Verdict::ModelAgrees
        );
    }

    #[test]
    fn words_are_the_json_words() {
        for v in [
            Verdict::Reproduced,
            Verdict::Partly,
            Verdict::NotReproduced,
            Verdict::CannotTell,
        ] {
            assert_eq!(serde_json::to_value(v).unwrap(), v.word());
        }
        assert_eq!(
            serde_json::to_value(Verdict::ModelAgrees).unwrap(),
            Verdict::ModelAgrees.word()
        );
        for b in [Basis::Measured, Basis::Model, Basis::Real] {
            assert_eq!(serde_json::to_value(b).unwrap(), b.word());
        }
    }
}

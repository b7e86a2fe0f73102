//! Findings: every registered hot path's question, asked of one run through one driver.
//!
//! Each hot path words its own answer ([`harness::HotPath::answer`], in its crate's
//! `findings` module, judged by [`verdict::judge`]); this module knows no hot path by name.
//! It asks each hot path that has cells in the run and a question, says "cannot tell" for
//! one whose answer needs cells the run lacks, adds the generic parts (thread advice per
//! variant for files whose axis is threads, as a table), and finds the chart each answer
//! names among the charts the report drew. `findings_page` lays the findings out;
//! `render` writes them as `findings.json`.

use crate::results::ResultsFile;
use verdict::findings::{Answer, Basis, Chart, Finding, Run, Table};
use verdict::Question;

use super::advice::ThreadAdvice;
use super::{Group, Sweep};
use crate::catalog;

/// The findings of one run, in catalog order; hot paths with no cells or no question are
/// left out. `groups` are the run's groups, their thread advice already computed.
pub fn findings(results: &ResultsFile, groups: &[Group<'_>]) -> Vec<Finding> {
    findings_of(catalog::questions(), results, groups)
}

/// [`findings`] over the hot paths `hot_paths` (the catalog's, or a test's own).
fn findings_of(
    hot_paths: &[Question],
    results: &ResultsFile,
    groups: &[Group<'_>],
) -> Vec<Finding> {
    let mut out = Vec::new();
    for hot_path in hot_paths {
        if !results.cells.iter().any(|c| c.hot_path == hot_path.name()) {
            continue;
        }
        let own = own_parts(results, hot_path.name());
        let run = Run {
            cells: &results.cells,
            seeds: &results.seeds,
            comparisons: &own,
        };
        let question = hot_path.words;
        let mut answer = (hot_path.answer)(&run).unwrap_or_else(|| {
            Answer::cannot_tell(
                Basis::Measured,
                "None of the cells that answer it ran: run the default matrix.",
            )
        });
        // The placebo, the delay experiment and the lock library's cost are the lab's,
        // not the question's: shown beside the parts, never in the verdict.
        answer.parts.extend(
            own.iter()
                .filter(|m| {
                    m.claim.placebo || crate::results::LAB_PARTS.contains(&m.claim.part.as_str())
                })
                .map(verdict::decide::Measured::part),
        );
        answer.tables.extend(advice_table(groups, hot_path.name()));
        out.push(Finding::new(hot_path.name(), question, answer));
    }
    out
}

/// The parts `hot_path` declared in `results`: each question reads its own only (results
/// written before parts named their hot path let every question read every part).
pub fn own_parts(results: &ResultsFile, hot_path: &str) -> Vec<verdict::decide::Measured> {
    results
        .comparisons
        .iter()
        .filter(|m| m.claim.hot_path.is_empty() || m.claim.hot_path == hot_path)
        .cloned()
        .collect()
}

/// The axis of scenario file `file` as its settings line in the results says it
/// (`lookup.toml (threads axis): ...`); `None` for results written without one.
pub fn axis_of<'a>(results: &'a ResultsFile, file: &str) -> Option<&'a str> {
    let prefix = format!("{file}.toml (");
    results.settings_by_file.iter().find_map(|line| {
        line.strip_prefix(&prefix)?
            .split_once(" axis)")
            .map(|(axis, _)| axis)
    })
}

/// Thread advice for every variant and core count of the hot path's groups: only groups of
/// thread-axis files have any (`figures` computes it), since client counts and fixed points
/// are not a setting a reader chooses.
fn advice_table(groups: &[Group<'_>], hot_path: &str) -> Option<Table> {
    let mut rows = Vec::new();
    let mut coverage: f64 = 1.0;
    for g in groups.iter().filter(|g| g.hot_path == hot_path) {
        for a in &g.thread_advice {
            coverage = coverage.min(a.min_coverage);
            let name = if g.label.is_empty() {
                g.title_name().to_owned()
            } else {
                format!("{} ({})", g.title_name(), g.label)
            };
            rows.push(advice_row(&name, a));
        }
    }
    (!rows.is_empty()).then(|| Table {
        title: format!(
            "Thread advice: the smallest thread count within the noise of the best (intervals \
             cover the median {:.1}% of the time or more)",
            coverage * 100.0
        ),
        columns: [
            "file",
            "variant",
            "cores",
            "run",
            "efficiency at threads = cores",
            "most threads / threads = cores",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect(),
        rows,
    })
}

fn advice_row(file: &str, a: &ThreadAdvice) -> Vec<String> {
    vec![
        file.to_owned(),
        format!("`{}`", a.variant),
        a.cores.to_string(),
        format!("{} threads", a.recommended.threads),
        a.efficiency_at_cores
            .filter(|_| a.cores > 1)
            .map_or("-".to_owned(), |e| format!("{e:.2}")),
        a.oversubscription
            .map_or("-".to_owned(), |r| format!("{r:.2}x")),
    ]
}

/// The chart file each finding names, from the charts the report drew; a finding whose
/// chart is missing gets its hot path's first throughput chart.
pub fn attach_charts(findings: &mut [Finding], groups: &[Group<'_>], sweeps: &[Sweep]) {
    for f in findings {
        let widest = |file: &str| {
            groups
                .iter()
                .filter(|g| g.title_name() == file)
                .flat_map(|g| g.charts.iter())
                .max_by_key(|c| c.cores)
        };
        let found = match &f.chart {
            Some(Chart::PerThread { file }) => widest(file).map(|c| c.per_thread.clone()),
            Some(Chart::Throughput { file }) => widest(file).map(|c| c.ops.clone()),
            Some(Chart::Sweep { file, param }) => sweeps
                .iter()
                .find(|s| s.file == *file && s.param == *param)
                .map(|s| s.svg.clone()),
            None => None,
        };
        f.chart_svg = found
            .or_else(|| {
                groups
                    .iter()
                    .filter(|g| g.hot_path == f.hot_path)
                    .flat_map(|g| g.charts.iter())
                    .map(|c| c.ops.clone())
                    .next()
            })
            .unwrap_or_default();
    }
}

#[cfg(test)]
mod tests {
    use harness::noop::NoopHotPath;
    use harness::testing::synthetic_cell;
    use harness::{CellFailure, HotPath, Measurement, Params, RunSettings};
    use verdict::findings::Verdict;

    use super::*;

    /// A hot path no report has heard of: its question is answered from its own cells.
    struct Toy;

    impl HotPath for Toy {
        fn description(&self) -> &'static harness::hotpath::Description {
            NoopHotPath.description()
        }
        fn name(&self) -> &'static str {
            "toy"
        }
        fn measure(&self, _: &str, _: &Params, _: RunSettings) -> Result<Measurement, CellFailure> {
            Err(CellFailure::new("a toy does not run"))
        }
    }

    /// Its question: a part-less verdict from whether 2 threads beat 1.
    const TOY: Question = Question {
        hot_path: &Toy,
        words: "Does the toy go faster with two threads?",
        claims: |_| Vec::new(),
        answer: |run| {
            let cells = run.of_file("toy");
            let at = |t: usize| cells.iter().find(|c| c.threads == t);
            let faster = verdict::judge::Est::of(at(2)?).above(&verdict::judge::Est::of(at(1)?));
            Some(Answer {
                parts: Vec::new(),
                verdict: Verdict::of_parts(&[faster]),
                basis: Basis::Measured,
                calibrated_on: Vec::new(),
                figure: "2 threads / 1".into(),
                sentences: vec!["The toy answered.".into()],
                details: Vec::new(),
                tables: Vec::new(),
                chart: None,
            })
        },
    };

    fn results(reps: usize) -> ResultsFile {
        let text = serde_json::json!({
            "schema": crate::results::SCHEMA_VERSION, "run_id": "toy", "started": "",
            "env": harness::env::EnvInfo::default(), "cells": []
        });
        let mut r: ResultsFile = serde_json::from_value(text).unwrap();
        for (t, ops) in [(1, 100.0), (2, 190.0)] {
            r.cells
                .push(synthetic_cell("toy", "toy", "v", &[], t, 2, ops, 2.0, reps));
        }
        r
    }

    #[test]
    fn a_new_hot_path_brings_its_own_question_and_answer() {
        let found = findings_of(&[TOY], &results(5), &[]);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].hot_path, "toy");
        assert_eq!(found[0].verdict, Verdict::Reproduced);
        let json = serde_json::to_value(&found).unwrap();
        assert_eq!(json[0]["verdict"], "reproduced");
        assert_eq!(json[0]["basis"], "measured");
        assert_eq!(json[0]["calibrated_on"], serde_json::json!([]));
        // The same object in summary.md.
        let source = super::super::Source {
            path: "toy.json".into(),
            results: results(5),
        };
        let analysed = super::super::Analysed {
            source: &source,
            groups: Vec::new(),
            sweeps: Vec::new(),
            findings: found,
            drawings: Vec::new(),
        };
        use super::super::markup::{Format, Markdown};
        let md = Markdown.blocks(&[super::super::findings_page::section(&[analysed], "", 1)]);
        assert!(
            md.contains(
                "| toy | Does the toy go faster with two threads? | reproduced | - | measured |"
            ),
            "{md}"
        );
    }

    #[test]
    fn too_few_repetitions_cannot_tell_and_no_question_no_finding() {
        let found = findings_of(&[TOY], &results(3), &[]);
        assert_eq!(found[0].verdict, Verdict::CannotTell);
        let mut r = results(5);
        for c in &mut r.cells {
            c.hot_path = "noop".into();
        }
        assert!(findings_of(catalog::questions(), &r, &[]).is_empty());
    }
}

//! The Findings as a reader meets them: a verdict table first (one row per finding, the
//! verdict word, the parts decided, its basis, the figure that decides it), then one
//! section per finding with its parts at a glance (part, outcome, ratio [interval], pairs,
//! weight) and its chart in view, and the rest (the question in full, the answer's
//! sentences, each part's claim, sides, thresholds and reasons, the tables) folded under
//! `<details>`; one section for `index.html` and `summary.md` alike.
//!
//! Why so little in view: with every part's sides and reasons written out the section
//! held 1211-2690 words outside `<details>`, which nobody reads at a glance; the in-view
//! words are bounded by a test (`lab/tests/report.rs`).
//!
//! Lays out [`Finding`]s only: which sentences, tables and chart a finding has is the hot
//! path's (`verdict::findings`), the driver is `findings`.

use verdict::findings::{Finding, Table};

use super::markup::{self, code_spans, small, text, Attrs, Block, Cell, Inline, Row};
use super::Analysed;

/// Sentences shown before the fold; the rest of an answer's sentences join its details.
const IN_VIEW: usize = 0;

/// The question in a few words: up to its first comma or the first ten words.
fn short_question(q: &str) -> String {
    let head = q.split([',', '(']).next().unwrap_or(q).trim();
    let words: Vec<&str> = head.split_whitespace().collect();
    if words.len() > 10 {
        format!("{}…", words[..10].join(" "))
    } else {
        head.trim_end_matches('?').to_owned() + "?"
    }
}

/// The Findings section, for every format, its heading at `level` (the page's is under
/// its title, the summary's is its first); `prefix` leads from the page to the project
/// root.
pub fn section(analysed: &[Analysed<'_>], prefix: &str, level: u8) -> Block {
    let mut blocks = vec![Block::heading(level, "Findings")];
    for a in analysed {
        if analysed.len() > 1 {
            blocks.push(Block::heading(
                level + 1,
                format!("Run {}", a.source.results.run_id),
            ));
        }
        if a.findings.is_empty() {
            blocks.push(Block::Para(text("No hot path with a seed question ran.")));
            continue;
        }
        blocks.push(Block::Table(verdicts(&a.findings)));
        if let Some(note) = crate::words::unsteady_note(&a.source.results.env) {
            blocks.push(Block::div("machine-note", vec![Block::Para(text(note))]));
        }
        blocks.extend(a.findings.iter().map(|f| finding(f, prefix, level + 1)));
    }
    Block::section(Attrs::class("findings").id("findings"), blocks)
}

/// The verdict table: one row per finding.
fn verdicts(findings: &[Finding]) -> markup::Table {
    let head = [
        "hot path",
        "question",
        "verdict",
        "parts decided",
        "basis",
        "deciding figure",
    ];
    markup::Table {
        attrs: Attrs::default().id("verdicts"),
        head: head.iter().map(|h| Cell::head(*h)).collect(),
        rows: findings
            .iter()
            .map(|f| Row {
                data: vec![("hot-path", f.hot_path.clone())],
                cells: vec![
                    Cell::text(vec![Inline::Link {
                        href: format!("#finding-{}", f.hot_path),
                        class: "",
                        text: text(&f.hot_path),
                    }]),
                    Cell::of(short_question(&f.question)),
                    Cell::of(f.verdict.word()).class(format!("verdict {}", f.verdict.word())),
                    Cell::of(if f.parts.is_empty() {
                        "-".to_owned()
                    } else {
                        format!(
                            "{} of {}",
                            f.decided,
                            f.parts.iter().filter(|p| p.decides()).count()
                        )
                    }),
                    Cell::of(f.basis.word()),
                    // Its first clause: the rest (lease names every part's figure) is
                    // in the parts table below.
                    Cell::text(code_spans(f.figure.split("; ").next().unwrap_or(""))),
                ],
            })
            .collect(),
    }
}

/// One finding: its verdict, its parts at a glance beside its chart, the rest (the
/// question and the answer's sentences first) folded under details.
fn finding(f: &Finding, prefix: &str, level: u8) -> Block {
    // The short question is the verdict table's; the full one opens the details.
    let mut heading = text(format!("{} ", f.hot_path));
    heading.push(Inline::Span {
        class: format!("verdict {}", f.verdict.word()),
        text: text(f.verdict.word()),
    });
    heading.push(Inline::Text(" ".into()));
    heading.push(small(format!("({})", f.basis.word())));
    let mut in_view: Vec<Block> = f
        .sentences
        .iter()
        .take(IN_VIEW)
        .map(|s| Block::Para(code_spans(s)))
        .collect();
    in_view.extend(parts_table(f).iter().flat_map(table_blocks));
    if let Some(line) = f.parts.iter().find(|p| p.is_placebo()).map(placebo_line) {
        in_view.push(Block::Para(code_spans(&line)));
    }
    let mut body = vec![Block::div("finding-text", in_view)];
    if !f.chart_svg.is_empty() {
        body.push(Block::Figure {
            src: format!("{prefix}{}", f.chart_svg),
            alt: format!("{} chart", f.hot_path),
        });
    }
    let mut blocks = vec![
        Block::Heading(level, heading),
        Block::div("finding-body", body),
    ];
    let mut more: Vec<String> = vec![format!("The question: {}", f.question)];
    if !f.calibrated_on.is_empty() {
        more.push(format!(
            "Model calibrated on: {}.",
            f.calibrated_on.join("; ")
        ));
    }
    more.extend(f.sentences.iter().skip(IN_VIEW).chain(&f.details).cloned());
    let mut folded = vec![Block::List(
        Attrs::default(),
        more.iter().map(|d| code_spans(d)).collect(),
    )];
    folded.extend(parts_in_full(f).iter().flat_map(table_blocks));
    folded.extend(f.tables.iter().flat_map(table_blocks));
    blocks.push(Block::Details("Details".into(), folded));
    Block::section(
        Attrs::class("finding")
            .data("hot-path", f.hot_path.clone())
            .id(format!("finding-{}", f.hot_path)),
        blocks,
    )
}

/// A part's outcome as the parts tables say it: a measurement of size says so, a model's
/// part says `model`, an undecided part says why.
fn outcome_word(p: &verdict::decide::Part) -> String {
    let word = match (p.outcome, p.reason.as_str()) {
        _ if p.is_placebo() => match p.holds(1.0) {
            Some(true) => "placebo: holds 1.0".to_owned(),
            Some(false) => "placebo: misses 1.0".to_owned(),
            None => format!("placebo: {}", p.reason.replace('_', " ")),
        },
        _ if !p.decides() => format!("size only ({})", p.outcome.word()),
        (verdict::decide::Outcome::Inconclusive, r) if !r.is_empty() => {
            format!("inconclusive ({})", r.replace('_', " "))
        }
        (o, _) => o.word().to_owned(),
    };
    if p.basis == verdict::findings::Basis::Model.part_word() {
        format!("model: {word}")
    } else {
        word
    }
}

/// The placebo in one line: "The instrument's own error here: 0.998x [0.985-1.012],
/// 24 pairs (sd 0.031, 14 slices a side): `lookup/dashmap ...` against itself."
pub fn placebo_line(p: &verdict::decide::Part) -> String {
    let how = match (p.sd, p.slices) {
        (Some(sd), 1) => format!(" (sd {sd:.3}, whole windows)"),
        (Some(sd), k) => format!(" (sd {sd:.3}, {k} slices a side)"),
        (None, _) => String::new(),
    };
    let verdict = match p.holds(1.0) {
        Some(true) => "its interval holds 1.0",
        Some(false) => "its interval misses 1.0: read the parts' intervals as that much wider",
        None => "not measured",
    };
    format!(
        "The instrument's own error here: {}{how}; {verdict} (placebo: {}).",
        p.figure(),
        p.sides
    )
}

/// A table of the finding's parts, one row each from `row`; none without parts.
fn parts_rows(
    f: &Finding,
    title: &str,
    columns: &[&str],
    row: impl Fn(&verdict::decide::Part) -> Vec<String>,
) -> Option<Table> {
    (!f.parts.is_empty()).then(|| Table {
        title: title.to_owned(),
        columns: columns.iter().map(|s| (*s).to_owned()).collect(),
        rows: f.parts.iter().map(row).collect(),
    })
}

/// The finding's parts at a glance, one row each: the part, its outcome, the ratio with
/// its interval, the pairs behind it and whether the verdict rests on it.
pub fn parts_table(f: &Finding) -> Option<Table> {
    parts_rows(
        f,
        "Parts",
        &[
            "part",
            "outcome",
            "ratio [interval]",
            "pairs",
            "sd",
            "slices",
            "weight",
        ],
        |p| {
            vec![
                format!("`{}`", p.name),
                outcome_word(p),
                match (p.ratio, p.low, p.high) {
                    (Some(r), Some(l), Some(h)) => format!("{r:.3} [{l:.3}-{h:.3}]"),
                    _ => "-".to_owned(),
                },
                p.pairs.to_string(),
                p.sd.map_or("-".to_owned(), |sd| format!("{sd:.3}")),
                p.slices.to_string(),
                p.weight.replace('_', " "),
            ]
        },
    )
}

/// The finding's parts in full, folded: each part's claim, basis, thresholds, time, and
/// its sides, why it stopped and where its windows stalled.
fn parts_in_full(f: &Finding) -> Option<Table> {
    parts_rows(
        f,
        "Parts in full: each decided by pairs run back to back until its 95% interval \
         (valid over every look) clears its thresholds",
        &[
            "part",
            "claim",
            "basis",
            "thresholds",
            "time",
            "sides, and why",
        ],
        |p| {
            vec![
                format!("`{}`", p.name),
                p.claim.clone(),
                p.basis.clone(),
                p.thresholds
                    .iter()
                    .map(|t| format!("{t:.2}"))
                    .collect::<Vec<_>>()
                    .join(", "),
                format!("{:.0}s", p.seconds),
                [&p.sides, &p.why, &p.stalls]
                    .into_iter()
                    .filter(|s| !s.is_empty())
                    .cloned()
                    .collect::<Vec<_>>()
                    .join("; "),
            ]
        },
    )
}

/// A hot path's table: its title, then the table; nothing when it has no rows.
fn table_blocks(t: &Table) -> Vec<Block> {
    if t.rows.is_empty() {
        return Vec::new();
    }
    vec![
        Block::Para(text(&t.title)),
        Block::Table(markup::Table {
            attrs: Attrs::class("finding-table"),
            head: t.columns.iter().map(Cell::head).collect(),
            rows: t
                .rows
                .iter()
                .map(|row| {
                    Row::from(
                        row.iter()
                            .map(|c| Cell::text(code_spans(c)))
                            .collect::<Vec<_>>(),
                    )
                })
                .collect(),
        }),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_in_a_few_words() {
        assert_eq!(
            short_question("Does the semaphore help or hurt, and what beats it (Juju)?"),
            "Does the semaphore help or hurt?"
        );
        assert_eq!(
            code_spans("a `b` c"),
            vec![
                Inline::Text("a ".into()),
                Inline::Code("b".into()),
                Inline::Text(" c".into())
            ]
        );
    }
}

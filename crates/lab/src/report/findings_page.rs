//! The Findings as a reader meets them: a verdict table first (one row per finding, the
//! verdict word, its basis, the figure that decides it), then one section per finding
//! with at most three sentences and its chart in view and the rest folded under
//! `<details>`; the same in Markdown for `summary.md`.
//!
//! Lays out [`Finding`]s only: which sentences, tables and chart a finding has is the hot
//! path's (`harness::findings`), the driver is `findings`.

use std::fmt::Write;

use harness::findings::{Finding, Table};

use super::markup::esc;
use super::Analysed;

/// Sentences shown before the fold; the rest of an answer's sentences join its details.
const IN_VIEW: usize = 3;

/// The question in a few words: up to its first comma or the first twelve words.
fn short_question(q: &str) -> String {
    let head = q.split([',', '(']).next().unwrap_or(q).trim();
    let words: Vec<&str> = head.split_whitespace().collect();
    if words.len() > 12 {
        format!("{}…", words[..12].join(" "))
    } else {
        head.trim_end_matches('?').to_owned() + "?"
    }
}

/// Backquoted names as `<code>`, in escaped text.
pub fn code_spans(text: &str) -> String {
    let mut out = String::new();
    for (i, part) in text.split('`').enumerate() {
        if i % 2 == 1 {
            let _ = write!(out, "<code>{part}</code>");
        } else {
            out.push_str(part);
        }
    }
    out
}

/// The Findings section of `index.html`; `prefix` leads from the page to the project root.
pub fn html(out: &mut String, analysed: &[Analysed<'_>], prefix: &str) {
    out.push_str("<section class=\"findings\" id=\"findings\"><h2>Findings</h2>\n");
    for a in analysed {
        if analysed.len() > 1 {
            let _ = writeln!(out, "<h3>Run {}</h3>", esc(&a.source.results.run_id));
        }
        if a.findings.is_empty() {
            out.push_str("<p>No hot path with a seed question ran.</p>\n");
            continue;
        }
        out.push_str(
            "<table id=\"verdicts\"><tr><th>hot path</th><th>question</th><th>verdict</th>\
             <th>basis</th><th>deciding figure</th></tr>\n",
        );
        for f in &a.findings {
            let _ = writeln!(
                out,
                "<tr data-hot-path=\"{h}\"><td><a href=\"#finding-{h}\">{h}</a></td><td>{}</td>\
                 <td class=\"verdict {v}\">{v}</td><td>{}</td><td>{}</td></tr>",
                esc(&short_question(&f.question)),
                f.basis.word(),
                code_spans(&esc(&f.figure)),
                h = esc(&f.hot_path),
                v = f.verdict.word(),
            );
        }
        out.push_str("</table>\n");
        if let Some(note) = crate::speed::unsteady_note(&a.source.results.env) {
            let _ = writeln!(out, "<p class=\"machine-note\">{}</p>", esc(&note));
        }
        for f in &a.findings {
            finding(out, f, prefix);
        }
    }
    out.push_str("</section>\n");
}

fn finding(out: &mut String, f: &Finding, prefix: &str) {
    let _ = writeln!(
        out,
        "<section class=\"finding\" data-hot-path=\"{h}\" id=\"finding-{h}\"><h3>{h}: {} \
         <span class=\"verdict {v}\">{v}</span> <small>({})</small></h3>",
        esc(&f.question),
        f.basis.word(),
        h = esc(&f.hot_path),
        v = f.verdict.word()
    );
    out.push_str("<div class=\"finding-body\"><div class=\"finding-text\">");
    for s in f.sentences.iter().take(IN_VIEW) {
        let _ = writeln!(out, "<p>{}</p>", code_spans(&esc(s)));
    }
    if !f.calibrated_on.is_empty() {
        let _ = writeln!(
            out,
            "<p><small>Model calibrated on: {}.</small></p>",
            esc(&f.calibrated_on.join("; "))
        );
    }
    if let Some(t) = parts_table(f) {
        table_html(out, &t);
    }
    out.push_str("</div>");
    if !f.chart_svg.is_empty() {
        let _ = write!(
            out,
            "<figure class=\"chart\"><img src=\"{prefix}{}\" alt=\"{} chart\"></figure>",
            esc(&f.chart_svg),
            esc(&f.hot_path)
        );
    }
    out.push_str("</div>\n");
    let more: Vec<&String> = f.sentences.iter().skip(IN_VIEW).chain(&f.details).collect();
    if !more.is_empty() || !f.tables.is_empty() {
        out.push_str("<details><summary>Details</summary><ul>\n");
        for d in more {
            let _ = writeln!(out, "<li>{}</li>", code_spans(&esc(d)));
        }
        out.push_str("</ul>\n");
        for t in &f.tables {
            table_html(out, t);
        }
        out.push_str("</details>\n");
    }
    out.push_str("</section>\n");
}

/// The finding's parts, one row each: what the verdict follows from, with the ratio, its
/// interval, the pairs behind it, the thresholds, the outcome and the time it took.
pub fn parts_table(f: &Finding) -> Option<Table> {
    if f.parts.is_empty() {
        return None;
    }
    let rows = f
        .parts
        .iter()
        .map(|p| {
            vec![
                format!("`{}`", p.name),
                p.claim.clone(),
                p.outcome.word().to_owned(),
                match (p.ratio, p.low, p.high) {
                    (Some(r), Some(l), Some(h)) => format!("{r:.3} [{l:.3}-{h:.3}]"),
                    _ => "-".to_owned(),
                },
                p.pairs.to_string(),
                p.thresholds
                    .iter()
                    .map(|t| format!("{t:.2}"))
                    .collect::<Vec<_>>()
                    .join(", "),
                format!("{:.0}s", p.seconds),
                if p.sides.is_empty() {
                    p.why.clone()
                } else {
                    format!("{}; {}", p.sides, p.why)
                },
            ]
        })
        .collect();
    Some(Table {
        title: "Parts: each decided by pairs run back to back until its 95% interval (valid over every look) \
                clears its thresholds"
            .to_owned(),
        columns: [
            "part",
            "claim",
            "outcome",
            "ratio [interval]",
            "pairs",
            "thresholds",
            "time",
            "sides, and why",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect(),
        rows,
    })
}

fn table_html(out: &mut String, t: &Table) {
    if t.rows.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "<p>{}</p><table class=\"finding-table\"><tr>",
        esc(&t.title)
    );
    for c in &t.columns {
        let _ = write!(out, "<th>{}</th>", esc(c));
    }
    out.push_str("</tr>\n");
    for row in &t.rows {
        out.push_str("<tr>");
        for cell in row {
            let _ = write!(out, "<td>{}</td>", code_spans(&esc(cell)));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
}

/// The Findings of `summary.md`: the verdict table, then each finding with its details.
pub fn markdown(out: &mut String, analysed: &[Analysed<'_>]) {
    out.push_str("# Findings\n\n");
    for a in analysed {
        if analysed.len() > 1 {
            let _ = writeln!(out, "## Run {}\n", a.source.results.run_id);
        }
        if a.findings.is_empty() {
            out.push_str("No hot path with a seed question ran.\n\n");
            continue;
        }
        out.push_str(
            "| hot path | question | verdict | basis | deciding figure |\n|---|---|---|---|---|\n",
        );
        for f in &a.findings {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} |",
                f.hot_path,
                short_question(&f.question),
                f.verdict.word(),
                f.basis.word(),
                f.figure.replace('|', "/")
            );
        }
        out.push('\n');
        if let Some(note) = crate::speed::unsteady_note(&a.source.results.env) {
            let _ = writeln!(out, "{note}\n");
        }
        for f in &a.findings {
            let _ = writeln!(
                out,
                "**{}**: *{}* **{}** ({})\n",
                f.hot_path,
                f.question,
                f.verdict.word(),
                f.basis.word()
            );
            for s in &f.sentences {
                let _ = writeln!(out, "- {s}");
            }
            if !f.calibrated_on.is_empty() {
                let _ = writeln!(
                    out,
                    "- Model calibrated on: {}.",
                    f.calibrated_on.join("; ")
                );
            }
            for d in &f.details {
                let _ = writeln!(out, "- {d}");
            }
            out.push('\n');
            for t in parts_table(f)
                .iter()
                .chain(&f.tables)
                .filter(|t| !t.rows.is_empty())
            {
                let _ = writeln!(
                    out,
                    "{}\n\n| {} |\n|{}",
                    t.title,
                    t.columns.join(" | "),
                    "---|".repeat(t.columns.len())
                );
                for row in &t.rows {
                    let _ = writeln!(out, "| {} |", row.join(" | ").replace('\n', " "));
                }
                out.push('\n');
            }
        }
    }
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
        assert_eq!(code_spans("a `b` c"), "a <code>b</code> c");
    }
}

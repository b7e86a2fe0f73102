//! A group's thread advice and USL table laid out as HTML and Markdown, and the interval
//! texts its matrix cells use. Lays out what `advice` and `usl` computed; decides nothing.

use std::fmt::Write;

use harness::usl::UslIntervals;
use harness::RunRecord;

use super::super::markup::esc;
use super::super::Group;
use super::usl::{list, peak_text};
use super::{reps_of, thread_sentence};
use crate::table::si;

/// The interval of a record as text: `95% CI lo–hi`, or `min–max lo–hi (n = 2)` when
/// too few repetitions give it less than 95% coverage.
pub fn ci_text(r: &RunRecord) -> String {
    let (lo, hi) = r.ops_ci();
    if r.ops_ci_coverage() >= 0.95 {
        format!("95% CI {}–{}", si(lo), si(hi))
    } else {
        format!("min–max {}–{} (n = {})", si(lo), si(hi), reps_of(r))
    }
}

/// A Markdown matrix cell: `ops [lo–hi]/per-thread`, `*` when oversubscribed.
pub fn markdown_cell(record: Option<&RunRecord>) -> String {
    match record {
        Some(r) if r.usable() => {
            let (lo, hi) = r.ops_ci();
            format!(
                "{} [{}–{}]/{}{}",
                si(r.ops_per_sec),
                si(lo),
                si(hi),
                si(r.per_thread_ops_per_sec),
                if r.oversubscribed() { "\\*" } else { "" }
            )
        }
        other => crate::table::cell_text(other),
    }
}

fn interval(
    ci: Option<&UslIntervals>,
    pick: fn(&UslIntervals) -> (f64, f64),
    digits: usize,
) -> String {
    ci.map_or(String::new(), |ci| {
        let (lo, hi) = pick(ci);
        let f = |v: f64| {
            if v.is_finite() {
                format!("{v:.digits$}")
            } else {
                "∞".to_owned()
            }
        };
        format!(" [{}–{}]", f(lo), f(hi))
    })
}

/// The group's thread advice and USL table as HTML.
pub fn html_section(g: &Group<'_>) -> String {
    let mut out = String::new();
    if !g.thread_advice.is_empty() {
        out.push_str("<h4>Thread advice from measured data</h4>\n<ul class=\"thread-advice\">\n");
        for a in &g.thread_advice {
            let _ = writeln!(out, "<li>{}</li>", esc(&thread_sentence(a)));
        }
        out.push_str("</ul>\n");
    }
    if g.fits.is_empty() {
        return out;
    }
    out.push_str("<h4>Scalability (Universal Scalability Law, in-core points only)</h4>\n<p><small>Fitted to thread counts at or below the core count (past it, throughput measures the CPU limit, not contention), with at least 4 of them; 95% bootstrap intervals in brackets. Advice only where R² &ge; 0.9 and N*'s interval is bounded.</small></p>\n");
    out.push_str("<table class=\"usl\"><tr><th>variant</th><th>points fitted</th><th>σ contention</th><th>κ coherency</th><th>λ (ops/s, 1 thread)</th><th>R²</th><th>N*</th><th>best measured threads</th><th>advice</th></tr>\n");
    for f in &g.fits {
        let best = f.best_measured.map_or("-".to_owned(), |t| t.to_string());
        let basis = format!("{} ({})", f.basis, list(&f.levels));
        match &f.fit {
            Ok(fit) => {
                let ci = f.intervals.as_ref();
                let _ = writeln!(
                    out,
                    "<tr><td>{}</td><td>{}</td><td>{:.3}{}</td><td>{:.2e}{}</td><td>{}</td><td>{:.3}</td><td>{}{}</td><td>{best}</td><td>{}</td></tr>",
                    esc(&f.variant),
                    esc(&basis),
                    fit.sigma,
                    interval(ci, |c| c.sigma, 3),
                    fit.kappa,
                    ci.map_or(String::new(), |c| format!(" [{:.1e}–{:.1e}]", c.kappa.0, c.kappa.1)),
                    si(fit.lambda),
                    fit.r_squared,
                    peak_text(fit),
                    interval(ci, |c| c.peak, 1),
                    esc(&f.sentence)
                );
            }
            Err(_) => {
                let _ = writeln!(
                    out,
                    "<tr><td>{}</td><td>{}</td><td colspan=\"5\">no fit</td><td>{best}</td><td>{}</td></tr>",
                    esc(&f.variant),
                    esc(&basis),
                    esc(&f.sentence)
                );
            }
        }
    }
    out.push_str("</table>\n");
    out
}

/// The group's thread advice and USL lines as Markdown.
pub fn markdown_section(g: &Group<'_>) -> String {
    let mut out = String::new();
    if !g.thread_advice.is_empty() {
        out.push_str("Thread advice from measured data:\n\n");
        for a in &g.thread_advice {
            let _ = writeln!(out, "- {}", thread_sentence(a));
        }
        out.push('\n');
    }
    if g.fits.is_empty() {
        return out;
    }
    out.push_str("Scalability (USL, in-core points only):\n\n");
    for f in &g.fits {
        match &f.fit {
            Ok(fit) => {
                let ci = f.intervals.as_ref();
                let _ = writeln!(
                    out,
                    "- {} ({}: {}): σ={:.3}{} κ={:.2e}{} λ={} R²={:.2} N*={}{}. {}",
                    f.variant,
                    f.basis,
                    list(&f.levels),
                    fit.sigma,
                    interval(ci, |c| c.sigma, 3),
                    fit.kappa,
                    ci.map_or(String::new(), |c| format!(
                        " [{:.1e}–{:.1e}]",
                        c.kappa.0, c.kappa.1
                    )),
                    si(fit.lambda),
                    fit.r_squared,
                    peak_text(fit),
                    interval(ci, |c| c.peak, 1),
                    f.sentence
                );
            }
            Err(_) => {
                let _ = writeln!(out, "- {}: {}", f.variant, f.sentence);
            }
        }
    }
    out.push('\n');
    out
}

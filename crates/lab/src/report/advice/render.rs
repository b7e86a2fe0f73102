//! A group's thread advice and USL table as report blocks, and the interval texts its
//! matrix cells use. Lays out what `advice` and `usl` computed; decides nothing.

use harness::usl::UslIntervals;
use harness::CellRecord;

use super::super::markup::{text, Attrs, Block, Cell, Row, Table};
use super::super::Group;
use super::usl::{list, peak_text, UslRow};
use super::{reps_of, thread_sentence};
use crate::words::si;

/// The interval of a record as text: `95% CI lo–hi`, or `min–max lo–hi (n = 2)` when
/// too few repetitions give it less than 95% coverage.
pub fn ci_text(r: &CellRecord) -> String {
    let (lo, hi) = r.ops_ci();
    if r.ops_ci_coverage() >= 0.95 {
        format!("95% CI {}–{}", si(lo), si(hi))
    } else {
        format!("min–max {}–{} (n = {})", si(lo), si(hi), reps_of(r))
    }
}

/// A Markdown matrix cell: `ops [lo–hi]/per-thread`, `*` when oversubscribed.
pub fn markdown_cell(record: Option<&CellRecord>) -> String {
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
        other => crate::words::cell_text(other),
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

/// The group's thread advice and USL table; empty when it has neither.
pub fn section(g: &Group<'_>) -> Vec<Block> {
    let mut out = Vec::new();
    if !g.thread_advice.is_empty() {
        out.push(Block::heading(4, "Thread advice from measured data"));
        out.push(Block::List(
            Attrs::class("thread-advice"),
            g.thread_advice
                .iter()
                .map(|a| text(thread_sentence(a)))
                .collect(),
        ));
    }
    if g.fits.is_empty() {
        return out;
    }
    out.push(Block::heading(
        4,
        "Scalability (Universal Scalability Law, in-core points only)",
    ));
    out.push(Block::note("Fitted to thread counts at or below the core count (past it, throughput measures the CPU limit, not contention), with at least 4 of them; 95% bootstrap intervals in brackets. Advice only where R² ≥ 0.9 and N*'s interval is bounded."));
    let head = [
        "variant",
        "points fitted",
        "σ contention",
        "κ coherency",
        "λ (ops/s, 1 thread)",
        "R²",
        "N*",
        "best measured threads",
        "advice",
    ];
    out.push(Block::Table(Table {
        attrs: Attrs::class("usl"),
        head: head.iter().map(|h| Cell::head(*h)).collect(),
        rows: g.fits.iter().map(usl_cells).map(Row::from).collect(),
    }));
    out
}

/// One row of the USL table.
fn usl_cells(f: &UslRow) -> Vec<Cell> {
    let best = f.best_measured.map_or("-".to_owned(), |t| t.to_string());
    let basis = format!("{} ({})", f.basis, list(&f.levels));
    let Ok(fit) = &f.fit else {
        return vec![
            Cell::of(&f.variant),
            Cell::of(basis),
            Cell {
                span: 5,
                ..Cell::of("no fit")
            },
            Cell::of(best),
            Cell::of(&f.sentence),
        ];
    };
    let ci = f.intervals.as_ref();
    vec![
        Cell::of(&f.variant),
        Cell::of(basis),
        Cell::of(format!("{:.3}{}", fit.sigma, interval(ci, |c| c.sigma, 3))),
        Cell::of(format!(
            "{:.2e}{}",
            fit.kappa,
            ci.map_or(String::new(), |c| format!(
                " [{:.1e}–{:.1e}]",
                c.kappa.0, c.kappa.1
            ))
        )),
        Cell::of(si(fit.lambda)),
        Cell::of(format!("{:.3}", fit.r_squared)),
        Cell::of(format!("{}{}", peak_text(fit), interval(ci, |c| c.peak, 1))),
        Cell::of(best),
        Cell::of(&f.sentence),
    ]
}

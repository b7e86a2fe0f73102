//! The lock table of a report: per group, one row per (variant, cores, threads, lock)
//! from the records' `locks`, the busiest lock of each cell with its share of the
//! ceiling, and per variant the asymptotic bounds (the knee N* and the ceiling K / S)
//! from its fewest-threads cell, where the lock's demand is least disturbed by queueing
//! for a CPU. Returns data and small HTML and Markdown pieces; `html`, `summary`,
//! `figures` and `export` place them. It computes no lock figure itself: the harness's
//! `lock_table` did.

use std::fmt::Write;

use harness::lock_table::{self, Bounds, LockRow};
use harness::RunRecord;

use super::markup::esc;
use super::Group;
use crate::table::si;

/// One row of a group's lock table.
pub struct TableRow<'a> {
    /// The cell.
    pub cell: &'a RunRecord,
    /// The lock's row in it.
    pub lock: &'a LockRow,
    /// Whether this is the cell's busiest lock.
    pub busiest: bool,
}

/// A variant's bounds at one core count, from its fewest-threads cell with bounds.
pub struct VariantBounds<'a> {
    /// Variant.
    pub variant: &'a str,
    /// Core count.
    pub cores: usize,
    /// The bounds (their `threads` says which cell gave them).
    pub bounds: &'a Bounds,
}

/// Every lock row of `g`'s usable cells, by variant, cores, threads, in the table's
/// order.
pub fn table<'g>(g: &'g Group<'_>) -> Vec<TableRow<'g>> {
    let mut rows = Vec::new();
    for variant in &g.variants {
        for &cores in &g.cores {
            for &threads in &g.threads {
                let Some(cell) = g.cell(variant, threads, cores).filter(|c| c.usable()) else {
                    continue;
                };
                let Some(locks) = cell.locks.as_deref() else {
                    continue;
                };
                let busiest = lock_table::busiest(locks).map(|b| b.name.as_str());
                rows.extend(locks.iter().map(|lock| TableRow {
                    cell,
                    lock,
                    busiest: busiest == Some(lock.name.as_str()),
                }));
            }
        }
    }
    rows
}

/// Per variant and core count, the bounds of the fewest-threads usable cell that has
/// them.
pub fn variant_bounds<'g>(g: &'g Group<'_>) -> Vec<VariantBounds<'g>> {
    let mut out = Vec::new();
    for variant in &g.variants {
        for &cores in &g.cores {
            let first = g
                .threads
                .iter()
                .filter_map(|&t| g.cell(variant, t, cores))
                .filter(|c| c.usable())
                .find_map(|c| c.bounds.as_ref());
            if let Some(bounds) = first {
                out.push(VariantBounds {
                    variant,
                    cores,
                    bounds,
                });
            }
        }
    }
    out
}

/// The busiest lock of a cell in a few words, for the matrix cell and the export:
/// `directory mutex U 0.93, 93% of its ceiling 1.2M/s`.
pub fn busiest_text(r: &RunRecord) -> Option<String> {
    let row = lock_table::busiest(r.locks.as_deref()?)?;
    Some(format!(
        "{} U {:.2}, {} of its ceiling {}/s",
        row.name,
        row.utilization?,
        row.ceiling_share.map_or("-".to_owned(), percent),
        row.ceiling_ops_per_sec.map_or("-".to_owned(), si)
    ))
}

/// What a cell's table leaves out: `None` when every lock is named (or none is).
pub fn unnamed_text(r: &RunRecord) -> Option<&str> {
    match r.locks_complete {
        Some(false) => Some(r.locks_unnamed.as_deref().unwrap_or("some locks")),
        _ => None,
    }
}

/// One bound line in words: `global-mutex, 2 cores: N* = 1.3 threads (directory mutex,
/// D 120 ns, S 390 ns per operation, from the 1-thread cell); no thread count passes
/// 2.6M ops/s`.
pub fn bounds_sentence(b: &VariantBounds<'_>) -> String {
    let x = b.bounds;
    format!(
        "{}, {} core(s): N* = {:.1} threads ({}, K = {}, D {} and S {} per operation, from the {}-thread cell); no thread count passes {} ops/s",
        b.variant,
        b.cores,
        x.knee_threads,
        x.lock,
        x.slots,
        nanos(x.demand_outside_ns),
        nanos(x.hold_per_op_ns),
        x.threads,
        si(x.ceiling_ops_per_sec)
    )
}

/// The bound at every thread count of the group, as chart points (one series per
/// variant at `cores`, empty where the variant has no bounds).
pub fn bound_points(g: &Group<'_>, variant: &str, cores: usize) -> Vec<(f64, f64)> {
    variant_bounds(g)
        .iter()
        .find(|b| b.variant == variant && b.cores == cores)
        .map(|b| {
            g.threads
                .iter()
                .map(|&t| (t as f64, b.bounds.at(t)))
                .collect()
        })
        .unwrap_or_default()
}

const COLUMNS: [&str; 14] = [
    "variant",
    "cores",
    "threads",
    "lock",
    "K",
    "acq/s",
    "acq/op",
    "contended",
    "wait p50/p99/max",
    "hold p50/p99/max (mean)",
    "U",
    "ceiling ops/s",
    "share of ceiling",
    "ops/s",
];

fn row_cells(r: &TableRow<'_>) -> Vec<String> {
    let l = r.lock;
    let q = |q: Option<harness::lock_table::Quantiles>, mean: bool| {
        q.map_or("not timed".to_owned(), |q| {
            let mut s = format!("{}/{}/{}", nanos(q.p50), nanos(q.p99), nanos(q.max));
            if mean {
                let _ = write!(s, " ({})", nanos(q.mean));
            }
            s
        })
    };
    let opt = |v: Option<f64>, f: fn(f64) -> String| v.map_or("-".to_owned(), f);
    let mut name = l.name.clone();
    if r.busiest {
        name.push_str(" (busiest)");
    }
    vec![
        r.cell.variant.clone(),
        r.cell.cores.to_string(),
        r.cell.threads.to_string(),
        name,
        l.slots.map_or("shared".to_owned(), |k| k.to_string()),
        si(l.acquisitions_per_sec),
        opt(l.acquisitions_per_op, |a| format!("{a:.2}")),
        opt(l.contended_share, percent),
        q(l.wait_ns, false),
        q(l.hold_ns, true),
        opt(l.utilization, |u| format!("{u:.2}")),
        opt(l.ceiling_ops_per_sec, si),
        opt(l.ceiling_share, percent),
        si(r.cell.ops_per_sec),
    ]
}

const EXPLAIN: &str = "One row per named lock, permit set or connection set. U = acquisitions/s x mean hold / K (at most 1 whatever the cores); ceiling = K / mean hold in operations per second; holds are sampled, waits timed whenever the lock was contended. N* = K (D + S) / S from the fewest-threads cell: beyond N* threads no number of cores raises the bound min(N / (D + S), K / S).";

/// The lock table and bounds of `g` as HTML; empty when no cell has a lock table.
pub fn html_section(g: &Group<'_>) -> String {
    let rows = table(g);
    let mut out = String::new();
    if rows.is_empty() {
        return out;
    }
    let _ = writeln!(
        out,
        "<h4>Lock table</h4>\n<p><small>{}</small></p>",
        esc(EXPLAIN)
    );
    let bounds = variant_bounds(g);
    if !bounds.is_empty() {
        out.push_str("<ul class=\"lock-bounds\">\n");
        for b in &bounds {
            let _ = writeln!(out, "<li>{}</li>", esc(&bounds_sentence(b)));
        }
        out.push_str("</ul>\n");
    }
    let _ = writeln!(
        out,
        "<table class=\"locks\"><tr><th>{}</th></tr>",
        COLUMNS.join("</th><th>")
    );
    for r in &rows {
        let cells: Vec<String> = row_cells(r).iter().map(|c| esc(c)).collect();
        let _ = writeln!(out, "<tr><td>{}</td></tr>", cells.join("</td><td>"));
    }
    out.push_str("</table>\n");
    if let Some(note) = unnamed_note(g) {
        let _ = writeln!(out, "<p><small>{}</small></p>", esc(&note));
    }
    out
}

/// The same as Markdown.
pub fn markdown_section(g: &Group<'_>) -> String {
    let rows = table(g);
    let mut out = String::new();
    if rows.is_empty() {
        return out;
    }
    let _ = writeln!(out, "Lock table. {EXPLAIN}\n");
    for b in variant_bounds(g) {
        let _ = writeln!(out, "- {}", bounds_sentence(&b));
    }
    let _ = writeln!(
        out,
        "\n| {} |\n|{}",
        COLUMNS.join(" | "),
        "---|".repeat(COLUMNS.len())
    );
    for r in &rows {
        let _ = writeln!(out, "| {} |", row_cells(r).join(" | "));
    }
    out.push('\n');
    if let Some(note) = unnamed_note(g) {
        let _ = writeln!(out, "{note}\n");
    }
    out
}

/// One line naming, per variant, what its table does not name.
fn unnamed_note(g: &Group<'_>) -> Option<String> {
    let mut parts: Vec<String> = Vec::new();
    for variant in &g.variants {
        let text = g
            .cells
            .iter()
            .filter(|c| &c.variant == variant)
            .find_map(|c| unnamed_text(c));
        if let Some(text) = text {
            parts.push(format!("{variant}: {text}"));
        }
    }
    (!parts.is_empty()).then(|| format!("Not named (so not in the table): {}.", parts.join("; ")))
}

fn percent(share: f64) -> String {
    format!("{:.0}%", share * 100.0)
}

fn nanos(ns: f64) -> String {
    match ns {
        n if n >= 1e9 => format!("{:.2} s", n / 1e9),
        n if n >= 1e6 => format!("{:.2} ms", n / 1e6),
        n if n >= 1e3 => format!("{:.1} µs", n / 1e3),
        n => format!("{n:.0} ns"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness::lock_table::Quantiles;
    use harness::schema::{CellKey, CellStatus};

    pub(crate) fn cell_with_locks(variant: &str, threads: usize, hold_ns: f64) -> RunRecord {
        let key = CellKey {
            hot_path: "lookup".into(),
            variant: variant.into(),
            params: Default::default(),
            threads,
            cores: 2,
        };
        let mut r = RunRecord::failed(&key, "0-1", "x");
        r.status = CellStatus::Ok;
        r.failure = None;
        r.verified = true;
        r.ops_per_sec = 1e6;
        let q = Quantiles {
            p50: hold_ns,
            p99: hold_ns,
            max: hold_ns,
            mean: hold_ns,
        };
        let row = LockRow {
            name: "directory mutex".into(),
            slots: Some(1),
            acquisitions_per_sec: 1e6,
            acquisitions_per_op: Some(1.0),
            contended_share: Some(0.5),
            wait_ns: Some(q),
            hold_ns: Some(q),
            hold_samples: 10,
            occupancy: Some(hold_ns * 1e-3),
            utilization: Some(hold_ns * 1e-3),
            ceiling_ops_per_sec: Some(1e9 / hold_ns),
            ceiling_share: Some(hold_ns * 1e-3),
        };
        r.bounds = lock_table::bounds(std::slice::from_ref(&row), threads, 1e6);
        r.locks = Some(vec![row]);
        r.locks_complete = Some(false);
        r.locks_unnamed = Some("the queue".into());
        r
    }

    #[test]
    fn the_busiest_lock_is_named_with_its_share_of_the_ceiling() {
        let r = cell_with_locks("global-mutex", 2, 800.0);
        let text = busiest_text(&r).unwrap();
        assert!(
            text.starts_with("directory mutex U 0.80, 80% of its ceiling"),
            "{text}"
        );
        assert_eq!(unnamed_text(&r), Some("the queue"));
        let b = r.bounds.as_ref().unwrap();
        let sentence = bounds_sentence(&VariantBounds {
            variant: "global-mutex",
            cores: 2,
            bounds: b,
        });
        assert!(sentence.contains("N* = "), "{sentence}");
    }

    #[test]
    fn a_group_gets_its_lock_table_and_the_knee_of_its_fewest_threads_cell() {
        let cells = vec![
            cell_with_locks("global-mutex", 1, 800.0),
            cell_with_locks("global-mutex", 2, 900.0),
        ];
        let source = super::super::Source {
            path: "x.json".into(),
            results: harness::schema::ResultsFile {
                schema: harness::schema::SCHEMA_VERSION,
                run_id: "r".into(),
                started: String::new(),
                finished: String::new(),
                command: String::new(),
                complete: true,
                settings_by_file: Vec::new(),
                seeds: Default::default(),
                env: Default::default(),
                cells,
                comparisons: Vec::new(),
                order_seed: 0,
                resume: None,
            },
        };
        let groups = super::super::group::group_cells(&source, 0);
        let g = &groups[0];
        assert_eq!(table(g).len(), 2);
        assert!(table(g).iter().all(|r| r.busiest));
        let bounds = variant_bounds(g);
        assert_eq!(bounds.len(), 1);
        assert_eq!(bounds[0].bounds.threads, 1, "from the fewest-threads cell");
        let html = html_section(g);
        for text in [
            "<table class=\"locks\">",
            "directory mutex (busiest)",
            "N* = ",
            "the queue",
        ] {
            assert!(html.contains(text), "{text} missing: {html}");
        }
        let md = markdown_section(g);
        assert!(
            md.contains("| global-mutex | 2 | 1 | directory mutex (busiest) | 1 |"),
            "{md}"
        );
        let points = bound_points(g, "global-mutex", 2);
        assert_eq!(points.len(), 2);
        assert!(points[1].1 <= bounds[0].bounds.ceiling_ops_per_sec);
    }
}

//! The lock table of a report: per group, one row per (variant, cores, threads, lock)
//! from the records' `locks`, the busiest lock of each cell with its share of the
//! ceiling (a capacity at the hold measured uncontended), per variant the asymptotic
//! bounds (the knee N* and the least of the lock's K / S and the cores' cores / D_cpu)
//! from its fewest-threads cell, where the lock's demand is least disturbed by queueing
//! for a CPU, and a line with the instrument's own cost per acquisition (or, for a run
//! with `locks=off`, that the instrument was off). Returns data and the lock section's
//! blocks; the pages, `figures` and `export` place them. It computes no lock figure itself: the harness's
//! `lock_table` did.

use std::fmt::Write;

use harness::lock_table::{self, Bounds, LockRow};
use harness::CellRecord;

use super::markup::{nanos, text, Attrs, Block, Cell, Row, Table, Text};
use super::Group;
use crate::words::si;

/// One row of a group's lock table.
pub struct TableRow<'a> {
    /// The cell.
    pub cell: &'a CellRecord,
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
pub fn busiest_text(r: &CellRecord) -> Option<String> {
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
pub fn unnamed_text(r: &CellRecord) -> Option<&str> {
    match r.locks_complete {
        Some(false) => Some(r.locks_unnamed.as_deref().unwrap_or("some locks")),
        _ => None,
    }
}

/// One bound line in words: `global-mutex, 1 core(s): N* = 1.0 threads (directory mutex,
/// K = 1, D 750 ns and S 250 ns per operation, CPU 1.0 µs per operation, from the
/// 1-thread cell); no thread count passes 1000k ops/s (the CPUs' 1 / D_cpu; the lock's
/// K / S is 4.00M)`.
pub fn bounds_sentence(b: &VariantBounds<'_>) -> String {
    let x = b.bounds;
    let cpu = x.cpu_per_op_ns.map_or(String::new(), |c| {
        format!(", CPU {} per operation", nanos(c))
    });
    let limit = match x.cpu_ceiling_ops_per_sec {
        Some(c) if x.cpu_bound() => format!(
            "{} ops/s (the CPUs' {} / D_cpu; the lock's K / S is {})",
            si(c),
            b.cores,
            si(x.ceiling_ops_per_sec)
        ),
        Some(c) => format!(
            "{} ops/s (the lock's K / S; the CPUs' {} / D_cpu is {})",
            si(x.ceiling_ops_per_sec),
            b.cores,
            si(c)
        ),
        None => format!("{} ops/s (the lock's K / S)", si(x.ceiling_ops_per_sec)),
    };
    format!(
        "{}, {} core(s): N* = {:.1} threads ({}, K = {}, D {} and S {} per operation{cpu}, from the {}-thread cell); no thread count passes {limit}",
        b.variant,
        b.cores,
        x.knee_threads,
        x.lock,
        x.slots,
        nanos(x.demand_outside_ns),
        nanos(x.hold_per_op_ns),
        x.threads,
    )
}

/// The instrument's own cost in one line, from the cells' `lock_cost` (medians over the
/// group's cells): `None` when no cell states one.
pub fn cost_sentence(g: &Group<'_>) -> Option<String> {
    let costs: Vec<harness::locks::cost::InstrumentCost> =
        g.cells.iter().filter_map(|c| c.lock_cost).collect();
    if costs.is_empty() {
        return None;
    }
    let median = |f: fn(&harness::locks::cost::InstrumentCost) -> f64| {
        harness::stats::median(&costs.iter().map(f).collect::<Vec<_>>())
    };
    let clock = harness::stats::median(
        &g.cells
            .iter()
            .filter(|c| c.lock_cost.is_some())
            .map(|c| c.clock_read_ns)
            .collect::<Vec<_>>(),
    );
    Some(format!(
        "The instrument's own cost, measured by each cell's process beside its window: {} per acquisition counted, {} per acquisition whose hold is timed (median over {} cell(s)); of it only a timed hold's two clock reads ({} each) fall inside the lock. lab matrix locks=off measures without it.",
        nanos(median(|c| c.counted_ns)),
        nanos(median(|c| c.timed_ns)),
        costs.len(),
        nanos(clock)
    ))
}

/// For a group measured with `locks=off`: why it has no lock table.
fn off_sentence(g: &Group<'_>) -> Option<&'static str> {
    g.cells.iter().any(|c| c.locks_off).then_some(
        "Lock table: not measured. This run had locks=off: the lock table's instrument was off, so these figures are the uninstrumented ones.",
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

const COLUMNS: [&str; 15] = [
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
    "hold alone (1 thread)",
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
        opt(l.uncontended_hold_ns, nanos),
        opt(l.utilization, |u| format!("{u:.2}")),
        opt(l.ceiling_ops_per_sec, si),
        opt(l.ceiling_share, percent),
        si(r.cell.ops_per_sec),
    ]
}

const EXPLAIN: &str = "One row per named lock, permit set or connection set. U = acquisitions/s x mean hold / K (at most 1 whatever the cores); ceiling = K / the hold measured alone (the 1-thread cell of the same variant and cores), in operations per second: a capacity, so its share falls below U where holds lengthen under contention, and it is blank without a 1-thread cell; holds are sampled, waits timed whenever the lock was contended. From the fewest-threads cell, with D_cpu its CPU time per operation: the bound is min(N / (D + S), K / S, cores / D_cpu) and N* = (D + S) x min(K / S, cores / D_cpu); beyond N* more threads do not raise it, and no number of cores passes K / S.";

/// The lock table and bounds of `g`, with how to read them; only a note when the
/// instrument was off, nothing when no cell has a lock table.
pub fn section(g: &Group<'_>) -> Vec<Block> {
    let rows = table(g);
    if rows.is_empty() {
        return off_sentence(g).map(Block::note).into_iter().collect();
    }
    let mut out = vec![Block::heading(4, "Lock table"), Block::note(EXPLAIN)];
    let bounds: Vec<Text> = variant_bounds(g)
        .iter()
        .map(|b| text(bounds_sentence(b)))
        .collect();
    if !bounds.is_empty() {
        out.push(Block::List(Attrs::class("lock-bounds"), bounds));
    }
    out.push(Block::Table(Table {
        attrs: Attrs::class("locks"),
        head: COLUMNS.iter().map(|c| Cell::head(*c)).collect(),
        rows: rows
            .iter()
            .map(|r| Row::from(row_cells(r).into_iter().map(Cell::of).collect::<Vec<_>>()))
            .collect(),
    }));
    out.extend(
        [unnamed_note(g), cost_sentence(g)]
            .into_iter()
            .flatten()
            .map(Block::note),
    );
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

#[cfg(test)]
mod tests;

//! Merging the lock tables and bounds of a cell's repetitions: the median of each figure
//! over the repetitions that have it.
//!
//! Not here: a table from one repetition's tallies ([`super::rows`]).

use super::{Bounds, LockRow, Quantiles};
use crate::stats;

/// Merges the tables of repetitions: per lock name, the median of each figure over the
/// repetitions that have the row (the largest `max`); rows in the first table's order.
pub fn merge_rows(tables: &[&[LockRow]]) -> Vec<LockRow> {
    let mut names: Vec<&str> = Vec::new();
    for table in tables {
        for row in table.iter() {
            if !names.contains(&row.name.as_str()) {
                names.push(&row.name);
            }
        }
    }
    names
        .into_iter()
        .map(|name| {
            let same: Vec<&LockRow> = tables
                .iter()
                .filter_map(|t| t.iter().find(|r| r.name == name))
                .collect();
            let num = |f: fn(&LockRow) -> f64| {
                stats::median(&same.iter().map(|r| f(r)).collect::<Vec<_>>())
            };
            let opt = |f: fn(&LockRow) -> Option<f64>| {
                let v: Vec<f64> = same.iter().filter_map(|r| f(r)).collect();
                (!v.is_empty()).then(|| stats::median(&v))
            };
            let quant = |f: fn(&LockRow) -> Option<Quantiles>| {
                let v: Vec<Quantiles> = same.iter().filter_map(|r| f(r)).collect();
                (!v.is_empty()).then(|| Quantiles::median_of(&v))
            };
            LockRow {
                name: name.to_owned(),
                slots: same[0].slots,
                acquisitions_per_sec: num(|r| r.acquisitions_per_sec),
                acquisitions_per_op: opt(|r| r.acquisitions_per_op),
                contended_share: opt(|r| r.contended_share),
                wait_ns: quant(|r| r.wait_ns),
                hold_ns: quant(|r| r.hold_ns),
                hold_samples: same.iter().map(|r| r.hold_samples).sum(),
                occupancy: opt(|r| r.occupancy),
                utilization: opt(|r| r.utilization),
                uncontended_hold_ns: opt(|r| r.uncontended_hold_ns),
                ceiling_ops_per_sec: opt(|r| r.ceiling_ops_per_sec),
                ceiling_share: opt(|r| r.ceiling_share),
            }
        })
        .collect()
}

/// Merges the bounds of repetitions: the median of each figure, the lock most of them
/// named (the first on a tie); `None` when none has bounds.
pub fn merge_bounds(all: &[&Bounds]) -> Option<Bounds> {
    let first = all.first()?;
    let lock = all
        .iter()
        .map(|b| &b.lock)
        // `max_by_key` keeps the last of equals: scan from the end for the earliest.
        .rev()
        .max_by_key(|name| all.iter().filter(|b| &b.lock == *name).count())
        .unwrap_or(&first.lock)
        .clone();
    let same: Vec<&&Bounds> = all.iter().filter(|b| b.lock == lock).collect();
    let of = |f: fn(&Bounds) -> f64| stats::median(&same.iter().map(|b| f(b)).collect::<Vec<_>>());
    let opt = |f: fn(&Bounds) -> Option<f64>| {
        let v: Vec<f64> = same.iter().filter_map(|b| f(b)).collect();
        (!v.is_empty()).then(|| stats::median(&v))
    };
    Some(Bounds {
        lock,
        slots: same[0].slots,
        threads: same[0].threads,
        demand_outside_ns: of(|b| b.demand_outside_ns),
        hold_per_op_ns: of(|b| b.hold_per_op_ns),
        knee_threads: of(|b| b.knee_threads),
        bound_ops_per_sec: of(|b| b.bound_ops_per_sec),
        ceiling_ops_per_sec: of(|b| b.ceiling_ops_per_sec),
        cores: same[0].cores,
        cpu_per_op_ns: opt(|b| b.cpu_per_op_ns),
        cpu_ceiling_ops_per_sec: opt(|b| b.cpu_ceiling_ops_per_sec),
    })
}

//! Merging a cell's repetitions into one record (medians, spread, the labels most
//! repetitions gave) and filling each cell's efficiency from its 1-thread cell: what `lab`
//! does to repetitions before it writes them. Not the wire format (`schema`).

use super::{CellKey, CellRecord, CellStatus, Repetition};
use crate::account::TimeShare;
use crate::interference::Interference;
use crate::lock_table::{self, Bounds, LockRow};
use crate::locks::cost::InstrumentCost;
use crate::stats::{self, LatencySummary};

impl CellRecord {
    /// Merges repetitions of one cell into one record: medians with spread.
    ///
    /// If any repetition failed, the cell is failed with that repetition's reason: a cell
    /// that crashes one time in three is not a figure to quote. Counts (retries, errors)
    /// are summed; `verified` holds only if it held every time.
    pub fn merge_repetitions(reps: &[Repetition]) -> Option<CellRecord> {
        let first = reps.first()?;
        if let Some(bad) = reps.iter().find(|r| r.status == CellStatus::Failed) {
            let mut failed = bad.0.clone();
            failed.repeats = reps.len();
            return Some(failed);
        }
        // Every repetition's own figure (a record may already merge several), so the median
        // and its interval come from all of them rather than from medians of medians.
        let ops: Vec<f64> = reps
            .iter()
            .flat_map(|r| {
                if r.ops_per_sec_reps.is_empty() {
                    vec![r.ops_per_sec]
                } else {
                    r.ops_per_sec_reps.clone()
                }
            })
            .collect();
        let (median_ops, _, _) = stats::median_spread(&ops);
        let ci = stats::median_ci(&ops);
        let median_of = |f: fn(&CellRecord) -> f64| {
            stats::median(&reps.iter().map(|r| f(r)).collect::<Vec<_>>())
        };
        let mut merged = first.0.clone();
        merged.repeats = reps.iter().map(|r| r.repeats).sum();
        merged.duration_s = median_of(|r| r.duration_s);
        merged.ops_per_sec = median_ops;
        merged.ops_per_sec_min = reps
            .iter()
            .map(|r| r.ops_per_sec_min)
            .fold(f64::INFINITY, f64::min);
        merged.ops_per_sec_max = reps.iter().map(|r| r.ops_per_sec_max).fold(0.0, f64::max);
        merged.ops_per_sec_ci = [ci.low, ci.high];
        merged.ops_per_sec_reps = ops;
        merged.per_thread_ops_per_sec = median_ops / first.threads.max(1) as f64;
        merged.latency_ns =
            LatencySummary::median_of(&reps.iter().map(|r| r.latency_ns).collect::<Vec<_>>());
        let waits: Vec<f64> = reps.iter().filter_map(|r| r.wait_share).collect();
        merged.wait_share = (waits.len() == reps.len()).then(|| stats::median(&waits));
        let shares: Option<Vec<TimeShare>> = reps.iter().map(|r| r.time_share).collect();
        merged.time_share = shares.and_then(|s| TimeShare::median_of(&s));
        let server: Option<Vec<TimeShare>> = reps.iter().map(|r| r.server_time_share).collect();
        merged.server_time_share = server.and_then(|s| TimeShare::median_of(&s));
        merged.clock_read_ns = median_of(|r| r.clock_read_ns);
        merged.cpu_util = median_of(|r| r.cpu_util);
        merged.retries = reps.iter().map(|r| r.retries).sum();
        merged.errors = reps.iter().map(|r| r.errors).sum();
        merged.timeouts = reps.iter().map(|r| r.timeouts).sum();
        merged.idle_steps = reps.iter().map(|r| r.idle_steps).sum();
        merged.errors_per_sec = median_of(|r| r.errors_per_sec);
        merged.timeouts_per_sec = median_of(|r| r.timeouts_per_sec);
        merged.retries_per_sec = median_of(|r| r.retries_per_sec);
        merged.verified = reps.iter().all(|r| r.verified);
        merged.verify_error = reps.iter().find_map(|r| r.verify_error.clone());
        merged.profile = reps.iter().find_map(|r| r.profile.clone());
        merged.extra = merge_extra(reps);
        merged.interference =
            Interference::merge(reps.iter().filter_map(|r| r.interference.as_ref()));
        let tables: Vec<&[LockRow]> = reps.iter().filter_map(|r| r.locks.as_deref()).collect();
        merged.locks = (!tables.is_empty()).then(|| lock_table::merge_rows(&tables));
        let bounds: Vec<&Bounds> = reps.iter().filter_map(|r| r.bounds.as_ref()).collect();
        merged.bounds = lock_table::merge_bounds(&bounds);
        merged.locks_off = reps.iter().any(|r| r.locks_off);
        let costs: Vec<InstrumentCost> = reps.iter().filter_map(|r| r.lock_cost).collect();
        merged.lock_cost = (!costs.is_empty()).then(|| InstrumentCost {
            counted_ns: stats::median(&costs.iter().map(|c| c.counted_ns).collect::<Vec<_>>()),
            timed_ns: stats::median(&costs.iter().map(|c| c.timed_ns).collect::<Vec<_>>()),
        });
        let overheads: Vec<f64> = reps.iter().filter_map(|r| r.run_overhead_s).collect();
        merged.run_overhead_s = (!overheads.is_empty()).then(|| stats::median(&overheads));
        lock_table::fill_ceilings(std::slice::from_mut(&mut merged));
        Some(merged)
    }
}

/// Numbers in `extra` become their median over repetitions; anything else (a label such
/// as the pool's `bound_by`) is the value most repetitions gave, the earliest on a tie, so
/// that it agrees with the medians beside it rather than with one repetition.
fn merge_extra(reps: &[Repetition]) -> serde_json::Map<String, serde_json::Value> {
    let mut out = serde_json::Map::new();
    for rep in reps {
        for (name, value) in &rep.extra {
            if out.contains_key(name) {
                continue;
            }
            let given: Vec<&serde_json::Value> =
                reps.iter().filter_map(|r| r.extra.get(name)).collect();
            let numbers: Vec<f64> = given.iter().filter_map(|v| v.as_f64()).collect();
            let merged = if value.is_number() && !numbers.is_empty() {
                serde_json::json!(stats::median(&numbers))
            } else {
                let count = |v: &serde_json::Value| given.iter().filter(|g| **g == v).count();
                // `max_by_key` keeps the last of equals: scan from the end for the earliest.
                given
                    .iter()
                    .rev()
                    .max_by_key(|v| count(v))
                    .map_or_else(|| value.clone(), |v| (*v).clone())
            };
            out.insert(name.clone(), merged);
        }
    }
    out
}

/// Fills `efficiency` of every cell from the threads=1 cell of the same scenario, variant,
/// params and cores, where that cell exists and is usable.
pub fn fill_efficiency(cells: &mut [CellRecord]) {
    let baselines: Vec<(CellKey, String, f64)> = cells
        .iter()
        .filter(|c| c.threads == 1 && c.usable())
        .map(|c| (c.key(), c.scenario_file.clone(), c.ops_per_sec))
        .collect();
    for cell in cells.iter_mut() {
        cell.efficiency = None;
        if !cell.usable() {
            continue;
        }
        let base = baselines.iter().find(|(k, file, _)| {
            *file == cell.scenario_file
                && k.hot_path == cell.hot_path
                && k.variant == cell.variant
                && k.params == cell.params
                && k.cores == cell.cores
        });
        if let Some((_, _, single)) = base {
            cell.efficiency =
                stats::efficiency(cell.ops_per_sec, cell.threads, cell.cores, *single);
        }
    }
}

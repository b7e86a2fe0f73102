//! The lock table of a record: one row per named lock with its rate, waits, holds,
//! utilisation and ceiling, and the cell's asymptotic bounds from operational analysis.
//!
//! The physics, per lock of K slots held a mean S per acquisition:
//!
//! - utilisation U = acquisitions/s x S / K (the utilisation law; at most 1, whatever the
//!   number of cores);
//! - ceiling = K / S acquisitions per second, or K / (S x a) operations per second where
//!   an operation makes a acquisitions; `ceiling_share` is the cell's ops/s over that
//!   ceiling, which equals U when every acquisition belongs to a counted operation (and
//!   is below it when failed operations took the lock too);
//! - bounds (asymptotic bound analysis of a closed system with N threads and no think
//!   time): with S the busiest lock's hold per operation (a x mean hold) and D the
//!   measured time per operation outside that lock (N / X - a x (mean hold + mean wait)),
//!   throughput X <= min(N / (D + S), K / S), and the knee where the two meet is
//!   N* = K (D + S) / S ((D + S) / S for one lock). Beyond N* threads no number of cores
//!   raises the bound.
//!
//! D at a thread count above the core count includes waiting for a CPU, so a cell's
//! bounds are this machine's; the single-thread cell's are the design's.
//!
//! This module computes from figures already taken ([`crate::locks`] takes them) and
//! renders nothing.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::locks::{LockSet, LockTally};
use crate::stats;

/// Percentiles and mean of a set of durations, nanoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Quantiles {
    /// Median.
    pub p50: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Largest seen.
    pub max: f64,
    /// Mean (exact over the values taken, not from the histogram's buckets; for holds,
    /// less the cost of the one clock read each timed hold includes).
    pub mean: f64,
}

impl Quantiles {
    fn of(h: &Histogram<u64>, mean: f64) -> Quantiles {
        Quantiles {
            p50: h.value_at_quantile(0.5) as f64,
            p99: h.value_at_quantile(0.99) as f64,
            max: h.max() as f64,
            mean,
        }
    }

    /// Medians field by field over repetitions, the largest `max`.
    fn median_of(all: &[Quantiles]) -> Quantiles {
        let of = |f: fn(&Quantiles) -> f64| stats::median(&all.iter().map(f).collect::<Vec<_>>());
        Quantiles {
            p50: of(|q| q.p50),
            p99: of(|q| q.p99),
            max: all.iter().map(|q| q.max).fold(0.0, f64::max),
            mean: of(|q| q.mean),
        }
    }
}

/// One row of a record's lock table. Figures that were not measured are null, never 0.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LockRow {
    /// The lock's name as the hot path gives it.
    pub name: String,
    /// Holders it admits at once (K); null for a shared side (readers of a
    /// reader-writer lock), which has no ceiling of its own.
    pub slots: Option<u32>,
    /// Acquisitions per second of window.
    pub acquisitions_per_sec: f64,
    /// Acquisitions per counted operation; null when no operation counted.
    #[serde(default)]
    pub acquisitions_per_op: Option<f64>,
    /// Share of acquisitions that had to wait; null with no acquisition.
    pub contended_share: Option<f64>,
    /// Wait per acquisition (uncontended ones wait 0; every contended one is timed).
    pub wait_ns: Option<Quantiles>,
    /// Hold per acquisition, from the timed sample; null when no hold was timed.
    pub hold_ns: Option<Quantiles>,
    /// Holds timed (the sample behind `hold_ns`).
    #[serde(default)]
    pub hold_samples: u64,
    /// Mean holders at once (acquisitions/s x mean hold, Little's law); defined for a
    /// shared side too.
    #[serde(default)]
    pub occupancy: Option<f64>,
    /// U = acquisitions/s x mean hold / slots.
    pub utilization: Option<f64>,
    /// slots / mean hold, in the cell's operations per second.
    pub ceiling_ops_per_sec: Option<f64>,
    /// The cell's ops/s as a share of `ceiling_ops_per_sec`.
    pub ceiling_share: Option<f64>,
}

/// The asymptotic bounds of a cell from its busiest lock (see the module's comment).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Bounds {
    /// The busiest lock (highest utilisation among those with slots).
    pub lock: String,
    /// Its slots K.
    pub slots: u32,
    /// Threads (or clients) N of the cell.
    pub threads: usize,
    /// D: time per operation outside that lock, nanoseconds.
    pub demand_outside_ns: f64,
    /// S: that lock's hold per operation (acquisitions per operation x mean hold), ns.
    pub hold_per_op_ns: f64,
    /// N* = K (D + S) / S: beyond it the lock, not the threads, bounds throughput.
    pub knee_threads: f64,
    /// min(N / (D + S), K / S) at this cell's N, operations per second.
    pub bound_ops_per_sec: f64,
    /// K / S: the bound no thread count passes.
    pub ceiling_ops_per_sec: f64,
}

impl Bounds {
    /// The bound at `threads` threads, with this cell's D and S.
    pub fn at(&self, threads: usize) -> f64 {
        let per_op_s = (self.demand_outside_ns + self.hold_per_op_ns) * 1e-9;
        (threads as f64 / per_op_s).min(self.ceiling_ops_per_sec)
    }
}

/// The table of a run: one row per named lock, in the order the set names them.
///
/// Every timed hold includes one clock read (`clock_read_ns`, measured in the same run);
/// the mean is taken less that cost, since U and the ceiling are built on it and a hold of
/// a few tens of nanoseconds would otherwise read as more than the window (U > 1). The
/// percentiles are left as timed (a percentile less a median cost is no percentile).
pub fn rows(
    set: &LockSet,
    tallies: &[LockTally],
    (window_s, clock_read_ns): (f64, f64),
    ops: u64,
) -> Vec<LockRow> {
    let empty = LockTally::default();
    let ops_per_sec = if window_s > 0.0 {
        ops as f64 / window_s
    } else {
        0.0
    };
    set.locks
        .iter()
        .map(|spec| {
            let t = tallies.get(usize::from(spec.id.0)).unwrap_or(&empty);
            let n = t.acquisitions;
            let per_sec = if window_s > 0.0 {
                n as f64 / window_s
            } else {
                0.0
            };
            let per_op = (ops > 0).then(|| n as f64 / ops as f64);
            let wait_ns = (n > 0).then(|| {
                let mut all = t.waits.clone().unwrap_or_else(stats::new_histogram);
                // The uncontended acquisitions waited nothing.
                let _ = all.record_n(0, n - t.contended);
                Quantiles::of(&all, t.wait_sum_ns as f64 / n as f64)
            });
            let hold_ns = t.holds.as_ref().filter(|_| t.hold_samples > 0).map(|h| {
                let mean = t.hold_sum_ns as f64 / t.hold_samples as f64;
                Quantiles::of(h, (mean - clock_read_ns.max(0.0)).max(0.0))
            });
            let hold_s = hold_ns.map(|h| h.mean * 1e-9).filter(|&s| s > 0.0);
            let occupancy = hold_s.map(|s| per_sec * s);
            let k = spec.slots.map(f64::from);
            let utilization = occupancy.zip(k).map(|(o, k)| o / k);
            let ceiling = match (k, hold_s, per_op) {
                (Some(k), Some(s), Some(a)) if a > 0.0 => Some(k / (s * a)),
                _ => None,
            };
            LockRow {
                name: spec.name.clone(),
                slots: spec.slots,
                acquisitions_per_sec: per_sec,
                acquisitions_per_op: per_op,
                contended_share: (n > 0).then(|| t.contended as f64 / n as f64),
                wait_ns,
                hold_ns,
                hold_samples: t.hold_samples,
                occupancy,
                utilization,
                ceiling_ops_per_sec: ceiling,
                ceiling_share: ceiling.map(|c| ops_per_sec / c),
            }
        })
        .collect()
}

/// The busiest row: the highest utilisation among rows with slots and a timed hold.
pub fn busiest(rows: &[LockRow]) -> Option<&LockRow> {
    rows.iter()
        .filter(|r| r.utilization.is_some())
        .max_by(|a, b| {
            a.utilization
                .unwrap_or(0.0)
                .total_cmp(&b.utilization.unwrap_or(0.0))
        })
}

/// The bounds of a cell of `threads` threads at `ops_per_sec` from its busiest lock;
/// `None` without a busiest lock or a throughput.
pub fn bounds(rows: &[LockRow], threads: usize, ops_per_sec: f64) -> Option<Bounds> {
    let row = busiest(rows)?;
    let (k, hold, a) = (row.slots?, row.hold_ns?, row.acquisitions_per_op?);
    if ops_per_sec <= 0.0 || a <= 0.0 || hold.mean <= 0.0 {
        return None;
    }
    let s = a * hold.mean;
    let w = a * row.wait_ns.map_or(0.0, |q| q.mean);
    let residence = threads as f64 / ops_per_sec * 1e9;
    let d = (residence - s - w).max(0.0);
    let mut b = Bounds {
        lock: row.name.clone(),
        slots: k,
        threads,
        demand_outside_ns: d,
        hold_per_op_ns: s,
        knee_threads: f64::from(k) * (d + s) / s,
        bound_ops_per_sec: 0.0,
        ceiling_ops_per_sec: f64::from(k) / (s * 1e-9),
    };
    b.bound_ops_per_sec = b.at(threads);
    Some(b)
}

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
    Some(Bounds {
        lock,
        slots: same[0].slots,
        threads: same[0].threads,
        demand_outside_ns: of(|b| b.demand_outside_ns),
        hold_per_op_ns: of(|b| b.hold_per_op_ns),
        knee_threads: of(|b| b.knee_threads),
        bound_ops_per_sec: of(|b| b.bound_ops_per_sec),
        ceiling_ops_per_sec: of(|b| b.ceiling_ops_per_sec),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::locks::LockId;

    fn tally(acquisitions: u64, contended: u64, holds_ns: &[u64]) -> LockTally {
        let mut t = LockTally {
            acquisitions,
            contended,
            wait_sum_ns: contended * 1000,
            ..LockTally::default()
        };
        let mut w = stats::new_histogram();
        let _ = w.record_n(1000, contended);
        t.waits = Some(w);
        let mut h = stats::new_histogram();
        for &ns in holds_ns {
            h.record(ns).unwrap();
        }
        t.hold_samples = holds_ns.len() as u64;
        t.hold_sum_ns = holds_ns.iter().sum();
        t.holds = Some(h);
        t
    }

    #[test]
    fn a_lock_held_half_the_time_is_half_used_and_its_ceiling_is_k_over_s() {
        // 1 s window, 1000 operations, 2 acquisitions each, 250 us holds: U = 0.5.
        let set = LockSet::new()
            .with(LockId(0), "m", 1)
            .with(LockId(1), "sem", 4)
            .shared(LockId(2), "reads");
        let t = vec![
            tally(2000, 500, &[250_000; 10]),
            tally(2000, 0, &[250_000; 10]),
            LockTally::default(),
        ];
        let r = rows(&set, &t, (1.0, 0.0), 1000);
        assert!((r[0].utilization.unwrap() - 0.5).abs() < 1e-9);
        // K / S = 4000 acquisitions/s = 2000 ops/s (two per operation).
        assert!((r[0].ceiling_ops_per_sec.unwrap() - 2000.0).abs() < 1e-6);
        assert!((r[1].ceiling_ops_per_sec.unwrap() - 4.0 * 2000.0).abs() < 1e-6);
        assert!((r[0].ceiling_share.unwrap() - 0.5).abs() < 1e-9);
        assert_eq!(r[0].contended_share, Some(0.25));
        assert_eq!(r[0].wait_ns.unwrap().mean, 250.0);
        // An unseen lock and a shared side: nulls, not zeros.
        assert_eq!(r[2].utilization, None);
        assert_eq!(r[2].hold_ns, None);
        assert_eq!(r[2].contended_share, None);

        let b = bounds(&r, 1, 1000.0).unwrap();
        assert_eq!(b.lock, "m");
        // R = 1 ms; S = 0.5 ms; W = 2 x 250 ns; D = R - S - W.
        assert!((b.hold_per_op_ns - 500_000.0).abs() < 1e-6);
        assert!((b.demand_outside_ns - 499_500.0).abs() < 1e-6);
        assert!((b.knee_threads - (999_500.0 / 500_000.0)).abs() < 1e-9);
        assert!((b.ceiling_ops_per_sec - 2000.0).abs() < 1e-6);
        assert!(b.at(100) <= b.ceiling_ops_per_sec && b.at(1) < b.ceiling_ops_per_sec);
    }

    #[test]
    fn repetitions_merge_by_name_to_medians() {
        let row = |name: &str, u: f64| LockRow {
            name: name.into(),
            slots: Some(1),
            utilization: Some(u),
            hold_ns: Some(Quantiles {
                p50: u,
                p99: u,
                max: u,
                mean: u,
            }),
            hold_samples: 1,
            ..LockRow::default()
        };
        let a = [row("x", 0.1), row("y", 1.0)];
        let b = [row("x", 0.3)];
        let c = [row("x", 0.2)];
        let m = merge_rows(&[&a, &b, &c]);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].utilization, Some(0.2));
        assert_eq!(m[0].hold_ns.unwrap().max, 0.3);
        assert_eq!(m[0].hold_samples, 3);
        assert_eq!(m[1].utilization, Some(1.0));
    }
}

//! The lock table of a record: one row per named lock with its rate, waits, holds,
//! utilisation and ceiling, and the cell's asymptotic bounds from operational analysis.
//!
//! The physics, per lock of K slots held a mean S per acquisition:
//!
//! - utilisation U = acquisitions/s x S / K (the utilisation law; at most 1, whatever the
//!   number of cores);
//! - ceiling = K / S0 acquisitions per second, or K / (S0 x a) operations per second where
//!   an operation makes a acquisitions, with S0 the lock's hold measured uncontended (the
//!   1-thread cell of the same variant, parameters and cores; [`fill_ceilings`]): a
//!   capacity, what the lock could pass if its holds stayed as short as they are alone.
//!   `ceiling_share` is the cell's ops/s over it, U x S / S0 when every acquisition
//!   belongs to a counted operation: below U when holds lengthen under contention (cache
//!   lines moving between cores, a holder preempted), equal to U in the 1-thread cell.
//!   Where no uncontended hold exists the ceiling and its share are null: the cell's own
//!   hold would give K / S, whose share is U again and says nothing new;
//! - bounds (asymptotic bound analysis of a closed system with N threads and no think
//!   time): with S the busiest lock's hold per operation (a x mean hold), D the measured
//!   time per operation outside that lock (N / X - a x (mean hold + mean wait)) and D_cpu
//!   the CPU time per operation (process CPU time over operations, the cell's CPUs being
//!   `cores`), throughput X <= min(N / (D + S), K / S, cores / D_cpu), and the knee where
//!   the first meets the least of the others is N* = (D + S) x min(K / S, cores / D_cpu)
//!   (K (D + S) / S when the lock binds). Beyond N* threads no number of threads raises
//!   the bound; beyond K / S no number of cores does.
//!
//! D at a thread count above the core count includes waiting for a CPU, so a cell's
//! bounds are this machine's; the single-thread cell's are the design's. D_cpu counts the
//! whole process (a server in another process is not in it).
//!
//! This module computes from figures already taken ([`crate::locks`] takes them) and
//! renders nothing.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::locks::{LockSet, LockTally};
use crate::stats;

mod ceilings;
mod merge;
#[cfg(test)]
mod tests;

pub use ceilings::fill_ceilings;
pub use merge::{merge_bounds, merge_rows};

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
    /// The lock's mean hold uncontended, ns: in the 1-thread cell of the same variant,
    /// parameters and cores (the cell itself at 1 thread); null where no such cell has
    /// this lock's hold timed.
    #[serde(default)]
    pub uncontended_hold_ns: Option<f64>,
    /// slots / (uncontended hold x acquisitions per operation), in the cell's operations
    /// per second: the lock's capacity; null without `uncontended_hold_ns`. (Files
    /// written before the field have slots / the cell's own hold here.)
    pub ceiling_ops_per_sec: Option<f64>,
    /// The cell's ops/s as a share of `ceiling_ops_per_sec`: `utilization` x
    /// `uncontended_hold_ns` / mean hold, so below `utilization` where holds lengthen
    /// under contention.
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
    /// N* = (D + S) x min(K / S, cores / D_cpu): beyond it the lock or the CPUs, not
    /// the threads, bound throughput (K (D + S) / S in files written before the CPUs
    /// were counted).
    pub knee_threads: f64,
    /// min(N / (D + S), K / S, cores / D_cpu) at this cell's N, operations per second.
    pub bound_ops_per_sec: f64,
    /// K / S: the bound the lock sets, whatever the threads and cores.
    pub ceiling_ops_per_sec: f64,
    /// The cell's CPUs (0 in files written before the CPUs were counted).
    #[serde(default)]
    pub cores: usize,
    /// D_cpu: the process's CPU time per operation, ns; null where not measured.
    #[serde(default)]
    pub cpu_per_op_ns: Option<f64>,
    /// cores / D_cpu: the bound the CPUs set, operations per second; null with
    /// `cpu_per_op_ns`.
    #[serde(default)]
    pub cpu_ceiling_ops_per_sec: Option<f64>,
}

impl Bounds {
    /// The least of the ceilings no thread count passes: K / S and cores / D_cpu.
    pub fn limit(&self) -> f64 {
        self.cpu_ceiling_ops_per_sec
            .map_or(self.ceiling_ops_per_sec, |c| {
                c.min(self.ceiling_ops_per_sec)
            })
    }

    /// Whether the CPUs, not the lock, set [`Bounds::limit`].
    pub fn cpu_bound(&self) -> bool {
        self.cpu_ceiling_ops_per_sec
            .is_some_and(|c| c < self.ceiling_ops_per_sec)
    }

    /// The bound at `threads` threads, with this cell's D, S and D_cpu on its cores.
    pub fn at(&self, threads: usize) -> f64 {
        let per_op_s = (self.demand_outside_ns + self.hold_per_op_ns) * 1e-9;
        (threads as f64 / per_op_s).min(self.limit())
    }
}

/// What [`bounds`] needs of a cell beyond its lock rows.
#[derive(Debug, Clone, Copy)]
pub struct CellLoad {
    /// Threads (or clients) N.
    pub threads: usize,
    /// CPUs in its mask.
    pub cores: usize,
    /// Its throughput, operations per second.
    pub ops_per_sec: f64,
    /// Process CPU time / (wall time x cores) over the window; 0 when not measured.
    pub cpu_util: f64,
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
                // The uncontended acquisitions waited nothing. (A wait recorded at a
                // release just inside the window may belong to an acquisition before it.)
                let _ = all.record_n(0, n.saturating_sub(t.contended));
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
            LockRow {
                name: spec.name.clone(),
                slots: spec.slots,
                acquisitions_per_sec: per_sec,
                acquisitions_per_op: per_op,
                contended_share: (n > 0).then(|| (t.contended as f64 / n as f64).min(1.0)),
                wait_ns,
                hold_ns,
                hold_samples: t.hold_samples,
                occupancy,
                utilization,
                // A capacity needs the uncontended hold: `fill_ceilings` brings it.
                uncontended_hold_ns: None,
                ceiling_ops_per_sec: None,
                ceiling_share: None,
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

/// The bounds of a cell from its busiest lock and its CPU time; `None` without a busiest
/// lock or a throughput.
pub fn bounds(rows: &[LockRow], cell: CellLoad) -> Option<Bounds> {
    let row = busiest(rows)?;
    let (k, hold, a) = (row.slots?, row.hold_ns?, row.acquisitions_per_op?);
    let (threads, ops_per_sec) = (cell.threads, cell.ops_per_sec);
    if ops_per_sec <= 0.0 || a <= 0.0 || hold.mean <= 0.0 {
        return None;
    }
    let s = a * hold.mean;
    let w = a * row.wait_ns.map_or(0.0, |q| q.mean);
    let residence = threads as f64 / ops_per_sec * 1e9;
    let d = (residence - s - w).max(0.0);
    let cpu_per_op_ns = (cell.cpu_util > 0.0 && cell.cores > 0)
        .then(|| cell.cpu_util * cell.cores as f64 / ops_per_sec * 1e9);
    let mut b = Bounds {
        lock: row.name.clone(),
        slots: k,
        threads,
        demand_outside_ns: d,
        hold_per_op_ns: s,
        knee_threads: 0.0,
        bound_ops_per_sec: 0.0,
        ceiling_ops_per_sec: f64::from(k) / (s * 1e-9),
        cores: cell.cores,
        cpu_per_op_ns,
        cpu_ceiling_ops_per_sec: cpu_per_op_ns.map(|c| cell.cores as f64 / (c * 1e-9)),
    };
    b.knee_threads = (d + s) * 1e-9 * b.limit();
    b.bound_ops_per_sec = b.at(threads);
    Some(b)
}

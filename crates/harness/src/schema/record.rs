//! One record of the results file ([`CellRecord`]): its fields, which are the public
//! interface, and what a reader asks of them (its key, its interval, whether it may be
//! shown).
//!
//! Not here: making a record from a measurement ([`super::build`]) or from repetitions
//! ([`super::merge`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::account::TimeShare;
use crate::interference::Interference;
use crate::lock_table::{Bounds, LockRow};
use crate::locks::cost::InstrumentCost;
use crate::stats::{self, LatencySummary};

/// Whether a cell produced figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CellStatus {
    /// The cell ran; its figures are meaningful (check `verified` too).
    Ok,
    /// The cell crashed, timed out or could not start; see `failure`. Its figures are zero
    /// and must not be shown as numbers.
    Failed,
}

/// Where a cell's CPU profile lies, relative to the repository root.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileRef {
    /// The flamegraph (SVG).
    pub svg: String,
    /// The folded stacks behind it.
    pub folded: String,
    /// How many on-CPU samples the profiler took; below 500 the flamegraph is thin.
    pub samples: u64,
    /// The sampler that made the on-CPU profile: `perf` or `pprof` (the fallback where
    /// perf events are not allowed). Results written before samplers were named say `pprof`.
    #[serde(default = "pprof_sampler")]
    pub sampler: String,
    /// Samples per second asked of the sampler (0: not recorded).
    #[serde(default)]
    pub rate_hz: u32,
    /// The off-CPU (wait) profile of the same window, when one was taken.
    #[serde(default)]
    pub off_cpu: Option<OffCpuRef>,
    /// Folded on-CPU stacks of further profiling repetitions of the same cell, where the
    /// plan took more than one: two profiles at one thread count show how much a frame's
    /// share moves by noise alone (a finding's noise floor). Empty in older files.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repeats: Vec<String>,
    /// Off-CPU time of the server the hot path ran (a companion process), from the
    /// scheduler's switches: where its threads slept or waited for a CPU, in microseconds.
    /// `seconds` is the time covered; there is no measured blocked time to check it by.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_off_cpu: Option<OffCpuRef>,
    /// Why a cell that ran a server has no `server_off_cpu`, in one line (no root, perf
    /// refused); absent where the cell ran no server or the profile was taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_off_cpu_absent: Option<String>,
    /// What the profiled run took beyond its warm-up and window, in seconds (process,
    /// perf's start, its samples read back and folded, the flamegraphs drawn): the plan
    /// prices the next run's profiles by it. Absent in older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_overhead_s: Option<f64>,
}

fn pprof_sampler() -> String {
    "pprof".to_owned()
}

/// Where a cell's off-CPU (wait) profile lies: the hot path's measured waits, sampled with
/// their call stacks and weighted by blocked time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OffCpuRef {
    /// The flamegraph (SVG).
    pub svg: String,
    /// The folded stacks behind it (counts in microseconds blocked).
    pub folded: String,
    /// Blocked time the profile covers, summed over threads, in seconds.
    pub seconds: f64,
    /// Blocked time the hot path measured in the same window, in seconds; null where the
    /// hot path does not measure its waits.
    #[serde(default)]
    pub measured_seconds: Option<f64>,
    /// Wait stacks captured.
    #[serde(default)]
    pub samples: u64,
}

/// One cell of the matrix: a (hot path, variant, params, threads, cores) measured
/// `repeats` times, with medians and spread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellRecord {
    /// The hot path, e.g. `lookup`. Written `hot_path`; read as `scenario` too, its name
    /// in files before schema 2.
    #[serde(rename = "hot_path", alias = "scenario")]
    pub hot_path: String,
    /// The implementation, e.g. `global-mutex`.
    pub variant: String,
    /// The scenario file (`benches/<name>.toml`) the cell came from; empty for `lab run`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub scenario_file: String,
    /// The scenario's parameters for this cell.
    pub params: BTreeMap<String, serde_json::Value>,
    /// Worker threads.
    pub threads: usize,
    /// CPUs in the affinity mask.
    pub cores: usize,
    /// The CPUs actually in the mask, e.g. `0-1`.
    #[serde(default)]
    pub affinity: String,
    /// `ok` or `failed`.
    pub status: CellStatus,
    /// Why the cell failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// Repetitions behind the figures.
    pub repeats: usize,
    /// Length of one measured window in seconds.
    pub duration_s: f64,
    /// Median operations per second over repetitions, whole process.
    pub ops_per_sec: f64,
    /// Lowest repetition.
    pub ops_per_sec_min: f64,
    /// Highest repetition.
    pub ops_per_sec_max: f64,
    /// 95% confidence interval of the median `ops_per_sec`, `[low, high]`, from order
    /// statistics of the repetitions ([`stats::median_ci`]). With fewer than 6
    /// repetitions no order-statistics interval reaches 95% and this is min-max, which
    /// covers the median less often (94% for 5, 50% for 2): see
    /// [`CellRecord::ops_ci_coverage`]. `[0, 0]` in files written before the field existed;
    /// read it through [`CellRecord::ops_ci`].
    #[serde(default)]
    pub ops_per_sec_ci: [f64; 2],
    /// `ops_per_sec` of every repetition, in the order they ran: what `lab compare` tests
    /// and `lab report` resamples. Empty in files written before the field existed.
    #[serde(default)]
    pub ops_per_sec_reps: Vec<f64>,
    /// `ops_per_sec / threads`.
    pub per_thread_ops_per_sec: f64,
    /// `ops_per_sec / (min(threads, cores) x ops_per_sec at threads=1)`, when the matrix
    /// has the threads=1 cell of the same variant, params and cores.
    pub efficiency: Option<f64>,
    /// Latency percentiles (median over repetitions; `max` is the largest seen).
    pub latency_ns: LatencySummary,
    /// Share of worker time (threads x window) spent inside the hot path's waits (locks,
    /// permits, connections, busy-handler and backoff sleeps), whole, including any part
    /// the waiting thread spent runnable (a lock that yields while it waits); null where the
    /// hot path does not measure its waits, never a misleading 0. At least
    /// `time_share.blocked`, which keeps only what the kernel did not count elsewhere.
    pub wait_share: Option<f64>,
    /// Where the worker threads' time went: shares of threads x window on CPU, waiting
    /// for a CPU, blocked on the hot path (the part of `wait_share` the kernel did not count
    /// as on CPU or run queue) and the rest, summing to about 1; median
    /// over repetitions field by field. Null for a failed cell.
    #[serde(default)]
    pub time_share: Option<TimeShare>,
    /// Where a server's threads' time went, for a hot path whose variants are real server
    /// processes (`ldap`): the same four shares as `time_share`, from each server thread's
    /// schedstat over the window, over the threads that ran at least 1% of it; `blocked`
    /// is null (the kernel does not say what a sleeping thread waits for: the server's
    /// off-CPU profile does), `other` is asleep. Absent for every other hot path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_time_share: Option<TimeShare>,
    /// The cost of one clock read in nanoseconds, measured in each repetition before its
    /// window (median over repetitions); every timed latency sample includes one, and it
    /// is not subtracted.
    #[serde(default)]
    pub clock_read_ns: f64,
    /// Retries, summed over the measured windows of all repetitions.
    pub retries: u64,
    /// Failed operations, summed over the measured windows of all repetitions. Not in
    /// `ops_per_sec`, which counts successes only.
    pub errors: u64,
    /// Operations that gave up waiting (a pool timeout), summed like `errors`; not in
    /// `ops_per_sec`.
    #[serde(default)]
    pub timeouts: u64,
    /// Steps that did no work of the hot path (a simulated event, nothing to do), summed
    /// like `errors`; not in `ops_per_sec`.
    #[serde(default)]
    pub idle_steps: u64,
    /// Failed operations per second of window, median over repetitions.
    #[serde(default)]
    pub errors_per_sec: f64,
    /// Timeouts per second of window, median over repetitions.
    #[serde(default)]
    pub timeouts_per_sec: f64,
    /// Retries per second of window, median over repetitions.
    #[serde(default)]
    pub retries_per_sec: f64,
    /// Process CPU time / (wall time x cores), median over repetitions.
    pub cpu_util: f64,
    /// Whether the invariants held in every repetition.
    pub verified: bool,
    /// Why verification failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify_error: Option<String>,
    /// The cell's CPU profile, when one was taken.
    pub profile: Option<ProfileRef>,
    /// Hot-path-specific figures (snake_case names), median over repetitions for numbers.
    #[serde(default)]
    pub extra: serde_json::Map<String, serde_json::Value>,
    /// What the rest of the machine did during the cell's windows and how many of its
    /// repetitions were retaken for it ([`Interference`]); null for a failed cell and in
    /// files written before it was measured.
    #[serde(default)]
    pub interference: Option<Interference>,
    /// The lock table: one row per lock, permit set or connection set the hot path names
    /// (see [`crate::lock_table`]), median over repetitions row by row; null where the hot
    /// path names no locks (and in files written before the table existed).
    #[serde(default)]
    pub locks: Option<Vec<LockRow>>,
    /// Whether `locks` names every synchronization point the hot path takes; null with
    /// `locks`.
    #[serde(default)]
    pub locks_complete: Option<bool>,
    /// What the hot path takes but does not name (when `locks_complete` is false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locks_unnamed: Option<String>,
    /// The asymptotic bounds from the busiest lock and the CPUs: `knee_threads` (N*) and
    /// `bound_ops_per_sec` (min(N / (D + S), K / S, cores / D_cpu)); null without a
    /// busiest lock.
    #[serde(default)]
    pub bounds: Option<Bounds>,
    /// True when the cell was measured with the lock table's instrument off (`lab matrix
    /// locks=off`): the uninstrumented figure, and `locks` null whatever the hot path
    /// names. Absent (false) otherwise.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub locks_off: bool,
    /// What the lock table's instrument costs per acquisition in the cell's process
    /// ([`crate::locks::cost`]), median over repetitions; null without a lock table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lock_cost: Option<InstrumentCost>,
    /// Seconds one child `lab run` of this cell took beyond its warm-up and measured
    /// window (starting the process, building its data, verifying, exiting), as `lab
    /// matrix` timed it; median over repetitions. What the matrix's budget plans with.
    /// Null for a `lab run` outside a matrix and in files written before the field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_overhead_s: Option<f64>,
}

/// What identifies a cell, without its figures.
#[derive(Debug, Clone, PartialEq)]
pub struct CellKey {
    /// The hot path.
    pub hot_path: String,
    /// The implementation.
    pub variant: String,
    /// Parameters.
    pub params: BTreeMap<String, serde_json::Value>,
    /// Worker threads.
    pub threads: usize,
    /// CPUs in the mask.
    pub cores: usize,
}

impl CellRecord {
    /// The identity of this cell.
    pub fn key(&self) -> CellKey {
        CellKey {
            hot_path: self.hot_path.clone(),
            variant: self.variant.clone(),
            params: self.params.clone(),
            threads: self.threads,
            cores: self.cores,
        }
    }

    /// The 95% interval of `ops_per_sec` as (low, high); min-max for a record from a file
    /// written before `ops_per_sec_ci` existed.
    pub fn ops_ci(&self) -> (f64, f64) {
        let [low, high] = self.ops_per_sec_ci;
        if low == 0.0 && high == 0.0 && self.ops_per_sec > 0.0 {
            (self.ops_per_sec_min, self.ops_per_sec_max)
        } else {
            (low, high)
        }
    }

    /// How often [`CellRecord::ops_ci`] covers the true median: at least 0.95 from 6
    /// repetitions on, less for fewer (see [`stats::median_ci_coverage`]).
    pub fn ops_ci_coverage(&self) -> f64 {
        let n = if self.ops_per_sec_reps.is_empty() {
            self.repeats
        } else {
            self.ops_per_sec_reps.len()
        };
        stats::median_ci_coverage(n)
    }

    /// Whether more threads than CPUs ran.
    pub fn oversubscribed(&self) -> bool {
        self.threads > self.cores
    }

    /// Whether the figures may be shown: it ran and its invariants held.
    pub fn usable(&self) -> bool {
        self.status == CellStatus::Ok && self.verified
    }

    /// The scenario file the record came from (older results carry none: the hot path's
    /// name).
    pub fn file(&self) -> &str {
        if self.scenario_file.is_empty() {
            &self.hot_path
        } else {
            &self.scenario_file
        }
    }
}

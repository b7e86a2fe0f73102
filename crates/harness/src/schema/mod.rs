//! The result schema: what `lab` writes to `reports/data/<run-id>.json` and what users and
//! scripts parse. Field names are a public interface (see ARCHITECTURE.md); add fields, never
//! rename them, and bump [`SCHEMA_VERSION`] when a change would mislead an old reader.

mod merge;

pub use merge::fill_efficiency;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::account::TimeShare;
use crate::env::EnvInfo;
use crate::interference::Interference;
use crate::lock_table::{self, Bounds, CellLoad, LockRow};
use crate::locks::cost::InstrumentCost;
use crate::runner::Measurement;
use crate::stats::{self, LatencySummary};

/// The schema version this build writes and the newest it reads.
pub const SCHEMA_VERSION: u32 = 1;

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

/// One cell of the matrix: a (scenario, variant, params, threads, cores) measured
/// `repeats` times, with medians and spread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// The hot path, e.g. `lookup` (JSON `scenario`, its name before the word settled; the
    /// schema rule keeps it).
    #[serde(rename = "scenario")]
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
    /// [`RunRecord::ops_ci_coverage`]. `[0, 0]` in files written before the field existed;
    /// read it through [`RunRecord::ops_ci`].
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

impl RunRecord {
    /// A record of one repetition.
    pub fn from_measurement(key: &CellKey, affinity: &str, m: &Measurement) -> RunRecord {
        let ops = m.ops_per_sec();
        // With the instrument off nothing was counted: no table, rather than one of zeros.
        let locks_off = m.locks.is_some() && !crate::locks::instrument_on();
        let measured = m.locks.as_ref().filter(|_| !locks_off);
        let locks = measured.map(|l| {
            let clock = (m.window.as_secs_f64(), m.clock_read_ns);
            lock_table::rows(&l.set, &l.tallies, clock, m.ops)
        });
        let load = CellLoad {
            threads: key.threads,
            cores: key.cores,
            ops_per_sec: ops,
            cpu_util: m.cpu_util(key.cores),
        };
        let bounds = locks
            .as_deref()
            .and_then(|rows| lock_table::bounds(rows, load));
        let unnamed = measured.and_then(|l| l.set.unnamed.clone());
        let lock_cost = measured.map(|_| crate::locks::cost::instrument_cost());
        let mut record = RunRecord {
            hot_path: key.hot_path.clone(),
            variant: key.variant.clone(),
            scenario_file: String::new(),
            params: key.params.clone(),
            threads: key.threads,
            cores: key.cores,
            affinity: affinity.to_owned(),
            status: CellStatus::Ok,
            failure: None,
            repeats: 1,
            duration_s: m.window.as_secs_f64(),
            ops_per_sec: ops,
            ops_per_sec_min: ops,
            ops_per_sec_max: ops,
            ops_per_sec_ci: [ops, ops],
            ops_per_sec_reps: vec![ops],
            per_thread_ops_per_sec: ops / key.threads.max(1) as f64,
            efficiency: None,
            latency_ns: LatencySummary::of(&m.latency),
            wait_share: m.wait_share(),
            time_share: Some(m.time_share()),
            server_time_share: m.server_time_share,
            clock_read_ns: m.clock_read_ns,
            retries: m.retries,
            errors: m.errors,
            timeouts: m.timeouts,
            idle_steps: m.idle,
            errors_per_sec: stats::rate(m.errors, m.window),
            timeouts_per_sec: stats::rate(m.timeouts, m.window),
            retries_per_sec: stats::rate(m.retries, m.window),
            cpu_util: m.cpu_util(key.cores),
            verified: m.verified.is_ok(),
            verify_error: m.verified.clone().err(),
            profile: None,
            extra: m.extra.clone(),
            interference: m.interference.clone(),
            locks_complete: locks.as_ref().map(|_| unnamed.is_none()),
            locks_unnamed: unnamed,
            locks,
            bounds,
            locks_off,
            lock_cost,
            run_overhead_s: None,
        };
        // A 1-thread record is its own uncontended cell; any other waits for the run's.
        lock_table::fill_ceilings(std::slice::from_mut(&mut record));
        record
    }

    /// A record for a cell that produced no figures.
    pub fn failed(key: &CellKey, affinity: &str, reason: impl Into<String>) -> RunRecord {
        RunRecord {
            hot_path: key.hot_path.clone(),
            variant: key.variant.clone(),
            scenario_file: String::new(),
            params: key.params.clone(),
            threads: key.threads,
            cores: key.cores,
            affinity: affinity.to_owned(),
            status: CellStatus::Failed,
            failure: Some(reason.into()),
            repeats: 0,
            duration_s: 0.0,
            ops_per_sec: 0.0,
            ops_per_sec_min: 0.0,
            ops_per_sec_max: 0.0,
            ops_per_sec_ci: [0.0, 0.0],
            ops_per_sec_reps: Vec::new(),
            per_thread_ops_per_sec: 0.0,
            efficiency: None,
            latency_ns: LatencySummary::default(),
            wait_share: None,
            time_share: None,
            server_time_share: None,
            clock_read_ns: 0.0,
            retries: 0,
            errors: 0,
            timeouts: 0,
            idle_steps: 0,
            errors_per_sec: 0.0,
            timeouts_per_sec: 0.0,
            retries_per_sec: 0.0,
            cpu_util: 0.0,
            verified: false,
            verify_error: None,
            profile: None,
            extra: serde_json::Map::new(),
            interference: None,
            locks: None,
            locks_complete: None,
            locks_unnamed: None,
            bounds: None,
            locks_off: false,
            lock_cost: None,
            run_overhead_s: None,
        }
    }

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

    /// How often [`RunRecord::ops_ci`] covers the true median: at least 0.95 from 6
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

/// The whole results file of one matrix run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultsFile {
    /// Schema version; readers refuse a newer one.
    pub schema: u32,
    /// Identifier of the run, also its file name.
    pub run_id: String,
    /// When the run started (RFC 3339, UTC).
    pub started: String,
    /// When the run ended (RFC 3339, UTC).
    #[serde(default)]
    pub finished: String,
    /// The command that reproduces the run.
    #[serde(default)]
    pub command: String,
    /// False when the run was interrupted and holds only the cells that finished.
    #[serde(default = "default_true")]
    pub complete: bool,
    /// One line per scenario file: which command-line settings applied to it and which
    /// values it kept as the file has them (empty in files written before this field).
    #[serde(default)]
    pub settings_by_file: Vec<String>,
    /// The `[seed]` table of each scenario file that has one, by file name: the seed's
    /// baseline, figures and settings that the hot paths' questions compare with (empty in
    /// files written before this field: those findings say the seed's figures are absent).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub seeds: BTreeMap<String, serde_json::Value>,
    /// The machine and build.
    pub env: EnvInfo,
    /// Every cell.
    pub cells: Vec<RunRecord>,
    /// Every part the findings declared for this plan, with the pairs measured for it
    /// after the rounds (empty in files written before parts, and in quick runs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub comparisons: Vec<crate::decide::Measured>,
    /// The seed of the cell order, shuffled afresh in every round (0 in files written
    /// before the order was shuffled).
    #[serde(default)]
    pub order_seed: u64,
    /// What `lab matrix resume=<run-id>` needs to continue this run; absent in files
    /// written before runs could be resumed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume: Option<ResumeState>,
}

/// The state of a matrix run that a resumed run continues from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResumeState {
    /// The settings as typed after `lab matrix`, e.g. `["threads=1,2", "quick=true"]`.
    pub settings: Vec<String>,
    /// Every finished repetition, unmerged (its `scenario_file` set), while the run is
    /// incomplete; empty once it is complete, when `cells` says all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repetitions: Vec<RunRecord>,
}

fn default_true() -> bool {
    true
}

impl ResultsFile {
    /// Parses a results file, refusing one written by a newer schema with a clear message.
    pub fn from_json(text: &str) -> Result<ResultsFile, String> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| format!("not valid JSON ({e})"))?;
        let schema = value
            .get("schema")
            .and_then(|s| s.as_u64())
            .ok_or("no \"schema\" field: not a contention-lab results file")?;
        if schema > u64::from(SCHEMA_VERSION) {
            return Err(format!(
                "schema {schema} is newer than this build reads (up to {SCHEMA_VERSION}); update contention-lab"
            ));
        }
        serde_json::from_value(value)
            .map_err(|e| format!("not a contention-lab results file ({e})"))
    }
}

#[cfg(test)]
mod tests;

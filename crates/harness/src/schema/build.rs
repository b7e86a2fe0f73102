//! A repetition made from the runner's [`Measurement`], and the record of a cell that
//! produced no figures.
//!
//! Not here: merging repetitions into a cell ([`super::merge`]).

use super::{CellKey, CellRecord, CellStatus, Repetition};
use crate::lock_table::{self, CellLoad};
use crate::runner::Measurement;
use crate::stats::{self, LatencySummary};

impl Repetition {
    /// The repetition the runner measured: its figures as a record of one window.
    pub fn from_measurement(key: &CellKey, affinity: &str, m: &Measurement) -> Repetition {
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
        let mut record = CellRecord {
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
        Repetition(record)
    }
}

impl CellRecord {
    /// A record for a cell that produced no figures (see [`Repetition::failed`] for a
    /// repetition).
    pub fn failed(key: &CellKey, affinity: &str, reason: impl Into<String>) -> CellRecord {
        CellRecord {
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
}

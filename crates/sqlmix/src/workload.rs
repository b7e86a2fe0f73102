//! The sqlmix workload: each worker runs read or write transactions against random units
//! of random models through the [`TxnRunner`], keeping what it needs to prove afterwards
//! that nothing was lost, nothing failed was applied, and no read saw half a write.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use harness::stats::rate;
use harness::{OpCtx, Outcome, Worker, Workload};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::db;
pub use crate::db::Stored;
use crate::runner::{Txn, TxnResult, TxnRunner};

const PLAN_LEN: usize = 1 << 12;
/// Failed writes remembered per worker for verification (more are counted, not kept).
const FAILED_KEPT: usize = 1000;

#[derive(Debug, Clone, Copy)]
struct PlannedTxn {
    model: u32,
    unit: u32,
    write: bool,
}

/// The workload over one runner.
pub struct SqlmixWorkload {
    runner: Arc<TxnRunner>,
    units: usize,
    unit_names: Arc<[String]>,
    read_pct: u32,
    models: usize,
}

impl SqlmixWorkload {
    /// Transactions over `models` x `units`, `read_pct` percent of them reads.
    pub fn new(runner: Arc<TxnRunner>, models: usize, units: usize, read_pct: u32) -> Self {
        SqlmixWorkload {
            runner,
            units,
            unit_names: (0..units).map(db::unit_name).collect(),
            read_pct,
            models,
        }
    }
}

/// What a client reported for one unit: writes committed, and the newest one's version
/// and status.
#[derive(Debug, Default, Clone)]
pub struct Committed {
    /// Writes reported committed.
    pub count: u64,
    /// The highest version a committed write returned.
    pub newest_version: i64,
    /// The status that write set.
    pub newest_status: String,
}

/// Checks what the databases hold (`stored`) against what a client reported: every unit
/// row there (`rows` of them), each at the version its committed writes add up to with
/// the newest committed status, and nothing of a write reported failed. Shared by the
/// lab's own workers and the Go client's report, so both are held to the same invariants.
pub fn check_stored(
    mut expected: HashMap<(String, String), Committed>,
    failed: &[&String],
    stored: Stored,
    rows: usize,
) -> Result<(), String> {
    let stored_rows = stored.units.len();
    for (model, unit, version, status) in stored.units {
        let e = expected
            .remove(&(model.clone(), unit.clone()))
            .unwrap_or_default();
        if version != e.count as i64 {
            return Err(format!(
                "{model} {unit}: {} writes reported committed but the stored version is {version}",
                e.count
            ));
        }
        if e.count > 0 && status != e.newest_status {
            return Err(format!(
                "{model} {unit}: newest committed status {:?} but {status:?} is stored",
                e.newest_status
            ));
        }
        if failed.iter().any(|f| **f == status) {
            return Err(format!(
                "{model} {unit}: holds {status:?}, from a write reported as failed"
            ));
        }
    }
    if let Some(f) = failed.iter().find(|f| stored.payloads.contains(**f)) {
        return Err(format!("an event of the failed write {f:?} is stored"));
    }
    if stored_rows != rows {
        return Err(format!("{stored_rows} unit rows stored, {rows} expected"));
    }
    if let Some(((model, unit), _)) = expected.into_iter().next() {
        return Err(format!("{model} {unit} was written but is not stored"));
    }
    Ok(())
}

/// Figures of the measured window.
#[derive(Debug, Default, Clone, Copy)]
struct WindowFigures {
    reads: u64,
    writes: u64,
    txns: u64,
    retries: u64,
    busy_errors: u64,
    backoff: Duration,
    rejected: u64,
    connects: u64,
    gate_wait: Duration,
    gate_held: Duration,
}

/// One thread's handle.
pub struct SqlmixWorker {
    runner: Arc<TxnRunner>,
    unit_names: Arc<[String]>,
    units: usize,
    plan: Vec<PlannedTxn>,
    next: usize,
    rng: SmallRng,
    thread: usize,
    serial: u64,
    committed: HashMap<(u32, u32), Committed>,
    failed_writes: Vec<String>,
    partial_reads: u64,
    window: WindowFigures,
}

impl Worker for SqlmixWorker {
    fn op(&mut self, ctx: &mut OpCtx) -> Outcome {
        let p = self.plan[self.next];
        self.next = (self.next + 1) % PLAN_LEN;
        let unit = &self.unit_names[p.unit as usize];
        let model = p.model as usize;
        let status;
        let txn = if p.write {
            self.serial += 1;
            status = format!("t{}-w{}", self.thread, self.serial);
            Txn::Write {
                model,
                unit,
                status: &status,
            }
        } else {
            status = String::new();
            Txn::Read { model, unit }
        };
        let (result, cost) = self.runner.run(txn, ctx, &mut self.rng);
        self.window.txns += 1;
        self.window.retries += u64::from(cost.retries);
        self.window.busy_errors += u64::from(cost.busy_errors);
        self.window.backoff += cost.backoff;
        self.window.connects += u64::from(cost.connects);
        self.window.gate_wait += cost.gate_wait;
        self.window.gate_held += cost.gate_held;
        if cost.rejected {
            // Turned away by the breaker: neither served nor a database failure. The
            // caller that got the error waits one first backoff step before its next
            // transaction, as a worker handed an error would; without it a closed loop
            // would spin on rejections and take the CPU the database needs.
            self.window.rejected += 1;
            let start = std::time::Instant::now();
            std::thread::sleep(crate::gate::BACKOFF_FIRST);
            ctx.record_wait(start.elapsed());
        }
        match result {
            Ok(TxnResult::Read(seen)) => {
                if !seen.consistent() || seen.units_in_model != self.units as i64 {
                    self.partial_reads += 1;
                }
                self.window.reads += 1;
                Outcome::retried(cost.retries)
            }
            Ok(TxnResult::Written(version)) => {
                let c = self.committed.entry((p.model, p.unit)).or_default();
                c.count += 1;
                if version > c.newest_version {
                    c.newest_version = version;
                    c.newest_status = status;
                }
                self.window.writes += 1;
                Outcome::retried(cost.retries)
            }
            Err(_) => {
                if p.write && self.failed_writes.len() < FAILED_KEPT {
                    self.failed_writes.push(status);
                }
                Outcome::failed(cost.retries)
            }
        }
    }

    fn window_opened(&mut self) {
        self.window = WindowFigures::default();
    }
}

impl Workload for SqlmixWorkload {
    type Worker = SqlmixWorker;

    // Measured: connections, permits, the breaker and busy/backoff sleeps are all timed where they block.
    fn waits_measured(&self) -> bool {
        true
    }

    fn locks(&self) -> Option<harness::locks::LockSet> {
        Some(self.runner.locks())
    }

    fn worker(&self, index: usize, _threads: usize) -> SqlmixWorker {
        let mut rng = SmallRng::seed_from_u64(0x5a1 + index as u64);
        let plan = (0..PLAN_LEN)
            .map(|_| PlannedTxn {
                model: rng.random_range(0..self.models) as u32,
                unit: rng.random_range(0..self.units) as u32,
                write: rng.random_range(0..100) >= self.read_pct,
            })
            .collect();
        SqlmixWorker {
            runner: Arc::clone(&self.runner),
            unit_names: Arc::clone(&self.unit_names),
            units: self.units,
            plan,
            next: 0,
            rng,
            thread: index,
            serial: 0,
            committed: HashMap::new(),
            failed_writes: Vec::new(),
            partial_reads: 0,
            window: WindowFigures::default(),
        }
    }

    fn verify(&self, workers: &[SqlmixWorker]) -> Result<(), String> {
        let partial: u64 = workers.iter().map(|w| w.partial_reads).sum();
        if partial > 0 {
            return Err(format!("{partial} reads saw part of a write"));
        }
        let mut expected: HashMap<(String, String), Committed> = HashMap::new();
        for w in workers {
            for (&(m, u), c) in &w.committed {
                let key = (
                    self.runner.model_name(m as usize).to_owned(),
                    self.unit_names[u as usize].clone(),
                );
                let e = expected.entry(key).or_default();
                e.count += c.count;
                if c.newest_version > e.newest_version {
                    e.newest_version = c.newest_version;
                    e.newest_status = c.newest_status.clone();
                }
            }
        }
        let failed: Vec<&String> = workers.iter().flat_map(|w| &w.failed_writes).collect();
        check_stored(
            expected,
            &failed,
            self.runner.stored()?,
            self.models * self.units,
        )
    }

    fn extra(
        &self,
        workers: &[SqlmixWorker],
        window: Duration,
    ) -> serde_json::Map<String, serde_json::Value> {
        let sum = |f: fn(&WindowFigures) -> u64| workers.iter().map(|w| f(&w.window)).sum::<u64>();
        let txns = sum(|w| w.txns).max(1);
        let backoff: Duration = workers.iter().map(|w| w.window.backoff).sum();
        let mut extra = serde_json::Map::new();
        extra.insert(
            "reads_per_sec".into(),
            serde_json::json!(rate(sum(|w| w.reads), window)),
        );
        extra.insert(
            "writes_per_sec".into(),
            serde_json::json!(rate(sum(|w| w.writes), window)),
        );
        extra.insert(
            "retries_per_txn".into(),
            serde_json::json!(sum(|w| w.retries) as f64 / txns as f64),
        );
        extra.insert(
            "busy_errors".into(),
            serde_json::json!(sum(|w| w.busy_errors)),
        );
        extra.insert(
            "backoff_share".into(),
            serde_json::json!(harness::stats::share(
                backoff,
                window * workers.len().max(1) as u32
            )),
        );
        if let Some(trips) = self.runner.breaker_trips() {
            extra.insert("breaker_trips".into(), serde_json::json!(trips));
            extra.insert("rejected".into(), serde_json::json!(sum(|w| w.rejected)));
            extra.insert(
                "rejected_per_sec".into(),
                serde_json::json!(rate(sum(|w| w.rejected), window)),
            );
        }
        let gate = |f: fn(&WindowFigures) -> Duration| {
            let total: Duration = workers.iter().map(|w| f(&w.window)).sum();
            total.as_secs_f64() * 1e3 / txns as f64
        };
        extra.insert(
            "gate_ms_per_txn".into(),
            serde_json::json!(gate(|w| w.gate_held)),
        );
        extra.insert(
            "gate_wait_ms_per_txn".into(),
            serde_json::json!(gate(|w| w.gate_wait)),
        );
        let backend = self.runner.backend().word();
        extra.insert("backend".into(), serde_json::json!(backend));
        if backend == "libdqlite" {
            extra.insert(
                "client".into(),
                serde_json::json!(crate::libdqlite::go::LAB),
            );
        }
        if backend != "local" {
            extra.insert(
                "connects_per_sec".into(),
                serde_json::json!(rate(sum(|w| w.connects), window)),
            );
        }
        let resources = self.runner.shard_resources();
        extra.insert(
            "connections_total".into(),
            serde_json::json!(resources.iter().map(|r| r.0).sum::<usize>()),
        );
        let permits: Option<usize> = resources.iter().map(|r| r.1).sum();
        extra.insert("permits_total".into(), serde_json::json!(permits));
        if let Some(split) = self.runner.shard_split() {
            extra.insert("shard_resources".into(), serde_json::json!(split.word()));
        }
        extra
    }
}

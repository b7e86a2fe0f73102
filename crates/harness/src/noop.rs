//! The calibration hot path: an operation that does nothing, so that its throughput is
//! the runner's own ceiling (phase check, sampled clock reads, tally updates). Subtract
//! its cost per operation mentally from any hot path's figures.
//!
//! Its `lock` parameter measures the lock table's own cost: `plain` takes a mutex of the
//! worker's own (never contended) through [`OpCtx::acquire`], as an unnamed lock; `named`
//! takes the same mutex through [`OpCtx::lock`], counted and sampled for the table. The
//! difference of their costs per operation is the instrument's.

use std::hint::black_box;
use std::sync::Mutex;

use crate::hotpath::{Description, HotPath, Variant};
use crate::locks::{LockId, LockSet};
use crate::params::{ParamKind, ParamSpec, Params};
use crate::runner::{self, CellFailure, Measurement, RunSettings};
use crate::workload::{OpCtx, Outcome, Worker, Workload};

/// The `noop` hot path.
pub struct NoopHotPath;

/// How each operation takes its worker's own mutex.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoopLock {
    /// No lock at all.
    None,
    /// Through [`OpCtx::acquire`]: not in the lock table.
    Plain,
    /// Through [`OpCtx::lock`]: in the lock table.
    Named,
}

const LOCK_CHOICES: &[&str] = &["none", "plain", "named"];

/// The per-thread mutex's id in the lock table.
const OWN_MUTEX: LockId = LockId(0);

/// The workload: every worker counts its own operations, nothing is shared.
pub struct Noop {
    /// How operations take the worker's mutex.
    pub lock: NoopLock,
    /// Threads (the per-thread mutexes are that many slots).
    pub threads: usize,
}

/// A worker that only counts (under its own mutex, with `lock`).
pub struct NoopWorker {
    done: u64,
    lock: NoopLock,
    own: Mutex<u64>,
}

impl Worker for NoopWorker {
    #[inline]
    fn op(&mut self, ctx: &mut OpCtx) -> Outcome {
        self.done = black_box(self.done + 1);
        let own = &self.own;
        let take = || own.try_lock().ok();
        let wait = || own.lock().expect("own mutex");
        match self.lock {
            NoopLock::None => {}
            NoopLock::Plain => *ctx.acquire(take, wait) += 1,
            NoopLock::Named => **ctx.lock(OWN_MUTEX, take, wait) += 1,
        }
        Outcome::OK
    }
}

impl Workload for Noop {
    type Worker = NoopWorker;
    // Measured: an empty operation has nothing to block on: zero is the measurement.
    fn waits_measured(&self) -> bool {
        true
    }

    fn worker(&self, _index: usize, _threads: usize) -> NoopWorker {
        NoopWorker {
            done: 0,
            lock: self.lock,
            own: Mutex::new(0),
        }
    }
    fn verify(&self, workers: &[NoopWorker]) -> Result<(), String> {
        if workers.iter().all(|w| w.done > 0) {
            Ok(())
        } else {
            Err("a worker never ran".into())
        }
    }
    fn latency_sample_every(&self) -> u32 {
        // The same sampling as the fastest hot path, so the ceiling is comparable.
        16
    }
    fn locks(&self) -> Option<LockSet> {
        let set = LockSet::new();
        Some(match self.lock {
            NoopLock::None => set,
            NoopLock::Plain => set.unnamed("each worker's own mutex (lock=plain)"),
            NoopLock::Named => set.with(OWN_MUTEX, "own mutex", self.threads as u32),
        })
    }
}

const VARIANTS: &[Variant] = &[Variant {
    name: "noop",
    summary: "does nothing: the runner's own cost per operation",
    measure,
}];

/// One repetition of the empty operation, taking the worker's mutex as `lock` says.
fn measure(params: &Params, settings: RunSettings) -> Result<Measurement, CellFailure> {
    // Read without insisting: a test hot path that borrows noop's measure may not
    // declare the parameter.
    let lock = match params.to_map().get("lock").and_then(|v| v.as_str()) {
        Some("plain") => NoopLock::Plain,
        Some("named") => NoopLock::Named,
        _ => NoopLock::None,
    };
    let noop = Noop {
        lock,
        threads: settings.threads,
    };
    runner::run(&noop, settings)
}

const PARAMS: &[ParamSpec] = &[ParamSpec {
    name: "lock",
    kind: ParamKind::Choice(LOCK_CHOICES),
    default: "none",
    help: "take the worker's own mutex: none, plain (unnamed) or named (in the lock table)",
}];

/// What `lab` lists about the noop hot path.
const DESCRIPTION: Description = Description {
    name: "noop",
    summary: "calibration: an empty operation, to show the runner's own cost",
    variants: VARIANTS,
    params: PARAMS,
    charted_extras: &[],
};

impl HotPath for NoopHotPath {
    fn description(&self) -> &'static Description {
        &DESCRIPTION
    }
}

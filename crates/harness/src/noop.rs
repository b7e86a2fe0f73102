//! The calibration hot path: an operation that does nothing, so that its throughput is
//! the runner's own ceiling (phase check, sampled clock reads, tally updates). Subtract
//! its cost per operation mentally from any hot path's figures.

use std::hint::black_box;

use crate::hotpath::{Description, HotPath, Variant};
use crate::params::Params;
use crate::runner::{self, CellFailure, Measurement, RunSettings};
use crate::workload::{OpCtx, Outcome, Worker, Workload};

/// The `noop` hot path.
pub struct NoopHotPath;

/// The workload: every worker counts its own operations, nothing is shared.
pub struct Noop;

/// A worker that only counts.
pub struct NoopWorker {
    done: u64,
}

impl Worker for NoopWorker {
    #[inline]
    fn op(&mut self, _ctx: &mut OpCtx) -> Outcome {
        self.done = black_box(self.done + 1);
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
        NoopWorker { done: 0 }
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
}

const VARIANTS: &[Variant] = &[Variant {
    name: "noop",
    summary: "does nothing: the runner's own cost per operation",
}];

/// What `lab` lists about the noop hot path.
const DESCRIPTION: Description = Description {
    name: "noop",
    summary: "calibration: an empty operation, to show the runner's own cost",
    variants: VARIANTS,
    params: &[],
    charted_extras: &[],
};

impl HotPath for NoopHotPath {
    fn description(&self) -> &'static Description {
        &DESCRIPTION
    }
    fn measure(
        &self,
        variant: &str,
        _params: &Params,
        settings: RunSettings,
    ) -> Result<Measurement, CellFailure> {
        self.variant(variant).map_err(CellFailure::new)?;
        runner::run(&Noop, settings)
    }
}

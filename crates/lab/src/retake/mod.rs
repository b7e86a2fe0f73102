//! Retakes: a repetition measured while other processes (or a hypervisor) took more than a
//! threshold of CPU from the machine, or while the machine ran outside its usual speed by
//! the canary (`speed`), is run again, a bounded number of times, so that a cell's figures
//! come from the machine at its own speed rather than from whatever else ran beside it.
//! The interference and the canary are measured in the child (`harness::interference`,
//! `harness::canary`); this module decides, and words what it did.
//!
//! What a retake keeps of the failure policy: an attempt that failed (crashed, timed out,
//! unverified) is kept as it is, never retaken, since a failure is a finding; an attempt
//! interrupted by lab's own stop discards the whole repetition, retakes and all; the
//! results file is still written once per round, so a `kill -9` loses at most the round in
//! flight, retakes included.
//!
//! Not here: the threshold's setting (`settings`, `interference=`) and the loop over
//! rounds (`matrix`).

use harness::schema::CellStatus;
use harness::Repetition;

use crate::speed::Speedometer;

/// Load (other processes' CPU plus steal, in CPUs) above which a repetition is retaken,
/// beyond what the tick counting can resolve. A quarter of a CPU: on the 2-core machine
/// this was written on, the quiet runs' repetitions see a median 0.02-0.05 CPU of
/// others, while a repetition beside a build or a busy loop sees 0.5-1.5; a quarter of a
/// core lost to others costs a single-thread cell up to a quarter of its speed, more than
/// the ±5% the intervals aim for, and a lower bound would retake for the tick noise of
/// short windows. `interference=0.1` or `interference=off` change it.
pub const DEFAULT_THRESHOLD: f64 = 0.25;

/// Retakes per repetition at most: a machine that stays busy must not stall the matrix.
/// After them the least loaded attempt is kept and counted as kept over the threshold.
pub const MAX_RETAKES: usize = 2;

/// Repetitions in a row whose retakes were all in vain, after which retakes stop until a
/// repetition comes in under the threshold by itself: on a machine that stays busy for
/// minutes, retaking would triple the run's time and keep the same load.
pub const IN_VAIN_LIMIT: usize = 3;

/// Retakes repetitions over a run, remembering whether the machine stays busy.
#[derive(Debug)]
pub struct Retaker {
    threshold: Option<f64>,
    in_vain: usize,
    speed: Speedometer,
}

impl Retaker {
    /// Retakes above `threshold` (CPUs; none when `None`) or outside the speedometer's
    /// tolerance.
    pub fn new(threshold: Option<f64>, speed: Speedometer) -> Retaker {
        Retaker {
            threshold,
            in_vain: 0,
            speed,
        }
    }

    /// The run's machine speed so far, for `env.machine_speed`.
    pub fn machine_speed(&self) -> Option<harness::env::MachineSpeed> {
        self.speed.summary()
    }

    /// Runs one repetition through `attempt` and retakes it while its load is above the
    /// threshold, at most [`MAX_RETAKES`] times (none while the machine has stayed busy,
    /// see [`IN_VAIN_LIMIT`]). `attempt` returns `None` when lab is stopping: then the
    /// repetition is discarded, whatever was tried before.
    pub fn repetition(
        &mut self,
        mut attempt: impl FnMut() -> Option<Repetition>,
    ) -> Option<Repetition> {
        let retakes = if self.in_vain >= IN_VAIN_LIMIT {
            0
        } else {
            MAX_RETAKES
        };
        let mut tried: Vec<Repetition> = Vec::new();
        let (kept, over) = loop {
            let mut record = attempt()?;
            self.speed.mark(&mut record);
            if self.badness(&record) == 0.0 {
                break (self.keep(record, tried, false), false);
            }
            tried.push(record);
            if tried.len() > retakes {
                let best = (0..tried.len())
                    .min_by(|&a, &b| self.badness(&tried[a]).total_cmp(&self.badness(&tried[b])))
                    .expect("attempts were made");
                let kept = tried.remove(best);
                break (self.keep(kept, tried, true), true);
            }
        };
        if over {
            self.in_vain += 1;
        } else {
            self.in_vain = 0;
        }
        self.speed.kept(&kept);
        Some(kept)
    }

    /// How far over its bounds an attempt is: 0.0 within both (or a failure, which is a
    /// finding and never retaken), else the larger of its load over the threshold and its
    /// machine speed outside the tolerance, each in units of its bound.
    fn badness(&self, record: &Repetition) -> f64 {
        if record.status != CellStatus::Ok || !record.verified {
            return 0.0;
        }
        let loaded = match (self.threshold, &record.interference) {
            (Some(t), Some(i)) if i.above(t) => i.load() / t,
            _ => 0.0,
        };
        loaded.max(self.speed.excess(record))
    }

    /// `kept` with the discarded attempts counted in its interference, each under the
    /// reason it was retaken for.
    fn keep(&self, mut kept: Repetition, discarded: Vec<Repetition>, over: bool) -> Repetition {
        let slow: Vec<f64> = discarded
            .iter()
            .filter(|r| self.speed.excess(r) > 0.0)
            .filter_map(|r| r.interference.as_ref()?.machine_speed)
            .collect();
        let loaded = discarded.iter().filter(|r| self.speed.excess(r) == 0.0);
        if let Some(i) = kept.interference.as_mut() {
            i.retaken += discarded.len();
            i.retaken_loads.extend(loaded.map(load));
            i.retaken_speeds.extend(slow);
            i.kept_over_threshold += usize::from(over);
        }
        kept
    }
}

fn load(r: &Repetition) -> f64 {
    r.interference.as_ref().map_or(0.0, |i| i.load())
}

#[cfg(test)]
pub(crate) mod tests;

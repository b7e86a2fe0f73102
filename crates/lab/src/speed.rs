//! The machine's speed during a run: each repetition's canary (`harness::canary`, timed in
//! the child with the cell idle) against the run's usual canary, so that the report can
//! say how steady the machine was (how narrow an interval could have been), and, with
//! `machine_speed=`, a repetition measured while a host neighbour slowed the machine is
//! retaken (`retake`).
//!
//! The usual canary is the median of every canary the run has seen so far, seeded by a
//! few taken by `lab` itself before the first cell: a median, so that the slow phases the
//! canary is there to catch do not move it much.
//!
//! Not here: the canary's measurement (`harness::canary`), the retake loop (`retake`).

use harness::env::MachineSpeed;
use harness::Repetition;

/// A tolerance to try with `machine_speed=` (0.15: a repetition whose canary ran below
/// 0.85x or above 1.15x the usual is retaken). The default is off (speeds recorded, never
/// judged), because retakes by the canary did not narrow the intervals where they were
/// tried: on the 2-core machine this was written on, in minutes when the canary's speed
/// moved 0.55-1.6x (p10-p90), lookup's 12 cells (global-mutex and entry-cache, threads 1,
/// 2, 4, cores 1, 2, 10 repetitions) run twice each way, interleaved, gave median
/// half-widths of 20.3% and 24.0% without retakes and 22.6% and 27.4% with them, for about
/// one retake per kept repetition. The machine's phases are shorter than a repetition:
/// a canary before and after it does not see what happened during its window.
pub const SUGGESTED_TOLERANCE: f64 = 0.15;

/// Canaries `lab` takes before the first cell to seed the usual speed.
const SEED_READINGS: usize = 5;

/// The run's usual canary, and the judgement of one repetition's speed against it.
#[derive(Debug, Clone)]
pub struct Speedometer {
    tolerance: Option<f64>,
    /// Every canary seen so far (ms), seeds and attempts alike.
    readings: Vec<f64>,
    /// The machine speed of every repetition kept.
    kept: Vec<f64>,
}

impl Speedometer {
    /// A speedometer seeded by canaries taken now in this process, judging with
    /// `tolerance` (`None`: speeds are recorded, never judged).
    pub fn seeded(tolerance: Option<f64>) -> Speedometer {
        let readings = (0..SEED_READINGS)
            .filter_map(|_| {
                let ms = harness::canary::measure();
                (!ms.is_empty()).then(|| ms.iter().sum::<f64>() / ms.len() as f64)
            })
            .collect();
        Speedometer::new(tolerance, readings)
    }

    /// A speedometer whose usual canary starts from `readings` (ms).
    pub fn new(tolerance: Option<f64>, readings: Vec<f64>) -> Speedometer {
        Speedometer {
            tolerance,
            readings,
            kept: Vec::new(),
        }
    }

    /// The run's usual canary so far (ms); `None` before any.
    pub fn usual_ms(&self) -> Option<f64> {
        (!self.readings.is_empty()).then(|| harness::stats::median(&self.readings))
    }

    /// Sets `record`'s machine speed from its canary against the usual one, then counts
    /// its canary into the usual. A record without a canary is left as it is.
    pub fn mark(&mut self, record: &mut Repetition) {
        let Some(i) = record.interference.as_mut() else {
            return;
        };
        let Some(ms) = i.canary_ms.filter(|ms| *ms > 0.0) else {
            return;
        };
        i.machine_speed = self.usual_ms().map(|usual| usual / ms);
        self.readings.push(ms);
    }

    /// How far outside the tolerance `record`'s machine speed is, in tolerances (0.0
    /// within it, or when unknown or not judged); above 0.0 the repetition is retaken.
    pub fn excess(&self, record: &Repetition) -> f64 {
        let (Some(tolerance), Some(speed)) = (
            self.tolerance,
            record.interference.as_ref().and_then(|i| i.machine_speed),
        ) else {
            return 0.0;
        };
        ((speed - 1.0).abs() / tolerance - 1.0).max(0.0)
    }

    /// Notes the speed of a repetition that was kept.
    pub fn kept(&mut self, record: &Repetition) {
        if let Some(speed) = record.interference.as_ref().and_then(|i| i.machine_speed) {
            self.kept.push(speed);
        }
    }

    /// The run's machine speed for `env.machine_speed`.
    pub fn summary(&self) -> Option<MachineSpeed> {
        summary(self.tolerance, self.usual_ms()?, &self.kept)
    }
}

/// The summary of kept repetitions' `speeds` around a usual canary of `usual_ms`.
pub fn summary(tolerance: Option<f64>, usual_ms: f64, speeds: &[f64]) -> Option<MachineSpeed> {
    if speeds.is_empty() {
        return None;
    }
    let mut sorted = speeds.to_vec();
    sorted.sort_by(f64::total_cmp);
    let at = |q: f64| sorted[((sorted.len() - 1) as f64 * q).round() as usize];
    Some(MachineSpeed {
        work: harness::canary::WORK.to_owned(),
        usual_canary_ms: usual_ms,
        tolerance,
        p10: at(0.1),
        p50: at(0.5),
        p90: at(0.9),
        repetitions: sorted.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::words::{speed_row as env_row, unsteady_note};
    use harness::interference::Interference;

    fn with_canary(ms: f64) -> Repetition {
        let mut r = crate::retake::tests::attempt(0.0);
        r.interference = Some(Interference {
            canary_ms: Some(ms),
            ..Interference::default()
        });
        r
    }

    #[test]
    fn a_slow_canary_is_a_slow_machine_and_outside_the_tolerance() {
        let mut s = Speedometer::new(Some(0.15), vec![10.0, 10.0, 11.0]);
        let mut slow = with_canary(20.0);
        s.mark(&mut slow);
        assert_eq!(slow.interference.as_ref().unwrap().machine_speed, Some(0.5));
        assert!(s.excess(&slow) > 0.0);
        let mut usual = with_canary(10.5);
        s.mark(&mut usual);
        // The slow canary counts into the usual one too: the median of 10, 10, 11, 20.
        let speed = usual.interference.as_ref().unwrap().machine_speed.unwrap();
        assert!((speed - 1.0).abs() < 1e-9, "{speed}");
        assert_eq!(s.excess(&usual), 0.0);
        // Off: recorded, never judged.
        let off = Speedometer::new(None, vec![10.0]);
        assert_eq!(off.excess(&slow), 0.0);
    }

    #[test]
    fn the_usual_canary_is_a_median_that_slow_phases_barely_move() {
        let mut s = Speedometer::new(Some(0.15), vec![10.0; 5]);
        for _ in 0..4 {
            s.mark(&mut with_canary(30.0));
        }
        assert_eq!(s.usual_ms(), Some(10.0));
        // A record without a canary is left alone.
        let mut none = crate::retake::tests::attempt(0.0);
        s.mark(&mut none);
        assert_eq!(none.0.interference.unwrap().machine_speed, None);
    }

    #[test]
    fn the_summary_gives_quantiles_of_the_kept_speeds() {
        let speeds: Vec<f64> = (0..11).map(|i| 0.8 + 0.04 * i as f64).collect();
        let m = summary(Some(0.15), 2.5, &speeds).unwrap();
        assert!(
            (m.p10 - 0.84).abs() < 1e-9 && (m.p90 - 1.16).abs() < 1e-9,
            "{m:?}"
        );
        assert!((m.p50 - 1.0).abs() < 1e-9);
        assert_eq!(m.repetitions, 11);
        assert!(env_row(&m).1.contains("0.85x-1.15x is retaken"));
        let mut env = harness::env::EnvInfo {
            machine_speed: Some(m),
            ..Default::default()
        };
        assert_eq!(unsteady_note(&env), None, "0.84x-1.16x is steady");
        env.machine_speed.as_mut().unwrap().p10 = 0.55;
        assert!(unsteady_note(&env)
            .unwrap()
            .contains("moved 0.55x-1.16x (p10-p90 of 11"));
        assert_eq!(summary(None, 2.5, &[]), None);
    }
}

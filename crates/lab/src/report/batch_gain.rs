//! The pool fix's gain per datapoints per request (`pool-seed-batch`), beside the row of
//! seed 004's message-size table, and whether the run has the seed's shape: no change at
//! one datapoint, the largest gain at a middle size, less at the largest.
//!
//! This module compares figures and returns data; `findings` words the verdict, and
//! `html` and `summary` lay the table out.

use harness::RunRecord;

use super::cells::{apart, extra, has_interval, interval, noise, of_file, param_text, ratio};
use crate::table::si;

/// The seed's message-size table: the fix's throughput gain per datapoints per request.
pub const SEED_GAINS: &[(u64, f64)] = &[(1, 0.0), (10, 1.0), (100, 2.0), (500, 1.8), (5000, 1.3)];

/// The seed's "no change" at one datapoint per request: a measured gain this close to none
/// agrees.
pub const NO_CHANGE: f64 = 0.15;

/// The fix's gain at one batch size of `pool-seed-batch`, next to the seed's.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchGain {
    /// Datapoints per request.
    pub batch: u64,
    /// Clients of the two cells compared.
    pub clients: usize,
    /// Datapoints/s of the default pool (1 x 1024), with its interval.
    pub default: (f64, f64, f64),
    /// Datapoints/s of the fix (10 x 5000), with its interval.
    pub fix: (f64, f64, f64),
    /// Whether the two intervals are apart.
    pub apart: bool,
    /// Why the gain may not be real ("" when the intervals are apart or missing).
    pub noise: &'static str,
    /// Whether both cells have an interval, so the gain can be judged.
    pub judged: bool,
    /// The seed's gain, as it wrote it.
    pub seed: String,
    /// The seed's gain as a fraction.
    pub seed_gain: f64,
    /// Share of the server's CPU busy in the default's cell (`server_util`), if recorded.
    pub default_server_use: Option<f64>,
    /// The same in the fix's cell.
    pub fix_server_use: Option<f64>,
    /// What limited the fix's cell (`bound_by`), `?` when not recorded.
    pub bound_by: String,
    /// What limited the default's cell.
    pub default_bound_by: String,
}

impl BatchGain {
    /// fix / default - 1.
    pub fn gain(&self) -> f64 {
        ratio(self.fix.0, self.default.0) - 1.0
    }

    /// The lowest and highest gain the two intervals allow.
    pub fn gain_range(&self) -> (f64, f64) {
        (
            ratio(self.fix.1, self.default.2) - 1.0,
            ratio(self.fix.2, self.default.1) - 1.0,
        )
    }

    /// The gain table's column headings.
    pub const COLUMNS: [&'static str; 8] = [
        "batch",
        "default 1 x 1024",
        "fix 10 x 5000",
        "gain",
        "seed's gain",
        "server CPU busy, default → fix",
        "default bound by",
        "fix bound by",
    ];

    /// The row of the gain table as text, in the columns of [`BatchGain::COLUMNS`]; the
    /// HTML and Markdown reports lay out the same row.
    pub fn row(&self) -> [String; 8] {
        let with = |(median, low, high): (f64, f64, f64)| {
            format!("{} [{}–{}]", si(median), si(low), si(high))
        };
        let share = |u: Option<f64>| u.map_or("?".to_owned(), |u| format!("{:.0}%", u * 100.0));
        [
            self.batch.to_string(),
            with(self.default),
            with(self.fix),
            self.gain_text(),
            self.seed.to_string(),
            format!(
                "{} → {}",
                share(self.default_server_use),
                share(self.fix_server_use)
            ),
            self.default_bound_by.to_string(),
            self.bound_by.to_string(),
        ]
    }

    /// "+120%", or "+3% (within the noise)".
    pub fn gain_text(&self) -> String {
        format!(
            "{}{}",
            percent(self.gain()),
            if self.noise.is_empty() {
                String::new()
            } else {
                format!(" ({})", self.noise)
            }
        )
    }
}

/// A gain as a signed whole percentage, "+0%" rather than "-0%" for a loss that rounds
/// to nothing.
pub fn percent(gain: f64) -> String {
    let whole = (gain * 100.0).round();
    format!("{:+.0}%", if whole == 0.0 { 0.0 } else { whole })
}

/// The fix's gain per batch size of `pool-seed-batch`, at its most clients, in datapoints
/// per second (an operation of the pool hot path is a statement answered, which carries
/// `batch / statements_per_request` datapoints, or a whole request).
pub fn batch_gains(cells: &[RunRecord]) -> Vec<BatchGain> {
    let rows = of_file(cells, "pool-seed-batch");
    let max_clients = rows.iter().map(|c| c.threads).max().unwrap_or(0);
    let bound = |c: &RunRecord| {
        c.extra
            .get("bound_by")
            .and_then(|v| v.as_str())
            .unwrap_or("?")
            .to_owned()
    };
    let datapoints = |c: &RunRecord, batch: u64| {
        let per_op = batch as f64 / extra(c, "statements_per_request").unwrap_or(1.0);
        let (lo, hi) = interval(c);
        (c.ops_per_sec * per_op, lo * per_op, hi * per_op)
    };
    SEED_GAINS
        .iter()
        .filter_map(|&(batch, seed_gain)| {
            let at = |connections: &str| {
                rows.iter().copied().find(|c| {
                    c.threads == max_clients
                        && param_text(c, "batch") == batch.to_string()
                        && param_text(c, "connections") == connections
                })
            };
            let (default, fix) = (at("1")?, at("10")?);
            Some(BatchGain {
                batch,
                clients: max_clients,
                default: datapoints(default, batch),
                fix: datapoints(fix, batch),
                apart: apart(default, fix),
                noise: noise(default, fix),
                judged: has_interval(default) && has_interval(fix),
                seed: if seed_gain == 0.0 {
                    "no change".to_owned()
                } else {
                    format!("+{:.0}%", seed_gain * 100.0)
                },
                seed_gain,
                default_server_use: extra(default, "server_util"),
                fix_server_use: extra(fix, "server_util"),
                bound_by: bound(fix),
                default_bound_by: bound(default),
            })
        })
        .collect()
}

/// How a run's gains compare with the shape of the seed's row.
#[derive(Debug, Clone, PartialEq)]
pub struct SeedShape {
    /// The gain at one datapoint per request is within [`NO_CHANGE`] of none.
    pub flat_at_one: bool,
    /// The batch size with the largest gain.
    pub peak: u64,
    /// That batch size is neither the smallest nor the largest.
    pub peak_in_middle: bool,
    /// The gain at the largest batch is below the peak's, by more than their intervals
    /// allow.
    pub falls_at_largest: bool,
    /// The server's CPU is busier with the fix than with the default at the peak, as the
    /// seed saw its idle CPU fall.
    pub busier_with_fix: Option<bool>,
}

impl SeedShape {
    /// Every part of the seed's shape is there.
    pub fn reproduced(&self) -> bool {
        self.flat_at_one
            && self.peak_in_middle
            && self.falls_at_largest
            && self.busier_with_fix != Some(false)
    }
}

/// The shape of `gains` against the seed's row; `None` unless every batch size of the
/// seed's row is there with an interval.
pub fn seed_shape(gains: &[BatchGain]) -> Option<SeedShape> {
    if gains.len() != SEED_GAINS.len() || !gains.iter().all(|g| g.judged) {
        return None;
    }
    let (first, last) = (gains.first()?, gains.last()?);
    let peak = gains.iter().max_by(|a, b| a.gain().total_cmp(&b.gain()))?;
    let busier_with_fix = peak
        .default_server_use
        .zip(peak.fix_server_use)
        .map(|(d, f)| f > d);
    Some(SeedShape {
        flat_at_one: first.gain().abs() <= NO_CHANGE,
        peak: peak.batch,
        peak_in_middle: peak.batch != first.batch && peak.batch != last.batch,
        falls_at_largest: last.gain_range().1 < peak.gain_range().0,
        busier_with_fix,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A gain row at `batch` from default and fix datapoints/s, each ± 2%.
    fn row(batch: u64, default: f64, fix: f64) -> BatchGain {
        let spread = |v: f64| (v, v * 0.98, v * 1.02);
        BatchGain {
            batch,
            clients: 1000,
            default: spread(default),
            fix: spread(fix),
            apart: true,
            noise: "",
            judged: true,
            seed: String::new(),
            seed_gain: 0.0,
            default_server_use: Some(0.3),
            fix_server_use: Some(1.0),
            bound_by: "server".into(),
            default_bound_by: "pool".into(),
        }
    }

    fn shape(fix: [f64; 5]) -> SeedShape {
        let gains: Vec<BatchGain> = SEED_GAINS
            .iter()
            .zip(fix)
            .map(|(&(batch, _), fix)| row(batch, 100.0, fix))
            .collect();
        seed_shape(&gains).unwrap()
    }

    #[test]
    fn the_seeds_own_row_has_the_seeds_shape() {
        let s = shape([100.0, 200.0, 300.0, 280.0, 230.0]);
        assert!(s.reproduced(), "{s:?}");
        assert_eq!(s.peak, 100);
    }

    #[test]
    fn each_part_of_the_shape_can_fail() {
        // A gain at one datapoint already.
        assert!(!shape([130.0, 200.0, 300.0, 280.0, 230.0]).flat_at_one);
        // Rising all the way: the peak is the largest batch.
        let rising = shape([100.0, 200.0, 300.0, 320.0, 400.0]);
        assert!(!rising.peak_in_middle && !rising.reproduced());
        // A fall at the largest batch within the intervals is no fall.
        let level = shape([100.0, 200.0, 300.0, 280.0, 298.0]);
        assert!(!level.falls_at_largest && !level.reproduced());
    }

    #[test]
    fn a_missing_batch_or_interval_cannot_tell() {
        let mut gains: Vec<BatchGain> = SEED_GAINS
            .iter()
            .map(|&(batch, _)| row(batch, 100.0, 150.0))
            .collect();
        gains[2].judged = false;
        assert_eq!(seed_shape(&gains), None);
        gains.pop();
        assert_eq!(seed_shape(&gains), None);
    }

    #[test]
    fn the_row_shows_datapoints_gain_and_server_use() {
        let r = row(100, 10_000.0, 31_000.0).row();
        assert_eq!(r[0], "100");
        assert_eq!(r[3], "+210%");
        assert_eq!(percent(-0.004), "+0%");
        assert_eq!(percent(-0.3), "-30%");
        assert_eq!(r[5], "30% → 100%");
        assert_eq!(r[6], "pool");
    }
}

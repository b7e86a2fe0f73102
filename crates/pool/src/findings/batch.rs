//! The fix's gain per datapoints per request (`pool-seed-batch.toml`) from the cells'
//! medians, beside the row of seed 004's message-size table: the table of the answer,
//! context only. The model's CPU and heap costs were fitted to some of the seed's gains
//! (the file's `[seed]` table names which), so only the others can judge it, and that
//! judgement is a paired part (`claims`), not these cell figures.
//!
//! Returns data; `findings` words it.

use harness::CellRecord;
use verdict::findings::{Run, Seeds, Table};
use verdict::judge::{extra, extra_str, param_text, percent, ratio, Est};

/// How far a measured gain may sit from the seed's and still agree, as a ratio of
/// throughput gains (1 + gain): the seed's figures are one run each, read off a mailing
/// list, and the model's rates are stretched.
pub const AGREES_WITHIN: f64 = 1.25;

/// The seed's row when the results carry no `[seed]` table.
const SEED_GAINS: &[(u64, f64)] = &[(1, 0.0), (10, 1.0), (100, 2.0), (500, 1.8), (5000, 1.3)];
/// The batch sizes the server model's costs were fitted to, for results without one.
const FITTED: &[u64] = &[10, 100, 5000];

/// The fix's gain at one batch size, next to the seed's.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchGain {
    /// Datapoints per request.
    pub batch: u64,
    /// Clients of the two cells compared.
    pub clients: usize,
    /// Datapoints/s of the default pool (1 x 1024).
    pub default: Est,
    /// Datapoints/s of the fix (10 x 5000).
    pub fix: Est,
    /// The seed's gain as a fraction, when its row has this batch size.
    pub seed: Option<f64>,
    /// Whether the model was fitted to this batch size's seed gain.
    pub calibrated: bool,
    /// Share of the server's CPU busy, default and fix (`server_util`).
    pub server_use: (Option<f64>, Option<f64>),
    /// What limited each cell (`bound_by`), default and fix.
    pub bound_by: (String, String),
}

impl BatchGain {
    /// fix / default - 1.
    pub fn gain(&self) -> f64 {
        self.fix.ratio(&self.default) - 1.0
    }

    /// The lowest and highest gain the two intervals allow.
    pub fn gain_range(&self) -> (f64, f64) {
        (
            ratio(self.fix.low, self.default.high) - 1.0,
            ratio(self.fix.high, self.default.low) - 1.0,
        )
    }

    /// Whether both sides have enough repetitions to judge.
    pub fn judged(&self) -> bool {
        self.default.judged() && self.fix.judged()
    }
}

/// The seed's row from the `[seed]` table of `file` (batches and gains), or the built-in
/// one, with the batch sizes the model was fitted to.
pub(crate) fn seed_row(seeds: Seeds<'_>, file: &str) -> (Vec<(u64, f64)>, Vec<u64>) {
    let num_list = |key: &str| -> Vec<f64> {
        seeds
            .table(file)
            .and_then(|s| s.get(key))
            .and_then(|v| v.as_array())
            .map(|a| a.iter().filter_map(|v| v.as_f64()).collect())
            .unwrap_or_default()
    };
    let (batches, gains) = (num_list("batches"), num_list("gains"));
    if batches.len() == gains.len() && !batches.is_empty() {
        let row = batches.iter().map(|b| *b as u64).zip(gains).collect();
        let fitted = num_list("fitted_batches")
            .iter()
            .map(|b| *b as u64)
            .collect();
        (row, fitted)
    } else {
        (SEED_GAINS.to_vec(), FITTED.to_vec())
    }
}

/// The gains of `rows` (cells of one batch sweep, default and fix) at their most clients.
pub fn gains(run: &Run<'_>, file: &str, rows: &[&CellRecord]) -> Vec<BatchGain> {
    let (seed, fitted) = seed_row(run.seeds(), file);
    let clients = rows.iter().map(|c| c.threads).max().unwrap_or(0);
    let datapoints = |c: &CellRecord, batch: u64| {
        Est::of(c).scaled(batch as f64 / extra(c, "statements_per_request").unwrap_or(1.0))
    };
    let bound = |c: &CellRecord| extra_str(c, "bound_by").unwrap_or("?").to_owned();
    let mut batches: Vec<u64> = rows
        .iter()
        .filter_map(|c| param_text(c, "batch").parse().ok())
        .collect();
    batches.sort_unstable();
    batches.dedup();
    batches
        .into_iter()
        .filter_map(|batch| {
            let at = |connections: &str| {
                rows.iter().copied().find(|c| {
                    c.threads == clients
                        && param_text(c, "batch") == batch.to_string()
                        && param_text(c, "connections") == connections
                })
            };
            let (default, fix) = (at("1")?, at("10")?);
            Some(BatchGain {
                batch,
                clients,
                default: datapoints(default, batch),
                fix: datapoints(fix, batch),
                seed: seed.iter().find(|(b, _)| *b == batch).map(|(_, g)| *g),
                calibrated: fitted.contains(&batch),
                server_use: (extra(default, "server_util"), extra(fix, "server_util")),
                bound_by: (bound(default), bound(fix)),
            })
        })
        .collect()
}

/// The gain table: per batch size, both sides in datapoints/s, the gain, the seed's, and
/// whether the model was fitted to it.
pub fn table(gains: &[BatchGain]) -> Table {
    let share = |u: Option<f64>| u.map_or("?".to_owned(), |u| format!("{:.0}%", u * 100.0));
    Table {
        title: format!(
            "Gain of the fix per datapoints per request at {} clients (datapoints/s)",
            gains.first().map_or(0, |g| g.clients)
        ),
        columns: [
            "batch",
            "default 1 x 1024",
            "fix 10 x 5000",
            "gain",
            "seed's gain",
            "fitted to it",
            "server CPU busy, default → fix",
            "bound by, default → fix",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect(),
        rows: gains
            .iter()
            .map(|g| {
                vec![
                    g.batch.to_string(),
                    g.default.text(),
                    g.fix.text(),
                    percent(g.gain()),
                    g.seed.map_or("-".to_owned(), |s| {
                        if s == 0.0 {
                            "no change".to_owned()
                        } else {
                            percent(s)
                        }
                    }),
                    if g.calibrated {
                        "yes"
                    } else {
                        "no (out of sample)"
                    }
                    .to_owned(),
                    format!("{} → {}", share(g.server_use.0), share(g.server_use.1)),
                    format!("{} → {}", g.bound_by.0, g.bound_by.1),
                ]
            })
            .collect(),
    }
}

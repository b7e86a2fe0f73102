//! The parts of seed 004's claim, a fixed list, each with the paired comparison that
//! decides it among the cells a plan will run, or why none can: what `lab matrix`
//! measures as pairs, and what [`super::answer`] reads back with `Run::part`.
//!
//! 1. `plateau`: the default pool (1 x 1024) from the seed's 1000 to 2000 clients,
//!    against the seed's growth of 1.15x (`pool-clients.toml`).
//! 2. `lift`: the fix (10 x 5000) against the default at 2000 clients.
//! 3. `large_batch_gain`: the fix against the default at the largest batch size the
//!    server model was not fitted to (500 datapoints per request), against the seed's
//!    gain there (`pool-seed-batch.toml`).
//! 4. `no_change_at_batch_1`: the fix against the default at one datapoint per request,
//!    a part only where the default pool can queue there (more statements in flight than
//!    its slots); otherwise "no change" would hold by construction and the part says so.
//!
//! Every side is one cell of the seed's driver (`driver-v3`), both sides of a part at the
//! same cores, and at the same clients unless clients are what the part compares. Not
//! here: wording the answer (`super`), running pairs (`lab`).

use harness::decide::{CellRef, Claim, Comparison, Planned, Rule, Side};

/// The seed's driver, the one variant both files run.
pub const VARIANT: &str = crate::DRIVER_V3.name;

/// The parts' names, in order (read by scripts).
pub const PARTS: [&str; 4] = [
    "plateau",
    "lift",
    "large_batch_gain",
    "no_change_at_batch_1",
];

pub use super::seed::{
    shape_text, SeedFigures, BATCH_FILE, CLIENTS_FILE, NEAR_LINEAR, NO_CHANGE, NO_LIFT,
    PLATEAU_SLACK,
};

/// A whole-number parameter of a planned cell.
fn num(c: &CellRef, key: &str) -> Option<u64> {
    match c.params.get(key)? {
        serde_json::Value::Number(n) => n.as_u64(),
        serde_json::Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

/// Statements a request of `c` sends at once: one, or one per `statement_points`.
fn statements(c: &CellRef) -> u64 {
    let batch = num(c, "batch").unwrap_or(1);
    match num(c, "statement_points").unwrap_or(0) {
        0 => 1,
        p => batch.div_ceil(p),
    }
}

/// The plan's cells of `file` as a part's sides see them.
struct FileCells<'a> {
    file: &'static str,
    cells: Vec<&'a CellRef>,
    /// Parameters whose values differ between the file's cells: what tells a side apart.
    varying: Vec<String>,
}

impl<'a> FileCells<'a> {
    fn of(planned: &Planned<'a>, file: &'static str) -> FileCells<'a> {
        let cells: Vec<&CellRef> = planned
            .of_file(file)
            .into_iter()
            .filter(|c| c.variant == VARIANT)
            .collect();
        let mut varying: Vec<String> = Vec::new();
        for c in &cells {
            for (k, v) in &c.params {
                if !varying.contains(k) && cells.iter().any(|o| o.params.get(k) != Some(v)) {
                    varying.push(k.clone());
                }
            }
        }
        FileCells {
            file,
            cells,
            varying,
        }
    }

    /// The cell of this shape at `clients` and `cores` (and `batch`, where given), named
    /// by the parameters that tell it apart.
    fn side(
        &self,
        shape: (u64, u64),
        clients: u64,
        cores: usize,
        batch: Option<u64>,
    ) -> Option<CellRef> {
        let c = self.cells.iter().find(|c| {
            c.threads as u64 == clients
                && c.cores == cores
                && num(c, "connections") == Some(shape.0)
                && num(c, "max_requests") == Some(shape.1)
                && batch.is_none_or(|b| num(c, "batch") == Some(b))
        })?;
        let mut r = CellRef::new(self.file, VARIANT, c.threads, c.cores);
        for k in &self.varying {
            if let Some(v) = c.params.get(k) {
                r = r.with(k, v.clone());
            }
        }
        Some(r)
    }

    /// Core counts of the file's cells, most first.
    fn cores(&self) -> Vec<usize> {
        let mut v: Vec<usize> = self.cells.iter().map(|c| c.cores).collect();
        v.sort_unstable_by(|a, b| b.cmp(a));
        v.dedup();
        v
    }

    /// Client counts of the file's cells at `cores`, most first.
    fn clients(&self, cores: usize) -> Vec<u64> {
        let mut v: Vec<u64> = self
            .cells
            .iter()
            .filter(|c| c.cores == cores)
            .map(|c| c.threads as u64)
            .collect();
        v.sort_unstable_by(|a, b| b.cmp(a));
        v.dedup();
        v
    }
}

/// Seed 004's parts among the cells `planned` will run: always [`PARTS`], in order.
pub fn claims(planned: &Planned<'_>) -> Vec<Claim> {
    let seed = SeedFigures::of(planned.seeds());
    let words = seed.words();
    let clients = FileCells::of(planned, CLIENTS_FILE);
    let batches = FileCells::of(planned, BATCH_FILE);
    let (d, f) = (shape_text(seed.default), shape_text(seed.fix));

    // The plateau and the lift at the most cores where all three cells are planned.
    let at = clients.cores().into_iter().find_map(|cores| {
        Some((
            clients.side(seed.default, seed.from, cores, None)?,
            clients.side(seed.default, seed.to, cores, None)?,
            clients.side(seed.fix, seed.to, cores, None)?,
        ))
    });
    let lacking = |what: &str| {
        format!(
            "{CLIENTS_FILE}.toml has no `{VARIANT}` cells {what} on the same CPUs in this \
             plan; the default matrix runs them (clients 100, 1000, 2000, 3000)"
        )
    };
    let (plateau, lift) = match at {
        Some((from, to, fix)) => (
            Claim::decided_by(
                PARTS[0],
                words[0].clone(),
                Comparison::throughput(
                    Side::cell(to.clone()),
                    Side::cell(from),
                    seed.plateau_rule(),
                ),
            ),
            Claim::decided_by(
                PARTS[1],
                words[1].clone(),
                Comparison::throughput(Side::cell(fix), Side::cell(to), seed.lift_rule()),
            ),
        ),
        None => (
            Claim::cannot(
                PARTS[0],
                words[0].clone(),
                lacking(&format!(
                    "of the default ({d}) at {} and {} clients",
                    seed.from, seed.to
                )),
            ),
            Claim::cannot(
                PARTS[1],
                words[1].clone(),
                lacking(&format!(
                    "of the default ({d}) and the fix ({f}) at {} clients",
                    seed.to
                )),
            ),
        ),
    };
    vec![
        plateau,
        lift,
        large_batch_gain(&seed, &batches, &words[2]),
        no_change(&seed, &batches, &words[3]),
    ]
}

/// Default and fix at `batch`, at the most cores and the most clients both are planned
/// at (the message-size table's 1000 clients).
fn batch_sides(seed: &SeedFigures, cells: &FileCells<'_>, batch: u64) -> Vec<(CellRef, CellRef)> {
    cells
        .cores()
        .into_iter()
        .flat_map(|cores| {
            cells.clients(cores).into_iter().filter_map(move |n| {
                Some((
                    cells.side(seed.fix, n, cores, Some(batch))?,
                    cells.side(seed.default, n, cores, Some(batch))?,
                ))
            })
        })
        .collect()
}

/// The fix's gain at the large out-of-sample batch size, against the seed's.
fn large_batch_gain(seed: &SeedFigures, cells: &FileCells<'_>, words: &str) -> Claim {
    let name = PARTS[2];
    let Some((b, gain)) = seed.large else {
        return Claim::cannot(
            name,
            words,
            format!(
                "the `[seed]` table of {BATCH_FILE}.toml leaves no batch size with a gain out \
                 of the model's fit, so no large batch can judge the model"
            ),
        );
    };
    match batch_sides(seed, cells, b).into_iter().next() {
        Some((fix, default)) => Claim::decided_by(
            name,
            words,
            Comparison {
                figure: "datapoints_per_sec".to_owned(),
                ..Comparison::throughput(
                    Side::cell(fix),
                    Side::cell(default),
                    seed.large_rule(gain),
                )
            },
        ),
        None => Claim::cannot(
            name,
            words,
            format!(
                "{BATCH_FILE}.toml has no `{VARIANT}` cells of the default and the fix at \
                 batch {b} on the same clients and CPUs in this plan; the default matrix \
                 runs them"
            ),
        ),
    }
}

/// "No change" at one datapoint per request, where the default pool can queue.
fn no_change(seed: &SeedFigures, cells: &FileCells<'_>, words: &str) -> Claim {
    let name = PARTS[3];
    let b = seed.unchanged.unwrap_or(1);
    let sides = batch_sides(seed, cells, b);
    let in_flight = |c: &CellRef| c.threads as u64 * statements(c);
    if let Some((fix, default)) = sides.iter().find(|(_, d)| in_flight(d) > seed.slots()) {
        return Claim::decided_by(
            name,
            words,
            Comparison {
                figure: "datapoints_per_sec".to_owned(),
                ..Comparison::throughput(
                    Side::cell(fix.clone()),
                    Side::cell(default.clone()),
                    Rule::Within {
                        low: 1.0 / NO_CHANGE,
                        high: NO_CHANGE,
                    },
                )
            },
        );
    }
    let why = match sides.iter().map(|(_, d)| d).max_by_key(|d| in_flight(d)) {
        Some(d) => format!(
            "at batch {b} the {} clients of {BATCH_FILE}.toml have at most {} statements in \
             flight, no more than the default pool's {} slots: the default cannot queue, so \
             the fix cannot change anything and \"no change\" would hold by construction. \
             Decidable with batch {b} at more clients than slots (e.g. 2000, with the \
             server's costs fitted again at that load)",
            d.threads,
            in_flight(d),
            seed.slots()
        ),
        None => format!(
            "{BATCH_FILE}.toml has no `{VARIANT}` cells of the default and the fix at batch \
             {b} on the same clients and CPUs in this plan"
        ),
    };
    Claim::cannot(name, words, why)
}

//! The parts of seed 004's claim, one registry ([`registry`]), each entry with the paired
//! comparison that decides it among the cells a plan will run, or why none can: what
//! `lab matrix` measures as pairs, and what [`super::answer`] reads back by name.
//!
//! - [`PLATEAU`]: the default pool (1 x 1024) from the seed's 1000 to 2000 clients,
//!   against the seed's growth of 1.15x (`pool-clients.toml`).
//! - [`LIFT`]: the fix (10 x 5000) against the default at 2000 clients.
//! - [`LARGE_BATCH_GAIN`]: the fix against the default at the largest batch size the
//!   server model was not fitted to (500 datapoints per request), against the seed's
//!   gain there (`pool-seed-batch.toml`).
//! - [`NO_CHANGE_AT_BATCH_1`]: the fix against the default at one datapoint per request,
//!   a part only where the default pool can queue there (more statements in flight than
//!   its slots); otherwise "no change" would hold by construction and the part says so.
//!
//! Every side is one cell of the seed's driver (`driver-v3`), both sides of a part at the
//! same cores, and at the same clients unless clients are what the part compares. Not
//! here: wording the answer beyond a part's clause (`super`), running pairs (`lab`).

use verdict::decide::{CellRef, Comparison, Planned, Rule, Side};
use verdict::findings::Seeds;
use verdict::registry::{Entry, Found, Registry};

/// The seed's driver, the one variant both files run.
pub const VARIANT: &str = crate::DRIVER_V3.name;

/// The default pool's growth as the clients double, against the seed's (read by scripts).
pub const PLATEAU: &str = "plateau";
/// The fix over the default where the seed's plateau ends.
pub const LIFT: &str = "lift";
/// The fix's gain at the large batch size the model was not fitted to, against the seed's.
pub const LARGE_BATCH_GAIN: &str = "large_batch_gain";
/// "No change" at one datapoint per request, where the default pool can queue.
pub const NO_CHANGE_AT_BATCH_1: &str = "no_change_at_batch_1";

/// What every part's sides run on: the lab's simulated server, with costs chosen to fit
/// the seed.
const BASIS: &str = "model";

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

/// Seed 004's parts, each declared once: its name, its claim in the seed's figures (from
/// `seeds`, or the seed's own text where a `[seed]` table lacks them), how its sides are
/// found among a plan's cells, and what its outcome says. [`crate::PoolHotPath`]'s claims
/// and [`super::answer`]'s parts both read it; every side runs on the simulated server.
pub fn registry(seeds: Seeds<'_>) -> Registry<'static> {
    let seed = SeedFigures::of(seeds);
    let (d, f) = (shape_text(seed.default), shape_text(seed.fix));
    let plateau = format!(
        "From {} to {} clients the default pool ({d}) grows about as little as the seed's \
         {:.2}x, well short of the {:.0}x the clients could give",
        seed.from,
        seed.to,
        seed.growth,
        seed.linear()
    );
    let lift = format!(
        "At {} clients the fix ({f}) does clearly more than the default ({d})",
        seed.to
    );
    let large = match seed.large {
        Some((b, g)) => format!(
            "At {b} datapoints per request, which the server model was not fitted to, the fix \
             gains about the seed's {}",
            verdict::judge::percent(g)
        ),
        None => "At a large batch size the model was not fitted to, the fix gains about what \
                 the seed saw"
            .to_owned(),
    };
    let unchanged = format!(
        "At {} datapoint per request the fix makes no change, although more statements are \
         in flight than the default's {} slots",
        seed.unchanged.unwrap_or(1),
        seed.slots()
    );
    let (s1, s2, s3, s4) = (seed.clone(), seed.clone(), seed.clone(), seed);
    Registry::new(vec![
        // The answer says more than these two clauses where the interval does: flatter
        // than the seed's, or a fall (`super::plateau_said`).
        Entry::new(PLATEAU, plateau, move |p: &Planned<'_>| {
            let (from, to, _) = clients_sides(&s1, p).ok_or_else(|| {
                lacking(&format!(
                    "of the default ({}) at {} and {} clients",
                    shape_text(s1.default),
                    s1.from,
                    s1.to
                ))
            })?;
            Ok(Comparison::throughput(Side::cell(to), Side::cell(from), s1.plateau_rule()).into())
        })
        .says(
            "a plateau like the seed's",
            "growth beyond the seed's plateau",
        )
        .on(BASIS)
        // A size (issue 51): the model's `base_us` was chosen so that the cap binds at
        // 1000 clients, so a plateau there follows from its construction.
        .sized(),
        Entry::new(LIFT, lift, move |p: &Planned<'_>| {
            let (_, to, fix) = clients_sides(&s2, p).ok_or_else(|| {
                lacking(&format!(
                    "of the default ({}) and the fix ({}) at {} clients",
                    shape_text(s2.default),
                    shape_text(s2.fix),
                    s2.to
                ))
            })?;
            Ok(Comparison::throughput(Side::cell(fix), Side::cell(to), s2.lift_rule()).into())
        })
        .says("the fix lifts the plateau", "no lift worth reporting")
        .on(BASIS)
        // A size (issue 51): the lift is Little's law on the model's 64 simulated cores
        // (2000 / 1024 = 1.95), known before the run.
        .sized(),
        Entry::new(LARGE_BATCH_GAIN, large, move |p: &Planned<'_>| {
            large_batch_gain(&s3, &FileCells::of(p, BATCH_FILE))
        })
        .says("the seed's gain", "not the seed's gain")
        .on(BASIS)
        // Its cause is the default's slots running out where the fix's do not
        // (`tests/controls.rs`): the fix over the seed's default, whose slots 64 clients
        // never fill, gains nothing; over a default they fill, about 2.6x, in the band.
        .controlled(
            "a_default_whose_slots_never_run_out_contradicts_the_large_batch_gain",
            "a_default_whose_slots_run_out_shows_the_large_batch_gain",
        ),
        Entry::new(NO_CHANGE_AT_BATCH_1, unchanged, move |p: &Planned<'_>| {
            no_change(&s4, &FileCells::of(p, BATCH_FILE))
        })
        .says("none, as the seed saw", "the fix changes it")
        .on(BASIS)
        // Its cause is the server's CPU running out before the default's slots
        // (`tests/controls.rs`): with cores to spare the fix gains 2.0x; without, none.
        .controlled(
            "a_server_with_cores_to_spare_contradicts_no_change_at_batch_1",
            "a_server_whose_cores_run_out_first_shows_no_change_at_batch_1",
        ),
    ])
}

/// The default at the seed's `from` and `to` clients and the fix at `to`, at the most
/// cores where all three are planned: the plateau's and the lift's sides.
fn clients_sides(seed: &SeedFigures, planned: &Planned<'_>) -> Option<(CellRef, CellRef, CellRef)> {
    let clients = FileCells::of(planned, CLIENTS_FILE);
    clients.cores().into_iter().find_map(|cores| {
        Some((
            clients.side(seed.default, seed.from, cores, None)?,
            clients.side(seed.default, seed.to, cores, None)?,
            clients.side(seed.fix, seed.to, cores, None)?,
        ))
    })
}

/// Why the plateau or the lift cannot be decided: the clients file lacks `what`.
fn lacking(what: &str) -> String {
    format!(
        "{CLIENTS_FILE}.toml has no `{VARIANT}` cells {what} on the same CPUs in this plan; \
         the default matrix runs them (clients 100, 1000, 2000, 3000)"
    )
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
fn large_batch_gain(seed: &SeedFigures, cells: &FileCells<'_>) -> Result<Found, String> {
    let Some((b, gain)) = seed.large else {
        return Err(format!(
            "the `[seed]` table of {BATCH_FILE}.toml leaves no batch size with a gain out of \
             the model's fit, so no large batch can judge the model"
        ));
    };
    let (fix, default) = batch_sides(seed, cells, b)
        .into_iter()
        .next()
        .ok_or_else(|| {
            format!(
                "{BATCH_FILE}.toml has no `{VARIANT}` cells of the default and the fix at batch \
             {b} on the same clients and CPUs in this plan; the default matrix runs them"
            )
        })?;
    Ok(Comparison {
        figure: "datapoints_per_sec".to_owned(),
        ..Comparison::throughput(Side::cell(fix), Side::cell(default), seed.large_rule(gain))
    }
    .into())
}

/// "No change" at one datapoint per request, where the default pool can queue.
fn no_change(seed: &SeedFigures, cells: &FileCells<'_>) -> Result<Found, String> {
    let b = seed.unchanged.unwrap_or(1);
    let sides = batch_sides(seed, cells, b);
    let in_flight = |c: &CellRef| c.threads as u64 * statements(c);
    if let Some((fix, default)) = sides.iter().find(|(_, d)| in_flight(d) > seed.slots()) {
        return Ok(Comparison {
            figure: "datapoints_per_sec".to_owned(),
            ..Comparison::throughput(
                Side::cell(fix.clone()),
                Side::cell(default.clone()),
                Rule::Within {
                    low: 1.0 / NO_CHANGE,
                    high: NO_CHANGE,
                },
            )
        }
        .into());
    }
    Err(
        match sides.iter().map(|(_, d)| d).max_by_key(|d| in_flight(d)) {
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
        },
    )
}

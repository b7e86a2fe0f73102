//! The seed's figures as seed 004's parts are judged against them: the plateau, the
//! driver's default and fix shapes and the gains the seed quotes, from a plan's or run's
//! `[seed]` tables or the seed's own text where a table lacks them, and the bands read
//! around them. Not here: which cells a part compares (`super::claims`).

use verdict::decide::Rule;
use verdict::findings::Seeds;

use super::batch;

/// The scenario file of the plateau and the lift.
pub const CLIENTS_FILE: &str = "pool-clients";
/// The scenario file of the message-size table.
pub const BATCH_FILE: &str = "pool-seed-batch";

/// The seed's plateau when a plan or run carries no `[seed]` table: "From 1000 to 2000, I
/// hit the same kind of plateau ...: I got barely 15% throughput increase".
const SEED_PLATEAU: (u64, u64, f64) = (1000, 2000, 1.15);
/// The driver's default and the seed's fix, connections x requests per connection.
const SHAPES: ((u64, u64), (u64, u64)) = ((1, 1024), (10, 5000));

/// How much more than the seed's growth still reads as its plateau: the seed's 15% is one
/// run of a load test, so 20% is the same observation.
pub const PLATEAU_SLACK: f64 = 0.05;
/// Below this the default pool's throughput fell as the clients doubled: a drop of 5% is
/// what the pairs can decide and more than a flat line's noise.
pub const FALL: f64 = 0.95;
/// The share of linear growth (2x for twice the clients) at which the default no longer
/// plateaus: 1.6x for 2x the clients is four times the seed's increase, nearer linear
/// than the seed's 1.15x (in logs, the midpoint of 1.15x and 2x is 1.52x).
pub const NEAR_LINEAR: f64 = 0.6;
/// Below this the fix lifts nothing worth reporting: 5% is less than any figure the seed
/// quotes and the size of effect the pairs can decide.
pub const NO_LIFT: f64 = 1.05;
/// The "no change" band at one datapoint per request: the seed's next row is +100%, and
/// a load test run once reads a 10% difference as none. A decided interval (+-3%) fits
/// inside only for a true gain under about 7%.
pub const NO_CHANGE: f64 = 1.10;

/// The seed figures the parts are judged against, from the plan's or run's `[seed]`
/// tables, or the seed's own text where a table lacks them.
#[derive(Debug, Clone, PartialEq)]
pub struct SeedFigures {
    /// Clients where the seed's plateau starts and ends.
    pub from: u64,
    /// Clients where it ends.
    pub to: u64,
    /// The seed's throughput growth from `from` to `to` with the default pool.
    pub growth: f64,
    /// The driver's default pool, connections x requests per connection.
    pub default: (u64, u64),
    /// The seed's fix.
    pub fix: (u64, u64),
    /// The large batch size judged and the seed's gain there (a fraction), if any batch
    /// size of the seed's row was left out of the model's fit.
    pub large: Option<(u64, f64)>,
    /// The batch size where the seed saw no change.
    pub unchanged: Option<u64>,
}

impl SeedFigures {
    /// The seed's figures as `seeds` has them.
    pub fn of(seeds: Seeds<'_>) -> SeedFigures {
        let num = |key: &str| seeds.f64(CLIENTS_FILE, key);
        let shape = |key: &str, or: (u64, u64)| {
            seeds
                .str(CLIENTS_FILE, key)
                .and_then(shape_of)
                .unwrap_or(or)
        };
        let (row, fitted) = batch::seed_row(seeds, BATCH_FILE);
        let large = row
            .iter()
            .filter(|(b, g)| !fitted.contains(b) && *g > 0.0)
            .max_by_key(|(b, _)| *b)
            .copied();
        SeedFigures {
            from: num("plateau_from").map_or(SEED_PLATEAU.0, |v| v as u64),
            to: num("plateau_to").map_or(SEED_PLATEAU.1, |v| v as u64),
            growth: num("plateau_growth").unwrap_or(SEED_PLATEAU.2),
            default: shape("default", SHAPES.0),
            fix: shape("fix", SHAPES.1),
            large,
            unchanged: row.iter().find(|(_, g)| *g == 0.0).map(|(b, _)| *b),
        }
    }

    /// Growth that would be linear in the clients.
    pub fn linear(&self) -> f64 {
        self.to as f64 / self.from.max(1) as f64
    }

    /// The plateau's rule, a band: shown when the growth lies between [`FALL`] (flat)
    /// and the seed's growth and a little more; contradicted when it lies wholly outside,
    /// either a fall (throughput dropped as clients doubled, which is no plateau) or
    /// growth beyond the seed's.
    pub fn plateau_rule(&self) -> Rule {
        Rule::Within {
            low: FALL,
            high: hundredths(self.growth + PLATEAU_SLACK),
        }
    }

    /// The lift's rule. The seed's fix grew linearly where the default grew 1.15x, so at
    /// 2000 clients it did about 2 / 1.15 = 1.74x the default; shown above half that
    /// lift in logs (1.32x), so a fix that lifts less than the seed's but clearly still
    /// counts; contradicted below [`NO_LIFT`].
    pub fn lift_rule(&self) -> Rule {
        Rule::Above {
            shown: hundredths((self.linear() / self.growth).max(1.0).sqrt()).max(NO_LIFT),
            contradicted: NO_LIFT,
        }
    }

    /// The large batch's rule: the seed's throughput gain, give or take
    /// [`batch::AGREES_WITHIN`]; a band that excludes 1, so no effect contradicts it.
    pub fn large_rule(&self, gain: f64) -> Rule {
        Rule::Within {
            low: hundredths((1.0 + gain) / batch::AGREES_WITHIN),
            high: hundredths((1.0 + gain) * batch::AGREES_WITHIN),
        }
    }

    /// The default's slots.
    pub fn slots(&self) -> u64 {
        self.default.0 * self.default.1
    }
}

/// A threshold to two decimals, as the rule's text and `findings.json` show it.
pub(super) fn hundredths(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// "1 x 1024" as (1, 1024).
fn shape_of(text: &str) -> Option<(u64, u64)> {
    let (c, r) = text.split_once('x')?;
    Some((c.trim().parse().ok()?, r.trim().parse().ok()?))
}

/// (1, 1024) as "1 x 1024".
pub fn shape_text(shape: (u64, u64)) -> String {
    format!("{} x {}", shape.0, shape.1)
}

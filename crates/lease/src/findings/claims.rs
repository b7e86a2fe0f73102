//! The question's parts and the comparisons that decide them: seed 001's own comparison,
//! `global-clock` (the patch) against `txn-log` (before it), at the seed's load
//! (`lease-seed-load.toml`), on the store's busy time per seed collection and on the
//! bytes each extend wrote; and the same three asked again on PostgreSQL
//! (`lease-postgres.toml`, parts `postgres/...`), whose row locks make the namespace clock
//! row a hot spot SQLite's single writer cannot. Always the same six parts, in this
//! order; a part whose cells the plan lacks is declared with why.
//!
//! Not here: wording the answer (the parent module), timing (`crate::busy`).

use harness::decide::{CellRef, Claim, Comparison, Planned, Rule, Side};
use harness::findings::Seeds;

/// The scenario file of the seed's load.
pub const SEED_LOAD: &str = "lease-seed-load";
/// The same load on the lab's own PostgreSQL (`backend=postgres`).
pub const POSTGRES_LOAD: &str = "lease-postgres";

/// Where the parts are asked: each scenario file with the prefix of its parts' names
/// (SQLite's unprefixed, as they were first named; PostgreSQL's `postgres/`).
pub const STORES: [(&str, &str); 2] = [(SEED_LOAD, ""), (POSTGRES_LOAD, "postgres/")];

/// The name of part `spec` asked of the file whose parts carry `prefix`.
pub fn part_name(prefix: &str, spec: &PartSpec) -> String {
    format!("{prefix}{}", spec.name)
}

/// The patch's store (Juju 2.3's global clock): the ratio's numerator.
pub const AFTER: &str = crate::Design::GlobalClock.name();
/// The store before it (Juju 2.2's transaction per lease write): the denominator.
pub const BEFORE: &str = crate::Design::TxnLog.name();

/// One part of the question: its name (read by scripts), the figure of the records'
/// `extra` it compares, and the `[seed]` keys of the seed's before and after, if any.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PartSpec {
    /// The part's name.
    pub name: &'static str,
    /// The `extra` key compared (milliseconds per second, or bytes per extend).
    pub figure: &'static str,
    /// What is compared, in words.
    pub what: &'static str,
    /// The `[seed]` keys of the seed's figure before and after the patch.
    pub seed: Option<(&'static str, &'static str)>,
    /// The seed's collection, as mongotop named it.
    pub collection: &'static str,
    /// Whether, on SQLite, the outcome follows from which statements each store's code
    /// runs (the lab's own attribution of statements to tables, or the pages it writes),
    /// not from what SQLite did: then the part is a measurement of size only there. On
    /// PostgreSQL the database times and writes both sides alike, so every part decides.
    pub by_construction: bool,
}

/// The parts, in order.
pub const PARTS: [PartSpec; 3] = [
    PartSpec {
        name: "busy_time_leases",
        figure: "busy_ms_per_s_leases",
        what: "the store's busy time on the leases (the `lease` table and `txn-log`'s \
               namespace `clock` row: Juju 2.2 kept each namespace's clock document in \
               juju.leases)",
        seed: Some(("leases_ms_before", "leases_ms_after")),
        collection: "juju.leases",
        by_construction: false,
    },
    PartSpec {
        name: "busy_time_txns",
        figure: "busy_ms_per_s_txns",
        what: "the store's busy time on the transaction machinery (`txn-log`'s `txns` and \
               `txn_log` rows, and BEGIN/COMMIT: mgo/txn's documents in juju.txns; \
               `global-clock`'s update is still a transaction, with no log)",
        seed: Some(("txns_ms_before", "txns_ms_after")),
        collection: "juju.txns",
        // `global-clock` is charged BEGIN/COMMIT only, `txn-log` those and three
        // statements more (`busy.rs`): the ratio is the code's attribution.
        by_construction: true,
    },
    PartSpec {
        name: "bytes_per_extend",
        figure: "bytes_per_extend",
        what: "the bytes written per extend (the process's writes: WAL frames, checkpoints, \
               the global clock's ticker included)",
        seed: None,
        collection: "",
        // Fixed by which pages each store's code writes (0.203 in every run).
        by_construction: true,
    },
];

/// Every part's rule: the patch cuts the figure. Shown when the interval lies wholly below
/// 0.95 (a cut of 5% or more is worth reporting; the seed's cuts were 43% and 28%);
/// contradicted when wholly above 0.98 (less than a 2% cut, or more time or bytes);
/// between, the honest answer is that this run cannot tell.
pub const RULE: Rule = Rule::Below {
    shown: 0.95,
    contradicted: 0.98,
};

/// How far from the seed's own cut a part's ratio may lie and still be the seed's effect:
/// a factor of 1.3 either way (0.57x gives 0.44-0.74, 0.72x gives 0.55-0.94). Why that
/// wide: the seed's figures are mongotop's time per collection on Juju's 2017 MongoDB,
/// the lab's are its store's own accounting (SQLite statements timed by the lab, or
/// PostgreSQL's pg_stat_statements) of a replay of the seed's load, and the stores write
/// a lease differently (a document and its transaction log against rows); a cut within
/// 30% of the seed's is as close as two stores can be asked to agree. Capped at
/// [`RULE`]'s 0.95, so a band never holds "no cut".
pub const MAGNITUDE: f64 = 1.3;

/// The rule part `spec` is judged by: a band around the seed's own cut where the seed
/// measured one (its magnitude as well as its direction: a cut far deeper than the
/// seed's is not the seed's effect either), else [`RULE`] (the direction only).
pub fn rule(spec: &PartSpec, seeds: Seeds<'_>) -> Rule {
    match seed_ratio(spec, seeds) {
        Some((before, after)) if before > 0.0 && after > 0.0 => {
            let seed = after / before;
            let hundredths = |x: f64| (x * 100.0).round() / 100.0;
            Rule::Within {
                low: hundredths(seed / MAGNITUDE),
                high: hundredths((seed * MAGNITUDE).min(0.95)),
            }
        }
        _ => RULE,
    }
}

/// The seed's after / before for `spec`, from the `[seed]` table of the seed's load (or
/// of `lease.toml`, which carried the leases figures first).
pub fn seed_ratio(spec: &PartSpec, seeds: Seeds<'_>) -> Option<(f64, f64)> {
    let (before, after) = spec.seed?;
    [SEED_LOAD, "lease"]
        .iter()
        .find_map(|file| Some((seeds.f64(file, before)?, seeds.f64(file, after)?)))
}

/// What part `spec` claims, in the user's words, with the seed's figure where it has one.
pub fn claim_words(spec: &PartSpec, seeds: Seeds<'_>) -> String {
    let seed = match seed_ratio(spec, seeds) {
        Some((before, after)) => format!(
            "the seed's {} went {before:.0} -> {after:.0} ms ({:.2}x)",
            spec.collection,
            after / before
        ),
        None if spec.seed.is_some() => format!("the seed measured {}", spec.collection),
        None => "the seed did not measure it".to_owned(),
    };
    format!(
        "At the seed's load (each lease extended every 30 s of simulated time), `{AFTER}` \
         cuts {} against `{BEFORE}`, {}; {seed}.",
        spec.what,
        rule(spec, seeds).text()
    )
}

/// The cells the comparisons use: `global-clock` and `txn-log` at the fewest threads of
/// `file` (the seed's load, on SQLite or PostgreSQL) at its most cores, both planned at
/// the seed's load; or why not.
pub fn sides(planned: &Planned<'_>, file: &str) -> Result<(CellRef, CellRef), String> {
    let Some(&cores) = planned.cores(file).last() else {
        return Err(format!(
            "{file}.toml is not in this plan: it is in the default matrix (`just \
             matrix`), or add `scenarios={file}`"
        ));
    };
    let pair = planned.threads(file, cores).into_iter().find_map(|t| {
        Some((
            planned.find(file, AFTER, t, cores)?,
            planned.find(file, BEFORE, t, cores)?,
        ))
    });
    let Some((after, before)) = pair else {
        return Err(format!(
            "{file}.toml plans no `{AFTER}` and `{BEFORE}` cells at the same threads on \
             {cores} CPUs: run it with both stores (`variants=` naming both, or none)"
        ));
    };
    for cell in [after, before] {
        let load = cell.params.get("load").and_then(|v| v.as_str());
        if load != Some("seed") {
            return Err(format!(
                "{} runs with load={}, not the seed's load: drop the `load=` setting",
                cell.text(),
                load.unwrap_or("?")
            ));
        }
    }
    Ok((after.clone(), before.clone()))
}

/// The question's parts among the cells `planned`, on SQLite then on PostgreSQL: each
/// decided by `global-clock` against `txn-log` on its figure, single cells at the same
/// threads and cores, or declared with why it cannot be.
pub fn claims(planned: &Planned<'_>) -> Vec<Claim> {
    STORES
        .iter()
        .flat_map(|&(file, prefix)| claims_of(planned, file, prefix))
        .collect()
}

/// What part `spec` claims of the file whose parts carry `prefix`.
pub fn store_claim_words(spec: &PartSpec, prefix: &str, seeds: Seeds<'_>) -> String {
    let words = claim_words(spec, seeds);
    if prefix.is_empty() {
        words
    } else {
        format!("On PostgreSQL (`{POSTGRES_LOAD}.toml`, durable commits, time per table from pg_stat_statements, bytes from the WAL): {words}")
    }
}

fn claims_of(planned: &Planned<'_>, file: &str, prefix: &str) -> Vec<Claim> {
    let sides = sides(planned, file);
    PARTS
        .iter()
        .map(|spec| {
            let words = store_claim_words(spec, prefix, planned.seeds());
            let name = part_name(prefix, spec);
            let name = name.as_str();
            match &sides {
                Ok((after, before)) => {
                    let claim = Claim::decided_by(
                        name,
                        words,
                        Comparison {
                            a: Side::cell(after.clone()),
                            b: Side::cell(before.clone()),
                            figure: spec.figure.to_owned(),
                            scale: 1.0,
                            rule: rule(spec, planned.seeds()),
                        },
                    );
                    // On PostgreSQL both sides are timed by the database and the bytes
                    // are its WAL's: nothing there is the lab's attribution.
                    if spec.by_construction && prefix.is_empty() {
                        claim.sized()
                    } else {
                        claim
                    }
                }
                Err(why) => Claim::cannot(name, words, why.clone()),
            }
        })
        .collect()
}

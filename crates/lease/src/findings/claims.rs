//! The question's parts, declared once ([`registry`]): seed 001's own comparison,
//! `global-clock` (the patch) against `txn-log` (before it), at the seed's load
//! (`lease-seed-load.toml`), on the store's busy time per seed collection and on the
//! bytes each extend wrote; and the same three asked again on PostgreSQL
//! (`lease-postgres.toml`, parts `postgres/...`), whose row locks make the namespace clock
//! row a hot spot SQLite's single writer cannot; then, on PostgreSQL only, the server's
//! own CPU per extend, the like-for-like figure. Always the same seven parts, in this
//! order; a part whose cells the plan lacks is declared with why. The claims, the answer
//! and the tests read the parts by name from the registry, never by position.
//!
//! Not here: wording the answer (the parent module), timing (`crate::busy`).

use verdict::decide::{CellRef, Comparison, Planned, Rule, Side};
use verdict::findings::Seeds;
use verdict::registry::{Entry, Registry};

/// The scenario file of the seed's load.
pub const SEED_LOAD: &str = "lease-seed-load";
/// The same load on the lab's own PostgreSQL (`backend=postgres`).
pub const POSTGRES_LOAD: &str = "lease-postgres";

/// Where the parts are asked: each store's scenario file, and the prefix of its parts'
/// names (SQLite's unprefixed, as they were first named; PostgreSQL's `postgres/`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Store {
    /// SQLite, `lease-seed-load.toml`: parts unprefixed.
    Sqlite,
    /// PostgreSQL, `lease-postgres.toml`: parts `postgres/...`.
    Postgres,
}

impl Store {
    /// Both stores, in the order the answer shows their parts.
    pub const BOTH: [Store; 2] = [Store::Sqlite, Store::Postgres];

    /// The scenario file its parts are asked of.
    pub const fn file(self) -> &'static str {
        match self {
            Store::Sqlite => SEED_LOAD,
            Store::Postgres => POSTGRES_LOAD,
        }
    }

    /// The prefix of its parts' names.
    pub const fn prefix(self) -> &'static str {
        match self {
            Store::Sqlite => "",
            Store::Postgres => "postgres/",
        }
    }

    /// The name of part `spec` asked of this store, e.g. `postgres/busy_time_leases`.
    pub fn part(self, spec: &PartSpec) -> String {
        format!("{}{}", self.prefix(), spec.name)
    }
}

/// The patch's store (Juju 2.3's global clock): the ratio's numerator.
pub const AFTER: &str = crate::Design::GlobalClock.name();
/// The store before it (Juju 2.2's transaction per lease write): the denominator.
pub const BEFORE: &str = crate::Design::TxnLog.name();

/// One part of the question, as each store is asked it: its name (read by scripts), the
/// figure of the records' `extra` it compares, and the `[seed]` keys of the seed's before
/// and after, if any. What [`registry`] builds each store's entry from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PartSpec {
    /// The part's name on SQLite; on PostgreSQL it carries the store's prefix.
    pub name: &'static str,
    /// The `extra` key compared (milliseconds per second, or bytes per extend).
    pub figure: &'static str,
    /// What is compared, in words.
    pub what: &'static str,
    /// What its sentence calls it, and the unit of its cells' figures.
    pub heading: (&'static str, &'static str),
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

/// The server's own CPU time per extend, asked of PostgreSQL only (SQLite runs in the
/// lab's process, whose CPU is the workers' too): the work each store asks of the server,
/// like for like, neither the row-lock waits nor the commits' WAL flushes in it (both
/// off CPU). The seed did not measure it.
pub const SERVER_CPU_PER_EXTEND: PartSpec = PartSpec {
    name: "server_cpu_per_extend",
    figure: "server_cpu_us_per_extend",
    what: "the server's own CPU time per extend (every PostgreSQL process, read from /proc)",
    heading: ("Server CPU per extend", " us"),
    seed: None,
    collection: "",
    by_construction: false,
};

impl PartSpec {
    /// The three parts asked of each store, in the order the answer shows them.
    pub const EVERY: [PartSpec; 3] = [BUSY_TIME_LEASES, BUSY_TIME_TXNS, BYTES_PER_EXTEND];
}

/// The store's busy time on the seed's juju.leases.
pub const BUSY_TIME_LEASES: PartSpec = PartSpec {
    name: "busy_time_leases",
    figure: "busy_ms_per_s_leases",
    what: "the store's busy time on the leases (the `lease` table and `txn-log`'s \
           namespace `clock` row: Juju 2.2 kept each namespace's clock document in \
           juju.leases)",
    heading: ("Busy time on the leases", " ms/s"),
    seed: Some(("leases_ms_before", "leases_ms_after")),
    collection: "juju.leases",
    by_construction: false,
};

/// The store's busy time on the seed's juju.txns, the transaction machinery.
pub const BUSY_TIME_TXNS: PartSpec = PartSpec {
    name: "busy_time_txns",
    figure: "busy_ms_per_s_txns",
    what: "the store's busy time on the transaction machinery (`txn-log`'s `txns` and \
           `txn_log` rows, and BEGIN/COMMIT: mgo/txn's documents in juju.txns; \
           `global-clock`'s update is still a transaction, with no log)",
    heading: ("Busy time on the transactions", " ms/s"),
    seed: Some(("txns_ms_before", "txns_ms_after")),
    collection: "juju.txns",
    // `global-clock` is charged BEGIN/COMMIT only, `txn-log` those and three
    // statements more (`busy.rs`): the ratio is the code's attribution.
    by_construction: true,
};

/// The bytes each extend wrote; the seed did not measure them.
pub const BYTES_PER_EXTEND: PartSpec = PartSpec {
    name: "bytes_per_extend",
    figure: "bytes_per_extend",
    what: "the bytes written per extend (the process's writes: WAL frames, checkpoints, \
           the global clock's ticker included)",
    heading: ("Bytes written per extend", " bytes"),
    seed: None,
    collection: "",
    // Fixed by which pages each store's code writes (0.203 in every run).
    by_construction: true,
};

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

/// What part `spec` claims of `store`.
pub fn store_claim_words(spec: &PartSpec, store: Store, seeds: Seeds<'_>) -> String {
    let words = claim_words(spec, seeds);
    match store {
        Store::Sqlite => words,
        Store::Postgres => format!("On PostgreSQL (`{POSTGRES_LOAD}.toml`, durable commits, time per table from pg_stat_statements, bytes from the WAL): {words}"),
    }
}

/// Every part of the question, declared once: each [`PartSpec::EVERY`] on SQLite, then
/// on PostgreSQL, decided by `global-clock` against `txn-log` on its figure, single cells
/// at the same threads and cores ([`sides`]), by its [`rule`] (from `seeds`). What
/// [`crate::LeaseHotPath`]'s claims, the answer and the tests read.
pub fn registry(seeds: Seeds<'_>) -> Registry<'static> {
    let entries = Store::BOTH
        .into_iter()
        .flat_map(|store| PartSpec::EVERY.map(|spec| entry(store, spec, seeds)))
        .chain(std::iter::once(entry(
            Store::Postgres,
            SERVER_CPU_PER_EXTEND,
            seeds,
        )))
        .collect();
    Registry::new(entries)
}

/// Part `spec` asked of `store`.
fn entry(store: Store, spec: PartSpec, seeds: Seeds<'_>) -> Entry<'static> {
    let rule = rule(&spec, seeds);
    Entry::new(
        store.part(&spec),
        store_claim_words(&spec, store, seeds),
        move |planned: &Planned<'_>| {
            let (after, before) = sides(planned, store.file())?;
            Ok(Comparison {
                a: Side::cell(after),
                b: Side::cell(before),
                figure: spec.figure.to_owned(),
                scale: 1.0,
                rule,
            }
            .into())
        },
    )
    // Every part is a size (issue 51: no part decides unless a test shows it can go
    // either way).
    //
    // On PostgreSQL the bytes are fixed by the rows each store writes, as on SQLite;
    // `global-clock`'s busy time there is its BEGIN and COMMIT only, as on SQLite; and the
    // leases' busy time counts twelve writers queued on one clock row held until COMMIT,
    // a row-lock wait that mgo/txn under mongotop never had, while neither store's WAL
    // flush is counted: the seed's band cannot apply.
    //
    // On SQLite the transactions and the bytes follow from the code (`by_construction`),
    // and `busy_time_leases` can come out contradicted (`txn-log` against itself,
    // `tests/controls.rs`) but no setting shows it: `global-clock` against `txn-log` at the
    // seed's load measures 1.0-1.3x, above the band (0.44-0.74), at every rate `txn-log`
    // keeps up with. Why: the first write of a transaction costs about three times a
    // later one (here, the same `UPDATE lease ... WHERE uuid = ?`: 22 us as `sql-update`'s
    // only statement, 7 us after `txn-log`'s INSERT into `txns`), and that first write is
    // the lease's in `global-clock` but the `txns` row's in `txn-log`. So `global-clock`'s one
    // statement (about 25 us) outweighs `txn-log`'s read of the holder, lease update and
    // clock row (about 19 us together), and which table pays the first write is the
    // code's order, not the cost the patch removed. Measured here: at 100x, 500 leases,
    // 37-42 ms/s against 24-38 ms/s; at 10x with extends every 3 s, at 1x with extends
    // every 1 s, with 1 unit or with `synchronous=off`, 1.0-1.3x too. It falls only where
    // `txn-log` nears saturation (5000 extends a second: 0.47-0.8x, `txn-log` short of the
    // rate; 300x: 0.75-0.82x, its transactions 45-80% of a CPU), where the figure reads
    // capacity, not cost, and swings with other jobs on the machine.
    .sized()
}

//! Seed 001's question, asked of a run: did the patch (`txn-log` -> `global-clock`) cut
//! the database's work at the seed's load, as the seed's mongotop figures say?
//!
//! The verdict follows from three parts ([`claims::PartSpec::EVERY`]) on SQLite, and the
//! same three on PostgreSQL (`postgres/...`, `lease-postgres.toml`) where they were
//! measured, all six declared once in [`claims::registry`], each a paired
//! comparison of `global-clock` against `txn-log` at the seed's load
//! (`lease-seed-load.toml`: 500 leases extended every 30 s of simulated time, one
//! worker): the store's busy time on the leases and on the transaction machinery (the
//! seed's juju.leases and juju.txns, [`crate::busy`] maps the tables), and the bytes
//! written per extend. The answer says whether it depends on the store: a part's outcome
//! on SQLite against the same part's on PostgreSQL. Closed-loop extends/s (`lease.toml`), `sql-update` (today's store),
//! rows per extend (fixed by each store's code: the design's, not an effect) and group
//! commit on durable commits (`lease-durable.toml`) stay as details and decide nothing.
//! Not here: running, rendering, the comparisons' cells ([`claims`]).

pub mod claims;
#[cfg(test)]
mod tests;

use harness::CellRecord;
use verdict::decide::{Outcome, Part};
use verdict::findings::{Answer, Basis, Chart, Run, Table, Verdict};
use verdict::judge::{extra, find, si, times, too_few, variants_of, widest, Est};
use verdict::registry::Parts;

pub use claims::registry;
use claims::{
    seed_ratio, PartSpec, Store, AFTER, BEFORE, BUSY_TIME_LEASES, BYTES_PER_EXTEND, POSTGRES_LOAD,
    SEED_LOAD, SERVER_CPU_PER_EXTEND,
};

/// The seed's question as `lab` asks it of lease: its words, its parts and its answer.
pub const QUESTION: verdict::Question = verdict::Question {
    hot_path: &crate::LeaseHotPath,
    words: "Does the global clock cut the store's busy time on the leases \
                            and on the transactions, and the bytes written per extend, at \
                            the seed's load (one conditional update per extend instead of a \
                            transaction writing the namespace's clock and a log)?",
    claims: |planned| registry(planned.seeds()).claims(planned),
    answer,
};

/// How the seed's collections map onto the stores' tables, and what that leaves out.
const MAPPING: &str = "Busy time is the store's time in its statements per table, sleeps in \
     SQLite's busy handler left out: juju.leases is the `lease` table and `txn-log`'s \
     namespace `clock` row (Juju 2.2 kept each namespace's clock document in the leases \
     collection); juju.txns is `txns`, `txn_log` and every transaction's BEGIN and COMMIT \
     (mgo/txn's documents; `global-clock`'s update is still a transaction). The global \
     clock's ticker runs in no session (Juju 2.3 kept it in a collection of its own) and \
     counts only in the bytes. SQLite has one writer for the whole file, so the namespace \
     clock row is no hot spot of its own here as the clock document was in MongoDB: the \
     leases part weighs the rows' work, at one worker.";

/// What PostgreSQL's time per table counts, beside [`MAPPING`].
const POSTGRES_MAPPING: &str = "On PostgreSQL a table's time is pg_stat_statements' execution \
     time of the workers' statements on it (the lab's own queries and the global clock's \
     ticker run as another role, in nobody's time): it includes a statement's wait for a row \
     lock (`txn-log`'s writers queue on the namespace clock row; `lock_wait_ms_per_s` samples \
     those waits) and leaves out each commit's WAL flush, which follows COMMIT's execution \
     (`wal_sync_ms_per_s`); bytes per extend are the WAL written in the window. Like for \
     like, the server's own CPU time per extend (every PostgreSQL process, read from /proc: \
     `server_cpu_us_per_extend`) counts the work each store asks of the server, neither the \
     lock waits nor the flushes (both off CPU).";

/// The answer of `run`; `None` without lease cells.
pub fn answer(run: &Run<'_>) -> Option<Answer> {
    let rows = run.of_file("lease");
    let durable = run.of_file("lease-durable");
    let load = run.of_file(SEED_LOAD);
    let postgres = run.of_file(POSTGRES_LOAD);
    if rows.is_empty() && durable.is_empty() && load.is_empty() && postgres.is_empty() {
        return None;
    }
    let registry = registry(run.seeds());
    let parts = registry.parts(run);
    let of = |store: Store| -> Vec<&Part> {
        PartSpec::EVERY
            .iter()
            .map(|spec| parts.get(&store.part(spec)))
            .collect()
    };
    let (sqlite, on_postgres) = (of(Store::Sqlite), of(Store::Postgres));
    let postgres_measured = on_postgres.iter().any(|p| p.ratio.is_some());
    // PostgreSQL's parts weigh in the verdict once measured: a machine without it keeps
    // the verdict SQLite's parts give.
    // Sizes only weigh nothing, as in `Finding::new`.
    let outcomes: Vec<Outcome> = sqlite
        .iter()
        .chain(on_postgres.iter().filter(|p| p.ratio.is_some()))
        .filter(|p| p.decides())
        .map(|p| p.outcome)
        .collect();
    let sentence = |store: Store, spec: &PartSpec| {
        let cells = match store {
            Store::Sqlite => &load,
            Store::Postgres => &postgres,
        };
        part_sentence(run, spec, parts.get(&store.part(spec)), cells)
    };
    let mut sentences = Vec::new();
    let mut store_details = Vec::new();
    for spec in &PartSpec::EVERY {
        // With PostgreSQL measured, at most three sentences: the two busy-time parts on
        // SQLite and whether the answer depends on the store; the bytes unfold.
        if postgres_measured && spec.name == BYTES_PER_EXTEND.name {
            store_details.push(sentence(Store::Sqlite, spec));
        } else {
            sentences.push(sentence(Store::Sqlite, spec));
        }
    }
    if postgres_measured {
        sentences.push(store_sentence(&parts));
        store_details.extend(
            PartSpec::EVERY
                .iter()
                .chain([&SERVER_CPU_PER_EXTEND])
                .map(|spec| format!("On PostgreSQL: {}", sentence(Store::Postgres, spec))),
        );
        store_details.push(POSTGRES_MAPPING.to_owned());
    } else {
        store_details.push(format!(
            "On PostgreSQL ({POSTGRES_LOAD}.toml) the parts were not measured: {}",
            // Every PostgreSQL part lacks its sides for the same reason.
            parts.get(&Store::Postgres.part(&BUSY_TIME_LEASES)).why
        ));
    }
    let figure = parts
        .all()
        .iter()
        .filter(|p| p.ratio.is_some())
        .map(|p| format!("{} {}", p.name, p.figure()))
        .collect::<Vec<_>>()
        .join("; ");
    let mut details = store_details;
    if let Some(why) = load_detail(&load) {
        details.push(why);
        details.push(MAPPING.to_owned());
    }
    details.extend(closed_loop_details(&rows));
    if let Some(why) = group_commit_detail(&durable) {
        details.push(why);
    }
    for (file, cells) in [
        (SEED_LOAD, &load),
        (POSTGRES_LOAD, &postgres),
        ("lease", &rows),
        ("lease-durable", &durable),
    ] {
        if let Some(why) = too_few(cells) {
            details.push(format!(
                "{file}.toml: {why} (context only: the parts are pairs)."
            ));
        }
    }
    Some(Answer {
        parts: parts.into_vec(),
        verdict: Verdict::of_outcomes(&outcomes),
        basis: Basis::Measured,
        calibrated_on: Vec::new(),
        figure: if figure.is_empty() {
            figure
        } else {
            format!("`{AFTER}` / `{BEFORE}` at the seed's load: {figure}")
        },
        sentences,
        details,
        tables: [
            seed_load_table(&load, SEED_LOAD),
            seed_load_table(&postgres, POSTGRES_LOAD),
            stores_table(&rows),
        ]
        .into_iter()
        .filter(|t| !t.rows.is_empty())
        .collect(),
        chart: Some(Chart::Throughput {
            file: "lease".into(),
        }),
    })
}

/// Whether the answer depends on the store: each part measured on both, its outcome on
/// SQLite against PostgreSQL.
fn store_sentence(parts: &Parts<'_, '_>) -> String {
    let (mut same, mut differ) = (Vec::new(), Vec::new());
    for spec in &PartSpec::EVERY {
        let s = parts.get(&Store::Sqlite.part(spec));
        let p = parts.get(&Store::Postgres.part(spec));
        if s.ratio.is_none() || p.ratio.is_none() {
            continue;
        }
        let text = format!(
            "`{}` {} {} on SQLite, {} {} on PostgreSQL",
            s.name,
            s.outcome.word(),
            s.figure(),
            p.outcome.word(),
            p.figure()
        );
        if s.outcome == p.outcome {
            same.push(text);
        } else {
            differ.push(text);
        }
    }
    match (differ.is_empty(), same.is_empty()) {
        (true, true) => {
            "Whether the answer depends on the store cannot be told: no part was measured on both."
                .to_owned()
        }
        (true, false) => format!(
            "The answer does not depend on the store: {}.",
            same.join("; ")
        ),
        (false, true) => format!("The answer depends on the store: {}.", differ.join("; ")),
        (false, false) => format!(
            "The answer depends on the store for some parts: {}; not for {}.",
            differ.join("; "),
            same.join("; ")
        ),
    }
}

/// One part's sentence: its outcome and figure beside the seed's, with the cells'
/// medians as context where the run has them.
fn part_sentence(run: &Run<'_>, spec: &PartSpec, part: &Part, load: &[&CellRecord]) -> String {
    let seed = match seed_ratio(spec, run.seeds()) {
        Some((before, after)) => format!(
            "; the seed's {}: {before:.0} -> {after:.0} ms, {:.2}x",
            spec.collection,
            after / before
        ),
        None => "; the seed did not measure it".to_owned(),
    };
    let (what, unit) = spec.heading;
    let context = match cell_pair(load) {
        Some((after, before)) => match (extra(after, spec.figure), extra(before, spec.figure)) {
            (Some(a), Some(b)) => format!("; cells {}{unit} against {}{unit}", si(a), si(b)),
            _ => String::new(),
        },
        None => String::new(),
    };
    // A band's contradiction has two sides, and they mean different things: wholly
    // below its lower threshold is a deeper cut than the seed's.
    let side = match (part.outcome, part.high, part.thresholds.first()) {
        (verdict::decide::Outcome::Contradicted, Some(high), Some(&low)) if high < low => {
            " (a cut far deeper than the seed's)"
        }
        (verdict::decide::Outcome::Contradicted, _, _) => {
            " (less of a cut than the seed's, or none)"
        }
        _ => "",
    };
    format!(
        "{what} (`{}`), `{AFTER}` / `{BEFORE}` at the seed's load: {}{side}, {}{context}{seed}.",
        part.name,
        part.outcome.word(),
        part.figure()
    )
}

/// The seed load's `global-clock` and `txn-log` cells at the fewest threads of its most
/// cores, for context.
fn cell_pair<'a>(load: &[&'a CellRecord]) -> Option<(&'a CellRecord, &'a CellRecord)> {
    let (cores, threads) = widest(load)?;
    let t = *threads.first()?;
    Some((find(load, AFTER, t, cores)?, find(load, BEFORE, t, cores)?))
}

/// Whether each store kept the seed's rate: a store behind it keeps the database busy for
/// the whole window whatever its design, and its busy time reads capacity, not cost.
/// Operations exclude idle steps (a leader dying, some 5% of the paced steps), so a
/// store on schedule does about 0.95 of the rate; below 0.85 it is behind.
fn load_detail(load: &[&CellRecord]) -> Option<String> {
    let behind: Vec<String> = load
        .iter()
        .filter_map(|r| {
            let paced = extra(r, "paced_ops_per_sec")?;
            (r.ops_per_sec < 0.85 * paced).then(|| {
                format!(
                    "`{}` did {} of the {} operations/s asked",
                    r.variant,
                    si(r.ops_per_sec),
                    si(paced)
                )
            })
        })
        .collect();
    if behind.is_empty() {
        let paced = load.iter().find_map(|r| extra(r, "paced_ops_per_sec"))?;
        Some(format!(
            "{SEED_LOAD}.toml: every store kept the seed's rate ({} operations/s).",
            si(paced)
        ))
    } else {
        Some(format!(
            "{SEED_LOAD}.toml: {}: behind the seed's rate, so its busy time is capped by \
             the window.",
            behind.join(", ")
        ))
    }
}

/// Closed-loop extends/s and rows per extend of `sql-update` against `txn-log`, at the
/// most threads of `lease.toml`: context, not a part.
fn closed_loop_details(rows: &[&CellRecord]) -> Vec<String> {
    let Some((cores, threads)) = widest(rows) else {
        return Vec::new();
    };
    let max_t = *threads.last().unwrap_or(&1);
    let mut out = Vec::new();
    for other in [AFTER, crate::Design::SqlUpdate.name()] {
        if let (Some(txn), Some(o)) = (
            find(rows, BEFORE, max_t, cores),
            find(rows, other, max_t, cores),
        ) {
            out.push(format!(
                "Closed loop (lease.toml, context only) at {max_t} threads on {cores} cores: \
                 `{other}` does {} extends/s against {} for `{BEFORE}` ({}); it writes {} \
                 rows per extend against {} by design (the stores' code fixes them){}.",
                Est::of(o).text(),
                Est::of(txn).text(),
                times(o, txn, ""),
                number(extra(o, "writes_per_extend")),
                number(extra(txn, "writes_per_extend")),
                match (extra(o, "bytes_per_extend"), extra(txn, "bytes_per_extend")) {
                    (Some(u), Some(t)) if u > 0.0 && t > 0.0 => format!(
                        "; {} against {} bytes written per extend ({:.2}x)",
                        si(u),
                        si(t),
                        u / t
                    ),
                    _ => String::new(),
                }
            ));
        }
    }
    out
}

/// Group commit with durable commits (`lease-durable.toml`): a detail the seed did not ask.
fn group_commit_detail(durable: &[&CellRecord]) -> Option<String> {
    let (cores, threads) = widest(durable)?;
    let max_t = *threads.last().unwrap_or(&1);
    let txn = find(durable, BEFORE, max_t, cores)?;
    let batched = find(durable, crate::Design::Batched.name(), max_t, cores)?;
    Some(format!(
        "Group commit (`batched`) with durable commits at {max_t} threads: {} extends/s, {}{}.",
        Est::of(batched).text(),
        times(batched, txn, &format!("`{BEFORE}`")),
        extra(batched, "batch_size_mean")
            .map_or(String::new(), |m| format!(", mean group {m:.1} extends"))
    ))
}

fn number(v: Option<f64>) -> String {
    v.map_or("?".to_owned(), |v| format!("{v:.1}"))
}

/// Every store at the seed's load: busy time per seed collection, bytes and rows per
/// extend, operations per second (the medians' repetitions; context for the parts).
fn seed_load_table(load: &[&CellRecord], file: &str) -> Table {
    let Some((cores, threads)) = widest(load) else {
        return Table::default();
    };
    let Some(&t) = threads.first() else {
        return Table::default();
    };
    let cell = |r: &CellRecord, key: &str| extra(r, key).map_or("-".to_owned(), si);
    // A database server's own figures where its cells have them (PostgreSQL): the work
    // each store asks of the server, like for like (its CPU per extend), and apart from
    // it the row-lock waits and the commits' WAL flushes its busy time mixes in.
    let server: Vec<(&str, &str)> = [
        ("server CPU us per extend", "server_cpu_us_per_extend"),
        ("row-lock wait ms/s", "lock_wait_ms_per_s"),
        ("WAL flush ms/s", "wal_sync_ms_per_s"),
    ]
    .into_iter()
    .filter(|(_, key)| load.iter().any(|r| extra(r, key).is_some()))
    .collect();
    Table {
        title: format!(
            "Every store at the seed's load ({file}.toml), {t} thread(s) on {cores} cores"
        ),
        columns: [
            "store",
            "leases busy ms/s",
            "txns busy ms/s",
            "bytes per extend",
            "rows per extend (design)",
            "operations/s",
        ]
        .into_iter()
        .chain(server.iter().map(|(title, _)| *title))
        .map(str::to_owned)
        .collect(),
        rows: variants_of(load)
            .into_iter()
            .filter_map(|v| find(load, v, t, cores))
            .map(|r| {
                vec![
                    format!("`{}`", r.variant),
                    cell(r, "busy_ms_per_s_leases"),
                    cell(r, "busy_ms_per_s_txns"),
                    cell(r, "bytes_per_extend"),
                    number(extra(r, "writes_per_extend")),
                    si(r.ops_per_sec),
                ]
                .into_iter()
                .chain(server.iter().map(|(_, key)| cell(r, key)))
                .collect()
            })
            .collect(),
    }
}

/// Extends/s per store at each thread count of the widest core count (closed loop).
fn stores_table(rows: &[&CellRecord]) -> Table {
    let Some((cores, threads)) = widest(rows) else {
        return Table::default();
    };
    Table {
        title: format!("Closed-loop extends/s per store on {cores} cores (lease.toml)"),
        columns: std::iter::once("store".to_owned())
            .chain(threads.iter().map(|t| format!("{t} threads")))
            .chain(std::iter::once("rows per extend (design)".to_owned()))
            .collect(),
        rows: variants_of(rows)
            .into_iter()
            .map(|v| {
                std::iter::once(format!("`{v}`"))
                    .chain(threads.iter().map(|&t| {
                        find(rows, v, t, cores).map_or("-".to_owned(), |c| Est::of(c).text())
                    }))
                    .chain(std::iter::once(number(
                        rows.iter()
                            .find(|c| c.variant == v)
                            .and_then(|c| extra(c, "writes_per_extend")),
                    )))
                    .collect()
            })
            .collect(),
    }
}

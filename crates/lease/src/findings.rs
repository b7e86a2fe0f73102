//! Seed 001's question, asked of a run: does one conditional UPDATE per extend (instead of
//! a five-write transaction) cut the writes and raise extends/s, and does group commit pay?
//!
//! What is measured and what is built in are kept apart. Rows per extend (5 for `txn-log`,
//! 1 for `sql-update`) are fixed by each store's code: the design's, not an effect, and
//! said so. Measured: extends/s (judged with intervals at [`harness::judge::MIN_REPS`]
//! repetitions or more: the verdict's one part, at the most threads of `lease.toml`), and
//! the bytes each extend wrote (from the process's write accounting, a median without an
//! interval, so shown but not judged). Group commit (`batched`) on durable commits is a
//! detail: the seed did not ask it. The seed's own figures (mongotop's time in
//! `juju.leases`) come from `lease.toml`'s `[seed]` table. Not here: running, rendering.

use harness::findings::{Answer, Basis, Chart, Run, Table, Verdict};
use harness::judge::{extra, find, si, times, too_few, variants_of, widest, Est};
use harness::RunRecord;

/// The question, in the user's words.
pub const QUESTION: &str = "Does one conditional UPDATE per extend (instead of a five-write \
                            transaction) cut the writes and raise extends/s, and does group \
                            commit pay?";

/// The answer of `run`; `None` without lease cells.
pub fn answer(run: &Run<'_>) -> Option<Answer> {
    let rows = run.of_file("lease");
    let durable = run.of_file("lease-durable");
    if rows.is_empty() && durable.is_empty() {
        return None;
    }
    let mut sentences = Vec::new();
    let mut details = Vec::new();
    let mut figure = String::new();
    let mut faster = None;
    if let Some((cores, threads)) = widest(&rows) {
        let max_t = *threads.last().unwrap_or(&1);
        if let (Some(txn), Some(update)) = (
            find(&rows, "txn-log", max_t, cores),
            find(&rows, "sql-update", max_t, cores),
        ) {
            faster = Est::of(update).above(&Est::of(txn));
            figure = format!(
                "`sql-update` / `txn-log` {:.2}x extends/s at {max_t} threads",
                Est::of(update).ratio(&Est::of(txn))
            );
            sentences.push(format!(
                "At {max_t} threads on {cores} cores `sql-update` does {} extends/s against {} \
                 for `txn-log` ({}).",
                Est::of(update).text(),
                Est::of(txn).text(),
                times(update, txn, "")
            ));
            sentences.push(format!(
                "It writes {} rows per extend against {} by design (the stores' code fixes \
                 them){}.",
                number(extra(update, "writes_per_extend")),
                number(extra(txn, "writes_per_extend")),
                match (
                    extra(update, "bytes_per_extend"),
                    extra(txn, "bytes_per_extend")
                ) {
                    (Some(u), Some(t)) if u > 0.0 && t > 0.0 => format!(
                        "; measured, {} against {} bytes written per extend ({:.2}x)",
                        si(u),
                        si(t),
                        u / t
                    ),
                    _ => String::new(),
                }
            ));
        }
    }
    if let Some(why) = seed_text(run) {
        details.push(why);
    }
    if let Some((cores, threads)) = widest(&durable) {
        let max_t = *threads.last().unwrap_or(&1);
        if let (Some(txn), Some(batched)) = (
            find(&durable, "txn-log", max_t, cores),
            find(&durable, "batched", max_t, cores),
        ) {
            details.push(format!(
                "Group commit (`batched`) with durable commits at {max_t} threads: {} \
                 extends/s, {}{}.",
                Est::of(batched).text(),
                times(batched, txn, "`txn-log`"),
                extra(batched, "batch_size_mean")
                    .map_or(String::new(), |m| format!(", mean group {m:.1} extends"))
            ));
        }
    }
    for (file, cells) in [("lease", &rows), ("lease-durable", &durable)] {
        if let Some(why) = too_few(cells) {
            details.push(format!("{file}.toml: {why}."));
        }
    }
    Some(Answer {
        parts: Vec::new(),
        verdict: Verdict::of_parts(&[faster]),
        basis: Basis::Measured,
        calibrated_on: Vec::new(),
        figure,
        sentences,
        details,
        tables: vec![stores_table(&rows)],
        chart: Some(Chart::Throughput {
            file: "lease".into(),
        }),
    })
}

fn number(v: Option<f64>) -> String {
    v.map_or("?".to_owned(), |v| format!("{v:.1}"))
}

/// The seed's before/after, from the `[seed]` table.
fn seed_text(run: &Run<'_>) -> Option<String> {
    let before = run.seed_f64("lease", "leases_ms_before")?;
    let after = run.seed_f64("lease", "leases_ms_after")?;
    Some(format!(
        "The seed: mongotop's time in juju.leases over five samples went from {before:.0} ms to \
         {after:.0} ms ({:.2}x) with the patch, on a loaded HA controller.",
        after / before
    ))
}

/// Extends/s per store at each thread count of the widest core count.
fn stores_table(rows: &[&RunRecord]) -> Table {
    let Some((cores, threads)) = widest(rows) else {
        return Table::default();
    };
    Table {
        title: format!("Extends/s per store on {cores} cores"),
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use harness::testing::synthetic_cell;

    use super::*;

    fn cells(update: f64, txn: f64, reps: usize) -> Vec<RunRecord> {
        [("sql-update", update, 1.0), ("txn-log", txn, 5.0)]
            .iter()
            .map(|&(v, ops, rows)| {
                let mut c = synthetic_cell("lease", "lease", v, &[], 12, 2, ops, ops * 0.02, reps);
                c.extra
                    .insert("writes_per_extend".into(), serde_json::json!(rows));
                c
            })
            .collect()
    }

    fn verdict(cells: &[RunRecord]) -> Verdict {
        let seeds = BTreeMap::new();
        answer(&Run {
            cells,
            seeds: &seeds,
            comparisons: &[],
        })
        .unwrap()
        .verdict
    }

    #[test]
    fn faster_is_reproduced_slower_is_not_and_few_runs_cannot_tell() {
        assert_eq!(verdict(&cells(3000.0, 1000.0, 5)), Verdict::Reproduced);
        assert_eq!(verdict(&cells(1000.0, 1010.0, 5)), Verdict::NotReproduced);
        assert_eq!(verdict(&cells(3000.0, 1000.0, 2)), Verdict::CannotTell);
    }

    #[test]
    fn rows_per_extend_are_labelled_the_designs() {
        let seeds = BTreeMap::new();
        let c = cells(3000.0, 1000.0, 5);
        let a = answer(&Run {
            cells: &c,
            seeds: &seeds,
            comparisons: &[],
        })
        .unwrap();
        assert!(a.sentences.iter().any(|s| s.contains("by design")));
    }
}

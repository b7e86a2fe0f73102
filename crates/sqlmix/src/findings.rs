//! Seed 000's question, asked of a run: does the transaction semaphore help or hurt, and
//! what beats it (Juju on dqlite)?
//!
//! The seed's claim, like for like with its own settings (48 workers, mixed load), has two
//! parts, each judged with intervals at [`judge::MIN_REPS`] repetitions or more:
//! 1. the semaphore at Juju's own size (K = 24, the seed's "1.5k against 800") beats no
//!    semaphore;
//! 2. no semaphore with a small pool (2 connections, the seed's 3.3k) beats the semaphore.
//!
//! Where the run has cells of the real node (`backend=libdqlite`, `sqlmix-libdqlite.toml`)
//! they decide, basis `real`; otherwise the dqlite model (`backend=dqlite-model`) does,
//! basis `model`, with the parameter it was calibrated on named and the sensitivity file
//! (`sqlmix-dqlite-sensitivity.toml`) counted. Local SQLite is a control: it never decides.
//! The seed's figures and settings come from the `[seed]` table of `sqlmix-dqlite.toml`.
//! Not here: running cells, rendering.

use harness::findings::{Answer, Basis, Chart, Run, Table, Verdict};
use harness::judge::{best_of, param_text, si, times, too_few, values_of, widest, Est};
use harness::RunRecord;

/// The question, in the user's words.
pub const QUESTION: &str =
    "Does the transaction semaphore help or hurt, and what beats it (Juju on dqlite)?";

/// Backend words of the model: `dqlite` is what results files said before the real node
/// came (schema rule: they load as the model).
const MODEL: &[&str] = &["dqlite-model", "dqlite"];
/// The backend word of the real node.
const REAL: &str = "libdqlite";
/// Juju's semaphore size when the results carry no `[seed]` table ("24 to 12").
const SEED_SLOTS: &str = "24";
/// The seed's small pool ("SetMaxOpenConns ... 2").
const SEED_POOL: &str = "2";

/// The cells of one backend's comparisons: the K sweep and the pool sweep.
struct Side<'a> {
    basis: Basis,
    sweep: Vec<&'a RunRecord>,
    pools: Vec<&'a RunRecord>,
}

impl<'a> Side<'a> {
    fn semaphore(&self, slots: &str) -> Option<&'a RunRecord> {
        best_of(
            self.sweep
                .iter()
                .copied()
                .filter(|c| c.variant == "semaphore" && param_text(c, "slots") == slots),
        )
    }

    fn pool(&self, size: &str) -> Option<&'a RunRecord> {
        best_of(
            self.pools
                .iter()
                .copied()
                .filter(|c| c.variant == "pool" && param_text(c, "pool_size") == size),
        )
    }
}

fn of_backend<'a>(rows: &[&'a RunRecord], backends: &[&str]) -> Vec<&'a RunRecord> {
    rows.iter()
        .copied()
        .filter(|c| backends.contains(&param_text(c, "backend").as_str()))
        .collect()
}

/// The answer of `run`; `None` without any sqlmix cells that bear on the question.
pub fn answer(run: &Run<'_>) -> Option<Answer> {
    let seed = "sqlmix-dqlite";
    let seed_slots = run
        .seed_f64(seed, "default_slots")
        .map_or(SEED_SLOTS.to_owned(), |k| format!("{k}"));
    let real_rows = run.of_file("sqlmix-libdqlite");
    let real = Side {
        basis: Basis::Real,
        sweep: of_backend(&real_rows, &[REAL]),
        // The real node's pool sizes have a file of their own, as the model's do.
        pools: of_backend(
            &[real_rows.as_slice(), &run.of_file("sqlmix-libdqlite-pool")].concat(),
            &[REAL],
        ),
    };
    let model = Side {
        basis: Basis::Model,
        sweep: of_backend(&run.of_file("sqlmix-dqlite"), MODEL),
        pools: of_backend(&run.of_file("sqlmix-dqlite-pool"), MODEL),
    };
    let main = run.of_file("sqlmix");
    if real.sweep.is_empty() && model.sweep.is_empty() && main.is_empty() {
        return None;
    }
    let mut sentences = Vec::new();
    let mut details = Vec::new();
    let deciding = if real.semaphore(&seed_slots).is_some() {
        &real
    } else {
        &model
    };
    let (helps, small_pool) = parts(deciding, &seed_slots);
    let mut figure = String::new();
    for side in [&real, &model] {
        let (Some(k), Some(none)) = (side.semaphore(&seed_slots), side.semaphore("unlimited"))
        else {
            continue;
        };
        let text = format!(
            "{} ({}): K = {seed_slots} gives {} txn/s against {} without a semaphore, {}",
            side_name(side),
            side.basis.word(),
            Est::of(k).text(),
            Est::of(none).text(),
            times(k, none, "")
        );
        if std::ptr::eq(side, deciding) {
            figure = format!(
                "K = {seed_slots} / unlimited {:.2}x ({})",
                ratio_of(k, none),
                side.basis.word()
            );
            sentences.push(format!("{text}."));
        } else {
            details.push(format!("{text}."));
        }
    }
    if let Some(row) = deciding
        .semaphore(&seed_slots)
        .and_then(|k| k.locks.as_ref())
        .and_then(|rows| rows.iter().find(|r| r.name.contains("semaphore")))
    {
        details.push(format!(
            "The semaphore at K = {seed_slots} ran at {:.0}% of its own ceiling ({} txn/s: K / \
             mean hold), busy {:.0}% of the time.",
            row.ceiling_share.unwrap_or(f64::NAN) * 100.0,
            si(row.ceiling_ops_per_sec.unwrap_or(f64::NAN)),
            row.utilization.unwrap_or(f64::NAN) * 100.0
        ));
    }
    if let (Some(k), Some(p)) = (deciding.semaphore(&seed_slots), deciding.pool(SEED_POOL)) {
        sentences.push(format!(
            "No semaphore with a pool of {SEED_POOL}: {} txn/s, {}.",
            Est::of(p).text(),
            times(p, k, &format!("the semaphore at K = {seed_slots}"))
        ));
    }
    let seed_with = run.seed_f64(seed, "with_semaphore_txn_per_sec");
    let seed_without = run.seed_f64(seed, "without_semaphore_txn_per_sec");
    if let (Some(w), Some(wo)) = (seed_with, seed_without) {
        details.push(format!(
            "The seed: about {} txn/s with the semaphore (K = {seed_slots}) against {} without \
             ({:.1}x). A model's absolute rates follow from its parameters; only the direction \
             and the ratio are compared.",
            si(w),
            si(wo),
            w / wo
        ));
    }
    let calibrated_on = if deciding.basis == Basis::Model {
        run.seed_strs(seed, "calibrated_on")
    } else {
        Vec::new()
    };
    if deciding.basis == Basis::Model {
        if let Some(text) = sensitivity(&run.of_file("sqlmix-dqlite-sensitivity"), &seed_slots) {
            details.push(text);
        } else {
            details.push(
                "Sensitivity not in this run: `just matrix scenarios=sqlmix-dqlite-sensitivity` \
                 perturbs the model's chosen parameters."
                    .to_owned(),
            );
        }
    }
    if let Some(text) = control(&run.of_file("sqlmix-slots")) {
        details.push(text);
    }
    if let Some((cores, threads)) = widest(&main) {
        let max_t = *threads.last().unwrap_or(&1);
        let at = main
            .iter()
            .copied()
            .filter(|c| c.threads == max_t && c.cores == cores);
        if let (Some(best), Some(base)) = (
            best_of(at.clone()),
            best_of(at.filter(|c| c.variant == "semaphore")),
        ) {
            details.push(format!(
                "Runner variants on local SQLite at {max_t} threads on {cores} cores: best `{}` \
                 with {} txn/s, {}.",
                best.variant,
                Est::of(best).text(),
                times(best, base, "the seed's runner (`semaphore`)")
            ));
        }
    }
    for file in ["sqlmix-dqlite", "sqlmix-libdqlite"] {
        if let Some(why) = too_few(&run.of_file(file)) {
            details.push(format!("{file}.toml: {why}."));
        }
    }
    if deciding.sweep.is_empty() {
        sentences.insert(
            0,
            "No dqlite cells in this run: run benches/sqlmix-libdqlite.toml (the real node) or \
             benches/sqlmix-dqlite.toml (the model)."
                .to_owned(),
        );
    }
    Some(Answer {
        parts: Vec::new(),
        verdict: Verdict::of_parts(&[helps, small_pool]),
        basis: deciding.basis,
        calibrated_on,
        figure,
        sentences,
        details,
        tables: vec![sweep_table(&real, &model)],
        chart: Some(Chart::Sweep {
            file: if deciding.basis == Basis::Real {
                "sqlmix-libdqlite".into()
            } else {
                "sqlmix-dqlite".into()
            },
            param: "slots".into(),
        }),
    })
}

fn side_name(side: &Side<'_>) -> &'static str {
    match side.basis {
        Basis::Real => "The real dqlite node",
        _ => "The dqlite model",
    }
}

fn ratio_of(a: &RunRecord, b: &RunRecord) -> f64 {
    Est::of(a).ratio(&Est::of(b))
}

/// (the semaphore at the seed's K beats none, a small pool without one beats the semaphore).
fn parts(side: &Side<'_>, seed_slots: &str) -> (Option<bool>, Option<bool>) {
    let k = side.semaphore(seed_slots);
    let helps = k
        .zip(side.semaphore("unlimited"))
        .and_then(|(k, none)| Est::of(k).above(&Est::of(none)));
    let small_pool = k
        .zip(side.pool(SEED_POOL))
        .and_then(|(k, p)| Est::of(p).above(&Est::of(k)));
    (helps, small_pool)
}

/// In how many of the sensitivity file's perturbations the semaphore at the seed's K still
/// beats none.
fn sensitivity(rows: &[&RunRecord], seed_slots: &str) -> Option<String> {
    let key = |c: &RunRecord| {
        ["serve_us", "rtt_us", "commit_us"]
            .iter()
            .map(|p| format!("{p}={}", param_text(c, p)))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut perturbations: Vec<String> = Vec::new();
    for c in rows {
        let k = key(c);
        if !perturbations.contains(&k) {
            perturbations.push(k);
        }
    }
    let mut shown = 0;
    let mut judged = 0;
    for p in &perturbations {
        let at = |slots: &str| {
            rows.iter()
                .copied()
                .find(|c| key(c) == *p && param_text(c, "slots") == slots)
        };
        if let (Some(k), Some(none)) = (at(seed_slots), at("unlimited")) {
            if let Some(helps) = Est::of(k).above(&Est::of(none)) {
                judged += 1;
                shown += usize::from(helps);
            }
        }
    }
    (judged > 0).then(|| {
        format!(
            "Sensitivity: the semaphore at K = {seed_slots} beats none in {shown} of {judged} \
             perturbations of the model's chosen parameters (each at half and double: {}).",
            perturbations.join("; ")
        )
    })
}

/// The local-SQLite control: the best K against none.
fn control(rows: &[&RunRecord]) -> Option<String> {
    let sem: Vec<&RunRecord> = rows
        .iter()
        .copied()
        .filter(|c| c.variant == "semaphore")
        .collect();
    let none = best_of(
        sem.iter()
            .copied()
            .filter(|c| param_text(c, "slots") == "unlimited"),
    )?;
    let best = best_of(
        sem.iter()
            .copied()
            .filter(|c| param_text(c, "slots") != "unlimited"),
    )?;
    Some(format!(
        "Control on local SQLite (no serving thread), {} threads: the best K = {} gives {} \
         txn/s, {}.",
        best.threads,
        param_text(best, "slots"),
        Est::of(best).text(),
        times(best, none, "no semaphore")
    ))
}

/// txn/s per K (and per pool size) on the real node and on the model, side by side.
fn sweep_table(real: &Side<'_>, model: &Side<'_>) -> Table {
    let mut slots = values_of(&model.sweep, "slots");
    for s in values_of(&real.sweep, "slots") {
        if !slots.contains(&s) {
            slots.push(s);
        }
    }
    let cell = |c: Option<&RunRecord>| c.map_or("-".to_owned(), |c| Est::of(c).text());
    let mut rows: Vec<Vec<String>> = slots
        .iter()
        .filter(|s| *s != "-")
        .map(|s| {
            vec![
                format!("semaphore K = {s}"),
                cell(real.semaphore(s)),
                cell(model.semaphore(s)),
            ]
        })
        .collect();
    for size in ["2", "3", "64"] {
        if real.pool(size).is_some() || model.pool(size).is_some() {
            rows.push(vec![
                format!("no semaphore, pool {size}"),
                cell(real.pool(size)),
                cell(model.pool(size)),
            ]);
        }
    }
    Table {
        title: "txn/s at 48 threads, 80% reads: the real node against the model".into(),
        columns: vec![
            "runner".into(),
            "real (libdqlite)".into(),
            "model (dqlite-model)".into(),
        ],
        rows,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use harness::testing::synthetic_cell;
    use serde_json::json;

    use super::*;

    fn cell(
        file: &str,
        variant: &str,
        backend: &str,
        key: (&str, &str),
        ops: f64,
        reps: usize,
    ) -> RunRecord {
        synthetic_cell(
            "sqlmix",
            file,
            variant,
            &[("backend", json!(backend)), (key.0, json!(key.1))],
            48,
            2,
            ops,
            ops * 0.02,
            reps,
        )
    }

    fn answer_of(cells: &[RunRecord]) -> Answer {
        let mut seeds = BTreeMap::new();
        seeds.insert(
            "sqlmix-dqlite".to_owned(),
            json!({"default_slots": 24, "calibrated_on": ["serve_us = 200 (the seed's best K = 2)"]}),
        );
        answer(&Run {
            cells,
            seeds: &seeds,
            comparisons: &[],
        })
        .unwrap()
    }

    fn model(k24: f64, none: f64, pool2: f64, reps: usize) -> Vec<RunRecord> {
        vec![
            cell(
                "sqlmix-dqlite",
                "semaphore",
                "dqlite-model",
                ("slots", "24"),
                k24,
                reps,
            ),
            cell(
                "sqlmix-dqlite",
                "semaphore",
                "dqlite-model",
                ("slots", "unlimited"),
                none,
                reps,
            ),
            cell(
                "sqlmix-dqlite-pool",
                "pool",
                "dqlite-model",
                ("pool_size", "2"),
                pool2,
                reps,
            ),
        ]
    }

    #[test]
    fn the_seeds_shape_on_the_model_is_reproduced_and_names_its_calibration() {
        let a = answer_of(&model(1500.0, 800.0, 3300.0, 5));
        assert_eq!(a.verdict, Verdict::Reproduced);
        assert_eq!(a.basis, Basis::Model);
        assert_eq!(a.calibrated_on.len(), 1);
    }

    #[test]
    fn a_semaphore_that_only_costs_is_not_reproduced() {
        let a = answer_of(&model(700.0, 800.0, 600.0, 5));
        assert_eq!(a.verdict, Verdict::NotReproduced);
    }

    #[test]
    fn too_few_repetitions_cannot_tell_and_local_sqlite_never_decides() {
        let mut cells = model(1500.0, 800.0, 3300.0, 3);
        cells.push(cell(
            "sqlmix-slots",
            "semaphore",
            "local",
            ("slots", "2"),
            900.0,
            5,
        ));
        cells.push(cell(
            "sqlmix-slots",
            "semaphore",
            "local",
            ("slots", "unlimited"),
            500.0,
            5,
        ));
        assert_eq!(answer_of(&cells).verdict, Verdict::CannotTell);
    }

    #[test]
    fn the_real_node_decides_where_it_ran() {
        let mut cells = model(700.0, 800.0, 600.0, 5);
        cells.push(cell(
            "sqlmix-libdqlite",
            "semaphore",
            "libdqlite",
            ("slots", "24"),
            1500.0,
            5,
        ));
        cells.push(cell(
            "sqlmix-libdqlite",
            "semaphore",
            "libdqlite",
            ("slots", "unlimited"),
            800.0,
            5,
        ));
        let a = answer_of(&cells);
        assert_eq!(a.basis, Basis::Real);
        assert!(a.calibrated_on.is_empty());
        // The real node has no pool cells: that part cannot be told, the other shows.
        assert_eq!(a.verdict, Verdict::Partly);
    }
}

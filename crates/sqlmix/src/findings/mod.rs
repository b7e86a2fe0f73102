//! Seed 000's question, asked of a run: does the transaction semaphore help or hurt, and
//! what beats it (Juju on dqlite)?
//!
//! The question is the seed's system's, so its parts are the real dqlite node's
//! (`backend=libdqlite`), each decided by a paired comparison at the same threads and
//! cores ([`claims`]): K = 2 against no semaphore, a pool of 2 without a semaphore
//! against K = 2, three apps against one, and K = 2 against none with the client as slow
//! per statement as Juju's Go client (the node's gain from K = 2 depends on how long the
//! client holds a transaction inside the gate, which the answer states). Without the real
//! node every part is inconclusive and says to install it with `just setup`: the dqlite
//! model (`backend=dqlite-model`) and local SQLite appear in the details, labelled, with
//! what the model was calibrated on, and decide nothing.
//!
//! Not here: running cells or pairs, rendering.

pub mod claims;
pub mod context;
#[cfg(test)]
mod tests;

use harness::decide::{Outcome, Part};
use harness::findings::{Answer, Basis, Chart, Run, Verdict};
use harness::judge::{param_text, si, times, widest, Est};
use harness::RunRecord;

pub use claims::claims;
use claims::{PARTS, REAL, REAL_APPS, REAL_CLIENT, REAL_POOL};
use context::{hold_ms, Backend};

use crate::runner::Design;

/// The question, in the user's words.
pub const QUESTION: &str =
    "Does the transaction semaphore help or hurt, and what beats it (Juju on dqlite)?";

/// Backend words of the model: `dqlite` is what results files said before the real node
/// came (schema rule: they load as the model).
const MODEL: &[&str] = &["dqlite-model", "dqlite"];

fn of_backend<'a>(rows: Vec<&'a RunRecord>, backends: &[&str]) -> Vec<&'a RunRecord> {
    rows.into_iter()
        .filter(|c| backends.contains(&param_text(c, "backend").as_str()))
        .collect()
}

/// "1.93x [1.85-2.01], 32 pairs: shown", or the reason where no ratio was measured.
fn said(p: &Part) -> String {
    match p.ratio {
        Some(_) => format!("{} ({})", p.figure(), p.outcome.word()),
        None => format!("{}: {}", p.outcome.word(), p.why),
    }
}

/// The answer of `run`; `None` without any sqlmix cells that bear on the question and no
/// part declared.
pub fn answer(run: &Run<'_>) -> Option<Answer> {
    let files = [REAL, REAL_POOL, REAL_APPS, REAL_CLIENT];
    let real_rows: Vec<&RunRecord> = files.iter().flat_map(|f| run.of_file(f)).collect();
    let real = Backend::new(
        "real node (libdqlite)",
        &run.of_file(REAL),
        of_backend(real_rows, &["libdqlite"]),
    );
    let model_sweep = of_backend(run.of_file("sqlmix-dqlite"), MODEL);
    let model_rows: Vec<&RunRecord> = ["sqlmix-dqlite", "sqlmix-dqlite-pool", "sqlmix-dqlite-apps"]
        .iter()
        .flat_map(|f| run.of_file(f))
        .collect();
    let model = Backend::new(
        "dqlite model (dqlite-model, not the seed's system)",
        &model_sweep,
        of_backend(model_rows, MODEL),
    );
    let declared = run
        .comparisons
        .iter()
        .any(|m| PARTS.iter().any(|(n, _)| *n == m.claim.part));
    let main = run.of_file("sqlmix");
    if real.cells.is_empty() && model.cells.is_empty() && main.is_empty() && !declared {
        return None;
    }
    let parts: Vec<Part> = PARTS.iter().map(|(n, c)| run.part(n, c)).collect();
    let outcomes: Vec<Outcome> = parts.iter().map(|p| p.outcome).collect();
    let (k2, pool2, apps, juju) = (&parts[0], &parts[1], &parts[2], &parts[3]);
    let client_us = run
        .of_file(REAL_CLIENT)
        .iter()
        .map(|c| param_text(c, "client_us"))
        .find(|v| v != "0" && v != "-")
        .unwrap_or_else(|| "?".to_owned());

    let mut sentences = Vec::new();
    let mut details = Vec::new();
    let mut calibrated_on = Vec::new();
    match real.semaphore("2").or(real.cells.first().copied()) {
        Some(cell) => sentences.push(format!(
            "On the real dqlite node ({}), K = 2 against no semaphore: {}; no semaphore with a \
             pool of 2 against K = 2: {}; 3 apps against 1: {}.",
            context::setup(cell),
            said(k2),
            said(pool2),
            said(apps)
        )),
        None => sentences.push(
            "The real dqlite node did not run here, so the seed's question cannot be told on \
             its own system and every part is inconclusive: install the node with `just \
             setup` (libdqlite0) and rerun `just matrix`."
                .to_owned(),
        ),
    }
    let ours = real.semaphore("2").and_then(hold_ms);
    let slowed = real.slowed("2").and_then(hold_ms);
    let go_ms = run.seed_f64(REAL_CLIENT, "go_client_ms_per_txn");
    let go_gain = run.seed_f64(REAL_CLIENT, "go_client_k2_gain");
    let go = match (go_ms, go_gain) {
        (Some(ms), Some(g)) => format!(
            " (a Go client on go-dqlite over TCP, Juju's stack, measured {ms:.2} ms and \
             {g:.2}x)"
        ),
        _ => String::new(),
    };
    let ms = |v: Option<f64>| v.map_or("-".to_owned(), |v| format!("{v:.2} ms"));
    if ours.is_some() || slowed.is_some() || juju.ratio.is_some() {
        sentences.push(format!(
            "The node's gain from K = 2 depends on how long the client holds a transaction \
             inside the gate (K / txn/s at K = 2): {} for this lab's client, {} with {client_us} \
             us more per statement{go}; there K = 2 against no semaphore: {}.",
            ms(ours),
            ms(slowed),
            said(juju)
        ));
    } else {
        details.push(format!("K = 2 at a Juju-like client time: {}.", said(juju)));
    }
    if !run.of_file(REAL_CLIENT).is_empty() {
        calibrated_on.extend(
            run.seed_strs(REAL_CLIENT, "calibrated_on")
                .into_iter()
                .map(|c| format!("{JUJU}: {c}", JUJU = claims::JUJU_CLIENT)),
        );
    }
    if let Some(text) = context::side_figures(&model) {
        details.push(text);
        calibrated_on.extend(
            run.seed_strs("sqlmix-dqlite", "calibrated_on")
                .into_iter()
                .map(|c| format!("dqlite model (details only): {c}")),
        );
        if real.semaphore("2").is_none() {
            sentences.push(
                "The dqlite model's figures are in the details, labelled, and decide nothing: \
                 it is not the seed's system."
                    .to_owned(),
            );
        }
        details.push(
            context::sensitivity(&run.of_file("sqlmix-dqlite-sensitivity"), "24").unwrap_or_else(
                || {
                    "Sensitivity of the model not in this run: `just matrix \
                     scenarios=sqlmix-dqlite-sensitivity` perturbs its chosen parameters."
                        .to_owned()
                },
            ),
        );
    }
    if let Some(text) = context::side_figures(&real) {
        details.push(text);
    }
    if let Some(row) = real
        .semaphore("2")
        .and_then(|k| k.locks.as_ref())
        .and_then(|rows| rows.iter().find(|r| r.name.contains("semaphore")))
    {
        details.push(match (row.ceiling_share, row.ceiling_ops_per_sec) {
            (Some(share), Some(ceiling)) => format!(
                "The real node's semaphore at K = 2 ran at {:.0}% of its capacity ({} txn/s: K \
                 over the hold measured alone), busy {:.0}% of the time.",
                share * 100.0,
                si(ceiling),
                row.utilization.unwrap_or(f64::NAN) * 100.0
            ),
            _ => format!(
                "The real node's semaphore at K = 2 was busy {:.0}% of the time (its capacity \
                 needs a 1-thread cell, which this file does not run).",
                row.utilization.unwrap_or(f64::NAN) * 100.0
            ),
        });
    }
    let disk = of_backend(run.of_file("sqlmix-libdqlite-disk"), &["libdqlite"]);
    let on_disk = Backend::new("real node, Raft log on disk", &disk, disk.clone());
    if let (Some(k), Some(none)) = (on_disk.semaphore("2"), on_disk.semaphore("unlimited")) {
        details.push(format!(
            "With its Raft log on disk ({}): K = 2 {} (cell medians).",
            context::setup(k),
            times(k, none, "no semaphore")
        ));
    }
    if let (Some(w), Some(wo)) = (
        run.seed_f64("sqlmix-dqlite", "with_semaphore_txn_per_sec"),
        run.seed_f64("sqlmix-dqlite", "without_semaphore_txn_per_sec"),
    ) {
        details.push(format!(
            "The seed: about {} txn/s with Juju's semaphore (K = 24) against {} without \
             ({:.1}x), {} at K = 2, {} with a pool of 2 and no semaphore. Absolute rates differ \
             by machine and client; the parts compare ratios.",
            si(w),
            si(wo),
            w / wo,
            run.seed_f64("sqlmix-dqlite", "best_txn_per_sec")
                .map_or("-".into(), si),
            run.seed_f64("sqlmix-dqlite", "small_pool_txn_per_sec")
                .map_or("-".into(), si),
        ));
    }
    if let Some(text) = context::control(&run.of_file("sqlmix-slots")) {
        details.push(text);
    }
    if let Some(text) = runner_variants(&main) {
        details.push(text);
    }
    let verdict = Verdict::of_outcomes(&outcomes);
    Some(Answer {
        verdict,
        figure: k2
            .ratio
            .map(|_| format!("K = 2 / unlimited on the real node: {}", k2.figure()))
            .unwrap_or_default(),
        parts,
        basis: Basis::Real,
        calibrated_on,
        sentences,
        details,
        tables: vec![context::sweep_table(&real, &model, &client_us)],
        chart: Some(Chart::Sweep {
            file: if real.cells.is_empty() && !model.cells.is_empty() {
                "sqlmix-dqlite".into()
            } else {
                REAL.into()
            },
            param: "slots".into(),
        }),
    })
}

/// The runner designs on local SQLite at the widest point, against the seed's runner there.
fn runner_variants(main: &[&RunRecord]) -> Option<String> {
    let (cores, threads) = widest(main)?;
    let t = *threads.last()?;
    let at: Vec<&RunRecord> = main
        .iter()
        .copied()
        .filter(|c| c.threads == t && c.cores == cores)
        .collect();
    let base = at
        .iter()
        .copied()
        .find(|c| c.variant == Design::Semaphore.name())?;
    let each: Vec<String> = at
        .iter()
        .filter(|c| c.variant != Design::Semaphore.name())
        .map(|c| format!("`{}` {}", c.variant, times(c, base, "")))
        .collect();
    (!each.is_empty()).then(|| {
        format!(
            "Runner designs on local SQLite at {t} threads on {cores} CPUs against the seed's \
             runner (`semaphore`, {} txn/s): {} (cell medians).",
            Est::of(base).text(),
            each.join(", ")
        )
    })
}

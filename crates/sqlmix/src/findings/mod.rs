//! Seed 000's question, asked of a run: does the transaction semaphore help or hurt, and
//! what beats it (Juju on dqlite)?
//!
//! The question is the seed's system's, so its parts are the real dqlite node's
//! (`backend=libdqlite`), each declared once in [`registry`] and decided by a paired
//! comparison at the same threads and cores: K = 2 against no semaphore, a pool of 2 without a semaphore
//! against K = 2, three apps against one, the first two again with Juju's own client
//! stack (`go-client/*`: a Go program on go-dqlite under `database/sql`, on the same
//! node), K = 2 against none with the lab's stand-in for that client (its own client
//! slowed by a constant calibrated on another machine: a model), and reads/s at 50%
//! writes against all reads. The node's gain from K = 2 depends on how long the client
//! holds a transaction inside the gate, so the answer puts both clients' answers side by
//! side with each one's time in the gate per transaction (`gate_ms_per_txn`). Without the real
//! node every part is inconclusive and says to install it with `just setup`: the dqlite
//! model (`backend=dqlite-model`) and local SQLite appear in the details, labelled, with
//! what the model was calibrated on, and decide nothing.
//!
//! Not here: running cells or pairs, rendering.

pub mod claims;
pub mod context;
#[cfg(test)]
mod tests;

use harness::CellRecord;
use verdict::decide::Part;
use verdict::findings::{Answer, Basis, Chart, Run, Table, Verdict};
use verdict::judge::{param_text, si, times, widest, Est};
use verdict::registry::Parts;

pub use claims::registry;
use claims::{
    APPS, GO_K2, GO_POOL2, GO_SEED_K2, JUJU_CLIENT, K2, POOL2, REAL, REAL_APPS, REAL_CLIENT,
    REAL_GO, REAL_GO_POOL, REAL_GO_SEED, REAL_POOL, REAL_WRITES, WRITES,
};
use context::{hold_ms, Backend};

use crate::runner::Design;

/// The seed's question as `lab` asks it of sqlmix: its words, its parts and its answer.
pub const QUESTION: verdict::Question = verdict::Question {
    hot_path: &crate::SqlmixHotPath,
    words: "Does the transaction semaphore help or hurt, and what beats it (Juju on dqlite)?",
    claims: |planned| registry().claims(planned),
    answer,
};

/// Backend words of the model: `dqlite` is what results files said before the real node
/// came (schema rule: they load as the model).
const MODEL: &[&str] = &["dqlite-model", "dqlite"];

fn of_backend<'a>(rows: Vec<&'a CellRecord>, backends: &[&str]) -> Vec<&'a CellRecord> {
    rows.into_iter()
        .filter(|c| backends.contains(&param_text(c, "backend").as_str()))
        .collect()
}

/// "1.93x [1.85-2.01], 32 pairs (shown)", or the reason where no ratio was measured: a
/// part's clause in the answer's sentences, shorter than [`verdict::registry::Parts::said`]
/// where a part is undecided (its reason stays in the parts table).
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
    let real_rows: Vec<&CellRecord> = files.iter().flat_map(|f| run.of_file(f)).collect();
    let real = Backend::new(
        "real node (libdqlite)",
        &run.of_file(REAL),
        of_backend(real_rows, &["libdqlite"]),
    );
    let model_sweep = of_backend(run.of_file("sqlmix-dqlite"), MODEL);
    let model_rows: Vec<&CellRecord> =
        ["sqlmix-dqlite", "sqlmix-dqlite-pool", "sqlmix-dqlite-apps"]
            .iter()
            .flat_map(|f| run.of_file(f))
            .collect();
    let model = Backend::new(
        "dqlite model (dqlite-model, not the seed's system)",
        &model_sweep,
        of_backend(model_rows, MODEL),
    );
    let registry = registry();
    let declared = registry.declared_in(run);
    let main = run.of_file("sqlmix");
    let go_rows: Vec<&CellRecord> = [REAL_GO, REAL_GO_POOL]
        .iter()
        .flat_map(|f| run.of_file(f))
        .collect();
    let writes_rows = run.of_file(REAL_WRITES);
    let none_ran = real.cells.is_empty()
        && model.cells.is_empty()
        && main.is_empty()
        && go_rows.is_empty()
        && writes_rows.is_empty();
    if none_ran && !declared {
        return None;
    }
    let mut parts = registry.parts(run);
    // The stand-in is a model whether or not this run measured it: a run recorded before
    // its claim carried the basis still says so.
    parts.get_mut(JUJU_CLIENT).basis = "model".to_owned();
    // The verdict rests on the parts that decide, never on a size.
    let outcomes = parts.deciding_outcomes();
    let said = |name: &str| said(parts.get(name));
    let client_us = run
        .of_file(REAL_CLIENT)
        .iter()
        .map(|c| param_text(c, "client_us"))
        .find(|v| v != "0" && v != "-")
        .unwrap_or_else(|| "?".to_owned());

    // The sweep's table only where the lab client's or the model's cells ran (a run of the
    // clients' file alone has none of its rows).
    let mut text = Text {
        tables: Some(context::sweep_table(&real, &model, &client_us))
            .filter(|t| !t.rows.is_empty())
            .into_iter()
            .collect(),
        ..Text::default()
    };
    let clients = context::Clients::new(&go_rows);
    let others_ran = !go_rows.is_empty() || !writes_rows.is_empty();
    text.sentences.push(lab_client(&real, others_ran, &said));
    let two = juju_client(&mut text, &parts, &real, &clients, &client_us);
    // Without the real node the parts' reasons say it all; the model's sentence follows.
    let ran = !real.cells.is_empty() || others_ran;
    if ran {
        text.sentences.push(format!("{two}."));
    }
    if ran || parts.get(WRITES).ratio.is_some() {
        text.sentences.push(format!(
            "With half the transactions writing, reads/s against all reads (0.5 is what the mix \
         alone leaves): {} (the seed: \"the writes just tanked all the reads\", no figure).",
            said(WRITES)
        ));
    }
    if let Some(t) = clients.table() {
        text.tables.push(t);
    }
    stand_in_calibration(&mut text, run);
    text.details.extend(context::writes_figures(&writes_rows));
    text.details
        .extend(context::seed_load_figures(&run.of_file(REAL_GO_SEED)));
    model_details(
        &mut text,
        run,
        &model,
        real.semaphore("2").is_none() && !others_ran,
    );
    node_details(&mut text, run, &real);
    text.details
        .extend(context::control(&run.of_file("sqlmix-slots")));
    text.details.extend(runner_variants(&main));
    let verdict = Verdict::of_outcomes(&outcomes);
    let k2 = parts.get(K2);
    let figure = k2
        .ratio
        .map(|_| format!("K = 2 / unlimited on the real node: {}", k2.figure()))
        .unwrap_or_default();
    Some(Answer {
        verdict,
        figure,
        parts: parts.into_vec(),
        basis: Basis::Real,
        calibrated_on: text.calibrated_on,
        sentences: text.sentences,
        details: text.details,
        tables: text.tables,
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

/// What an answer says beside its parts, gathered in the order the reader meets it.
#[derive(Default)]
struct Text {
    sentences: Vec<String>,
    details: Vec<String>,
    tables: Vec<Table>,
    calibrated_on: Vec<String>,
}

/// The first sentence: the lab's own client on the real node, or why it did not run
/// (`others_ran`: another file of the real node did, so the node is here).
fn lab_client(real: &Backend<'_>, others_ran: bool, said: &dyn Fn(&str) -> String) -> String {
    match real.semaphore("2").or(real.cells.first().copied()) {
        Some(cell) => format!(
            "On the real dqlite node with the lab's own Rust client ({}), K = 2 against no \
             semaphore: {}; no semaphore with a pool of 2 against K = 2: {}; 3 apps against 1: \
             {}.",
            context::setup(cell),
            said(K2),
            said(POOL2),
            said(APPS)
        ),
        None if others_ran => format!(
            "The real node's K sweep with the lab's own client ({REAL}.toml) did not run \
                 here: K = 2 against no semaphore: {}.",
            said(K2)
        ),
        None => "The real dqlite node did not run here, so the seed's question cannot be told on \
             its own system and every part is inconclusive: install the node with `just \
             setup` (libdqlite0) and rerun `just matrix`."
            .to_owned(),
    }
}

/// Juju's own client on the real node (and the lab's stand-in for it): the sentence, its
/// details pushed onto `text`.
fn juju_client(
    text: &mut Text,
    parts: &Parts<'_, '_>,
    real: &Backend<'_>,
    clients: &context::Clients<'_>,
    client_us: &str,
) -> String {
    let said = |name: &str| said(parts.get(name));
    let ours = real.semaphore("2").and_then(hold_ms);
    let slowed = real.slowed("2").and_then(hold_ms);
    let ms = |v: Option<f64>| v.map_or("-".to_owned(), |v| format!("{v:.2} ms"));
    let mut two = format!(
        "Juju's own client (Go, go-dqlite under database/sql) on the same kind of node, over \
         loopback TCP, K = 2 against no semaphore: {} in a closed loop, {} at the seed's \
         load shape (change streams and paced step workers on 21 databases); a pool of 2 \
         against K = 2: {}",
        said(GO_K2),
        said(GO_SEED_K2),
        said(GO_POOL2)
    );
    if let Some((lab, go)) = clients.gate_at_k2() {
        two.push_str(&format!(
            "; in the gate per transaction at K = 2 it spends {} against the lab client's {} \
             on that node (gate_ms_per_txn)",
            ms(go),
            ms(lab)
        ));
    }
    // Why two Go clients on one node version can point different ways (issue 51): Go's
    // database/sql keeps 2 idle connections per database, so 48 goroutines on 20 model
    // databases without a gate close and reopen connections all the time; K = 2 keeps
    // them still. Measured here with 64 idle kept (no churn), K = 2's gain fell from
    // 1.10-1.35x to 1.11x: part of what the semaphore wins is the churn it prevents.
    if let Some((k2, none)) = clients.go_connects() {
        text.details.push(format!(
            "Juju's client opened {none:.0} connections/s without a semaphore against \
             {k2:.0} at K = 2 (database/sql keeps 2 idle per database, so ungated goroutines \
             close and reopen them): part of K = 2's gain with this client is the \
             connection churn it prevents, which a pool keeping more idle connections (or \
             a client with one connection per worker) would not have. The seed's figures \
             are two setups: about 1.5k read transactions/s with the semaphore against \
             about 800 without on one app, and 2,489 req/s at K = 2 on the three-app \
             branch."
        ));
    }
    // The stand-in only where its file ran (or its part was measured): without it there is
    // no slowed time to state.
    if slowed.is_some() || parts.get(JUJU_CLIENT).ratio.is_some() {
        two.push_str(&format!(
            ". The lab's stand-in for it (its own client, {} in the gate, slowed by \
             {client_us} us per statement to {}: a constant calibrated on a Go client on \
             another machine, a model, not Juju's client) gives {}",
            ms(ours),
            ms(slowed),
            said(JUJU_CLIENT)
        ));
    } else {
        text.details.push(format!(
            "K = 2 with the lab's stand-in for Juju's client (a model calibrated on another \
             machine): {}.",
            said(JUJU_CLIENT)
        ));
    }
    two
}

/// How the stand-in for Juju's client was calibrated, where its file ran.
fn stand_in_calibration(text: &mut Text, run: &Run<'_>) {
    if let (Some(ms), Some(g)) = (
        run.seed_f64(REAL_CLIENT, "go_client_ms_per_txn"),
        run.seed_f64(REAL_CLIENT, "go_client_k2_gain"),
    ) {
        text.details.push(format!(
            "The stand-in's calibration: a Go client on go-dqlite over TCP measured {ms:.2} ms in \
             the gate per transaction and K = 2 at {g:.2}x no semaphore on another machine; \
             `client_us` was chosen to match that time here, which does not carry from one \
             machine to the next (the go-client parts measure Juju's client itself)."
        ));
    }
    if !run.of_file(REAL_CLIENT).is_empty() {
        text.calibrated_on.extend(
            run.seed_strs(REAL_CLIENT, "calibrated_on")
                .into_iter()
                .map(|c| format!("{JUJU_CLIENT} (a stand-in, model): {c}")),
        );
    }
}

/// The dqlite model's figures, labelled, and its sensitivity: details only, never a part
/// (`only_model`: nothing of the real node ran, so a sentence says so).
fn model_details(text: &mut Text, run: &Run<'_>, model: &Backend<'_>, only_model: bool) {
    if let Some(figures) = context::side_figures(model) {
        text.details.push(figures);
        text.calibrated_on.extend(
            run.seed_strs("sqlmix-dqlite", "calibrated_on")
                .into_iter()
                .map(|c| format!("dqlite model (details only): {c}")),
        );
        if only_model {
            text.sentences.push(
                "The dqlite model's figures are in the details, labelled, and decide nothing: \
                 it is not the seed's system."
                    .to_owned(),
            );
        }
        text.details.push(
            context::sensitivity(&run.of_file("sqlmix-dqlite-sensitivity"), "24").unwrap_or_else(
                || {
                    "Sensitivity of the model not in this run: `just matrix \
                     scenarios=sqlmix-dqlite-sensitivity` perturbs its chosen parameters."
                        .to_owned()
                },
            ),
        );
    }
}

/// The real node's own figures: each side's, the semaphore's capacity at K = 2, the Raft
/// log on disk, and the seed's figures beside them.
fn node_details(text: &mut Text, run: &Run<'_>, real: &Backend<'_>) {
    text.details.extend(context::side_figures(real));
    if let Some(row) = real
        .semaphore("2")
        .and_then(|k| k.locks.as_ref())
        .and_then(|rows| rows.iter().find(|r| r.name.contains("semaphore")))
    {
        let busy = row.utilization.unwrap_or(f64::NAN) * 100.0;
        text.details
            .push(match (row.ceiling_share, row.ceiling_ops_per_sec) {
                (Some(share), Some(ceiling)) => format!(
                "The real node's semaphore at K = 2 ran at {:.0}% of its capacity ({} txn/s: K \
                 over the hold measured alone), busy {busy:.0}% of the time.",
                share * 100.0,
                si(ceiling),
            ),
                _ => format!(
                    "The real node's semaphore at K = 2 was busy {busy:.0}% of the time (its \
                 capacity needs a 1-thread cell, which this file does not run)."
                ),
            });
    }
    let disk = of_backend(run.of_file("sqlmix-libdqlite-disk"), &["libdqlite"]);
    let on_disk = Backend::new("real node, Raft log on disk", &disk, disk.clone());
    if let (Some(k), Some(none)) = (on_disk.semaphore("2"), on_disk.semaphore("unlimited")) {
        text.details.push(format!(
            "With its Raft log on disk ({}): K = 2 {} (cell medians).",
            context::setup(k),
            times(k, none, "no semaphore")
        ));
    }
    if let (Some(w), Some(wo)) = (
        run.seed_f64("sqlmix-dqlite", "with_semaphore_txn_per_sec"),
        run.seed_f64("sqlmix-dqlite", "without_semaphore_txn_per_sec"),
    ) {
        text.details.push(format!(
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
}

/// The runner designs on local SQLite at the widest point, against the seed's runner there.
fn runner_variants(main: &[&CellRecord]) -> Option<String> {
    let (cores, threads) = widest(main)?;
    let t = *threads.last()?;
    let at: Vec<&CellRecord> = main
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

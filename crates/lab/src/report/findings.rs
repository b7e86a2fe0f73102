//! Findings: what one run answered, per hot path, in sentences built from its figures.
//!
//! Each hot path has a seed question (the incident it models). Its finding picks the cells
//! that answer it, compares them, and words the answer from the comparison: the figures,
//! their intervals, whether the seed's effect showed, and the best variant with its margin.
//! Nothing here is text that would read the same whatever was measured: every sentence is
//! chosen by a comparison and carries numbers. Where a run lacks the cells a question needs
//! (a quick run, a filtered matrix), the finding says which scenario file would answer it.
//!
//! This module computes and words; `html` and `summary` place the sentences.

use harness::RunRecord;

use crate::table::si;

/// One hot path's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// The hot path, e.g. `lookup`.
    pub hot_path: &'static str,
    /// The question its seed asked.
    pub question: &'static str,
    /// Whether the seed's effect showed in this run; `None` when the run cannot tell.
    pub reproduced: Option<bool>,
    /// The answer: one or more sentences, each with its figures.
    pub sentences: Vec<String>,
}

/// Hot paths in the order the report shows them.
pub const ORDER: &[&str] = &["lookup", "sqlmix", "pool", "lease"];

/// The findings of one run's cells, in [`ORDER`]; hot paths with no cells are left out.
pub fn findings(cells: &[RunRecord]) -> Vec<Finding> {
    let mut out = Vec::new();
    for hot_path in ORDER {
        if !cells.iter().any(|c| c.scenario == *hot_path) {
            continue;
        }
        let finding = match *hot_path {
            "lookup" => lookup(cells),
            "sqlmix" => sqlmix(cells),
            "pool" => pool(cells),
            _ => lease(cells),
        };
        out.push(finding);
    }
    out
}

/// Usable cells of one scenario file.
fn of_file<'a>(cells: &'a [RunRecord], file: &str) -> Vec<&'a RunRecord> {
    cells
        .iter()
        .filter(|c| c.usable() && file_of(c) == file)
        .collect()
}

/// The scenario file a record came from (older results carry none: the hot path's name).
fn file_of(r: &RunRecord) -> &str {
    if r.scenario_file.is_empty() {
        &r.scenario
    } else {
        &r.scenario_file
    }
}

/// The interval a record carries for its median: the confidence interval where the
/// record has one, else the min-max of its repetitions.
fn interval(r: &RunRecord) -> (f64, f64) {
    match r.ops_per_sec_ci {
        Some([low, high]) => (low, high),
        None => (r.ops_per_sec_min, r.ops_per_sec_max),
    }
}

fn with_interval(value: f64, r: &RunRecord, scale: f64) -> String {
    let (low, high) = interval(r);
    format!(
        "{} ({}–{})",
        si(value * scale),
        si(low * scale),
        si(high * scale)
    )
}

/// Whether two cells' intervals are apart, so a difference between them is not noise.
fn apart(a: &RunRecord, b: &RunRecord) -> bool {
    let (al, ah) = interval(a);
    let (bl, bh) = interval(b);
    ah < bl || bh < al
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        f64::NAN
    }
}

fn extra(r: &RunRecord, key: &str) -> Option<f64> {
    r.extra.get(key).and_then(|v| v.as_f64())
}

fn param_text(r: &RunRecord, key: &str) -> String {
    match r.params.get(key) {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
        None => "-".to_owned(),
    }
}

/// The largest core count of `cells`, and the thread counts run at it.
fn widest(cells: &[&RunRecord]) -> Option<(usize, Vec<usize>)> {
    let cores = cells.iter().map(|c| c.cores).max()?;
    let mut threads: Vec<usize> = cells
        .iter()
        .filter(|c| c.cores == cores)
        .map(|c| c.threads)
        .collect();
    threads.sort_unstable();
    threads.dedup();
    Some((cores, threads))
}

fn find<'a>(
    cells: &[&'a RunRecord],
    variant: &str,
    threads: usize,
    cores: usize,
) -> Option<&'a RunRecord> {
    cells
        .iter()
        .copied()
        .find(|c| c.variant == variant && c.threads == threads && c.cores == cores)
}

fn lookup(cells: &[RunRecord]) -> Finding {
    let question = "Does per-thread throughput fall as worker threads rise (389 DS), and which \
                    design keeps it?";
    let file = of_file(cells, "lookup");
    let mut sentences = Vec::new();
    let mut reproduced = None;
    if let Some((cores, threads)) = widest(&file) {
        let max_t = *threads.last().unwrap_or(&1);
        let in_core = threads
            .iter()
            .copied()
            .filter(|t| *t <= cores)
            .max()
            .unwrap_or(1);
        // The seed's server: an entry cache whose bookkeeping every read updates under a lock.
        let baseline = ["entry-cache", "global-mutex"]
            .into_iter()
            .find(|v| find(&file, v, 1, cores).is_some());
        if let Some(base) = baseline {
            if let (Some(one), Some(full), Some(top)) = (
                find(&file, base, 1, cores),
                find(&file, base, in_core, cores),
                find(&file, base, max_t, cores),
            ) {
                // Past the cores no design can add throughput, so per-thread throughput
                // falls for every design there; the seed's effect is what is left: poor
                // scaling up to the cores, and a loss (not a plateau) beyond them.
                let efficiency = ratio(full.ops_per_sec, in_core as f64 * one.ops_per_sec);
                let beyond = ratio(top.ops_per_sec, full.ops_per_sec);
                let declines = (efficiency < 0.8 && apart(one, full) && in_core > 1)
                    || (beyond < 0.9 && apart(full, top));
                reproduced = Some(declines);
                sentences.push(format!(
                    "`{base}` on {cores} cores: {} ops/s at 1 thread, {} at {in_core} \
                     (per-thread efficiency {efficiency:.2}), {} at {max_t} ({beyond:.2}x of \
                     {in_core} threads){}.",
                    with_interval(one.ops_per_sec, one, 1.0),
                    with_interval(full.ops_per_sec, full, 1.0),
                    with_interval(top.ops_per_sec, top, 1.0),
                    match top.wait_share {
                        Some(w) => format!(
                            "; {:.0}% of worker time blocked on its lock at {max_t}",
                            w * 100.0
                        ),
                        None => String::new(),
                    }
                ));
                sentences.push(if declines {
                    "The seed's decline is reproduced: threads added up to the cores buy less \
                     than their share, and threads past the cores lose throughput."
                        .to_owned()
                } else {
                    format!(
                        "The seed's decline is not reproduced here: efficiency {efficiency:.2} \
                         at {in_core} threads and {beyond:.2}x past the cores (the seed saw the \
                         fall on 6 and 12 CPUs; this machine has {cores})."
                    )
                });
            }
            let best = file
                .iter()
                .filter(|c| c.threads == max_t && c.cores == cores)
                .max_by(|a, b| a.ops_per_sec.total_cmp(&b.ops_per_sec));
            if let (Some(best), Some(base_top)) = (best, find(&file, base, max_t, cores)) {
                if best.variant != base {
                    sentences.push(format!(
                        "Best at {max_t} threads: `{}` at {} ops/s, {:.2}x `{base}`{}.",
                        best.variant,
                        with_interval(best.ops_per_sec, best, 1.0),
                        ratio(best.ops_per_sec, base_top.ops_per_sec),
                        if apart(best, base_top) {
                            ""
                        } else {
                            " (intervals overlap: not a clear win)"
                        }
                    ));
                }
            }
        }
    } else {
        sentences.push("No cells of benches/lookup.toml in this run.".to_owned());
    }
    sentences.extend(dispatch_sentences(cells));
    Finding {
        hot_path: "lookup",
        question,
        reproduced,
        sentences,
    }
}

/// How much throughput the hand-off to worker threads costs, per directory.
fn dispatch_sentences(cells: &[RunRecord]) -> Vec<String> {
    let file = of_file(cells, "lookup-dispatch");
    let Some((cores, threads)) = widest(&file) else {
        return Vec::new();
    };
    let max_t = *threads.last().unwrap_or(&1);
    let mut variants: Vec<&str> = file.iter().map(|c| c.variant.as_str()).collect();
    variants.sort_unstable();
    variants.dedup();
    let mut parts = Vec::new();
    for variant in variants {
        let at = |dispatch: &str, t: usize| {
            file.iter().copied().find(|c| {
                c.variant == variant
                    && c.threads == t
                    && c.cores == cores
                    && param_text(c, "dispatch") == dispatch
            })
        };
        let mut losses = Vec::new();
        for t in [cores, max_t] {
            if let (Some(direct), Some(queue)) = (at("direct", t), at("queue", t)) {
                losses.push(format!(
                    "{:.0}% at {t} threads",
                    (1.0 - ratio(queue.ops_per_sec, direct.ops_per_sec)) * 100.0
                ));
            }
        }
        if !losses.is_empty() {
            parts.push(format!("`{variant}` {}", losses.join(", ")));
        }
    }
    if parts.is_empty() {
        return Vec::new();
    }
    vec![format!(
        "Throughput lost to a shared work queue in front of the workers (queue vs direct): {}.",
        parts.join("; ")
    )]
}

fn sqlmix(cells: &[RunRecord]) -> Finding {
    let question = "Does the transaction semaphore help or hurt, and what beats it (Juju on dqlite)?";
    let mut sentences = Vec::new();
    let mut reproduced = None;
    for (file, label) in [("sqlmix-slots", "local SQLite"), ("sqlmix-dqlite", "dqlite-like")] {
        let rows = of_file(cells, file);
        let unlimited = rows
            .iter()
            .copied()
            .filter(|c| param_text(c, "slots") == "unlimited" && c.variant == "semaphore")
            .max_by(|a, b| a.ops_per_sec.total_cmp(&b.ops_per_sec));
        let best = rows
            .iter()
            .copied()
            .filter(|c| c.variant == "semaphore" && param_text(c, "slots") != "unlimited")
            .max_by(|a, b| a.ops_per_sec.total_cmp(&b.ops_per_sec));
        if let (Some(best), Some(unlimited)) = (best, unlimited) {
            let gain = ratio(best.ops_per_sec, unlimited.ops_per_sec);
            let helps = gain >= 1.5 && apart(best, unlimited);
            if file == "sqlmix-dqlite" {
                reproduced = Some(helps);
            }
            sentences.push(format!(
                "{label} ({file}): the best semaphore, K = {}, gives {} txn/s against {} \
                 without one ({gain:.2}x): the semaphore {}.",
                param_text(best, "slots"),
                with_interval(best.ops_per_sec, best, 1.0),
                with_interval(unlimited.ops_per_sec, unlimited, 1.0),
                if helps {
                    "helps, as in the seed"
                } else if gain > 1.0 {
                    "helps a little, less than the seed's 1.5x or more"
                } else {
                    "only costs throughput"
                }
            ));
        }
    }
    let main = of_file(cells, "sqlmix");
    if let Some((cores, threads)) = widest(&main) {
        let max_t = *threads.last().unwrap_or(&1);
        if let Some(base) = find(&main, "semaphore", max_t, cores) {
            if let Some(best) = main
                .iter()
                .copied()
                .filter(|c| c.threads == max_t && c.cores == cores)
                .max_by(|a, b| a.ops_per_sec.total_cmp(&b.ops_per_sec))
            {
                sentences.push(format!(
                    "At {max_t} threads on {cores} cores the best design is `{}` with {} txn/s, \
                     {:.2}x the seed's runner (`semaphore`){}.",
                    best.variant,
                    with_interval(best.ops_per_sec, best, 1.0),
                    ratio(best.ops_per_sec, base.ops_per_sec),
                    if apart(best, base) || best.variant == "semaphore" {
                        ""
                    } else {
                        " (intervals overlap)"
                    }
                ));
            }
        }
    }
    if sentences.is_empty() {
        sentences.push(
            "No sqlmix cells that answer it: run benches/sqlmix-slots.toml and \
             benches/sqlmix-dqlite.toml."
                .to_owned(),
        );
    }
    Finding {
        hot_path: "sqlmix",
        question,
        reproduced,
        sentences,
    }
}

fn pool(cells: &[RunRecord]) -> Finding {
    let question = "Why does throughput plateau as clients rise, and does a bigger pool \
                    (10 x 5000 instead of 1 x 1024) fix it?";
    let mut sentences = Vec::new();
    let mut reproduced = None;
    let rows = of_file(cells, "pool-clients");
    let shape = |c: &RunRecord| {
        format!(
            "{} x {}",
            param_text(c, "connections"),
            param_text(c, "max_requests")
        )
    };
    let series = |name: &str| {
        let mut s: Vec<&RunRecord> = rows
            .iter()
            .copied()
            .filter(|c| shape(c) == name)
            .collect();
        s.sort_by_key(|c| c.threads);
        s
    };
    let default = series("1 x 1024");
    let fix = series("10 x 5000");
    if let (Some(first), Some(last)) = (default.first(), default.last()) {
        if first.threads != last.threads {
            let clients = ratio(last.threads as f64, first.threads as f64);
            let gain = ratio(last.ops_per_sec, first.ops_per_sec);
            let ceiling = extra(last, "ceiling_ratio");
            let plateau = gain < clients * 0.6;
            reproduced = Some(plateau);
            sentences.push(format!(
                "Default pool (1 x 1024): {:.1}x the clients ({} to {}) gave {:.2}x the \
                 requests/s{}{}.",
                clients,
                first.threads,
                last.threads,
                gain,
                ceiling.map_or(String::new(), |c| format!(
                    ", at {:.0}% of its Little's-law ceiling",
                    c * 100.0
                )),
                if plateau {
                    ": the seed's plateau"
                } else {
                    ": no plateau in this range"
                }
            ));
            if let Some(fix_last) = fix.iter().find(|c| c.threads == last.threads) {
                sentences.push(format!(
                    "With 10 x 5000 at {} clients: {} requests/s, {:.2}x the default.",
                    last.threads,
                    with_interval(fix_last.ops_per_sec, fix_last, 1.0),
                    ratio(fix_last.ops_per_sec, last.ops_per_sec)
                ));
            }
        }
    }
    sentences.extend(batch_gain_sentence(cells));
    if sentences.is_empty() {
        sentences.push("No pool-clients cells in this run: run benches/pool-clients.toml.".into());
    }
    Finding {
        hot_path: "pool",
        question,
        reproduced,
        sentences,
    }
}

/// The seed's message-size table: the fix's gain per batch size, next to the seed's row.
fn batch_gain_sentence(cells: &[RunRecord]) -> Vec<String> {
    const SEED: &[(u64, &str)] = &[
        (1, "none"),
        (10, "+100%"),
        (100, "+200%"),
        (500, "+180%"),
        (5000, "+130%"),
    ];
    let rows = of_file(cells, "pool-seed-batch");
    if rows.is_empty() {
        return Vec::new();
    }
    let max_clients = rows.iter().map(|c| c.threads).max().unwrap_or(0);
    let mut parts = Vec::new();
    for (batch, seed) in SEED {
        let at = |connections: &str| {
            rows.iter().copied().find(|c| {
                c.threads == max_clients
                    && param_text(c, "batch") == batch.to_string()
                    && param_text(c, "connections") == connections
            })
        };
        if let (Some(default), Some(fix)) = (at("1"), at("10")) {
            let gain = ratio(fix.ops_per_sec, default.ops_per_sec) - 1.0;
            let bound = fix
                .extra
                .get("bound_by")
                .and_then(|v| v.as_str())
                .unwrap_or("?");
            parts.push(format!(
                "batch {batch}: {:+.0}% (seed {seed}; fix bound by {bound})",
                gain * 100.0
            ));
        }
    }
    if parts.is_empty() {
        return Vec::new();
    }
    vec![format!(
        "Gain of the fix by datapoints per request at {max_clients} clients: {}.",
        parts.join(", ")
    )]
}

fn lease(cells: &[RunRecord]) -> Finding {
    let question = "Does one conditional UPDATE per extend (instead of a five-write transaction) \
                    cut the writes and raise extends/s, and does group commit pay?";
    let mut sentences = Vec::new();
    let mut reproduced = None;
    for (file, label) in [("lease", "as configured"), ("lease-durable", "durable commits")] {
        let rows = of_file(cells, file);
        let Some((cores, threads)) = widest(&rows) else {
            continue;
        };
        let max_t = *threads.last().unwrap_or(&1);
        let at = |v: &str, t: usize| find(&rows, v, t, cores);
        if let (Some(txn), Some(update)) = (at("txn-log", max_t), at("sql-update", max_t)) {
            let writes = |r: &RunRecord| extra(r, "writes_per_extend").unwrap_or(f64::NAN);
            let speed = ratio(update.ops_per_sec, txn.ops_per_sec);
            if file == "lease" {
                reproduced = Some(writes(update) < writes(txn) && speed > 1.0);
            }
            sentences.push(format!(
                "{label} ({file}), {max_t} threads: `sql-update` writes {:.1} rows per extend \
                 against {:.1} for `txn-log` and does {speed:.2}x its extends/s.",
                writes(update),
                writes(txn)
            ));
        }
        if let (Some(txn), Some(batched)) = (at("txn-log", max_t), at("batched", max_t)) {
            let one = (at("txn-log", 1), at("batched", 1));
            sentences.push(format!(
                "Group commit (`batched`) at {max_t} threads: {:.2}x `txn-log`{}{}.",
                ratio(batched.ops_per_sec, txn.ops_per_sec),
                match one {
                    (Some(t1), Some(b1)) => format!(
                        "; alone (1 thread) {:.2}x",
                        ratio(b1.ops_per_sec, t1.ops_per_sec)
                    ),
                    _ => String::new(),
                },
                extra(batched, "batch_size_mean")
                    .map_or(String::new(), |m| format!(", mean group {m:.1}"))
            ));
        }
    }
    if sentences.is_empty() {
        sentences.push("No lease cells that answer it: run benches/lease.toml.".to_owned());
    }
    Finding {
        hot_path: "lease",
        question,
        reproduced,
        sentences,
    }
}

/// "reproduced", "not reproduced" or "cannot tell from this run".
pub fn verdict(f: &Finding) -> &'static str {
    match f.reproduced {
        Some(true) => "seed's effect reproduced",
        Some(false) => "seed's effect not reproduced",
        None => "this run cannot tell",
    }
}

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

use super::batch_gain::{batch_gains, percent, seed_shape, BatchGain, SeedShape};
use super::cells::{apart, extra, has_interval, noise, of_file, param_text, ratio, with_interval};

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
        out.push(with_interval_note(finding, cells));
    }
    out
}

/// Adds, once per finding, that some of its cells ran once and so have no interval: no
/// difference involving them is judged.
fn with_interval_note(mut finding: Finding, cells: &[RunRecord]) -> Finding {
    let single = cells
        .iter()
        .filter(|c| c.scenario == finding.hot_path && c.usable())
        .filter(|c| !has_interval(c))
        .count();
    if single > 0 {
        finding.sentences.push(format!(
            "{single} of these cells ran once and have no interval, so no difference involving \
             them is judged: rerun with repeats=3 or more."
        ));
    }
    finding
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

/// The highest-throughput cell of `rows`.
fn best_of<'a>(rows: impl Iterator<Item = &'a RunRecord>) -> Option<&'a RunRecord> {
    rows.max_by(|a, b| a.ops_per_sec.total_cmp(&b.ops_per_sec))
}

/// At `threads` on `cores`: the seed's `base` variant's cell and the best cell of `cells`
/// (which may be the same).
fn base_and_best<'a>(
    cells: &[&'a RunRecord],
    base: &str,
    threads: usize,
    cores: usize,
) -> Option<(&'a RunRecord, &'a RunRecord)> {
    let best = best_of(
        cells
            .iter()
            .copied()
            .filter(|c| c.threads == threads && c.cores == cores),
    )?;
    Some((find(cells, base, threads, cores)?, best))
}

/// "1.23x `of`", with "; " and the [`noise`] note when `a` and `b` are not apart.
fn times(a: &RunRecord, b: &RunRecord, of: &str) -> String {
    format!(
        "{:.2}x{}{of}{}",
        ratio(a.ops_per_sec, b.ops_per_sec),
        if of.is_empty() { "" } else { " " },
        match noise(a, b) {
            "" => String::new(),
            note => format!("; {note}"),
        }
    )
}

/// Variants of `rows` in the order first seen.
fn variants_of<'a>(rows: &[&'a RunRecord]) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for r in rows {
        if !out.contains(&r.variant.as_str()) {
            out.push(&r.variant);
        }
    }
    out
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
                let poor_scaling = efficiency < 0.8 && in_core > 1 && apart(one, full);
                let loss_beyond = beyond < 0.9 && apart(full, top);
                let declines = poor_scaling || loss_beyond;
                let judged = [one, full, top].iter().all(|r| has_interval(r));
                reproduced = judged.then_some(declines);
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
                sentences.push(match (poor_scaling, loss_beyond) {
                    _ if !judged => "This run cannot tell whether the seed's decline shows: \
                                     its cells ran once and have no interval; rerun with \
                                     repeats=3 or more."
                        .to_owned(),
                    (true, true) => "The seed's decline is reproduced: threads up to the cores \
                                     buy less than their share, and threads past the cores lose \
                                     throughput (intervals apart)."
                        .to_owned(),
                    (true, false) => "The seed's decline is reproduced up to the cores (threads \
                                      buy less than their share, intervals apart); past the \
                                      cores throughput holds."
                        .to_owned(),
                    (false, true) => "The seed's decline is reproduced past the cores only: \
                                      oversubscribed threads lose throughput (intervals apart)."
                        .to_owned(),
                    (false, false) => format!(
                        "The seed's decline is not reproduced here: {}; {} (the seed saw the \
                         fall on 6 and 12 CPUs; this run has {cores}).",
                        if efficiency >= 0.8 || in_core == 1 {
                            format!("efficiency {efficiency:.2} at {in_core} threads is near linear")
                        } else {
                            format!(
                                "efficiency {efficiency:.2} at {in_core} threads, but its \
                                 interval overlaps 1 thread's"
                            )
                        },
                        if beyond >= 0.9 {
                            format!("past the cores throughput holds ({beyond:.2}x)")
                        } else {
                            format!(
                                "past the cores {beyond:.2}x, but the intervals overlap"
                            )
                        }
                    ),
                });
            }
            if let Some((base_top, best)) = base_and_best(&file, base, max_t, cores) {
                if best.variant != base {
                    sentences.push(format!(
                        "Best at {max_t} threads: `{}` at {} ops/s, {}.",
                        best.variant,
                        with_interval(best.ops_per_sec, best, 1.0),
                        times(best, base_top, &format!("`{base}`"))
                    ));
                }
            }
        }
        for variant in variants_of(&file) {
            if let Some(a) = super::advice::thread_advice(&file, variant, cores) {
                sentences.push(format!("Threads: {}", super::advice::thread_sentence(&a)));
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

/// What each hand-off in front of the search threads costs against calling the directory
/// directly, per directory, at threads = cores and at the most threads.
fn dispatch_sentences(cells: &[RunRecord]) -> Vec<String> {
    let file = of_file(cells, "lookup-dispatch");
    let Some((cores, threads)) = widest(&file) else {
        return Vec::new();
    };
    let max_t = *threads.last().unwrap_or(&1);
    let mut levels = vec![cores, max_t];
    levels.dedup();
    let mut out = Vec::new();
    for variant in variants_of(&file) {
        let at = |dispatch: &str, t: usize| {
            file.iter().copied().find(|c| {
                c.variant == variant
                    && c.threads == t
                    && c.cores == cores
                    && param_text(c, "dispatch") == dispatch
            })
        };
        let mut per_level = Vec::new();
        for &t in &levels {
            let Some(direct) = at("direct", t) else {
                continue;
            };
            let mut parts = Vec::new();
            for dispatch in ["queue", "rayon", "batched"] {
                let Some(other) = at(dispatch, t) else {
                    continue;
                };
                let loss = 1.0 - ratio(other.ops_per_sec, direct.ops_per_sec);
                let mut notes: Vec<String> = extra(other, "queue_wait_share")
                    .map(|w| format!("{:.0}% of thread time waiting on the queue", w * 100.0))
                    .into_iter()
                    .collect();
                notes.extend(
                    Some(noise(other, direct))
                        .filter(|n| !n.is_empty())
                        .map(str::to_owned),
                );
                parts.push(format!(
                    "{dispatch} {:+.0}%{}",
                    -loss * 100.0,
                    if notes.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", notes.join("; "))
                    }
                ));
            }
            if !parts.is_empty() {
                per_level.push(format!(
                    "at {t} threads, against direct calls ({} ops/s): {}",
                    with_interval(direct.ops_per_sec, direct, 1.0),
                    parts.join(", ")
                ));
            }
        }
        if !per_level.is_empty() {
            out.push(format!(
                "Dispatch cost for `{variant}` on {cores} cores: {}.",
                per_level.join("; ")
            ));
        }
    }
    out
}

/// The best semaphore K against none, for the rows of one backend of a K sweep.
fn semaphore_sentence(rows: &[&RunRecord], label: &str) -> Option<(String, Option<bool>)> {
    let sem = |c: &&RunRecord| c.variant == "semaphore";
    let unlimited = best_of(
        rows.iter()
            .copied()
            .filter(sem)
            .filter(|c| param_text(c, "slots") == "unlimited"),
    )?;
    let best = best_of(
        rows.iter()
            .copied()
            .filter(sem)
            .filter(|c| param_text(c, "slots") != "unlimited"),
    )?;
    let gain = ratio(best.ops_per_sec, unlimited.ops_per_sec);
    let helps = gain > 1.0 && apart(best, unlimited);
    let hurts = gain < 1.0 && apart(best, unlimited);
    Some((
        format!(
            "{label}, {} threads: the best semaphore, K = {}, gives {} txn/s against {} \
             without one ({}): the semaphore {}.",
            best.threads,
            param_text(best, "slots"),
            with_interval(best.ops_per_sec, best, 1.0),
            with_interval(unlimited.ops_per_sec, unlimited, 1.0),
            times(best, unlimited, ""),
            if !(has_interval(best) && has_interval(unlimited)) {
                "cannot be judged from single runs"
            } else if helps {
                "helps, as in the seed (about 1.5k against 800 txn/s, 1.9x)"
            } else if hurts {
                "only costs throughput, unlike the seed"
            } else {
                "makes no measurable difference, unlike the seed's 1.9x"
            }
        ),
        (has_interval(best) && has_interval(unlimited)).then_some(helps),
    ))
}

/// The distinct values of `param` among `rows`, in the order first seen.
fn values_of(rows: &[&RunRecord], param: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in rows {
        let v = param_text(r, param);
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

/// Throughput per value of `param`, per backend, with the best value's margin over the
/// first value.
fn sweep_sentence(rows: &[&RunRecord], file: &str, param: &str, what: &str) -> Vec<String> {
    let mut out = Vec::new();
    for backend in values_of(rows, "backend") {
        let of_backend: Vec<&RunRecord> = rows
            .iter()
            .copied()
            .filter(|c| param_text(c, "backend") == backend)
            .collect();
        let points: Vec<(String, &RunRecord)> = values_of(&of_backend, param)
            .into_iter()
            .filter_map(|v| {
                let cell = best_of(
                    of_backend
                        .iter()
                        .copied()
                        .filter(|c| param_text(c, param) == v),
                )?;
                Some((v, cell))
            })
            .collect();
        let (Some((first_v, first)), Some((best_v, best))) = (
            points.first(),
            points
                .iter()
                .max_by(|a, b| a.1.ops_per_sec.total_cmp(&b.1.ops_per_sec)),
        ) else {
            continue;
        };
        let list: Vec<String> = points
            .iter()
            .map(|(v, c)| format!("{v}: {}", with_interval(c.ops_per_sec, c, 1.0)))
            .collect();
        let verdict = if best_v == first_v {
            format!("{what} {first_v} is best")
        } else {
            format!(
                "{what} {best_v} does {}",
                times(best, first, &format!("{what} {first_v}"))
            )
        };
        let backend_text = if backend == "-" {
            String::new()
        } else {
            format!(" on {backend}")
        };
        out.push(format!(
            "{file}{backend_text}, txn/s by {param}: {}; {verdict}.",
            list.join(", ")
        ));
    }
    out
}

fn sqlmix(cells: &[RunRecord]) -> Finding {
    let question =
        "Does the transaction semaphore help or hurt, and what beats it (Juju on dqlite)?";
    let mut sentences = Vec::new();
    let mut reproduced = None;
    let dqlite = of_file(cells, "sqlmix-dqlite");
    for backend in values_of(&dqlite, "backend") {
        let rows: Vec<&RunRecord> = dqlite
            .iter()
            .copied()
            .filter(|c| param_text(c, "backend") == backend)
            .collect();
        if let Some((text, helps)) =
            semaphore_sentence(&rows, &format!("sqlmix-dqlite on {backend}"))
        {
            // The seed ran on dqlite; the local backend is the control.
            if backend == "dqlite" {
                reproduced = helps;
            }
            sentences.push(text);
        }
    }
    let slots = of_file(cells, "sqlmix-slots");
    if let Some((text, helps)) = semaphore_sentence(&slots, "sqlmix-slots on local SQLite") {
        if reproduced.is_none() {
            reproduced = helps;
        }
        sentences.push(text);
    }
    sentences.extend(sweep_sentence(
        &of_file(cells, "sqlmix-dqlite-pool"),
        "sqlmix-dqlite-pool",
        "pool_size",
        "pool",
    ));
    sentences.extend(sweep_sentence(
        &of_file(cells, "sqlmix-dqlite-apps"),
        "sqlmix-dqlite-apps",
        "shards",
        "apps",
    ));
    let main = of_file(cells, "sqlmix");
    if let Some((cores, threads)) = widest(&main) {
        let max_t = *threads.last().unwrap_or(&1);
        if let Some((base, best)) = base_and_best(&main, "semaphore", max_t, cores) {
            sentences.push(if best.variant == "semaphore" {
                format!(
                    "At {max_t} threads on {cores} cores the seed's runner (`semaphore`) is the \
                     best design, {} txn/s.",
                    with_interval(best.ops_per_sec, best, 1.0)
                )
            } else {
                format!(
                    "At {max_t} threads on {cores} cores the best design is `{}` with {} txn/s, \
                     {}.",
                    best.variant,
                    with_interval(best.ops_per_sec, best, 1.0),
                    times(best, base, "the seed's runner (`semaphore`)")
                )
            });
        }
    }
    if sentences.is_empty() {
        sentences.push(
            "No sqlmix cells that answer it: run benches/sqlmix-dqlite.toml and \
             benches/sqlmix-slots.toml."
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
        let mut s: Vec<&RunRecord> = rows.iter().copied().filter(|c| shape(c) == name).collect();
        s.sort_by_key(|c| c.threads);
        s
    };
    let default = series("1 x 1024");
    let fix = series("10 x 5000");
    if let (Some(first), Some(last)) = (default.first(), default.last()) {
        if first.threads != last.threads {
            let clients = ratio(last.threads as f64, first.threads as f64);
            let gain = ratio(last.ops_per_sec, first.ops_per_sec);
            let plateau = gain < clients * 0.6;
            reproduced = Some(plateau);
            sentences.push(format!(
                "Default pool (1 x 1024): {clients:.1}x the clients ({} to {}) gave {gain:.2}x \
                 the requests/s ({} to {}){}: {}.",
                first.threads,
                last.threads,
                with_interval(first.ops_per_sec, first, 1.0),
                with_interval(last.ops_per_sec, last, 1.0),
                limit_text(last),
                if plateau {
                    "the seed's plateau is reproduced"
                } else {
                    "the seed's plateau is not reproduced in this range"
                }
            ));
            if let Some(i) = fix.iter().position(|c| c.threads == last.threads) {
                let fix_last = fix[i];
                // Whether the fix itself flattens, and which limit does it (the seed blamed
                // both machines' CPU at 3000 clients, not the pool).
                let growth = i
                    .checked_sub(1)
                    .map(|j| fix[j])
                    .map_or(String::new(), |prev| {
                        format!(
                            "; from {} to {} clients it grew {:.2}x for {:.1}x the clients",
                            prev.threads,
                            fix_last.threads,
                            ratio(fix_last.ops_per_sec, prev.ops_per_sec),
                            ratio(fix_last.threads as f64, prev.threads as f64)
                        )
                    });
                let flattened = i.checked_sub(1).map(|j| fix[j]).is_some_and(|prev| {
                    ratio(fix_last.ops_per_sec, prev.ops_per_sec)
                        < 0.85 * ratio(fix_last.threads as f64, prev.threads as f64)
                });
                let cause = if flattened {
                    flattening_cause(fix_last)
                } else {
                    String::new()
                };
                sentences.push(format!(
                    "With 10 x 5000 at {} clients: {} requests/s, {}{growth}{}{cause}.",
                    last.threads,
                    with_interval(fix_last.ops_per_sec, fix_last, 1.0),
                    times(fix_last, last, "the default"),
                    limit_text(fix_last)
                ));
            }
        }
    }
    let gains = batch_gains(cells);
    if !gains.is_empty() {
        let parts: Vec<String> = gains
            .iter()
            .map(|g| {
                let noise = if g.noise.is_empty() {
                    String::new()
                } else {
                    format!("; {}", g.noise)
                };
                format!(
                    "batch {}: {} (seed: {}; bound by {} → {}{noise})",
                    g.batch,
                    percent(g.gain()),
                    g.seed,
                    g.default_bound_by,
                    g.bound_by
                )
            })
            .collect();
        sentences.push(format!(
            "Gain of the fix per datapoints per request at {} clients, default → fix: {}.",
            gains[0].clients,
            parts.join(", "),
        ));
        match seed_shape(&gains) {
            Some(shape) => {
                reproduced = Some(reproduced.unwrap_or(true) && shape.reproduced());
                sentences.push(shape_sentence(&shape, &gains));
            }
            None => sentences.push(
                "Whether the gains have the seed's shape cannot be judged: it needs every \
                 batch size of the seed's row, each with an interval (repeats=3 or more)."
                    .to_owned(),
            ),
        }
    }
    let designs = of_file(cells, "pool");
    if let Some((cores, threads)) = widest(&designs) {
        let max_t = *threads.last().unwrap_or(&1);
        if let Some((base, best)) = base_and_best(&designs, "driver-v3", max_t, cores) {
            if best.variant != "driver-v3" {
                sentences.push(format!(
                    "Pool designs at {max_t} threads on {cores} cores: `{}` does {} acquire + \
                     release/s, {}.",
                    best.variant,
                    with_interval(best.ops_per_sec, best, 1.0),
                    times(best, base, "the seed's `driver-v3`")
                ));
            }
        }
        // More client threads than slots: a design should hold its throughput (the
        // waiters park); one that loses more than a fifth is named with its profile.
        let slots = designs.first().and_then(|c| {
            let n = |k: &str| c.params.get(k).and_then(|v| v.as_u64());
            Some((n("connections")? * n("max_requests")?) as usize)
        });
        if let Some(slots) = slots.filter(|s| threads.contains(s) && *s < max_t) {
            let mut variants: Vec<&str> = designs.iter().map(|c| c.variant.as_str()).collect();
            variants.dedup();
            for variant in variants {
                let (Some(full), Some(over)) = (
                    find(&designs, variant, slots, cores),
                    find(&designs, variant, max_t, cores),
                ) else {
                    continue;
                };
                let kept = ratio(over.ops_per_sec, full.ops_per_sec);
                if kept < 0.8 && apart(full, over) {
                    sentences.push(format!(
                        "`{variant}` loses {:.0}% of its throughput from {slots} threads (as \
                         many as the slots) to {max_t}: {} against {} acquire + release/s{}.",
                        (1.0 - kept) * 100.0,
                        with_interval(over.ops_per_sec, over, 1.0),
                        with_interval(full.ops_per_sec, full, 1.0),
                        over.profile.as_ref().map_or(String::new(), |p| format!(
                            "; where its time goes at {max_t} threads: {}",
                            p.svg
                        ))
                    ));
                }
            }
        }
    }
    if sentences.is_empty() {
        sentences.push(
            "No pool cells that answer it: run benches/pool-clients.toml and \
             benches/pool-seed-batch.toml."
                .into(),
        );
    }
    Finding {
        hot_path: "pool",
        question,
        reproduced,
        sentences,
    }
}

/// ", bound by server (88% of the server's cores busy; the pool at 41% of its Little's-law
/// ceiling; the clients' machine 80% busy, ...)": which limit bound a pool cell and how
/// near each limit it ran; "" without `bound_by`.
fn limit_text(c: &RunRecord) -> String {
    let Some(bound) = c.extra.get("bound_by").and_then(|v| v.as_str()) else {
        return String::new();
    };
    let mut near = Vec::new();
    if let Some(u) = extra(c, "server_util") {
        near.push(format!("{:.0}% of the server's cores busy", u * 100.0));
    }
    if let Some(r) = extra(c, "ceiling_ratio") {
        near.push(format!(
            "the pool at {:.0}% of its Little's-law ceiling",
            r * 100.0
        ));
    }
    // The clients run here, one thread each: this machine is the seed's load generator.
    if c.cpu_util > 0.0 {
        let waiting = c
            .time_share
            .and_then(|t| t.run_queue)
            .map_or(String::new(), |q| {
                format!(
                    ", its threads waiting for a core {:.0}% of the time",
                    q * 100.0
                )
            });
        near.push(format!(
            "the clients' machine {:.0}% busy{waiting}",
            c.cpu_util * 100.0
        ));
    }
    if near.is_empty() {
        format!(", bound by {bound}")
    } else {
        format!(", bound by {bound} ({})", near.join("; "))
    }
}

/// Where the fix's flattening came from, as the seed asked (its answer: "both machines now
/// using more than 80% cpu"): ": not the pool; ..." or "" where no limit was near.
fn flattening_cause(c: &RunRecord) -> String {
    let pool_free = extra(c, "ceiling_ratio").is_some_and(|r| r < 0.5);
    let server_busy = extra(c, "server_util").is_some_and(|u| u >= 0.8);
    let clients_busy = c.cpu_util >= 0.8;
    let cpu = match (server_busy, clients_busy) {
        (true, true) => "CPU on both machines, each above 80% as in the seed",
        (true, false) => "the server's CPU",
        (false, true) => "the clients' machine's CPU",
        (false, false) => return String::new(),
    };
    if pool_free {
        format!(": the flattening comes from {cpu}, not from the pool")
    } else {
        format!(": the flattening comes from {cpu}, with the pool near its ceiling too")
    }
}

/// The seed's shape (no change at one datapoint, the largest gain in the middle, less at
/// the largest) as this run has it, or which parts it lacks.
fn shape_sentence(shape: &SeedShape, gains: &[BatchGain]) -> String {
    let at = |batch: u64| gains.iter().find(|g| g.batch == batch);
    let gain = |g: Option<&BatchGain>| g.map_or("?".to_owned(), |g| percent(g.gain()));
    let (first, peak, last) = (gains.first(), at(shape.peak), gains.last());
    let last_batch = last.map_or(0, |g| g.batch);
    let busy = peak
        .and_then(|p| p.default_server_use.zip(p.fix_server_use))
        .map_or(String::new(), |(d, f)| {
            format!(
                "; at batch {} the server's CPU is busy {:.0}% of the time with the default \
                 and {:.0}% with the fix (the seed's went from 70% idle to 12% idle)",
                shape.peak,
                d * 100.0,
                f * 100.0
            )
        });
    if shape.reproduced() {
        return format!(
            "The seed's shape is reproduced: no change at batch 1 ({}), the largest gain \
             at batch {} ({}), less at batch {last_batch} ({}, beyond the \
             noise){busy}.",
            gain(first),
            shape.peak,
            gain(peak),
            gain(last)
        );
    }
    let mut missing = Vec::new();
    if !shape.flat_at_one {
        missing.push(format!(
            "batch 1 gains {} (the seed: no change)",
            gain(first)
        ));
    }
    if !shape.peak_in_middle {
        missing.push(format!(
            "the largest gain is at batch {} ({}), not a middle size",
            shape.peak,
            gain(peak)
        ));
    } else if !shape.falls_at_largest {
        missing.push(format!(
            "batch {last_batch} ({}) is not below batch {} ({}) beyond the noise",
            gain(last),
            shape.peak,
            gain(peak)
        ));
    }
    if shape.busier_with_fix == Some(false) {
        missing.push(format!(
            "the server's CPU is not busier with the fix at batch {}",
            shape.peak
        ));
    }
    format!(
        "The seed's shape is not reproduced: {}{busy}.",
        missing.join("; ")
    )
}

fn lease(cells: &[RunRecord]) -> Finding {
    let question = "Does one conditional UPDATE per extend (instead of a five-write transaction) \
                    cut the writes and raise extends/s, and does group commit pay?";
    let mut sentences = Vec::new();
    let mut reproduced = None;
    for (file, label) in [
        ("lease", "as configured"),
        ("lease-durable", "durable commits"),
    ] {
        let rows = of_file(cells, file);
        let Some((cores, threads)) = widest(&rows) else {
            continue;
        };
        let max_t = *threads.last().unwrap_or(&1);
        let at = |v: &str, t: usize| find(&rows, v, t, cores);
        if let (Some(txn), Some(update)) = (at("txn-log", max_t), at("sql-update", max_t)) {
            let writes = |r: &RunRecord| extra(r, "writes_per_extend").unwrap_or(f64::NAN);
            let fewer = writes(update) < writes(txn);
            let faster = update.ops_per_sec > txn.ops_per_sec && apart(update, txn);
            if file == "lease" || reproduced.is_none() {
                reproduced = (has_interval(update) && has_interval(txn)).then_some(fewer && faster);
            }
            sentences.push(format!(
                "{label} ({file}), {max_t} threads on {cores} cores: `sql-update` writes {:.1} \
                 rows per extend against {:.1} for `txn-log`, and does {} extends/s against \
                 {} ({}){}.",
                writes(update),
                writes(txn),
                with_interval(update.ops_per_sec, update, 1.0),
                with_interval(txn.ops_per_sec, txn, 1.0),
                times(update, txn, ""),
                match (fewer, faster) {
                    (true, true) => ": fewer writes and faster, as the seed's patch intended",
                    (true, false) => ": fewer writes but not measurably faster",
                    (false, _) => ": not fewer writes, so the seed's saving is not reproduced",
                }
            ));
        }
        if let (Some(txn), Some(batched)) = (at("txn-log", max_t), at("batched", max_t)) {
            let alone = match (at("txn-log", 1), at("batched", 1)) {
                (Some(t1), Some(b1)) if max_t > 1 => {
                    format!("; alone (1 thread) {}", times(b1, t1, ""))
                }
                _ => String::new(),
            };
            sentences.push(format!(
                "Group commit (`batched`) at {max_t} threads: {} extends/s, {}{alone}{}.",
                with_interval(batched.ops_per_sec, batched, 1.0),
                times(batched, txn, "`txn-log`"),
                extra(batched, "batch_size_mean")
                    .map_or(String::new(), |m| format!(", mean group {m:.1} extends"))
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

/// "seed's effect reproduced", "... not reproduced" or "this run cannot tell".
pub fn verdict(f: &Finding) -> &'static str {
    match f.reproduced {
        Some(true) => "seed's effect reproduced",
        Some(false) => "seed's effect not reproduced",
        None => "this run cannot tell",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness::schema::{CellKey, CellStatus};

    /// A usable lookup cell at `ops` ops/s whose interval is `ops` ± `spread` (0: one run).
    fn cell(variant: &str, threads: usize, ops: f64, spread: f64) -> RunRecord {
        let key = CellKey {
            scenario: "lookup".into(),
            variant: variant.into(),
            params: Default::default(),
            threads,
            cores: 2,
        };
        let mut r = RunRecord::failed(&key, "0-1", "x");
        r.status = CellStatus::Ok;
        r.failure = None;
        r.verified = true;
        r.scenario_file = "lookup".into();
        r.ops_per_sec = ops;
        r.ops_per_sec_min = ops - spread;
        r.ops_per_sec_max = ops + spread;
        r.ops_per_sec_ci = [ops - spread, ops + spread];
        r
    }

    #[test]
    fn single_runs_cannot_tell_and_say_so() {
        let ran_once: Vec<RunRecord> = [(1, 1e6), (2, 1e6), (4, 0.5e6)]
            .iter()
            .map(|&(t, ops)| cell("entry-cache", t, ops, 0.0))
            .collect();
        let f = &findings(&ran_once)[0];
        assert_eq!(f.reproduced, None);
        assert_eq!(verdict(f), "this run cannot tell");
        assert!(f
            .sentences
            .iter()
            .any(|s| s.contains("ran once and have no interval")));
        let repeated: Vec<RunRecord> = [(1, 1e6), (2, 1e6), (4, 0.5e6)]
            .iter()
            .map(|&(t, ops)| cell("entry-cache", t, ops, 1e4))
            .collect();
        assert_eq!(findings(&repeated)[0].reproduced, Some(true));
    }
}

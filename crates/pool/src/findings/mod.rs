//! Seed 004's question, asked of a run: why does throughput plateau as clients rise, and
//! does a bigger pool (10 x 5000 instead of 1 x 1024) fix it?
//!
//! The verdict follows from four parts ([`registry`]), each a paired comparison measured
//! until it decides, all on a simulated server (basis `model`): the plateau (the default
//! pool from the seed's 1000 to 2000 clients against the seed's 1.15x), the lift (the fix
//! against the default at 2000 clients), the fix's gain at the large batch size the
//! server model was not fitted to, and "no change" at one datapoint per request, which is
//! a part only where the default pool can queue and counts only beside an effect. The
//! cells' medians stay as context (sentences' bound-by figures, the batch table, details)
//! and decide nothing.
//!
//! Which limit bound a cell is the pool crate's one rule ([`crate::workload::bound_by`],
//! read from `extra.bound_by`). The perturbation file `pool-seed-batch-sensitivity.toml`
//! says how much the gains rest on the fitted costs; [`real`] adds the real pools on
//! PostgreSQL as context and the line that labels the seed's cells a model. Not here:
//! running cells or pairs, rendering.

pub mod batch;
pub mod claims;
pub mod real;
pub mod seed;

use harness::CellRecord;
use verdict::decide::Outcome;
use verdict::findings::{Answer, Basis, Chart, Run, Table, Verdict};
use verdict::judge::{extra, extra_str, find, param_text, too_few, widest, Est};
use verdict::registry::Parts;

pub use claims::registry;
use claims::{
    shape_text, SeedFigures, BATCH_FILE, CLIENTS_FILE, LARGE_BATCH_GAIN, LIFT,
    NO_CHANGE_AT_BATCH_1, PLATEAU,
};

/// The seed's question as `lab` asks it of pool: its words, its parts and its answer.
pub const QUESTION: verdict::Question = verdict::Question {
    hot_path: &crate::PoolHotPath,
    words: "Why does throughput plateau as clients rise, and does a bigger pool \
                            (10 x 5000 instead of 1 x 1024) fix it?",
    claims: |planned| registry(planned.seeds()).claims(planned),
    answer,
};

/// A design that keeps less than this share of its throughput past its slots is named: the
/// waiters should park, not spin.
const KEEPS: f64 = 0.8;

/// The constants of `pool-clients.toml` chosen to fit the seed, for results whose `[seed]`
/// table does not list them.
const CLIENTS_FIT: &[&str] = &[
    "base_us = 20000 (with cpu_us = 500: a 20.5 ms request) so that the default's \
     Little's-law ceiling, 1024 / 20.5 ms = 50k requests/s, is reached near 1000 clients, \
     where the seed's plateau starts",
    "server_cores = 64 with cpu_us = 500 so that the server's CPU (128k requests/s) limits \
     the fix between 2000 and 3000 clients (the seed: at 3000 \"did not increase as much\", \
     both machines over 80% CPU)",
];

/// The constants of `pool-seed-batch.toml` chosen to fit the seed, for results whose
/// `[seed]` table does not list them.
const BATCH_FIT: &[&str] = &[
    "base_us = 100000 and server_cores = 8 (times stretched for this machine), chosen before \
     the costs below were fitted to them: the gains rest on their ratio to those costs",
    "cpu_us = 1500 and cpu_per_point_ns = 250000 on the gains at batch 10 (+100%) and 100 \
     (+200%)",
    "heap_points = 20000000 on the gain at batch 5000 (+130%)",
];

/// The answer of `run`; `None` without pool cells or parts that bear on the question.
pub fn answer(run: &Run<'_>) -> Option<Answer> {
    let clients = run.of_file(CLIENTS_FILE);
    let batches = run.of_file(BATCH_FILE);
    let designs = run.of_file("pool");
    let real_pools = run.of_file(real::FILE);
    let registry = registry(run.seeds());
    let measured = registry.declared_in(run);
    if clients.is_empty()
        && batches.is_empty()
        && designs.is_empty()
        && real_pools.is_empty()
        && !measured
    {
        return None;
    }
    let seed = SeedFigures::of(run.seeds());
    let mut parts = registry.parts(run);
    let mut details = Vec::new();
    if let Some(why) = no_change_needs_an_effect(&mut parts) {
        details.push(why);
    }
    let (from, to) = (seed.from as usize, seed.to as usize);
    let (d, f) = (shape_text(seed.default), shape_text(seed.fix));
    let series = |shape: &str| -> Vec<&CellRecord> {
        let mut s: Vec<&CellRecord> = clients
            .iter()
            .copied()
            .filter(|c| {
                format!(
                    "{} x {}",
                    param_text(c, "connections"),
                    param_text(c, "max_requests")
                ) == shape
            })
            .collect();
        s.sort_by_key(|c| c.threads);
        s
    };
    let (default, fix) = (series(&d), series(&f));
    let bound_at = |s: &[&CellRecord]| at(s, to).map(bound_text).unwrap_or_default();

    let (plateau, unchanged) = (parts.get(PLATEAU), parts.get(NO_CHANGE_AT_BATCH_1));
    let mut sentences = vec![
        format!(
            "Default pool ({d}) from {from} to {to} clients, against the seed's {:.2}x: {}{}.",
            seed.growth,
            plateau_said(&parts, &seed),
            bound_at(&default)
        ),
        format!(
            "The fix ({f}) over the default at {to} clients: {}{}.",
            parts.said(LIFT),
            bound_at(&fix)
        ),
    ];
    if let Some((b, g)) = seed.large {
        sentences.push(format!(
            "At {b} datapoints per request (out of sample), the fix over the default against \
             the seed's {:.2}x: {}; no change at batch {}: {}.",
            1.0 + g,
            parts.said(LARGE_BATCH_GAIN),
            seed.unchanged.unwrap_or(1),
            match (unchanged.outcome, unchanged.ratio) {
                (Outcome::Inconclusive, None) => "not judged here (its part says why)".to_owned(),
                _ => parts.said(NO_CHANGE_AT_BATCH_1),
            }
        ));
    }
    if unchanged.outcome == Outcome::Inconclusive && unchanged.ratio.is_none() {
        details.push(format!("No change at batch 1: {}.", unchanged.why));
    }
    if plateau.ratio.is_some() {
        details.push(
            "Where the plateau starts follows from base_us (see what the model was calibrated \
             on): the plateau part shows that the pool holds at its Little's-law ceiling as \
             clients double, not where that ceiling falls."
                .to_owned(),
        );
    }
    let figure = match plateau.ratio {
        Some(_) => format!(
            "default {} from {from} to {to} clients (seed {:.2}x)",
            plateau.figure(),
            seed.growth
        ),
        None => String::new(),
    };

    details.extend(cell_context(&default, &fix, from, to));
    let gains = batch::gains(run, BATCH_FILE, &batches);
    let tables = batch_details(run, &gains, &mut details);
    details.extend(design_details(&designs));
    if !clients.is_empty() || !batches.is_empty() {
        details.push(real::MODEL.to_owned());
    }
    details.extend(real::details(&real_pools));
    for (file, rows) in [(CLIENTS_FILE, &clients), (BATCH_FILE, &batches)] {
        if let Some(why) = too_few(rows) {
            details.push(format!("{file}.toml: {why}."));
        }
    }
    // A "no change" the default pool cannot fail (fewer requests in flight than its
    // slots, so nothing queues) stays in the parts, inconclusive with its reason: no part
    // is dropped from a verdict.
    let outcomes: Vec<Outcome> = parts.all().iter().map(|p| p.outcome).collect();
    Some(Answer {
        verdict: Verdict::of_outcomes(&outcomes),
        parts: parts.into_vec(),
        basis: Basis::Model,
        calibrated_on: calibrated_on(run, !clients.is_empty(), !batches.is_empty()),
        figure,
        sentences,
        details,
        tables,
        chart: Some(if gains.is_empty() {
            Chart::Throughput {
                file: CLIENTS_FILE.into(),
            }
        } else {
            Chart::Sweep {
                file: BATCH_FILE.into(),
                param: "batch".into(),
            }
        }),
    })
}

/// The message-size sweep on the server model: what it was fitted to and what is out of
/// sample, its table of gains, and its sensitivity (or how to run it). Returns the tables.
fn batch_details(
    run: &Run<'_>,
    gains: &[batch::BatchGain],
    details: &mut Vec<String>,
) -> Vec<Table> {
    let mut tables = Vec::new();
    if !gains.is_empty() {
        let (row, fitted) = batch::seed_row(run.seeds(), BATCH_FILE);
        let list = |v: Vec<u64>| -> String {
            let v: Vec<String> = v.iter().map(u64::to_string).collect();
            if v.is_empty() {
                "none".to_owned()
            } else {
                v.join(", ")
            }
        };
        let out_of_sample = row
            .iter()
            .map(|(b, _)| *b)
            .filter(|b| !fitted.contains(b))
            .collect();
        details.push(format!(
            "Message sizes on the server model, fitted to the seed's gains at batch {}; out of \
             sample: {} (the table's gains are cell medians, context only).",
            list(fitted),
            list(out_of_sample)
        ));
        tables.push(batch::table(gains));
    }
    match sensitivity(run) {
        Some(text) => details.push(text),
        None if !gains.is_empty() => details.push(
            "Sensitivity not in this run: `just matrix scenarios=pool-seed-batch-sensitivity` \
             runs the fitted costs at half and double."
                .to_owned(),
        ),
        None => {}
    }
    tables
}

/// Agreeing with "no change" is evidence for the seed only beside an effect of the pool:
/// where the pool never matters, the fix changes nothing at batch 1 too. So a shown
/// `no_change_at_batch_1` with no other part shown counts as inconclusive; returns the
/// detail saying so.
fn no_change_needs_an_effect(parts: &mut Parts<'_, '_>) -> Option<String> {
    let effect = parts
        .all()
        .iter()
        .any(|p| p.name != NO_CHANGE_AT_BATCH_1 && p.outcome == Outcome::Shown);
    let p = parts.get_mut(NO_CHANGE_AT_BATCH_1);
    if p.outcome != Outcome::Shown || effect {
        return None;
    }
    p.outcome = Outcome::Inconclusive;
    p.why = "inside the no-change band, but no other part shows an effect of the pool, and \
             agreeing with \"no effect\" is no evidence for one"
        .to_owned();
    Some(format!(
        "No change at batch 1 counts for nothing here: {}.",
        p.why
    ))
}

/// The plateau's clause: its entry's, or narrower words where the interval says more
/// than one fixed clause can: a plateau flatter than the seed's (the interval wholly
/// under the seed's growth), or throughput that fell as the clients doubled (wholly under
/// [`seed::FALL`]), which is no plateau at all.
fn plateau_said(parts: &Parts<'_, '_>, seed: &SeedFigures) -> String {
    let p = parts.get(PLATEAU);
    let under = |x: f64| p.high.is_some_and(|h| h < x);
    match p.outcome {
        Outcome::Shown if under(seed.growth) => {
            format!("{}: a plateau, flatter than the seed's", p.figure())
        }
        Outcome::Contradicted if under(seed::FALL) => format!(
            "{}: throughput fell as the clients doubled, which is no plateau",
            p.figure()
        ),
        _ => parts.said(PLATEAU),
    }
}

/// The seed constants the figures rest on: each scenario file's `[seed]` list, or the
/// built-in one where the results lack it, for the files that ran.
fn calibrated_on(run: &Run<'_>, clients_ran: bool, batches_ran: bool) -> Vec<String> {
    let mut out = Vec::new();
    for (file, ran, builtin) in [
        (CLIENTS_FILE, clients_ran, CLIENTS_FIT),
        (BATCH_FILE, batches_ran, BATCH_FIT),
    ] {
        if !ran {
            continue;
        }
        let listed = run.seed_strs(file, "calibrated_on");
        if listed.is_empty() {
            out.extend(builtin.iter().map(|s| (*s).to_owned()));
        } else {
            out.extend(listed);
        }
    }
    out
}

/// The clients file's cell medians, as context: they decide nothing.
fn cell_context(
    default: &[&CellRecord],
    fix: &[&CellRecord],
    from: usize,
    to: usize,
) -> Vec<String> {
    let mut out = Vec::new();
    if let (Some(a), Some(b), Some(x)) = (at(default, from), at(default, to), at(fix, to)) {
        out.push(format!(
            "Cell medians (context; the parts decide): the default {} requests/s at {from} \
             clients and {} at {to}; the fix {} at {to}.",
            Est::of(a).text(),
            Est::of(b).text(),
            Est::of(x).text()
        ));
    }
    if let Some((last, prev)) = fix.last().zip(fix.len().checked_sub(2).map(|i| fix[i])) {
        out.push(format!(
            "The fix from {} to {} clients grew {:.2}x (cell medians) for {:.1}x the \
             clients{}.",
            prev.threads,
            last.threads,
            Est::of(last).ratio(&Est::of(prev)),
            last.threads as f64 / prev.threads as f64,
            bound_text(last)
        ));
    }
    out
}

/// The cell of `series` at `clients`.
fn at<'a>(series: &[&'a CellRecord], clients: usize) -> Option<&'a CellRecord> {
    series.iter().copied().find(|c| c.threads == clients)
}

/// ", bound by server (96% of its cores busy)": the one limit the pool crate's rule named
/// for the cell, with how near it ran; "" without `bound_by`.
fn bound_text(c: &CellRecord) -> String {
    let Some(bound) = extra_str(c, "bound_by") else {
        return String::new();
    };
    let near = match bound {
        "server" => extra(c, "server_util").map(|u| format!("{:.0}% of its cores busy", u * 100.0)),
        "pool" => extra(c, "ceiling_ratio")
            .map(|r| format!("at {:.0}% of its Little's-law ceiling", r * 100.0)),
        _ => (c.cpu_util > 0.0).then(|| {
            format!(
                "one request each; this machine, which runs them, {:.0}% busy",
                c.cpu_util * 100.0
            )
        }),
    };
    match near {
        Some(n) => format!(", bound by {bound} ({n})"),
        None => format!(", bound by {bound}"),
    }
}

/// In how many perturbations of the fitted costs the fix still gains more at batch 100
/// than at batch 1, beyond the intervals.
fn sensitivity(run: &Run<'_>) -> Option<String> {
    let rows = run.of_file("pool-seed-batch-sensitivity");
    let key = |c: &CellRecord| {
        ["cpu_us", "cpu_per_point_ns", "heap_points"]
            .iter()
            .map(|p| format!("{p}={}", param_text(c, p)))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut perturbations: Vec<String> = Vec::new();
    for c in &rows {
        if !perturbations.contains(&key(c)) {
            perturbations.push(key(c));
        }
    }
    let (mut shown, mut judged) = (0, 0);
    for p in &perturbations {
        let of: Vec<&CellRecord> = rows.iter().copied().filter(|c| key(c) == *p).collect();
        let gains = batch::gains(run, "pool-seed-batch", &of);
        let (Some(small), Some(mid)) = (
            gains.iter().find(|g| g.batch == 1),
            gains.iter().find(|g| g.batch == 100),
        ) else {
            continue;
        };
        if small.judged() && mid.judged() {
            judged += 1;
            shown += usize::from(mid.gain_range().0 > small.gain_range().1);
        }
    }
    (judged > 0).then(|| {
        format!(
            "Sensitivity: the fix gains more at batch 100 than at batch 1 in {shown} of {judged} \
             perturbations of the fitted costs ({}).",
            perturbations.join("; ")
        )
    })
}

/// Pool designs (`pool.toml`): the best against the seed's `driver-v3`, and any design that
/// loses more than a fifth past its slots.
fn design_details(designs: &[&CellRecord]) -> Vec<String> {
    let mut out = Vec::new();
    let Some((cores, threads)) = widest(designs) else {
        return out;
    };
    let max_t = *threads.last().unwrap_or(&1);
    let top = designs
        .iter()
        .copied()
        .filter(|c| c.threads == max_t && c.cores == cores);
    if let (Some(best), Some(base)) = (
        verdict::judge::best_of(top.clone()),
        find(designs, crate::DRIVER_V3.name, max_t, cores),
    ) {
        if best.variant != base.variant {
            out.push(format!(
                "Pool variants at {max_t} threads on {cores} cores: `{}` does {} acquire + \
                 release/s, {:.2}x the seed's `driver-v3` (cell medians).",
                best.variant,
                Est::of(best).text(),
                Est::of(best).ratio(&Est::of(base))
            ));
        }
    }
    let slots = designs.first().and_then(|c| {
        let n = |k: &str| c.params.get(k).and_then(|v| v.as_u64());
        Some((n("connections")? * n("max_requests")?) as usize)
    });
    if let Some(slots) = slots.filter(|s| threads.contains(s) && *s < max_t) {
        for variant in verdict::judge::variants_of(designs) {
            let (Some(full), Some(over)) = (
                find(designs, variant, slots, cores),
                find(designs, variant, max_t, cores),
            ) else {
                continue;
            };
            let kept = Est::of(over).ratio(&Est::of(full));
            if kept < KEEPS && Est::of(over).below(&Est::of(full)) == Some(true) {
                out.push(format!(
                    "`{variant}` keeps {:.0}% of its throughput from {slots} threads (as many \
                     as the slots) to {max_t}: {} against {}{}.",
                    kept * 100.0,
                    Est::of(over).text(),
                    Est::of(full).text(),
                    over.profile
                        .as_ref()
                        .map_or(String::new(), |p| format!("; its profile: {}", p.svg))
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;

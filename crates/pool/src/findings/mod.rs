//! Seed 004's question, asked of a run: why does throughput plateau as clients rise, and
//! does a bigger pool (10 x 5000 instead of 1 x 1024) fix it?
//!
//! Four parts, each judged with intervals at [`harness::judge::MIN_REPS`] repetitions or
//! more, all on a simulated server (basis `model`):
//! 1. the plateau: from the seed's 1000 to 2000 clients the default pool grows short of
//!    the linear growth twice the clients could give (`pool-clients.toml`);
//! 2. the fix lifts it: at 2000 clients 10 x 5000 does more than 1 x 1024;
//! 3. and 4. the message-size table (`pool-seed-batch.toml`) on the batch sizes the server
//!    model was NOT fitted to: no change at 1 datapoint per request, and the seed's gain at
//!    500 (the `[seed]` table names the fitted ones).
//!
//! Which limit bound a cell is the pool crate's one rule ([`crate::workload::bound_by`],
//! read from `extra.bound_by`); a sentence names that one cause. The perturbation file
//! `pool-seed-batch-sensitivity.toml` says how much the gains rest on the fitted costs.
//! Not here: running cells, rendering.

pub mod batch;

use harness::findings::{Answer, Basis, Chart, Run, Verdict};
use harness::judge::{extra, extra_str, find, param_text, percent, times, too_few, widest, Est};
use harness::RunRecord;

use batch::BatchGain;

/// The question, in the user's words.
pub const QUESTION: &str = "Why does throughput plateau as clients rise, and does a bigger pool \
                            (10 x 5000 instead of 1 x 1024) fix it?";

/// The seed's plateau when the results carry no `[seed]` table: "From 1000 to 2000, I hit
/// the same kind of plateau ... barely 15% throughput increase".
const SEED_PLATEAU: (usize, usize) = (1000, 2000);

/// A design that keeps less than this share of its throughput past its slots is named: the
/// waiters should park, not spin.
const KEEPS: f64 = 0.8;

/// The answer of `run`; `None` without pool cells that bear on the question.
pub fn answer(run: &Run<'_>) -> Option<Answer> {
    let clients = run.of_file("pool-clients");
    let batches = run.of_file("pool-seed-batch");
    let designs = run.of_file("pool");
    if clients.is_empty() && batches.is_empty() && designs.is_empty() {
        return None;
    }
    let mut sentences = Vec::new();
    let mut details = Vec::new();
    let mut tables = Vec::new();
    let (from, to) = (
        run.seed_f64("pool-clients", "plateau_from")
            .map_or(SEED_PLATEAU.0, |v| v as usize),
        run.seed_f64("pool-clients", "plateau_to")
            .map_or(SEED_PLATEAU.1, |v| v as usize),
    );
    let series = |shape: &str| -> Vec<&RunRecord> {
        let mut s: Vec<&RunRecord> = clients
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
    let (default, fix) = (series("1 x 1024"), series("10 x 5000"));
    let mut figure = String::new();
    let plateau = match (at(&default, from), at(&default, to)) {
        (Some(a), Some(b)) => {
            let linear = Est::of(a).scaled(to as f64 / from as f64);
            let short = Est::of(b).below(&linear);
            figure = format!(
                "default {:.2}x from {from} to {to} clients (linear {:.1}x)",
                Est::of(b).ratio(&Est::of(a)),
                to as f64 / from as f64
            );
            sentences.push(format!(
                "Default pool (1 x 1024): {} requests/s at {from} clients, {} at {to} ({}){}.",
                Est::of(a).text(),
                Est::of(b).text(),
                match short {
                    Some(true) => "short of linear: the seed's plateau",
                    Some(false) => "as linear as the clients allow: no plateau",
                    None => "too few repetitions to judge",
                },
                bound_text(b)
            ));
            short
        }
        _ => None,
    };
    let lifts = match (at(&default, to), at(&fix, to)) {
        (Some(d), Some(f)) => {
            sentences.push(format!(
                "With 10 x 5000 at {to} clients: {} requests/s, {}{}.",
                Est::of(f).text(),
                times(f, d, "the default"),
                bound_text(f)
            ));
            Est::of(f).above(&Est::of(d))
        }
        _ => None,
    };
    if let Some((last, prev)) = fix.last().zip(fix.len().checked_sub(2).map(|i| fix[i])) {
        details.push(format!(
            "The fix from {} to {} clients grew {} for {:.1}x the clients{}.",
            prev.threads,
            last.threads,
            times(last, prev, ""),
            last.threads as f64 / prev.threads as f64,
            bound_text(last)
        ));
    }

    let gains = batch::gains(run, "pool-seed-batch", &batches);
    let out_of_sample: Vec<&BatchGain> = gains
        .iter()
        .filter(|g| !g.calibrated && g.seed.is_some())
        .collect();
    let mut batch_parts = Vec::new();
    if !gains.is_empty() {
        let calibrated_text: Vec<String> = gains
            .iter()
            .filter(|g| g.calibrated)
            .map(|g| format!("{}", g.batch))
            .collect();
        let checks: Vec<String> = out_of_sample
            .iter()
            .map(|g| {
                batch_parts.push(g.agrees_with_seed());
                format!(
                    "batch {} {} (seed {}{})",
                    g.batch,
                    percent(g.gain()),
                    g.seed.map_or("-".into(), |s| if s == 0.0 {
                        "none".to_owned()
                    } else {
                        percent(s)
                    }),
                    match g.agrees_with_seed() {
                        Some(true) => ", agrees",
                        Some(false) => ", disagrees",
                        None => ", cannot tell",
                    }
                )
            })
            .collect();
        sentences.push(format!(
            "Message sizes on the server model, calibrated on the gains at {}; out of sample: {}.",
            if calibrated_text.is_empty() {
                "none named".to_owned()
            } else {
                calibrated_text.join(", ")
            },
            if checks.is_empty() {
                "none in this run".to_owned()
            } else {
                checks.join(", ")
            }
        ));
        tables.push(batch::table(&gains));
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
    details.extend(design_details(&designs));
    for (file, rows) in [("pool-clients", &clients), ("pool-seed-batch", &batches)] {
        if let Some(why) = too_few(rows) {
            details.push(format!("{file}.toml: {why}."));
        }
    }
    let mut parts = vec![plateau, lifts];
    parts.extend(batch_parts);
    Some(Answer {
        parts: Vec::new(),
        verdict: Verdict::of_parts(&parts),
        basis: Basis::Model,
        calibrated_on: if gains.is_empty() {
            Vec::new()
        } else {
            run.seed_strs("pool-seed-batch", "calibrated_on")
        },
        figure,
        sentences,
        details,
        tables,
        chart: Some(if gains.is_empty() {
            Chart::Throughput {
                file: "pool-clients".into(),
            }
        } else {
            Chart::Sweep {
                file: "pool-seed-batch".into(),
                param: "batch".into(),
            }
        }),
    })
}

/// The cell of `series` at `clients`.
fn at<'a>(series: &[&'a RunRecord], clients: usize) -> Option<&'a RunRecord> {
    series.iter().copied().find(|c| c.threads == clients)
}

/// ", bound by server (96% of its cores busy)": the one limit the pool crate's rule named
/// for the cell, with how near it ran; "" without `bound_by`.
fn bound_text(c: &RunRecord) -> String {
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
    let key = |c: &RunRecord| {
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
        let of: Vec<&RunRecord> = rows.iter().copied().filter(|c| key(c) == *p).collect();
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
fn design_details(designs: &[&RunRecord]) -> Vec<String> {
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
        harness::judge::best_of(top.clone()),
        find(designs, "driver-v3", max_t, cores),
    ) {
        if best.variant != base.variant {
            out.push(format!(
                "Pool variants at {max_t} threads on {cores} cores: `{}` does {} acquire + \
                 release/s, {}.",
                best.variant,
                Est::of(best).text(),
                times(best, base, "the seed's `driver-v3`")
            ));
        }
    }
    let slots = designs.first().and_then(|c| {
        let n = |k: &str| c.params.get(k).and_then(|v| v.as_u64());
        Some((n("connections")? * n("max_requests")?) as usize)
    });
    if let Some(slots) = slots.filter(|s| threads.contains(s) && *s < max_t) {
        for variant in harness::judge::variants_of(designs) {
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

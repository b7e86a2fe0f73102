//! Seed 002's question asked of the lab's own directory designs (not of 389 DS itself):
//! does the seed's design, which takes a lock on every read, lose more throughput as
//! worker threads rise than a design that takes none, on the same cells?
//!
//! The answer has three parts, declared once in [`registry`] and read back by name, each
//! a paired comparison of the baseline's scaling against a lock-free control's, so a
//! shortfall every design shows on this machine is not counted against the lock: short of
//! linear up to the CPUs, the per-thread decline past the seed's knee while CPUs are free
//! (cannot be decided on a machine with no more CPUs than the knee), and a loss past the
//! CPUs. The verdict follows from the parts alone; cell figures with their intervals stay
//! as context.
//!
//! The seed's design, the control, the knee and figures come from `benches/lookup.toml`'s
//! `[seed]` table. Not here: running cells or pairs, rendering (`lab`), the dispatch
//! model's own checks.

pub mod claims;
mod tables;
#[cfg(test)]
mod tests;

use verdict::decide::{Comparison, Outcome, Part};
use verdict::findings::{Answer, Basis, Chart, Run, Verdict};
use verdict::judge::{best_of, find, times, too_few, widest, Est};
use verdict::registry::Entry;

use self::claims::{Designs, PER_THREAD_PAST_KNEE, SHORT_OF_LINEAR};

pub use self::claims::{claims, registry};

/// The seed's question as `lab` asks it of lookup's directory designs: its words, its parts and its answer.
pub const QUESTION: verdict::Question = verdict::Question {
    hot_path: &crate::LookupHotPath,
    words: "Does a design that takes a lock on every read lose more \
                            throughput as worker threads rise than a lock-free design on \
                            the same cells, and which design keeps it (seed 002's question, \
                            asked of the lab's directory designs, not of 389 DS itself)?",
    claims,
    answer,
};

/// The answer of `run`; `None` without cells of `lookup.toml`.
pub fn answer(run: &Run<'_>) -> Option<Answer> {
    let file = run.of_file(claims::FILE);
    let (cores, threads) = widest(&file)?;
    let designs = Designs::of(run.seeds());
    let knee = designs.knee;
    let registry = registry(run.seeds());
    let parts = registry.parts(run);
    // The verdict rests on the parts that decide (none, since issue 51: each of the
    // question's parts follows from how the lab builds the designs, so lookup cannot tell).
    let outcomes = parts.deciding_outcomes();
    let sentences = registry
        .names()
        .into_iter()
        .map(|name| {
            let part = parts.get(name);
            sentence(registry.entry(name), part, comparison_of(run, name), knee)
        })
        .collect();
    // The verdict's figure is a part it rests on, decided where one is; a size only
    // (short_of_linear) is the figure only where nothing the verdict weighs has a ratio.
    let figure = [
        |p: &&Part| p.decides() && p.outcome != Outcome::Inconclusive,
        |p: &&Part| p.decides(),
        |_: &&Part| true,
    ]
    .iter()
    .find_map(|rule| parts.all().iter().filter(|p| p.ratio.is_some()).find(rule))
    .map(|p| format!("{} {}", p.name, p.figure()))
    .unwrap_or_default();

    let mut details: Vec<String> = parts
        .all()
        .iter()
        .map(|p| {
            // The sides are the part's own (`sides`); here what decided it and its cost.
            format!(
                "{} {}: {}; {} pair(s) in {:.0} s.",
                p.name,
                p.outcome.word(),
                p.why,
                p.pairs,
                p.seconds
            )
        })
        .collect();
    details.push(
        "The parts alone decide the verdict; the cell figures below, with their intervals, \
         are context."
            .to_owned(),
    );
    let max_t = *threads.last()?;
    let in_core = threads
        .iter()
        .copied()
        .filter(|t| *t <= cores)
        .max()
        .unwrap_or(1);
    let base = designs
        .baseline
        .iter()
        .find(|v| find(&file, v, 1, cores).is_some());
    if let Some(base) = base {
        details.extend(cell_context(&file, base, cores, in_core, max_t));
    }
    if let Some(why) = too_few(&file) {
        details.push(format!("lookup.toml: {why}."));
    }
    let mut tables = vec![tables::efficiency_table(&file, cores, in_core)];
    tables.extend(tables::dispatch_table(&run.of_file("lookup-dispatch")));
    Some(Answer {
        verdict: Verdict::of_outcomes(&outcomes),
        parts: parts.into_vec(),
        basis: Basis::Measured,
        calibrated_on: Vec::new(),
        figure,
        sentences,
        details,
        tables,
        chart: Some(Chart::PerThread {
            file: claims::FILE.into(),
        }),
    })
}

/// The comparison the run declared for part `name`, if any.
fn comparison_of<'a>(run: &Run<'a>, name: &str) -> Option<&'a Comparison> {
    run.comparisons
        .iter()
        .find(|m| m.claim.part == name)?
        .claim
        .comparison
        .as_ref()
}

/// One part's sentence: what its ratio compares, its figure, and what the outcome means
/// (its entry's clause).
fn sentence(entry: &Entry<'_>, part: &Part, cmp: Option<&Comparison>, knee: usize) -> String {
    let label = match part.name.as_str() {
        SHORT_OF_LINEAR => "Short of linear beyond the lock-free control".to_owned(),
        PER_THREAD_PAST_KNEE => {
            format!("Per-thread decline past {knee} threads beyond the lock-free control")
        }
        _ => "Loss past the CPUs beyond the lock-free control".to_owned(),
    };
    let (Some(cmp), Some(_)) = (cmp, part.ratio) else {
        return format!("{label}: {} ({}).", part.why, part.outcome.word());
    };
    let (hi, lo) = (
        cmp.a.cell.threads,
        cmp.a.per.as_ref().map_or(1, |c| c.threads),
    );
    let (base, ctl, cpus) = (&cmp.a.cell.variant, &cmp.b.cell.variant, cmp.a.cell.cores);
    let what = match part.name.as_str() {
        SHORT_OF_LINEAR => {
            format!("`{base}`'s scaling from {lo} to {hi} threads on {cpus} CPU(s) over `{ctl}`'s")
        }
        PER_THREAD_PAST_KNEE => format!(
            "`{base}`'s gain from {lo} to {hi} threads on {cpus} CPUs ({} idle) over `{ctl}`'s",
            cpus.saturating_sub(hi)
        ),
        _ => format!(
            "what `{base}` keeps at {hi} threads of its {lo}-thread throughput on {cpus} \
             CPU(s), over what `{ctl}` keeps"
        ),
    };
    let meaning = match part.outcome {
        Outcome::Shown => entry.shown.clone(),
        Outcome::Contradicted => entry.contradicted.clone(),
        Outcome::Inconclusive => format!("not decided: {} (inconclusive)", part.why),
    };
    format!("{label}: {what}: {}; {meaning}.", part.figure())
}

/// The baseline's own cells, the best design at the most threads and the busiest lock's
/// limit: figures with intervals that decide nothing.
fn cell_context(
    file: &[&harness::CellRecord],
    base: &str,
    cores: usize,
    in_core: usize,
    max_t: usize,
) -> Vec<String> {
    let at = |t: usize| find(file, base, t, cores);
    let mut out = Vec::new();
    let Some(one) = at(1) else {
        return out;
    };
    if let (Some(full), true) = (at(in_core), in_core > 1) {
        out.push(format!(
            "`{base}` on {cores} cores: {} ops/s at 1 thread, {} at {in_core} (efficiency {}).",
            Est::of(one).text(),
            Est::of(full).text(),
            tables::efficiency(full, one, in_core).text()
        ));
        if let Some(top) = at(max_t).filter(|_| max_t > cores) {
            out.push(format!(
                "At {max_t} threads `{base}` does {} ({}).",
                Est::of(top).text(),
                times(top, full, &format!("{in_core} threads"))
            ));
        }
    }
    let best = best_of(
        file.iter()
            .copied()
            .filter(|c| c.threads == max_t && c.cores == cores),
    );
    if let (Some(best), Some(base_top)) = (best, at(max_t)) {
        if best.variant != base {
            out.push(format!(
                "Best at {max_t} threads: `{}`, {} ops/s, {}.",
                best.variant,
                Est::of(best).text(),
                times(best, base_top, &format!("`{base}`"))
            ));
        }
    }
    // The lock's own limit, from the 1-thread cell (past the cores D also counts waiting
    // for a CPU): beyond N* threads no number of cores helps this design.
    if let Some(b) = one.bounds.as_ref().filter(|b| b.knee_threads.is_finite()) {
        out.push(if b.cpu_bound() {
            format!(
                "Its CPUs cap it at {} ops/s before its busiest lock ({}, {} ops/s) does, \
                 N* = {:.1} threads.",
                verdict::judge::si(b.limit()),
                b.lock,
                verdict::judge::si(b.ceiling_ops_per_sec),
                b.knee_threads
            )
        } else {
            format!(
                "Its busiest lock ({}) caps it at {} ops/s, N* = {:.1} threads: past that no \
                 number of cores helps `{base}`.",
                b.lock,
                verdict::judge::si(b.ceiling_ops_per_sec),
                b.knee_threads
            )
        });
    }
    out
}

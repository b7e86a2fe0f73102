//! Seed 002's question, asked of a run: does per-thread throughput fall as worker threads
//! rise (389 DS), and which variant keeps it?
//!
//! The seed's claim has three parts, each judged apart with intervals at
//! [`judge::MIN_REPS`] repetitions or more:
//! 1. short of linear up to the cores: the seed's design at threads = cores does less than
//!    0.9 x `cores` x its one-thread throughput, intervals apart (a design whose 2 threads
//!    equal 1 thread does not scale);
//! 2. per-thread decline past the seed's knee (4 threads) while cores are still free,
//!    which needs a machine with more cores than the knee: on fewer it is cannot tell,
//!    never folded into reproduced;
//! 3. a loss past the cores: throughput at the most threads below throughput at threads =
//!    cores (per-thread throughput falls there for every design; a total that falls is the
//!    seed's "the decline intensifies once we exceed the CPU").
//!
//! The seed's design, knee and figures come from `benches/lookup.toml`'s `[seed]` table.
//! Not here: running cells, rendering (`lab`), the dispatch model's own checks.

use harness::findings::{Answer, Basis, Chart, Run, Table, Verdict};
use harness::judge::{best_of, find, param_text, times, too_few, variants_of, widest, Est};
use harness::RunRecord;

/// The question, in the user's words.
pub const QUESTION: &str =
    "Does per-thread throughput fall as worker threads rise (389 DS), and which variant keeps it?";

/// Efficiency at threads = cores that still counts as linear: a design within a tenth of
/// `cores` x one thread scales (the seed's server did 2500 / 3800 = 0.66 per thread at 4).
const LINEAR_ENOUGH: f64 = 0.9;

/// The seed's knee when the results carry no `[seed]` table: "after t4 we immediately see a
/// per thread decline".
const SEED_KNEE: usize = 4;

/// The answer of `run`; `None` without cells of `lookup.toml`.
pub fn answer(run: &Run<'_>) -> Option<Answer> {
    let file = run.of_file("lookup");
    let (cores, threads) = widest(&file)?;
    let baselines = {
        let listed = run.seed_strs("lookup", "baseline");
        if listed.is_empty() {
            vec!["entry-cache".to_owned(), "global-mutex".to_owned()]
        } else {
            listed
        }
    };
    let knee = run
        .seed_f64("lookup", "knee_threads")
        .map_or(SEED_KNEE, |k| k as usize);
    let Some(base) = baselines
        .iter()
        .find(|v| find(&file, v, 1, cores).is_some())
        .cloned()
    else {
        return Some(Answer::cannot_tell(
            Basis::Measured,
            format!(
                "No cell of the seed's variant ({}) at 1 thread on {cores} cores.",
                baselines.join(" or ")
            ),
        ));
    };
    let max_t = *threads.last()?;
    let in_core = threads
        .iter()
        .copied()
        .filter(|t| *t <= cores)
        .max()
        .unwrap_or(1);
    let at = |t: usize| find(&file, &base, t, cores);
    let one = at(1)?;
    let mut sentences = Vec::new();
    let mut details = Vec::new();

    // Part 1: short of linear up to the cores.
    let full = at(in_core);
    let short_of_linear = match full {
        Some(full) if in_core > 1 => {
            Est::of(full).below(&Est::of(one).scaled(in_core as f64 * LINEAR_ENOUGH))
        }
        _ => None,
    };
    let figure = full
        .filter(|_| in_core > 1)
        .map(|full| {
            let e = efficiency(full, one, in_core);
            format!(
                "`{base}` efficiency {} at {in_core} threads on {cores} cores",
                e.text()
            )
        })
        .unwrap_or_default();
    sentences.push(match (full, short_of_linear) {
        (Some(full), verdict) if in_core > 1 => format!(
            "`{base}` on {cores} cores: {} ops/s at 1 thread, {} at {in_core} ({}).",
            Est::of(one).text(),
            Est::of(full).text(),
            match verdict {
                Some(true) => "short of linear, intervals apart",
                Some(false) => "not short of linear beyond the noise",
                None => "too few repetitions to judge",
            }
        ),
        _ => format!("One core only: whether `{base}` scales needs 2 cores or more."),
    });

    // Part 2: per-thread decline past the knee with cores free.
    let past_knee = threads
        .iter()
        .copied()
        .filter(|t| *t > knee && *t <= cores)
        .max();
    let decline = match (at(knee), past_knee.and_then(at)) {
        (Some(k), Some(p)) => Est::per_thread(p).below(&Est::per_thread(k)),
        _ => None,
    };
    if past_knee.is_none() {
        details.push(format!(
            "The seed's per-thread decline past {knee} threads with cores free cannot be told \
             here: it needs more than {knee} cores, and this run has {cores}."
        ));
    }

    // Part 3: a loss past the cores.
    let loss = match (full, at(max_t)) {
        (Some(full), Some(top)) if max_t > cores => {
            let lost = Est::of(top).below(&Est::of(full));
            sentences.push(format!(
                "At {max_t} threads `{base}` does {} ({}).",
                Est::of(top).text(),
                times(top, full, &format!("{in_core} threads"))
            ));
            lost
        }
        _ => None,
    };

    if let Some(best) = best_of(
        file.iter()
            .copied()
            .filter(|c| c.threads == max_t && c.cores == cores),
    ) {
        if best.variant != base {
            if let Some(base_top) = at(max_t) {
                sentences.push(format!(
                    "Best at {max_t} threads: `{}`, {} ops/s, {}.",
                    best.variant,
                    Est::of(best).text(),
                    times(best, base_top, &format!("`{base}`"))
                ));
            }
        }
    }
    // The lock's own limit, from the 1-thread cell (past the cores D also counts waiting
    // for a CPU): beyond N* threads no number of cores helps this design.
    if let Some(b) = one.bounds.as_ref().filter(|b| b.knee_threads.is_finite()) {
        sentences.push(format!(
            "Its busiest lock ({}) caps it at {} ops/s, N* = {:.1} threads: past that no \
             number of cores helps `{base}`.",
            b.lock,
            harness::judge::si(b.ceiling_ops_per_sec),
            b.knee_threads
        ));
    }
    details.push(format!(
        "Parts of the seed's claim: short of linear up to the cores {}; per-thread decline past \
         {knee} threads with cores free {}; a loss past the cores {}.",
        word(short_of_linear),
        word(decline),
        word(loss)
    ));
    if let Some(why) = too_few(&file) {
        details.push(format!("lookup.toml: {why}."));
    }
    let mut tables = vec![efficiency_table(&file, cores, in_core)];
    tables.extend(dispatch_table(&run.of_file("lookup-dispatch")));
    Some(Answer {
        parts: Vec::new(),
        verdict: Verdict::of_parts(&[short_of_linear, decline, loss]),
        basis: Basis::Measured,
        calibrated_on: Vec::new(),
        figure,
        sentences,
        details,
        tables,
        chart: Some(Chart::PerThread {
            file: "lookup".into(),
        }),
    })
}

/// How a part came out, in words.
fn word(part: Option<bool>) -> &'static str {
    match part {
        Some(true) => "shown",
        Some(false) => "not shown",
        None => "cannot tell",
    }
}

/// `full / (threads x one)` with the interval the two intervals allow.
fn efficiency(full: &RunRecord, one: &RunRecord, threads: usize) -> Est {
    let (f, o) = (Est::of(full), Est::of(one).scaled(threads as f64));
    Est {
        median: f.median / o.median,
        low: f.low / o.high,
        high: f.high / o.low,
        n: f.n.min(o.n),
    }
}

/// Per variant: one thread, threads = cores, the efficiency there.
fn efficiency_table(file: &[&RunRecord], cores: usize, in_core: usize) -> Table {
    let rows = variants_of(file)
        .into_iter()
        .filter_map(|v| {
            let one = find(file, v, 1, cores)?;
            let full = find(file, v, in_core, cores)?;
            Some(vec![
                format!("`{v}`"),
                Est::of(one).text(),
                Est::of(full).text(),
                efficiency(full, one, in_core).text(),
            ])
        })
        .collect();
    Table {
        title: format!("Scaling up to the cores ({cores} cores)"),
        columns: vec![
            "variant".into(),
            "1 thread, ops/s".into(),
            format!("{in_core} threads, ops/s"),
            "efficiency".into(),
        ],
        rows,
    }
}

/// What each hand-off in front of the search threads costs against direct calls, per
/// directory, at the most threads of `lookup-dispatch.toml`.
fn dispatch_table(file: &[&RunRecord]) -> Option<Table> {
    let (cores, threads) = widest(file)?;
    let max_t = *threads.last()?;
    let at = |v: &str, dispatch: &str| {
        file.iter().copied().find(|c| {
            c.variant == v
                && c.threads == max_t
                && c.cores == cores
                && param_text(c, "dispatch") == dispatch
        })
    };
    let modes = ["queue", "rayon", "batched"];
    let rows: Vec<Vec<String>> = variants_of(file)
        .into_iter()
        .filter_map(|v| {
            let direct = at(v, "direct")?;
            let mut row = vec![format!("`{v}`"), Est::of(direct).text()];
            row.extend(
                modes
                    .iter()
                    .map(|m| at(v, m).map_or("-".into(), |c| times(c, direct, ""))),
            );
            Some(row)
        })
        .collect();
    (!rows.is_empty()).then(|| Table {
        title: format!("Dispatch against direct calls at {max_t} threads on {cores} cores"),
        columns: ["directory", "direct, ops/s"]
            .iter()
            .chain(modes.iter())
            .map(|s| (*s).to_owned())
            .collect(),
        rows,
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use harness::testing::synthetic_cell;

    use super::*;

    /// `entry-cache` cells at `cores`, ops/s per thread count from `curve`.
    fn cells(cores: usize, curve: &[(usize, f64)], spread: f64, reps: usize) -> Vec<RunRecord> {
        curve
            .iter()
            .map(|&(t, ops)| {
                synthetic_cell(
                    "lookup",
                    "lookup",
                    "entry-cache",
                    &[],
                    t,
                    cores,
                    ops,
                    ops * spread,
                    reps,
                )
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
    fn a_serialised_design_on_enough_cores_is_reproduced() {
        // Two threads do what one does (efficiency 0.50), per-thread falls past 4 with
        // 8 cores free, and 12 threads lose throughput.
        let curve = [
            (1, 1e6),
            (2, 1e6),
            (4, 1e6),
            (6, 0.95e6),
            (8, 0.9e6),
            (12, 0.6e6),
        ];
        assert_eq!(verdict(&cells(8, &curve, 0.01, 8)), Verdict::Reproduced);
    }

    #[test]
    fn a_linear_design_is_not_reproduced() {
        let curve = [(1, 1e6), (2, 2e6), (4, 4e6), (6, 6e6), (8, 8e6), (12, 8e6)];
        assert_eq!(verdict(&cells(8, &curve, 0.01, 8)), Verdict::NotReproduced);
    }

    #[test]
    fn on_two_cores_the_part_past_the_knee_cannot_be_told() {
        let curve = [(1, 1e6), (2, 1e6), (4, 0.6e6)];
        let cells = cells(2, &curve, 0.01, 8);
        let seeds = BTreeMap::new();
        let a = answer(&Run {
            cells: &cells,
            seeds: &seeds,
            comparisons: &[],
        })
        .unwrap();
        assert_eq!(a.verdict, Verdict::Partly);
        assert!(a
            .details
            .iter()
            .any(|d| d.contains("needs more than 4 cores")));
    }

    #[test]
    fn three_repetitions_cannot_tell() {
        let curve = [
            (1, 1e6),
            (2, 1e6),
            (4, 1e6),
            (6, 0.9e6),
            (8, 0.9e6),
            (12, 0.6e6),
        ];
        assert_eq!(verdict(&cells(8, &curve, 0.01, 3)), Verdict::CannotTell);
    }

    #[test]
    fn a_design_that_falls_below_one_thread_is_short_of_linear() {
        // The old rule called this reproduced and a flat design not; both are short.
        let flat = [(1, 1e6), (2, 1.0e6), (4, 1.0e6)];
        let a = cells(2, &flat, 0.01, 8);
        let seeds = BTreeMap::new();
        let run = Run {
            cells: &a,
            seeds: &seeds,
            comparisons: &[],
        };
        assert!(answer(&run)
            .unwrap()
            .details
            .iter()
            .any(|d| d.contains("short of linear up to the cores shown")));
    }
}

//! The seed's question asked of the real server, as four fixed parts (issue 34): (a) more
//! 389 DS worker threads than CPUs cost throughput, (b) the seed's recommendation (threads
//! = CPUs) against the server's own autotuned default and the seed's 16, (c) per-thread
//! decline while CPUs are free, (d) where the server's time goes as threads grow. The four
//! parts are one registry ([`claims::registry`]) the claims and the answer both read, by
//! name. Parts (a)-(c) are comparisons measured as pairs adjacent in time, their sides
//! found in the plan, (d) is read from the server's own profiles ([`profile`]); the
//! verdict follows from the four outcomes alone. Per-thread figures of the cells (X/N)
//! are shown as the seed's arithmetic and decide nothing: past the CPUs they fall for any
//! server.
//!
//! This module measures nothing and renders nothing: `lab` lays the [`Answer`] out.

pub mod claims;
pub mod profile;
#[cfg(test)]
mod tests;

use harness::CellRecord;
use verdict::decide::{Outcome, Part};
use verdict::findings::{Answer, Basis, Chart, Run, Verdict};
use verdict::judge::{self, Est};
use verdict::registry::{Parts, Registry};

use claims::*;
pub use claims::{claims, claims_on, registry, registry_on};

/// The seed's question as `lab` asks it of the real 389 DS: its words, its parts and its answer.
pub const QUESTION: verdict::Question = verdict::Question {
    hot_path: &crate::LdapHotPath,
    words: "Do more worker threads than CPUs cost the real 389 Directory Server throughput, does the seed's recommendation (threads = CPUs) beat the server's autotuned default, does per-thread throughput fall while CPUs are free, and where does the server's time go as threads grow?",
    claims,
    answer,
};

/// The scenario file of the seed's server.
pub const FILE: &str = "389ds";

pub use server::findings::{curve_sentence, curves, server_time, table, Curve};

/// Which lookup design's curve the real server's resembles on `cores`: the one whose
/// throughput at its most threads over its throughput at 1 thread is nearest the real
/// server's. `None` without lookup cells at those cores.
pub fn nearest_model(run: &Run<'_>, real: &Curve<'_>) -> Option<(String, f64, f64)> {
    let lookup = run.of_file("lookup");
    let ratio = |c: &Curve<'_>| judge::ratio(c.last().ops_per_sec, c.first().ops_per_sec);
    let want = ratio(real);
    judge::variants_of(&lookup)
        .into_iter()
        .filter_map(|v| {
            let curve = curves(&lookup, v)
                .into_iter()
                .find(|c| c.cores == real.cores)?;
            (curve.first().threads == 1).then(|| (v.to_owned(), ratio(&curve)))
        })
        .filter(|(_, r)| r.is_finite())
        .min_by(|a, b| (a.1 - want).abs().total_cmp(&(b.1 - want).abs()))
        .map(|(v, r)| (v, r, want))
}

/// The four parts of `registry` as `run` measured them, part (d) read from the profiles.
pub fn parts<'r, 'a>(registry: &'r Registry<'a>, run: &Run<'_>) -> Parts<'r, 'a> {
    let mut parts = registry.parts(run);
    // The profiles decide its outcome; its weight (context, never the verdict's reason)
    // is the registry's.
    let time = parts.get_mut(WHERE_TIME_GOES);
    *time = Part {
        weight: std::mem::take(&mut time.weight),
        ..profile::where_time_goes(run)
    };
    parts
}

/// "12 against 2 threads on 2 CPUs": a part's sides, short, from the claim lab measured.
fn short_sides(run: &Run<'_>, part: &str) -> Option<String> {
    let m = run.comparisons.iter().find(|m| m.claim.part == part)?;
    let c = m.claim.comparison.as_ref()?;
    let (a, b) = (&c.a.cell, &c.b.cell);
    Some(if a.cores == b.cores {
        format!(
            "{} against {} threads on {} CPU(s)",
            a.threads, b.threads, a.cores
        )
    } else {
        format!("{} against {}", a.text(), b.text())
    })
}

/// "shown: 0.91x [0.88-0.94], 16 pairs (12 against 2 threads on 2 CPUs)" or the outcome
/// and its reason.
fn said(run: &Run<'_>, p: &Part) -> String {
    let sides = short_sides(run, &p.name).map_or(String::new(), |s| format!(" ({s})"));
    format!("{}: {}{sides}", p.outcome.word(), p.figure())
}

/// What the autotuned cell's server said it ran, where a cell wrote `-1`.
fn read_back(cells: &[&CellRecord]) -> Option<String> {
    let mut cells = cells.to_vec();
    // The most CPUs first: the cell the recommendation part compares.
    cells.sort_by_key(|c| std::cmp::Reverse(c.cores));
    cells.iter().find_map(|c| {
        (judge::extra_str(c, "nsslapd_threadnumber") == Some("-1")).then(|| {
            match judge::extra(c, "threadnumber_read_back") {
                Some(n) => format!(
                    "389 DS resolved nsslapd-threadnumber: -1 to {n:.0} worker threads on {} CPU(s) (read back from cn=monitor; cn=config needs the manager's bind)",
                    c.cores
                ),
                None => format!(
                    "the autotuned cell on {} CPU(s) could not read back its thread count: {}",
                    c.cores,
                    judge::extra_str(c, "threadnumber_read_back_error").unwrap_or("no figure")
                ),
            }
        })
    })
}

/// The parts of `registry`, each inconclusive with `why` (every 389 DS cell failed).
fn failed(registry: &Registry<'_>, why: &str) -> Answer {
    let parts: Vec<Part> = registry
        .entries()
        .iter()
        .map(|e| Part::other(&e.name, &e.claim, Outcome::Inconclusive, why))
        .collect();
    Answer {
        verdict: Verdict::of_outcomes(&parts.iter().map(|p| p.outcome).collect::<Vec<_>>()),
        parts,
        basis: Basis::Real,
        calibrated_on: Vec::new(),
        figure: String::new(),
        sentences: vec![format!("389 DS: {why}.")],
        details: Vec::new(),
        tables: Vec::new(),
        chart: None,
    }
}

/// The answer for `run`; `None` when it has no 389 DS cell, its parts inconclusive with
/// the failure when every one failed (a server that never started stays in the findings).
pub fn answer(run: &Run<'_>) -> Option<Answer> {
    // The machine's CPUs only matter to part (c)'s sides, which the answer does not ask.
    let registry = registry();
    if let Some(why) = server::findings::all_failed(run.cells, FILE) {
        return Some(failed(&registry, &why));
    }
    let cells = run.of_file(FILE);
    let ds = curves(&cells, VARIANT);
    if ds.is_empty() {
        return None;
    }
    let parts = parts(&registry, run);
    let outcomes: Vec<Outcome> = parts.all().iter().map(|p| p.outcome).collect();
    let verdict = Verdict::of_outcomes(&outcomes);
    let (past, rec) = (parts.get(THREADS_PAST_CPUS), parts.get(RECOMMENDATION));
    let (free, time) = (
        parts.get(PER_THREAD_WITH_CPUS_FREE),
        parts.get(WHERE_TIME_GOES),
    );
    let sentences = vec![
        format!("More worker threads than CPUs (X at the most threads over X at threads = CPUs), {}.", said(run, past)),
        format!(
            "The seed's recommendation, threads = CPUs, over the server's own default, {}; per-thread while CPUs are free, {}.",
            said(run, rec),
            said(run, free)
        ),
        format!("Where the server's time goes, {}: {}.", time.outcome.word(), time.why),
    ];
    let figure = [past, rec]
        .into_iter()
        .find(|p| p.outcome != Outcome::Inconclusive && p.ratio.is_some())
        .map(|p| format!("{}: {}", p.name, p.figure()))
        .unwrap_or_default();
    let mut details = vec![format!(
        "389 DS per-thread figures, the seed's arithmetic X/N (they fall past the CPUs for any server, so they decide nothing): {}.",
        ds.iter().map(curve_sentence).collect::<Vec<_>>().join("; ")
    )];
    if let Some(line) = read_back(&cells) {
        details.push(format!("{line}."));
    }
    let widest = ds.last().expect("not empty");
    details.push(format!(
        "The server's threads on {} core(s) at {} thread(s): {}; at {}: {}.",
        widest.cores,
        widest.last().threads,
        server_time(widest.last()),
        widest.first().threads,
        server_time(widest.first())
    ));
    if let Some(why) = judge::too_few(&cells) {
        details.push(format!("389ds.toml cells (context, not the parts): {why}."));
    }
    let open = run.of_file("openldap");
    let ol: Vec<Curve<'_>> = curves(&open, crate::Design::OpenLdap.name())
        .into_iter()
        .filter(|c| c.cells.len() >= 2)
        .collect();
    let mut tables = vec![table(
        "389 DS (ns-slapd), nsslapd-threadnumber = threads (-1 where the server's autotuning gives that count)",
        &ds,
    )];
    if !ol.is_empty() {
        details.push(format!(
            "OpenLDAP: {}.",
            ol.iter().map(curve_sentence).collect::<Vec<_>>().join("; ")
        ));
        for curve in &ol {
            if let Some(d) = ds.iter().find(|d| d.cores == curve.cores) {
                let (a, b) = (Est::of(d.best()), Est::of(curve.best()));
                details.push(format!(
                    "On {} core(s) the best of OpenLDAP ({} at {} threads) is {:.2}x the best of 389 DS ({} at {}){}.",
                    curve.cores,
                    b.text(),
                    curve.best().threads,
                    b.ratio(&a),
                    a.text(),
                    d.best().threads,
                    match b.apart(&a) {
                        Some(true) => ", intervals apart",
                        Some(false) => ", intervals overlapping (undecided, not equal)",
                        None => ", too few repetitions to compare",
                    }
                ));
            }
        }
        tables.push(table("OpenLDAP (slapd), threads = threads", &ol));
    }
    for curve in &ds {
        if let Some((model, model_ratio, real_ratio)) = nearest_model(run, curve) {
            details.push(format!(
                "Beside the lookup model on {} core(s): the real server's throughput at {} threads is {:.2}x its 1-thread figure; the nearest model design is {model} ({:.2}x).",
                curve.cores,
                curve.last().threads,
                real_ratio,
                model_ratio
            ));
        }
    }
    details.push(
        "Server time is each ns-slapd thread's schedstat over the window, over the threads that ran at least 1% of it; asleep covers waiting for work, for a lock or for I/O alike; where it slept is the profiled cells' server off-CPU flamegraph (scheduler switches, taken as root)."
            .to_owned(),
    );
    Some(Answer {
        parts: parts.into_vec(),
        verdict,
        basis: Basis::Real,
        calibrated_on: Vec::new(),
        figure,
        sentences,
        details,
        tables,
        chart: Some(Chart::Throughput {
            file: FILE.to_owned(),
        }),
    })
}

//! The seed's question asked of the real server: does 389 DS's per-thread search
//! throughput fall as `nsslapd-threadnumber` rises, on 1 and on 2 cores, and where does
//! the server's time go there? Plain functions over the run's records (`benches/389ds.toml`,
//! with `openldap.toml` and `lookup.toml` beside it when the run has them); every
//! comparison goes through [`harness::judge`], so a difference counts only when both
//! sides have 5 repetitions and their intervals are apart.
//!
//! This module measures nothing and renders nothing: `lab` lays the [`Answer`] out.

use harness::findings::{Answer, Basis, Chart, Run, Table, Verdict};
use harness::judge::{self, si, Est};
use harness::RunRecord;

/// The question, in the seed's words.
pub const QUESTION: &str = "On the real 389 Directory Server, does per-thread search throughput fall past some nsslapd-threadnumber, on 1 and on 2 cores, and where does the server's time go there?";

/// The scenario file of the seed's server.
pub const FILE: &str = "389ds";

/// One core count's curve: its cells by thread count, ascending.
#[derive(Debug, Clone)]
pub struct Curve<'a> {
    /// CPUs the server was pinned to.
    pub cores: usize,
    /// The cells, by thread count.
    pub cells: Vec<&'a RunRecord>,
}

impl<'a> Curve<'a> {
    /// The cell at the fewest threads.
    pub fn first(&self) -> &'a RunRecord {
        self.cells[0]
    }
    /// The cell at the most threads.
    pub fn last(&self) -> &'a RunRecord {
        self.cells[self.cells.len() - 1]
    }
    /// The cell with the highest per-thread median.
    pub fn peak(&self) -> &'a RunRecord {
        self.cells
            .iter()
            .copied()
            .max_by(|a, b| {
                a.per_thread_ops_per_sec
                    .total_cmp(&b.per_thread_ops_per_sec)
            })
            .expect("a curve has cells")
    }
    /// The cell with the highest throughput.
    pub fn best(&self) -> &'a RunRecord {
        judge::best_of(self.cells.iter().copied()).expect("a curve has cells")
    }
    /// Whether per-thread throughput at the most threads lies below its peak (intervals
    /// apart); `None` when not judged or when the peak is the last point.
    pub fn per_thread_falls(&self) -> Option<bool> {
        let (peak, last) = (self.peak(), self.last());
        if peak.threads == last.threads {
            return Est::per_thread(last).judged().then_some(false);
        }
        Est::per_thread(last).below(&Est::per_thread(peak))
    }
    /// Whether throughput at the most threads lies below the best (intervals apart): more
    /// threads costing throughput, not only sharing it.
    pub fn total_falls(&self) -> Option<bool> {
        let (best, last) = (self.best(), self.last());
        if best.threads == last.threads {
            return Est::of(last).judged().then_some(false);
        }
        Est::of(last).below(&Est::of(best))
    }
}

/// The curves of one variant, one per core count, ascending.
pub fn curves<'a>(cells: &[&'a RunRecord], variant: &str) -> Vec<Curve<'a>> {
    let mut cores: Vec<usize> = cells
        .iter()
        .filter(|c| c.variant == variant)
        .map(|c| c.cores)
        .collect();
    cores.sort_unstable();
    cores.dedup();
    cores
        .into_iter()
        .map(|k| {
            let mut row: Vec<&RunRecord> = cells
                .iter()
                .copied()
                .filter(|c| c.variant == variant && c.cores == k)
                .collect();
            row.sort_by_key(|c| c.threads);
            Curve {
                cores: k,
                cells: row,
            }
        })
        .filter(|c| !c.cells.is_empty())
        .collect()
}

/// "on CPU 42%, waiting for a CPU 3%, asleep 55%" of a cell's server, or why not.
pub fn server_time(r: &RunRecord) -> String {
    match r.server_time_share {
        Some(s) => format!(
            "on CPU {:.0}%, waiting for a CPU {:.0}%, asleep {:.0}%",
            100.0 * s.on_cpu,
            100.0 * s.run_queue.unwrap_or(0.0),
            100.0 * s.other
        ),
        None => "not read".to_owned(),
    }
}

fn pct(v: Option<f64>) -> String {
    v.map_or("-".to_owned(), |v| format!("{:.0}%", 100.0 * v))
}

/// The table of one variant: a row per (cores, threads).
pub fn table(title: &str, curves: &[Curve<'_>]) -> Table {
    let mut rows = Vec::new();
    for curve in curves {
        for c in &curve.cells {
            let s = c.server_time_share;
            rows.push(vec![
                c.cores.to_string(),
                c.threads.to_string(),
                Est::of(c).text(),
                Est::per_thread(c).text(),
                pct(s.map(|s| s.on_cpu)),
                pct(s.and_then(|s| s.run_queue)),
                pct(s.map(|s| s.other)),
                pct(judge::extra(c, "server_cpu_util")),
                pct(judge::extra(c, "client_cpu_util")),
            ]);
        }
    }
    Table {
        title: title.to_owned(),
        columns: [
            "cores",
            "threads",
            "ops/s",
            "per-thread ops/s",
            "server on CPU",
            "server run queue",
            "server asleep",
            "server CPU use",
            "client CPU use",
        ]
        .map(str::to_owned)
        .to_vec(),
        rows,
    }
}

/// One sentence on a curve: per-thread from the fewest threads to the most, and whether
/// the fall is beyond the noise.
fn curve_sentence(curve: &Curve<'_>) -> String {
    let (first, last) = (curve.first(), curve.last());
    let judged = match curve.per_thread_falls() {
        Some(true) => "intervals apart",
        Some(false) => "not beyond the noise",
        None => "too few repetitions to judge",
    };
    format!(
        "on {} core(s) per-thread {} at {} thread(s) to {} at {} ({judged})",
        curve.cores,
        si(first.per_thread_ops_per_sec),
        first.threads,
        si(last.per_thread_ops_per_sec),
        last.threads
    )
}

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

/// The answer for `run`; `None` when it has no usable 389 DS cell.
pub fn answer(run: &Run<'_>) -> Option<Answer> {
    let cells = run.of_file(FILE);
    let ds = curves(&cells, "389-ds");
    if ds.is_empty() {
        return None;
    }
    let ds: Vec<Curve<'_>> = ds.into_iter().filter(|c| c.cells.len() >= 2).collect();
    if ds.is_empty() {
        return Some(Answer::cannot_tell(
            Basis::Real,
            "The run has 389 DS at one thread count only: no curve to read.",
        ));
    }
    let parts: Vec<Option<bool>> = ds.iter().map(Curve::per_thread_falls).collect();
    let verdict = Verdict::of_parts(&parts);
    let widest = ds.last().expect("not empty");
    let mut sentences = vec![format!(
        "389 DS: {}.",
        ds.iter().map(curve_sentence).collect::<Vec<_>>().join("; ")
    )];
    let (best, last) = (widest.best(), widest.last());
    sentences.push(format!(
        "On {} core(s) throughput peaks at {} thread(s) ({}) and is {} at {} ({});{}",
        widest.cores,
        best.threads,
        Est::of(best).text(),
        Est::of(last).text(),
        last.threads,
        match widest.total_falls() {
            Some(true) => "more threads cost throughput, beyond sharing it",
            Some(false) => "more threads share the throughput without losing it",
            None => "too few repetitions to judge a loss",
        },
        ""
    ));
    sentences.push(format!(
        "The server's threads at {} thread(s): {}; at {}: {}.",
        last.threads,
        server_time(last),
        widest.first().threads,
        server_time(widest.first())
    ));
    let mut details = Vec::new();
    if let Some(why) = judge::too_few(&cells) {
        details.push(format!("389ds.toml: {why}."));
    }
    let open = run.of_file("openldap");
    let ol = curves(&open, "openldap");
    let mut tables = vec![table(
        "389 DS (ns-slapd), nsslapd-threadnumber = threads",
        &ds,
    )];
    if !ol.is_empty() {
        let ol: Vec<Curve<'_>> = ol.into_iter().filter(|c| c.cells.len() >= 2).collect();
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
                            Some(true) => "",
                            Some(false) => ", within the noise",
                            None => ", too few repetitions to judge",
                        }
                    ));
                }
            }
            tables.push(table("OpenLDAP (slapd), threads = threads", &ol));
        }
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
        "Server time is each ns-slapd thread's schedstat over the window, over the threads that ran at least 1% of it; asleep covers waiting for work, for a lock or for I/O alike (the off-CPU profile tells them apart)."
            .to_owned(),
    );
    Some(Answer {
        parts: Vec::new(),
        verdict,
        basis: Basis::Real,
        calibrated_on: Vec::new(),
        figure: format!(
            "per-thread {} at {} threads against {} at {} on {} core(s)",
            Est::per_thread(last).text(),
            last.threads,
            Est::per_thread(widest.peak()).text(),
            widest.peak().threads,
            widest.cores
        ),
        sentences,
        details,
        tables,
        chart: Some(Chart::PerThread {
            file: FILE.to_owned(),
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness::account::TimeShare;
    use std::collections::BTreeMap;

    /// A usable 389 DS cell with `reps` repetitions spread ±2% around `ops`.
    fn cell(
        file: &str,
        variant: &str,
        threads: usize,
        cores: usize,
        ops: f64,
        reps: usize,
    ) -> RunRecord {
        let r = harness::testing::synthetic_cell(
            "ldap",
            file,
            variant,
            &[],
            threads,
            cores,
            ops,
            0.0,
            1,
        );
        let values: Vec<f64> = (0..reps)
            .map(|i| ops * (0.98 + 0.04 * i as f64 / (reps.max(2) - 1) as f64))
            .collect();
        let single = RunRecord::merge_repetitions(
            &values
                .iter()
                .map(|&v| {
                    let mut one = r.clone();
                    one.repeats = 1;
                    one.ops_per_sec = v;
                    one.ops_per_sec_min = v;
                    one.ops_per_sec_max = v;
                    one.ops_per_sec_reps = vec![v];
                    one.server_time_share = Some(TimeShare {
                        on_cpu: 0.5,
                        run_queue: Some(0.1),
                        blocked: None,
                        other: 0.4,
                    });
                    one
                })
                .collect::<Vec<_>>(),
        )
        .unwrap();
        single
    }

    fn run_of(cells: &[RunRecord], f: impl FnOnce(&Run<'_>)) {
        let seeds = BTreeMap::new();
        f(&Run {
            cells,
            seeds: &seeds,
            comparisons: &[],
        });
    }

    /// Throughput at each of threads 1, 2, 4, 6, 12 on cores 1 and 2.
    fn matrix(totals: &[f64], reps: usize) -> Vec<RunRecord> {
        let mut out = Vec::new();
        for cores in [1, 2] {
            for (t, ops) in [1, 2, 4, 6, 12].iter().zip(totals) {
                out.push(cell(FILE, "389-ds", *t, cores, *ops * cores as f64, reps));
            }
        }
        out
    }

    #[test]
    fn a_per_thread_fall_beyond_the_noise_is_reproduced() {
        // The seed's shape: a ramp to 4 threads, then a decline.
        let cells = matrix(&[3800.0, 6000.0, 10000.0, 9000.0, 7000.0], 5);
        run_of(&cells, |run| {
            let a = answer(run).unwrap();
            assert_eq!(a.verdict, Verdict::Reproduced, "{a:?}");
            assert_eq!(a.basis, Basis::Real);
            assert!(a.sentences.len() <= 3);
            assert!(
                a.sentences[1].contains("cost throughput"),
                "{}",
                a.sentences[1]
            );
            assert!(a.sentences[2].contains("on CPU 50%"), "{}", a.sentences[2]);
            assert_eq!(a.tables[0].rows.len(), 10);
        });
    }

    #[test]
    fn per_thread_throughput_that_holds_is_not_reproduced() {
        // Perfect scaling: per-thread flat.
        let cells = matrix(&[1000.0, 2000.0, 4000.0, 6000.0, 12000.0], 5);
        run_of(&cells, |run| {
            let a = answer(run).unwrap();
            assert_eq!(a.verdict, Verdict::NotReproduced, "{a:?}");
        });
    }

    #[test]
    fn three_repetitions_cannot_tell() {
        let cells = matrix(&[3800.0, 6000.0, 10000.0, 9000.0, 7000.0], 3);
        run_of(&cells, |run| {
            let a = answer(run).unwrap();
            assert_eq!(a.verdict, Verdict::CannotTell, "{a:?}");
            assert!(
                a.details.iter().any(|d| d.contains("fewer than 5")),
                "{:?}",
                a.details
            );
        });
    }

    #[test]
    fn no_389_cells_no_answer_and_the_model_and_openldap_sit_beside_it() {
        run_of(&[], |run| assert!(answer(run).is_none()));
        let mut cells = matrix(&[3800.0, 6000.0, 10000.0, 9000.0, 7000.0], 5);
        for t in [2, 4, 6, 12] {
            cells.push(cell("openldap", "openldap", t, 2, 5000.0, 5));
        }
        for (v, most) in [("global-mutex", 0.5), ("dashmap", 3.0)] {
            cells.push(cell("lookup", v, 1, 2, 1e6, 5));
            cells.push(cell("lookup", v, 12, 2, 1e6 * most, 5));
        }
        run_of(&cells, |run| {
            let a = answer(run).unwrap();
            assert!(
                a.details.iter().any(|d| d.starts_with("OpenLDAP:")),
                "{:?}",
                a.details
            );
            // 389 DS on 2 cores: 7000/3800 = 1.84x, nearer dashmap's 3x than the mutex's 0.5x.
            assert!(
                a.details
                    .iter()
                    .any(|d| d.contains("nearest model design is dashmap")),
                "{:?}",
                a.details
            );
            assert_eq!(a.tables.len(), 2);
        });
    }
}

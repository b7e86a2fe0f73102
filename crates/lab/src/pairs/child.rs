//! A block of a part's pairs measured in one child process: the parent side (`lab matrix`
//! launching `lab pairs`, [`Children`]) and the child side ([`run`]).
//!
//! Why one process: a pair of two children costs two process starts, two canaries and
//! the gap between them, and two cells a second apart vary less together than two
//! windows a few milliseconds apart. In the child each pair measures every cell of the
//! comparison once (in order, reversed on odd pairs): through the hot path's own
//! [`harness::HotPath::measure_pairs`] where it keeps both sides resident (a real server,
//! started once), else by calling `measure` for each cell in turn, as `lab run
//! --repeats` does. Every cell of one comparison runs on the same CPUs (the child's mask);
//! comparisons across core counts keep a child per repetition.
//!
//! The request travels as one JSON argument holding each side's `lab run` arguments, so
//! the child checks every side exactly as `lab run` checks one. Not here: choosing which
//! comparisons go this way or how many pairs (`pairs`).

use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::Parser;
use harness::schema::CellKey;
use harness::{affinity, PairSide, Repetition, RunSettings};
use serde::{Deserialize, Serialize};

use crate::cell_request::{CellRequest, RunArgs};
use crate::plan::CellSpec;
use crate::run_cell::{resolve, Resolved};

/// What `lab pairs` is asked: each cell's `lab run` arguments, and how many pairs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairsRequest {
    /// Each cell's `lab run` arguments (without `run`), in the comparison's order.
    pub cells: Vec<Vec<String>>,
    /// Pairs to measure.
    pub pairs: usize,
    /// The index of the first of them in the comparison's whole sequence: the order of
    /// the sides alternates over the sequence, not afresh in every block (which gave side
    /// a the first window, right after a start, in most pairs).
    #[serde(default)]
    pub first: usize,
    /// Whether to interleave: above 1 (the most turns a side gets in a pair at
    /// `harness::slices::SLICE`), the sides stay resident together and alternate in
    /// short turns cut by their response times ([`harness::slices`]); 0 or 1, each pair
    /// measures whole windows in turn.
    #[serde(default)]
    pub slices: usize,
}

/// What `lab pairs` prints: each pair's records, in the request's cell order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairsOutput {
    /// The pairs measured.
    pub pairs: Vec<Vec<Repetition>>,
    /// Turns per side in each pair: 1 for whole windows, more where interleaved (the
    /// count the sides' response times allowed, `harness::slices::Schedule::cut`).
    #[serde(default)]
    pub slices: usize,
}

impl PairsRequest {
    /// The request for `count` pairs of `cells` at their planned windows, whole windows
    /// (`slices` 1) or interleaved.
    pub fn of(cells: &[&CellSpec<'_>], count: usize, first: usize, slices: usize) -> PairsRequest {
        let args = |c: &CellSpec<'_>| {
            let mut v = c.request(c.file.pair_window(), None).to_args();
            v.remove(0);
            v
        };
        PairsRequest {
            cells: cells.iter().map(|c| args(c)).collect(),
            pairs: count,
            first,
            slices,
        }
    }

    /// The arguments of the child `lab pairs` (after the program name).
    pub fn to_args(&self) -> Vec<String> {
        vec![
            "pairs".to_owned(),
            "--request".to_owned(),
            serde_json::to_string(self).unwrap_or_default(),
        ]
    }
}

/// The matrix's way of running pairs: a block of pairs in one child `lab pairs` where the
/// comparison's cells share their CPUs, else a child `lab run` per repetition.
pub struct Children<'a> {
    /// The `lab` executable.
    pub exe: &'a Path,
    /// The project root.
    pub root: &'a Path,
    /// The plan's cells.
    pub cells: &'a [CellSpec<'a>],
    /// Set by a stop signal.
    pub interrupted: &'a AtomicBool,
    /// Shows which cell runs.
    pub bar: &'a indicatif::ProgressBar,
}

impl super::Runner for Children<'_> {
    fn one(&mut self, i: usize, pair: usize) -> Option<Repetition> {
        let cell = &self.cells[i];
        self.bar.set_message(format!(
            "{}/{} t={} c={} pair {}",
            cell.file.file,
            cell.variant,
            cell.threads,
            cell.cores,
            pair + 1
        ));
        crate::cell_child::run_child(
            self.exe,
            self.root,
            cell,
            crate::cell_child::Purpose::Pair,
            pair,
            self.interrupted,
        )
        .map(|mut r| {
            r.scenario_file = cell.file.file.clone();
            r
        })
    }

    fn blocks(&self, cells: &[usize]) -> bool {
        let first = &self.cells[cells[0]];
        // Two cells or more (a chain's three or four), resident where the hot path keeps its
        // sides so, else measured in turn; all on one CPU mask and one window. Not the
        // delay experiment's, nor the lock library's cost: their switches are the
        // process's, so each side needs a child of its own.
        cells
            .iter()
            .all(|&i| self.cells[i].lock_delay.is_none() && !self.cells[i].without_lock_library)
            && crate::plan::parts::one_block(cells, self.cells)
            && (cells.len() >= 2 || !first.file.hot_path.pairs_in_one_process())
    }

    fn slices(&self, cells: &[usize], figure: &str) -> usize {
        let sides: Vec<&CellSpec<'_>> = cells.iter().map(|&i| &self.cells[i]).collect();
        crate::plan::parts::slices(&sides, figure)
    }

    fn block_cost(&self, cells: &[usize], count: usize, slices: usize) -> Duration {
        let sides: Vec<&CellSpec<'_>> = cells.iter().map(|&i| &self.cells[i]).collect();
        crate::plan::parts::pairs_cost(&sides, count, slices)
    }

    fn block(
        &mut self,
        cells: &[usize],
        count: usize,
        start: usize,
        slices: usize,
    ) -> Option<Result<super::Block, String>> {
        let specs: Vec<&CellSpec<'_>> = cells.iter().map(|&i| &self.cells[i]).collect();
        let mut block = super::Block {
            pairs: Vec::with_capacity(count),
            slices: 1,
        };
        // One child per run of servers (`plan::parts::pairs_per_start`): the pairs a
        // server pair serves share what its start fixed of its speed.
        let run = crate::plan::parts::pairs_per_start(&specs, slices);
        while block.pairs.len() < count {
            let n = run.min(count - block.pairs.len());
            match self.child(&specs, n, start + block.pairs.len(), slices)? {
                Ok(b) => {
                    block.slices = b.slices;
                    block.pairs.extend(b.pairs);
                }
                // What the earlier servers measured stays; the part says how many came back.
                Err(_) if !block.pairs.is_empty() => break,
                Err(why) => return Some(Err(why)),
            }
        }
        Some(Ok(block))
    }
}

impl Children<'_> {
    /// `count` pairs of `specs` in one child `lab pairs`, the first of them pair `start`.
    fn child(
        &mut self,
        specs: &[&CellSpec<'_>],
        count: usize,
        start: usize,
        slices: usize,
    ) -> Option<Result<super::Block, String>> {
        let first = specs[0];
        self.bar.set_message(format!(
            "{}/{} t={} c={}: {count} pairs of {} cells in one process{}",
            first.file.file,
            first.variant,
            first.threads,
            first.cores,
            specs.len(),
            if slices > 1 {
                format!(", interleaved in {slices} slices a side")
            } else {
                String::new()
            }
        ));
        let args = PairsRequest::of(specs, count, start, slices).to_args();
        let dirs = specs
            .iter()
            .flat_map(|c| crate::cell_child::data_dirs(c))
            .collect();
        let launch = crate::children::Launch {
            exe: self.exe,
            root: self.root,
            args: &args,
            // Twice the expected time, and at least a cell's own limit.
            timeout: first
                .file
                .timeout
                .max(crate::plan::parts::pairs_cost(specs, count, slices) * 2),
            round: 0,
            data_dirs: dirs,
        };
        let output = match crate::children::run(&launch, self.interrupted) {
            crate::children::Ended::Stopped => return None,
            crate::children::Ended::TimedOut => {
                return Some(Err(format!(
                    "a block of {count} pairs timed out after {} (killed)",
                    humantime::format_duration(launch.timeout)
                )))
            }
            crate::children::Ended::NotStarted(why) => return Some(Err(why)),
            crate::children::Ended::Exited {
                status,
                stdout,
                stderr,
            } => stdout
                .lines()
                .rev()
                .find_map(|l| serde_json::from_str::<PairsOutput>(l).ok())
                .ok_or_else(|| {
                    let last = stderr
                        .lines()
                        .rev()
                        .find(|l| !l.trim().is_empty() && !l.starts_with("note:"))
                        .unwrap_or("no output");
                    format!("{}: {last}", crate::children::describe(&status))
                }),
        };
        Some(output.map(|o| {
            super::Block {
                slices: o.slices.max(1),
                pairs: o
                    .pairs
                    .into_iter()
                    .map(|mut pair| {
                        for (r, c) in pair.iter_mut().zip(specs) {
                            r.scenario_file = c.file.file.clone();
                        }
                        pair
                    })
                    .collect(),
            }
        }))
    }
}

/// One side's request as `lab run` would check it.
fn side(args: &[String]) -> anyhow::Result<CellRequest> {
    #[derive(Parser)]
    struct One {
        #[command(flatten)]
        run: RunArgs,
    }
    let parsed =
        One::try_parse_from(std::iter::once("lab-run".to_owned()).chain(args.iter().cloned()))
            .map_err(|e| {
                anyhow::anyhow!("{}", e.to_string().lines().next().unwrap_or("bad side"))
            })?;
    CellRequest::from_run_args(&parsed.run)
}

/// Pair `n` of cells measured one after the other by `measure`, the order reversed every
/// other pair so that neither side always runs first; records in the cells' order.
fn in_turn(
    resolved: &[Resolved],
    n: usize,
    mut measure: impl FnMut(usize, &Resolved) -> Repetition,
) -> Vec<Repetition> {
    let mut order: Vec<usize> = (0..resolved.len()).collect();
    if n % 2 == 1 {
        order.reverse();
    }
    let mut pair: Vec<Option<Repetition>> = vec![None; resolved.len()];
    for i in order {
        pair[i] = Some(measure(i, &resolved[i]));
    }
    pair.into_iter().flatten().collect()
}

/// One side of an interleaved block: the cell and its runner settings.
struct Side<'a> {
    resolved: &'a Resolved,
    settings: RunSettings,
}

/// Pairs of `sides` interleaved ([`harness::slices`]), each pair built afresh: why
/// afresh, a probe here kept one build of each side for a block of 16 pairs, and a
/// mutex-guarded map against an identical second instance came out 0.95x-1.06x from
/// block to block (where its memory, its hash seeds and its threads land) while the
/// pairs inside a block varied by 0.02-0.05; pairs of one build are not independent of
/// that, pairs of fresh builds are. Returns each pair's measurements and the turns a
/// pair was usually cut into ([`usual_cut`]).
fn interleaved(
    sides: &[Side<'_>],
    request: &PairsRequest,
) -> anyhow::Result<(Vec<Vec<harness::Measurement>>, usize)> {
    let mut pairs = Vec::with_capacity(request.pairs);
    let mut cuts = Vec::with_capacity(request.pairs);
    for n in request.first..request.first + request.pairs {
        let (pair, cut) = one_interleaved(sides, n)?;
        pairs.push(pair);
        cuts.push(cut);
    }
    Ok((pairs, usual_cut(cuts).min(request.slices.max(1))))
}

/// The turns a block's pairs were usually cut into (the median of `cuts`, 1 for none):
/// each pair reads its sides' response times in a warm-up of its own, and a host stall
/// there (a 5 ms half warm-up that completes nothing) cuts that one pair into whole
/// windows; the fewest would then say a block of microsecond lookups ran uncut.
fn usual_cut(mut cuts: Vec<usize>) -> usize {
    cuts.sort_unstable();
    cuts.get(cuts.len() / 2).copied().unwrap_or(1)
}

/// Pair `n` of a comparison's sequence, interleaved: each side's `measure` runs once on
/// a thread of its own, the sides built one after the other (last to first on odd
/// pairs: where a side's memory and threads land moved a contended mutex by 40% in a
/// probe here, the side built first running faster), and each side's measurement is its
/// whole one (verification, latency) with its counted turns' operations and length as
/// its window. Extras are left out: they are the whole run's, warm-ups and re-warms
/// included, not the counted turns' (`pairs::share` then takes no figure from them).
fn one_interleaved(
    sides: &[Side<'_>],
    n: usize,
) -> anyhow::Result<(Vec<harness::Measurement>, usize)> {
    use harness::slices::{Conductor, Schedule};
    let first = sides[0].settings;
    let conductor = Conductor::new(Schedule {
        sides: sides.len(),
        pairs: 1,
        window: first.duration,
        warmup: first.warmup,
        first: n,
    });
    let mut order: Vec<usize> = (0..sides.len()).collect();
    if n % 2 == 1 {
        order.reverse();
    }
    let mut wholes: Vec<Option<Result<harness::Measurement, String>>> = vec![None; sides.len()];
    std::thread::scope(|scope| {
        let mut handles = Vec::new();
        for (started, &i) in order.iter().enumerate() {
            let side = &sides[i];
            let this = std::sync::Arc::clone(&conductor);
            let handle = std::thread::Builder::new()
                .name(format!("side-{}", i + 1))
                .spawn_scoped(scope, move || {
                    this.side(i, || {
                        side.resolved.hot_path.measure(
                            side.resolved.variant.name,
                            &side.resolved.params,
                            side.settings,
                        )
                    })
                });
            match handle {
                Ok(h) => handles.push((i, h)),
                Err(e) => {
                    wholes[i] = Some(Err(format!("could not start side {}: {e}", i + 1)));
                    break;
                }
            }
            conductor.wait_started(started + 1);
        }
        for (i, h) in handles {
            wholes[i] = Some(match h.join() {
                Ok(Ok(m)) => Ok(m),
                Ok(Err(failure)) => Err(failure.reason),
                Err(payload) => Err(format!(
                    "panicked: {}",
                    harness::runner::panic_message(payload.as_ref())
                )),
            });
        }
    });
    let mut measured = Vec::with_capacity(sides.len());
    for (i, whole) in wholes.into_iter().enumerate() {
        match whole {
            Some(Ok(m)) => measured.push(m),
            Some(Err(why)) => bail!("side {}: {why}", i + 1),
            None => bail!("side {}: not started", i + 1),
        }
    }
    let (log, cut) = conductor.result().map_err(anyhow::Error::msg)?;
    let counts = log.into_iter().next().unwrap_or_default();
    let pair = counts
        .iter()
        .zip(measured)
        .map(|(counts, mut m)| {
            m.ops = counts.ops;
            m.window = counts.window;
            m.extra.clear();
            m
        })
        .collect();
    Ok((pair, cut.slices))
}

/// The request's sides, each checked as `lab run` checks it, all of one hot path, on
/// the same CPUs, with one window.
fn sides(request: &PairsRequest) -> anyhow::Result<Vec<CellRequest>> {
    let requests: Vec<CellRequest> = request
        .cells
        .iter()
        .map(|a| side(a))
        .collect::<anyhow::Result<_>>()?;
    let Some(first) = requests.first() else {
        bail!("--request: no cells");
    };
    if requests.iter().any(|r| {
        r.hot_path != first.hot_path
            || r.cores != first.cores
            || r.duration != first.duration
            || r.warmup != first.warmup
            || r.locks_off != first.locks_off
            || r.lock_library != first.lock_library
    }) {
        bail!("--request: every cell must be of one hot path, on the same CPUs, with one window");
    }
    Ok(requests)
}

/// `lab pairs --request JSON`: measures the pairs in this process and prints one line of
/// JSON ([`PairsOutput`]).
pub fn run(request_json: &str) -> anyhow::Result<ExitCode> {
    let request: PairsRequest =
        serde_json::from_str(request_json).context("--request: not a pairs request")?;
    let requests = sides(&request)?;
    let first = &requests[0];
    let resolved: Vec<Resolved> = requests
        .iter()
        .map(resolve)
        .collect::<anyhow::Result<_>>()?;
    let hot_path = resolved[0].hot_path;
    let resident = hot_path.pairs_in_one_process();
    if resident && resolved.len() < 2 {
        bail!("{} measures pairs of two cells or more", hot_path.name());
    }
    // As `lab run` does: `locks=off` measures without the lock table's instrument.
    harness::locks::set_instrument(!first.locks_off);
    harness::locks::set_preload(first.lock_library);
    let cores = first
        .cores
        .unwrap_or_else(|| affinity::allowed_cpus().len());
    let cpus = affinity::limit_to_cores(cores).map_err(anyhow::Error::msg)?;
    let mask = affinity::format_cpu_list(&cpus);
    let settings = |threads: usize| RunSettings {
        threads,
        warmup: first.warmup,
        duration: first.duration,
    };
    let keys: Vec<CellKey> = resolved
        .iter()
        .zip(&requests)
        .map(|(r, req)| CellKey {
            hot_path: r.hot_path.name().to_owned(),
            variant: r.variant.name.to_owned(),
            params: r.params.to_map(),
            threads: req.threads,
            cores,
        })
        .collect();
    let record =
        |i: usize, m: &harness::Measurement| Repetition::from_measurement(&keys[i], &mask, m);
    let mut slices = 1;
    let pairs: Vec<Vec<Repetition>> = if request.slices > 1 && !resident {
        let sides: Vec<Side<'_>> = resolved
            .iter()
            .zip(&requests)
            .map(|(r, req)| Side {
                resolved: r,
                settings: settings(req.threads),
            })
            .collect();
        let (measured, cut) = interleaved(&sides, &request)?;
        slices = cut;
        measured
            .iter()
            .map(|pair| pair.iter().enumerate().map(|(i, m)| record(i, m)).collect())
            .collect()
    } else if resident {
        // The hot path goes in the sides' order from its first pair; an odd start in the
        // whole sequence is the same alternation with the order reversed.
        let mut order: Vec<usize> = (0..resolved.len()).collect();
        if request.first % 2 == 1 {
            order.reverse();
        }
        let sides: Vec<PairSide<'_>> = order
            .iter()
            .map(|&i| PairSide {
                variant: resolved[i].variant.name,
                params: &resolved[i].params,
                threads: requests[i].threads,
            })
            .collect();
        match hot_path.measure_pairs(&sides, request.pairs, settings(requests[order[0]].threads)) {
            None => bail!("{} measures no pairs in one process", hot_path.name()),
            Some(Err(failure)) => bail!("{}", failure.reason),
            Some(Ok(pairs)) => pairs
                .iter()
                .map(|pair| {
                    let mut records: Vec<Option<Repetition>> =
                        resolved.iter().map(|_| None).collect();
                    for (m, &i) in pair.iter().zip(&order) {
                        records[i] = Some(record(i, m));
                    }
                    records.into_iter().flatten().collect()
                })
                .collect(),
        }
    } else {
        (0..request.pairs)
            .map(|n| {
                in_turn(&resolved, request.first + n, |i, r| {
                    match r.hot_path.measure(
                        r.variant.name,
                        &r.params,
                        settings(requests[i].threads),
                    ) {
                        Ok(m) => record(i, &m),
                        Err(failure) => Repetition::failed(&keys[i], &mask, failure.reason),
                    }
                })
            })
            .collect()
    };
    println!("{}", serde_json::to_string(&PairsOutput { pairs, slices })?);
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(threads: &str) -> Vec<String> {
        [
            "--hot-path",
            "noop",
            "--variant",
            "noop",
            "--threads",
            threads,
            "--cores",
            "1",
            "--duration",
            "10ms",
            "--warmup",
            "1ms",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    }

    #[test]
    fn a_side_is_checked_as_lab_run_checks_it() {
        assert_eq!(side(&args("2")).unwrap().threads, 2);
        assert!(side(&args("0"))
            .unwrap_err()
            .to_string()
            .contains("--threads"));
    }

    #[test]
    fn the_sides_alternate_over_the_whole_sequence_not_per_block() {
        // Two blocks of 5 pairs from pairs 0 and 5: side a first in pairs 0, 2, 4, 6, 8.
        let resolved: Vec<Resolved> = [args("1"), args("2")]
            .iter()
            .map(|a| resolve(&side(a).unwrap()).unwrap())
            .collect();
        let mut firsts = Vec::new();
        for (start, count) in [(0, 5), (5, 4)] {
            for n in 0..count {
                let mut seen = Vec::new();
                in_turn(&resolved, start + n, |i, _| {
                    seen.push(i);
                    Repetition::failed(
                        &CellKey {
                            hot_path: "noop".into(),
                            variant: "noop".into(),
                            params: Default::default(),
                            threads: 1,
                            cores: 1,
                        },
                        "0",
                        "x",
                    )
                });
                firsts.push(seen[0]);
            }
        }
        assert_eq!(firsts, [0, 1, 0, 1, 0, 1, 0, 1, 0]);
    }

    #[test]
    fn cells_on_different_cpus_are_refused_in_one_line() {
        let mut other = args("2");
        other[7] = "2".to_owned();
        let req = PairsRequest {
            cells: vec![args("1"), other],
            pairs: 1,
            first: 0,
            slices: 1,
        };
        let err = run(&serde_json::to_string(&req).unwrap()).unwrap_err();
        assert!(err.to_string().contains("same CPUs"), "{err}");
    }

    #[test]
    fn one_stalled_warm_up_does_not_say_the_block_ran_uncut() {
        assert_eq!(usual_cut(vec![2, 2, 1, 2]), 2);
        assert_eq!(usual_cut(vec![40, 1, 40]), 40);
        // A slow real node: every pair one resident whole window.
        assert_eq!(usual_cut(vec![1, 1, 2]), 1);
        assert_eq!(usual_cut(Vec::new()), 1);
    }
}

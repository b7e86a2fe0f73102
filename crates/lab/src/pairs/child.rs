//! A block of a part's pairs measured in one child process, for hot paths whose cells are
//! expensive to start (a real server): the parent side (`lab matrix` launching
//! `lab pairs`) and the child side (both cells resident, windows alternated, through
//! [`harness::HotPath::measure_pairs`]).
//!
//! The request travels as one JSON argument holding each side's `lab run` arguments, so
//! the child checks both sides exactly as `lab run` checks one. Not here: choosing which
//! comparisons go this way or how many pairs (`pairs`).

use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::Parser;
use harness::schema::CellKey;
use harness::{affinity, PairSide, RunRecord, RunSettings};
use serde::{Deserialize, Serialize};

use crate::cell_request::{CellRequest, RunArgs};
use crate::plan::CellSpec;
use crate::run_cell::{resolve, Resolved};

/// What `lab pairs` is asked: the two sides as `lab run` arguments, and how many pairs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairsRequest {
    /// Side a's `lab run` arguments (without `run`).
    pub a: Vec<String>,
    /// Side b's.
    pub b: Vec<String>,
    /// Pairs to measure.
    pub pairs: usize,
}

/// What `lab pairs` prints: each pair's two records, a's first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairsOutput {
    /// The pairs measured.
    pub pairs: Vec<[RunRecord; 2]>,
}

impl PairsRequest {
    /// The request for `count` pairs of cells `a` and `b` at their planned windows.
    pub fn of(a: &CellSpec<'_>, b: &CellSpec<'_>, count: usize) -> PairsRequest {
        let args = |c: &CellSpec<'_>| {
            let mut v = c.request(c.file.duration, None).to_args();
            v.remove(0);
            v
        };
        PairsRequest {
            a: args(a),
            b: args(b),
            pairs: count,
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

/// The matrix's way of running pairs: each repetition a child `lab run`, and blocks of
/// pairs a child `lab pairs` where the hot path measures pairs in one process.
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
    fn one(&mut self, i: usize, pair: usize) -> Option<RunRecord> {
        let cell = &self.cells[i];
        self.bar.set_message(format!(
            "{}/{} t={} c={} pair {}",
            cell.file.file,
            cell.variant,
            cell.threads,
            cell.cores,
            pair + 1
        ));
        crate::matrix::run_child(self.exe, self.root, cell, None, pair, self.interrupted).map(
            |mut r| {
                r.scenario_file = cell.file.file.clone();
                r
            },
        )
    }

    fn blocks(&self, a: usize, b: usize) -> bool {
        let (ca, cb) = (&self.cells[a], &self.cells[b]);
        ca.file.hot_path.pairs_in_one_process()
            && ca.file.hot_path.name() == cb.file.hot_path.name()
            && ca.cores == cb.cores
            && ca.file.duration == cb.file.duration
            && ca.file.warmup == cb.file.warmup
    }

    fn block_cost(&self, a: usize, b: usize, count: usize) -> Duration {
        let (ca, cb) = (&self.cells[a], &self.cells[b]);
        // Both sides start once; each window then costs its warm-up and itself.
        ca.file.overhead + cb.file.overhead + (ca.file.warmup + ca.file.duration) * 2 * count as u32
    }

    fn block(
        &mut self,
        a: usize,
        b: usize,
        count: usize,
    ) -> Option<Result<Vec<[RunRecord; 2]>, String>> {
        let (ca, cb) = (&self.cells[a], &self.cells[b]);
        self.bar.set_message(format!(
            "{}/{} t={} against t={} c={}: {count} pairs in one process",
            ca.file.file, ca.variant, ca.threads, cb.threads, ca.cores
        ));
        let args = PairsRequest::of(ca, cb, count).to_args();
        let mut dirs = crate::matrix::data_dirs(ca);
        dirs.extend(crate::matrix::data_dirs(cb));
        let launch = crate::children::Launch {
            exe: self.exe,
            root: self.root,
            args: &args,
            // Twice the expected time, and at least a cell's own limit.
            timeout: ca.file.timeout.max(self.block_cost(a, b, count) * 2),
            round: 0,
            data_dirs: dirs,
        };
        match crate::children::run(&launch, self.interrupted) {
            crate::children::Ended::Stopped => None,
            crate::children::Ended::TimedOut => Some(Err(format!(
                "a block of {count} pairs timed out after {} (killed)",
                humantime::format_duration(launch.timeout)
            ))),
            crate::children::Ended::NotStarted(why) => Some(Err(why)),
            crate::children::Ended::Exited {
                status,
                stdout,
                stderr,
            } => Some(
                stdout
                    .lines()
                    .rev()
                    .find_map(|l| serde_json::from_str::<PairsOutput>(l).ok())
                    .map(|o| {
                        o.pairs
                            .into_iter()
                            .map(|[mut x, mut y]| {
                                x.scenario_file = ca.file.file.clone();
                                y.scenario_file = cb.file.file.clone();
                                [x, y]
                            })
                            .collect()
                    })
                    .ok_or_else(|| {
                        let last = stderr
                            .lines()
                            .rev()
                            .find(|l| !l.trim().is_empty() && !l.starts_with("note:"))
                            .unwrap_or("no output");
                        format!("{}: {last}", crate::children::describe(&status))
                    }),
            ),
        }
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

/// `lab pairs --request JSON`: measures the pairs in this process and prints one line of
/// JSON ([`PairsOutput`]).
pub fn run(request_json: &str) -> anyhow::Result<ExitCode> {
    let request: PairsRequest =
        serde_json::from_str(request_json).context("--request: not a pairs request")?;
    let (ra, rb) = (side(&request.a)?, side(&request.b)?);
    if ra.hot_path != rb.hot_path || ra.cores != rb.cores {
        bail!("--request: both sides must be of one hot path on the same CPUs");
    }
    let (a, b) = (resolve(&ra)?, resolve(&rb)?);
    if !a.hot_path.pairs_in_one_process() {
        bail!("{} measures no pairs in one process", a.hot_path.name());
    }
    let cores = ra.cores.unwrap_or_else(|| affinity::allowed_cpus().len());
    let cpus = affinity::limit_to_cores(cores).map_err(anyhow::Error::msg)?;
    let mask = affinity::format_cpu_list(&cpus);
    fn pair_side<'r>(r: &'r Resolved, req: &CellRequest) -> PairSide<'r> {
        PairSide {
            variant: r.variant.name,
            params: &r.params,
            threads: req.threads,
        }
    }
    let settings = RunSettings {
        threads: ra.threads,
        warmup: ra.warmup,
        duration: ra.duration,
    };
    let key = |r: &Resolved, req: &CellRequest| CellKey {
        hot_path: r.hot_path.name().to_owned(),
        variant: r.variant.name.to_owned(),
        params: r.params.to_map(),
        threads: req.threads,
        cores,
    };
    let measured = a.hot_path.measure_pairs(
        pair_side(&a, &ra),
        pair_side(&b, &rb),
        request.pairs,
        settings,
    );
    let pairs = match measured {
        None => bail!("{} measures no pairs in one process", a.hot_path.name()),
        Some(Err(failure)) => bail!("{}", failure.reason),
        Some(Ok(pairs)) => pairs,
    };
    let (ka, kb) = (key(&a, &ra), key(&b, &rb));
    let out = PairsOutput {
        pairs: pairs
            .iter()
            .map(|[ma, mb]| {
                [
                    RunRecord::from_measurement(&ka, &mask, ma),
                    RunRecord::from_measurement(&kb, &mask, mb),
                ]
            })
            .collect(),
    };
    println!("{}", serde_json::to_string(&out)?);
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_side_is_checked_as_lab_run_checks_it() {
        let ok: Vec<String> = ["--hot-path", "noop", "--variant", "noop", "--threads", "2"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(side(&ok).unwrap().threads, 2);
        let bad: Vec<String> = ["--hot-path", "noop", "--variant", "noop", "--threads", "0"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert!(side(&bad).unwrap_err().to_string().contains("--threads"));
    }

    #[test]
    fn a_hot_path_without_pairs_in_one_process_is_refused_in_one_line() {
        let args = |t: &str| -> Vec<String> {
            [
                "--hot-path",
                "noop",
                "--variant",
                "noop",
                "--threads",
                t,
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
        };
        let req = PairsRequest {
            a: args("1"),
            b: args("2"),
            pairs: 1,
        };
        let err = run(&serde_json::to_string(&req).unwrap()).unwrap_err();
        assert!(err.to_string().contains("measures no pairs"), "{err}");
    }
}

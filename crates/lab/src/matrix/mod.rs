//! `lab matrix`: runs every cell of a [`MatrixPlan`] as a child `lab run`, repetitions
//! interleaved across cells, and writes the results file atomically after every round.
//!
//! One child process per repetition of a cell: a crash, a hang (bounded by the cell's
//! timeout) or a leaked lock cannot take the matrix down; each starts cold; its CPU mask
//! is its own. Repetition r of every cell runs before repetition r+1 of any, in an order
//! shuffled afresh every round (`order`), so a slow minute on a noisy machine lands on
//! many cells once rather than on one cell three times.
//!
//! The results file is rewritten after every round, marked `complete: false` until the
//! end, so a `kill -9` loses at most the round in flight and `resume=<run-id>` continues
//! from it (`resume`). SIGINT, SIGTERM and SIGHUP (`signals`) stop after killing the cell
//! in flight, whose repetition is discarded rather than counted as failed, and still
//! write the cells that finished and their report, marked incomplete. Children and their
//! scratch folders are handled by `children`.
//!
//! A repetition taken while other processes loaded the machine is retaken (`retake`), a
//! reference loop is timed after every round (`reference`), and the cost of a child
//! beyond its warm-up and window is measured; all three land in the results' `env`.

mod rounds;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use indicatif::ProgressBar;

use crate::cell_child::{data_dirs, run_child};
use crate::plan::profiled;
use crate::plan::{CellSpec, MatrixPlan};
use crate::resume::Start;
use crate::retake::Retaker;
use crate::run_state::RunState;
use crate::{progress, signals, table};

/// Runs the matrix (or continues the run in `start`), writes `reports/data/<run-id>.json`
/// and prints the tables.
pub fn run(plan: &MatrixPlan, start: Start) -> anyhow::Result<ExitCode> {
    let mut matrix = Matrix::plan(plan, start)?;
    // The rounds take the profiles after their kept rounds (`rounds`): a flamegraph left
    // out is a promise broken, so the profiles come before anything the budget may cut
    // (a run here lost 8 of them when its first rounds overran under host steal).
    // The pairs come before the rounds the budget left out, bar a placebo's pairs past
    // its floor (`pairs::Reach`), which get what those rounds leave.
    matrix.rounds()?;
    matrix.profiles();
    matrix.pairs()?;
    matrix.report()
}

/// A matrix run in progress: its cells, what they measured so far, and what the steps
/// share (the budget's clock, the progress bar, the stop flag).
struct Matrix<'p> {
    plan: &'p MatrixPlan,
    cells: Vec<CellSpec<'p>>,
    run: RunState,
    /// The cells chosen for a profile.
    chosen: Vec<bool>,
    /// The chosen cells that get a second profile (`profiled::repeated`).
    repeat: Vec<bool>,
    exe: PathBuf,
    retaker: Retaker,
    /// Repetitions each cell's file asks for.
    planned: Vec<usize>,
    began: Instant,
    /// What the budget keeps for the parts' pairs (`plan::parts`), which the rounds may
    /// not take.
    pairs_kept: Duration,
    bar: ProgressBar,
    interrupted: &'static AtomicBool,
    /// Repetitions added by extra rounds.
    extended: usize,
}

impl<'p> Matrix<'p> {
    /// The run's cells, what is left of them, its estimate (printed) and its state.
    fn plan(plan: &'p MatrixPlan, start: Start) -> anyhow::Result<Matrix<'p>> {
        let interrupted = signals::install();
        let cells = plan.cells();
        let data_dir = plan.root.join("reports").join("data");
        std::fs::create_dir_all(&data_dir)
            .with_context(|| format!("cannot create {}", data_dir.display()))?;
        sweep_scratch(plan);
        let run = RunState::new(&cells, &data_dir, start);
        let chosen = profiled::profiled(&cells, profiled::which(plan));
        let repeat = profiled::repeated(&cells, profiled::which(plan));
        let mut matrix = Matrix {
            plan,
            planned: cells.iter().map(|c| c.file.repeats).collect(),
            cells,
            run,
            chosen,
            repeat,
            exe: PathBuf::new(),
            retaker: Retaker::new(
                plan.interference,
                crate::speed::Speedometer::seeded(plan.speed_tolerance),
            ),
            began: Instant::now(),
            pairs_kept: Duration::ZERO,
            bar: ProgressBar::hidden(),
            interrupted,
            extended: 0,
        };
        matrix.bar = matrix.announce();
        matrix.exe = std::env::current_exe().context("cannot find the lab executable")?;
        matrix.began = Instant::now();
        if let (Some(budget), true) = (plan.budget, plan.pairs) {
            let reserve = crate::plan::parts::reserve(&plan.parts);
            matrix.pairs_kept = budget.mul_f64(crate::plan::PLAN_SHARE)
                - crate::plan::rounds_share(budget, true, reserve);
        }
        Ok(matrix)
    }

    /// Whether cell `i` is to be profiled: chosen, and (in a resumed run) still without
    /// a profile.
    fn wanted(&self, i: usize) -> bool {
        self.chosen[i] && self.run.profiles[i].is_none()
    }

    /// Whether cell `i` still wants its second profile.
    fn wanted_again(&self, i: usize) -> bool {
        self.repeat[i]
            && self.run.profiles[i]
                .as_ref()
                .is_none_or(|p| p.repeats.is_empty())
    }

    /// Profiling runs cell `i` still wants.
    fn profiles_wanted(&self, i: usize) -> usize {
        usize::from(self.wanted(i)) + usize::from(self.wanted_again(i))
    }

    /// Repetitions of cell `i` still to run of those planned.
    fn missing(&self, i: usize) -> usize {
        self.cells[i]
            .file
            .repeats
            .saturating_sub(self.run.reps[i].len())
    }

    /// What must still fit after the rounds: the profiles not yet taken and the report.
    fn after_rounds(&self) -> Duration {
        self.profiling_cost() + crate::plan::REPORT_COST
    }

    /// The profiles still to take, by the plan's cost model.
    fn profiling_cost(&self) -> Duration {
        (0..self.cells.len())
            .map(|i| {
                let c = &self.cells[i];
                c.file.profile_cost(c.threads, self.plan.quick) * self.profiles_wanted(i) as u32
            })
            .sum()
    }

    /// Prints what is left to run and about how long it takes (the plan's cost model,
    /// `plan::budget`), and returns the progress bar over it.
    fn announce(&self) -> ProgressBar {
        let n = self.cells.len();
        let profiled: usize = (0..n).map(|i| self.profiles_wanted(i)).sum();
        let total = (0..n).map(|i| self.missing(i)).sum::<usize>() + profiled;
        let runs: Duration = (0..n)
            .map(|i| {
                let c = &self.cells[i];
                c.file.run_cost(c.threads) * self.missing(i) as u32
            })
            .sum();
        let estimate = runs + self.profiling_cost();
        eprintln!(
            "matrix {}{}{}: {n} cells, {total} runs, about {}",
            self.run.run_id,
            if self.plan.quick { " (quick)" } else { "" },
            if self.run.resumed { " (resumed)" } else { "" },
            humantime::format_duration(Duration::from_secs(estimate.as_secs()))
        );
        progress::bar(total)
    }

    fn stopping(&self) -> bool {
        self.interrupted.load(Ordering::SeqCst)
    }

    /// The findings' parts as pairs, within what the budget leaves the report: first
    /// every part but a placebo past its floor, then the repetitions the rounds left out
    /// that still fit (`rounds_left`), then the placebos past their floors.
    fn pairs(&mut self) -> anyhow::Result<()> {
        if self.stopping() {
            return Ok(());
        }
        if !self.plan.pairs {
            // Declared all the same, so the findings know each part's weight and basis and
            // say why it is undecided (`no_pairs`), rather than "no cells".
            let mut parts = crate::pairs::declare(self.plan, &self.cells);
            for m in &mut parts {
                if m.claim.comparison.is_some() {
                    m.stopped = verdict::decide::reason::NO_PAIRS_STOP.to_owned();
                }
            }
            self.run.comparisons = parts;
            return Ok(());
        }
        // Only the report is still to come.
        let deadline = self
            .plan
            .budget
            .map(|b| self.began + b.saturating_sub(crate::plan::REPORT_COST));
        let Some((mut parts, extra)) = self.declare_parts() else {
            return Ok(());
        };
        use crate::pairs::Reach;
        if !self.pairs_step(&mut parts, &extra, deadline, Reach::PastFloorsLater)? {
            return Ok(());
        }
        if let Some(deadline) = deadline {
            self.rounds_left(deadline)?;
        }
        self.pairs_step(&mut parts, &extra, deadline, Reach::All)?;
        Ok(())
    }

    /// The findings' parts, those of a resumed run carried over, and the cells the lab's
    /// own parts add (the delay experiment's lock, from the rounds' lock tables; the
    /// lock library's cost). `None` when there are none.
    fn declare_parts(&mut self) -> Option<(Vec<verdict::decide::Measured>, Vec<CellSpec<'p>>)> {
        let declared = crate::pairs::declare(self.plan, &self.cells);
        let mut parts = crate::pairs::carry_over(declared, &self.run.comparisons);
        if parts.is_empty() {
            return None;
        }
        let records: Vec<harness::CellRecord> = self
            .run
            .reps
            .iter()
            .flatten()
            .map(|r| r.0.clone())
            .collect();
        let mut extra = crate::pairs::lock_delay::resolve(&mut parts, &self.cells, &records);
        extra.extend(crate::pairs::lock_library::resolve(&mut parts, &self.cells));
        progress::phase(
            &self.bar,
            &format!(
                "pairs: {} part(s) of the findings, each measured as pairs adjacent in time",
                parts.len()
            ),
        );
        Some((parts, extra))
    }

    /// Pairs for `parts` as far as `reach` says, until `deadline`, the results file
    /// rewritten after every look. False when interrupted.
    fn pairs_step(
        &mut self,
        parts: &mut [verdict::decide::Measured],
        extra: &[CellSpec<'p>],
        deadline: Option<Instant>,
        reach: crate::pairs::Reach,
    ) -> anyhow::Result<bool> {
        let cells: Vec<CellSpec<'_>> = self.cells.iter().chain(extra).cloned().collect();
        let mut children = crate::pairs::child::Children {
            exe: &self.exe,
            root: &self.plan.root,
            cells: &cells,
            interrupted: self.interrupted,
            bar: &self.bar,
        };
        let (run, plan) = (&mut self.run, self.plan);
        let mut failed_write = None;
        let mut save = |parts: &[verdict::decide::Measured]| {
            run.comparisons = parts.to_vec();
            if let Err(e) = run.write(plan, false) {
                failed_write = Some(e);
            }
        };
        let went_on =
            crate::pairs::measure(parts, &cells, deadline, reach, &mut children, &mut save);
        match failed_write {
            Some(e) => Err(e),
            None => Ok(went_on),
        }
    }

    /// The results file, marked complete if every cell ran its repetitions; the report
    /// before anything is printed (after SIGHUP the terminal may be gone, and a failed
    /// print must not cost the report); then the tables and the run's totals.
    fn report(self) -> anyhow::Result<ExitCode> {
        self.bar.finish_and_clear();
        let plan = self.plan;
        let complete = !self.stopping() && (0..self.cells.len()).all(|i| self.missing(i) == 0);
        let (path, results) = self.run.write(plan, complete)?;
        let source = crate::report::Source {
            path: relative(&path, &plan.root).to_path_buf(),
            results,
        };
        let page = crate::report::render(&plan.root, std::slice::from_ref(&source));
        table::print_plan_tables(plan, &source.results.cells);
        println!("results: {}", relative(&path, &plan.root).display());
        let page = page?;
        println!("report:  {}", relative(&page, &plan.root).display());
        println!("latest:  reports/index.html");
        let results = source.results;
        for line in crate::words::total_line(&results)
            .into_iter()
            .chain(crate::adaptive::total_line(self.extended))
            .chain(crate::pairs::total_line(&results.comparisons))
        {
            println!("{line}");
        }
        if let Some(signal) = signals::received() {
            eprintln!(
                "interrupted by {}: the results hold only the cells that finished; continue with `just matrix resume={}`",
                signals::name(signal),
                self.run.run_id
            );
            return Ok(ExitCode::from(signals::exit_status(signal)));
        }
        let bad = results.cells.iter().filter(|c| !c.usable()).count();
        if bad > 0 {
            eprintln!("{bad} cell(s) failed or were not verified; see the tables above");
            return Ok(ExitCode::FAILURE);
        }
        Ok(ExitCode::SUCCESS)
    }
}

/// Removes scratch folders left by runs whose process is gone (a lab or a child killed
/// with SIGKILL, a reboot), in the system's temporary folder and in every `data_dir`.
fn sweep_scratch(plan: &MatrixPlan) {
    let mut dirs = vec![std::env::temp_dir()];
    for cell in plan.cells() {
        for dir in data_dirs(&cell) {
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
    }
    let removed: usize = dirs
        .iter()
        .map(|d| harness::scratch::sweep_stale(d).len())
        .sum();
    if removed > 0 {
        eprintln!("removed {removed} scratch folder(s) left by runs that ended abruptly");
    }
}

/// Where the profile of `cell` goes, relative to the project root, without extension.
pub(super) fn profile_prefix(run_id: &str, cell: &CellSpec<'_>) -> String {
    format!(
        "profiles/{run_id}/{}/{}/p{}/t{}-c{}",
        cell.file.file, cell.variant, cell.param_index, cell.threads, cell.cores
    )
}

fn relative<'a>(path: &'a Path, root: &Path) -> &'a Path {
    path.strip_prefix(root).unwrap_or(path)
}

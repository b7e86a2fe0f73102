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

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use harness::schema;
use harness::RunRecord;

use crate::children::{self, Ended};
use crate::plan::{CellSpec, MatrixPlan};
use crate::resume::Start;
use crate::run_state::RunState;
use crate::{order, progress, signals, table};

/// Runs the matrix (or continues the run in `start`), writes `reports/data/<run-id>.json`
/// and prints the tables.
pub fn run(plan: &MatrixPlan, start: Start) -> anyhow::Result<ExitCode> {
    let interrupted = signals::install();
    let cells = plan.cells();
    let data_dir = plan.root.join("reports").join("data");
    std::fs::create_dir_all(&data_dir)
        .with_context(|| format!("cannot create {}", data_dir.display()))?;
    sweep_scratch(plan);
    let mut run = RunState::new(&cells, &data_dir, start);
    let run_id = run.run_id.clone();

    let chosen = crate::profile::select::profiled(&cells, crate::profile::select::which(plan));
    // A resumed run profiles only the chosen cells still without a profile.
    let wanted = |i: usize| chosen[i] && run.profiles[i].is_none();
    let profiled = (0..cells.len()).filter(|&i| wanted(i)).count();
    let missing = |i: usize, c: &CellSpec<'_>| c.file.repeats.saturating_sub(run.reps[i].len());
    let total: usize = cells
        .iter()
        .enumerate()
        .map(|(i, c)| missing(i, c))
        .sum::<usize>()
        + profiled;
    // The plan's cost model (`plan::budget`), over what is left to run.
    let estimate: Duration = cells
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let profiling = if wanted(i) {
                c.file.profile_cost(c.threads, plan.quick)
            } else {
                Duration::ZERO
            };
            c.file.run_cost(c.threads) * missing(i, c) as u32 + profiling
        })
        .sum();
    eprintln!(
        "matrix {run_id}{}{}: {} cells, {total} runs, about {}",
        if plan.quick { " (quick)" } else { "" },
        if run.resumed { " (resumed)" } else { "" },
        cells.len(),
        humantime::format_duration(Duration::from_secs(estimate.as_secs()))
    );
    let bar = progress::bar(total);

    let exe = std::env::current_exe().context("cannot find the lab executable")?;
    let max_repeats = cells.iter().map(|c| c.file.repeats).max().unwrap_or(0);
    let mut retaker = crate::retake::Retaker::new(
        plan.interference,
        crate::speed::Speedometer::seeded(plan.machine_speed),
    );
    let planned: Vec<usize> = cells.iter().map(|c| c.file.repeats).collect();
    let mut extended = 0;
    let began = Instant::now();
    // What must still fit after the rounds: the profiles and the report.
    let after_rounds: Duration = cells
        .iter()
        .enumerate()
        .filter(|(i, _)| wanted(*i))
        .map(|(_, c)| c.file.profile_cost(c.threads, plan.quick))
        .sum::<Duration>()
        + crate::plan::REPORT_COST;
    // Extra rounds for wide cells give way to the findings' pairs, which decide.
    let extra_rounds = if plan.pairs {
        0
    } else {
        crate::adaptive::EXTRA_ROUNDS
    };
    'outer: for rep in 0..max_repeats + extra_rounds {
        if rep >= max_repeats {
            // Extra rounds, only for cells whose interval is still wide (`adaptive`).
            let wide = crate::adaptive::wide_cells(&run.reps, &planned, rep);
            if wide == 0 || interrupted.load(Ordering::SeqCst) {
                break;
            }
            // ... and only with what the budget has left: they are not in its plan.
            let cost: Duration = cells
                .iter()
                .enumerate()
                .filter(|(i, _)| crate::adaptive::wants_more(&run.reps[*i], planned[*i]))
                .map(|(_, c)| c.file.run_cost(c.threads))
                .sum();
            if let Some(budget) = plan.budget {
                if began.elapsed() + cost + after_rounds > budget {
                    progress::phase(
                        &bar,
                        &format!(
                            "extra round {} left out: {wide} wide cell(s) would take about {}, past budget={}",
                            rep - max_repeats + 1,
                            humantime::format_duration(Duration::from_secs(cost.as_secs())),
                            humantime::format_duration(Duration::from_secs(budget.as_secs()))
                        ),
                    );
                    break;
                }
            }
            extended += wide;
            bar.inc_length(wide as u64);
            progress::phase(&bar, &crate::adaptive::round_line(rep - max_repeats, wide));
        }
        let mut ran = false;
        for i in order::round_order(cells.len(), run.order_seed, rep) {
            let cell = &cells[i];
            // Done already (a resumed run), not wanted, or past its planned repetitions and
            // narrow enough.
            let more = || crate::adaptive::wants_more(&run.reps[i], planned[i]);
            if rep < run.reps[i].len() || !(rep < planned[i] || more()) {
                continue;
            }
            if interrupted.load(Ordering::SeqCst) {
                break 'outer;
            }
            bar.set_message(format!(
                "{}/{} t={} c={} rep {}/{}",
                cell.file.file,
                cell.variant,
                cell.threads,
                cell.cores,
                rep + 1,
                cell.file.repeats
            ));
            let measured = cell.file.warmup + cell.file.duration;
            let overheads = &mut run.overheads;
            let kept = retaker.repetition(|| {
                let started = Instant::now();
                let record = run_child(&exe, &plan.root, cell, None, rep, interrupted)?;
                if record.usable() {
                    overheads.push(started.elapsed().saturating_sub(measured).as_secs_f64());
                }
                Some(record)
            });
            match kept {
                Some(mut record) => {
                    record.scenario_file = cell.file.file.clone();
                    run.reps[i].push(record)
                }
                None => break 'outer,
            }
            bar.inc(1);
            ran = true;
        }
        if ran {
            run.reference.push(crate::reference::measure());
            run.machine_speed = retaker.machine_speed().or(run.machine_speed.take());
            run.write(plan, false)?;
            if rep < max_repeats {
                progress::round_done(&bar, rep + 1, max_repeats);
            }
        }
    }
    if plan.pairs && !interrupted.load(Ordering::SeqCst) {
        let deadline = plan.budget.map(|b| began + b.saturating_sub(after_rounds));
        pairs_step(plan, &cells, &mut run, deadline, &exe, interrupted, &bar)?;
    }
    let mut profiles = std::mem::take(&mut run.profiles);
    if plan.profile && !interrupted.load(Ordering::SeqCst) {
        progress::phase(
            &bar,
            "profiling: one extra, uncounted run per cell for its flamegraph",
        );
    }
    if plan.profile {
        let order = crate::profile::select::order(&cells, &chosen);
        for (at, &i) in order.iter().enumerate() {
            let cell = &cells[i];
            if interrupted.load(Ordering::SeqCst) {
                break;
            }
            if run.reps[i].is_empty() || profiles[i].is_some() {
                continue;
            }
            // The budget is the user's: profiles that would end past it are left out.
            let cost = cell.file.profile_cost(cell.threads, plan.quick) + crate::plan::REPORT_COST;
            if plan.budget.is_some_and(|b| began.elapsed() + cost > b) {
                let left = order[at..]
                    .iter()
                    .filter(|&&j| profiles[j].is_none())
                    .count();
                progress::phase(
                    &bar,
                    &format!(
                        "profiles left out: {left} cell(s) would end past budget={}",
                        humantime::format_duration(Duration::from_secs(
                            plan.budget.unwrap_or_default().as_secs()
                        ))
                    ),
                );
                break;
            }
            bar.set_message(format!(
                "{}/{} t={} c={} profiling",
                cell.file.file, cell.variant, cell.threads, cell.cores
            ));
            let prefix = profile_prefix(&run_id, cell);
            if let Some(record) = run_child(
                &exe,
                &plan.root,
                cell,
                Some((&prefix, plan.quick)),
                0,
                interrupted,
            ) {
                profiles[i] = record.profile;
            }
            bar.inc(1);
        }
    }
    run.profiles = profiles;
    bar.finish_and_clear();

    let complete = !interrupted.load(Ordering::SeqCst)
        && cells
            .iter()
            .enumerate()
            .all(|(i, c)| run.reps[i].len() >= c.file.repeats);
    let (path, results) = run.write(plan, complete)?;

    // The report before anything is printed: after SIGHUP the terminal may be gone, and a
    // failed print must not cost the report.
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
    let retaken = crate::words::total_line(&results);
    for line in retaken
        .into_iter()
        .chain(crate::adaptive::total_line(extended))
        .chain(crate::pairs::total_line(&results.comparisons))
    {
        println!("{line}");
    }
    if let Some(signal) = signals::received() {
        eprintln!(
            "interrupted by {}: the results hold only the cells that finished; continue with `just matrix resume={run_id}`",
            signals::name(signal)
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

/// The findings' parts measured as pairs (`pairs`) until `deadline`, the results file
/// rewritten after every look.
fn pairs_step(
    plan: &MatrixPlan,
    cells: &[CellSpec<'_>],
    run: &mut RunState,
    deadline: Option<Instant>,
    exe: &Path,
    interrupted: &AtomicBool,
    bar: &indicatif::ProgressBar,
) -> anyhow::Result<()> {
    let declared = crate::pairs::declare(plan, cells);
    let mut parts = crate::pairs::carry_over(declared, &run.comparisons);
    if parts.is_empty() {
        return Ok(());
    }
    progress::phase(
        bar,
        &format!(
            "pairs: {} part(s) of the findings, each measured as pairs adjacent in time",
            parts.len()
        ),
    );
    let mut children = crate::pairs::child::Children {
        exe,
        root: &plan.root,
        cells,
        interrupted,
        bar,
    };
    let mut failed_write = None;
    let mut save = |parts: &[harness::decide::Measured]| {
        run.comparisons = parts.to_vec();
        if let Err(e) = run.write(plan, false) {
            failed_write = Some(e);
        }
    };
    crate::pairs::measure(&mut parts, cells, deadline, &mut children, &mut save);
    if let Some(e) = failed_write {
        return Err(e);
    }
    Ok(())
}

/// The `data_dir` folders the plan's cells may make folders in.
pub(crate) fn data_dirs(cell: &CellSpec<'_>) -> Vec<PathBuf> {
    match cell.params.to_map().get("data_dir") {
        Some(serde_json::Value::String(dir)) if !dir.is_empty() => vec![PathBuf::from(dir)],
        _ => Vec::new(),
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
fn profile_prefix(run_id: &str, cell: &CellSpec<'_>) -> String {
    format!(
        "profiles/{run_id}/{}/{}/p{}/t{}-c{}",
        cell.file.file, cell.variant, cell.param_index, cell.threads, cell.cores
    )
}

/// The measured window of a profiling run (see [`crate::profile::select::window`]).
fn profile_window(cell: &CellSpec<'_>, quick: bool) -> Duration {
    crate::profile::select::window(cell.file.duration, quick)
}

/// Runs one repetition of `cell` (round `round`) in a child process, profiled to
/// `profile` when given. `None` when interrupted: that repetition is discarded.
pub(crate) fn run_child(
    exe: &Path,
    root: &Path,
    cell: &CellSpec<'_>,
    profile: Option<(&str, bool)>,
    round: usize,
    interrupted: &AtomicBool,
) -> Option<RunRecord> {
    let key = schema::CellKey {
        hot_path: cell.file.hot_path.name().to_owned(),
        variant: cell.variant.to_owned(),
        params: cell.params.to_map(),
        threads: cell.threads,
        cores: cell.cores,
    };
    let window = match profile {
        Some((_, quick)) => profile_window(cell, quick),
        None => cell.file.duration,
    };
    let args = cell
        .request(window, profile.map(|(prefix, _)| prefix.to_owned()))
        .to_args();
    let failed = |reason: String| Some(RunRecord::failed(&key, "", reason));
    let launch = children::Launch {
        exe,
        root,
        args: &args,
        timeout: cell.file.timeout,
        round,
        data_dirs: data_dirs(cell),
    };
    let started = Instant::now();
    let ended = children::run(&launch, interrupted);
    // What this child cost beyond its warm-up and window: the budget's measured overhead.
    let overhead = started
        .elapsed()
        .saturating_sub(cell.file.warmup + window)
        .as_secs_f64();
    let (status, stdout, stderr) = match ended {
        Ended::Exited {
            status,
            stdout,
            stderr,
        } => (status, stdout, stderr),
        Ended::Stopped => return None,
        Ended::TimedOut => {
            return failed(format!(
                "timed out after {} (killed)",
                humantime::format_duration(cell.file.timeout)
            ))
        }
        Ended::NotStarted(reason) => return failed(reason),
    };
    if let Some(mut record) = stdout
        .lines()
        .rev()
        .find_map(|line| serde_json::from_str::<RunRecord>(line).ok())
    {
        // A profiled run's time includes perf's, which a counted run does not pay.
        if profile.is_none() {
            record.run_overhead_s = Some(overhead);
        }
        return Some(record);
    }
    let last_words = stderr
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty() && !l.starts_with("note:"))
        .unwrap_or("no output");
    failed(format!("{}: {last_words}", children::describe(&status)))
}

fn relative<'a>(path: &'a Path, root: &Path) -> &'a Path {
    path.strip_prefix(root).unwrap_or(path)
}

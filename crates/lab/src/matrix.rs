//! `lab matrix`: runs every cell of a [`MatrixPlan`] as a child `lab run`, repetitions
//! interleaved across cells, and writes the results file atomically.
//!
//! One child process per repetition of a cell: a crash, a hang (bounded by the cell's
//! timeout) or a leaked lock cannot take the matrix down; each starts cold; its CPU mask
//! is its own. Repetition r of every cell runs before repetition r+1 of any, so a slow
//! minute on a noisy machine lands on many cells once rather than on one cell three times.
//!
//! Ctrl-C stops after killing the cell in flight and still writes the cells that finished,
//! marked incomplete.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use anyhow::Context;
use harness::env::EnvInfo;
use harness::schema::{self, CellKey, ProfileRef, ResultsFile, SCHEMA_VERSION};
use harness::RunRecord;
use indicatif::{ProgressBar, ProgressStyle};

use crate::plan::{CellSpec, MatrixPlan};
use crate::{run_cell, table};

/// Runs the matrix, writes `reports/data/<run-id>.json` and prints the tables.
pub fn run(plan: &MatrixPlan) -> anyhow::Result<ExitCode> {
    let cells = plan.cells();
    let started = SystemTime::now();
    let data_dir = plan.root.join("reports").join("data");
    std::fs::create_dir_all(&data_dir)
        .with_context(|| format!("cannot create {}", data_dir.display()))?;
    let run_id = unique_run_id(&data_dir, started);
    let interrupted = Arc::new(AtomicBool::new(false));
    {
        let flag = Arc::clone(&interrupted);
        // A second handler cannot be installed (tests call run twice): keep the first.
        let _ = ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst));
    }

    let chosen = crate::profile::select::profiled(&cells, crate::profile::select::which(plan));
    let profiled = chosen.iter().filter(|&&p| p).count();
    let total: usize = cells.iter().map(|c| c.scenario.repeats).sum::<usize>() + profiled;
    let estimate: Duration = cells
        .iter()
        .zip(&chosen)
        .map(|(c, &chosen)| {
            let profiling = if chosen {
                profile_window(c, plan.quick) + c.scenario.warmup
            } else {
                Duration::ZERO
            };
            (c.scenario.duration + c.scenario.warmup) * c.scenario.repeats as u32 + profiling
        })
        .sum();
    eprintln!(
        "matrix {run_id}{}: {} cells, {total} runs, about {} of measuring",
        if plan.quick { " (quick)" } else { "" },
        cells.len(),
        humantime::format_duration(Duration::from_secs(estimate.as_secs()))
    );
    let bar = ProgressBar::new(total as u64).with_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} ETA {eta} {msg}",
        )
        .expect("valid progress template"),
    );

    let exe = std::env::current_exe().context("cannot find the lab executable")?;
    let mut reps: Vec<Vec<RunRecord>> = vec![Vec::new(); cells.len()];
    let max_repeats = cells.iter().map(|c| c.scenario.repeats).max().unwrap_or(0);
    'outer: for rep in 0..max_repeats {
        for (i, cell) in cells.iter().enumerate() {
            if rep >= cell.scenario.repeats {
                continue;
            }
            if interrupted.load(Ordering::SeqCst) {
                break 'outer;
            }
            bar.set_message(format!(
                "{}/{} t={} c={} rep {}/{}",
                cell.scenario.file,
                cell.variant,
                cell.threads,
                cell.cores,
                rep + 1,
                cell.scenario.repeats
            ));
            match run_child(&exe, &plan.root, cell, None, &interrupted) {
                Some(mut record) => {
                    record.scenario_file = cell.scenario.file.clone();
                    reps[i].push(record)
                }
                None => break 'outer,
            }
            bar.inc(1);
        }
    }
    let mut profiles: Vec<Option<ProfileRef>> = vec![None; cells.len()];
    if plan.profile {
        for (i, cell) in cells.iter().enumerate() {
            if interrupted.load(Ordering::SeqCst) || reps[i].is_empty() {
                break;
            }
            if !chosen[i] {
                continue;
            }
            bar.set_message(format!(
                "{}/{} t={} c={} profiling",
                cell.scenario.file, cell.variant, cell.threads, cell.cores
            ));
            let prefix = profile_prefix(&run_id, cell);
            if let Some(record) = run_child(
                &exe,
                &plan.root,
                cell,
                Some((&prefix, plan.quick)),
                &interrupted,
            ) {
                profiles[i] = record.profile;
            }
            bar.inc(1);
        }
    }
    bar.finish_and_clear();

    let complete = !interrupted.load(Ordering::SeqCst);
    let mut records: Vec<RunRecord> = reps
        .iter()
        .zip(profiles)
        .filter_map(|(r, profile)| {
            let mut merged = RunRecord::merge_repetitions(r)?;
            merged.profile = profile;
            Some(merged)
        })
        .collect();
    schema::fill_efficiency(&mut records);
    let results = ResultsFile {
        schema: SCHEMA_VERSION,
        run_id: run_id.clone(),
        started: humantime::format_rfc3339_seconds(started).to_string(),
        finished: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
        command: plan.command.clone(),
        complete,
        env: EnvInfo::capture(),
        cells: records,
    };
    let path = data_dir.join(format!("{run_id}.json"));
    write_atomically(&path, serde_json::to_string_pretty(&results)?.as_bytes())?;

    print_tables(plan, &results.cells);
    println!("results: {}", relative(&path, &plan.root).display());
    let source = crate::report::Source {
        path: relative(&path, &plan.root).to_path_buf(),
        results,
    };
    let page = crate::report::render(&plan.root, std::slice::from_ref(&source))?;
    println!("report:  {}", relative(&page, &plan.root).display());
    println!("latest:  reports/index.html");
    let results = source.results;
    if !complete {
        eprintln!("interrupted: the results hold only the cells that finished");
        return Ok(ExitCode::from(130));
    }
    let bad = results.cells.iter().filter(|c| !c.usable()).count();
    if bad > 0 {
        eprintln!("{bad} cell(s) failed or were not verified; see the tables above");
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

/// Where the profile of `cell` goes, relative to the project root, without extension.
fn profile_prefix(run_id: &str, cell: &CellSpec<'_>) -> String {
    format!(
        "profiles/{run_id}/{}/{}/p{}/t{}-c{}",
        cell.scenario.file, cell.variant, cell.param_index, cell.threads, cell.cores
    )
}

/// The measured window of a profiling run (see [`crate::profile::select::window`]).
fn profile_window(cell: &CellSpec<'_>, quick: bool) -> Duration {
    crate::profile::select::window(cell.scenario.duration, quick)
}

/// Runs one repetition of `cell` in a child process, profiled to `profile` when given.
/// `None` when interrupted.
fn run_child(
    exe: &Path,
    root: &Path,
    cell: &CellSpec<'_>,
    profile: Option<(&str, bool)>,
    interrupted: &AtomicBool,
) -> Option<RunRecord> {
    let key = CellKey {
        scenario: cell.scenario.hot_path.name().to_owned(),
        variant: cell.variant.to_owned(),
        params: cell.params.to_map(),
        threads: cell.threads,
        cores: cell.cores,
    };
    let args = run_cell::child_args(
        cell.scenario.hot_path.name(),
        cell.variant,
        &cell.params,
        cell.threads,
        cell.cores,
        match profile {
            Some((_, quick)) => profile_window(cell, quick),
            None => cell.scenario.duration,
        },
        cell.scenario.warmup,
        profile.map(|(prefix, _)| prefix),
    );
    let failed = |reason: String| Some(RunRecord::failed(&key, "", reason));
    let mut child = match Command::new(exe)
        .args(&args)
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(child) => child,
        Err(e) => return failed(format!("could not start the cell: {e}")),
    };
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let deadline = Instant::now() + cell.scenario.timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) => {}
            Err(_) => break None,
        }
        if interrupted.load(Ordering::SeqCst) {
            kill(&mut child);
            return None;
        }
        if Instant::now() >= deadline {
            kill(&mut child);
            return failed(format!(
                "timed out after {} (killed)",
                humantime::format_duration(cell.scenario.timeout)
            ));
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let stdout = stdout.join().unwrap_or_default();
    let stderr = stderr.join().unwrap_or_default();
    if let Some(record) = stdout
        .lines()
        .rev()
        .find_map(|line| serde_json::from_str::<RunRecord>(line).ok())
    {
        return Some(record);
    }
    let last_words = stderr
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty() && !l.starts_with("note:"))
        .unwrap_or("no output");
    let status = status.map_or("unknown exit".to_owned(), |s| s.to_string());
    failed(format!("{status}: {last_words}"))
}

fn drain<R: Read + Send + 'static>(pipe: Option<R>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_string(&mut text);
        }
        text
    })
}

fn kill(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// `20261130T120000Z` from the start time; `-2`, `-3`... when that file exists already.
fn unique_run_id(dir: &Path, started: SystemTime) -> String {
    let base: String = humantime::format_rfc3339_seconds(started)
        .to_string()
        .chars()
        .filter(|c| !matches!(c, '-' | ':'))
        .collect();
    let mut id = base.clone();
    let mut n = 2;
    while dir.join(format!("{id}.json")).exists() {
        id = format!("{base}-{n}");
        n += 1;
    }
    id
}

/// Writes `bytes` to a temporary file beside `path`, then renames it into place, so a
/// reader never sees half a file and an interrupted write leaves the old one.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp: PathBuf = dir.join(format!(
        ".{}.tmp-{}",
        path.file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default(),
        std::process::id()
    ));
    std::fs::write(&tmp, bytes).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| {
        let _ = std::fs::remove_file(&tmp);
        format!("cannot move the results into {}", path.display())
    })
}

fn relative<'a>(path: &'a Path, root: &Path) -> &'a Path {
    path.strip_prefix(root).unwrap_or(path)
}

fn print_tables(plan: &MatrixPlan, records: &[RunRecord]) {
    println!("ops/s / per-thread ops/s; * = more threads than cores");
    for scenario in &plan.scenarios {
        let name = scenario.hot_path.name();
        for variant in &scenario.variants {
            for params in &scenario.param_sets {
                let map = params.to_map();
                let group: Vec<&RunRecord> = records
                    .iter()
                    .filter(|r| {
                        r.scenario_file == scenario.file
                            && r.scenario == name
                            && r.variant == *variant
                            && r.params == map
                    })
                    .collect();
                if group.is_empty() {
                    continue;
                }
                let mut title = format!("\n{} / {variant}", scenario.file);
                if scenario.param_sets.len() > 1 {
                    title.push_str(&format!("  ({})", swept(scenario, params)));
                }
                print!("{}", table::render(&title, &group));
            }
        }
    }
}

/// The parameters that vary between this scenario's parameter sets, as `name=value`.
fn swept(scenario: &crate::plan::ScenarioPlan, params: &harness::Params) -> String {
    let first = scenario.param_sets[0].to_map();
    params
        .to_map()
        .iter()
        .filter(|(k, _)| {
            scenario
                .param_sets
                .iter()
                .any(|p| p.to_map().get(*k) != first.get(*k))
        })
        .map(|(k, v)| format!("{k}={}", crate::plan::value_text(v)))
        .collect::<Vec<_>>()
        .join(" ")
}

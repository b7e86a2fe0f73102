//! One repetition of a plan's cell as a child `lab run`: the child's arguments and
//! window, its launch (bounded by the cell's timeout, stopped with lab) and the record it
//! printed, or a failed record saying why there is none. Shared by the matrix's rounds
//! and profiles and by the pairs. Not the spawning and killing of processes
//! (`children`), nor which repetitions run (`matrix`, `pairs`).

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use harness::schema;
use harness::Repetition;

use crate::children::{self, Ended};
use crate::plan::CellSpec;

/// The `data_dir` folders the plan's cells may make folders in.
pub fn data_dirs(cell: &CellSpec<'_>) -> Vec<PathBuf> {
    match cell.params.to_map().get("data_dir") {
        Some(serde_json::Value::String(dir)) if !dir.is_empty() => vec![PathBuf::from(dir)],
        _ => Vec::new(),
    }
}

/// The measured window of a profiling run (see [`crate::plan::profiled::window`]).
fn profile_window(cell: &CellSpec<'_>, quick: bool) -> Duration {
    crate::plan::profiled::window(cell.file.duration, quick)
}

/// What a child's repetition is for, which sets its window.
#[derive(Debug, Clone, Copy)]
pub enum Purpose<'p> {
    /// A repetition of the rounds: the plan's window.
    Round,
    /// One side of a part's pair: the pair window (`ScenarioPlan::pair_window`).
    Pair,
    /// A profiling run written to this prefix; `true` in a quick run.
    Profile(&'p str, bool),
}

/// Runs one repetition of `cell` (round `round`) in a child process for `purpose`.
/// `None` when interrupted: that repetition is discarded.
pub fn run_child(
    exe: &Path,
    root: &Path,
    cell: &CellSpec<'_>,
    purpose: Purpose<'_>,
    round: usize,
    interrupted: &AtomicBool,
) -> Option<Repetition> {
    let key = schema::CellKey {
        hot_path: cell.file.hot_path.name().to_owned(),
        variant: cell.variant.to_owned(),
        params: cell.params.to_map(),
        threads: cell.threads,
        cores: cell.cores,
    };
    let (window, profile) = match purpose {
        Purpose::Round => (cell.file.duration, None),
        Purpose::Pair => (cell.file.pair_window(), None),
        Purpose::Profile(prefix, quick) => (profile_window(cell, quick), Some(prefix)),
    };
    let args = cell.request(window, profile.map(str::to_owned)).to_args();
    let failed = |reason: String| Some(Repetition::failed(&key, "", reason));
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
        .find_map(|line| serde_json::from_str::<Repetition>(line).ok())
    {
        // A profiled run's time includes perf's, which a counted run does not pay: it is
        // the profile's own overhead, the price of the next run's profiles.
        match record.profile.as_mut() {
            Some(p) if profile.is_some() => p.run_overhead_s = Some(overhead),
            _ if profile.is_none() => record.run_overhead_s = Some(overhead),
            _ => {}
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

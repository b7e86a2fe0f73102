//! The contention-lab pipeline: plan a thread x core matrix from scenario files, run its
//! cells and pairs in child processes, and report what they found. The `lab` binary
//! (`main.rs`) only calls [`main`]; tests call the modules' functions where they can and
//! spawn the binary where a child process is the point (faults, signals, containment).
//!
//! Three rooms, kept apart by the module tree: planning (`plan`, `scenario_file`,
//! `settings`, `catalog`), running (`matrix`, `pairs`, `run_cell`, `cell_child`,
//! `children`, `contain`, `profile`, `retake`, `resume`) and reporting (`report`,
//! `compare`, `export`, `flame`), which reads a [`results::ResultsFile`] and never the
//! planner. The measuring instrument is the `harness` crate and the judgement the
//! `verdict` crate; this crate holds neither.
mod adaptive;
mod catalog;
mod cell_child;
mod cell_request;
mod children;
mod cli;
mod comparable;
mod compare;
mod compare_parts;
mod contain;
mod export;
#[cfg(feature = "fault")]
mod fault;
mod flame;
mod fs;
mod list;
mod lock;
mod matrix;
mod order;
mod pairs;
mod plan;
mod profile;
mod progress;
mod reference;
mod report;
pub mod results;

pub use pairs::lock_delay::{LIMITING_LOCK, RULE as LIMITING_LOCK_RULE};
mod resume;
mod retake;
mod root;
mod run_cell;
mod run_state;
mod scenario_file;
mod settings;
mod signals;
mod sizes;
mod speed;
mod table;
mod words;

use std::process::ExitCode;

use clap::Parser;

/// Runs the `lab` command with this process's arguments: parses them, hands the work to
/// a module, and turns any error into one line on stderr and a non-zero exit (2 for bad
/// input, 1 for a run whose cells failed), never a backtrace.
pub fn main() -> ExitCode {
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return cli::clap_error(e),
    };
    let code = match cli::dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    };
    contain::finish();
    code
}

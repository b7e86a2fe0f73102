//! `lab`: the thin command on top of contention-lab's crates. It parses the command line,
//! hands the work to a module and turns any error into one line on stderr and a non-zero
//! exit (2 for bad input, 1 for a run whose cells failed), never a backtrace.

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

fn main() -> ExitCode {
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

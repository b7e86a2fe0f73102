//! The command line: clap definitions and dispatch to the module that does the work.

use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use crate::{matrix, plan, run_cell};

/// contention-lab: put contention problems under a microscope.
#[derive(Debug, Parser)]
#[command(name = "lab", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Measure one cell in this process and print its RunRecord as one line of JSON.
    Run(RunArgs),
    /// Run every cell of the thread x core matrix in child processes and print tables.
    ///
    /// SETTINGS are key=value: threads=1,2,4 cores=1,2 scenarios=lookup
    /// variants=dashmap,lmdb quick=true duration=1s warmup=300ms repeats=3 timeout=60s,
    /// and any scenario parameter (users=6000 write_pct=0,10 ...). All are optional;
    /// defaults come from benches/<scenario>.toml.
    Matrix {
        /// key=value settings.
        #[arg(value_name = "SETTINGS")]
        settings: Vec<String>,
    },
    /// List hot paths, their variants and parameters, and the scenario files.
    List,
    /// Render the HTML and Markdown report from results files (default: the newest in
    /// reports/data). Several files, e.g. from different machines, go side by side.
    Report {
        /// Results files (reports/data/<run-id>.json).
        files: Vec<std::path::PathBuf>,
    },
    /// Compare two results files cell by cell; exit 1 when a cell regressed beyond the
    /// spread of both runs and by more than the threshold.
    Compare {
        /// The baseline results file.
        base: std::path::PathBuf,
        /// The results file to judge.
        new: std::path::PathBuf,
        /// Slowdown that counts as a regression, as a fraction (0.10 = 10%).
        #[arg(long, default_value_t = 0.10)]
        threshold: f64,
    },
}

/// Arguments of `lab run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Hot path, e.g. lookup.
    #[arg(long)]
    pub scenario: String,
    /// Variant, e.g. global-mutex.
    #[arg(long)]
    pub variant: String,
    /// Worker threads.
    #[arg(long, default_value = "1")]
    pub threads: String,
    /// Restrict the process to the first N allowed CPUs (default: all).
    #[arg(long)]
    pub cores: Option<String>,
    /// Measured window per repetition, e.g. 1s or 500ms (a bare number is seconds).
    #[arg(long, default_value = "1s")]
    pub duration: String,
    /// Warm-up before each window.
    #[arg(long, default_value = "300ms")]
    pub warmup: String,
    /// Repetitions; the record holds their median and spread.
    #[arg(long, default_value = "1")]
    pub repeats: String,
    /// A scenario parameter as name=value (repeatable).
    #[arg(long = "param", value_name = "NAME=VALUE")]
    pub params: Vec<String>,
    /// Profile the measured window: on-CPU (perf, or pprof where perf cannot run) to
    /// PREFIX.folded and PREFIX.svg, waits to PREFIX.offcpu.folded and PREFIX.offcpu.svg
    /// (use one repetition; the figures of a profiled run are perturbed by the sampler).
    #[arg(long, value_name = "PREFIX")]
    pub profile: Option<String>,
}

/// Runs the parsed command; errors are bad input (exit 2).
pub fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Run(args) => run_cell::run(&args),
        Command::Matrix { settings } => {
            let settings = plan::Settings::parse(&settings)?;
            let plan = plan::MatrixPlan::build(&settings, &crate::root::project_root())?;
            matrix::run(&plan)
        }
        Command::Report { files } => {
            let root = crate::root::project_root();
            let files = if files.is_empty() {
                vec![crate::report::latest_results(&root)?]
            } else {
                files
            };
            let sources = crate::report::load(&files)?;
            let page = crate::report::render(&root, &sources)?;
            println!(
                "report: {}",
                page.strip_prefix(&root).unwrap_or(&page).display()
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Compare {
            base,
            new,
            threshold,
        } => crate::compare::run(&base, &new, threshold),
        Command::List => {
            plan::print_list(&crate::root::project_root())?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Prints a clap error as one line (help and version are printed whole).
pub fn clap_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            ExitCode::SUCCESS
        }
        _ => {
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or("error: bad arguments");
            eprintln!("{first} (see lab --help)");
            ExitCode::from(2)
        }
    }
}

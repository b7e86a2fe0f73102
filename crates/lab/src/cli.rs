//! The command line: clap definitions and dispatch to the module that does the work.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::cell_request::{CellRequest, RunArgs};
use crate::{list, matrix, plan, run_cell};

/// contention-lab: put contention problems under a microscope.
#[derive(Debug, Parser)]
#[command(name = "lab", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

// One value per process, parsed once: boxing `lab run`'s arguments would save nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
enum Command {
    /// Measure one cell in this process and print its CellRecord as one line of JSON.
    Run(RunArgs),
    /// Run every cell of the thread x core matrix in child processes and print tables.
    ///
    /// A resumed run keeps its recorded settings; a matrix is refused while another lab
    /// matrix measures on this machine (force=true: run anyway).
    #[command(after_help = crate::settings::help())]
    Matrix {
        /// key=value settings.
        #[arg(value_name = "SETTINGS")]
        settings: Vec<String>,
    },
    /// Measure a block of a finding's pairs of two cells in this process (both resident,
    /// windows alternated) and print them as one line of JSON; `lab matrix` runs it for
    /// hot paths whose cells are expensive to start.
    #[command(hide = true)]
    Pairs {
        /// The request, as JSON: each side's `lab run` arguments and the pair count.
        #[arg(long)]
        request: String,
    },
    /// The tiny test server with a worker-thread setting, or its load (`--client`): what
    /// benches/server-tiny.toml starts as `{lab} tiny-server`, so the server hot path runs
    /// on a machine with nothing installed.
    #[command(hide = true)]
    TinyServer {
        /// --threads N --port P [--spin-us U] [--sleep-us U] [--own-mask], or --client
        /// --port P --clients C --seconds S.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Fill a folder with a 389 DS instance holding the seed's directory: the preparation
    /// benches/server-389ds-ldclt.toml runs (`{lab} ldap-image 6000 4000 {prepared}`),
    /// from the ldap hot path's cached image. `ldap-template` is its old name, kept so a
    /// scenario file written before the rename still prepares.
    #[command(hide = true, alias = "ldap-template")]
    LdapImage {
        /// User entries.
        users: usize,
        /// Group entries.
        groups: usize,
        /// The empty folder to fill.
        into: std::path::PathBuf,
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
    /// Write the cells of results files as one table to standard output: a CSV with a header
    /// row and one row per cell (parameters and extras as columns), or the same rows as JSON.
    Export {
        /// Output format.
        #[arg(long, value_enum, default_value_t = crate::export::Format::Csv)]
        format: crate::export::Format,
        /// Results files (reports/data/<run-id>.json); default: the newest.
        files: Vec<std::path::PathBuf>,
    },
}

/// Runs the parsed command; errors are bad input (exit 2).
pub fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Run(args) => run_cell::run(&CellRequest::from_run_args(&args)?),
        Command::Pairs { request } => crate::pairs::child::run(&request),
        Command::LdapImage {
            users,
            groups,
            into,
        } => {
            ldap::ds389::prepare_into(users, groups, &into)
                .map_err(|e| anyhow::anyhow!("ldap-image: {e}"))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::TinyServer { args } => {
            server::tiny::parse(&args)
                .and_then(|o| server::tiny::run(&o))
                .map_err(|e| anyhow::anyhow!("tiny-server: {e}"))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Matrix { settings } => {
            let settings = plan::Settings::parse(&settings)?;
            let force = settings.force;
            let root = crate::root::project_root();
            let (settings, start) = crate::resume::prepare(settings, &root)?;
            let plan = plan::MatrixPlan::build(&settings, &root)?;
            if settings.plan_only {
                // The plan and nothing else: no run, no results file.
                for line in plan.plan_lines() {
                    println!("{line}");
                }
                // What was left out and why, where scripts do not read (stderr).
                for note in plan.skipped.iter().cloned().chain(plan.plan_notes()) {
                    eprintln!("{note}");
                }
                return Ok(ExitCode::SUCCESS);
            }
            // Held until the matrix returns, whatever way it returns.
            let _lock = crate::lock::acquire(force)?;
            for line in plan.settings_lines() {
                eprintln!("{line}");
            }
            for line in plan.plan_lines().into_iter().chain(plan.plan_notes()) {
                eprintln!("{line}");
            }
            matrix::run(&plan, start)
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
        Command::Export { format, files } => {
            let files = if files.is_empty() {
                vec![crate::report::latest_results(&crate::root::project_root())?]
            } else {
                files
            };
            let sources = crate::report::load(&files)?;
            let results: Vec<_> = sources.into_iter().map(|s| s.results).collect();
            let bytes = crate::export::export(&results, format)?;
            use std::io::Write;
            std::io::stdout().write_all(&bytes)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::List => {
            list::print_list(&crate::root::project_root())?;
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

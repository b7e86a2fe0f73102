//! `lab run`: measure one cell in this process and print one RunRecord as JSON.
//!
//! The process first narrows its CPU affinity to `cores` CPUs, so every worker thread it
//! starts inherits the mask. `lab matrix` runs each cell this way in a child process.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context};
use harness::schema::CellKey;
use harness::{affinity, Params, RunRecord, RunSettings};

use crate::catalog;
use crate::cli::RunArgs;
use crate::profile;
use crate::scenario_file::{max_threads, parse_duration};

fn count(name: &str, text: &str, max: usize) -> anyhow::Result<usize> {
    match text.trim().parse::<usize>() {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        _ => bail!("--{name} {text:?}: expected an integer in 1..={max}"),
    }
}

/// Runs `lab run`.
pub fn run(args: &RunArgs) -> anyhow::Result<ExitCode> {
    let hot_path = catalog::hot_path(&args.scenario).map_err(anyhow::Error::msg)?;
    let variant = hot_path
        .variant(&args.variant)
        .map_err(anyhow::Error::msg)?;
    let nproc = affinity::allowed_cpus().len();
    let threads = count("threads", &args.threads, max_threads())?;
    let cores = match &args.cores {
        Some(text) => count("cores", text, nproc)
            .with_context(|| format!("this machine has {nproc} CPU(s) available"))?,
        None => nproc,
    };
    let duration = parse_duration(&args.duration).map_err(|m| anyhow::anyhow!("--duration {m}"))?;
    let warmup = parse_duration(&args.warmup).map_err(|m| anyhow::anyhow!("--warmup {m}"))?;
    let repeats = count("repeats", &args.repeats, 100)?;
    let specs = hot_path.params();
    let mut params = Params::defaults(specs);
    for param in &args.params {
        let Some((name, value)) = param.split_once('=') else {
            bail!("--param {param:?}: expected NAME=VALUE, e.g. --param users=6000");
        };
        params
            .set(specs, name.trim(), value)
            .map_err(anyhow::Error::msg)?;
    }
    hot_path.check(&params).map_err(anyhow::Error::msg)?;

    // perf starts before the CPU mask narrows, so that with fewer cores than the machine
    // has it samples from a CPU the workers do not use.
    let session = match &args.profile {
        Some(_) => Some(
            profile::Session::start(&profile::stacks::cell_frame(hot_path.name(), variant.name))
                .map_err(anyhow::Error::msg)?,
        ),
        None => None,
    };
    let cpus = affinity::limit_to_cores(cores).map_err(anyhow::Error::msg)?;
    let mask = affinity::format_cpu_list(&cpus);
    let key = CellKey {
        scenario: hot_path.name().to_owned(),
        variant: variant.name.to_owned(),
        params: params.to_map(),
        threads,
        cores,
    };
    let settings = RunSettings {
        threads,
        warmup,
        duration,
    };
    let mut blocked = None;
    let reps: Vec<RunRecord> = (0..repeats)
        .map(
            |_| match hot_path.measure(variant.name, &params, settings) {
                Ok(m) => {
                    blocked = m.waits_measured.then_some(m.waited);
                    RunRecord::from_measurement(&key, &mask, &m)
                }
                Err(failure) => RunRecord::failed(&key, &mask, failure.reason),
            },
        )
        .collect();
    let mut record = RunRecord::merge_repetitions(&reps).expect("at least one repetition");
    if let (Some(session), Some(prefix)) = (session, &args.profile) {
        let cell_profile = session.finish().map_err(anyhow::Error::msg)?;
        let title = format!(
            "{} / {}  threads={threads} cores={cores}",
            hot_path.name(),
            variant.name
        );
        record.profile = Some(
            profile::write_profile(&cell_profile, prefix, &title, blocked)
                .map_err(anyhow::Error::msg)?,
        );
    }
    println!("{}", serde_json::to_string(&record)?);
    Ok(if record.usable() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The arguments of a child `lab run` for one repetition of a cell; with `profile`, the
/// repetition is sampled and its flamegraph written to that prefix.
#[allow(clippy::too_many_arguments)]
pub fn child_args(
    scenario: &str,
    variant: &str,
    params: &Params,
    threads: usize,
    cores: usize,
    duration: Duration,
    warmup: Duration,
    profile: Option<&str>,
) -> Vec<String> {
    let mut args = vec![
        "run".to_owned(),
        "--scenario".to_owned(),
        scenario.to_owned(),
        "--variant".to_owned(),
        variant.to_owned(),
        "--threads".to_owned(),
        threads.to_string(),
        "--cores".to_owned(),
        cores.to_string(),
        "--duration".to_owned(),
        format!("{}", duration.as_secs_f64()),
        "--warmup".to_owned(),
        format!("{}", warmup.as_secs_f64()),
        "--repeats".to_owned(),
        "1".to_owned(),
    ];
    for p in params.to_args() {
        args.push("--param".to_owned());
        args.push(p);
    }
    if let Some(prefix) = profile {
        args.push("--profile".to_owned());
        args.push(prefix.to_owned());
    }
    args
}

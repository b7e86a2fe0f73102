//! `lab run`: measure one cell in this process and print one RunRecord as JSON.
//!
//! The process first narrows its CPU affinity to `cores` CPUs, so every worker thread it
//! starts inherits the mask. `lab matrix` runs each cell this way in a child process.

use std::path::Path;
use std::process::ExitCode;

use harness::schema::CellKey;
use harness::{affinity, profile, Params, RunRecord, RunSettings};

use crate::catalog;
use crate::cell_request::CellRequest;

/// Runs `lab run` for a checked request.
pub fn run(request: &CellRequest) -> anyhow::Result<ExitCode> {
    let hot_path = catalog::hot_path(&request.hot_path).map_err(anyhow::Error::msg)?;
    let variant = hot_path
        .variant(&request.variant)
        .map_err(anyhow::Error::msg)?;
    let threads = request.threads;
    let cores = request
        .cores
        .unwrap_or_else(|| affinity::allowed_cpus().len());
    crate::fault::inject(variant.name, threads, cores);
    let (duration, warmup, repeats) = (request.duration, request.warmup, request.repeats);
    let specs = hot_path.params();
    let mut params = Params::defaults(specs);
    for (name, value) in &request.params {
        params.set(specs, name, value).map_err(anyhow::Error::msg)?;
    }
    hot_path.check(&params).map_err(anyhow::Error::msg)?;

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
    let sampler = match &request.profile {
        Some(_) => Some(profile::Sampler::start().map_err(anyhow::Error::msg)?),
        None => None,
    };
    let reps: Vec<RunRecord> = (0..repeats)
        .map(
            |_| match hot_path.measure(variant.name, &params, settings) {
                Ok(m) => RunRecord::from_measurement(&key, &mask, &m),
                Err(failure) => RunRecord::failed(&key, &mask, failure.reason),
            },
        )
        .collect();
    let mut record = RunRecord::merge_repetitions(&reps).expect("at least one repetition");
    if let (Some(sampler), Some(prefix)) = (sampler, &request.profile) {
        let folded = sampler.finish().map_err(anyhow::Error::msg)?;
        let title = format!(
            "{} / {}  threads={threads} cores={cores}",
            hot_path.name(),
            variant.name
        );
        record.profile = Some(
            profile::write_profile(
                &folded,
                Path::new(&format!("{prefix}.folded")),
                Path::new(&format!("{prefix}.svg")),
                &title,
            )
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

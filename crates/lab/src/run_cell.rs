//! `lab run`: measure one cell in this process and print it as one repetition of the
//! matrix's cell ([`harness::Repetition`]), as JSON.
//!
//! The process first narrows its CPU affinity to `cores` CPUs, so every worker thread it
//! starts inherits the mask. `lab matrix` runs each cell this way in a child process.

use std::process::ExitCode;

use harness::schema::CellKey;
use harness::{affinity, CellRecord, Params, Repetition, RunSettings};

use crate::catalog;
use crate::cell_request::CellRequest;
use crate::profile;

/// A request's hot path, variant and checked parameters.
pub struct Resolved {
    /// The hot path.
    pub hot_path: &'static dyn harness::HotPath,
    /// The variant.
    pub variant: &'static harness::Variant,
    /// Its parameters, defaults filled in and checked.
    pub params: Params,
}

/// Resolves and checks a request against the catalog.
pub fn resolve(request: &CellRequest) -> anyhow::Result<Resolved> {
    let hot_path = catalog::hot_path(&request.hot_path).map_err(anyhow::Error::msg)?;
    let variant = hot_path
        .variant(&request.variant)
        .map_err(anyhow::Error::msg)?;
    let specs = hot_path.params();
    let mut params = Params::defaults(specs);
    for (name, value) in &request.params {
        params.set(specs, name, value).map_err(anyhow::Error::msg)?;
    }
    hot_path.check(&params).map_err(anyhow::Error::msg)?;
    hot_path
        .check_threads(&params, request.threads)
        .map_err(anyhow::Error::msg)?;
    Ok(Resolved {
        hot_path,
        variant,
        params,
    })
}

/// Runs `lab run` for a checked request.
pub fn run(request: &CellRequest) -> anyhow::Result<ExitCode> {
    let Resolved {
        hot_path,
        variant,
        params,
    } = resolve(request)?;
    let threads = request.threads;
    let cores = request
        .cores
        .unwrap_or_else(|| affinity::allowed_cpus().len());
    #[cfg(feature = "fault")]
    crate::fault::inject(variant.name, threads, cores);
    // Before any run: the switch reaches every worker's context and every store.
    harness::locks::set_instrument(!request.locks_off);
    harness::locks::set_preload(request.lock_library);
    harness::locks::delay::set(request.lock_delay.clone());
    let (duration, warmup, repeats) = (request.duration, request.warmup, request.repeats);

    // perf starts before the CPU mask narrows, so that with fewer cores than the machine
    // has it samples from a CPU the workers do not use.
    let session = match &request.profile {
        Some(_) => Some(
            profile::Session::start(&profile::stacks::cell_frame(hot_path.name(), variant.name))
                .map_err(anyhow::Error::msg)?,
        ),
        None => None,
    };
    let cpus = affinity::limit_to_cores(cores).map_err(anyhow::Error::msg)?;
    let mask = affinity::format_cpu_list(&cpus);
    let key = CellKey {
        hot_path: hot_path.name().to_owned(),
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
    let reps: Vec<Repetition> = (0..repeats)
        .map(
            |_| match hot_path.measure(variant.name, &params, settings) {
                Ok(m) => {
                    blocked = m.waits_measured.then_some(m.waited);
                    Repetition::from_measurement(&key, &mask, &m)
                }
                Err(failure) => Repetition::failed(&key, &mask, failure.reason),
            },
        )
        .collect();
    // `--repeats` windows merged are still one repetition to the matrix: one child's.
    let mut record =
        Repetition(CellRecord::merge_repetitions(&reps).expect("at least one repetition"));
    if let (Some(session), Some(prefix)) = (session, &request.profile) {
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

//! From parsed settings ([`Settings`]) and scenario files to the list of cells a matrix
//! will run, fitted to a time budget.
//!
//! Everything is checked here against the scenario files, before anything runs or any
//! file is written: an unknown scenario file, variant or parameter, a timeout too short
//! for a cell, or a setting that applies to none of the selected scenario files is one
//! error line naming the input and what is accepted. Reading the `key=value` text is
//! `settings`' job.
//!
//! Each scenario file's axis decides which setting may change its thread counts:
//! `threads=` sets thread axes, `clients=` client axes, and `<file>.threads=` (or
//! `<file>.clients=`) one file, whatever its axis; a fixed point changes only that way.
//! Sizes relative to the machine resolve against its CPUs (or `cpus=`'s). Then the plan
//! is fitted to `budget=` (15 minutes by default) from each file's per-run cost
//! (`budget`, `costs`). [`MatrixPlan::settings_lines`] says, per scenario file, what
//! applied and what the file kept; [`MatrixPlan::plan_lines`] what will run and how long
//! it should take. Running the cells is `matrix`'s job, not this module's.
//!
//! Submodules: `checks` (settings against the selected files), `file` (one file's
//! values, by one rule: the setting, else the file's value, and which), `params`
//! (parameter sets), `costs` (measured per-run costs), `budget` (cost model and
//! trimming), `lines` (what `plan=true` prints).

mod budget;
/// What writing the report costs, in the budget's cost model.
pub use budget::REPORT as REPORT_COST;
/// What the rounds may take once the parts' pairs are kept, and the share of the budget a
/// plan is fitted to.
pub use budget::{rounds_share, PLAN_SHARE};
mod checks;
mod costs;
mod file;
mod lines;
mod params;
pub mod parts;
pub mod profiled;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::bail;
use harness::{affinity, HotPath, Params};

use crate::cell_request::CellRequest;
use crate::scenario_file::{self, Axis};
pub use crate::settings::Settings;
pub use crate::words::value_text;

/// Time a child needs beyond warm-up and window to start and build its data; a timeout
/// shorter than warm-up + duration + this cannot let any cell finish.
pub const SETUP_MARGIN: Duration = Duration::from_secs(1);

/// One scenario file as the matrix will run it.
#[derive(Debug, Clone)]
pub struct ScenarioPlan {
    /// Scenario file name.
    pub file: String,
    /// The hot path.
    pub hot_path: &'static dyn HotPath,
    /// What its thread counts are.
    pub axis: Axis,
    /// Variants.
    pub variants: Vec<&'static str>,
    /// Thread counts (clients, on a client axis).
    pub threads: Vec<usize>,
    /// Core counts.
    pub cores: Vec<usize>,
    /// The thread counts of each core count the budget thinned (`budget::thin_rows`); a
    /// core count it does not name runs every count of `threads`.
    pub rows: std::collections::BTreeMap<usize, Vec<usize>>,
    /// The variants each core count the budget thinned runs (`budget::thin_variants`); a
    /// core count it does not name runs every variant.
    pub row_variants: std::collections::BTreeMap<usize, Vec<&'static str>>,
    /// Every combination of parameter values.
    pub param_sets: Vec<Params>,
    /// Measured window per repetition.
    pub duration: Duration,
    /// The file's own window for each side of a part's pair (`pair_duration`), in a
    /// normal run without `duration=`; `None` pairs at `duration`, as the budget trims
    /// it ([`ScenarioPlan::pair_window`]).
    pub pair_duration: Option<Duration>,
    /// Warm-up per repetition.
    pub warmup: Duration,
    /// Repetitions per cell.
    pub repeats: usize,
    /// Limit per child process.
    pub timeout: Duration,
    /// Which thread counts the default profiling covers.
    pub profile_at: crate::scenario_file::ProfileAt,
    /// Whether the cells a finding compares profiles of are profiled twice
    /// (`plan::profiled::repeated`).
    pub profile_repeat: bool,
    /// One line: which settings applied to this file and which it kept.
    pub settings_line: String,
    /// What one child costs beyond warm-up and window, before its per-thread part.
    pub overhead: Duration,
    /// Where `overhead` comes from (a results file, the scenario file's estimate).
    pub overhead_from: String,
    /// What a profiled run costs beyond warm-up and window, before its per-thread part,
    /// where a results file measured it; else `overhead` plus perf's (`budget::PROFILE_EXTRA`,
    /// `budget::PROFILE_PER_THREAD`).
    pub profile_overhead: Option<Duration>,
    /// Whether the budget trims this file's core counts last.
    pub keep_cores: bool,
    /// The shortest window the budget may cut it to.
    pub min_duration: Duration,
    /// What the budget trimmed, e.g. `windows 150ms -> 100ms`.
    pub trimmed: Vec<String>,
    /// The file's `[seed]` table (`Null` when none), copied into the results.
    pub seed: serde_json::Value,
    /// `locks=off`: its children measure with the lock table's instrument off.
    pub locks_off: bool,
    /// `locks=true`: its children start real servers under the lock library.
    pub lock_library: bool,
    /// `interleave=on`: its parts' pairs alternate in short turns where their sides can.
    pub interleave: bool,
}

/// One cell: everything a child `lab run` needs.
#[derive(Debug, Clone)]
pub struct CellSpec<'a> {
    /// The scenario file it belongs to.
    pub file: &'a ScenarioPlan,
    /// Variant.
    pub variant: &'static str,
    /// Parameters.
    pub params: Params,
    /// Which of the scenario file's parameter sets `params` is.
    pub param_index: usize,
    /// Worker threads.
    pub threads: usize,
    /// CPUs in the mask.
    pub cores: usize,
    /// The delay experiment's lock, amount and place: set only on the cells the
    /// `limiting_lock` part adds for its pairs (`pairs::lock_delay`), never in the rounds.
    pub lock_delay: Option<harness::locks::delay::Delay>,
    /// Set only on the cell the `lock_library_cost` parts add for their pairs
    /// (`pairs::lock_library`): its file starts servers under the lock library
    /// (`locks=true`), this cell's start without it.
    pub without_lock_library: bool,
}

impl CellSpec<'_> {
    /// The request for one repetition of this cell measured over `duration`, profiled
    /// to the prefix `profile` when given.
    pub fn request(&self, duration: Duration, profile: Option<String>) -> CellRequest {
        CellRequest {
            hot_path: self.file.hot_path.name().to_owned(),
            variant: self.variant.to_owned(),
            threads: self.threads,
            cores: Some(self.cores),
            duration,
            warmup: self.file.warmup,
            repeats: 1,
            params: self
                .params
                .to_map()
                .iter()
                .map(|(k, v)| (k.clone(), value_text(v)))
                .collect(),
            profile,
            locks_off: self.file.locks_off,
            lock_library: self.file.lock_library && !self.without_lock_library,
            lock_delay: self.lock_delay.clone(),
        }
    }
}

impl ScenarioPlan {
    /// The thread counts this file runs at `cores`: all of them unless the budget thinned
    /// that row.
    pub fn threads_at(&self, cores: usize) -> &[usize] {
        self.rows.get(&cores).map_or(&self.threads, Vec::as_slice)
    }

    /// Whether this file runs `variant` at `cores`: every variant unless the budget thinned
    /// that row's.
    pub fn runs_variant_at(&self, variant: &str, cores: usize) -> bool {
        self.row_variants
            .get(&cores)
            .is_none_or(|kept| kept.contains(&variant))
    }

    /// Every cell of this file: variant, parameters, cores, then threads.
    pub fn cells(&self) -> Vec<CellSpec<'_>> {
        let mut cells = Vec::new();
        for &variant in &self.variants {
            for (param_index, params) in self.param_sets.iter().enumerate() {
                for &cores in &self.cores {
                    if !self.runs_variant_at(variant, cores) {
                        continue;
                    }
                    for &threads in self.threads_at(cores) {
                        cells.push(CellSpec {
                            file: self,
                            variant,
                            params: params.clone(),
                            param_index,
                            threads,
                            cores,
                            lock_delay: None,
                            without_lock_library: false,
                        });
                    }
                }
            }
        }
        cells
    }
}

/// The whole matrix.
#[derive(Debug, Clone)]
pub struct MatrixPlan {
    /// Scenario files in order.
    pub scenarios: Vec<ScenarioPlan>,
    /// Whether quick (or smoke) mode was asked for: shorter profiling windows.
    pub quick: bool,
    /// Whether each cell gets an extra, uncounted repetition under the CPU profiler.
    pub profile: bool,
    /// Whether every cell is profiled (`profile=all`) rather than the default selection.
    pub profile_all: bool,
    /// The command that reproduces this run.
    pub command: String,
    /// Project root (reports go below it).
    pub root: PathBuf,
    /// Lines about selected scenario files that run no cell (no variant left).
    pub skipped: Vec<String>,
    /// The CPUs planned for: this machine's, or `cpus=`'s.
    pub nproc: usize,
    /// The budget the plan was fitted to (`None`: `budget=none`).
    pub budget: Option<Duration>,
    /// The load (CPUs) above which a repetition is retaken (`interference=`); `None`: off.
    pub interference: Option<f64>,
    /// How far from its usual speed the machine may run in a kept repetition
    /// (`machine_speed=`); `None`: recorded, not judged.
    pub speed_tolerance: Option<f64>,
    /// How narrow a decided part's interval must be before its pairs stop
    /// (`precision=`; half its width, relative).
    pub precision: f64,
    /// Whether the findings' parts are measured as pairs after the rounds (not in quick
    /// or smoke runs, which answer no question); the rounds then fit what the budget
    /// leaves them once the parts' pairs are reserved (`parts`).
    pub pairs: bool,
    /// Every part the plan's hot paths declare, with the pairs the plan gives it (empty
    /// without pairs).
    pub parts: Vec<parts::PartPlan>,
    /// What the build before the run took (`build_seconds`); not counted in the budget.
    pub build_seconds: Option<f64>,
}

/// The seconds the build before this run took (`LAB_BUILD_SECONDS`, set by the justfile's
/// recipes, which time `cargo build`): recorded and printed, never taken from the budget.
pub(crate) fn build_seconds() -> Option<f64> {
    std::env::var("LAB_BUILD_SECONDS")
        .ok()
        .and_then(|s| s.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
}

/// Default core counts: powers of two up to the CPUs available, and that count itself.
pub fn default_cores(nproc: usize) -> Vec<usize> {
    let mut cores: Vec<usize> = std::iter::successors(Some(1usize), |c| c.checked_mul(2))
        .take_while(|&c| c <= nproc)
        .collect();
    if cores.last() != Some(&nproc) {
        cores.push(nproc);
    }
    cores
}

pub(crate) fn text(d: Duration) -> String {
    humantime::format_duration(d).to_string()
}

impl MatrixPlan {
    /// Checks `settings` against the scenario files under `root/benches`, lays out the
    /// cells and fits them to the budget.
    pub fn build(settings: &Settings, root: &Path) -> anyhow::Result<MatrixPlan> {
        let (files, broken) =
            scenario_file::load_folder(&root.join("benches")).map_err(anyhow::Error::msg)?;
        // Said now, on stderr, in a run and in a plan alike: no results file keeps it.
        for warning in checks::broken_files(settings, &broken)? {
            eprintln!("{warning}");
        }
        if files.is_empty() {
            bail!("no scenario files in {}", root.join("benches").display());
        }
        let selected = checks::select(settings, &files)?;
        checks::check_counts_apply(settings, &files, &selected)?;
        checks::check_variants_exist(settings, &selected)?;
        checks::check_params_exist(settings, &selected)?;

        let nproc = settings
            .cpus
            .unwrap_or_else(|| affinity::allowed_cpus().len());
        let measured = costs::Measured::newest(
            &root.join("reports").join("data"),
            settings.costs_before.as_deref(),
        );
        let mut scenarios = Vec::new();
        let mut skipped = Vec::new();
        // Files whose cells need what this machine lacks: skipped, said in one line.
        let mut lacking = Vec::new();
        for file in selected {
            match file::plan_file(settings, file, nproc, &measured)? {
                Ok(plan) => scenarios.push(plan),
                Err(file::Skipped::Line(line)) => skipped.push(line),
                Err(file::Skipped::Lacking(m)) => lacking.push((file.name.clone(), m)),
            }
        }
        if let Some(n) = settings.cpus {
            skipped.push(format!(
                "cpus={n}: planned for a machine with what `just setup` installs (what this one lacks skips no file)"
            ));
        }
        let lacking = file::lacking_line(&lacking);
        if let Some(line) = &lacking {
            skipped.push(line.clone());
        }
        if scenarios.is_empty() {
            if let Some(line) = lacking {
                bail!("{line}; nothing else was selected");
            }
            bail!("variants=...: none of the selected scenario files has these variants");
        }
        let mut command = String::from("just matrix");
        for arg in &settings.typed {
            command.push(' ');
            command.push_str(arg);
        }
        let mut plan = MatrixPlan {
            scenarios,
            quick: settings.quick || settings.smoke,
            profile: !settings.no_profile,
            profile_all: settings.profile_all,
            command,
            root: root.to_path_buf(),
            skipped,
            nproc,
            // The measurement's budget: the build is not counted (it varies by machine
            // more than the findings may).
            budget: settings.budget,
            interference: settings
                .interference
                .unwrap_or(Some(crate::retake::DEFAULT_THRESHOLD)),
            speed_tolerance: settings.speed_tolerance.flatten(),
            precision: settings.precision.unwrap_or(verdict::decide::PRECISION),
            pairs: !(settings.quick || settings.smoke),
            parts: Vec::new(),
            build_seconds: build_seconds(),
        };
        plan.parts = plan.plan_parts(&measured);
        let reserve = parts::reserve(&plan.parts);
        budget::fit(&mut plan, settings, reserve);
        // Trimming may have left a part without its cells.
        plan.parts = plan.plan_parts(&measured);
        Ok(plan)
    }

    /// One line per selected scenario file: which settings applied to it and which it
    /// kept as the file has them, and what the budget trimmed (printed before the run,
    /// stored in the results file).
    pub fn settings_lines(&self) -> Vec<String> {
        self.scenarios
            .iter()
            .map(|s| match s.trimmed.is_empty() {
                true => s.settings_line.clone(),
                false => format!(
                    "{}; budget {} trimmed {}",
                    s.settings_line,
                    lines::short(self.budget.unwrap_or_default()),
                    s.trimmed.join(", ")
                ),
            })
            .chain(self.skipped.iter().cloned())
            .collect()
    }

    /// The parts and their planned pairs (none without pairs).
    fn plan_parts(&self, measured: &costs::Measured) -> Vec<parts::PartPlan> {
        if !self.pairs {
            return Vec::new();
        }
        parts::plan_parts(self, &self.cells(), measured)
    }

    /// The `[seed]` table of each scenario file that has one, by file name.
    pub fn seeds(&self) -> std::collections::BTreeMap<String, serde_json::Value> {
        self.scenarios
            .iter()
            .filter(|s| !s.seed.is_null())
            .map(|s| (s.file.clone(), s.seed.clone()))
            .collect()
    }

    /// Every cell, scenario file by scenario file, then variant, parameters, cores and
    /// threads.
    pub fn cells(&self) -> Vec<CellSpec<'_>> {
        self.scenarios
            .iter()
            .flat_map(ScenarioPlan::cells)
            .collect()
    }
}

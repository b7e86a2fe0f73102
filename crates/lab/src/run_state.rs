//! What a matrix run has gathered so far (each cell's repetitions and profile, the
//! reference, the overheads, the machine's speed) and where it goes: a fresh run or the
//! recorded state of the run it continues, merged and written atomically after every
//! round. Not here: running cells (`matrix`) or reading a run to resume (`resume`).

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::results::{ResultsFile, ResumeState, SCHEMA_VERSION};
use harness::schema::{self, ProfileRef};
use harness::{CellRecord, Repetition};

use crate::fs::write_atomically;
use crate::order;
use crate::plan::{CellSpec, MatrixPlan};
use crate::resume::Start;

/// What a run has gathered so far, and where it goes.
pub(crate) struct RunState {
    pub(crate) run_id: String,
    pub(crate) path: PathBuf,
    pub(crate) started: String,
    pub(crate) order_seed: u64,
    pub(crate) typed: Vec<String>,
    pub(crate) resumed: bool,
    /// The repetitions of each cell, in plan order.
    pub(crate) reps: Vec<Vec<Repetition>>,
    /// The profile of each cell, once taken.
    pub(crate) profiles: Vec<Option<ProfileRef>>,
    /// The reference loop's milliseconds, one per finished round (`env.reference`).
    pub(crate) reference: Vec<f64>,
    /// Seconds each counted child took beyond its warm-up and window.
    pub(crate) overheads: Vec<f64>,
    /// The machine's speed over the kept repetitions so far (`env.machine_speed`).
    pub(crate) machine_speed: Option<harness::env::MachineSpeed>,
    /// The findings' parts with the pairs measured so far (`comparisons`).
    pub(crate) comparisons: Vec<verdict::decide::Measured>,
}

impl RunState {
    /// A fresh run, or the recorded state of the run `start` continues.
    pub(crate) fn new(cells: &[CellSpec<'_>], data_dir: &Path, start: Start) -> RunState {
        let mut reps: Vec<Vec<Repetition>> = vec![Vec::new(); cells.len()];
        let mut profiles: Vec<Option<ProfileRef>> = vec![None; cells.len()];
        let Some(previous) = start.previous else {
            let started = SystemTime::now();
            let run_id = unique_run_id(data_dir, started);
            return RunState {
                path: data_dir.join(format!("{run_id}.json")),
                run_id,
                started: humantime::format_rfc3339_seconds(started).to_string(),
                order_seed: order::new_seed(),
                typed: start.typed,
                resumed: false,
                reps,
                profiles,
                reference: Vec::new(),
                overheads: Vec::new(),
                machine_speed: None,
                comparisons: Vec::new(),
            };
        };
        let results = previous.results;
        let recorded = results.resume.unwrap_or_default();
        let mut lost = 0;
        for rep in recorded.repetitions {
            match cells.iter().position(|c| same_cell(c, &rep)) {
                Some(i) => reps[i].push(rep),
                None => lost += 1,
            }
        }
        if lost > 0 {
            eprintln!(
                "note: {lost} recorded repetition(s) match no cell of the plan any more; left out"
            );
        }
        for cell in results.cells {
            if let Some(i) = cells.iter().position(|c| same_cell(c, &cell)) {
                profiles[i] = cell.profile;
            }
        }
        RunState {
            run_id: results.run_id,
            path: previous.path,
            started: results.started,
            order_seed: results.order_seed,
            typed: start.typed,
            resumed: true,
            reps,
            profiles,
            reference: results.env.reference.map_or(Vec::new(), |r| r.per_round_ms),
            overheads: results.env.run_overhead_s.into_iter().collect(),
            machine_speed: results.env.machine_speed,
            comparisons: results.comparisons,
        }
    }

    /// Merges what has finished and rewrites the results file atomically.
    pub(crate) fn write(
        &self,
        plan: &MatrixPlan,
        complete: bool,
    ) -> anyhow::Result<(PathBuf, ResultsFile)> {
        let mut records: Vec<CellRecord> = self
            .reps
            .iter()
            .zip(&self.profiles)
            .filter_map(|(r, profile)| {
                let mut merged = CellRecord::merge_repetitions(r)?;
                merged.profile = profile.clone();
                Some(merged)
            })
            .collect();
        schema::fill_efficiency(&mut records);
        harness::lock_table::fill_ceilings(&mut records);
        let results = ResultsFile {
            schema: SCHEMA_VERSION,
            run_id: self.run_id.clone(),
            started: self.started.clone(),
            finished: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
            command: plan.command.clone(),
            complete,
            settings_by_file: plan.settings_lines(),
            seeds: plan.seeds(),
            env: harness::env::EnvInfo {
                machine_speed: self.machine_speed.clone(),
                ..crate::reference::env(&self.reference, &self.overheads, plan.interference)
            },
            cells: records,
            comparisons: self.comparisons.clone(),
            plan: Some(plan.record()),
            order_seed: self.order_seed,
            resume: Some(ResumeState {
                settings: self.typed.clone(),
                repetitions: if complete {
                    Vec::new()
                } else {
                    self.reps.iter().flatten().cloned().collect()
                },
            }),
        };
        write_atomically(
            &self.path,
            serde_json::to_string_pretty(&results)?.as_bytes(),
        )?;
        Ok((self.path.clone(), results))
    }
}

/// Whether `record` is a repetition (or the merged record) of `cell`.
pub(crate) fn same_cell(cell: &CellSpec<'_>, record: &CellRecord) -> bool {
    record.scenario_file == cell.file.file
        && record.hot_path == cell.file.hot_path.name()
        && record.variant == cell.variant
        && record.params == cell.params.to_map()
        && record.threads == cell.threads
        && record.cores == cell.cores
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

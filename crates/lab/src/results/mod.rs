//! The whole results file of one matrix run ([`ResultsFile`]), its version and what a
//! resumed run continues from.
//!
//! The file is the pipeline's: the cells' records (`harness::schema`), the judgement's
//! measured parts (`verdict`), the plan and what a resumed run needs.
//!
//! Not here: the cells' records ([`harness::CellRecord`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use harness::env::EnvInfo;
use harness::{CellRecord, Repetition};
use verdict::decide::Measured;

/// The delay experiment's part ([`crate::pairs::lock_delay`]; read by scripts).
pub const LIMITING_LOCK: &str = "limiting_lock";

/// The lock library's cost at the most threads ([`crate::pairs::lock_library`]; read by
/// scripts).
pub const LOCK_LIBRARY_COST: &str = "lock_library_cost";

/// The lock library's cost at the fewest threads.
pub const LOCK_LIBRARY_COST_FEWEST: &str = "lock_library_cost_fewest_threads";

/// The parts the lab adds of its own beside the placebo (none a verdict's reason): named
/// here, with the file they are written to, so that the report tells them from a
/// question's parts without reading the pipeline that measured them.
pub const LAB_PARTS: &[&str] = &[LIMITING_LOCK, LOCK_LIBRARY_COST, LOCK_LIBRARY_COST_FEWEST];

/// The schema version this build writes and the newest it reads. 2: a record's hot path
/// is written `hot_path` (1 wrote `scenario`, which this build still reads), so a reader
/// of 1 refuses a file it would misread.
pub const SCHEMA_VERSION: u32 = 2;

/// The whole results file of one matrix run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultsFile {
    /// Schema version; readers refuse a newer one.
    pub schema: u32,
    /// Identifier of the run, also its file name.
    pub run_id: String,
    /// When the run started (RFC 3339, UTC).
    pub started: String,
    /// When the run ended (RFC 3339, UTC).
    #[serde(default)]
    pub finished: String,
    /// The command that reproduces the run.
    #[serde(default)]
    pub command: String,
    /// False when the run was interrupted and holds only the cells that finished.
    #[serde(default = "default_true")]
    pub complete: bool,
    /// One line per scenario file: which command-line settings applied to it and which
    /// values it kept as the file has them (empty in files written before this field).
    #[serde(default)]
    pub settings_by_file: Vec<String>,
    /// The `[seed]` table of each scenario file that has one, by file name: the seed's
    /// baseline, figures and settings that the hot paths' questions compare with (empty in
    /// files written before this field: those findings say the seed's figures are absent).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub seeds: BTreeMap<String, serde_json::Value>,
    /// The machine and build.
    pub env: EnvInfo,
    /// Every cell.
    pub cells: Vec<CellRecord>,
    /// Every part the findings declared for this plan, with the pairs measured for it
    /// after the rounds (empty in files written before parts, and in quick runs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub comparisons: Vec<Measured>,
    /// What the plan gave before anything ran: the build's time, the budget, and the
    /// pairs each part was planned (absent in files written before plans were kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<RunPlan>,
    /// The seed of the cell order, shuffled afresh in every round (0 in files written
    /// before the order was shuffled).
    #[serde(default)]
    pub order_seed: u64,
    /// What `lab matrix resume=<run-id>` needs to continue this run; absent in files
    /// written before runs could be resumed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume: Option<ResumeState>,
}

/// A run's plan as the results file keeps it. Field names are read by scripts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct RunPlan {
    /// What the build before the run took, in seconds (not counted in the budget); null
    /// when the run was not started by the justfile's recipes.
    pub build_seconds: Option<f64>,
    /// The measurement's budget in seconds; null for `budget=none`.
    pub budget_seconds: Option<f64>,
    /// Each part declared, with the pairs planned for it.
    pub parts: Vec<PlannedPart>,
}

/// One part's plan. Field names are read by scripts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlannedPart {
    /// `<hot path>/<part>`.
    pub name: String,
    /// Pairs planned (0 when it cannot be asked here).
    pub pairs: usize,
    /// What they cost by the cost model, in seconds.
    pub seconds: f64,
    /// The sd of a pair's log ratio the count was planned for.
    pub noise: f64,
    /// Why it cannot be asked here (empty when it can).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub missing: String,
}

/// The state of a matrix run that a resumed run continues from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResumeState {
    /// The settings as typed after `lab matrix`, e.g. `["threads=1,2", "quick=true"]`.
    pub settings: Vec<String>,
    /// Every finished repetition, unmerged (its `scenario_file` set), while the run is
    /// incomplete; empty once it is complete, when `cells` says all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repetitions: Vec<Repetition>,
}

fn default_true() -> bool {
    true
}

impl ResultsFile {
    /// Parses a results file, refusing one written by a newer schema with a clear message.
    pub fn from_json(text: &str) -> Result<ResultsFile, String> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| format!("not valid JSON ({e})"))?;
        let schema = value
            .get("schema")
            .and_then(|s| s.as_u64())
            .ok_or("no \"schema\" field: not a contention-lab results file")?;
        if schema > u64::from(SCHEMA_VERSION) {
            return Err(format!(
                "schema {schema} is newer than this build reads (up to {SCHEMA_VERSION}); update contention-lab"
            ));
        }
        serde_json::from_value(value)
            .map_err(|e| format!("not a contention-lab results file ({e})"))
    }
}

#[cfg(test)]
mod tests;

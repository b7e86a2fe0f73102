//! The result schema: what `lab` writes to `reports/data/<run-id>.json` and what users and
//! scripts parse. Field names are a public interface (see ARCHITECTURE.md); add fields, never
//! rename them, and bump [`SCHEMA_VERSION`] when a change would mislead an old reader.
//!
//! One cell's record ([`RunRecord`], in `record`), merged (`merge`) from repetitions
//! ([`Repetition`], in `repetition`, made in `build`), and the file that holds the cells
//! ([`ResultsFile`], in `results`).

mod build;
mod merge;
mod record;
mod repetition;
mod results;

pub use merge::fill_efficiency;
pub use record::{CellKey, CellStatus, OffCpuRef, ProfileRef, RunRecord};
pub use repetition::Repetition;
pub use results::{PlannedPart, ResultsFile, ResumeState, RunPlan, SCHEMA_VERSION};

#[cfg(test)]
mod tests;

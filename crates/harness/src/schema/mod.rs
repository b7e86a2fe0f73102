//! The result schema: what `lab` writes to `reports/data/<run-id>.json` and what users and
//! scripts parse. Field names are a public interface (see ARCHITECTURE.md); add fields, never
//! rename them, and bump `lab::results::SCHEMA_VERSION` when a change would mislead an old reader.
//!
//! One cell's record ([`CellRecord`], in `record`), merged (`merge`) from repetitions
//! ([`Repetition`], in `repetition`, made in `build`). The file that holds a run's cells
//! is `lab`'s (`lab::results`): it also holds the judgement's parts.

mod build;
mod merge;
mod record;
mod repetition;

pub use merge::fill_efficiency;
pub use record::{CellKey, CellRecord, CellStatus, OffCpuRef, ProfileRef};
pub use repetition::Repetition;

#[cfg(test)]
mod tests;

//! A server file whose cells all failed (a server that never started): its parts stay in
//! the finding, each inconclusive with the failure's first line, so the verdict cannot be
//! read from the other files alone. Not here: the parts of a file that ran.

use harness::CellRecord;
use verdict::decide::{Outcome, Part};
use verdict::registry::Registry;

/// Why every cell of `file` in `cells` failed, in the first failure's first line;
/// `None` where the file has a usable cell or no cell at all.
pub fn all_failed(cells: &[CellRecord], file: &str) -> Option<String> {
    let of: Vec<&CellRecord> = cells
        .iter()
        .filter(|c| verdict::findings::file_of(c) == file)
        .collect();
    if of.is_empty() || of.iter().any(|c| c.usable()) {
        return None;
    }
    let first = of
        .iter()
        .find_map(|c| c.failure.as_deref())
        .map(|f| f.lines().next().unwrap_or("").trim().to_owned())
        .filter(|f| !f.is_empty())
        .unwrap_or_else(|| "its figures did not verify".to_owned());
    Some(format!(
        "every {file} cell of the run failed ({} cell(s)): {first}",
        of.len()
    ))
}

/// A file's parts (its `registry`) where none of its cells ran: each inconclusive with
/// `why`, so the server stays in the finding and the verdict cannot read past it.
pub(super) fn failed_parts(registry: &Registry<'_>, why: &str) -> Vec<Part> {
    registry
        .entries()
        .iter()
        .map(|e| Part::other(&e.name, &e.claim, Outcome::Inconclusive, why))
        .collect()
}

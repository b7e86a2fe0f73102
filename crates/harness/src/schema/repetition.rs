//! One repetition ([`Repetition`]): one child's measurement of one cell, before merging.
//! It has a record's fields and wire form, but a type of its own so that what still has
//! to be merged cannot be written, judged or compared as a cell by mistake.
//!
//! Not here: its making from a measurement ([`super::build`]) or merging repetitions into
//! a cell ([`super::merge`]).

use std::ops::{Deref, DerefMut};

use serde::{Deserialize, Serialize};

use super::{CellKey, CellRecord};

/// One child's measurement of one cell, before merging: what `lab run` prints, what a
/// matrix child returns, what an incomplete run keeps in [`super::ResumeState`], and what
/// [`CellRecord::merge_repetitions`] takes. Written exactly as a [`CellRecord`]
/// (transparent), so files written before the type existed still read. A `lab run
/// --repeats N` child's repetition already merges its N windows; merging keeps all their
/// figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Repetition(pub CellRecord);

impl Repetition {
    /// A repetition that produced no figures (crashed, timed out, could not start): it
    /// fails the cell it is merged into.
    pub fn failed(key: &CellKey, affinity: &str, reason: impl Into<String>) -> Repetition {
        Repetition(CellRecord::failed(key, affinity, reason))
    }
}

// Reading a repetition's figures is reading a record's: only owning one, and merging,
// tell the two apart.
impl Deref for Repetition {
    type Target = CellRecord;

    fn deref(&self) -> &CellRecord {
        &self.0
    }
}

impl DerefMut for Repetition {
    fn deref_mut(&mut self) -> &mut CellRecord {
        &mut self.0
    }
}

//! The cells a comparison names ([`CellRef`]) and the cells a plan will run ([`Planned`]),
//! from which a hot path declares its claims.
//!
//! Not here: what is compared or how it is judged ([`super::claim`], [`super::rule`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::seeds::Seeds;
use harness::schema::CellRecord;

/// One cell of a plan, named as a comparison names its sides: scenario file, variant,
/// threads, cores and the parameters that tell it apart from the file's other cells.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellRef {
    /// Scenario file name, e.g. `lookup`.
    pub file: String,
    /// Variant.
    pub variant: String,
    /// Threads (clients, on a client axis).
    pub threads: usize,
    /// CPUs in the cell's mask.
    pub cores: usize,
    /// Parameters the cell must have; those not named may be anything.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<String, serde_json::Value>,
}

impl CellRef {
    /// `variant` of `file` at `threads` and `cores`, any parameters.
    pub fn new(file: &str, variant: &str, threads: usize, cores: usize) -> CellRef {
        CellRef {
            file: file.to_owned(),
            variant: variant.to_owned(),
            threads,
            cores,
            params: BTreeMap::new(),
        }
    }

    /// The same cell with parameter `key` set to `value`.
    pub fn with(mut self, key: &str, value: impl Into<serde_json::Value>) -> CellRef {
        self.params.insert(key.to_owned(), value.into());
        self
    }

    /// Whether a cell of `file` with these figures is this one.
    pub fn matches(
        &self,
        file: &str,
        variant: &str,
        threads: usize,
        cores: usize,
        params: &BTreeMap<String, serde_json::Value>,
    ) -> bool {
        self.file == file
            && self.variant == variant
            && self.threads == threads
            && self.cores == cores
            && self.params.iter().all(|(k, v)| params.get(k) == Some(v))
    }

    /// Whether the record is this cell.
    pub fn matches_record(&self, r: &CellRecord) -> bool {
        self.matches(r.file(), &r.variant, r.threads, r.cores, &r.params)
    }

    /// "`entry-cache` 12 threads on 2 CPUs (lookup)", with any parameters named.
    pub fn text(&self) -> String {
        self.text_without(&BTreeMap::new())
    }

    /// [`CellRef::text`] without the parameters `common` holds with the same value (those
    /// every side of a comparison shares, which tell nothing apart).
    pub fn text_without(&self, common: &BTreeMap<String, serde_json::Value>) -> String {
        let params: Vec<String> = self
            .params
            .iter()
            .filter(|(k, v)| common.get(*k) != Some(v))
            .map(|(k, v)| match v {
                serde_json::Value::String(s) => format!("{k}={s}"),
                v => format!("{k}={v}"),
            })
            .collect();
        format!(
            "`{}` {} threads on {} CPU{}{} ({})",
            self.variant,
            self.threads,
            self.cores,
            if self.cores == 1 { "" } else { "s" },
            if params.is_empty() {
                String::new()
            } else {
                format!(", {}", params.join(", "))
            },
            self.file
        )
    }
}

/// The cells a plan will run and the `[seed]` tables of its files: what a hot path's
/// [`crate::HotPath::claims`] declares its comparisons from.
#[derive(Debug, Clone, Copy)]
pub struct Planned<'a> {
    /// Every planned cell.
    pub cells: &'a [CellRef],
    /// `[seed]` tables by scenario file name.
    pub seeds: &'a BTreeMap<String, serde_json::Value>,
}

impl<'a> Planned<'a> {
    /// Cells of scenario file `file`.
    pub fn of_file(&self, file: &str) -> Vec<&'a CellRef> {
        self.cells.iter().filter(|c| c.file == file).collect()
    }

    /// The planned cell of `file` with this variant, threads and cores, if any.
    pub fn find(
        &self,
        file: &str,
        variant: &str,
        threads: usize,
        cores: usize,
    ) -> Option<&'a CellRef> {
        self.cells.iter().find(|c| {
            c.file == file && c.variant == variant && c.threads == threads && c.cores == cores
        })
    }

    /// The core counts of `file`, ascending.
    pub fn cores(&self, file: &str) -> Vec<usize> {
        let mut v: Vec<usize> = self.of_file(file).iter().map(|c| c.cores).collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// The thread counts of `file` at `cores`, ascending.
    pub fn threads(&self, file: &str, cores: usize) -> Vec<usize> {
        let mut v: Vec<usize> = self
            .of_file(file)
            .iter()
            .filter(|c| c.cores == cores)
            .map(|c| c.threads)
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// The `[seed]` tables, as a question reads them.
    pub fn seeds(&self) -> Seeds<'a> {
        Seeds(self.seeds)
    }
}

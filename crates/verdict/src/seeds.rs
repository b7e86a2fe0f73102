//! The `[seed]` tables of a run's or a plan's scenario files, as a question reads them.
//!
//! Not here: where the tables come from (`lab` reads them from scenario files) or what a
//! question makes of them (each hot path).

use std::collections::BTreeMap;

/// The `[seed]` tables of a run's or a plan's scenario files, by file name.
#[derive(Debug, Clone, Copy)]
pub struct Seeds<'a>(pub &'a BTreeMap<String, serde_json::Value>);

impl<'a> Seeds<'a> {
    /// The `[seed]` table of `file`, if there is one.
    pub fn table(&self, file: &str) -> Option<&'a serde_json::Map<String, serde_json::Value>> {
        self.0.get(file).and_then(|v| v.as_object())
    }

    /// A number of `file`'s `[seed]` table.
    pub fn f64(&self, file: &str, key: &str) -> Option<f64> {
        self.table(file)?.get(key)?.as_f64()
    }

    /// A word of `file`'s `[seed]` table.
    pub fn str(&self, file: &str, key: &str) -> Option<&'a str> {
        self.table(file)?.get(key)?.as_str()
    }

    /// A list of words of `file`'s `[seed]` table (empty when absent).
    pub fn strs(&self, file: &str, key: &str) -> Vec<String> {
        self.table(file)
            .and_then(|s| s.get(key))
            .and_then(|v| v.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    }
}

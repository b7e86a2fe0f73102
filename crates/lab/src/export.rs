//! Exporters: results turned into bytes for other tools (pandas, a spreadsheet, jq).
//!
//! One row per cell, every figure of the record flattened into a column whose name is its
//! JSON path (`latency_ns.p99`, `params.users`, `extra.reads_per_sec`). Columns are derived
//! from the records themselves rather than listed here, so a field added to the schema or a
//! hot path's new extra reaches the CSV without touching this module.
//!
//! This module only makes bytes; callers decide where they go (the report writes
//! `reports/<run-id>/cells.csv`, `lab export` writes to standard output).

use std::collections::BTreeMap;

use crate::results::ResultsFile;
use serde_json::Value;

/// Output formats of `lab export`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One header row, one row per cell, parameters and extras flattened into columns.
    Csv,
    /// A JSON array of flattened cells (the same columns as the CSV, typed).
    Json,
}

/// Columns that identify a cell, first in every export so a reader finds them at once.
const LEADING: &[&str] = &[
    "run_id",
    "scenario_file",
    "hot_path",
    "variant",
    "threads",
    "cores",
    "status",
    "verified",
    "repeats",
    "ops_per_sec",
];

/// Parts of a record that are not figures (paths to files, per-repetition lists) and would
/// only add noise to a table.
fn skipped(path: &str) -> bool {
    path.starts_with("profile") || path.ends_with("_reps")
}

/// One flattened row per cell of every file, keyed by column name.
pub fn rows(files: &[ResultsFile]) -> Vec<BTreeMap<String, Value>> {
    let mut out = Vec::new();
    for file in files {
        for cell in &file.cells {
            let mut row = BTreeMap::new();
            row.insert("run_id".to_owned(), Value::String(file.run_id.clone()));
            let value = serde_json::to_value(cell).unwrap_or(Value::Null);
            flatten("", &value, &mut row);
            busiest_lock(cell, &mut row);
            out.push(row);
        }
    }
    out
}

/// The lock table's busiest lock as columns of its own (`locks.busiest.name`, its
/// utilisation, ceiling and share of it, mean hold); the whole table stays in `locks` as
/// JSON text.
fn busiest_lock(cell: &harness::CellRecord, row: &mut BTreeMap<String, Value>) {
    let Some(b) = cell.locks.as_deref().and_then(harness::lock_table::busiest) else {
        return;
    };
    let number = |v: Option<f64>| v.map_or(Value::Null, |v| serde_json::json!(v));
    for (name, value) in [
        ("name", Value::String(b.name.clone())),
        ("utilization", number(b.utilization)),
        ("ceiling_ops_per_sec", number(b.ceiling_ops_per_sec)),
        ("ceiling_share", number(b.ceiling_share)),
        ("hold_ns_mean", number(b.hold_ns.map(|h| h.mean))),
    ] {
        row.insert(format!("locks.busiest.{name}"), value);
    }
}

fn flatten(prefix: &str, value: &Value, row: &mut BTreeMap<String, Value>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                let path = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                };
                if !skipped(&path) {
                    flatten(&path, inner, row);
                }
            }
        }
        // A two-number array is an interval (`ops_per_sec_ci`): two columns read better.
        Value::Array(items) if items.len() == 2 && items.iter().all(Value::is_number) => {
            row.insert(format!("{prefix}.low"), items[0].clone());
            row.insert(format!("{prefix}.high"), items[1].clone());
        }
        other => {
            row.insert(prefix.to_owned(), other.clone());
        }
    }
}

/// The union of the rows' columns: identifying columns first, the rest in name order.
fn columns(rows: &[BTreeMap<String, Value>]) -> Vec<String> {
    let mut rest: Vec<String> = rows
        .iter()
        .flat_map(|r| r.keys().cloned())
        .filter(|k| !LEADING.contains(&k.as_str()))
        .collect();
    rest.sort();
    rest.dedup();
    LEADING
        .iter()
        .map(|s| (*s).to_owned())
        .chain(rest)
        .collect()
}

fn cell_text(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

/// The cells of `files` as CSV: a header row, then one row per cell.
pub fn csv(files: &[ResultsFile]) -> anyhow::Result<Vec<u8>> {
    let rows = rows(files);
    let columns = columns(&rows);
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record(&columns)?;
    for row in &rows {
        writer.write_record(columns.iter().map(|c| cell_text(row.get(c))))?;
    }
    Ok(writer.into_inner()?)
}

/// The cells of `files` as a JSON array of flat objects (pretty-printed).
pub fn json(files: &[ResultsFile]) -> anyhow::Result<Vec<u8>> {
    let mut text = serde_json::to_vec_pretty(&rows(files))?;
    text.push(b'\n');
    Ok(text)
}

/// The cells of `files` in `format`.
pub fn export(files: &[ResultsFile], format: Format) -> anyhow::Result<Vec<u8>> {
    match format {
        Format::Csv => csv(files),
        Format::Json => json(files),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> ResultsFile {
        let text = include_str!("../tests/fixtures/small-run/reports/data/fixture.json");
        ResultsFile::from_json(text).expect("fixture parses")
    }

    #[test]
    fn one_row_per_cell_and_figures_round_trip() {
        let file = fixture();
        let bytes = csv(std::slice::from_ref(&file)).unwrap();
        let mut reader = csv::Reader::from_reader(bytes.as_slice());
        let header = reader.headers().unwrap().clone();
        let col = |name: &str| header.iter().position(|h| h == name).unwrap();
        let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
        assert_eq!(rows.len(), file.cells.len());
        for (row, cell) in rows.iter().zip(&file.cells) {
            assert_eq!(&row[col("variant")], cell.variant.as_str());
            assert_eq!(row[col("threads")].parse::<usize>().unwrap(), cell.threads);
            let ops: f64 = row[col("ops_per_sec")].parse().unwrap();
            assert_eq!(ops, cell.ops_per_sec);
            for (name, value) in &cell.params {
                assert_eq!(row[col(&format!("params.{name}"))], cell_text(Some(value)));
            }
            if let Some(p99) = header.iter().position(|h| h == "latency_ns.p99") {
                assert_eq!(row[p99].parse::<u64>().unwrap(), cell.latency_ns.p99);
            }
        }
        assert_eq!(&header[0], "run_id");
    }

    #[test]
    fn json_has_the_same_rows() {
        let file = fixture();
        let parsed: Vec<BTreeMap<String, Value>> =
            serde_json::from_slice(&json(std::slice::from_ref(&file)).unwrap()).unwrap();
        assert_eq!(parsed.len(), file.cells.len());
        assert!(parsed.iter().all(|r| r.contains_key("ops_per_sec")));
    }

    #[test]
    fn intervals_become_two_columns_and_profiles_are_left_out() {
        let mut row = BTreeMap::new();
        let value = serde_json::json!({"ops_per_sec_ci": [1.0, 2.0], "profile": {"svg": "x"}});
        flatten("", &value, &mut row);
        assert_eq!(row["ops_per_sec_ci.low"], serde_json::json!(1.0));
        assert_eq!(row["ops_per_sec_ci.high"], serde_json::json!(2.0));
        assert!(!row.keys().any(|k| k.starts_with("profile")));
    }

    #[test]
    fn the_busiest_lock_has_columns_of_its_own() {
        let mut file = fixture();
        let row = |name: &str, u: f64| harness::lock_table::LockRow {
            name: name.into(),
            slots: Some(1),
            utilization: Some(u),
            ceiling_share: Some(u),
            ceiling_ops_per_sec: Some(1000.0),
            ..Default::default()
        };
        file.cells[0].locks = Some(vec![row("reads", 0.1), row("directory mutex", 0.9)]);
        let rows = rows(std::slice::from_ref(&file));
        assert_eq!(
            rows[0]["locks.busiest.name"],
            Value::String("directory mutex".into())
        );
        assert_eq!(rows[0]["locks.busiest.utilization"], serde_json::json!(0.9));
        assert!(!rows[1].contains_key("locks.busiest.name") || file.cells[1].locks.is_some());
        let text = String::from_utf8(csv(std::slice::from_ref(&file)).unwrap()).unwrap();
        assert!(text
            .lines()
            .next()
            .unwrap()
            .contains("locks.busiest.ceiling_share"));
    }
}

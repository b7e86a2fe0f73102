//! Loading results files for a report: reading, checking, finding the newest. Nothing
//! here groups or analyses.

use std::path::{Path, PathBuf};

use crate::results::ResultsFile;
use anyhow::Context;

/// One results file and where it came from.
pub struct Source {
    /// The file as the user named it.
    pub path: PathBuf,
    /// Its contents.
    pub results: ResultsFile,
}

#[cfg(test)]
impl Source {
    /// A complete results file of `cells` and nothing else, for tests of what the report
    /// makes of them.
    pub fn of_cells(cells: Vec<harness::CellRecord>) -> Source {
        Source {
            path: "x.json".into(),
            results: ResultsFile {
                schema: crate::results::SCHEMA_VERSION,
                run_id: "r".into(),
                started: String::new(),
                finished: String::new(),
                command: String::new(),
                complete: true,
                settings_by_file: Vec::new(),
                seeds: Default::default(),
                env: Default::default(),
                cells,
                plan: None,
                comparisons: Vec::new(),
                order_seed: 0,
                resume: None,
            },
        }
    }
}

/// Reads and checks results files; the error names the file and what is wrong with it.
pub fn load(paths: &[PathBuf]) -> anyhow::Result<Vec<Source>> {
    paths
        .iter()
        .map(|path| {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("{}: cannot read", path.display()))?;
            let results = ResultsFile::from_json(&text)
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
            Ok(Source {
                path: path.clone(),
                results,
            })
        })
        .collect()
}

/// The newest results file under `root/reports/data`.
pub fn latest_results(root: &Path) -> anyhow::Result<PathBuf> {
    let dir = root.join("reports/data");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .with_context(|| format!("no results in {}: run `just matrix` first", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
        .pop()
        .with_context(|| format!("no results in {}: run `just matrix` first", dir.display()))
}

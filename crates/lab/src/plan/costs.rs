//! What one child of each scenario file costs beyond its warm-up and window, as the
//! newest results file in `reports/data` measured it (`run_overhead_s` of its cells).
//!
//! The cost model (`budget`) charges a run `overhead + per-thread part + warm-up +
//! window`; this module supplies the measured `overhead` per scenario file, the part that
//! does not grow with threads. A file with no measured cell (an older results file, a
//! file not in that run, a fresh clone) falls back to the scenario file's own estimate.
//! It reads; it never writes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use harness::schema::ResultsFile;

use super::budget::PER_THREAD;

/// Measured per-run overheads by scenario file.
#[derive(Debug, Default)]
pub struct Measured {
    source: Option<PathBuf>,
    by_file: BTreeMap<String, Duration>,
}

impl Measured {
    /// The overheads the newest results file in `dir` (older than the run `before`, when
    /// given) measured; none when there is no readable results file (a fresh clone) or it
    /// measured none.
    pub fn newest(dir: &Path, before: Option<&str>) -> Measured {
        let Some(path) = newest_results(dir, before) else {
            return Measured::default();
        };
        let Some(results) = std::fs::read_to_string(&path)
            .ok()
            .and_then(|text| ResultsFile::from_json(&text).ok())
        else {
            return Measured::default();
        };
        let mut samples: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        for cell in &results.cells {
            if let Some(o) = cell.run_overhead_s {
                let base = o - PER_THREAD.as_secs_f64() * cell.threads as f64;
                samples
                    .entry(cell.scenario_file.clone())
                    .or_default()
                    .push(base.max(0.0));
            }
        }
        let by_file = samples
            .into_iter()
            .filter(|(file, _)| !file.is_empty())
            .map(|(file, v)| (file, Duration::from_secs_f64(harness::stats::median(&v))))
            .collect();
        Measured {
            source: Some(path),
            by_file,
        }
    }

    /// The measured overhead of one child of `file`, beyond its per-thread part.
    pub fn overhead(&self, file: &str) -> Option<Duration> {
        self.by_file.get(file).copied()
    }

    /// Which results file the figures come from, as its file name.
    pub fn source(&self) -> String {
        self.source
            .as_ref()
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }
}

/// The newest `<run-id>.json` in `dir` (before the run id `before`): run ids are
/// timestamps, so the greatest name.
fn newest_results(dir: &Path, before: Option<&str>) -> Option<PathBuf> {
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .filter(|p| {
            let stem = p.file_stem().map(|s| s.to_string_lossy().into_owned());
            before.is_none_or(|b| stem.is_some_and(|s| s.as_str() < b))
        })
        .max()
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness::schema::{CellKey, CellStatus, RunRecord};

    fn cell(file: &str, threads: usize, overhead: Option<f64>) -> RunRecord {
        let key = CellKey {
            scenario: "lease".into(),
            variant: "memory".into(),
            params: Default::default(),
            threads,
            cores: 2,
        };
        let mut r = RunRecord::failed(&key, "0-1", "x");
        r.status = CellStatus::Ok;
        r.scenario_file = file.into();
        r.run_overhead_s = overhead;
        r
    }

    #[test]
    fn the_newest_results_file_gives_each_files_median_overhead() {
        let dir = tempfile::tempdir().unwrap();
        let fixture =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/small-run/reports/data");
        let old = newest_results(&fixture, None).expect("the fixture has a results file");
        let mut results = ResultsFile::from_json(&std::fs::read_to_string(old).unwrap()).unwrap();
        results.cells = vec![
            cell("lease", 1, Some(0.1)),
            cell("lease", 1, Some(0.3)),
            cell("lease", 1, Some(0.2)),
            cell("pool", 1000, Some(0.1 + 1000.0 * PER_THREAD.as_secs_f64())),
            cell("sqlmix", 1, None),
        ];
        let text = serde_json::to_string(&results).unwrap();
        std::fs::write(dir.path().join("20200101T000000Z.json"), "{}").unwrap();
        std::fs::write(dir.path().join("20300101T000000Z.json"), text).unwrap();
        let m = Measured::newest(dir.path(), None);
        let before = Measured::newest(dir.path(), Some("20300101T000000Z"));
        assert!(
            before.overhead("lease").is_none(),
            "the older file does not parse"
        );
        assert_eq!(m.source(), "20300101T000000Z.json");
        // Beyond the per-thread part: 0.2 s less one thread's share, 0.1 s.
        let us = |file: &str| {
            m.overhead(file)
                .map(|d| (d.as_secs_f64() * 1e6).round() as u64)
        };
        assert_eq!(us("lease"), Some(200_000 - PER_THREAD.as_micros() as u64));
        assert_eq!(us("pool"), Some(100_000));
        let ms = |file: &str| m.overhead(file).map(|d| d.as_millis());
        assert_eq!(ms("sqlmix"), None);
        assert!(Measured::newest(&dir.path().join("none"), None)
            .overhead("lease")
            .is_none());
    }
}

//! What one child of each scenario file costs beyond its warm-up and window, as the
//! newest results file in `reports/data` that ran that file measured it
//! (`run_overhead_s` of its cells).
//!
//! The cost model (`budget`) charges a run `overhead + per-thread part + warm-up +
//! window`; this module supplies the measured `overhead` per scenario file, the part that
//! does not grow with threads. A file with no measured cell (an older results file, a
//! file not in that run, a fresh clone) falls back to the scenario file's own estimate.
//! It reads; it never writes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::results::ResultsFile;
use harness::schema::CellRecord;

use super::budget::PER_THREAD;

/// Measured per-run overheads by scenario file, each with the results file it came from.
#[derive(Debug, Default)]
pub struct Measured {
    by_file: BTreeMap<String, (Duration, String)>,
    /// What a profiled run took beyond its warm-up, window and per-thread part, by
    /// scenario file, from the newest results file that profiled a cell of it.
    profile_by_file: BTreeMap<String, Duration>,
    /// The sd of a pair's log ratio by `<hot path>/<part>`, from the newest results file
    /// that measured at least a first look of that part's pairs.
    noise: BTreeMap<String, f64>,
    /// What one pair of each part took, in seconds, by `<hot path>/<part>`, from the
    /// same results file.
    pair_seconds: BTreeMap<String, f64>,
}

/// How many of the newest results files are read: enough to find every scenario file of
/// a default run after a few single-file runs, few enough to stay instant.
const FILES_READ: usize = 10;

impl Measured {
    /// For each scenario file, the overhead the newest results file in `dir` that ran it
    /// measured (among the [`FILES_READ`] newest, and older than the run `before` when
    /// given); none for a file no readable results file measured (a fresh clone).
    pub fn newest(dir: &Path, before: Option<&str>) -> Measured {
        let mut by_file = BTreeMap::new();
        let mut profile_by_file = BTreeMap::new();
        let mut noise = BTreeMap::new();
        let mut pair_seconds = BTreeMap::new();
        for path in newest_results(dir, before).into_iter().take(FILES_READ) {
            let Some(results) = std::fs::read_to_string(&path)
                .ok()
                .and_then(|text| ResultsFile::from_json(&text).ok())
            else {
                continue;
            };
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            for m in &results.comparisons {
                let name = format!("{}/{}", m.claim.hot_path, m.claim.part);
                if let (Some(sd), false) = (pair_noise(m), noise.contains_key(&name)) {
                    noise.insert(name.clone(), sd);
                    pair_seconds.insert(name, m.seconds / m.pairs.len() as f64);
                }
            }
            // The newest file that measured a scenario file's runs (or profiles) gives them.
            for (file, median) in medians(&results.cells, |c| c.run_overhead_s) {
                by_file.entry(file).or_insert((median, name.clone()));
            }
            let profiled = |c: &CellRecord| c.profile.as_ref().and_then(|p| p.run_overhead_s);
            for (file, median) in medians(&results.cells, profiled) {
                profile_by_file.entry(file).or_insert(median);
            }
        }
        Measured {
            by_file,
            profile_by_file,
            noise,
            pair_seconds,
        }
    }

    /// The sd of a pair's log ratio by `<hot path>/<part>` (for `parts::plan_parts`).
    pub fn noise(&self) -> &BTreeMap<String, f64> {
        &self.noise
    }

    /// The seconds one pair of each part took, by `<hot path>/<part>`.
    pub fn pair_seconds(&self) -> &BTreeMap<String, f64> {
        &self.pair_seconds
    }

    /// What a profiled run of `file` took beyond its warm-up, window and per-thread part,
    /// where a results file measured it.
    pub fn profile_overhead(&self, file: &str) -> Option<Duration> {
        self.profile_by_file.get(file).copied()
    }

    /// The measured overhead of one child of `file`, beyond its per-thread part, and the
    /// results file that measured it.
    pub fn overhead(&self, file: &str) -> Option<(Duration, &str)> {
        self.by_file.get(file).map(|(d, from)| (*d, from.as_str()))
    }
}

/// Per scenario file of `cells`, the median of `overhead` (seconds) less its per-thread
/// part, over the cells that have one.
fn medians(
    cells: &[CellRecord],
    overhead: impl Fn(&CellRecord) -> Option<f64>,
) -> BTreeMap<String, Duration> {
    let mut samples: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for cell in cells.iter().filter(|c| !c.scenario_file.is_empty()) {
        if let Some(o) = overhead(cell) {
            let base = o - PER_THREAD.as_secs_f64() * cell.threads as f64;
            samples
                .entry(cell.scenario_file.clone())
                .or_default()
                .push(base.max(0.0));
        }
    }
    samples
        .into_iter()
        .map(|(file, v)| (file, Duration::from_secs_f64(harness::stats::median(&v))))
        .collect()
}

/// The `<run-id>.json` files in `dir` (before the run id `before`), newest first: run ids
/// are timestamps, so by name.
fn newest_results(dir: &Path, before: Option<&str>) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .filter(|p| {
            let stem = p.file_stem().map(|s| s.to_string_lossy().into_owned());
            before.is_none_or(|b| stem.is_some_and(|s| s.as_str() < b))
        })
        .collect();
    paths.sort();
    paths.reverse();
    paths
}

/// The sd of a comparison's pairs' log ratios, robustly (1.4826 x their median absolute
/// deviation, so one slow minute does not inflate it); `None` before a first look.
fn pair_noise(m: &verdict::decide::Measured) -> Option<f64> {
    let c = m.claim.comparison.as_ref()?;
    if m.pairs.len() < m.looks.first() {
        return None;
    }
    let logs: Vec<f64> = m.pairs.iter().map(|p| c.ratio_of(p).ln()).collect();
    let centre = harness::stats::median(&logs);
    let deviations: Vec<f64> = logs.iter().map(|l| (l - centre).abs()).collect();
    let sd = 1.4826 * harness::stats::median(&deviations);
    sd.is_finite().then_some(sd)
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness::schema::{CellKey, CellStatus};

    fn cell(file: &str, threads: usize, overhead: Option<f64>) -> CellRecord {
        let key = CellKey {
            hot_path: "lease".into(),
            variant: "memory".into(),
            params: Default::default(),
            threads,
            cores: 2,
        };
        let mut r = CellRecord::failed(&key, "0-1", "x");
        r.status = CellStatus::Ok;
        r.scenario_file = file.into();
        r.run_overhead_s = overhead;
        r
    }

    /// The small run's results file, whose cells a test replaces.
    fn fixture_results() -> ResultsFile {
        let fixture =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/small-run/reports/data");
        let old = newest_results(&fixture, None);
        let old = old.first().expect("the fixture has a results file");
        ResultsFile::from_json(&std::fs::read_to_string(old).unwrap()).unwrap()
    }

    #[test]
    fn the_newest_results_file_gives_each_files_median_overhead() {
        let dir = tempfile::tempdir().unwrap();
        let mut results = fixture_results();
        let write = |name: &str, results: &ResultsFile| {
            let text = serde_json::to_string(results).unwrap();
            std::fs::write(dir.path().join(name), text).unwrap();
        };
        results.cells = vec![cell("sqlmix", 1, Some(0.5)), cell("lease", 1, Some(0.9))];
        write("20200101T000000Z.json", &results);
        results.cells = vec![
            cell("lease", 1, Some(0.1)),
            cell("lease", 1, Some(0.3)),
            cell("lease", 1, Some(0.2)),
            cell("pool", 1000, Some(0.1 + 1000.0 * PER_THREAD.as_secs_f64())),
            cell("sqlmix", 1, None),
        ];
        write("20300101T000000Z.json", &results);
        std::fs::write(dir.path().join("20400101T000000Z.json"), "{}").unwrap();
        let m = Measured::newest(dir.path(), None);
        // Beyond the per-thread part: 0.2 s less one thread's share, 0.1 s.
        let us = |m: &Measured, file: &str| {
            m.overhead(file)
                .map(|(d, from)| ((d.as_secs_f64() * 1e6).round() as u64, from.to_owned()))
        };
        let newest = "20300101T000000Z.json".to_owned();
        let oldest = "20200101T000000Z.json".to_owned();
        let one_thread = PER_THREAD.as_micros() as u64;
        assert_eq!(
            us(&m, "lease"),
            Some((200_000 - one_thread, newest.clone()))
        );
        assert_eq!(us(&m, "pool"), Some((100_000, newest)));
        assert_eq!(
            us(&m, "sqlmix"),
            Some((500_000 - one_thread, oldest.clone())),
            "the newest file that measured it"
        );
        assert_eq!(us(&m, "noop"), None);
        let before = Measured::newest(dir.path(), Some("20300101T000000Z"));
        assert_eq!(us(&before, "lease"), Some((900_000 - one_thread, oldest)));
        assert!(Measured::newest(&dir.path().join("none"), None)
            .overhead("lease")
            .is_none());
    }

    #[test]
    fn a_profiled_runs_measured_time_prices_the_next_runs_profiles() {
        let dir = tempfile::tempdir().unwrap();
        let mut results = fixture_results();
        let profiled = |file: &str, seconds: Option<f64>| {
            let mut c = cell(file, 1, Some(0.1));
            c.profile = Some(harness::schema::ProfileRef {
                svg: String::new(),
                folded: String::new(),
                samples: 1,
                sampler: "perf".into(),
                rate_hz: 2000,
                off_cpu: None,
                repeats: Vec::new(),
                server_off_cpu: None,
                server_off_cpu_absent: None,
                run_overhead_s: seconds,
            });
            c
        };
        results.cells = vec![
            profiled("lease", Some(1.0)),
            profiled("lease", Some(3.0)),
            profiled("lease", Some(2.0)),
            profiled("pool", None),
        ];
        std::fs::write(
            dir.path().join("20300101T000000Z.json"),
            serde_json::to_string(&results).unwrap(),
        )
        .unwrap();
        let m = Measured::newest(dir.path(), None);
        assert_eq!(
            m.profile_overhead("lease"),
            Some(Duration::from_secs(2) - PER_THREAD),
            "the median, beyond one thread's part"
        );
        assert_eq!(
            m.profile_overhead("pool"),
            None,
            "a file from before the figure"
        );
        assert_eq!(
            m.overhead("lease").map(|o| o.0),
            Some(Duration::from_millis(100) - PER_THREAD)
        );
    }
}

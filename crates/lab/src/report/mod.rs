//! Reports: from results files to `reports/<id>/index.html`, `summary.md`, SVG charts and
//! differential flamegraphs, and `reports/index.html` pointing at the latest.
//!
//! Rendering reads only results files and the profiles they name, so a report can be
//! rebuilt later (`lab report`) or from several machines at once. Everything is checked
//! before anything is written, and the report folder is built beside its final place and
//! renamed into it, so a failure leaves the previous report as it was.
//!
//! One concern per module: `load` reads results files, `group` groups cells, `sweep` finds
//! parameter sweeps, `figures` decides the charts, `diff` the flamegraph differentials,
//! `advice` analyses and `findings` asks each hot path's question (returning data), `findings_page` lays the findings out, `charts` and `time_chart` draw,
//! `html` and `summary` lay pages out, and `output` is the one place chart files are
//! written. This module ties them together and writes the pages.

mod advice;
mod cell;
mod charts;
mod diff;
mod figures;
pub mod findings;
mod findings_page;
mod group;
mod load;
pub mod locks;
mod markup;
mod output;
mod page;
mod sections;
mod summary;
mod sweep;
mod time_chart;

use std::path::{Path, PathBuf};

use anyhow::bail;
use harness::schema::ResultsFile;

use crate::fs::write_atomically;
pub use group::Group;
pub use load::{latest_results, load, Source};
use output::Outputs;
pub use sweep::Sweep;

/// One source with its groups.
pub struct Analysed<'a> {
    /// The results file.
    pub source: &'a Source,
    /// Its groups.
    pub groups: Vec<Group<'a>>,
    /// Parameter sweeps found among the groups.
    pub sweeps: Vec<Sweep>,
    /// What the run answered, per hot path, in catalog order.
    pub findings: Vec<harness::findings::Finding>,
}

impl Analysed<'_> {
    /// The hot paths of this source in report order: the catalog's, then any other as
    /// first seen.
    pub fn hot_paths(&self) -> Vec<String> {
        let mut seen: Vec<String> = Vec::new();
        for g in &self.groups {
            if !seen.contains(&g.hot_path) {
                seen.push(g.hot_path.clone());
            }
        }
        let names: Vec<&str> = crate::catalog::hot_paths()
            .iter()
            .map(|h| h.name())
            .collect();
        let rank = |h: &String| names.iter().position(|o| o == h).unwrap_or(names.len());
        // A stable sort keeps unknown hot paths in the order first seen.
        seen.sort_by_key(rank);
        seen
    }
}

/// Renders a report of `sources` under `root/reports` and points `reports/index.html` at
/// it. Returns the report's `index.html`.
pub fn render(root: &Path, sources: &[Source]) -> anyhow::Result<PathBuf> {
    if sources.is_empty() {
        bail!("no results to report");
    }
    let mut outputs = Outputs::default();
    diff::restore_flamegraphs(root, sources, &mut outputs)?;
    let id = if sources.len() == 1 {
        sources[0].results.run_id.clone()
    } else {
        let ids: Vec<&str> = sources.iter().map(|s| s.results.run_id.as_str()).collect();
        format!("multi-{}", ids.join("-"))
    };
    let reports = root.join("reports");
    std::fs::create_dir_all(&reports)?;
    let staging = reports.join(format!(".{id}.tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir_all(staging.join("charts"))?;
    let result = (|| {
        let final_dir = format!("reports/{id}");
        let analysed = figures::analyse(
            root,
            sources,
            &staging.join("charts"),
            &final_dir,
            &mut outputs,
        );
        outputs.write_all()?;
        std::fs::write(
            staging.join("index.html"),
            page::page(&analysed, "../../", None),
        )?;
        std::fs::write(staging.join("summary.md"), summary::markdown(&analysed))?;
        // What scripts read: one object per finding, the same ones the pages lay out.
        let found: Vec<&harness::findings::Finding> =
            analysed.iter().flat_map(|a| a.findings.iter()).collect();
        std::fs::write(
            staging.join("findings.json"),
            serde_json::to_string_pretty(&found)?,
        )?;
        let results: Vec<ResultsFile> = sources.iter().map(|s| s.results.clone()).collect();
        std::fs::write(staging.join("cells.csv"), crate::export::csv(&results)?)?;
        let target = reports.join(&id);
        let _ = std::fs::remove_dir_all(&target);
        std::fs::rename(&staging, &target)?;
        let runs = list_reports(&reports);
        write_atomically(
            &reports.join("index.html"),
            page::page(&analysed, "../", Some(&runs)).as_bytes(),
        )?;
        Ok(target.join("index.html"))
    })();
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&staging);
    }
    result
}

/// Report folders under `reports/`, newest first.
fn list_reports(reports: &Path) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(reports)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter(|e| e.path().join("index.html").is_file())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| !n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default();
    ids.sort();
    ids.reverse();
    ids
}

#[cfg(test)]
mod tests {
    use super::group::slugify;

    #[test]
    fn slugs_are_file_safe() {
        assert_eq!(slugify("m0-lookup-0"), "m0-lookup-0");
        assert_eq!(slugify("Arc Swap/Snapshot!"), "arc-swap-snapshot");
    }
}

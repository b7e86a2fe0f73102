//! Reports: from results files to `reports/<id>/index.html`, `summary.md`, SVG charts and
//! differential flamegraphs, and `reports/index.html` pointing at the latest.
//!
//! Rendering reads only results files and the profiles they name, so a report can be
//! rebuilt later (`lab report`) or from several machines at once. Everything is checked
//! before anything is written, and the report folder is built beside its final place and
//! renamed into it, so a failure leaves the previous report as it was.
//!
//! Analysis apart from rendering. Analysis returns plain data and writes nothing: `load`
//! reads results files, `group` groups cells, `figures` is the analysis (the charts each
//! group gets, as `drawing` data), `sweep` finds parameter sweeps, `diff` the flamegraph
//! differentials, `advice` the thread advice and USL fits, `findings` each hot path's
//! answer. Rendering is a list of writers over that data (`WRITERS`): the charts
//! (`output`, drawing with `charts` and the flamegraph module), `index.html` (`page`),
//! `summary.md` (`summary`), `findings.json` and `cells.csv`. The pages are built once as
//! blocks (`markup`) from shared sections (`sections`, `findings_page`, `locks`,
//! `advice`, `time_chart`, `cell`) and laid out as HTML or Markdown.

mod advice;
mod cell;
mod charts;
mod diff;
mod drawing;
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
mod server_locks;
mod summary;
mod sweep;
mod time_chart;

use std::path::{Path, PathBuf};

use crate::results::ResultsFile;
use anyhow::bail;

use crate::fs::write_atomically;
pub use group::Group;
pub use load::{latest_results, load, Source};
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
    pub findings: Vec<verdict::findings::Finding>,
    /// The charts and flamegraphs its pages show, to be drawn.
    drawings: Vec<drawing::Placed>,
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
    let id = if sources.len() == 1 {
        sources[0].results.run_id.clone()
    } else {
        let ids: Vec<&str> = sources.iter().map(|s| s.results.run_id.as_str()).collect();
        format!("multi-{}", ids.join("-"))
    };
    let analysed = figures::analyse(root, sources, &format!("reports/{id}"));
    let reports = root.join("reports");
    std::fs::create_dir_all(&reports)?;
    let staging = reports.join(format!(".{id}.tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir_all(staging.join("charts"))?;
    let result = (|| {
        let target = Target {
            root,
            staging: &staging,
            analysed: &analysed,
        };
        for (_, write) in WRITERS {
            write(&target)?;
        }
        let report = reports.join(&id);
        let _ = std::fs::remove_dir_all(&report);
        std::fs::rename(&staging, &report)?;
        let runs = list_reports(&reports);
        write_atomically(
            &reports.join("index.html"),
            page::page(&analysed, "../", Some(&runs)).as_bytes(),
        )?;
        Ok(report.join("index.html"))
    })();
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&staging);
    }
    result
}

/// What a writer writes from: the analysis, into the staging folder of the report.
struct Target<'t, 'a> {
    root: &'t Path,
    staging: &'t Path,
    analysed: &'t [Analysed<'a>],
}

/// A report's output: writes its files from the analysis.
type Writer = fn(&Target<'_, '_>) -> anyhow::Result<()>;

/// The report's writers, in the order they run: the charts and flamegraphs first, so a
/// drawing that fails leaves no page pointing at it.
const WRITERS: [(&str, Writer); 5] = [
    ("charts", |t| {
        let drawings: Vec<&drawing::Placed> = t.analysed.iter().flat_map(|a| &a.drawings).collect();
        output::write_all(&drawings, t.root, &t.staging.join("charts"))
    }),
    ("index.html", |t| {
        let html = page::page(t.analysed, "../../", None);
        Ok(std::fs::write(t.staging.join("index.html"), html)?)
    }),
    ("summary.md", |t| {
        let md = summary::markdown(t.analysed);
        Ok(std::fs::write(t.staging.join("summary.md"), md)?)
    }),
    // What scripts read: one object per finding, the same ones the pages lay out.
    ("findings.json", |t| {
        let found: Vec<&verdict::findings::Finding> =
            t.analysed.iter().flat_map(|a| a.findings.iter()).collect();
        let json = serde_json::to_string_pretty(&found)?;
        Ok(std::fs::write(t.staging.join("findings.json"), json)?)
    }),
    ("cells.csv", |t| {
        let results: Vec<ResultsFile> = t
            .analysed
            .iter()
            .map(|a| a.source.results.clone())
            .collect();
        Ok(std::fs::write(
            t.staging.join("cells.csv"),
            crate::export::csv(&results)?,
        )?)
    }),
];

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

//! Grouping one source's cells: cells sharing scenario file, hot path and parameters form
//! a group, and "which parameters vary" among a file's groups is computed here, once, for
//! labels and sweeps alike. Not where charts are drawn or files written.

use std::collections::BTreeMap;

use harness::CellRecord;

use super::{advice, Source};

/// A chart file of a group, for one core count.
pub struct ChartRef {
    /// Core count.
    pub cores: usize,
    /// Throughput against threads (path relative to the project root).
    pub ops: String,
    /// Per-thread throughput against threads.
    pub per_thread: String,
    /// The hot path's own figures against threads, as (label, path).
    pub extras: Vec<(String, String)>,
}

/// A differential flamegraph of one variant.
pub struct DiffRef {
    /// Variant.
    pub variant: String,
    /// Core count.
    pub cores: usize,
    /// Threads of the first profile (1).
    pub from_threads: usize,
    /// Threads of the second profile (the largest).
    pub to_threads: usize,
    /// The on-CPU SVG, relative to the project root.
    pub svg: String,
    /// On-CPU samples of the two profiles.
    pub samples: (u64, u64),
    /// The off-CPU (wait) SVG and the wait stacks of the two profiles, when both have one.
    pub off_cpu: Option<(String, (u64, u64))>,
}

/// Cells of one source that share scenario file, scenario and parameters, with what was
/// derived.
pub struct Group<'a> {
    /// Scenario file the cells came from (may be empty).
    pub file: String,
    /// Hot path.
    pub hot_path: String,
    /// The parameters that set this group apart, as `name=value` (empty if only one).
    pub label: String,
    /// The parameters whose values differ among the groups of this scenario file
    /// (computed once here; labels and sweeps read it).
    pub varying: Vec<String>,
    /// All parameters.
    pub params: BTreeMap<String, serde_json::Value>,
    /// File-name-safe identifier.
    pub slug: String,
    /// Variants in the order first seen.
    pub variants: Vec<String>,
    /// Core counts, ascending.
    pub cores: Vec<usize>,
    /// Thread counts, ascending.
    pub threads: Vec<usize>,
    /// The cells.
    pub cells: Vec<&'a CellRecord>,
    /// Charts per core count.
    pub charts: Vec<ChartRef>,
    /// USL fits (in-core points only), one per variant.
    pub fits: Vec<advice::UslRow>,
    /// Thread advice from measured data, per variant and core count.
    pub thread_advice: Vec<advice::ThreadAdvice>,
    /// Differential flamegraphs.
    pub diffs: Vec<DiffRef>,
}

impl Group<'_> {
    /// The scenario file's name, or the hot path's when the cells came from `lab run`.
    pub fn title_name(&self) -> &str {
        if self.file.is_empty() {
            &self.hot_path
        } else {
            &self.file
        }
    }

    /// The cell of `variant` at `threads` and `cores`.
    pub fn cell(&self, variant: &str, threads: usize, cores: usize) -> Option<&CellRecord> {
        self.cells
            .iter()
            .find(|c| c.variant == variant && c.threads == threads && c.cores == cores)
            .copied()
    }
}

pub(super) fn sorted_unique(values: impl Iterator<Item = usize>) -> Vec<usize> {
    let mut v: Vec<usize> = values.collect();
    v.sort_unstable();
    v.dedup();
    v
}

pub(super) fn slugify(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect::<String>()
        .split('-')
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("-")
}

/// The groups of `source` (the `index`th of the report), in the order first seen.
pub(super) fn group_cells(source: &Source, index: usize) -> Vec<Group<'_>> {
    let mut groups: Vec<Group<'_>> = Vec::new();
    for cell in &source.results.cells {
        match groups.iter_mut().find(|g| {
            g.file == cell.scenario_file && g.hot_path == cell.hot_path && g.params == cell.params
        }) {
            Some(g) => g.cells.push(cell),
            None => groups.push(Group {
                file: cell.scenario_file.clone(),
                hot_path: cell.hot_path.clone(),
                label: String::new(),
                varying: Vec::new(),
                params: cell.params.clone(),
                slug: String::new(),
                variants: Vec::new(),
                cores: Vec::new(),
                threads: Vec::new(),
                cells: vec![cell],
                charts: Vec::new(),
                fits: Vec::new(),
                thread_advice: Vec::new(),
                diffs: Vec::new(),
            }),
        }
    }
    let snapshot: Vec<(String, BTreeMap<String, serde_json::Value>)> = groups
        .iter()
        .map(|g| (g.file.clone(), g.params.clone()))
        .collect();
    for (i, g) in groups.iter_mut().enumerate() {
        let siblings: Vec<_> = snapshot.iter().filter(|(f, _)| *f == g.file).collect();
        g.varying = g
            .params
            .iter()
            .filter(|(k, v)| siblings.iter().any(|(_, p)| p.get(*k) != Some(*v)))
            .map(|(k, _)| k.clone())
            .collect();
        g.label = g
            .varying
            .iter()
            .map(|k| format!("{k}={}", crate::words::value_text(&g.params[k])))
            .collect::<Vec<_>>()
            .join(" ");
        g.slug = slugify(&format!("m{index}-{}-{i}", g.title_name()));
        for c in &g.cells {
            if !g.variants.contains(&c.variant) {
                g.variants.push(c.variant.clone());
            }
        }
        g.cores = sorted_unique(g.cells.iter().map(|c| c.cores));
        g.threads = sorted_unique(g.cells.iter().map(|c| c.threads));
    }
    groups
}

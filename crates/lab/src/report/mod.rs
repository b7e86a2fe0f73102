//! Reports: from results files to `reports/<id>/index.html`, `summary.md`, SVG charts and
//! differential flamegraphs, and `reports/index.html` pointing at the latest.
//!
//! Rendering reads only results files and the profiles they name, so a report can be
//! rebuilt later (`lab report`) or from several machines at once. Everything is checked
//! before anything is written, and the report folder is built beside its final place and
//! renamed into it, so a failure leaves the previous report as it was.

mod advice;
mod charts;
pub mod findings;
mod html;
mod output;
mod summary;
mod time_chart;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use harness::schema::ResultsFile;
use harness::RunRecord;

use crate::fs::write_atomically;
use output::Outputs;

/// One results file and where it came from.
pub struct Source {
    /// The file as the user named it.
    pub path: PathBuf,
    /// Its contents.
    pub results: ResultsFile,
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
    pub scenario: String,
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
    pub cells: Vec<&'a RunRecord>,
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
            &self.scenario
        } else {
            &self.file
        }
    }

    /// The cell of `variant` at `threads` and `cores`.
    pub fn cell(&self, variant: &str, threads: usize, cores: usize) -> Option<&RunRecord> {
        self.cells
            .iter()
            .find(|c| c.variant == variant && c.threads == threads && c.cores == cores)
            .copied()
    }
}

/// Throughput against the values of one parameter that a scenario file sweeps.
pub struct Sweep {
    /// Scenario file.
    pub file: String,
    /// The hot path the file runs.
    pub hot_path: String,
    /// The swept parameter.
    pub param: String,
    /// Its values, in the file's order.
    pub values: Vec<String>,
    /// Threads of the cells charted.
    pub threads: usize,
    /// Cores of the cells charted.
    pub cores: usize,
    /// Per variant, ops/s at each value (`None`: failed or missing).
    pub rows: Vec<(String, Vec<Option<f64>>)>,
    /// The chart, relative to the project root.
    pub svg: String,
    /// The hot path's own figures against the parameter, as (label, path).
    pub extras: Vec<(String, String)>,
}

/// One source with its groups.
pub struct Analysed<'a> {
    /// The results file.
    pub source: &'a Source,
    /// Its groups.
    pub groups: Vec<Group<'a>>,
    /// Parameter sweeps found among the groups.
    pub sweeps: Vec<Sweep>,
    /// What the run answered, per hot path, in [`findings::ORDER`].
    pub findings: Vec<findings::Finding>,
    /// The pool fix's gain per batch size (`pool-seed-batch`), empty without those cells.
    pub batch_gains: Vec<findings::BatchGain>,
}

impl Analysed<'_> {
    /// The hot paths of this source in report order: [`findings::ORDER`] first, then any
    /// other (e.g. `noop`) as first seen.
    pub fn hot_paths(&self) -> Vec<String> {
        let mut seen: Vec<String> = Vec::new();
        for g in &self.groups {
            if !seen.contains(&g.scenario) {
                seen.push(g.scenario.clone());
            }
        }
        let rank = |h: &String| {
            findings::ORDER
                .iter()
                .position(|o| o == h)
                .unwrap_or(findings::ORDER.len())
        };
        // A stable sort keeps unknown hot paths in the order first seen.
        seen.sort_by_key(rank);
        seen
    }
}

/// The extra figures the hot path called `scenario` wants charted (none if unknown).
fn charted_extras(scenario: &str) -> &'static [(&'static str, &'static str)] {
    crate::catalog::hot_path(scenario).map_or(&[], |h| h.charted_extras())
}

/// Finds scenario files whose groups differ in exactly one parameter and charts
/// throughput against it, at the largest thread and core count every group has.
fn sweeps(
    groups: &[Group<'_>],
    chart_dir: &Path,
    final_dir: &str,
    index: usize,
    outputs: &mut Outputs,
) -> Vec<Sweep> {
    let mut out = Vec::new();
    let mut files: Vec<&str> = groups
        .iter()
        .map(|g| g.file.as_str())
        .filter(|f| !f.is_empty())
        .collect();
    files.dedup();
    for file in files {
        let members: Vec<&Group<'_>> = groups.iter().filter(|g| g.file == file).collect();
        if members.len() < 2 {
            continue;
        }
        let [param] = members[0].varying.as_slice() else {
            continue;
        };
        let common = |pick: &dyn Fn(&Group<'_>) -> Vec<usize>| {
            pick(members[0])
                .into_iter()
                .filter(|x| members.iter().all(|m| pick(m).contains(x)))
                .max()
        };
        let (Some(threads), Some(cores)) =
            (common(&|g| g.threads.clone()), common(&|g| g.cores.clone()))
        else {
            continue;
        };
        let values: Vec<String> = members
            .iter()
            .map(|m| {
                m.params
                    .get(param)
                    .map(crate::plan::value_text)
                    .unwrap_or_default()
            })
            .collect();
        let mut variants: Vec<String> = Vec::new();
        for m in &members {
            for v in &m.variants {
                if !variants.contains(v) {
                    variants.push(v.clone());
                }
            }
        }
        let rows: Vec<(String, Vec<Option<f64>>)> = variants
            .iter()
            .map(|v| {
                let ops = members
                    .iter()
                    .map(|m| {
                        m.cell(v, threads, cores)
                            .filter(|c| c.usable())
                            .map(|c| c.ops_per_sec)
                    })
                    .collect();
                (v.clone(), ops)
            })
            .collect();
        let series: Vec<charts::Series> = rows
            .iter()
            .map(|(v, ops)| charts::Series {
                name: v.clone(),
                points: ops
                    .iter()
                    .enumerate()
                    .filter_map(|(i, o)| o.map(|o| (i as f64, o)))
                    .collect(),
            })
            .collect();
        let title =
            format!("{file}: throughput against {param} ({threads} threads, {cores} cores)");
        let bars: Vec<charts::Bars> = rows
            .iter()
            .map(|(v, _)| {
                members
                    .iter()
                    .enumerate()
                    .filter_map(|(i, m)| {
                        let c = m.cell(v, threads, cores).filter(|c| c.usable())?;
                        let (lo, hi) = c.ops_ci();
                        Some((i as f64, lo, hi))
                    })
                    .collect()
            })
            .collect();
        let stem = format!(
            "{}-sweep-{}",
            slugify(&format!("m{index}-{file}")),
            slugify(param)
        );
        let name = format!("{stem}.svg");
        queue_sweep_chart(
            outputs,
            chart_dir.join(&name),
            title,
            param,
            &values,
            "ops/s",
            series,
            bars,
        );
        let scenario = members[0].scenario.clone();
        let cells_of = |v: &str| -> Vec<(f64, &RunRecord)> {
            members
                .iter()
                .enumerate()
                .filter_map(|(i, m)| {
                    Some((i as f64, m.cell(v, threads, cores).filter(|c| c.usable())?))
                })
                .collect()
        };
        let mut extras = Vec::new();
        for (key, label, series) in extra_series(&scenario, &variants, cells_of) {
            let title =
                format!("{file}: {label} against {param} ({threads} threads, {cores} cores)");
            let extra_name = format!("{stem}-{}.svg", slugify(key));
            queue_sweep_chart(
                outputs,
                chart_dir.join(&extra_name),
                title,
                param,
                &values,
                label,
                series,
                Vec::new(),
            );
            extras.push((label.to_owned(), format!("{final_dir}/charts/{extra_name}")));
        }
        out.push(Sweep {
            extras,
            hot_path: scenario,
            file: file.to_owned(),
            param: (*param).clone(),
            values,
            threads,
            cores,
            rows,
            svg: format!("{final_dir}/charts/{name}"),
        });
    }
    out
}

/// Queues a sweep chart (owned inputs, so it can be drawn on another thread).
#[allow(clippy::too_many_arguments)]
fn queue_sweep_chart(
    outputs: &mut Outputs,
    path: PathBuf,
    title: String,
    param: &str,
    values: &[String],
    y_label: &str,
    series: Vec<charts::Series>,
    bars: Vec<charts::Bars>,
) {
    let (param, values, y_label) = (param.to_owned(), values.to_vec(), y_label.to_owned());
    outputs.add(path, move || {
        charts::sweep_chart_with_bars(&title, &param, &values, &y_label, &series, &bars)
            .map(String::into_bytes)
            .map_err(anyhow::Error::msg)
    });
}

/// Queues a chart against threads.
fn queue_line_chart(
    outputs: &mut Outputs,
    path: PathBuf,
    labels: [String; 3],
    series: Vec<charts::Series>,
    bars: Vec<charts::Bars>,
    marker: Option<f64>,
) {
    outputs.add(path, move || {
        let [title, x, y] = labels;
        charts::line_chart_with_bars(&title, &x, &y, &series, &bars, marker)
            .map(String::into_bytes)
            .map_err(anyhow::Error::msg)
    });
}

/// The charted extras of `hot_path` that some cell carries: (key, label, one series per
/// variant). `cells_of(variant)` gives the usable cells to plot and their x. The one loop
/// over extras, for thread charts and sweep charts alike.
fn extra_series<'a>(
    hot_path: &str,
    variants: &[String],
    cells_of: impl Fn(&str) -> Vec<(f64, &'a RunRecord)>,
) -> Vec<(&'static str, &'static str, Vec<charts::Series>)> {
    charted_extras(hot_path)
        .iter()
        .filter_map(|&(key, label)| {
            let series: Vec<charts::Series> = variants
                .iter()
                .map(|v| charts::Series {
                    name: v.clone(),
                    points: cells_of(v)
                        .into_iter()
                        .filter_map(|(x, c)| Some((x, c.extra.get(key)?.as_f64()?)))
                        .collect(),
                })
                .collect();
            (!series.iter().all(|s| s.points.is_empty())).then_some((key, label, series))
        })
        .collect()
}

fn sorted_unique(values: impl Iterator<Item = usize>) -> Vec<usize> {
    let mut v: Vec<usize> = values.collect();
    v.sort_unstable();
    v.dedup();
    v
}

fn slugify(text: &str) -> String {
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

fn group_cells(source: &Source, index: usize) -> Vec<Group<'_>> {
    let mut groups: Vec<Group<'_>> = Vec::new();
    for cell in &source.results.cells {
        match groups.iter_mut().find(|g| {
            g.file == cell.scenario_file && g.scenario == cell.scenario && g.params == cell.params
        }) {
            Some(g) => g.cells.push(cell),
            None => groups.push(Group {
                file: cell.scenario_file.clone(),
                scenario: cell.scenario.clone(),
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
            .map(|k| format!("{k}={}", crate::plan::value_text(&g.params[k])))
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

/// Fits, charts and diffs for every group. Chart SVGs go to `chart_dir` (a staging
/// folder), named as they will be under `final_dir`; diff SVGs go to the profiles folder.
fn analyse<'a>(
    root: &Path,
    sources: &'a [Source],
    chart_dir: &Path,
    final_dir: &str,
    outputs: &mut Outputs,
) -> Vec<Analysed<'a>> {
    let mut out = Vec::new();
    for (index, source) in sources.iter().enumerate() {
        let mut groups = group_cells(source, index);
        for g in &mut groups {
            if g.threads.len() < 2 {
                // One thread count (a sweep's cell): no curve to draw or fit; the sweep
                // chart and the matrix table say it all.
                continue;
            }
            for &cores in &g.cores.clone() {
                let mut ops = Vec::new();
                let mut per_thread = Vec::new();
                let mut ops_bars: Vec<charts::Bars> = Vec::new();
                let mut per_thread_bars: Vec<charts::Bars> = Vec::new();
                for variant in &g.variants {
                    let usable: Vec<&RunRecord> = g
                        .threads
                        .iter()
                        .filter_map(|&t| g.cell(variant, t, cores))
                        .filter(|c| c.usable())
                        .collect();
                    ops.push(charts::Series {
                        name: variant.clone(),
                        points: usable
                            .iter()
                            .map(|c| (c.threads as f64, c.ops_per_sec))
                            .collect(),
                    });
                    per_thread.push(charts::Series {
                        name: variant.clone(),
                        points: usable
                            .iter()
                            .map(|c| (c.threads as f64, c.per_thread_ops_per_sec))
                            .collect(),
                    });
                    ops_bars.push(
                        usable
                            .iter()
                            .map(|c| {
                                let (lo, hi) = c.ops_ci();
                                (c.threads as f64, lo, hi)
                            })
                            .collect(),
                    );
                    per_thread_bars.push(
                        usable
                            .iter()
                            .map(|c| {
                                let (lo, hi) = c.ops_ci();
                                let t = c.threads.max(1) as f64;
                                (c.threads as f64, lo / t, hi / t)
                            })
                            .collect(),
                    );
                    if let Some(diff) = differential(root, source, g, variant, cores, outputs) {
                        g.diffs.push(diff);
                    }
                }
                let title = |what: &str| {
                    let mut t = format!("{}: {what}, {cores} core(s)", g.title_name());
                    if !g.label.is_empty() {
                        t.push_str(&format!(" ({})", g.label));
                    }
                    t
                };
                let marker = Some(cores as f64);
                let ops_name = format!("{}-c{cores}-ops.svg", g.slug);
                let per_name = format!("{}-c{cores}-per-thread.svg", g.slug);
                let labels =
                    |what: &str, y: &str| [title(what), "threads".to_owned(), y.to_owned()];
                queue_line_chart(
                    outputs,
                    chart_dir.join(&ops_name),
                    labels("throughput", "ops/s"),
                    ops,
                    ops_bars,
                    marker,
                );
                queue_line_chart(
                    outputs,
                    chart_dir.join(&per_name),
                    labels("per-thread throughput", "ops/s per thread"),
                    per_thread,
                    per_thread_bars,
                    marker,
                );
                let cells_of = |v: &str| -> Vec<(f64, &RunRecord)> {
                    g.threads
                        .iter()
                        .filter_map(|&t| g.cell(v, t, cores))
                        .filter(|c| c.usable())
                        .map(|c| (c.threads as f64, c))
                        .collect()
                };
                let mut extras = Vec::new();
                for (key, label, series) in extra_series(&g.scenario, &g.variants, cells_of) {
                    let name = format!("{}-c{cores}-{}.svg", g.slug, slugify(key));
                    queue_line_chart(
                        outputs,
                        chart_dir.join(&name),
                        labels(label, label),
                        series,
                        Vec::new(),
                        marker,
                    );
                    extras.push((label.to_owned(), format!("{final_dir}/charts/{name}")));
                }
                g.charts.push(ChartRef {
                    cores,
                    ops: format!("{final_dir}/charts/{ops_name}"),
                    per_thread: format!("{final_dir}/charts/{per_name}"),
                    extras,
                });
            }
            g.fits = advice::usl_rows(g, source.results.env.nproc);
            g.thread_advice = advice::thread_advice_all(g);
        }
        let sweeps = sweeps(&groups, chart_dir, final_dir, index, outputs);
        out.push(Analysed {
            source,
            groups,
            sweeps,
            findings: findings::findings(&source.results.cells),
            batch_gains: findings::batch_gains(&source.results.cells),
        });
    }
    out
}

/// The differential flamegraph between threads=1 and the most threads profiled, when
/// both profiles exist on disk.
fn differential(
    root: &Path,
    source: &Source,
    g: &Group<'_>,
    variant: &str,
    cores: usize,
    outputs: &mut Outputs,
) -> Option<DiffRef> {
    let profiled: Vec<&RunRecord> = g
        .threads
        .iter()
        .filter_map(|&t| g.cell(variant, t, cores))
        .filter(|c| {
            c.profile
                .as_ref()
                .is_some_and(|p| root.join(&p.folded).is_file())
        })
        .collect();
    let (Some(first), Some(last)) = (profiled.first(), profiled.last()) else {
        return None;
    };
    if first.threads != 1 || last.threads == 1 {
        return None;
    }
    let (a, b) = (
        first.profile.as_ref().expect("filtered"),
        last.profile.as_ref().expect("filtered"),
    );
    let stem = format!(
        "profiles/{}/diff/{}-{}-c{cores}-t1-vs-t{}",
        source.results.run_id,
        g.slug,
        slugify(variant),
        last.threads
    );
    let title = format!(
        "{} / {variant}, {cores} core(s): threads=1 vs threads={}",
        g.title_name(),
        last.threads
    );
    let rel = format!("{stem}.svg");
    let samples = (a.samples, b.samples);
    let queue = |outputs: &mut Outputs,
                 rel: &str,
                 x: &str,
                 y: &str,
                 what: &str,
                 counts,
                 unit: &'static str| {
        let (x, y, title) = (root.join(x), root.join(y), format!("{title}, {what}"));
        outputs.add(root.join(rel), move || {
            crate::profile::render_differential(&x, &y, &title, counts, unit)
                .map_err(anyhow::Error::msg)
        });
    };
    queue(
        outputs, &rel, &a.folded, &b.folded, "on-CPU", samples, "samples",
    );
    let off_cpu = match (&a.off_cpu, &b.off_cpu) {
        (Some(x), Some(y))
            if root.join(&x.folded).is_file()
                && root.join(&y.folded).is_file()
                && x.measured_seconds.is_some() =>
        {
            let off_rel = format!("{stem}.offcpu.svg");
            let counts = (x.samples, y.samples);
            queue(
                outputs,
                &off_rel,
                &x.folded,
                &y.folded,
                "off-CPU",
                counts,
                "wait stacks",
            );
            Some((off_rel, counts))
        }
        _ => None,
    };
    Some(DiffRef {
        variant: variant.to_owned(),
        cores,
        from_threads: 1,
        to_threads: last.threads,
        svg: rel,
        samples,
        off_cpu,
    })
}

/// Redraws a cell flamegraph whose SVG is missing but whose folded stacks are there
/// (folded stacks are the source of truth; SVGs can be deleted to save space).
fn restore_flamegraphs(
    root: &Path,
    sources: &[Source],
    outputs: &mut Outputs,
) -> anyhow::Result<()> {
    for cell in sources.iter().flat_map(|s| &s.results.cells) {
        let Some(p) = &cell.profile else { continue };
        let (svg, folded) = (root.join(&p.svg), root.join(&p.folded));
        if svg.is_file() || !folded.is_file() {
            continue;
        }
        let lines: Vec<String> = std::fs::read_to_string(&folded)?
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(str::to_owned)
            .collect();
        let title = format!(
            "{} / {}  threads={} cores={}",
            cell.scenario, cell.variant, cell.threads, cell.cores
        );
        let subtitle = crate::profile::cpu_subtitle(
            p.samples,
            &format!(
                "{} at {} Hz (redrawn from the folded stacks)",
                p.sampler, p.rate_hz
            ),
        );
        outputs.add(svg, move || {
            crate::profile::render_flamegraph(&lines, &title, &subtitle, "samples")
                .map_err(anyhow::Error::msg)
        });
    }
    Ok(())
}

/// Renders a report of `sources` under `root/reports` and points `reports/index.html` at
/// it. Returns the report's `index.html`.
pub fn render(root: &Path, sources: &[Source]) -> anyhow::Result<PathBuf> {
    if sources.is_empty() {
        bail!("no results to report");
    }
    let mut outputs = Outputs::default();
    restore_flamegraphs(root, sources, &mut outputs)?;
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
        let analysed = analyse(
            root,
            sources,
            &staging.join("charts"),
            &final_dir,
            &mut outputs,
        );
        outputs.write_all()?;
        std::fs::write(
            staging.join("index.html"),
            html::page(&analysed, "../../", None),
        )?;
        std::fs::write(staging.join("summary.md"), summary::markdown(&analysed))?;
        let results: Vec<ResultsFile> = sources.iter().map(|s| s.results.clone()).collect();
        std::fs::write(staging.join("cells.csv"), crate::export::csv(&results)?)?;
        let target = reports.join(&id);
        let _ = std::fs::remove_dir_all(&target);
        std::fs::rename(&staging, &target)?;
        let runs = list_reports(&reports);
        write_atomically(
            &reports.join("index.html"),
            html::page(&analysed, "../", Some(&runs)).as_bytes(),
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
    use super::*;

    #[test]
    fn slugs_are_file_safe() {
        assert_eq!(slugify("m0-lookup-0"), "m0-lookup-0");
        assert_eq!(slugify("Arc Swap/Snapshot!"), "arc-swap-snapshot");
    }
}

//! Which charts each group gets (throughput, per-thread throughput and the hot path's
//! extras against threads, per core count), its USL fits and thread advice, and its
//! differentials: analysis that returns data and queues drawings on [`Outputs`].

use std::path::{Path, PathBuf};

use harness::RunRecord;

use super::group::{self, slugify, ChartRef};
use super::output::Outputs;
use super::{advice, charts, diff, findings, sweep, Analysed, Source};

/// The extra figures the hot path called `scenario` wants charted (none if unknown).
fn charted_extras(scenario: &str) -> &'static [(&'static str, &'static str)] {
    crate::catalog::hot_path(scenario).map_or(&[], |h| h.charted_extras())
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
pub(super) fn extra_series<'a>(
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

/// Fits, charts and diffs for every group. Chart SVGs go to `chart_dir` (a staging
/// folder), named as they will be under `final_dir`; diff SVGs go to the profiles folder.
pub fn analyse<'a>(
    root: &Path,
    sources: &'a [Source],
    chart_dir: &Path,
    final_dir: &str,
    outputs: &mut Outputs,
) -> Vec<Analysed<'a>> {
    let mut out = Vec::new();
    for (index, source) in sources.iter().enumerate() {
        let mut groups = group::group_cells(source, index);
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
                    let series = |figure: fn(&RunRecord) -> f64| charts::Series {
                        name: variant.clone(),
                        points: usable
                            .iter()
                            .map(|c| (c.threads as f64, figure(c)))
                            .collect(),
                    };
                    ops.push(series(|c| c.ops_per_sec));
                    per_thread.push(series(|c| c.per_thread_ops_per_sec));
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
                    if let Some(diff) = diff::differential(root, source, g, variant, cores, outputs)
                    {
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
                for (key, label, series) in extra_series(&g.hot_path, &g.variants, cells_of) {
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
                // The measured throughput beside each variant's lock bound
                // min(N / (D + S), K / S), where a variant has one.
                let dashed: Vec<charts::Series> = g
                    .variants
                    .iter()
                    .map(|v| charts::Series {
                        name: format!("{v} lock bound"),
                        points: super::locks::bound_points(g, v, cores),
                    })
                    .collect();
                if dashed.iter().any(|s| !s.points.is_empty()) {
                    let name = format!("{}-c{cores}-lock-bounds.svg", g.slug);
                    let measured: Vec<charts::Series> = g
                        .variants
                        .iter()
                        .map(|v| charts::Series {
                            name: v.clone(),
                            points: cells_of(v)
                                .iter()
                                .map(|(x, c)| (*x, c.ops_per_sec))
                                .collect(),
                        })
                        .collect();
                    let title = title("throughput and lock bounds");
                    outputs.add(chart_dir.join(&name), move || {
                        charts::line_chart_with_dashed(
                            &title,
                            ("threads", "ops/s"),
                            &measured,
                            &[],
                            &dashed,
                            marker,
                        )
                        .map(String::into_bytes)
                        .map_err(anyhow::Error::msg)
                    });
                    let label = "throughput and lock bounds".to_owned();
                    extras.push((label, format!("{final_dir}/charts/{name}")));
                }
                g.charts.push(ChartRef {
                    cores,
                    ops: format!("{final_dir}/charts/{ops_name}"),
                    per_thread: format!("{final_dir}/charts/{per_name}"),
                    extras,
                });
            }
            g.fits = advice::usl_rows(g, source.results.env.nproc);
            // Client counts and fixed points are not a setting a reader chooses.
            let axis = findings::axis_of(&source.results, &g.file);
            if axis.is_none_or(|a| a == "threads") {
                g.thread_advice = advice::thread_advice_all(g);
            }
        }
        let sweeps = sweep::sweeps(&groups, chart_dir, final_dir, index, outputs);
        let mut found = findings::findings(&source.results, &groups);
        findings::attach_charts(&mut found, &groups, &sweeps);
        out.push(Analysed {
            source,
            groups,
            sweeps,
            findings: found,
        });
    }
    out
}

//! The report's analysis: per source its groups, and per group the charts it gets
//! (throughput, per-thread throughput, the hot path's extras and lock bounds against
//! threads, per core count), its USL fits and thread advice and its differentials; then
//! the sweeps and the findings. Returns plain data, the drawings included
//! ([`Placed`]), and writes nothing.

use std::path::Path;

use harness::CellRecord;

use super::charts::{Bars, Series};
use super::drawing::{extra_series, Drawing, Place, Placed};
use super::group::{self, slugify, ChartRef, Group};
use super::{advice, diff, findings, sweep, Analysed, Source};

/// Everything the report shows of `sources`. Charts are named as they will be linked,
/// under `report_dir` (`reports/<id>`); `root` is where the profiles are read from.
pub fn analyse<'a>(root: &Path, sources: &'a [Source], report_dir: &str) -> Vec<Analysed<'a>> {
    sources
        .iter()
        .enumerate()
        .map(|(index, source)| {
            let mut drawings = diff::restore_flamegraphs(root, source);
            let mut groups = group::group_cells(source, index);
            for g in &mut groups {
                analyse_group(root, source, g, report_dir, &mut drawings);
            }
            let sweeps = sweep::sweeps(&groups, report_dir, index, &mut drawings);
            let mut found = findings::findings(&source.results, &groups);
            findings::attach_charts(&mut found, &groups, &sweeps);
            Analysed {
                source,
                groups,
                sweeps,
                findings: found,
                drawings,
            }
        })
        .collect()
}

/// A group's charts and diffs per core count, its fits and its thread advice.
fn analyse_group(
    root: &Path,
    source: &Source,
    g: &mut Group<'_>,
    report_dir: &str,
    drawings: &mut Vec<Placed>,
) {
    if g.threads.len() < 2 {
        // One thread count (a sweep's cell): no curve to draw or fit; the sweep chart
        // and the matrix table say it all.
        return;
    }
    for cores in g.cores.clone() {
        for variant in g.variants.clone() {
            if let Some((d, planned)) = diff::differential(root, source, g, &variant, cores) {
                g.diffs.push(d);
                drawings.extend(planned);
            }
        }
        let chart = thread_charts(g, cores, report_dir, drawings);
        g.charts.push(chart);
    }
    g.fits = advice::usl_rows(g, source.results.env.nproc);
    // Client counts and fixed points are not a setting a reader chooses.
    let axis = findings::axis_of(&source.results, &g.file);
    if axis.is_none_or(|a| a == "threads") {
        g.thread_advice = advice::thread_advice_all(g);
    }
}

/// The usable cells of `variant` at `cores`, by threads, with their x.
fn cells_at<'g>(g: &'g Group<'_>, variant: &str, cores: usize) -> Vec<(f64, &'g CellRecord)> {
    g.threads
        .iter()
        .filter_map(|&t| g.cell(variant, t, cores))
        .filter(|c| c.usable())
        .map(|c| (c.threads as f64, c))
        .collect()
}

/// One series per variant of a figure of the cells, with its error bars.
fn series_with_bars(
    g: &Group<'_>,
    cores: usize,
    figure: fn(&CellRecord) -> (f64, f64, f64),
) -> (Vec<Series>, Vec<Bars>) {
    g.variants
        .iter()
        .map(|v| {
            let cells = cells_at(g, v, cores);
            let points = cells.iter().map(|(x, c)| (*x, figure(c).0)).collect();
            let bars = cells
                .iter()
                .map(|(x, c)| {
                    let (_, lo, hi) = figure(c);
                    (*x, lo, hi)
                })
                .collect();
            (
                Series {
                    name: v.clone(),
                    points,
                },
                bars,
            )
        })
        .unzip()
}

/// The charts of `g` at `cores`: planned on `drawings`, referenced in the returned
/// [`ChartRef`].
fn thread_charts(
    g: &Group<'_>,
    cores: usize,
    report_dir: &str,
    drawings: &mut Vec<Placed>,
) -> ChartRef {
    let title = |what: &str| {
        let mut t = format!("{}: {what}, {cores} core(s)", g.title_name());
        if !g.label.is_empty() {
            t.push_str(&format!(" ({})", g.label));
        }
        t
    };
    let marker = Some(cores as f64);
    let mut plan = |name: String, labels: [String; 3], series, bars, dashed| {
        drawings.push(Placed {
            place: Place::Chart(name.clone()),
            drawing: Drawing::Line {
                labels,
                series,
                bars,
                dashed,
                marker,
            },
        });
        format!("{report_dir}/charts/{name}")
    };
    let labels = |what: &str, y: &str| [title(what), "threads".to_owned(), y.to_owned()];
    let (ops, ops_bars) = series_with_bars(g, cores, |c| {
        let (lo, hi) = c.ops_ci();
        (c.ops_per_sec, lo, hi)
    });
    let (per, per_bars) = series_with_bars(g, cores, |c| {
        let (lo, hi) = c.ops_ci();
        let t = c.threads.max(1) as f64;
        (c.per_thread_ops_per_sec, lo / t, hi / t)
    });
    let ops_name = format!("{}-c{cores}-ops.svg", g.slug);
    let per_name = format!("{}-c{cores}-per-thread.svg", g.slug);
    let ops_path = plan(
        ops_name,
        labels("throughput", "ops/s"),
        ops,
        ops_bars,
        vec![],
    );
    let per_path = plan(
        per_name,
        labels("per-thread throughput", "ops/s per thread"),
        per,
        per_bars,
        vec![],
    );
    let mut extras = Vec::new();
    let cells_of = |v: &str| cells_at(g, v, cores);
    for (key, label, series) in extra_series(&g.hot_path, &g.variants, cells_of) {
        let name = format!("{}-c{cores}-{}.svg", g.slug, slugify(key));
        let path = plan(name, labels(label, label), series, vec![], vec![]);
        extras.push((label.to_owned(), path));
    }
    if let Some((measured, dashed)) = lock_bound_series(g, cores) {
        let what = "throughput and lock bounds";
        let name = format!("{}-c{cores}-lock-bounds.svg", g.slug);
        let path = plan(name, labels(what, "ops/s"), measured, vec![], dashed);
        extras.push((what.to_owned(), path));
    }
    ChartRef {
        cores,
        ops: ops_path,
        per_thread: per_path,
        extras,
    }
}

/// The measured throughput beside each variant's lock bound min(N / (D + S), K / S), as
/// (measured, dashed bounds); `None` where no variant has a bound.
fn lock_bound_series(g: &Group<'_>, cores: usize) -> Option<(Vec<Series>, Vec<Series>)> {
    let dashed: Vec<Series> = g
        .variants
        .iter()
        .map(|v| Series {
            name: format!("{v} lock bound"),
            points: super::locks::bound_points(g, v, cores),
        })
        .collect();
    if dashed.iter().all(|s| s.points.is_empty()) {
        return None;
    }
    let measured = g
        .variants
        .iter()
        .map(|v| Series {
            name: v.clone(),
            points: cells_at(g, v, cores)
                .iter()
                .map(|(x, c)| (*x, c.ops_per_sec))
                .collect(),
        })
        .collect();
    Some((measured, dashed))
}

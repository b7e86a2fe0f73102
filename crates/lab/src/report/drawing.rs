//! What a report draws, as data: each chart and flamegraph is a [`Drawing`] (its series,
//! labels or folded-stack files) with the [`Place`] it goes to. Analysis returns them and
//! writes nothing; the charts writer (`output`) draws them in parallel and writes the
//! files. Also the one loop over a hot path's charted extras, for thread and sweep charts
//! alike.

use std::path::{Path, PathBuf};

use harness::CellRecord;

use super::charts::{self, Bars, Series};

/// One picture to draw.
pub enum Drawing {
    /// A figure against threads, with error bars and a line at the core count.
    Line {
        /// Title, x label, y label.
        labels: [String; 3],
        /// One series per variant.
        series: Vec<Series>,
        /// Error bars, `bars[i]` for `series[i]`.
        bars: Vec<Bars>,
        /// A dashed line per series (a bound), drawn in its colour; empty for none.
        dashed: Vec<Series>,
        /// The core count.
        marker: Option<f64>,
    },
    /// A figure against the values of a swept parameter.
    Sweep {
        /// Title, the parameter, y label.
        labels: [String; 3],
        /// The parameter's values, in the file's order.
        values: Vec<String>,
        /// One series per variant.
        series: Vec<Series>,
        /// Error bars, `bars[i]` for `series[i]`.
        bars: Vec<Bars>,
    },
    /// A differential flamegraph between two folded-stack files.
    Differential {
        /// Folded stacks of the first and second profile.
        folded: (PathBuf, PathBuf),
        /// Title.
        title: String,
        /// Their sample (or wait-stack) counts.
        counts: (u64, u64),
        /// What the counts count.
        unit: &'static str,
    },
    /// A cell flamegraph redrawn from its folded stacks.
    Flamegraph {
        /// The folded stacks.
        folded: PathBuf,
        /// Title and subtitle.
        title: (String, String),
    },
}

/// Where a drawing goes.
pub enum Place {
    /// A file of the report's `charts/` folder.
    Chart(String),
    /// A path relative to the project root (flamegraphs live beside their profiles).
    Root(String),
}

/// A drawing and its place.
pub struct Placed {
    /// Where it goes.
    pub place: Place,
    /// What it is.
    pub drawing: Drawing,
}

impl Drawing {
    /// The picture's bytes (SVG); `root` resolves the folded-stack files.
    pub fn draw(&self, root: &Path) -> anyhow::Result<Vec<u8>> {
        let svg = match self {
            Drawing::Line {
                labels: [title, x, y],
                series,
                bars,
                dashed,
                marker,
            } if dashed.is_empty() => {
                charts::line_chart_with_bars(title, x, y, series, bars, *marker)
                    .map(String::into_bytes)
            }
            Drawing::Line {
                labels: [title, x, y],
                series,
                bars,
                dashed,
                marker,
            } => charts::line_chart_with_dashed(title, (x, y), series, bars, dashed, *marker)
                .map(String::into_bytes),
            Drawing::Sweep {
                labels: [title, param, y],
                values,
                series,
                bars,
            } => charts::sweep_chart_with_bars(title, param, values, y, series, bars)
                .map(String::into_bytes),
            Drawing::Differential {
                folded: (a, b),
                title,
                counts,
                unit,
            } => crate::flame::render_differential(
                &root.join(a),
                &root.join(b),
                title,
                *counts,
                unit,
            ),
            Drawing::Flamegraph {
                folded,
                title: (title, subtitle),
            } => {
                let lines: Vec<String> = std::fs::read_to_string(root.join(folded))?
                    .lines()
                    .filter(|l| !l.trim().is_empty())
                    .map(str::to_owned)
                    .collect();
                crate::flame::render_flamegraph(&lines, title, subtitle, "samples")
            }
        };
        svg.map_err(anyhow::Error::msg)
    }
}

/// The extra figures the hot path called `hot_path` wants charted (none if unknown).
fn charted_extras(hot_path: &str) -> &'static [(&'static str, &'static str)] {
    crate::catalog::hot_path(hot_path).map_or(&[], |h| h.charted_extras())
}

/// The charted extras of `hot_path` that some cell carries: (key, label, one series per
/// variant). `cells_of(variant)` gives the usable cells to plot and their x. The one loop
/// over extras, for thread charts and sweep charts alike.
pub fn extra_series<'a>(
    hot_path: &str,
    variants: &[String],
    cells_of: impl Fn(&str) -> Vec<(f64, &'a CellRecord)>,
) -> Vec<(&'static str, &'static str, Vec<Series>)> {
    charted_extras(hot_path)
        .iter()
        .filter_map(|&(key, label)| {
            let series: Vec<Series> = variants
                .iter()
                .map(|v| Series {
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

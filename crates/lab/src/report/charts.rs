//! SVG line charts drawn with plotters: a metric against threads, one line per series
//! (variant), with a dashed marker where threads = cores and, where given, a vertical
//! error bar at each point (the 95% interval of the median).
//!
//! Text is laid out with the DejaVu Sans font embedded in the binary (the `dejavu`
//! crate), so charts render the same on a machine without system fonts.

use std::sync::Once;

use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::FontStyle;

use crate::words::si;

/// One line of a chart.
pub struct Series {
    /// Legend label.
    pub name: String,
    /// (x, y) points in x order.
    pub points: Vec<(f64, f64)>,
}

fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Only fails for a malformed font, and this one is fixed at build time.
        let _ = plotters::style::register_font(
            "sans-serif",
            FontStyle::Normal,
            dejavu::sans::regular(),
        );
    });
}

/// Okabe and Ito's colour-blind-safe palette without its yellow (too light on white),
/// most contrasting first.
const PALETTE: [RGBColor; 7] = [
    RGBColor(0x00, 0x72, 0xB2),
    RGBColor(0xD5, 0x5E, 0x00),
    RGBColor(0x00, 0x9E, 0x73),
    RGBColor(0xCC, 0x79, 0xA7),
    RGBColor(0x00, 0x00, 0x00),
    RGBColor(0xE6, 0x9F, 0x00),
    RGBColor(0x56, 0xB4, 0xE9),
];

/// The colour of series `i`.
fn colour(i: usize) -> RGBAColor {
    PALETTE[i % PALETTE.len()].to_rgba()
}

/// Whether positive values spanning `ys` cover more than two decades, so a linear axis
/// would flatten the small ones onto zero.
fn wants_log(ys: impl Iterator<Item = f64>) -> bool {
    let (lo, hi) = ys
        .filter(|y| y.is_finite() && *y > 0.0)
        .fold((f64::INFINITY, 0.0_f64), |(lo, hi), y| {
            (lo.min(y), hi.max(y))
        });
    hi > 0.0 && hi / lo > 100.0
}

/// A log axis label: SI from 1 up, and below 1 enough decimals for one significant digit
/// (`si` would print 0.003 as `0.00`).
fn tick(v: f64) -> String {
    if v >= 1.0 || v <= 0.0 {
        si(v)
    } else {
        let decimals = (-v.log10().floor()).max(0.0) as usize;
        format!("{v:.decimals$}")
    }
}

/// Error bars of one series: (x, low, high) for each point that has an interval.
pub type Bars = Vec<(f64, f64, f64)>;

/// Draws `series` as an SVG document. `marker_x` draws a vertical line (the core count).
#[cfg(test)]
pub fn line_chart(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    marker_x: Option<f64>,
) -> Result<String, String> {
    line_chart_with_bars(title, x_label, y_label, series, &[], marker_x)
}

/// [`line_chart`] with error bars: `bars[i]` belongs to `series[i]` (missing entries draw
/// none).
pub fn line_chart_with_bars(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    bars: &[Bars],
    marker_x: Option<f64>,
) -> Result<String, String> {
    let x_max = series
        .iter()
        .flat_map(|s| s.points.iter())
        .map(|p| p.0)
        .fold(1.0, f64::max);
    let whole = whole_tick;
    render(title, |root| {
        let axis: XAxis<'_> = (x_label, 0.0..x_max + 0.5, &whole, None);
        draw(root, title, axis, y_label, series, (bars, &[]), marker_x)
    })
}

/// [`line_chart_with_bars`] with a dashed line per series beside its measured one:
/// `dashed[i]` (a bound, say) is drawn in the colour of `series[i]`.
pub fn line_chart_with_dashed(
    title: &str,
    labels: (&str, &str),
    series: &[Series],
    bars: &[Bars],
    dashed: &[Series],
    marker_x: Option<f64>,
) -> Result<String, String> {
    let x_max = series
        .iter()
        .chain(dashed)
        .flat_map(|s| s.points.iter())
        .map(|p| p.0)
        .fold(1.0, f64::max);
    let whole = whole_tick;
    render(title, |root| {
        let axis: XAxis<'_> = (labels.0, 0.0..x_max + 0.5, &whole, None);
        draw(
            root,
            title,
            axis,
            labels.1,
            series,
            (bars, dashed),
            marker_x,
        )
    })
}

/// Draws `series` against the values of a swept parameter: point `i` of a series is at
/// `labels[i]`, the values spaced evenly whatever they are (`unlimited` included), with
/// error bars, `bars[i]` belonging to `series[i]`.
pub fn sweep_chart_with_bars(
    title: &str,
    x_label: &str,
    labels: &[String],
    y_label: &str,
    series: &[Series],
    bars: &[Bars],
) -> Result<String, String> {
    let label = |v: &f64| {
        let i = v.round();
        if (v - i).abs() < 1e-6 && i >= 0.0 {
            labels.get(i as usize).cloned().unwrap_or_default()
        } else {
            String::new()
        }
    };
    let range = -0.5..labels.len() as f64 - 0.5;
    render(title, |root| {
        let axis: XAxis<'_> = (x_label, range, &label, Some(labels.len()));
        draw(root, title, axis, y_label, series, (bars, &[]), None)
    })
}

/// A thread or client count's tick: whole numbers only. On a short axis (1-4 threads)
/// plotters puts ticks at halves, which `{:.0}` would print as "0 0 1 2 2 2 3 4 4".
fn whole_tick(v: &f64) -> String {
    let i = v.round();
    if (v - i).abs() < 1e-6 {
        format!("{i:.0}")
    } else {
        String::new()
    }
}

type Root<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;
type Drawn = Result<(), Box<dyn std::error::Error>>;

fn render(title: &str, f: impl FnOnce(&Root<'_>) -> Drawn) -> Result<String, String> {
    register_font();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (760, 420)).into_drawing_area();
        f(&root).map_err(|e| format!("cannot draw chart {title:?}: {e}"))?;
        root.present()
            .map_err(|e| format!("cannot draw chart {title:?}: {e}"))?;
    }
    Ok(svg)
}

/// The x axis: its description, range, label text and, for categories, how many labels.
type XAxis<'a> = (
    &'a str,
    std::ops::Range<f64>,
    &'a dyn Fn(&f64) -> String,
    Option<usize>,
);

fn draw(
    root: &Root<'_>,
    title: &str,
    (x_label, x_range, x_format, x_count): XAxis<'_>,
    y_label: &str,
    series: &[Series],
    (bars, dashed): (&[Bars], &[Series]),
    marker_x: Option<f64>,
) -> Drawn {
    root.fill(&WHITE)?;
    let log = wants_log(
        series
            .iter()
            .chain(dashed)
            .flat_map(|s| s.points.iter().map(|p| p.1)),
    );
    // A log axis is drawn as log10 of the values on a linear one (labels turned back into
    // values), so both axes share one coordinate type and one drawing path.
    let scale = |y: f64| {
        if log {
            y.max(f64::MIN_POSITIVE).log10()
        } else {
            y
        }
    };
    let scaled = |all: &[Series]| -> Vec<Series> {
        all.iter()
            .map(|s| Series {
                name: s.name.clone(),
                points: s
                    .points
                    .iter()
                    .filter(|p| !log || p.1 > 0.0)
                    .map(|&(x, y)| (x, scale(y)))
                    .collect(),
            })
            .collect()
    };
    let series = scaled(series);
    let dashed = scaled(dashed);
    let bars: Vec<Bars> = bars
        .iter()
        .map(|b| {
            b.iter()
                .filter(|b| !log || b.1 > 0.0)
                .map(|&(x, lo, hi)| (x, scale(lo), scale(hi)))
                .collect()
        })
        .collect();
    let ys = || {
        series
            .iter()
            .chain(&dashed)
            .flat_map(|s| s.points.iter().map(|p| p.1))
            .chain(bars.iter().flatten().flat_map(|b| [b.1, b.2]))
            .filter(|y| y.is_finite())
    };
    let y_range = if log {
        let lo = ys().fold(f64::INFINITY, f64::min);
        let hi = ys().fold(f64::NEG_INFINITY, f64::max);
        (lo - 0.1).floor()..hi + 0.15
    } else {
        0.0..ys().fold(0.0, f64::max).max(1e-9) * 1.12
    };
    let (y_min, y_max) = (y_range.start, y_range.end);
    let y_desc = if log {
        format!("{y_label} (log scale)")
    } else {
        y_label.to_owned()
    };
    let y_format = |v: &f64| {
        if log {
            tick(10f64.powf(*v))
        } else {
            si(*v)
        }
    };
    let mut chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(64)
        .build_cartesian_2d(x_range, y_range)?;
    let mut mesh = chart.configure_mesh();
    if let Some(n) = x_count {
        // Two ticks per category, so every label sits on its point.
        mesh.x_labels(n * 2 + 1);
    }
    mesh.x_desc(x_label)
        .y_desc(y_desc)
        .x_label_formatter(x_format)
        .y_label_formatter(&y_format)
        .label_style(("sans-serif", 13))
        .draw()?;
    if let Some(x) = marker_x {
        chart
            .draw_series(DashedLineSeries::new(
                vec![(x, y_min), (x, y_max)],
                6,
                4,
                BLACK.mix(0.4).stroke_width(1),
            ))?
            .label(format!("threads = cores ({x})"))
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], BLACK.mix(0.4)));
    }
    for (i, s) in series.iter().enumerate() {
        let color = colour(i);
        chart
            .draw_series(LineSeries::new(s.points.clone(), color.stroke_width(2)))?
            .label(s.name.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
            });
        chart.draw_series(s.points.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
        if let Some(bars) = bars.get(i) {
            let bars = bars.as_slice();
            draw_bars(&mut chart, bars, color)?;
        }
    }
    for (i, s) in dashed
        .iter()
        .enumerate()
        .filter(|(_, s)| !s.points.is_empty())
    {
        let color = colour(i);
        chart
            .draw_series(DashedLineSeries::new(
                s.points.clone(),
                8,
                5,
                color.mix(0.7).stroke_width(2),
            ))?
            .label(s.name.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color.mix(0.5)));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .label_font(("sans-serif", 12))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .draw()?;
    Ok(())
}

/// Vertical bars from low to high with short caps, in the series' colour; the cap width
/// is a share of the x range so that it looks the same on any axis.
fn draw_bars<DB: DrawingBackend>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    bars: &[(f64, f64, f64)],
    color: RGBAColor,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let range = chart.x_range();
    let cap = (range.end - range.start) * 0.008;
    let style = color.mix(0.8).stroke_width(1);
    for &(x, low, high) in bars {
        if !(low.is_finite() && high.is_finite()) || high < low {
            continue;
        }
        chart.draw_series(
            [
                vec![(x, low), (x, high)],
                vec![(x - cap, low), (x + cap, low)],
                vec![(x - cap, high), (x + cap, high)],
            ]
            .into_iter()
            .map(|path| PathElement::new(path, style)),
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;

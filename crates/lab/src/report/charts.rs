//! SVG line charts drawn with plotters: a metric against threads, one line per series
//! (variant), with a dashed marker where threads = cores.
//!
//! Text is laid out with the DejaVu Sans font embedded in the binary (the `dejavu`
//! crate), so charts render the same on a machine without system fonts.

use std::sync::Once;

use plotters::prelude::*;
use plotters::style::FontStyle;

use crate::table::si;

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

/// Draws `series` as an SVG document. `marker_x` draws a vertical line (the core count).
pub fn line_chart(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    marker_x: Option<f64>,
) -> Result<String, String> {
    register_font();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (760, 420)).into_drawing_area();
        draw(&root, title, x_label, y_label, series, marker_x)
            .map_err(|e| format!("cannot draw chart {title:?}: {e}"))?;
        root.present()
            .map_err(|e| format!("cannot draw chart {title:?}: {e}"))?;
    }
    Ok(svg)
}

fn draw(
    root: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    marker_x: Option<f64>,
) -> Result<(), Box<dyn std::error::Error>> {
    root.fill(&WHITE)?;
    let points = series.iter().flat_map(|s| s.points.iter());
    let x_max = points.clone().map(|p| p.0).fold(1.0, f64::max);
    let y_max = points.map(|p| p.1).fold(0.0, f64::max).max(1e-9) * 1.12;
    let mut chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(64)
        .build_cartesian_2d(0.0..x_max + 0.5, 0.0..y_max)?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(y_label)
        .x_label_formatter(&|v| format!("{v:.0}"))
        .y_label_formatter(&|v| si(*v))
        .label_style(("sans-serif", 13))
        .draw()?;
    if let Some(x) = marker_x {
        chart
            .draw_series(DashedLineSeries::new(
                vec![(x, 0.0), (x, y_max)],
                6,
                4,
                BLACK.mix(0.4).stroke_width(1),
            ))?
            .label(format!("threads = cores ({x})"))
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], BLACK.mix(0.4)));
    }
    for (i, s) in series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(s.points.clone(), color.stroke_width(2)))?
            .label(s.name.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
            });
        chart.draw_series(s.points.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_every_series_with_its_legend() {
        let series = vec![
            Series {
                name: "global-mutex".into(),
                points: vec![(1.0, 7e6), (2.0, 3.5e6), (4.0, 3e6)],
            },
            Series {
                name: "dashmap".into(),
                points: vec![(1.0, 7e6), (2.0, 13e6), (4.0, 13e6)],
            },
        ];
        let svg = line_chart("lookup, 2 cores", "threads", "ops/s", &series, Some(2.0)).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..80]);
        for text in [
            "global-mutex",
            "dashmap",
            "threads = cores (2)",
            "lookup, 2 cores",
            "ops/s",
        ] {
            assert!(svg.contains(text), "{text} missing");
        }
        assert!(svg.matches("<circle").count() >= 6);
    }
}

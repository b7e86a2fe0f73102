//! Flamegraph drawings from folded stacks: a cell's on-CPU and off-CPU graphs and the
//! differential between two profiles, as SVG bytes (inferno). Shared by the profiler,
//! which draws a cell's graphs as it writes them, and the report, which redraws missing
//! ones and draws differentials. It records nothing and writes no file.

use std::io::BufReader;
use std::path::Path;

/// Below this many samples a flamegraph is thin, and a differential with a side this
/// thin is marked "too few samples to compare".
pub const THIN_SAMPLES: u64 = 500;

/// Renders folded stacks as a flamegraph SVG (inferno). `count_name` names the unit of
/// the counts (`samples`, `µs blocked`).
pub fn render_flamegraph(
    lines: &[String],
    title: &str,
    subtitle: &str,
    count_name: &str,
) -> Result<Vec<u8>, String> {
    if lines.is_empty() {
        // inferno refuses empty input; a placeholder says why there is no graph.
        let note = format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"900\" height=\"60\"><text x=\"10\" y=\"25\">{}: nothing recorded</text><text x=\"10\" y=\"45\" font-size=\"12\">{}</text></svg>",
            escape(title),
            escape(subtitle)
        );
        return Ok(note.into_bytes());
    }
    let mut options = inferno::flamegraph::Options::default();
    options.title = title.to_owned();
    options.subtitle = Some(subtitle.to_owned());
    options.count_name = count_name.to_owned();
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut options, lines.iter().map(String::as_str), &mut svg)
        .map_err(|e| format!("cannot render the flamegraph: {e}"))?;
    Ok(svg)
}

/// The subtitle of a cell's on-CPU flamegraph.
pub fn cpu_subtitle(samples: u64, how: &str) -> String {
    let thin = if samples < THIN_SAMPLES {
        " (thin)"
    } else {
        ""
    };
    format!("{samples} samples{thin}; {how}")
}

/// The subtitle of a cell's off-CPU flamegraph.
pub fn wait_subtitle(seconds: f64, measured: Option<f64>, stacks: u64) -> String {
    let measured = match measured {
        Some(m) => format!("measured blocked time {m:.3} s"),
        None => "this hot path does not measure its waits".to_owned(),
    };
    format!(
        "{seconds:.3} s blocked in {stacks} sampled waits (one per 0.2 ms of blocking) vs {measured}; measured waits only, weighted by blocked time"
    )
}

/// A differential flamegraph from two folded files: the shape of `after`, red where a
/// frame takes a larger share than in `before`, blue where smaller. Counts are
/// normalized, so profiles of different lengths compare. `counts` are the two sample
/// counts, shown in the title; under [`THIN_SAMPLES`] on either side the graph says
/// "too few samples to compare".
pub fn render_differential(
    before: &Path,
    after: &Path,
    title: &str,
    counts: (u64, u64),
    unit: &str,
) -> Result<Vec<u8>, String> {
    let open = |p: &Path| {
        std::fs::File::open(p)
            .map(BufReader::new)
            .map_err(|e| format!("cannot read {}: {e}", p.display()))
    };
    let too_few = counts.0 < THIN_SAMPLES || counts.1 < THIN_SAMPLES;
    let title = format!(
        "{title} ({} vs {} {unit}){}",
        counts.0,
        counts.1,
        if too_few {
            ": too few samples to compare"
        } else {
            ""
        }
    );
    let options = inferno::differential::Options {
        normalize: true,
        ..Default::default()
    };
    let mut diff = Vec::new();
    inferno::differential::from_readers(options, open(before)?, open(after)?, &mut diff).map_err(
        |e| {
            format!(
                "cannot diff {} and {}: {e}",
                before.display(),
                after.display()
            )
        },
    )?;
    let text = String::from_utf8_lossy(&diff);
    let lines: Vec<String> = text.lines().map(str::to_owned).collect();
    render_flamegraph(
        &lines,
        &title,
        "red: larger share than in the first profile; blue: smaller",
        unit,
    )
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differentials_show_both_counts_and_say_when_too_few() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.folded");
        let b = dir.path().join("b.folded");
        std::fs::write(&a, "c;search;lock 10\nc;search;copy 90\n").unwrap();
        std::fs::write(&b, "c;search;lock 160\nc;search;copy 40\n").unwrap();
        let svg = String::from_utf8(
            render_differential(&a, &b, "t=1 vs t=4", (100, 2000), "samples").unwrap(),
        )
        .unwrap();
        assert!(svg.contains("100 vs 2000 samples") && svg.contains("too few samples to compare"));
        let svg =
            String::from_utf8(render_differential(&a, &b, "x", (600, 2000), "samples").unwrap())
                .unwrap();
        assert!(svg.contains("600 vs 2000 samples") && !svg.contains("too few"));
        assert!(
            render_differential(Path::new("/nonexistent"), &b, "x", (1, 1), "samples").is_err()
        );
    }
}

//! The time account of the report: where each cell's worker threads spent the window, as
//! one stacked bar per cell (on CPU, waiting for a CPU, blocked on the hot path, other),
//! and the notes a cell's matrix entry carries about its own figures (an error or timeout
//! share above 1%, the clock-read cost inside every latency sample).
//!
//! The bars are [`Inline::Bar`]s, boxes with widths in percent in HTML, not images: they need no file,
//! open from `file://` and scale with the page. This module does not compute the shares;
//! the harness records them in each record's `time_share`.

use harness::account::TimeShare;
use harness::CellRecord;

use super::markup::{small, text, variant_tables, Block, Cell, Inline, Text};
use super::Group;

/// Above this share of attempts, errors or timeouts are flagged in the cell.
pub const FLAG_SHARE: f64 = 0.01;

/// The four parts of a bar: label, and the style sheet's class that colours it.
const PARTS: [(&str, &str); 4] = [
    ("on CPU", "tp-cpu"),
    ("waiting for a CPU", "tp-queue"),
    ("blocked on the hot path", "tp-blocked"),
    ("other", "tp-other"),
];

fn parts(s: &TimeShare) -> [Option<f64>; 4] {
    [Some(s.on_cpu), s.run_queue, s.blocked, Some(s.other)]
}

/// One stacked bar with the four shares written under it; a part that was not measured
/// is written "n/m" and takes no width.
pub fn bar(share: &TimeShare) -> Text {
    let values = parts(share);
    let drawn = PARTS
        .iter()
        .zip(values)
        .filter_map(|(&(label, class), v)| Some((class, v?, label)))
        .collect();
    let words: Vec<String> = values
        .iter()
        .map(|v| v.map_or("n/m".to_owned(), |v| format!("{:.0}", v * 100.0)))
        .collect();
    vec![Inline::Bar(drawn), small(words.join(" / "))]
}

/// The time-account section of a group: a legend, then per variant a table (rows =
/// cores, columns = threads) with one bar per cell.
pub fn section(g: &Group<'_>) -> Vec<Block> {
    if !g.cells.iter().any(|c| c.usable() && c.time_share.is_some()) {
        return Vec::new();
    }
    let mut legend = text("Shares of threads x window, per cell: ");
    for (label, class) in PARTS {
        legend.push(Inline::Swatch(class));
        legend.push(Inline::Text(format!(" {label} ")));
    }
    legend.push(Inline::Text(
        "(numbers: on CPU / run queue / blocked / other, in %; n/m: not measured).".into(),
    ));
    let mut out = vec![
        Block::heading(4, "Where the threads' time went"),
        Block::Note(legend),
    ];
    let tables = variant_tables(
        g,
        "time-account",
        |v| format!("{v} — cores \\ threads"),
        |record| match record {
            Some(r) if r.usable() => match &r.time_share {
                Some(s) => Cell::text(bar(s)),
                None => Cell::text(vec![small("not recorded")]),
            },
            Some(_) => Cell::text(vec![small("failed")]),
            None => Cell::of("-"),
        },
    );
    out.extend(tables.into_iter().map(Block::Table));
    out
}

/// Errors and timeouts as shares of attempts (successes + errors + timeouts).
pub fn failure_shares(r: &CellRecord) -> (f64, f64) {
    let attempts = r.ops_per_sec + r.errors_per_sec + r.timeouts_per_sec;
    if attempts <= 0.0 {
        return (0.0, 0.0);
    }
    (r.errors_per_sec / attempts, r.timeouts_per_sec / attempts)
}

/// The flag for a matrix cell whose error or timeout share is above [`FLAG_SHARE`];
/// empty when neither is.
pub fn failure_flag(r: &CellRecord) -> String {
    let (errors, timeouts) = failure_shares(r);
    let mut what = Vec::new();
    if errors > FLAG_SHARE {
        what.push(format!("errors {:.1}%", errors * 100.0));
    }
    if timeouts > FLAG_SHARE {
        what.push(format!("timeouts {:.1}%", timeouts * 100.0));
    }
    if what.is_empty() {
        return String::new();
    }
    format!("⚠ {} of attempts (not in ops/s)", what.join(", "))
}

/// The clock-read cost to show next to a cell's percentiles, e.g. `(clock read 21 ns)`;
/// `None` where the record predates the measurement.
pub fn clock_note(r: &CellRecord) -> Option<String> {
    (r.clock_read_ns > 0.0).then(|| format!("(clock read {:.0} ns)", r.clock_read_ns))
}

/// The run's clock-read cost for the environment table; `not measured` for a results
/// file that predates it.
pub fn clock_text(ns: f64) -> String {
    if ns > 0.0 {
        format!("{ns:.0} ns per Instant::now() (in every timed latency sample, not subtracted)")
    } else {
        "not measured".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> CellRecord {
        let key = harness::schema::CellKey {
            hot_path: "pool".into(),
            variant: "driver-v3".into(),
            params: Default::default(),
            threads: 4,
            cores: 2,
        };
        let mut r = CellRecord::failed(&key, "0-1", "x");
        r.status = harness::schema::CellStatus::Ok;
        r.verified = true;
        r.ops_per_sec = 980.0;
        r
    }

    #[test]
    fn a_cell_above_one_percent_errors_or_timeouts_is_flagged() {
        let mut r = record();
        assert_eq!(failure_flag(&r), "");
        r.timeouts_per_sec = 20.0;
        let flag = failure_flag(&r);
        assert!(flag.contains("timeouts 2.0%"), "{flag}");
        r.timeouts_per_sec = 5.0;
        assert_eq!(failure_flag(&r), "", "0.5% is under the threshold");
    }

    #[test]
    fn a_bar_shows_every_part_and_not_measured_as_such() {
        let s = TimeShare {
            on_cpu: 0.25,
            run_queue: Some(0.5),
            blocked: None,
            other: 0.25,
        };
        let mut html = String::new();
        super::super::markup::Format::text(&super::super::markup::Html, &mut html, &bar(&s));
        assert!(html.contains("width:25.00%"), "{html}");
        assert!(html.contains("width:50.00%"), "{html}");
        assert!(html.contains("25 / 50 / n/m / 25"), "{html}");
    }
}

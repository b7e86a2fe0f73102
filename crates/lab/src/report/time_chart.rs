//! The time account of the report: where each cell's worker threads spent the window, as
//! one stacked bar per cell (on CPU, waiting for a CPU, blocked on the hot path, other),
//! and the notes a cell's matrix entry carries about its own figures (an error or timeout
//! share above 1%, the clock-read cost inside every latency sample).
//!
//! The bars are plain HTML boxes with widths in percent, not images: they need no file,
//! open from `file://` and scale with the page. This module does not compute the shares;
//! the harness records them in each record's `time_share`.

use std::fmt::Write;

use harness::account::TimeShare;
use harness::RunRecord;

use super::Group;

/// Above this share of attempts, errors or timeouts are flagged in the cell.
pub const FLAG_SHARE: f64 = 0.01;

/// The four parts of a bar: label, colour, and how to read them from a share.
const PARTS: [(&str, &str); 4] = [
    ("on CPU", "#4878d0"),
    ("waiting for a CPU", "#ee854a"),
    ("blocked on the hot path", "#d65f5f"),
    ("other", "#c8c8c8"),
];

const BAR_STYLE: &str =
    "display:flex;width:160px;height:12px;border:1px solid #999;background:#fff";

fn parts(s: &TimeShare) -> [Option<f64>; 4] {
    [Some(s.on_cpu), s.run_queue, s.blocked, Some(s.other)]
}

/// One stacked bar with the four shares written under it; a part that was not measured
/// is written "n/m" and takes no width.
pub fn bar(share: &TimeShare) -> String {
    let mut out = format!("<div class=\"time-bar\" style=\"{BAR_STYLE}\">");
    let values = parts(share);
    for ((label, colour), value) in PARTS.iter().zip(values) {
        if let Some(v) = value.filter(|v| *v > 0.0) {
            let _ = write!(
                out,
                "<span style=\"width:{:.2}%;background:{colour}\" title=\"{label} {:.0}%\"></span>",
                v * 100.0,
                v * 100.0
            );
        }
    }
    out.push_str("</div><small>");
    let text: Vec<String> = values
        .iter()
        .map(|v| v.map_or("n/m".to_owned(), |v| format!("{:.0}", v * 100.0)))
        .collect();
    out.push_str(&text.join(" / "));
    out.push_str("</small>");
    out
}

/// The time-account section of a group: a legend, then per variant a table (rows =
/// cores, columns = threads) with one bar per cell.
pub fn section(out: &mut String, g: &Group<'_>) {
    if !g.cells.iter().any(|c| c.usable() && c.time_share.is_some()) {
        return;
    }
    out.push_str(
        "<h4>Where the threads' time went</h4>\n<p><small>Shares of threads x window, per cell: ",
    );
    for (label, colour) in PARTS {
        let _ = write!(
            out,
            "<span style=\"display:inline-block;width:10px;height:10px;background:{colour}\"></span> {label} "
        );
    }
    out.push_str(
        "(numbers: on CPU / run queue / blocked / other, in %; n/m: not measured).</small></p>\n",
    );
    super::markup::variant_tables(out, g, "time-account", |out, record| match record {
        Some(r) if r.usable() => match &r.time_share {
            Some(s) => {
                let _ = write!(out, "<td>{}</td>", bar(s));
            }
            None => out.push_str("<td><small>not recorded</small></td>"),
        },
        Some(_) => out.push_str("<td><small>failed</small></td>"),
        None => out.push_str("<td>-</td>"),
    });
}

/// Errors and timeouts as shares of attempts (successes + errors + timeouts).
pub fn failure_shares(r: &RunRecord) -> (f64, f64) {
    let attempts = r.ops_per_sec + r.errors_per_sec + r.timeouts_per_sec;
    if attempts <= 0.0 {
        return (0.0, 0.0);
    }
    (r.errors_per_sec / attempts, r.timeouts_per_sec / attempts)
}

/// The flag for a matrix cell whose error or timeout share is above [`FLAG_SHARE`], as
/// HTML; empty when neither is.
pub fn failure_flag(r: &RunRecord) -> String {
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
    format!(
        "<br><b class=\"flag\" style=\"color:#b00\">⚠ {} of attempts (not in ops/s)</b>",
        what.join(", ")
    )
}

/// The clock-read cost to show next to a cell's percentiles, e.g. ` (clock read 21 ns)`;
/// empty where the record predates the measurement.
pub fn clock_note(r: &RunRecord) -> String {
    if r.clock_read_ns > 0.0 {
        format!(" <small>(clock read {:.0} ns)</small>", r.clock_read_ns)
    } else {
        String::new()
    }
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

    fn record() -> RunRecord {
        let key = harness::schema::CellKey {
            hot_path: "pool".into(),
            variant: "driver-v3".into(),
            params: Default::default(),
            threads: 4,
            cores: 2,
        };
        let mut r = RunRecord::failed(&key, "0-1", "x");
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
        let html = bar(&s);
        assert!(html.contains("width:25.00%"), "{html}");
        assert!(html.contains("width:50.00%"), "{html}");
        assert!(html.contains("25 / 50 / n/m / 25"), "{html}");
    }
}

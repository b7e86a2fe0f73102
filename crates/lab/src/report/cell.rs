//! A matrix cell as the page shows it: its median and interval, per-thread figure,
//! efficiency, p99, wait share, retries, errors, timeouts and CPU, the hot path's own
//! words, the busiest lock and links to its flamegraphs. Not the digest's compact cell
//! (`advice::markdown_cell`), nor the table around it (`markup::variant_tables`).

use harness::schema::CellStatus;
use harness::CellRecord;

use super::markup::{nanos, small, text, Cell, Inline, Text};
use super::{advice, locks, time_chart};
use crate::flame::THIN_SAMPLES;
use crate::words::si;

/// The cell of `record` (`-` where the matrix has none); `prefix` leads to the root.
pub fn rich(record: Option<&CellRecord>, prefix: &str) -> Cell {
    let Some(r) = record else {
        return Cell::of("-");
    };
    if r.status == CellStatus::Failed {
        let why = r.failure.as_deref().unwrap_or("unknown");
        return Cell::of(format!("failed: {why}")).class("failed");
    }
    if !r.verified {
        let why = r
            .verify_error
            .as_deref()
            .unwrap_or("invariants did not hold");
        return Cell::of(format!("not verified: {why}")).class("failed");
    }
    let mut t = figures(r);
    let extras = extras(r);
    if !extras.is_empty() {
        t.extend([Inline::Break, small(extras.join(" · "))]);
    }
    if let Some(busiest) = locks::busiest_text(r) {
        t.extend([Inline::Break, small(format!("busiest lock: {busiest}"))]);
    }
    t.extend(profile_links(r, prefix));
    let cell = Cell::text(t);
    if r.oversubscribed() {
        cell.class("over")
    } else {
        cell
    }
}

/// The cell's figures, from ops/s to CPU, with the failure flag.
fn figures(r: &CellRecord) -> Text {
    let mut t = vec![
        Inline::Bold(text(si(r.ops_per_sec))),
        Inline::Text(" ".into()),
        small(advice::ci_text(r)),
        Inline::Break,
        Inline::Text(format!(
            "per thread {} · eff {}",
            si(r.per_thread_ops_per_sec),
            r.efficiency.map_or("-".to_owned(), |e| format!("{e:.2}"))
        )),
        Inline::Break,
        Inline::Text(format!("p99 {}", nanos(r.latency_ns.p99 as f64))),
    ];
    if let Some(note) = time_chart::clock_note(r) {
        t.extend([Inline::Text(" ".into()), small(note)]);
    }
    t.extend([
        Inline::Text(format!(
            " · wait {}",
            r.wait_share
                .map_or("not measured".to_owned(), |w| format!("{w:.2}"))
        )),
        Inline::Break,
        Inline::Text(format!(
            "retries {} · errors {} · timeouts {} · cpu {:.0}%",
            r.retries,
            r.errors,
            r.timeouts,
            r.cpu_util * 100.0
        )),
    ]);
    let flag = time_chart::failure_flag(r);
    if !flag.is_empty() {
        t.extend([
            Inline::Break,
            Inline::Span {
                class: "flag".into(),
                text: text(flag),
            },
        ]);
    }
    t
}

/// Words a reader needs beside the figures: whether the store ran durably, which limit
/// bound the cell, the dispatch or backend it ran with.
fn extras(r: &CellRecord) -> Vec<String> {
    r.extra
        .iter()
        // How the lock library sampled is said once, under the section of its locks.
        .filter(|(k, _)| k.as_str() != "locks_sampling")
        .filter_map(|(k, v)| match v {
            serde_json::Value::Bool(b) => Some(format!("{k} {}", if *b { "yes" } else { "no" })),
            serde_json::Value::String(s) => Some(format!("{k} {s}")),
            _ => v.as_f64().map(|n| {
                let n = if n.fract() == 0.0 {
                    si(n)
                } else {
                    format!("{n:.3}")
                };
                format!("{k} {n}")
            }),
        })
        .collect()
}

/// Links to the cell's flamegraph and off-CPU graphs (its own waits, and its server's
/// scheduler switches where it ran one), with their sample counts.
fn profile_links(r: &CellRecord, prefix: &str) -> Text {
    let Some(p) = &r.profile else {
        return Vec::new();
    };
    let rate = if p.rate_hz > 0 {
        format!(" at {} Hz", p.rate_hz)
    } else {
        String::new()
    };
    let mut t = vec![
        Inline::Break,
        Inline::Link {
            href: format!("{prefix}{}", p.svg),
            class: "flamegraph",
            text: text("flamegraph"),
        },
        Inline::Text(" ".into()),
        small(format!("{} samples, {}{rate}", p.samples, p.sampler)),
    ];
    if p.samples < THIN_SAMPLES {
        t.extend([
            Inline::Text(" ".into()),
            Inline::Span {
                class: "thin".into(),
                text: text("thin"),
            },
        ]);
    }
    if let Some(off) = &p.off_cpu {
        let measured = match off.measured_seconds {
            Some(m) => format!("{m:.3} s measured"),
            None => "waits not measured".to_owned(),
        };
        t.extend([
            Inline::Break,
            Inline::Link {
                href: format!("{prefix}{}", off.svg),
                class: "offcpu",
                text: text("off-CPU"),
            },
            Inline::Text(" ".into()),
            small(format!("{:.3} s blocked vs {measured}", off.seconds)),
        ]);
    }
    // The server's own off-CPU time, from the scheduler, or the line saying why not.
    if let Some(off) = &p.server_off_cpu {
        t.extend([
            Inline::Break,
            Inline::Link {
                href: format!("{prefix}{}", off.svg),
                class: "offcpu",
                text: text("server off-CPU"),
            },
            Inline::Text(" ".into()),
            small(format!(
                "{:.3} s off the CPU, {} switches",
                off.seconds, off.samples
            )),
        ]);
    } else if let Some(why) = &p.server_off_cpu_absent {
        t.extend([Inline::Break, small(why.clone())]);
    }
    t
}

/// ": too few samples to compare" when either side of a differential is thin.
pub fn too_few(counts: (u64, u64)) -> &'static str {
    if counts.0 < THIN_SAMPLES || counts.1 < THIN_SAMPLES {
        ": too few samples to compare"
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use harness::schema::{OffCpuRef, ProfileRef};

    use super::*;

    fn profiled(server_off_cpu: Option<OffCpuRef>, absent: Option<&str>) -> CellRecord {
        let mut r = harness::testing::synthetic_cell(
            "server",
            "server-tiny",
            "configured",
            &[],
            2,
            2,
            1e4,
            100.0,
            3,
        );
        r.profile = Some(ProfileRef {
            svg: "p/t2.svg".into(),
            folded: "p/t2.folded".into(),
            samples: 1000,
            sampler: "perf".into(),
            rate_hz: 2000,
            off_cpu: None,
            repeats: Vec::new(),
            server_off_cpu,
            server_off_cpu_absent: absent.map(str::to_owned),
            run_overhead_s: None,
        });
        r
    }

    #[test]
    fn a_server_cell_links_its_servers_off_cpu_graph_or_says_why_not() {
        let off = OffCpuRef {
            svg: "p/t2.server-offcpu.svg".into(),
            folded: "p/t2.server-offcpu.folded".into(),
            seconds: 1.25,
            measured_seconds: None,
            samples: 900,
        };
        let links = profile_links(&profiled(Some(off), None), "../");
        assert!(
            links.iter().any(
                |i| matches!(i, Inline::Link { href, .. } if href == "../p/t2.server-offcpu.svg")
            ),
            "{links:?}"
        );
        let why = "no off-CPU profile of the server: perf's sched:sched_switch tracepoint needs root (perf_event_paranoid 2)";
        let links = profile_links(&profiled(None, Some(why)), "../");
        assert!(links.contains(&small(why.to_owned())), "{links:?}");
    }
}

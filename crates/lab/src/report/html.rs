//! The HTML page: static, no scripts, no network; every link relative, so it opens from
//! `file://`. `prefix` leads from the page's folder to the project root, because the
//! same page is written to `reports/<id>/` and to `reports/`.

use super::markup::esc;
use std::fmt::Write;

use crate::profile::THIN_SAMPLES;
use harness::schema::CellStatus;
use harness::RunRecord;

use super::{Analysed, Group};
use crate::table::si;

const STYLE: &str = "body{font-family:sans-serif;margin:1.5em;color:#222;max-width:1500px}\
table{border-collapse:collapse;margin:.5em 0 1.2em}td,th{border:1px solid #ccc;padding:4px 7px;vertical-align:top;font-size:13px}\
th{background:#f3f3f3}td.over{background:#fff6e0}td.failed{background:#fde2e2;color:#900}\
.banner{background:#fde2e2;border:1px solid #c00;padding:.6em;margin:1em 0}\
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,460px),1fr));gap:1em;margin:.5em 0 1em}\
figure{margin:0}figure img{width:100%;height:auto;border:1px solid #ddd}\
.findings li{margin:.3em 0}.verdict{font-weight:bold}\
.verdict.reproduced{color:#1a7f37}.verdict.partly{color:#9a6700}.verdict.not_reproduced{color:#b00}.verdict.cannot_tell{color:#666}\
#verdicts td{font-size:14px}.finding-body{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,460px);gap:1em;align-items:start}\
details{margin:.3em 0 1.2em}summary{cursor:pointer;color:#0366d6}\
code{background:#f6f6f6;padding:1px 4px}small{color:#666}.thin{color:#b60}";

/// The whole page. `runs` lists earlier reports (for `reports/index.html`).
pub fn page(analysed: &[Analysed<'_>], prefix: &str, runs: Option<&[String]>) -> String {
    let mut out = String::new();
    let ids: Vec<&str> = analysed
        .iter()
        .map(|a| a.source.results.run_id.as_str())
        .collect();
    let _ = write!(
        out,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>contention-lab report {}</title><style>{STYLE}</style></head><body>\n<h1>contention-lab report {}</h1>\n",
        esc(&ids.join(", ")),
        esc(&ids.join(", "))
    );
    super::findings_page::html(&mut out, analysed, prefix);
    out.push_str("<p>Figures are medians over interleaved repetitions with their 95% confidence interval in brackets (order statistics; with fewer than 6 repetitions no such interval reaches 95%, so min-max is shown and labelled with n); charts draw it as error bars. Efficiency = ops / (min(threads, cores) x ops at 1 thread). Highlighted cells ran more threads than cores. Compare ratios within one run; this machine is noisy.</p>\n");
    if analysed.len() > 1 {
        side_by_side(&mut out, analysed);
    }
    for a in analysed {
        machine(&mut out, a, prefix);
    }
    if let Some(runs) = runs {
        out.push_str("<h2>All reports</h2><ul>\n");
        for id in runs {
            let _ = writeln!(
                out,
                "<li><a href=\"{}/index.html\">{}</a></li>",
                esc(id),
                esc(id)
            );
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</body></html>\n");
    out
}

/// One table with a column per results file: every cell (scenario file, variant,
/// parameters, threads, cores) present in the first, its ops/s in each, and the ratio to
/// the first. Cells are matched by what they ran, not by position.
fn side_by_side(out: &mut String, analysed: &[Analysed<'_>]) {
    out.push_str("<section class=\"side-by-side\"><h2>Side by side</h2>\n<p>ops/s per machine; the ratio is to the first. Different machines differ in more than their CPU count: read it as a shape, not a verdict.</p>\n<table class=\"side-by-side\"><tr><th>scenario</th><th>variant</th><th>parameters</th><th>threads</th><th>cores</th>");
    for a in analysed {
        let e = &a.source.results.env;
        let _ = write!(
            out,
            "<th>{} ({}, {} CPUs)</th>",
            esc(&a.source.results.run_id),
            esc(&e.hostname),
            e.nproc
        );
    }
    out.push_str("</tr>\n");
    let first = &analysed[0].source.results.cells;
    for cell in first {
        let label = if cell.scenario_file.is_empty() {
            &cell.hot_path
        } else {
            &cell.scenario_file
        };
        let params: Vec<String> = cell
            .params
            .iter()
            .map(|(k, v)| format!("{k}={}", crate::plan::value_text(v)))
            .collect();
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td><small>{}</small></td><td>{}</td><td>{}</td>",
            esc(label),
            esc(&cell.variant),
            esc(&params.join(" ")),
            cell.threads,
            cell.cores
        );
        for a in analysed {
            let other = a
                .source
                .results
                .cells
                .iter()
                .find(|c| c.key() == cell.key() && c.scenario_file == cell.scenario_file);
            let text = match other {
                Some(o) if o.usable() && cell.usable() && cell.ops_per_sec > 0.0 => {
                    format!(
                        "{} ({:.2}x)",
                        si(o.ops_per_sec),
                        o.ops_per_sec / cell.ops_per_sec
                    )
                }
                Some(o) if o.usable() => si(o.ops_per_sec),
                Some(_) => "failed".to_owned(),
                None => "-".to_owned(),
            };
            let _ = write!(out, "<td>{text}</td>");
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table></section>\n");
}

fn machine(out: &mut String, a: &Analysed<'_>, prefix: &str) {
    let r = &a.source.results;
    let e = &r.env;
    let _ = writeln!(
        out,
        "<section class=\"machine\"><h2>Run {} on {} ({}, {} CPUs)</h2>",
        esc(&r.run_id),
        esc(&e.hostname),
        esc(&e.cpu_model),
        e.nproc
    );
    if !r.complete {
        out.push_str("<div class=\"banner\">Incomplete: this run was interrupted; only the cells that finished are shown.</div>\n");
    }
    if e.debug_build {
        out.push_str(
            "<div class=\"banner\">Debug build: these figures are not worth quoting.</div>\n",
        );
    }
    let _ = writeln!(out, "<p>Reproduce: <code>{}</code></p>", esc(&r.command));
    out.push_str("<table class=\"env\">");
    for (k, v) in [
        ("CPU", e.cpu_model.clone()),
        ("CPUs available", format!("{} ({})", e.nproc, e.affinity)),
        ("kernel", e.kernel.clone()),
        ("rustc", e.rustc.clone()),
        ("commit", e.git_commit.clone()),
        ("host", e.hostname.clone()),
        ("clock read", super::time_chart::clock_text(e.clock_read_ns)),
        ("started", r.started.clone()),
        ("finished", r.finished.clone()),
        ("results file", a.source.path.display().to_string()),
    ]
    .into_iter()
    .chain(crate::retake::env_rows(e))
    {
        let _ = write!(out, "<tr><th>{k}</th><td>{}</td></tr>", esc(&v));
    }
    out.push_str("</table>\n");
    if !r.settings_by_file.is_empty() {
        out.push_str("<p>Settings per scenario file:</p><ul class=\"settings\">\n");
        for line in &r.settings_by_file {
            let _ = writeln!(out, "<li><code>{}</code></li>", esc(line));
        }
        out.push_str("</ul>\n");
    }
    let retakes = crate::retake::lines(r);
    if !retakes.is_empty() {
        out.push_str("<p>Interference and retakes per scenario file:</p><ul class=\"settings\">\n");
        for line in &retakes {
            let _ = writeln!(out, "<li>{}</li>", esc(line));
        }
        out.push_str("</ul>\n");
    }
    out.push_str("<nav><b>Contents:</b> <a href=\"#findings\">Findings</a> · ");
    let mut links: Vec<String> = a
        .hot_paths()
        .iter()
        .map(|h| format!("<a href=\"#hot-path-{}\"><b>{}</b></a>", esc(h), esc(h)))
        .collect();
    links.extend(a.sweeps.iter().map(|sw| {
        format!(
            "<a href=\"#sweep-{}-{}\">{} against {}</a>",
            esc(&sw.file),
            esc(&sw.param),
            esc(&sw.file),
            esc(&sw.param)
        )
    }));
    links.extend(a.groups.iter().filter(|g| !g.charts.is_empty()).map(|g| {
        let name = if g.label.is_empty() {
            g.title_name().to_owned()
        } else {
            format!("{} ({})", g.title_name(), g.label)
        };
        format!("<a href=\"#{}\">{}</a>", esc(&g.slug), esc(&name))
    }));
    out.push_str(&links.join(" · "));
    out.push_str("</nav>\n");
    for hot_path in a.hot_paths() {
        let _ = writeln!(
            out,
            "<section class=\"hot-path\" id=\"hot-path-{}\"><h2>{}</h2>",
            esc(&hot_path),
            esc(&hot_path)
        );
        for sweep in a.sweeps.iter().filter(|s| s.hot_path == hot_path) {
            sweep_section(out, sweep, prefix);
        }
        for g in a.groups.iter().filter(|g| g.hot_path == hot_path) {
            group(out, g, prefix);
        }
        out.push_str("</section>\n");
    }
    out.push_str("</section>\n");
}

fn sweep_section(out: &mut String, sweep: &super::Sweep, prefix: &str) {
    let _ = writeln!(
        out,
        "<section class=\"sweep\" id=\"sweep-{}-{}\"><h3>{}: throughput against {}</h3><p><small>{} threads, {} core(s); other parameters fixed</small></p><div class=\"charts\"><figure class=\"chart\"><img src=\"{prefix}{}\" alt=\"throughput against {}\"></figure>",
        esc(&sweep.file),
        esc(&sweep.param),
        esc(&sweep.file),
        esc(&sweep.param),
        sweep.threads,
        sweep.cores,
        esc(&sweep.svg),
        esc(&sweep.param)
    );
    for (label, path) in &sweep.extras {
        let _ = writeln!(
            out,
            "<figure class=\"chart\"><img src=\"{prefix}{}\" alt=\"{} against {}\"></figure>",
            esc(path),
            esc(label),
            esc(&sweep.param)
        );
    }
    out.push_str("</div>\n");
    let _ = write!(
        out,
        "<table class=\"sweep\"><tr><th>variant \\ {}</th>",
        esc(&sweep.param)
    );
    for v in &sweep.values {
        let _ = write!(out, "<th>{}</th>", esc(v));
    }
    out.push_str("</tr>\n");
    for (variant, ops) in &sweep.rows {
        let _ = write!(out, "<tr><th>{}</th>", esc(variant));
        for o in ops {
            let _ = write!(out, "<td>{}</td>", o.map_or("failed".to_owned(), si));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table></section>\n");
}

fn group(out: &mut String, g: &Group<'_>, prefix: &str) {
    let title = if g.label.is_empty() {
        g.title_name().to_owned()
    } else {
        format!("{} ({})", g.title_name(), g.label)
    };
    let params: Vec<String> = g
        .params
        .iter()
        .map(|(k, v)| format!("{k}={}", crate::plan::value_text(v)))
        .collect();
    let _ = writeln!(
        out,
        "<section class=\"scenario\" id=\"{}\"><h3>{}</h3><p><small>parameters: {}</small></p>",
        esc(&g.slug),
        esc(&title),
        esc(&params.join(" "))
    );
    if !g.charts.is_empty() {
        out.push_str("<div class=\"charts\">\n");
        for c in &g.charts {
            let extras = c.extras.iter().map(|(label, path)| (path, label.as_str()));
            for (path, what) in [
                (&c.ops, "throughput"),
                (&c.per_thread, "per-thread throughput"),
            ]
            .into_iter()
            .chain(extras)
            {
                let _ = writeln!(
                    out,
                    "<figure class=\"chart\"><img src=\"{prefix}{}\" alt=\"{} against threads, {} core(s)\"></figure>",
                    esc(path),
                    what,
                    c.cores
                );
            }
        }
        out.push_str("</div>\n");
        out.push_str(&super::advice::html_section(g));
    }
    out.push_str("<h4>Matrix per variant</h4>\n");
    super::markup::variant_tables(out, g, "matrix", |out, record| cell(out, record, prefix));
    out.push_str(&super::locks::html_section(g));
    super::time_chart::section(out, g);
    if !g.diffs.is_empty() {
        out.push_str(
            "<h4>Differential flamegraphs (red: grew with threads, blue: shrank)</h4><ul>\n",
        );
        for d in &g.diffs {
            let _ = write!(
                out,
                "<li><a class=\"diff\" href=\"{prefix}{}\">{}, {} core(s): threads={} vs threads={}</a> <small>on-CPU, {} vs {} samples{}</small>",
                esc(&d.svg),
                esc(&d.variant),
                d.cores,
                d.from_threads,
                d.to_threads,
                d.samples.0,
                d.samples.1,
                too_few(d.samples)
            );
            if let Some((svg, counts)) = &d.off_cpu {
                let _ = write!(
                    out,
                    " · <a class=\"diff\" href=\"{prefix}{}\">off-CPU</a> <small>{} vs {} wait stacks{}</small>",
                    esc(svg),
                    counts.0,
                    counts.1,
                    too_few(*counts)
                );
            }
            out.push_str("</li>\n");
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</section>\n");
}

fn cell(out: &mut String, record: Option<&RunRecord>, prefix: &str) {
    let Some(r) = record else {
        out.push_str("<td>-</td>");
        return;
    };
    if r.status == CellStatus::Failed {
        let _ = write!(
            out,
            "<td class=\"failed\">failed: {}</td>",
            esc(r.failure.as_deref().unwrap_or("unknown"))
        );
        return;
    }
    if !r.verified {
        let _ = write!(
            out,
            "<td class=\"failed\">not verified: {}</td>",
            esc(r
                .verify_error
                .as_deref()
                .unwrap_or("invariants did not hold"))
        );
        return;
    }
    let class = if r.oversubscribed() {
        " class=\"over\""
    } else {
        ""
    };
    let _ = write!(
        out,
        "<td{class}><b>{}</b> <small>{}</small><br>per thread {} · eff {}<br>p99 {}{} · wait {}<br>retries {} · errors {} · timeouts {} · cpu {:.0}%{}",
        si(r.ops_per_sec),
        super::advice::ci_text(r),
        si(r.per_thread_ops_per_sec),
        r.efficiency.map_or("-".to_owned(), |e| format!("{e:.2}")),
        nanos(r.latency_ns.p99),
        super::time_chart::clock_note(r),
        r.wait_share
            .map_or("not measured".to_owned(), |w| format!("{w:.2}")),
        r.retries,
        r.errors,
        r.timeouts,
        r.cpu_util * 100.0,
        super::time_chart::failure_flag(r)
    );
    let extras: Vec<String> = r
        .extra
        .iter()
        .filter_map(|(k, v)| match v {
            // Words a reader needs beside the figures: whether the store ran durably,
            // which limit bound the cell, the dispatch or backend it ran with.
            serde_json::Value::Bool(b) => Some(format!("{k} {}", if *b { "yes" } else { "no" })),
            serde_json::Value::String(s) => Some(format!("{k} {s}")),
            _ => v.as_f64().map(|n| {
                format!(
                    "{k} {}",
                    if n.fract() == 0.0 {
                        si(n)
                    } else {
                        format!("{n:.3}")
                    }
                )
            }),
        })
        .collect();
    if !extras.is_empty() {
        let _ = write!(out, "<br><small>{}</small>", esc(&extras.join(" · ")));
    }
    if let Some(busiest) = super::locks::busiest_text(r) {
        let _ = write!(out, "<br><small>busiest lock: {}</small>", esc(&busiest));
    }
    if let Some(p) = &r.profile {
        let thin = if p.samples < THIN_SAMPLES {
            " <span class=\"thin\">thin</span>"
        } else {
            ""
        };
        let rate = if p.rate_hz > 0 {
            format!(" at {} Hz", p.rate_hz)
        } else {
            String::new()
        };
        let _ = write!(
            out,
            "<br><a class=\"flamegraph\" href=\"{prefix}{}\">flamegraph</a> <small>{} samples, {}{rate}</small>{thin}",
            esc(&p.svg),
            p.samples,
            esc(&p.sampler)
        );
        if let Some(off) = &p.off_cpu {
            let measured = match off.measured_seconds {
                Some(m) => format!("{m:.3} s measured"),
                None => "waits not measured".to_owned(),
            };
            let _ = write!(
                out,
                "<br><a class=\"offcpu\" href=\"{prefix}{}\">off-CPU</a> <small>{:.3} s blocked vs {measured}</small>",
                esc(&off.svg),
                off.seconds
            );
        }
    }
    out.push_str("</td>");
}

/// ": too few samples to compare" when either side of a differential is thin.
fn too_few(counts: (u64, u64)) -> &'static str {
    if counts.0 < THIN_SAMPLES || counts.1 < THIN_SAMPLES {
        ": too few samples to compare"
    } else {
        ""
    }
}

/// A latency in the unit that keeps it short.
fn nanos(ns: u64) -> String {
    match ns {
        n if n >= 1_000_000_000 => format!("{:.2} s", n as f64 / 1e9),
        n if n >= 1_000_000 => format!("{:.2} ms", n as f64 / 1e6),
        n if n >= 1_000 => format!("{:.1} µs", n as f64 / 1e3),
        n => format!("{n} ns"),
    }
}

//! `summary.md`: the report's tables in Markdown, for pasting into an issue or a pull
//! request.

use std::fmt::Write;

use super::Analysed;
use crate::table::si;

/// The Markdown summary.
pub fn markdown(analysed: &[Analysed<'_>]) -> String {
    let mut out = String::new();
    super::findings_page::markdown(&mut out, analysed);
    for a in analysed {
        let r = &a.source.results;
        let _ = writeln!(
            out,
            "# contention-lab run {} on {} ({}, {} CPUs){}\n",
            r.run_id,
            r.env.hostname,
            r.env.cpu_model,
            r.env.nproc,
            if r.complete { "" } else { " — INCOMPLETE" }
        );
        let _ = writeln!(
            out,
            "Reproduce: `{}` (commit {}, {})\n",
            r.command, r.env.git_commit, r.env.rustc
        );
        for line in &r.settings_by_file {
            let _ = writeln!(out, "- `{line}`");
        }
        if !r.settings_by_file.is_empty() {
            out.push('\n');
        }
        for (k, v) in crate::retake::env_rows(&r.env) {
            let _ = writeln!(out, "- {k}: {v}");
        }
        for line in crate::retake::lines(r) {
            let _ = writeln!(out, "- {line}");
        }
        out.push('\n');
        for hot_path in a.hot_paths() {
            hot_path_section(&mut out, a, &hot_path);
        }
    }
    out
}

/// One hot path: its sweeps, then its groups.
fn hot_path_section(out: &mut String, a: &Analysed<'_>, hot_path: &str) {
    let _ = writeln!(out, "## {hot_path}\n");
    {
        for sweep in a.sweeps.iter().filter(|s| s.hot_path == hot_path) {
            let _ = writeln!(
                out,
                "### {}: ops/s against {} ({} threads, {} cores)\n",
                sweep.file, sweep.param, sweep.threads, sweep.cores
            );
            let _ = write!(out, "| variant \\ {} |", sweep.param);
            for v in &sweep.values {
                let _ = write!(out, " {v} |");
            }
            out.push_str("\n|---|");
            out.push_str(&"---|".repeat(sweep.values.len()));
            out.push('\n');
            for (variant, ops) in &sweep.rows {
                let _ = write!(out, "| {variant} |");
                for o in ops {
                    let _ = write!(out, " {} |", o.map_or("failed".to_owned(), si));
                }
                out.push('\n');
            }
            out.push('\n');
        }
        for g in a.groups.iter().filter(|g| g.hot_path == hot_path) {
            let title = if g.label.is_empty() {
                g.title_name().to_owned()
            } else {
                format!("{} ({})", g.title_name(), g.label)
            };
            let _ = writeln!(
                out,
                "### {title}\n\nops/s [95% interval, or min-max below 6 repetitions] / per-thread ops/s; `*` = more threads than cores.\n"
            );
            for variant in &g.variants {
                let _ = write!(out, "**{variant}**\n\n| cores \\ threads |");
                for t in &g.threads {
                    let _ = write!(out, " {t} |");
                }
                out.push_str("\n|---|");
                out.push_str(&"---|".repeat(g.threads.len()));
                out.push('\n');
                for &c in &g.cores {
                    let _ = write!(out, "| {c} |");
                    for &t in &g.threads {
                        let _ = write!(
                            out,
                            " {} |",
                            super::advice::markdown_cell(g.cell(variant, t, c))
                        );
                    }
                    out.push('\n');
                }
                out.push('\n');
            }
            out.push_str(&super::locks::markdown_section(g));
            out.push_str(&super::advice::markdown_section(g));
        }
    }
}

//! `summary.md`: the report's digest in Markdown, for pasting into an issue or a pull
//! request: the Findings, then per run its command and circumstances and per hot path
//! its sweeps and groups, from the same sections as the page ([`View::Digest`]).

use super::markup::{text, Attrs, Block, Format, Inline, Markdown};
use super::sections::{self, View};
use super::Analysed;
use crate::words::{env_rows, retake_lines};

/// The Markdown summary.
pub fn markdown(analysed: &[Analysed<'_>]) -> String {
    let mut blocks = vec![super::findings_page::section(analysed, "", 1)];
    for a in analysed {
        let r = &a.source.results;
        blocks.push(Block::heading(
            1,
            format!(
                "contention-lab run {} on {} ({}, {} CPUs){}",
                r.run_id,
                r.env.hostname,
                r.env.cpu_model,
                r.env.nproc,
                if r.complete { "" } else { " — INCOMPLETE" }
            ),
        ));
        let mut reproduce = text("Reproduce: ");
        reproduce.push(Inline::Code(r.command.clone()));
        reproduce.push(Inline::Text(format!(
            " (commit {}, {})",
            r.env.git_commit, r.env.rustc
        )));
        blocks.push(Block::Para(reproduce));
        let settings = r
            .settings_by_file
            .iter()
            .map(|l| vec![Inline::Code(l.clone())])
            .collect();
        blocks.push(Block::List(Attrs::default(), settings));
        let mut circumstances: Vec<_> = env_rows(&r.env)
            .into_iter()
            .map(|(k, v)| text(format!("{k}: {v}")))
            .collect();
        circumstances.extend(retake_lines(r).iter().map(text));
        blocks.push(Block::List(Attrs::default(), circumstances));
        for hot_path in a.hot_paths() {
            blocks.push(Block::heading(2, &hot_path));
            blocks.extend(
                a.sweeps
                    .iter()
                    .filter(|s| s.hot_path == hot_path)
                    .map(|s| sections::sweep(s, View::Digest)),
            );
            blocks.extend(
                a.groups
                    .iter()
                    .filter(|g| g.hot_path == hot_path)
                    .map(|g| sections::group(g, View::Digest)),
            );
        }
    }
    Markdown.blocks(&blocks)
}

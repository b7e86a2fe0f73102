//! The sections both report documents share, built once as blocks: a parameter sweep
//! and a group of cells (its charts, advice, matrix, lock table, time account and
//! differentials). `index.html` shows a group in full ([`View::Page`]); `summary.md` is
//! the digest ([`View::Digest`]): compact cells, and none of what only a page can show.
//!
//! Lays out what analysis found; decides nothing.

use super::markup::{small, text, variant_tables, Attrs, Block, Cell, Inline, Row, Table};
use super::{advice, cell, locks, server_locks, time_chart, Group, Sweep};
use crate::words::{si, value_text};

/// Which document a section is built for.
#[derive(Debug, Clone, Copy)]
pub enum View<'p> {
    /// The page; the prefix leads from the page to the project root.
    Page(&'p str),
    /// The Markdown digest.
    Digest,
}

/// A sweep: its chart(s) and its table of ops/s per variant and value.
pub fn sweep(sweep: &Sweep, view: View<'_>) -> Block {
    let prefix = match view {
        View::Page(p) => p,
        View::Digest => "",
    };
    let mut figures = vec![Block::Figure {
        src: format!("{prefix}{}", sweep.svg),
        alt: format!("throughput against {}", sweep.param),
    }];
    figures.extend(sweep.extras.iter().map(|(label, path)| Block::Figure {
        src: format!("{prefix}{path}"),
        alt: format!("{label} against {}", sweep.param),
    }));
    let mut head = vec![Cell::head(format!("variant \\ {}", sweep.param))];
    head.extend(sweep.values.iter().map(Cell::head));
    let rows = sweep
        .rows
        .iter()
        .map(|(variant, ops)| {
            let mut cells = vec![Cell::head(variant)];
            cells.extend(
                ops.iter()
                    .map(|o| Cell::of(o.map_or("failed".to_owned(), si))),
            );
            Row::from(cells)
        })
        .collect();
    Block::section(
        Attrs::class("sweep").id(format!("sweep-{}-{}", sweep.file, sweep.param)),
        vec![
            Block::heading(
                3,
                format!("{}: throughput against {}", sweep.file, sweep.param),
            ),
            Block::note(format!(
                "{} threads, {} core(s); other parameters fixed",
                sweep.threads, sweep.cores
            )),
            Block::div("charts", figures),
            Block::Table(Table {
                attrs: Attrs::class("sweep"),
                head,
                rows,
            }),
        ],
    )
}

/// The group's title: its file (or hot path) and what sets it apart.
pub fn title(g: &Group<'_>) -> String {
    if g.label.is_empty() {
        g.title_name().to_owned()
    } else {
        format!("{} ({})", g.title_name(), g.label)
    }
}

/// A group of cells.
pub fn group(g: &Group<'_>, view: View<'_>) -> Block {
    let mut blocks = vec![Block::heading(3, title(g))];
    match view {
        View::Page(prefix) => {
            let params: Vec<String> = g
                .params
                .iter()
                .map(|(k, v)| format!("{k}={}", value_text(v)))
                .collect();
            blocks.push(Block::note(format!("parameters: {}", params.join(" "))));
            if !g.charts.is_empty() {
                blocks.push(Block::div("charts", figures(g, prefix)));
                blocks.extend(advice::section(g));
            }
            blocks.push(Block::heading(4, "Matrix per variant"));
            let tables = variant_tables(
                g,
                "matrix",
                |v| format!("{v} — cores \\ threads"),
                |r| cell::rich(r, prefix),
            );
            blocks.extend(tables.into_iter().map(Block::Table));
            blocks.extend(locks::section(g));
            blocks.extend(server_locks::section(g));
            blocks.extend(time_chart::section(g));
            blocks.extend(diffs(g, prefix));
        }
        View::Digest => {
            blocks.push(Block::Para(text("ops/s [95% interval, or min-max below 6 repetitions] / per-thread ops/s; `*` = more threads than cores.")));
            for table in variant_tables(
                g,
                "matrix",
                |_| "cores \\ threads".to_owned(),
                |r| Cell::of(advice::markdown_cell(r)),
            ) {
                let variant = table.attrs.data[0].1.clone();
                blocks.push(Block::Para(vec![Inline::Bold(text(variant))]));
                blocks.push(Block::Table(table));
            }
            blocks.extend(locks::section(g));
            blocks.extend(server_locks::section(g));
            blocks.extend(advice::section(g));
        }
    }
    Block::section(Attrs::class("scenario").id(&g.slug), blocks)
}

/// The group's charts: throughput, per-thread throughput and extras per core count.
fn figures(g: &Group<'_>, prefix: &str) -> Vec<Block> {
    let mut out = Vec::new();
    for c in &g.charts {
        let extras = c.extras.iter().map(|(label, path)| (path, label.as_str()));
        for (path, what) in [
            (&c.ops, "throughput"),
            (&c.per_thread, "per-thread throughput"),
        ]
        .into_iter()
        .chain(extras)
        {
            out.push(Block::Figure {
                src: format!("{prefix}{path}"),
                alt: format!("{what} against threads, {} core(s)", c.cores),
            });
        }
    }
    out
}

/// The group's differential flamegraphs, one line each.
fn diffs(g: &Group<'_>, prefix: &str) -> Vec<Block> {
    if g.diffs.is_empty() {
        return Vec::new();
    }
    let items = g
        .diffs
        .iter()
        .map(|d| {
            let mut line = vec![
                Inline::Link {
                    href: format!("{prefix}{}", d.svg),
                    class: "diff",
                    text: text(format!(
                        "{}, {} core(s): threads={} vs threads={}",
                        d.variant, d.cores, d.from_threads, d.to_threads
                    )),
                },
                Inline::Text(" ".into()),
                small(format!(
                    "on-CPU, {} vs {} samples{}",
                    d.samples.0,
                    d.samples.1,
                    cell::too_few(d.samples)
                )),
            ];
            if let Some((svg, counts)) = &d.off_cpu {
                line.push(Inline::Text(" · ".into()));
                line.push(Inline::Link {
                    href: format!("{prefix}{svg}"),
                    class: "diff",
                    text: text("off-CPU"),
                });
                line.push(Inline::Text(" ".into()));
                line.push(small(format!(
                    "{} vs {} wait stacks{}",
                    counts.0,
                    counts.1,
                    cell::too_few(*counts)
                )));
            }
            line
        })
        .collect();
    vec![
        Block::heading(
            4,
            "Differential flamegraphs (red: grew with threads, blue: shrank)",
        ),
        Block::List(Attrs::default(), items),
    ]
}

//! `index.html`'s content: the Findings, how to read the figures, the machines side by
//! side, then per machine its environment, contents and one section per hot path. The
//! page is static, no scripts, no network; every link relative, so it opens from
//! `file://`. `prefix` leads from the page's folder to the project root, because the
//! same page is written to `reports/<id>/` and to `reports/`.
//!
//! Builds blocks only; `markup::Html` lays them out and `style.css` styles them.

use super::markup::{text, Attrs, Block, Cell, Format, Html, Inline, Row, Table, Text};
use super::sections::{self, View};
use super::{findings_page, time_chart, Analysed};
use crate::words::{env_rows, retake_lines, si, value_text};

/// The style sheet, inlined into the page so that it opens alone.
const STYLE: &str = include_str!("style.css");

const HOW_TO_READ: &str = "Figures are medians over interleaved repetitions with their 95% confidence interval in brackets (order statistics; with fewer than 6 repetitions no such interval reaches 95%, so min-max is shown and labelled with n); charts draw it as error bars. Efficiency = ops / (min(threads, cores) x ops at 1 thread). Highlighted cells ran more threads than cores. Compare ratios within one run; this machine is noisy.";

/// The whole page. `runs` lists earlier reports (for `reports/index.html`).
pub fn page(analysed: &[Analysed<'_>], prefix: &str, runs: Option<&[String]>) -> String {
    let ids: Vec<&str> = analysed
        .iter()
        .map(|a| a.source.results.run_id.as_str())
        .collect();
    let title = format!("contention-lab report {}", ids.join(", "));
    let mut blocks = vec![
        Block::heading(1, &title),
        findings_page::section(analysed, prefix, 2),
        Block::Para(text(HOW_TO_READ)),
    ];
    if analysed.len() > 1 {
        blocks.push(side_by_side(analysed));
    }
    blocks.extend(analysed.iter().map(|a| machine(a, prefix)));
    if let Some(runs) = runs {
        blocks.push(Block::heading(2, "All reports"));
        let links = runs
            .iter()
            .map(|id| {
                vec![Inline::Link {
                    href: format!("{id}/index.html"),
                    class: "",
                    text: text(id),
                }]
            })
            .collect();
        blocks.push(Block::List(Attrs::default(), links));
    }
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>\n{STYLE}</style></head><body>\n{}</body></html>\n",
        super::markup::esc(&title),
        Html.blocks(&blocks)
    )
}

/// One table with a column per results file: every cell (scenario file, variant,
/// parameters, threads, cores) present in the first, its ops/s in each, and the ratio to
/// the first. Cells are matched by what they ran, not by position.
fn side_by_side(analysed: &[Analysed<'_>]) -> Block {
    let mut head: Vec<Cell> = ["scenario file", "variant", "parameters", "threads", "cores"]
        .iter()
        .map(|h| Cell::head(*h))
        .collect();
    head.extend(analysed.iter().map(|a| {
        let e = &a.source.results.env;
        Cell::head(format!(
            "{} ({}, {} CPUs)",
            a.source.results.run_id, e.hostname, e.nproc
        ))
    }));
    let rows = analysed[0]
        .source
        .results
        .cells
        .iter()
        .map(|cell| {
            let label = if cell.scenario_file.is_empty() {
                &cell.hot_path
            } else {
                &cell.scenario_file
            };
            let params: Vec<String> = cell
                .params
                .iter()
                .map(|(k, v)| format!("{k}={}", value_text(v)))
                .collect();
            let mut cells = vec![
                Cell::of(label),
                Cell::of(&cell.variant),
                Cell::text(vec![super::markup::small(params.join(" "))]),
                Cell::of(cell.threads.to_string()),
                Cell::of(cell.cores.to_string()),
            ];
            cells.extend(analysed.iter().map(|a| {
                let other = a
                    .source
                    .results
                    .cells
                    .iter()
                    .find(|c| c.key() == cell.key() && c.scenario_file == cell.scenario_file);
                Cell::of(match other {
                    Some(o) if o.usable() && cell.usable() && cell.ops_per_sec > 0.0 => format!(
                        "{} ({:.2}x)",
                        si(o.ops_per_sec),
                        o.ops_per_sec / cell.ops_per_sec
                    ),
                    Some(o) if o.usable() => si(o.ops_per_sec),
                    Some(_) => "failed".to_owned(),
                    None => "-".to_owned(),
                })
            }));
            Row::from(cells)
        })
        .collect();
    Block::section(
        Attrs::class("side-by-side"),
        vec![
            Block::heading(2, "Side by side"),
            Block::Para(text("ops/s per machine; the ratio is to the first. Different machines differ in more than their CPU count: read it as a shape, not a verdict.")),
            Block::Table(Table {
                attrs: Attrs::class("side-by-side"),
                head,
                rows,
            }),
        ],
    )
}

/// One machine's run: its environment, contents and hot paths.
fn machine(a: &Analysed<'_>, prefix: &str) -> Block {
    let r = &a.source.results;
    let e = &r.env;
    let mut blocks = vec![Block::heading(
        2,
        format!(
            "Run {} on {} ({}, {} CPUs)",
            r.run_id, e.hostname, e.cpu_model, e.nproc
        ),
    )];
    if !r.complete {
        blocks.push(Block::Banner(text(
            "Incomplete: this run was interrupted; only the cells that finished are shown.",
        )));
    }
    if e.debug_build {
        blocks.push(Block::Banner(text(
            "Debug build: these figures are not worth quoting.",
        )));
    }
    let mut reproduce = text("Reproduce: ");
    reproduce.push(Inline::Code(r.command.clone()));
    blocks.push(Block::Para(reproduce));
    blocks.push(environment(a));
    if !r.settings_by_file.is_empty() {
        blocks.push(Block::Para(text("Settings per scenario file:")));
        let lines = r
            .settings_by_file
            .iter()
            .map(|l| vec![Inline::Code(l.clone())])
            .collect();
        blocks.push(Block::List(Attrs::class("settings"), lines));
    }
    let retakes = retake_lines(r);
    if !retakes.is_empty() {
        blocks.push(Block::Para(text(
            "Interference and retakes per scenario file:",
        )));
        let lines = retakes.iter().map(text).collect();
        blocks.push(Block::List(Attrs::class("settings"), lines));
    }
    blocks.push(Block::Nav(contents(a)));
    for hot_path in a.hot_paths() {
        let mut inside = vec![Block::heading(2, &hot_path)];
        inside.extend(
            a.sweeps
                .iter()
                .filter(|s| s.hot_path == hot_path)
                .map(|s| sections::sweep(s, View::Page(prefix))),
        );
        inside.extend(
            a.groups
                .iter()
                .filter(|g| g.hot_path == hot_path)
                .map(|g| sections::group(g, View::Page(prefix))),
        );
        blocks.push(Block::section(
            Attrs::class("hot-path").id(format!("hot-path-{hot_path}")),
            inside,
        ));
    }
    Block::section(Attrs::class("machine"), blocks)
}

/// The environment table: CPU, kernel, toolchain, commit, clock, times and the results
/// file, then the reference loop and retake rows where the file has them.
fn environment(a: &Analysed<'_>) -> Block {
    let r = &a.source.results;
    let e = &r.env;
    let rows = [
        ("CPU", e.cpu_model.clone()),
        ("CPUs available", format!("{} ({})", e.nproc, e.affinity)),
        ("kernel", e.kernel.clone()),
        ("rustc", e.rustc.clone()),
        ("commit", e.git_commit.clone()),
        ("host", e.hostname.clone()),
        ("clock read", time_chart::clock_text(e.clock_read_ns)),
        ("started", r.started.clone()),
        ("finished", r.finished.clone()),
        ("results file", a.source.path.display().to_string()),
    ]
    .into_iter()
    .chain(env_rows(e))
    .map(|(k, v)| Row::from(vec![Cell::head(k), Cell::of(v)]))
    .collect();
    Block::Table(Table {
        attrs: Attrs::class("env"),
        head: Vec::new(),
        rows,
    })
}

/// The contents line: Findings, each hot path, each sweep and each charted group.
fn contents(a: &Analysed<'_>) -> Text {
    let link = |href: String, text: Text| Inline::Link {
        href,
        class: "",
        text,
    };
    let mut links: Vec<Inline> = a
        .hot_paths()
        .iter()
        .map(|h| link(format!("#hot-path-{h}"), vec![Inline::Bold(text(h))]))
        .collect();
    links.extend(a.sweeps.iter().map(|sw| {
        link(
            format!("#sweep-{}-{}", sw.file, sw.param),
            text(format!("{} against {}", sw.file, sw.param)),
        )
    }));
    links.extend(
        a.groups
            .iter()
            .filter(|g| !g.charts.is_empty())
            .map(|g| link(format!("#{}", g.slug), text(sections::title(g)))),
    );
    let mut line = vec![
        Inline::Bold(text("Contents:")),
        Inline::Text(" ".into()),
        link("#findings".into(), text("Findings")),
    ];
    for l in links {
        line.push(Inline::Text(" · ".into()));
        line.push(l);
    }
    line
}

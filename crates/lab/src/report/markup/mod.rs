//! The report's one markup: a section (headings, paragraphs, lists, tables, figures) is
//! built once as [`Block`]s, and each output format is a [`Format`] that lays blocks out
//! ([`Html`] for `index.html`, [`Markdown`] for `summary.md`), as hyperfine's exporters
//! share one table model.
//!
//! This module decides nothing about what a report says; the sections do. A format
//! renders every block it can show and skips what it cannot (Markdown has no figures, no
//! navigation bar and no bars of the time account); classes and ids are hooks for the
//! style sheet (`style.css`) and for links, and Markdown ignores them.

mod html;
mod markdown;

pub use html::{esc, Html};
pub use markdown::Markdown;

use harness::CellRecord;

use super::Group;

/// A piece of running text.
#[derive(Debug, Clone, PartialEq)]
pub enum Inline {
    /// Plain words.
    Text(String),
    /// A name in code type.
    Code(String),
    /// Words that stand out.
    Bold(Vec<Inline>),
    /// Words in small type, e.g. a figure's footnote.
    Small(Vec<Inline>),
    /// A link to `href`, relative to the page.
    Link {
        /// Where it leads.
        href: String,
        /// A class for the style sheet (empty: none).
        class: &'static str,
        /// What it says.
        text: Vec<Inline>,
    },
    /// Words with a class for the style sheet (Markdown shows the words).
    Span {
        /// The class.
        class: String,
        /// The words.
        text: Vec<Inline>,
    },
    /// A line break inside a cell (Markdown: a space).
    Break,
    /// A stacked bar of shares, each (class, share in 0..1, label); Markdown skips it.
    Bar(Vec<(&'static str, f64, &'static str)>),
    /// A square of a class's colour, for a legend; Markdown skips it.
    Swatch(&'static str),
}

/// A run of text.
pub type Text = Vec<Inline>;

/// Plain words as text.
pub fn text(words: impl Into<String>) -> Text {
    vec![Inline::Text(words.into())]
}

/// Words with backquoted names as code spans, as the hot paths write their sentences.
pub fn code_spans(words: &str) -> Text {
    words
        .split('`')
        .enumerate()
        .filter(|(_, part)| !part.is_empty())
        .map(|(i, part)| {
            if i % 2 == 1 {
                Inline::Code(part.to_owned())
            } else {
                Inline::Text(part.to_owned())
            }
        })
        .collect()
}

/// Words in small type.
pub fn small(words: impl Into<String>) -> Inline {
    Inline::Small(text(words))
}

/// One table cell.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Cell {
    /// A heading cell (a row's or a column's name).
    pub header: bool,
    /// A class for the style sheet (empty: none).
    pub class: String,
    /// Columns it spans (0 and 1: one).
    pub span: usize,
    /// What it holds.
    pub text: Text,
}

impl Cell {
    /// A cell of plain words.
    pub fn of(words: impl Into<String>) -> Cell {
        Cell::text(text(words))
    }

    /// A cell of text.
    pub fn text(text: Text) -> Cell {
        Cell {
            text,
            ..Cell::default()
        }
    }

    /// A heading cell of plain words.
    pub fn head(words: impl Into<String>) -> Cell {
        Cell {
            header: true,
            ..Cell::of(words)
        }
    }

    /// The same cell with a class.
    pub fn class(self, class: impl Into<String>) -> Cell {
        Cell {
            class: class.into(),
            ..self
        }
    }
}

/// One table row.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Row {
    /// `data-*` attributes, for scripts and tests that find a row.
    pub data: Vec<(&'static str, String)>,
    /// Its cells.
    pub cells: Vec<Cell>,
}

impl From<Vec<Cell>> for Row {
    fn from(cells: Vec<Cell>) -> Row {
        Row {
            data: Vec::new(),
            cells,
        }
    }
}

/// A table: a heading row, then rows.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Table {
    /// Hooks for the style sheet and links.
    pub attrs: Attrs,
    /// The heading row.
    pub head: Vec<Cell>,
    /// The rows.
    pub rows: Vec<Row>,
}

/// The hooks of a block: a class, an id and `data-*` attributes (Markdown ignores them).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Attrs {
    /// Class (empty: none).
    pub class: String,
    /// Id (empty: none).
    pub id: String,
    /// `data-*` attributes.
    pub data: Vec<(&'static str, String)>,
}

impl Attrs {
    /// Attributes with a class only.
    pub fn class(class: impl Into<String>) -> Attrs {
        Attrs {
            class: class.into(),
            ..Attrs::default()
        }
    }

    /// The same with an id.
    pub fn id(self, id: impl Into<String>) -> Attrs {
        Attrs {
            id: id.into(),
            ..self
        }
    }

    /// The same with a `data-*` attribute.
    pub fn data(mut self, name: &'static str, value: impl Into<String>) -> Attrs {
        self.data.push((name, value.into()));
        self
    }
}

/// One block of a report.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// A heading of level 1 to 4.
    Heading(u8, Text),
    /// A paragraph.
    Para(Text),
    /// A paragraph in small type: how to read what follows.
    Note(Text),
    /// A warning across the page.
    Banner(Text),
    /// A bulleted list.
    List(Attrs, Vec<Text>),
    /// A table.
    Table(Table),
    /// A chart image, `src` relative to the page.
    Figure {
        /// The image.
        src: String,
        /// Its words for who cannot see it.
        alt: String,
    },
    /// Blocks that belong together (HTML: a `<section>`, or a `<div>` with `div`).
    Group {
        /// Hooks.
        attrs: Attrs,
        /// A `<div>` rather than a `<section>`.
        div: bool,
        /// The blocks.
        blocks: Vec<Block>,
    },
    /// Blocks folded away under a summary line.
    Details(String, Vec<Block>),
    /// A line of links between parts of the page; Markdown skips it.
    Nav(Text),
}

impl Block {
    /// A `<section>` of `blocks`.
    pub fn section(attrs: Attrs, blocks: Vec<Block>) -> Block {
        Block::Group {
            attrs,
            div: false,
            blocks,
        }
    }

    /// A `<div>` of `blocks`.
    pub fn div(class: &str, blocks: Vec<Block>) -> Block {
        Block::Group {
            attrs: Attrs::class(class),
            div: true,
            blocks,
        }
    }

    /// A heading of plain words.
    pub fn heading(level: u8, words: impl Into<String>) -> Block {
        Block::Heading(level, text(words))
    }

    /// A small-type paragraph of plain words.
    pub fn note(words: impl Into<String>) -> Block {
        Block::Note(text(words))
    }
}

/// An output format: lays text and blocks out.
pub trait Format {
    /// Appends `text`.
    fn text(&self, out: &mut String, text: &[Inline]);

    /// Appends one block.
    fn block(&self, out: &mut String, block: &Block);

    /// The blocks laid out, one after the other.
    fn blocks(&self, blocks: &[Block]) -> String {
        let mut out = String::new();
        for b in blocks {
            self.block(&mut out, b);
        }
        out
    }
}

/// One table per variant of `g` (rows = cores, columns = threads), with class `class`;
/// `cell` gives each cell from the cell's record, if the matrix has one. `corner` heads
/// the first column.
pub fn variant_tables(
    g: &Group<'_>,
    class: &str,
    corner: impl Fn(&str) -> String,
    mut cell: impl FnMut(Option<&CellRecord>) -> Cell,
) -> Vec<Table> {
    g.variants
        .iter()
        .map(|variant| {
            let mut head = vec![Cell::head(corner(variant))];
            head.extend(g.threads.iter().map(|t| Cell::head(t.to_string())));
            let rows = g
                .cores
                .iter()
                .map(|&c| {
                    let mut cells = vec![Cell::head(c.to_string())];
                    cells.extend(g.threads.iter().map(|&t| cell(g.cell(variant, t, c))));
                    Row::from(cells)
                })
                .collect();
            Table {
                attrs: Attrs::class(class).data("variant", variant.clone()),
                head,
                rows,
            }
        })
        .collect()
}

/// A latency in the unit that keeps it short: `750 ns`, `1.2 µs`, `3.40 ms`, `1.00 s`.
pub fn nanos(ns: f64) -> String {
    match ns {
        n if n >= 1e9 => format!("{:.2} s", n / 1e9),
        n if n >= 1e6 => format!("{:.2} ms", n / 1e6),
        n if n >= 1e3 => format!("{:.1} µs", n / 1e3),
        n => format!("{n:.0} ns"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_section_two_formats() {
        let blocks = vec![
            Block::heading(3, "Lock table"),
            Block::Para(code_spans("a `b` c")),
            Block::List(Attrs::class("x"), vec![text("one")]),
            Block::Table(Table {
                attrs: Attrs::class("t"),
                head: vec![Cell::head("a"), Cell::head("b")],
                rows: vec![Row::from(vec![Cell::of("1|2"), Cell::of("<3>")])],
            }),
            Block::Figure {
                src: "c.svg".into(),
                alt: "chart".into(),
            },
        ];
        let html = Html.blocks(&blocks);
        assert!(html.contains("<h3>Lock table</h3>"), "{html}");
        assert!(html.contains("<p>a <code>b</code> c</p>"), "{html}");
        assert!(html.contains("<ul class=\"x\">\n<li>one</li>"), "{html}");
        assert!(html.contains("<td>&lt;3&gt;</td>"), "{html}");
        assert!(html.contains("<img src=\"c.svg\" alt=\"chart\">"), "{html}");
        let md = Markdown.blocks(&blocks);
        assert_eq!(
            md,
            "### Lock table\n\na `b` c\n\n- one\n\n| a | b |\n|---|---|\n| 1/2 | <3> |\n\n"
        );
    }

    #[test]
    fn latencies_in_a_short_unit() {
        assert_eq!(nanos(750.0), "750 ns");
        assert_eq!(nanos(1_240.0), "1.2 µs");
        assert_eq!(nanos(3_400_000.0), "3.40 ms");
        assert_eq!(nanos(2e9), "2.00 s");
    }
}

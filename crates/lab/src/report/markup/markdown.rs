//! [`Format`] for `summary.md`: GitHub Markdown for pasting into an issue or a pull
//! request. Text is written as it is (the lab's words carry no Markdown of their own);
//! what Markdown cannot show (figures, navigation, bars) is left out.

use std::fmt::Write;

use super::{Block, Cell, Format, Inline, Table};

/// Lays blocks out as Markdown.
pub struct Markdown;

impl Markdown {
    /// A cell's words on one line, with no `|` to break the table.
    fn cell(&self, c: &Cell) -> String {
        let mut s = String::new();
        self.text(&mut s, &c.text);
        s.replace('|', "/").replace('\n', " ")
    }

    fn table(&self, out: &mut String, t: &Table) {
        let row = |cells: &[Cell]| -> String {
            let mut words = Vec::new();
            for c in cells {
                words.push(self.cell(c));
                words.extend((1..c.span).map(|_| String::new()));
            }
            format!("| {} |", words.join(" | "))
        };
        let _ = writeln!(out, "{}", row(&t.head));
        let _ = writeln!(out, "|{}", "---|".repeat(t.head.len()));
        for r in &t.rows {
            let _ = writeln!(out, "{}", row(&r.cells));
        }
        out.push('\n');
    }
}

impl Format for Markdown {
    fn text(&self, out: &mut String, text: &[Inline]) {
        for i in text {
            match i {
                Inline::Text(t) => out.push_str(t),
                Inline::Code(t) => {
                    let _ = write!(out, "`{t}`");
                }
                Inline::Bold(t) => {
                    out.push_str("**");
                    self.text(out, t);
                    out.push_str("**");
                }
                Inline::Small(t) | Inline::Span { text: t, .. } | Inline::Link { text: t, .. } => {
                    self.text(out, t)
                }
                Inline::Break => out.push(' '),
                Inline::Bar(_) | Inline::Swatch(_) => {}
            }
        }
    }

    fn block(&self, out: &mut String, block: &Block) {
        match block {
            Block::Heading(level, t) => {
                out.push_str(&"#".repeat(usize::from(*level)));
                out.push(' ');
                self.text(out, t);
                out.push_str("\n\n");
            }
            Block::Para(t) | Block::Note(t) => {
                self.text(out, t);
                out.push_str("\n\n");
            }
            Block::Banner(t) => {
                out.push_str("**");
                self.text(out, t);
                out.push_str("**\n\n");
            }
            Block::List(_, items) => {
                for item in items {
                    out.push_str("- ");
                    self.text(out, item);
                    out.push('\n');
                }
                if !items.is_empty() {
                    out.push('\n');
                }
            }
            Block::Table(t) => self.table(out, t),
            Block::Group { blocks, .. } | Block::Details(_, blocks) => {
                for b in blocks {
                    self.block(out, b);
                }
            }
            Block::Figure { .. } | Block::Nav(_) => {}
        }
    }
}

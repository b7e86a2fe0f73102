//! [`Format`] for `index.html`: static HTML, every text escaped, classes and ids kept as
//! hooks for the style sheet and for links. Not the page around the blocks (`page`).

use std::fmt::Write;

use super::{Attrs, Block, Cell, Format, Inline, Table};

/// Lays blocks out as HTML.
pub struct Html;

/// `text` safe inside HTML text and attribute values.
pub fn esc(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// ` class="x" id="y" data-z="w"`, leaving out what is empty.
fn attrs(a: &Attrs) -> String {
    let mut out = String::new();
    if !a.class.is_empty() {
        let _ = write!(out, " class=\"{}\"", esc(&a.class));
    }
    for (name, value) in &a.data {
        let _ = write!(out, " data-{name}=\"{}\"", esc(value));
    }
    if !a.id.is_empty() {
        let _ = write!(out, " id=\"{}\"", esc(&a.id));
    }
    out
}

fn class(class: &str) -> String {
    if class.is_empty() {
        String::new()
    } else {
        format!(" class=\"{}\"", esc(class))
    }
}

impl Html {
    fn inline(&self, out: &mut String, i: &Inline) {
        match i {
            Inline::Text(t) => out.push_str(&esc(t)),
            Inline::Code(t) => {
                let _ = write!(out, "<code>{}</code>", esc(t));
            }
            Inline::Bold(t) => self.wrap(out, "b", "", t),
            Inline::Small(t) => self.wrap(out, "small", "", t),
            Inline::Span { class, text } => self.wrap(out, "span", class, text),
            Inline::Link {
                href,
                class: c,
                text,
            } => {
                let _ = write!(out, "<a{} href=\"{}\">", class(c), esc(href));
                self.text(out, text);
                out.push_str("</a>");
            }
            Inline::Break => out.push_str("<br>"),
            Inline::Bar(parts) => {
                out.push_str("<div class=\"time-bar\">");
                for (c, share, label) in parts.iter().filter(|p| p.1 > 0.0) {
                    let _ = write!(
                        out,
                        "<span class=\"{c}\" style=\"width:{:.2}%\" title=\"{label} {:.0}%\"></span>",
                        share * 100.0,
                        share * 100.0
                    );
                }
                out.push_str("</div>");
            }
            Inline::Swatch(c) => {
                let _ = write!(out, "<span class=\"swatch {c}\"></span>");
            }
        }
    }

    fn wrap(&self, out: &mut String, tag: &str, c: &str, text: &[Inline]) {
        let _ = write!(out, "<{tag}{}>", class(c));
        self.text(out, text);
        let _ = write!(out, "</{tag}>");
    }

    fn cell(&self, out: &mut String, c: &Cell) {
        let tag = if c.header { "th" } else { "td" };
        let span = if c.span > 1 {
            format!(" colspan=\"{}\"", c.span)
        } else {
            String::new()
        };
        let _ = write!(out, "<{tag}{}{span}>", class(&c.class));
        self.text(out, &c.text);
        let _ = write!(out, "</{tag}>");
    }

    fn table(&self, out: &mut String, t: &Table) {
        let _ = write!(out, "<table{}>", attrs(&t.attrs));
        if !t.head.is_empty() {
            out.push_str("<tr>");
            for c in &t.head {
                self.cell(out, c);
            }
            out.push_str("</tr>\n");
        }
        for row in &t.rows {
            let data = Attrs {
                data: row.data.clone(),
                ..Attrs::default()
            };
            let _ = write!(out, "<tr{}>", attrs(&data));
            for c in &row.cells {
                self.cell(out, c);
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</table>\n");
    }
}

impl Format for Html {
    fn text(&self, out: &mut String, text: &[Inline]) {
        for i in text {
            self.inline(out, i);
        }
    }

    fn block(&self, out: &mut String, block: &Block) {
        match block {
            Block::Heading(level, t) => {
                let _ = write!(out, "<h{level}>");
                self.text(out, t);
                let _ = writeln!(out, "</h{level}>");
            }
            Block::Para(t) => {
                out.push_str("<p>");
                self.text(out, t);
                out.push_str("</p>\n");
            }
            Block::Note(t) => {
                out.push_str("<p><small>");
                self.text(out, t);
                out.push_str("</small></p>\n");
            }
            Block::Banner(t) => {
                out.push_str("<div class=\"banner\">");
                self.text(out, t);
                out.push_str("</div>\n");
            }
            Block::List(a, items) => {
                let _ = writeln!(out, "<ul{}>", attrs(a));
                for item in items {
                    out.push_str("<li>");
                    self.text(out, item);
                    out.push_str("</li>\n");
                }
                out.push_str("</ul>\n");
            }
            Block::Table(t) => self.table(out, t),
            Block::Figure { src, alt } => {
                let _ = writeln!(
                    out,
                    "<figure class=\"chart\"><img src=\"{}\" alt=\"{}\"></figure>",
                    esc(src),
                    esc(alt)
                );
            }
            Block::Group {
                attrs: a,
                div,
                blocks,
            } => {
                let tag = if *div { "div" } else { "section" };
                let _ = writeln!(out, "<{tag}{}>", attrs(a));
                for b in blocks {
                    self.block(out, b);
                }
                let _ = writeln!(out, "</{tag}>");
            }
            Block::Details(summary, blocks) => {
                let _ = writeln!(out, "<details><summary>{}</summary>", esc(summary));
                for b in blocks {
                    self.block(out, b);
                }
                out.push_str("</details>\n");
            }
            Block::Nav(t) => {
                out.push_str("<nav>");
                self.text(out, t);
                out.push_str("</nav>\n");
            }
        }
    }
}

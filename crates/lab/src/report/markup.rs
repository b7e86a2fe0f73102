//! HTML pieces every part of the page shares: escaping text, and the per-variant table of
//! cores x threads that both the matrix and the time account draw. What goes in a cell is
//! the caller's; this module only lays the cells out.

use std::fmt::Write;

use harness::RunRecord;

use super::Group;

/// `text` safe inside HTML text and attribute values.
pub fn esc(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// One table per variant of `g` (rows = cores, columns = threads), with class `class`;
/// `cell` writes each `<td>` from the cell's record, if the matrix has one.
pub fn variant_tables(
    out: &mut String,
    g: &Group<'_>,
    class: &str,
    mut cell: impl FnMut(&mut String, Option<&RunRecord>),
) {
    for variant in &g.variants {
        let _ = write!(
            out,
            "<table class=\"{class}\" data-variant=\"{}\"><tr><th>{} — cores \\ threads</th>",
            esc(variant),
            esc(variant)
        );
        for t in &g.threads {
            let _ = write!(out, "<th>{t}</th>");
        }
        out.push_str("</tr>\n");
        for &c in &g.cores {
            let _ = write!(out, "<tr><th>{c}</th>");
            for &t in &g.threads {
                cell(out, g.cell(variant, t, c));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</table>\n");
    }
}

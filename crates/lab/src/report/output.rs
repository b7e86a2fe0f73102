//! The charts writer: draws every [`Placed`] drawing of the analysis in parallel with
//! rayon and writes it, into the report's (staging) `charts/` folder or beside its
//! profile under the project root. Decides nothing; the pages are other writers.

use std::path::Path;

use anyhow::Context;
use rayon::prelude::*;

use super::drawing::{Place, Placed};

/// Draws `drawings` and writes each one (creating its folder); the first error names
/// the file.
pub fn write_all(drawings: &[&Placed], root: &Path, charts: &Path) -> anyhow::Result<()> {
    drawings.par_iter().try_for_each(|p| -> anyhow::Result<()> {
        let path = match &p.place {
            Place::Chart(name) => charts.join(name),
            Place::Root(rel) => root.join(rel),
        };
        let bytes = p
            .drawing
            .draw(root)
            .with_context(|| format!("cannot draw {}", path.display()))?;
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        std::fs::write(&path, bytes).with_context(|| format!("cannot write {}", path.display()))
    })
}

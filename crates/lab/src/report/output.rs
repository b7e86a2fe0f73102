//! The one place a report writes files: analysis queues each chart or flamegraph as a
//! pending file (a path and the work that draws it), and [`Outputs::write_all`] draws them
//! in parallel with rayon and writes them.
//!
//! It is not where the pages are written (`render` writes `index.html`, `summary.md` and
//! `cells.csv` after every chart has been drawn), nor where anything is decided.

use std::path::PathBuf;

use anyhow::Context;
use rayon::prelude::*;

type Draw = Box<dyn FnOnce() -> anyhow::Result<Vec<u8>> + Send>;

/// Files waiting to be drawn and written.
#[derive(Default)]
pub struct Outputs {
    pending: Vec<(PathBuf, Draw)>,
}

impl Outputs {
    /// Queues `path`, whose contents `draw` produces when [`Outputs::write_all`] runs.
    pub fn add(
        &mut self,
        path: PathBuf,
        draw: impl FnOnce() -> anyhow::Result<Vec<u8>> + Send + 'static,
    ) {
        self.pending.push((path, Box::new(draw)));
    }

    /// Draws every queued file in parallel and writes it (creating its folder); the first
    /// error names the file.
    pub fn write_all(self) -> anyhow::Result<()> {
        self.pending
            .into_par_iter()
            .try_for_each(|(path, draw)| -> anyhow::Result<()> {
                let bytes = draw().with_context(|| format!("cannot draw {}", path.display()))?;
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent)
                        .with_context(|| format!("cannot create {}", parent.display()))?;
                }
                std::fs::write(&path, bytes)
                    .with_context(|| format!("cannot write {}", path.display()))
            })
    }
}

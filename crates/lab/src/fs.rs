//! File writes that readers may race: the results file and the report's `index.html`.
//!
//! Only the atomic replace lives here; what is written, and where, is the caller's
//! business (`matrix` for results, `report` for pages).

use std::path::{Path, PathBuf};

use anyhow::Context;

/// Writes `bytes` to a temporary file beside `path`, flushes it to disk, then renames it
/// into place, so a reader never sees half a file and an interrupted write leaves the old
/// one.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp: PathBuf = dir.join(format!(
        ".{}.tmp-{}",
        path.file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default(),
        std::process::id()
    ));
    let write = || -> std::io::Result<()> {
        use std::io::Write;
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(bytes)?;
        // On disk before the rename, so a machine that loses power keeps the old file or
        // the new one, never an empty one.
        file.sync_all()
    };
    write().with_context(|| {
        let _ = std::fs::remove_file(&tmp);
        format!("cannot write {}", tmp.display())
    })?;
    std::fs::rename(&tmp, path).with_context(|| {
        let _ = std::fs::remove_file(&tmp);
        format!("cannot move the results into {}", path.display())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_file_and_leaves_no_temporary_behind() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.json");
        std::fs::write(&path, "old").unwrap();
        write_atomically(&path, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }
}

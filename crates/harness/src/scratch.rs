//! Private temporary folders for the databases a hot path builds: made under a folder the
//! user may choose (`data_dir`), removed when dropped, whatever way the run ended.

use std::path::Path;

use tempfile::TempDir;

/// A fresh private folder named `<prefix>XXXXXX` under `data_dir`, or under the system's
/// temporary folder when `data_dir` is `None`.
pub fn private_folder(data_dir: Option<&Path>, prefix: &str) -> Result<TempDir, String> {
    let mut builder = tempfile::Builder::new();
    builder.prefix(prefix);
    match data_dir {
        Some(dir) => builder.tempdir_in(dir),
        None => builder.tempdir(),
    }
    .map_err(|e| {
        let place = data_dir.map_or("the system temporary folder".to_owned(), |d| {
            d.display().to_string()
        });
        format!("data_dir: cannot create a temporary folder in {place}: {e}")
    })
}

/// Checks a `data_dir` parameter up front (empty means the system's folder): one line
/// naming the value and what is accepted when a folder cannot be made there.
pub fn check_data_dir(value: &str) -> Result<(), String> {
    if value.is_empty() {
        return Ok(());
    }
    private_folder(Some(Path::new(value)), "contention-lab-check-").map(drop).map_err(|e| {
        format!("data_dir={value:?}: cannot create a temporary folder there ({e}); accepted: an existing, writable folder")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_are_private_and_go_away() {
        let parent = tempfile::tempdir().unwrap();
        let folder = private_folder(Some(parent.path()), "x-").unwrap();
        let path = folder.path().to_path_buf();
        assert!(path.is_dir() && path.starts_with(parent.path()));
        drop(folder);
        assert!(!path.exists());
        assert_eq!(check_data_dir(parent.path().to_str().unwrap()), Ok(()));
        assert_eq!(
            std::fs::read_dir(parent.path()).unwrap().count(),
            0,
            "the check leaves nothing"
        );
        let err = check_data_dir("/proc/nope").unwrap_err();
        assert!(
            err.starts_with("data_dir=\"/proc/nope\"") && err.contains("writable folder"),
            "{err}"
        );
        assert_eq!(check_data_dir(""), Ok(()));
    }
}

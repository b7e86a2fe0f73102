//! Prepared folders ("images"): a server's data built once and used, or copied, by
//! every cell, because building is slow (ns-slapd's offline import of 10,000 entries took
//! 23 s here, most of it asleep) and a cell's window is under a second.
//!
//! An image is kept in the user's cache, `$XDG_CACHE_HOME/contention-lab/<shelf>`
//! (else `~/.cache/...`, else the temporary folder) under a name its caller makes, e.g.
//! `<variant>-<binary>-u<users>-g<groups>` for the ldap hot path's directories: a cache
//! meant to outlive runs, so not among a run's scratch folders in the temporary folder,
//! where `<binary>` fingerprints the server executable (size and modification time), so
//! an upgraded package builds a new one and the old one of that variant is removed then.
//! It is built in a private folder named with the builder's pid (swept by
//! [`harness::scratch::sweep_stale`] if the builder died) and renamed into place, so a
//! cell never sees half an image and two builders at once both finish (the second
//! rename loses and its copy is dropped). An image is never started: each cell starts
//! its own copy. This module knows nothing of any server's files.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The file in an image naming the folder it was built in, so that a copy can rewrite
/// absolute paths in its configuration to its own folder.
const ROOT_FILE: &str = "image-root";
/// Part of every image's name, changed when what an image holds changes, so that
/// an older image is rebuilt rather than used (and then removed as superseded). l3: the
/// marker files were renamed from `template-*` to `image-*`.
pub const LAYOUT: &str = "l3";

/// Present once an image is complete.
const READY_FILE: &str = "image-ready";

/// Where images of `shelf` are kept: the user's cache folder, which outlives runs by
/// design (the temporary folder holds only what a run removes when it ends).
pub fn cache_dir(shelf: &str) -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".cache"))
        })
        // No home at all: a cache folder of its own beside the scratch folders.
        .unwrap_or_else(|| std::env::temp_dir().join("contention-lab-cache"));
    base.join("contention-lab").join(shelf)
}

/// A short fingerprint of an executable: its size and modification time.
pub fn fingerprint(program: &Path) -> String {
    let m = std::fs::metadata(program).ok();
    let (size, mtime) = m.map_or((0, 0), |m| (m.size(), m.mtime()));
    format!("{:x}", size.wrapping_mul(1_000_003) ^ mtime as u64)
}

/// The image `name` on `shelf` (variant, fingerprint, sizes), built by `build` into
/// an empty folder if it is not there yet. `variant` prefixes the name; other images
/// of the same variant and sizes (what follows `-u`) but another fingerprint are removed.
pub fn ensure(
    shelf: &str,
    variant: &str,
    name: &str,
    build: impl FnOnce(&Path) -> Result<(), String>,
) -> Result<PathBuf, String> {
    ensure_in(&cache_dir(shelf), variant, name, build)
}

/// [`ensure`] on the shelf folder `dir`.
fn ensure_in(
    dir: &Path,
    variant: &str,
    name: &str,
    build: impl FnOnce(&Path) -> Result<(), String>,
) -> Result<PathBuf, String> {
    let dir = dir.to_path_buf();
    let target = dir.join(name);
    if target.join(READY_FILE).is_file() {
        return Ok(target);
    }
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    harness::scratch::sweep_stale(&dir);
    let building = harness::scratch::private_folder(Some(&dir), "contention-lab-build-")?;
    build(building.path())?;
    std::fs::write(
        building.path().join(ROOT_FILE),
        building.path().as_os_str().as_encoded_bytes(),
    )
    .map_err(|e| e.to_string())?;
    std::fs::write(building.path().join(READY_FILE), b"").map_err(|e| e.to_string())?;
    let built = building.keep();
    if target.is_dir() && !target.join(READY_FILE).is_file() {
        // Images are only ever renamed into place whole, so a folder there without the
        // marker was left by an older layout under the same name: it can never become
        // ready, and would refuse every rename after ours.
        let _ = std::fs::remove_dir_all(&target);
    }
    if std::fs::rename(&built, &target).is_err() {
        // Another builder got there first; its image is as good as ours.
        let _ = std::fs::remove_dir_all(&built);
        if !target.join(READY_FILE).is_file() {
            return Err(format!("cannot place the image at {}", target.display()));
        }
    }
    remove_superseded(&dir, variant, name);
    Ok(target)
}

/// Removes images of `variant` with the same sizes as `name` but another fingerprint.
fn remove_superseded(dir: &Path, variant: &str, name: &str) {
    let sizes = |n: &str| n.split_once("-u").map(|(_, s)| s.to_owned());
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let other = entry.file_name().to_string_lossy().into_owned();
        let same_variant = other.starts_with(&format!("{variant}-"));
        if other != name && same_variant && sizes(&other) == sizes(name) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Copies `image` into `into` (which exists and is empty) and rewrites, in each of
/// `config_files` (relative paths), the folder the image was built in to `into`
/// (LDIF files are unfolded first).
pub fn copy_into(image: &Path, into: &Path, config_files: &[&str]) -> Result<(), String> {
    copy_tree(image, into).map_err(|e| {
        format!(
            "cannot copy the image {} to {}: {e}",
            image.display(),
            into.display()
        )
    })?;
    let old = std::fs::read_to_string(image.join(ROOT_FILE)).map_err(|e| e.to_string())?;
    let new = into.to_string_lossy();
    for file in config_files {
        let path = into.join(file);
        let mut text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        if file.ends_with(".ldif") {
            // ns-slapd folds long values at 78 columns when it rewrites dse.ldif, paths
            // included: unfold (a line starting with one space continues the last).
            text = text.replace("\n ", "");
        }
        std::fs::write(&path, text.replace(old.as_str(), &new))
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// The files under `image` (relative paths) that are small text naming the folder it
/// was built in: what [`copy_into`] must rewrite for a server whose configuration is not
/// known to the caller.
pub fn naming_files(image: &Path) -> Vec<String> {
    let Ok(root) = std::fs::read_to_string(image.join(ROOT_FILE)) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    let mut stack = vec![image.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file()
                && entry.metadata().is_ok_and(|m| m.len() < 1 << 20)
                && entry.file_name() != ROOT_FILE
                // LDIF folds long values (paths included) at 78 columns: unfolded first,
                // as `copy_into` does.
                && std::fs::read_to_string(&path)
                    .is_ok_and(|t| t.contains(root.as_str()) || t.replace("\n ", "").contains(root.as_str()))
            {
                if let Ok(rel) = path.strip_prefix(image) {
                    found.push(rel.to_string_lossy().into_owned());
                }
            }
        }
    }
    found.sort();
    found
}

/// Copies the files and folders under `from` into `to` (which exists), keeping their
/// modes; links and other special files are left out.
pub fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let dest = to.join(entry.file_name());
        let kind = entry.file_type()?;
        if kind.is_dir() {
            std::fs::create_dir_all(&dest)?;
            copy_tree(&entry.path(), &dest)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &dest)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_points_at_its_own_folder() {
        let t = tempfile::tempdir().unwrap();
        let image = t.path().join("tpl");
        std::fs::create_dir_all(image.join("config")).unwrap();
        let root = image.to_string_lossy().into_owned();
        std::fs::write(image.join(ROOT_FILE), &root).unwrap();
        std::fs::write(
            image.join("config/x.conf"),
            format!("dir {root}/db\nlog {root}/log\n"),
        )
        .unwrap();
        let into = t.path().join("cell");
        std::fs::create_dir(&into).unwrap();
        assert_eq!(naming_files(&image), vec!["config/x.conf".to_owned()]);
        copy_into(&image, &into, &["config/x.conf"]).unwrap();
        let text = std::fs::read_to_string(into.join("config/x.conf")).unwrap();
        let cell = into.to_string_lossy();
        assert_eq!(text, format!("dir {cell}/db\nlog {cell}/log\n"));
    }

    #[test]
    fn an_unfinished_folder_under_the_name_is_replaced_and_a_ready_image_reused() {
        let shelf = tempfile::tempdir().unwrap();
        // What an older layout's markers leave: a folder of the name, never ready.
        let stale = shelf.path().join("pg-1-u0");
        std::fs::create_dir_all(stale.join("data")).unwrap();
        std::fs::write(stale.join("template-ready"), b"").unwrap();
        let built = ensure_in(shelf.path(), "pg", "pg-1-u0", |d| {
            std::fs::write(d.join("PG_VERSION"), b"15").map_err(|e| e.to_string())
        })
        .unwrap();
        assert!(built.join(READY_FILE).is_file());
        assert!(built.join("PG_VERSION").is_file());
        assert!(
            !built.join("data").exists(),
            "the stale folder's files stayed"
        );
        let again = ensure_in(shelf.path(), "pg", "pg-1-u0", |_| {
            Err("a ready image was built again".to_owned())
        })
        .unwrap();
        assert_eq!(again, built);
        // The superseded fingerprint of the same variant and sizes goes.
        let newer = ensure_in(shelf.path(), "pg", "pg-2-u0", |_| Ok(())).unwrap();
        assert!(newer.is_dir());
        assert!(!built.exists(), "the superseded image is left");
    }
}

//! Private temporary folders for the databases a hot path builds, and the rules that keep
//! them from outliving their run.
//!
//! Every folder made here is named `contention-lab-<what>-p<pid>-XXXXXX`, where `<pid>` is
//! the process that made it, so that a later run can tell a folder whose owner is gone
//! (killed with SIGKILL, machine rebooted) from one still in use ([`sweep_stale`]).
//! A folder is removed when its [`TempDir`] is dropped; a process that is killed never
//! drops it, which is why `lab matrix` makes a folder per child itself, passes it in
//! through [`SCRATCH_ENV`] and removes it after the child ends, however it ended.
//!
//! This module does not choose where a user's `data_dir` points; it only makes and
//! removes folders inside it.

use std::path::{Path, PathBuf};

use tempfile::TempDir;

use crate::params::{ParamKind, ParamSpec, Params};

/// The environment variable through which `lab matrix` hands a child the folder it owns:
/// with it set, folders that would go to the system's temporary folder go inside it.
pub const SCRATCH_ENV: &str = "CONTENTION_LAB_SCRATCH";

/// The start of every folder name this module makes.
pub const FOLDER_PREFIX: &str = "contention-lab-";

/// The `data_dir` parameter of a hot path that keeps files on disk, declared once so that
/// every such hot path words it alike and reads empty text the same way ([`data_dir`]).
pub const DATA_DIR: ParamSpec = ParamSpec {
    name: "data_dir",
    kind: ParamKind::Text,
    default: "",
    help: "where the private temporary folder is made (empty: the system's)",
};

/// The folder a hot path's [`DATA_DIR`] parameter names, `None` when it is empty: then
/// [`private_folder`] uses [`default_parent`].
pub fn data_dir(params: &Params) -> Option<&Path> {
    params.path(DATA_DIR.name)
}

/// Where a private folder goes when the user gave no `data_dir`: the folder `lab matrix`
/// passed in through [`SCRATCH_ENV`], else the system's temporary folder.
pub fn default_parent() -> PathBuf {
    match std::env::var_os(SCRATCH_ENV) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => std::env::temp_dir(),
    }
}

/// A fresh private folder named `<prefix>p<pid>-XXXXXX` under `data_dir`, or under
/// [`default_parent`] when `data_dir` is `None`.
pub fn private_folder(data_dir: Option<&Path>, prefix: &str) -> Result<TempDir, String> {
    let parent = match data_dir {
        Some(dir) => dir.to_path_buf(),
        None => default_parent(),
    };
    tempfile::Builder::new()
        .prefix(&format!("{prefix}p{}-", std::process::id()))
        .tempdir_in(&parent)
        .map_err(|e| {
            let place = match data_dir {
                Some(d) => d.display().to_string(),
                None => format!("the temporary folder {}", parent.display()),
            };
            format!("data_dir: cannot create a temporary folder in {place}: {e}")
        })
}

/// Checks a `data_dir` parameter up front (empty means the system's folder): one line
/// naming the value and what is accepted when a folder cannot be made there.
pub fn check_data_dir(value: &str) -> Result<(), String> {
    if value.is_empty() {
        return Ok(());
    }
    let prefix = format!("contention-lab-check-p{}-", std::process::id());
    tempfile::Builder::new()
        .prefix(&prefix)
        .tempdir_in(value)
        .map(drop)
        .map_err(|e| {
            // The OS's reason only: tempfile's message repeats the path it tried, which
            // the value already names.
            let reason = e.raw_os_error().map_or_else(
                || e.kind().to_string(),
                |code| std::io::Error::from_raw_os_error(code).to_string(),
            );
            format!("data_dir={value:?}: cannot create a temporary folder there ({reason}); accepted: an existing, writable folder")
        })
}

/// The process that made a folder named by this module, read from its `p<pid>` part;
/// `None` for any other name (including folders of older builds, which carried no pid).
pub fn owner_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(FOLDER_PREFIX)?;
    // The random tail that tempfile appends is the last part; the marker comes before it.
    let (marked, _random) = rest.rsplit_once('-')?;
    marked
        .split('-')
        .find_map(|part| part.strip_prefix('p')?.parse::<u32>().ok())
}

/// Whether a process with this id exists (Linux: its `/proc` entry).
pub fn process_alive(pid: u32) -> bool {
    Path::new("/proc").join(pid.to_string()).exists()
}

/// Removes the folders under `dir` made by this module whose owning process is gone, and
/// returns them. Folders of live processes and folders without an owner are left alone:
/// they may belong to a run in progress.
pub fn sweep_stale(dir: &Path) -> Vec<PathBuf> {
    remove_matching(dir, |pid| !process_alive(pid))
}

/// Removes the folders under `dir` made by process `pid` (a child that has ended), and
/// returns them.
pub fn remove_owned_by(dir: &Path, pid: u32) -> Vec<PathBuf> {
    remove_matching(dir, |owner| owner == pid)
}

fn remove_matching(dir: &Path, remove: impl Fn(u32) -> bool) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(owner_pid) else {
            continue;
        };
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if is_dir && remove(pid) && std::fs::remove_dir_all(entry.path()).is_ok() {
            removed.push(entry.path());
        }
    }
    removed
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

    #[test]
    fn folder_names_carry_their_owner() {
        let parent = tempfile::tempdir().unwrap();
        let folder = private_folder(Some(parent.path()), "contention-lab-sqlmix-").unwrap();
        let name = folder.path().file_name().unwrap().to_str().unwrap();
        assert_eq!(owner_pid(name), Some(std::process::id()), "{name}");
        assert_eq!(owner_pid("contention-lab-p42-p9x8Yz"), Some(42));
        assert_eq!(owner_pid("contention-lab-lease-p7-abcdef"), Some(7));
        assert_eq!(owner_pid("contention-lab-sqlmix-p1234x"), None, "old name");
        assert_eq!(owner_pid("contention-lab-sqlmix-abc123"), None, "old name");
        assert_eq!(owner_pid("something-else-p3-abcdef"), None);
    }

    #[test]
    fn sweeping_removes_only_folders_whose_owner_is_gone() {
        let parent = tempfile::tempdir().unwrap();
        let mine = private_folder(Some(parent.path()), "contention-lab-x-").unwrap();
        // A pid above the kernel's limit (4194304) never belongs to a live process.
        let dead = parent.path().join("contention-lab-x-p4999999-abcdef");
        let unowned = parent.path().join("contention-lab-sqlmix-abcdef");
        let other = parent.path().join("unrelated-p4999999-abcdef");
        for dir in [&dead, &unowned, &other] {
            std::fs::create_dir_all(dir.join("inner")).unwrap();
        }
        assert_eq!(sweep_stale(parent.path()), vec![dead.clone()]);
        assert!(mine.path().is_dir() && unowned.is_dir() && other.is_dir());
        assert!(!dead.exists());

        let removed = remove_owned_by(parent.path(), std::process::id());
        assert_eq!(removed, vec![mine.path().to_path_buf()]);
        assert!(!mine.path().exists());
    }
}

//! Where the project lives: scenario files are read from `<root>/benches`, results go to
//! `<root>/reports` and profiles to `<root>/profiles`.
//!
//! The root is `$LAB_ROOT` when set (tests use it to work in a scratch folder), else the
//! nearest folder at or above the current one holding `benches/` and `Cargo.toml`, else
//! the workspace this binary was built from.

use std::path::{Path, PathBuf};

/// The project root.
pub fn project_root() -> PathBuf {
    if let Some(root) = std::env::var_os("LAB_ROOT") {
        return PathBuf::from(root);
    }
    if let Ok(cwd) = std::env::current_dir() {
        for dir in cwd.ancestors() {
            if dir.join("benches").is_dir() && dir.join("Cargo.toml").is_file() {
                return dir.to_path_buf();
            }
        }
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

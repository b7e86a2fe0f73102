//! Helpers shared by the `lab` integration tests: run the binary against a scratch
//! project root.

use std::path::Path;
use std::process::{Command, Output};

/// Runs `lab` with `args` in `root`, which stands in for the project root.
pub fn lab(root: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lab"))
        .args(args)
        .env("LAB_ROOT", root)
        .env("TMPDIR", private_tmp(root))
        .current_dir(root)
        .output()
        .unwrap()
}

/// A temporary folder of `root`'s own: the machine's matrix lock lives in the temporary
/// folder, and tests' matrices, which run side by side, must not refuse one another.
pub fn private_tmp(root: &Path) -> std::path::PathBuf {
    let tmp = root.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    tmp
}

/// Copies the `.toml` scenario files of the repository into `root/benches`.
pub fn copy_benches(root: &Path) {
    let benches = root.join("benches");
    std::fs::create_dir_all(&benches).unwrap();
    let repo_benches = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../benches");
    for entry in std::fs::read_dir(repo_benches).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            std::fs::copy(&path, benches.join(path.file_name().unwrap())).unwrap();
        }
    }
}

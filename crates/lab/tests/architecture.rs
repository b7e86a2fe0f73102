//! ARCHITECTURE.md stays true to the code where it names modules and paths: every module
//! of `lab` and `verdict` is named there, and every `crates/...` path it gives exists.
//! A module added without a line there, or moved without updating it, fails here.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn design() -> String {
    std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap()
}

/// The modules a crate root declares (`mod x;`, `pub mod x;`, behind a `cfg` or not).
fn modules(lib: &str) -> Vec<String> {
    let text = std::fs::read_to_string(root().join(lib)).unwrap();
    text.lines()
        .filter_map(|l| {
            let l = l.trim();
            let rest = l
                .strip_prefix("pub mod ")
                .or_else(|| l.strip_prefix("mod "))?;
            Some(rest.strip_suffix(';')?.to_owned())
        })
        .collect()
}

#[test]
fn every_module_of_lab_and_verdict_is_named() {
    let design = design();
    for lib in ["crates/lab/src/lib.rs", "crates/verdict/src/lib.rs"] {
        let mods = modules(lib);
        assert!(mods.len() >= 5, "{lib}: {mods:?}");
        for m in mods {
            assert!(
                design.contains(&format!("`{m}`")) || design.contains(&format!("`{m}/`")),
                "ARCHITECTURE.md does not name module `{m}` of {lib}"
            );
        }
    }
}

#[test]
fn every_path_it_gives_exists() {
    let design = design();
    let mut checked = 0;
    for word in design.split(|c: char| c.is_whitespace() || c == '`' || c == '(' || c == ')') {
        let path = word.trim_end_matches([',', '.', ';', ':']);
        if !path.starts_with("crates/") || path.contains('<') {
            continue;
        }
        assert!(
            root().join(path).exists(),
            "ARCHITECTURE.md names {path}, which does not exist"
        );
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} paths found");
}

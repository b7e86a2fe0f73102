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

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &Path, into: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, into);
        } else if path.extension().is_some_and(|e| e == "rs") {
            into.push(path);
        }
    }
}

#[test]
fn every_crate_of_the_workspace_is_named() {
    let design = design();
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let members: Vec<&str> = manifest
        .split('"')
        .filter(|w| w.starts_with("crates/"))
        .collect();
    assert!(members.len() >= 9, "{members:?}");
    for m in members {
        assert!(
            design.contains(&format!("{m} ")),
            "ARCHITECTURE.md does not describe the crate {m}"
        );
    }
}

/// The test layout ARCHITECTURE.md gives ("Where tests live"): a module's long tests in a
/// `tests.rs` beside it, never a `*_tests.rs` sibling or a `#[path]` to one.
#[test]
fn tests_live_where_the_layout_says() {
    let mut files = Vec::new();
    rust_files(&root().join("crates"), &mut files);
    assert!(files.len() > 100, "{} files", files.len());
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy();
        assert!(
            !name.ends_with("_tests.rs"),
            "{}: a module's tests go in tests.rs beside it",
            f.display()
        );
        let text = std::fs::read_to_string(f).unwrap();
        assert!(
            !text.lines().any(|l| l.trim_start().starts_with("#[path")),
            "{}: a #[path] module; tests go in tests.rs beside the module",
            f.display()
        );
    }
}

/// The report reads a results file and never the pipeline that wrote it: no module under
/// `report/` names the planner, the matrix's run or the pairs (a report of an old results
/// file must not depend on how today's build would plan or measure it).
#[test]
fn the_report_reads_results_never_the_pipeline() {
    let mut files = Vec::new();
    rust_files(&root().join("crates/lab/src/report"), &mut files);
    assert!(files.len() >= 10, "{files:?}");
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for pipeline in [
            "crate::plan",
            "crate::pairs",
            "crate::matrix",
            "crate::run_cell",
        ] {
            assert!(
                !text.contains(pipeline),
                "{} names {pipeline}: the report reads results only",
                f.display()
            );
        }
    }
}

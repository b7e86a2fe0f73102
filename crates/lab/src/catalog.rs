//! The hot paths this build knows, by name. It only names them; what a matrix runs of
//! each is in its scenario files (`benches/*.toml`, read by `scenario_file`).
//!
//! Adding a hot path: the checklist is ARCHITECTURE.md's "Adding a hot path" (its one
//! copy); here it takes one line in [`hot_paths`]. A test below checks that every hot
//! path here has a scenario file with a `[smoke]` table, that every scenario file names a
//! hot path here, and that ARCHITECTURE.md names every crate of the workspace.

use harness::noop::NoopHotPath;
use harness::HotPath;
use ldap::LdapHotPath;
use lease::LeaseHotPath;
use lookup::LookupHotPath;
use pool::PoolHotPath;
use server::ServerHotPath;
use sqlmix::SqlmixHotPath;
use verdict::Question;

/// Every hot path, in the order `lab list` and reports show them.
pub fn hot_paths() -> &'static [&'static dyn HotPath] {
    &[
        &LookupHotPath,
        &SqlmixHotPath,
        &PoolHotPath,
        &LeaseHotPath,
        &LdapHotPath,
        &ServerHotPath,
        &NoopHotPath,
    ]
}

/// Every hot path with a seed's question, in the order of [`hot_paths`]: the ones whose
/// parts `lab matrix` plans pairs for and whose answers the report shows. Noop has none.
pub fn questions() -> &'static [Question] {
    &[
        lookup::findings::QUESTION,
        sqlmix::findings::QUESTION,
        pool::findings::QUESTION,
        lease::findings::QUESTION,
        ldap::findings::QUESTION,
        server::findings::QUESTION,
    ]
}

/// The hot path called `name`, or an error naming those that exist.
pub fn hot_path(name: &str) -> Result<&'static dyn HotPath, String> {
    hot_paths()
        .iter()
        .copied()
        .find(|h| h.name() == name)
        .ok_or_else(|| {
            let names: Vec<_> = hot_paths().iter().map(|h| h.name()).collect();
            format!("unknown hot path {name:?}: accepted {}", names.join(", "))
        })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::scenario_file;

    #[test]
    fn the_architecture_names_every_crate_of_the_workspace() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
        let design = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
        let members = manifest
            .lines()
            .find(|l| l.trim_start().starts_with("members"))
            .expect("a members line in Cargo.toml");
        let crates: Vec<&str> = members
            .split('"')
            .filter(|p| p.starts_with("crates/"))
            .collect();
        assert!(crates.len() >= 7, "{crates:?}");
        for c in crates {
            assert!(
                design.lines().any(|l| l.starts_with(c)),
                "ARCHITECTURE.md's crate table has no line for {c}"
            );
        }
    }

    #[test]
    fn every_hot_path_has_a_smoke_scenario_file_and_every_file_a_hot_path() {
        let benches = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../benches");
        // Loading refuses a file whose hot_path is not in the catalog.
        let files = scenario_file::load_all(&benches).unwrap();
        for file in &files {
            assert!(hot_path(file.hot_path.name()).is_ok(), "{}", file.name);
        }
        for h in hot_paths() {
            assert!(
                files
                    .iter()
                    .any(|f| f.hot_path.name() == h.name() && f.smoke.is_some()),
                "hot path {} has no scenario file with a [smoke] table in benches/",
                h.name()
            );
        }
    }
}

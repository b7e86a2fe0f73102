//! The hot paths this build knows, by name. It only names them; what a matrix runs of
//! each is in its scenario files (`benches/*.toml`, read by `scenario_file`).
//!
//! # Adding a hot path
//!
//! 1. A crate `crates/<name>` implementing [`harness::HotPath`] (a `Description` constant
//!    and `measure`; `crates/harness/src/noop.rs` is the smallest template), with one test
//!    calling `harness::testing::conformance`. List it in the root `Cargo.toml`
//!    (`[workspace] members` and `[workspace.dependencies]`) and in `crates/lab/Cargo.toml`'s
//!    `[dependencies]`; ARCHITECTURE.md has the details.
//! 2. One line in [`hot_paths`] below.
//! 3. A scenario file `benches/<name>.toml`: `hot_path`, `axis` (`"threads"`, `"clients"`
//!    or `"fixed"`), its sizes, a `[quick]` table and a `[smoke]` table (tiny sizes: threads
//!    1,2 on one core, 150 ms) for `just smoke`.
//!
//! Nothing else: `just smoke` runs every scenario file with a `[smoke]` table, `lab list`
//! and the tests take their names from this list and `benches/`, and a test below checks
//! that every hot path here has a scenario file with a `[smoke]` table and that every
//! scenario file names a hot path here.

use harness::noop::NoopHotPath;
use harness::HotPath;
use ldap::LdapHotPath;
use lease::LeaseHotPath;
use lookup::LookupHotPath;
use pool::PoolHotPath;
use sqlmix::SqlmixHotPath;

/// Every hot path, in the order `lab list` and reports show them.
pub fn hot_paths() -> &'static [&'static dyn HotPath] {
    &[
        &LookupHotPath,
        &SqlmixHotPath,
        &PoolHotPath,
        &LeaseHotPath,
        &LdapHotPath,
        &NoopHotPath,
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

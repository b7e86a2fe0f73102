//! The hot paths this build knows, by name. Adding a hot path means adding its crate to
//! `lab`'s dependencies and one line here.

use harness::noop::NoopHotPath;
use harness::HotPath;
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

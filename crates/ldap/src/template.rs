//! The ldap hot path's templates: a server's instance with the directory loaded, built
//! once per machine and copied into every cell, kept on the `ldap-templates` shelf of the
//! lab's cache ([`servers::cache`] says how a template is built, kept and copied). This
//! module only names the shelf; `ds389` and `openldap` know their servers' files.

use std::path::{Path, PathBuf};

pub use servers::cache::{copy_into, fingerprint, LAYOUT};

/// The shelf of the lab's cache these templates live on.
pub const SHELF: &str = "ldap-templates";

/// The template `name` of `variant`, built by `build` if it is not there yet
/// ([`servers::cache::ensure`]).
pub fn ensure(
    variant: &str,
    name: &str,
    build: impl FnOnce(&Path) -> Result<(), String>,
) -> Result<PathBuf, String> {
    servers::cache::ensure(SHELF, variant, name, build)
}

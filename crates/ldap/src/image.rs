//! The ldap hot path's images: a server's instance with the directory loaded, built
//! once per machine and copied into every cell, kept on the `ldap-images` shelf of the
//! lab's cache ([`launcher::cache`] says how an image is built, kept and copied). This
//! module only names the shelf; `ds389` and `openldap` know their servers' files.

use std::path::{Path, PathBuf};

pub use launcher::cache::{copy_into, fingerprint, LAYOUT};

/// The shelf of the lab's cache these images live on.
pub const SHELF: &str = "ldap-images";

/// The image `name` of `variant`, built by `build` if it is not there yet
/// ([`launcher::cache::ensure`]).
pub fn ensure(
    variant: &str,
    name: &str,
    build: impl FnOnce(&Path) -> Result<(), String>,
) -> Result<PathBuf, String> {
    // The shelf's name before images were called images: its folders are never read
    // again, so they go rather than fill the user's cache.
    let _ = std::fs::remove_dir_all(launcher::cache::cache_dir("ldap-templates"));
    launcher::cache::ensure(SHELF, variant, name, build)
}

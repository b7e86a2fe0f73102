//! The one-time preparation of a scenario file's `[server]` table (a data load, an
//! import): run once per machine into a folder of the lab's cache and reused by every
//! cell and run after, because a server's data load can take far longer than the whole
//! cell (389 DS imports 10,000 entries in about 25 s).
//!
//! A prepared folder is named for the program's fingerprint and the preparation's text,
//! so a changed command or an upgraded program prepares anew; a preparation that fails
//! leaves no folder ([`crate::cache`] builds in a private folder and renames it into
//! place). This module does not start the server.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::load::command::last_line;
use crate::spec::ServerSpec;
use crate::{cache, process, template};

/// The shelf of the lab's cache prepared folders live on.
pub const SHELF: &str = "server-prepared";

/// The prepared folder for `spec`, prepared now if it is not there yet; `None` when the
/// file has no preparation.
pub fn ensure(spec: &ServerSpec) -> Result<Option<PathBuf>, String> {
    let Some(prepare) = &spec.prepare else {
        return Ok(None);
    };
    let program =
        process::find_program(&spec.program).unwrap_or_else(|| PathBuf::from(&spec.program));
    let base = program
        .file_name()
        .map_or("server".to_owned(), |n| n.to_string_lossy().into_owned());
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    prepare.hash(&mut hasher);
    // `-u<hash>` keeps preparations of one program apart: the cache removes only another
    // fingerprint's folder of the same preparation.
    let name = format!(
        "{base}-{}-{}-u{:016x}",
        cache::fingerprint(&program),
        cache::LAYOUT,
        hasher.finish()
    );
    cache::ensure(SHELF, &base, &name, |dir| run(prepare, dir)).map(Some)
}

fn run(prepare: &str, dir: &Path) -> Result<(), String> {
    let lab =
        std::env::current_exe().map_err(|e| format!("cannot find the lab's own program: {e}"))?;
    let values = BTreeMap::from([
        ("prepared", dir.to_string_lossy().into_owned()),
        ("lab", lab.to_string_lossy().into_owned()),
    ]);
    let line = template::fill(prepare, &values);
    let out = Command::new("sh")
        .arg("-c")
        .arg(&line)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("server.prepare: cannot run sh: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        Err(format!(
            "server.prepare failed ({}): {}",
            out.status,
            last_line(&text)
        ))
    }
}

//! The scenario folder (`benches/`): every file in it read, those that do not read kept
//! apart with their error and what would select them, so that a run refuses only a
//! broken file it would run; one broken file elsewhere in the folder is a warning. Which
//! files a run selects is `plan`'s; this module only says what each file asks for.

use std::path::{Path, PathBuf};

use super::{load, ScenarioFile};

/// A scenario file that does not read, and what would select it.
#[derive(Debug, Clone)]
pub struct Broken {
    /// Its name: the file name without `.toml`.
    pub name: String,
    /// Why it does not read, one line that starts with the file.
    pub error: String,
    /// Whether a run without `scenarios=` would run it (`in_default`, true unless the
    /// file says false, as for a file that reads).
    pub in_default: bool,
    /// Whether it has a `[smoke]` table, which selects it in a smoke run.
    pub smoke: bool,
}

/// Reads every `*.toml` in `dir`, sorted by name: the files that read and, apart, those
/// that do not.
pub fn load_folder(dir: &Path) -> Result<(Vec<ScenarioFile>, Vec<Broken>), String> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read scenario folder {}: {e}", dir.display()))?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    let (mut files, mut broken) = (Vec::new(), Vec::new());
    for path in &paths {
        match load(path) {
            Ok(file) => files.push(file),
            Err(error) => broken.push(broken_file(path, error)),
        }
    }
    Ok((files, broken))
}

/// Reads every `*.toml` in `dir`, sorted by name; the first broken file is the error
/// (for callers that use every file, as the shipped files' own tests do).
#[cfg(test)]
pub fn load_all(dir: &Path) -> Result<Vec<ScenarioFile>, String> {
    let (files, broken) = load_folder(dir)?;
    match broken.into_iter().next() {
        Some(b) => Err(b.error),
        None => Ok(files),
    }
}

/// What would select the file at `path` that failed to read with `error`: its
/// `in_default` and `[smoke]` as its TOML has them, or, where even the TOML does not
/// read, as its lines have them.
fn broken_file(path: &Path, error: String) -> Broken {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let (in_default, smoke) = match text.parse::<toml::Table>() {
        Ok(table) => (
            table
                .get("in_default")
                .and_then(toml::Value::as_bool)
                .unwrap_or(true),
            table.contains_key("smoke"),
        ),
        Err(_) => {
            let said = |key: &str, value: &str| {
                text.lines().any(|l| {
                    l.split_once('=').is_some_and(|(k, v)| {
                        k.trim() == key && v.split('#').next().unwrap_or("").trim() == value
                    })
                })
            };
            let smoke = text.lines().any(|l| l.trim() == "[smoke]");
            (!said("in_default", "false"), smoke)
        }
    };
    Broken {
        name: path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
        error,
        in_default,
        smoke,
    }
}

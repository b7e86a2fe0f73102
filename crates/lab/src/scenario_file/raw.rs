//! A scenario file as written: its TOML read into [`RawScenario`] with every syntax
//! error, unknown field and parameter table named with its line, and the hot path it
//! names found. Not here: validating the values (`super::load`).

use serde::Deserialize;

use super::groups::{groups, FIELDS};
use crate::catalog;
use harness::HotPath;

// Not `deny_unknown_fields`: a file may hold tables of its hot path's parameters
// (`[server]`), which `rest` collects and `groups` checks; anything else in `rest` is
// refused there as an unknown field, with its line.
#[derive(Debug, Deserialize)]
pub(super) struct RawScenario {
    pub(super) hot_path: String,
    pub(super) axis: String,
    pub(super) description: Option<String>,
    #[serde(default = "yes")]
    pub(super) in_default: bool,
    pub(super) variants: Option<Vec<String>>,
    pub(super) threads: Vec<toml::Value>,
    pub(super) cores: Option<Vec<toml::Value>>,
    pub(super) duration: Option<String>,
    pub(super) warmup: Option<String>,
    pub(super) repeats: Option<i64>,
    pub(super) timeout: Option<String>,
    pub(super) overhead: Option<String>,
    pub(super) min_duration: Option<String>,
    pub(super) pair_duration: Option<String>,
    #[serde(default)]
    pub(super) keep_cores: bool,
    #[serde(default)]
    pub(super) params: toml::Table,
    #[serde(default)]
    pub(super) paired: Vec<String>,
    pub(super) profile_at: Option<String>,
    #[serde(default)]
    pub(super) profile_repeat: bool,
    /// The seed's figures and settings as data, for the hot path's question.
    pub(super) seed: Option<toml::Table>,
    pub(super) quick: Option<RawMode>,
    pub(super) smoke: Option<RawMode>,
    #[serde(flatten)]
    pub(super) rest: toml::Table,
}

/// A `[quick]` or `[smoke]` table: overrides of the mode below it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawMode {
    pub(super) variants: Option<Vec<String>>,
    pub(super) threads: Option<Vec<toml::Value>>,
    pub(super) cores: Option<Vec<toml::Value>>,
    pub(super) duration: Option<String>,
    pub(super) warmup: Option<String>,
    pub(super) repeats: Option<i64>,
    #[serde(default)]
    pub(super) params: toml::Table,
}

fn yes() -> bool {
    true
}

/// The file's text read, its hot path found and its parameter tables merged into
/// `params`; `shown` names the file in errors.
pub(super) fn read(text: &str, shown: &str) -> Result<(RawScenario, &'static dyn HotPath), String> {
    let malformed = |e: toml::de::Error| {
        let line = e
            .span()
            .map(|s| text[..s.start.min(text.len())].lines().count().max(1));
        let message = e.message().lines().next().unwrap_or("malformed").to_owned();
        match line {
            Some(line) => format!("{shown}:{line}: {message}"),
            None => format!("{shown}: {message}"),
        }
    };
    // Unknown fields first, as a file's typo (`thread =`) is its likeliest fault: the
    // missing field it leaves would be the wrong word for it.
    let mut table: toml::Table = toml::from_str(text).map_err(malformed)?;
    if let Some(Ok(hot_path)) = table
        .get("hot_path")
        .and_then(|v| v.as_str())
        .map(catalog::hot_path)
    {
        let mut params = table
            .remove("params")
            .and_then(|v| v.as_table().cloned())
            .unwrap_or_default();
        let rest: toml::Table = table
            .into_iter()
            .filter(|(k, _)| !FIELDS.contains(&k.as_str()))
            .collect();
        groups(hot_path, rest, &mut params, text).map_err(|m| format!("{shown}:{m}"))?;
    }
    let mut raw: RawScenario = toml::from_str(text).map_err(malformed)?;
    let hot_path =
        catalog::hot_path(&raw.hot_path).map_err(|m| format!("{shown}: hot_path: {m}"))?;
    let rest = std::mem::take(&mut raw.rest);
    groups(hot_path, rest, &mut raw.params, text).map_err(|m| format!("{shown}:{m}"))?;
    Ok((raw, hot_path))
}

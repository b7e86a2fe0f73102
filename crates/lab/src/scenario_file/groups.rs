//! A scenario file's tables of its hot path's parameters: `[server] command = ...` is the
//! parameter `server_command`, so a hot path whose parameters share a prefix (the server
//! hot path's `server_*` and `load_*`) reads as tables the way its user thinks of them,
//! while the values travel to a cell's child like any parameter. Also the one check that
//! names an unknown top-level field with its line. Not here: the other fields (`super`).

use harness::params::{accepted_among, LISTED};
use harness::HotPath;

/// The fields a scenario file may hold besides its hot path's parameter tables, for the
/// error that names an unknown one.
pub(super) const FIELDS: &[&str] = &[
    "hot_path",
    "axis",
    "description",
    "in_default",
    "variants",
    "threads",
    "cores",
    "duration",
    "warmup",
    "repeats",
    "timeout",
    "overhead",
    "pair_duration",
    "min_duration",
    "keep_cores",
    "params",
    "paired",
    "profile_at",
    "profile_repeat",
    "seed",
    "quick",
    "smoke",
];

/// The tables of `rest` as parameters: a table named like a prefix of the hot path's
/// parameters is those parameters (`[server] command = ...` is `server_command`), merged
/// into `params` (a value `params` sets too is refused); anything else is an unknown
/// field, named with its line of `text`.
pub(super) fn groups(
    hot_path: &dyn HotPath,
    rest: toml::Table,
    params: &mut toml::Table,
    text: &str,
) -> Result<(), String> {
    for (key, value) in rest {
        let prefix = format!("{key}_");
        let is_group = hot_path
            .params()
            .iter()
            .any(|p| p.name.starts_with(&prefix));
        let (true, toml::Value::Table(table)) = (is_group, &value) else {
            let line = text
                .lines()
                .position(|l| {
                    let l = l.trim_start();
                    l.strip_prefix(key.as_str())
                        .is_some_and(|after| after.trim_start().starts_with('='))
                        || l.starts_with(&format!("[{key}]"))
                })
                .map_or(" ".to_owned(), |i| format!("{}: ", i + 1));
            let tables = group_names(hot_path);
            let mut names: Vec<&str> = FIELDS.to_vec();
            names.extend(tables.iter().map(String::as_str));
            // The fields and tables are the shipped files' (`benches/`); the line says
            // which was meant when it can, and stays short when it cannot.
            return Err(format!(
                "{line}unknown field `{key}`: {}",
                accepted_among(&key, &names, "the files in benches/ show them")
            ));
        };
        for (name, v) in table {
            let param = format!("{key}_{name}");
            harness::params::find_spec(hot_path.params(), &param).map_err(|_| {
                let names = names_in(hot_path, &prefix);
                format!(
                    " [{key}] {name}: unknown; {}",
                    accepted_among(name, &names, LISTED)
                )
            })?;
            if params.insert(param.clone(), v.clone()).is_some() {
                return Err(format!(
                    " [{key}] {name}: also set as params.{param}; set it once"
                ));
            }
        }
    }
    Ok(())
}

/// The tables a hot path's parameters form (`server` for `server_command`, ...): the
/// prefixes before `_` shared by two or more parameters.
fn group_names(hot_path: &dyn HotPath) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for p in hot_path.params() {
        if let Some((g, _)) = p.name.split_once('_') {
            let shared = hot_path
                .params()
                .iter()
                .filter(|q| q.name.starts_with(&format!("{g}_")))
                .count()
                >= 2;
            if shared && !names.iter().any(|n| n == g) {
                names.push(g.to_owned());
            }
        }
    }
    names
}

/// The names a table `prefix` accepts (`command` for `server_command`).
fn names_in(hot_path: &dyn HotPath, prefix: &str) -> Vec<&'static str> {
    hot_path
        .params()
        .iter()
        .filter_map(|p| p.name.strip_prefix(prefix))
        .collect()
}

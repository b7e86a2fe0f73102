//! The checks of a matrix's settings against the scenario files, before any file is
//! planned: which files are selected, and whether every count, variant and parameter
//! setting reaches one of them. Each failure is one line naming the input and what is
//! accepted. Choosing values per file is `file`'s job.

use anyhow::bail;
use harness::params::{accepted_among, LISTED};

use crate::scenario_file::{join, Axis, Broken, ScenarioFile};
use crate::settings::{self, Settings};

/// The files of `broken` a run would not run, each as one warning line; refused with the
/// file's own error when the run would run it (`scenarios=` names it, or it is among the
/// default or smoke files the run takes). A run checks the files it runs: one broken
/// file in `benches/` does not stop a run of the others.
pub(super) fn broken_files(settings: &Settings, broken: &[Broken]) -> anyhow::Result<Vec<String>> {
    let mut warnings = Vec::new();
    for b in broken {
        let selected = match &settings.scenarios {
            Some(names) => names.contains(&b.name),
            None if settings.smoke => b.smoke,
            None => b.in_default,
        };
        if selected {
            bail!("{}", b.error);
        }
        warnings.push(format!("warning: not run, does not read: {}", b.error));
    }
    Ok(warnings)
}

/// The scenario files `scenarios=` names (or the default ones, or those with a `[smoke]`
/// table under `smoke=true`), in file order.
pub(super) fn select<'f>(
    settings: &Settings,
    files: &'f [ScenarioFile],
) -> anyhow::Result<Vec<&'f ScenarioFile>> {
    let all: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
    let selected: Vec<&ScenarioFile> = match &settings.scenarios {
        None if settings.smoke => files.iter().filter(|f| f.smoke.is_some()).collect(),
        None => files.iter().filter(|f| f.in_default).collect(),
        Some(names) => names
            .iter()
            .map(|n| {
                files.iter().find(|f| f.name == *n).ok_or_else(|| {
                    let accepted = accepted_among(n, &all, LISTED);
                    anyhow::anyhow!("scenarios={n:?}: unknown scenario file; {accepted}")
                })
            })
            .collect::<anyhow::Result<_>>()?,
    };
    if settings.smoke {
        if let Some(f) = selected.iter().find(|f| f.smoke.is_none()) {
            let with: Vec<&str> = files
                .iter()
                .filter(|f| f.smoke.is_some())
                .map(|f| f.name.as_str())
                .collect();
            bail!(
                "scenarios={}: {}.toml has no [smoke] table; smoke=true accepts {}",
                f.name,
                f.name,
                with.join(", ")
            );
        }
    }
    Ok(selected)
}

/// Refuses `threads=`, `clients=` or `<file>.threads=` when no selected scenario file
/// takes them.
pub(super) fn check_counts_apply(
    settings: &Settings,
    files: &[ScenarioFile],
    selected: &[&ScenarioFile],
) -> anyhow::Result<()> {
    let names = |list: &[&ScenarioFile]| {
        list.iter()
            .map(|f| f.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    for own in &settings.per_file {
        if !files.iter().any(|f| f.name == own.file) {
            let all: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
            bail!(
                "{}={}: unknown scenario file {:?}; {}",
                own.key,
                join(&own.counts),
                own.file,
                accepted_among(&own.file, &all, LISTED)
            );
        }
        if !selected.iter().any(|f| f.name == own.file) {
            bail!(
                "{}={}: {} is not among the selected scenario files ({}); add it to scenarios=",
                own.key,
                join(&own.counts),
                own.file,
                names(selected)
            );
        }
    }
    let own = |f: &&&ScenarioFile| settings.per_file.iter().any(|p| p.file == f.name);
    for (key, axis, counts) in [
        ("threads", Axis::Threads, &settings.threads),
        ("clients", Axis::Clients, &settings.clients),
    ] {
        let Some(counts) = counts else { continue };
        if !selected.iter().any(|f| f.axis == axis && !own(&f)) {
            let others: Vec<String> = selected
                .iter()
                .map(|f| format!("{} {}", f.name, f.axis.name()))
                .collect();
            bail!(
                "{key}={}: no selected scenario file has a {key} axis ({}); {} or <file>.threads= sets one file",
                join(counts),
                others.join(", "),
                if key == "threads" { "clients= sets client axes" } else { "threads= sets thread axes" }
            );
        }
    }
    Ok(())
}

pub(super) fn check_variants_exist(
    settings: &Settings,
    selected: &[&ScenarioFile],
) -> anyhow::Result<()> {
    let Some(names) = &settings.variants else {
        return Ok(());
    };
    for name in names {
        let known = selected
            .iter()
            .any(|f| f.hot_path.variants().iter().any(|v| v.name == name));
        if !known {
            let mut all: Vec<&str> = Vec::new();
            for v in selected.iter().flat_map(|f| f.hot_path.variants()) {
                if !all.contains(&v.name) {
                    all.push(v.name);
                }
            }
            bail!(
                "variants={name:?}: unknown variant; {}",
                accepted_among(name, &all, LISTED)
            );
        }
    }
    Ok(())
}

pub(super) fn check_params_exist(
    settings: &Settings,
    selected: &[&ScenarioFile],
) -> anyhow::Result<()> {
    for (name, _) in &settings.params {
        let known = selected
            .iter()
            .any(|f| f.hot_path.params().iter().any(|p| p.name == name));
        if !known {
            let mut accepted: Vec<&str> = settings::keys();
            for f in selected {
                for p in f.hot_path.params() {
                    if !accepted.contains(&p.name) {
                        accepted.push(p.name);
                    }
                }
            }
            bail!(
                "{name}=...: unknown setting or parameter; {}",
                accepted_among(name, &accepted, LISTED)
            );
        }
    }
    Ok(())
}

//! `lab matrix resume=<run-id>`: continue an interrupted run with the settings recorded in
//! its results file, running only the repetitions it lacks.
//!
//! Figures from another build or another machine would silently mix with the recorded
//! ones, so resuming refuses, in one line, when the commit or the machine differs from
//! the recorded one, unless `force=true`. This module checks and loads; `matrix` runs.

use std::path::{Path, PathBuf};

use crate::results::ResultsFile;
use anyhow::{bail, Context};
use harness::env::EnvInfo;

use crate::plan::Settings;

/// How a matrix starts: afresh, or continuing a recorded run.
#[derive(Debug, Default)]
pub struct Start {
    /// The settings as typed (for a resumed run, the recorded ones), kept in the results
    /// so the run can be resumed.
    pub typed: Vec<String>,
    /// The run being continued.
    pub previous: Option<Previous>,
}

/// An interrupted run, as its results file recorded it.
#[derive(Debug)]
pub struct Previous {
    /// Its results file.
    pub path: PathBuf,
    /// Its contents.
    pub results: ResultsFile,
}

/// Turns parsed settings into the settings to plan with: the same ones for a fresh run,
/// the recorded ones for `resume=<run-id>`, after checking the run can be continued here.
pub fn prepare(settings: Settings, root: &Path) -> anyhow::Result<(Settings, Start)> {
    let Some(id) = settings.resume.clone() else {
        let typed = settings.typed.clone();
        return Ok((
            settings,
            Start {
                typed,
                previous: None,
            },
        ));
    };
    let others: Vec<&String> = settings
        .typed
        .iter()
        .filter(|a| !a.starts_with("resume=") && !a.starts_with("force="))
        .collect();
    if let Some(other) = others.first() {
        bail!("{other}: resume=<run-id> runs with the recorded settings; only force=true may be added");
    }
    let id = id.strip_suffix(".json").unwrap_or(&id);
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
        bail!("resume={id:?}: expected a run id such as 20261130T120000Z (a file in reports/data)");
    }
    let path = root.join("reports/data").join(format!("{id}.json"));
    let text = std::fs::read_to_string(&path).with_context(|| {
        format!(
            "resume={id}: cannot read {}; accepted: the id of a run in reports/data",
            path.display()
        )
    })?;
    let results = ResultsFile::from_json(&text)
        .map_err(|e| anyhow::anyhow!("resume={id}: {}: {e}", path.display()))?;
    if results.complete {
        bail!("resume={id}: that run is complete; nothing to resume");
    }
    let Some(state) = &results.resume else {
        bail!("resume={id}: the results file records no settings (written by an older lab); cannot resume it");
    };
    if !settings.force {
        if let Some(difference) = difference(&results.env, &EnvInfo::capture()) {
            bail!("resume={id}: {difference}; add force=true to resume anyway");
        }
    }
    let mut recorded = Settings::parse(&state.settings)
        .with_context(|| format!("resume={id}: the recorded settings no longer parse"))?;
    // The budget planned with the costs of the runs before this one: so does the resume,
    // or a newer file's costs could trim other cells than the ones recorded.
    recorded.costs_before = Some(id.to_owned());
    let typed = recorded.typed.clone();
    Ok((
        recorded,
        Start {
            typed,
            previous: Some(Previous { path, results }),
        },
    ))
}

/// How the machine or the build differs from the recorded one, if it does.
fn difference(recorded: &EnvInfo, now: &EnvInfo) -> Option<String> {
    let fields = [
        ("commit", &recorded.git_commit, &now.git_commit),
        ("host", &recorded.hostname, &now.hostname),
        ("CPU", &recorded.cpu_model, &now.cpu_model),
    ];
    let mut differences: Vec<String> = fields
        .iter()
        .filter(|(_, a, b)| a != b)
        .map(|(what, a, b)| format!("recorded on {what} {a}, this is {b}"))
        .collect();
    if recorded.nproc != now.nproc {
        differences.push(format!(
            "recorded with {} CPUs, this has {}",
            recorded.nproc, now.nproc
        ));
    }
    (!differences.is_empty()).then(|| differences.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_name_what_changed() {
        let a = EnvInfo {
            git_commit: "abc".into(),
            hostname: "box".into(),
            nproc: 2,
            ..EnvInfo::default()
        };
        assert_eq!(difference(&a, &a.clone()), None);
        let mut b = a.clone();
        b.git_commit = "def-dirty".into();
        assert_eq!(
            difference(&a, &b).unwrap(),
            "recorded on commit abc, this is def-dirty"
        );
        b.nproc = 4;
        assert!(difference(&a, &b)
            .unwrap()
            .ends_with("recorded with 2 CPUs, this has 4"));
    }

    #[test]
    fn other_settings_with_resume_are_refused() {
        let root = Path::new("/nonexistent");
        let parse = |args: &[&str]| {
            let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
            Settings::parse(&args).unwrap()
        };
        // force=true alone runs beside another matrix (`lock`).
        assert!(prepare(parse(&["force=true"]), root).is_ok());
        let err = prepare(parse(&["resume=x", "threads=2"]), root).unwrap_err();
        assert!(
            err.to_string().starts_with("threads=2: resume=<run-id>"),
            "{err}"
        );
        let err = prepare(parse(&["resume=../etc"]), root).unwrap_err();
        assert!(err.to_string().contains("expected a run id"), "{err}");
        let err = prepare(parse(&["resume=20261130T120000Z"]), root).unwrap_err();
        assert!(err.to_string().contains("cannot read"), "{err}");
        let (s, start) = prepare(parse(&["threads=2"]), root).unwrap();
        assert_eq!(s.threads, Some(vec![2]));
        assert_eq!(start.typed, vec!["threads=2".to_owned()]);
        assert!(start.previous.is_none());
    }
}

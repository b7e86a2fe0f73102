//! From parsed settings ([`Settings`]) and scenario files to the list of cells a matrix
//! will run.
//!
//! Everything is checked here against the scenario files, before anything runs or any
//! file is written: an unknown scenario file, variant or parameter, a timeout too short
//! for a cell, or a setting that applies to none of the selected scenario files is one
//! error line naming the input and what is accepted. Reading the `key=value` text is
//! `settings`' job.
//!
//! Each scenario file's axis decides which setting may change its thread counts:
//! `threads=` sets thread axes, `clients=` client axes, and `<file>.threads=` (or
//! `<file>.clients=`) one file, whatever its axis; a fixed point changes only that way.
//! [`MatrixPlan::settings_lines`] says, per scenario file, what applied and what the file
//! kept. Running the cells is `matrix`'s job, not this module's.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context};
use harness::{affinity, HotPath, Params};
use serde_json::Value;

use crate::cell_request::CellRequest;
use crate::scenario_file::{self, join, Axis, ModeSettings, ParamSweep, ScenarioFile};
pub use crate::settings::Settings;
use crate::settings::KEYS;

/// Time a child needs beyond warm-up and window to start and build its data; a timeout
/// shorter than warm-up + duration + this cannot let any cell finish.
pub const SETUP_MARGIN: Duration = Duration::from_secs(1);

/// One scenario file as the matrix will run it.
#[derive(Debug, Clone)]
pub struct ScenarioPlan {
    /// Scenario file name.
    pub file: String,
    /// The hot path.
    pub hot_path: &'static dyn HotPath,
    /// Variants.
    pub variants: Vec<&'static str>,
    /// Thread counts (clients, on a client axis).
    pub threads: Vec<usize>,
    /// Core counts.
    pub cores: Vec<usize>,
    /// Every combination of parameter values.
    pub param_sets: Vec<Params>,
    /// Measured window per repetition.
    pub duration: Duration,
    /// Warm-up per repetition.
    pub warmup: Duration,
    /// Repetitions per cell.
    pub repeats: usize,
    /// Limit per child process.
    pub timeout: Duration,
    /// Which thread counts the default profiling covers.
    pub profile_at: crate::scenario_file::ProfileAt,
    /// One line: which settings applied to this file and which it kept.
    pub settings_line: String,
    /// The file's `[seed]` table (`Null` when none), copied into the results.
    pub seed: serde_json::Value,
}

/// One cell: everything a child `lab run` needs.
#[derive(Debug, Clone)]
pub struct CellSpec<'a> {
    /// The scenario file it belongs to.
    pub scenario: &'a ScenarioPlan,
    /// Variant.
    pub variant: &'static str,
    /// Parameters.
    pub params: Params,
    /// Which of the scenario file's parameter sets `params` is.
    pub param_index: usize,
    /// Worker threads.
    pub threads: usize,
    /// CPUs in the mask.
    pub cores: usize,
}

impl CellSpec<'_> {
    /// The request for one repetition of this cell measured over `duration`, profiled
    /// to the prefix `profile` when given.
    pub fn request(&self, duration: Duration, profile: Option<String>) -> CellRequest {
        CellRequest {
            hot_path: self.scenario.hot_path.name().to_owned(),
            variant: self.variant.to_owned(),
            threads: self.threads,
            cores: Some(self.cores),
            duration,
            warmup: self.scenario.warmup,
            repeats: 1,
            params: self
                .params
                .to_map()
                .iter()
                .map(|(k, v)| (k.clone(), value_text(v)))
                .collect(),
            profile,
        }
    }
}

/// The whole matrix.
#[derive(Debug, Clone)]
pub struct MatrixPlan {
    /// Scenario files in order.
    pub scenarios: Vec<ScenarioPlan>,
    /// Whether quick (or smoke) mode was asked for: shorter profiling windows.
    pub quick: bool,
    /// Whether each cell gets an extra, uncounted repetition under the CPU profiler.
    pub profile: bool,
    /// Whether every cell is profiled (`profile=all`) rather than the default selection.
    pub profile_all: bool,
    /// The command that reproduces this run.
    pub command: String,
    /// Project root (reports go below it).
    pub root: PathBuf,
    /// Lines about selected scenario files that run no cell (no variant left).
    pub skipped: Vec<String>,
    /// The load (CPUs) above which a repetition is retaken (`interference=`); `None`: off.
    pub interference: Option<f64>,
}

/// Default core counts: powers of two up to the CPUs available, and that count itself.
pub fn default_cores(nproc: usize) -> Vec<usize> {
    let mut cores: Vec<usize> = std::iter::successors(Some(1usize), |c| c.checked_mul(2))
        .take_while(|&c| c <= nproc)
        .collect();
    if cores.last() != Some(&nproc) {
        cores.push(nproc);
    }
    cores
}

/// Which of the user's settings reached one scenario file, for its settings line.
struct Provenance {
    applied: Vec<String>,
    kept: Vec<String>,
}

impl Provenance {
    fn line(&self, file: &ScenarioFile) -> String {
        let list = |items: &[String]| {
            if items.is_empty() {
                "none".to_owned()
            } else {
                items.join(", ")
            }
        };
        format!(
            "{}.toml ({} axis): set here {}; as the file has them: {}",
            file.name,
            file.axis.name(),
            list(&self.applied),
            list(&self.kept)
        )
    }
}

fn text(d: Duration) -> String {
    humantime::format_duration(d).to_string()
}

impl MatrixPlan {
    /// Checks `settings` against the scenario files under `root/benches` and lays out the
    /// cells.
    pub fn build(settings: &Settings, root: &Path) -> anyhow::Result<MatrixPlan> {
        let files = scenario_file::load_all(&root.join("benches")).map_err(anyhow::Error::msg)?;
        if files.is_empty() {
            bail!("no scenario files in {}", root.join("benches").display());
        }
        let selected = select(settings, &files)?;
        check_counts_apply(settings, &files, &selected)?;
        check_variants_exist(settings, &selected)?;
        check_params_exist(settings, &selected)?;

        let nproc = affinity::allowed_cpus().len();
        let mut scenarios = Vec::new();
        let mut skipped = Vec::new();
        // Files whose cells need what this machine lacks: skipped, said in one line.
        let mut lacking: Vec<(String, harness::hotpath::Missing)> = Vec::new();
        for file in selected {
            let mode: &ModeSettings = if settings.smoke {
                file.smoke
                    .as_ref()
                    .expect("select keeps files with [smoke]")
            } else if settings.quick {
                &file.quick
            } else {
                &file.normal
            };
            let mut how = Provenance {
                applied: Vec::new(),
                kept: Vec::new(),
            };
            let variants: Vec<&'static str> = match &settings.variants {
                None => mode.variants.clone(),
                Some(names) => file
                    .hot_path
                    .variants()
                    .iter()
                    .filter(|v| names.iter().any(|n| n == v.name))
                    .map(|v| v.name)
                    .collect(),
            };
            if variants.is_empty() {
                skipped.push(format!(
                    "{}.toml: skipped, none of variants={} is a {} variant",
                    file.name,
                    settings.variants.as_deref().unwrap_or_default().join(","),
                    file.hot_path.name()
                ));
                continue;
            }
            if settings.variants.is_some() {
                how.applied.push(format!("variants={}", variants.join(",")));
            }
            let threads = file_counts(settings, file, mode, &mut how);
            let cores = match (&settings.cores, &mode.cores) {
                (Some(c), _) => {
                    how.applied.push(format!("cores={}", join(c)));
                    c.clone()
                }
                (None, Some(c)) => {
                    let c: Vec<usize> = c.iter().copied().filter(|&c| c <= nproc).collect();
                    how.kept.push(format!("cores {}", join(&c)));
                    c
                }
                (None, None) => {
                    // Quick mode measures at the machine's full width only.
                    let c = if settings.quick || settings.smoke {
                        vec![nproc]
                    } else {
                        default_cores(nproc)
                    };
                    how.kept
                        .push(format!("cores {} (this machine's default)", join(&c)));
                    c
                }
            };
            let mut sweeps = mode.params.clone();
            for (name, text) in &settings.params {
                if let Ok(spec) = harness::params::find_spec(file.hot_path.params(), name) {
                    let values = spec.parse_list(text).map_err(anyhow::Error::msg)?;
                    sweeps.retain(|(n, _)| n != name);
                    sweeps.push((name.clone(), values));
                    how.applied.push(format!("{name}={text}"));
                }
            }
            for (name, values) in &mode.params {
                if !settings.params.iter().any(|(n, _)| n == name) {
                    let values: Vec<String> = values.iter().map(value_text).collect();
                    how.kept.push(format!("{name}={}", values.join(",")));
                }
            }
            let param_sets = combinations(file.hot_path, &sweeps, &file.paired)
                .with_context(|| format!("{}.toml", file.name))?;
            if let Some(missing) = param_sets.iter().find_map(|p| file.hot_path.missing(p)) {
                lacking.push((file.name.clone(), missing));
                continue;
            }
            check_counts(file, &param_sets, &threads)?;
            let mut pick = |typed: Option<Duration>, own: Duration, name: &str| match typed {
                Some(d) => {
                    how.applied.push(format!("{name}={}", text(d)));
                    d
                }
                None => {
                    how.kept.push(format!("{name} {}", text(own)));
                    own
                }
            };
            let duration = pick(settings.duration, mode.duration, "duration");
            let warmup = pick(settings.warmup, mode.warmup, "warmup");
            let repeats = match settings.repeats {
                Some(n) => {
                    how.applied.push(format!("repeats={n}"));
                    n
                }
                None => {
                    how.kept.push(format!("repeats {}", mode.repeats));
                    mode.repeats
                }
            };
            let least = warmup + duration + SETUP_MARGIN;
            let timeout = match (settings.timeout, file.timeout) {
                (Some(t), _) => {
                    if t < least {
                        bail!(
                            "timeout={}: shorter than warm-up {} + duration {} + {} to start a cell of {}; accepted at least {}",
                            text(t), text(warmup), text(duration), text(SETUP_MARGIN), file.name, text(least)
                        );
                    }
                    how.applied.push(format!("timeout={}", text(t)));
                    t
                }
                (None, Some(t)) => {
                    if t < least {
                        bail!(
                            "{}.toml: timeout {} is shorter than warm-up {} + duration {} + {} to start a cell; give timeout= at least {}",
                            file.name, text(t), text(warmup), text(duration), text(SETUP_MARGIN), text(least)
                        );
                    }
                    how.kept.push(format!("timeout {}", text(t)));
                    t
                }
                (None, None) => Duration::from_secs(30) + (duration + warmup) * 3,
            };
            scenarios.push(ScenarioPlan {
                file: file.name.clone(),
                hot_path: file.hot_path,
                variants,
                threads,
                cores,
                param_sets,
                duration,
                warmup,
                repeats,
                timeout,
                profile_at: file.profile_at,
                settings_line: how.line(file),
                seed: file.seed.clone(),
            });
        }
        if let Some(line) = lacking_line(&lacking) {
            skipped.push(line);
        }
        if scenarios.is_empty() {
            if let Some(line) = lacking_line(&lacking) {
                bail!("{line}; nothing else was selected");
            }
            bail!("variants=...: none of the selected scenario files has these variants");
        }
        let mut command = String::from("just matrix");
        for arg in &settings.typed {
            command.push(' ');
            command.push_str(arg);
        }
        Ok(MatrixPlan {
            scenarios,
            quick: settings.quick || settings.smoke,
            profile: !settings.no_profile,
            profile_all: settings.profile_all,
            command,
            root: root.to_path_buf(),
            skipped,
            interference: settings
                .interference
                .unwrap_or(Some(crate::retake::DEFAULT_THRESHOLD)),
        })
    }

    /// One line per selected scenario file: which settings applied to it and which it
    /// kept as the file has them (printed before the run, stored in the results file).
    pub fn settings_lines(&self) -> Vec<String> {
        self.scenarios
            .iter()
            .map(|s| s.settings_line.clone())
            .chain(self.skipped.iter().cloned())
            .collect()
    }

    /// The `[seed]` table of each scenario file that has one, by file name.
    pub fn seeds(&self) -> std::collections::BTreeMap<String, serde_json::Value> {
        self.scenarios
            .iter()
            .filter(|s| !s.seed.is_null())
            .map(|s| (s.file.clone(), s.seed.clone()))
            .collect()
    }

    /// Every cell, scenario file by scenario file, then variant, parameters, cores and
    /// threads.
    pub fn cells(&self) -> Vec<CellSpec<'_>> {
        let mut cells = Vec::new();
        for scenario in &self.scenarios {
            for &variant in &scenario.variants {
                for (param_index, params) in scenario.param_sets.iter().enumerate() {
                    for &cores in &scenario.cores {
                        for &threads in &scenario.threads {
                            cells.push(CellSpec {
                                scenario,
                                variant,
                                params: params.clone(),
                                param_index,
                                threads,
                                cores,
                            });
                        }
                    }
                }
            }
        }
        cells
    }
}

/// One line naming the files skipped because this machine lacks something, what it
/// lacks and what installs it; `None` when nothing was skipped.
fn lacking_line(lacking: &[(String, harness::hotpath::Missing)]) -> Option<String> {
    if lacking.is_empty() {
        return None;
    }
    let files: Vec<String> = lacking.iter().map(|(f, _)| format!("{f}.toml")).collect();
    let mut what: Vec<&str> = Vec::new();
    let mut packages: Vec<&str> = Vec::new();
    for (_, m) in lacking {
        if !what.contains(&m.what.as_str()) {
            what.push(&m.what);
        }
        for p in &m.packages {
            if !packages.contains(&p.as_str()) {
                packages.push(p);
            }
        }
    }
    Some(format!(
        "skipped {} (this machine lacks {}): `just setup` installs it (Debian: {})",
        files.join(", "),
        what.join(", "),
        packages.join(" ")
    ))
}

/// The scenario files `scenarios=` names (or the default ones, or those with a `[smoke]`
/// table under `smoke=true`), in file order.
fn select<'f>(
    settings: &Settings,
    files: &'f [ScenarioFile],
) -> anyhow::Result<Vec<&'f ScenarioFile>> {
    let all = || {
        files
            .iter()
            .map(|f| f.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let selected: Vec<&ScenarioFile> = match &settings.scenarios {
        None if settings.smoke => files.iter().filter(|f| f.smoke.is_some()).collect(),
        None => files.iter().filter(|f| f.in_default).collect(),
        Some(names) => names
            .iter()
            .map(|n| {
                files.iter().find(|f| f.name == *n).ok_or_else(|| {
                    anyhow::anyhow!("scenarios={n:?}: unknown scenario file; accepted {}", all())
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

/// The counts a file runs at: `<file>.threads=`, else `threads=` on a thread axis or
/// `clients=` on a client axis, else the file's own.
fn file_counts(
    settings: &Settings,
    file: &ScenarioFile,
    mode: &ModeSettings,
    how: &mut Provenance,
) -> Vec<usize> {
    if let Some(own) = settings.per_file.iter().find(|p| p.file == file.name) {
        how.applied
            .push(format!("{}={}", own.key, join(&own.counts)));
        return own.counts.clone();
    }
    let typed = match file.axis {
        Axis::Threads => settings.threads.as_ref().map(|t| ("threads", t)),
        Axis::Clients => settings.clients.as_ref().map(|c| ("clients", c)),
        Axis::Fixed => None,
    };
    if let Some((key, counts)) = typed {
        how.applied.push(format!("{key}={}", join(counts)));
        return counts.clone();
    }
    let mut kept = file.axis_text(&mode.threads);
    let ignored: Vec<&str> = [
        settings.threads.as_ref().map(|_| "threads="),
        settings.clients.as_ref().map(|_| "clients="),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !ignored.is_empty() {
        kept.push_str(&format!(
            " ({} not for this axis; {}.{}= sets it)",
            ignored.join(" and "),
            file.name,
            file.unit()
        ));
    }
    how.kept.push(kept);
    mode.threads.clone()
}

/// Refuses `threads=`, `clients=` or `<file>.threads=` when no selected scenario file
/// takes them.
fn check_counts_apply(
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
            let all: Vec<&ScenarioFile> = files.iter().collect();
            bail!(
                "{}={}: unknown scenario file {:?}; accepted {}",
                own.key,
                join(&own.counts),
                own.file,
                names(&all)
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

fn check_variants_exist(settings: &Settings, selected: &[&ScenarioFile]) -> anyhow::Result<()> {
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
                "variants={name:?}: unknown variant; accepted {}",
                all.join(", ")
            );
        }
    }
    Ok(())
}

fn check_params_exist(settings: &Settings, selected: &[&ScenarioFile]) -> anyhow::Result<()> {
    for (name, _) in &settings.params {
        let known = selected
            .iter()
            .any(|f| f.hot_path.params().iter().any(|p| p.name == name));
        if !known {
            let mut accepted: Vec<&str> = KEYS.to_vec();
            for f in selected {
                for p in f.hot_path.params() {
                    if !accepted.contains(&p.name) {
                        accepted.push(p.name);
                    }
                }
            }
            bail!(
                "{name}=...: unknown setting or parameter; accepted {}",
                accepted.join(", ")
            );
        }
    }
    Ok(())
}

/// Every combination of the swept values over the hot path's defaults.
/// Every parameter set of a scenario file: the sweeps crossed, except `paired` ones, which
/// advance together as one sweep (their lists must be equally long).
fn combinations(
    hot_path: &dyn HotPath,
    sweeps: &[ParamSweep],
    paired: &[String],
) -> anyhow::Result<Vec<Params>> {
    // Each axis is a list of steps; a step sets one or more parameters.
    let mut axes: Vec<Vec<Vec<(&str, &Value)>>> = Vec::new();
    let zipped: Vec<&ParamSweep> = sweeps.iter().filter(|(n, _)| paired.contains(n)).collect();
    if let Some(first) = zipped.first() {
        if let Some(odd) = zipped.iter().find(|(_, v)| v.len() != first.1.len()) {
            bail!(
                "paired parameters must list as many values each: {} has {}, {} has {}",
                first.0,
                first.1.len(),
                odd.0,
                odd.1.len()
            );
        }
        axes.push(
            (0..first.1.len())
                .map(|i| zipped.iter().map(|(n, v)| (n.as_str(), &v[i])).collect())
                .collect(),
        );
    }
    for (name, values) in sweeps.iter().filter(|(n, _)| !paired.contains(n)) {
        axes.push(values.iter().map(|v| vec![(name.as_str(), v)]).collect());
    }
    let mut sets = vec![Params::defaults(hot_path.params())];
    for steps in &axes {
        let mut next = Vec::with_capacity(sets.len() * steps.len());
        for set in &sets {
            for step in steps {
                let mut p = set.clone();
                for (name, value) in step {
                    p.insert(name, (*value).clone());
                }
                next.push(p);
            }
        }
        sets = next;
    }
    for set in &sets {
        hot_path
            .check(set)
            .map_err(anyhow::Error::msg)
            .with_context(|| {
                format!("{} parameters {}", hot_path.name(), set.to_args().join(" "))
            })?;
    }
    Ok(sets)
}

/// Rules of the hot path that involve the thread (or client) count, for every count and
/// parameter set of a file, before anything runs.
fn check_counts(file: &ScenarioFile, sets: &[Params], counts: &[usize]) -> anyhow::Result<()> {
    for set in sets {
        for &count in counts {
            file.hot_path
                .check_threads(set, count)
                .map_err(anyhow::Error::msg)
                .with_context(|| {
                    format!(
                        "{}.toml: {} parameters {} at {count} {}",
                        file.name,
                        file.hot_path.name(),
                        set.to_args().join(" "),
                        if file.axis == Axis::Clients {
                            "clients"
                        } else {
                            "threads"
                        }
                    )
                })?;
        }
    }
    Ok(())
}

/// The value a sweep gives a parameter, as text.
pub fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn paired_parameters_advance_together_and_the_rest_cross() {
        let hot_path = crate::catalog::hot_path("pool").unwrap();
        let sweeps: Vec<ParamSweep> = vec![
            ("connections".into(), vec![Value::from(1), Value::from(10)]),
            (
                "max_requests".into(),
                vec![Value::from(1024), Value::from(5000)],
            ),
            (
                "batch".into(),
                vec![Value::from(1), Value::from(10), Value::from(100)],
            ),
        ];
        let paired = vec!["connections".to_owned(), "max_requests".to_owned()];
        let sets = combinations(hot_path, &sweeps, &paired).unwrap();
        assert_eq!(sets.len(), 2 * 3);
        let shapes: std::collections::BTreeSet<String> = sets
            .iter()
            .map(|p| {
                format!(
                    "{}x{}",
                    p.to_map()["connections"],
                    p.to_map()["max_requests"]
                )
            })
            .collect();
        assert_eq!(
            shapes.into_iter().collect::<Vec<_>>(),
            ["10x5000", "1x1024"]
        );
        assert_eq!(combinations(hot_path, &sweeps, &[]).unwrap().len(), 12);
        let uneven = vec![
            sweeps[0].clone(),
            ("max_requests".into(), vec![Value::from(8)]),
        ];
        let err = combinations(hot_path, &uneven, &paired)
            .unwrap_err()
            .to_string();
        assert!(err.contains("as many values"), "{err}");
    }

    fn repo_root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
    }

    fn repo_files() -> Vec<ScenarioFile> {
        scenario_file::load_all(&repo_root().join("benches")).unwrap()
    }

    fn plan(list: &[&str]) -> anyhow::Result<MatrixPlan> {
        MatrixPlan::build(&Settings::parse(&args(list))?, &repo_root())
    }

    /// `scenarios=` naming every scenario file in benches/.
    fn every_file() -> String {
        let names: Vec<String> = repo_files().into_iter().map(|f| f.name).collect();
        format!("scenarios={}", names.join(","))
    }

    fn counts<'p>(plan: &'p MatrixPlan, file: &str) -> &'p [usize] {
        &plan
            .scenarios
            .iter()
            .find(|s| s.file == file)
            .unwrap_or_else(|| panic!("{file} is not planned"))
            .threads
    }

    #[test]
    fn the_seed_columns_change_thread_axes_only() {
        let every = every_file();
        let plan = plan(&["threads=1,2,4,6,12", &every]).unwrap();
        let files = repo_files();
        assert_eq!(plan.scenarios.len(), files.len());
        for file in &files {
            let expected: &[usize] = match file.axis {
                Axis::Threads => &[1, 2, 4, 6, 12],
                Axis::Clients | Axis::Fixed => &file.normal.threads,
            };
            assert_eq!(counts(&plan, &file.name), expected, "{}", file.name);
        }
        assert_eq!(counts(&plan, "pool-clients"), [100, 1000, 2000, 3000]);
        assert_eq!(counts(&plan, "pool-batch"), [1000]);
        assert_eq!(counts(&plan, "sqlmix-slots"), [16]);
        assert_eq!(counts(&plan, "sqlmix-writes"), [16]);
        assert_eq!(counts(&plan, "pool"), [1, 2, 4, 6, 12]);
        let lines = plan.settings_lines();
        assert_eq!(lines.len(), files.len());
        let line = |file: &str| {
            lines
                .iter()
                .find(|l| l.starts_with(&format!("{file}.toml ")))
                .unwrap()
                .clone()
        };
        assert!(
            line("lookup").contains("set here threads=1,2,4,6,12;"),
            "{lines:?}"
        );
        assert!(
            line("pool-clients").contains("set here none; as the file has them: clients 100,1000,2000,3000 (threads= not for this axis; pool-clients.clients= sets it)"),
            "{lines:?}"
        );
        assert!(
            line("sqlmix-slots").contains("fixed at threads 16"),
            "{lines:?}"
        );
    }

    #[test]
    fn the_default_matrix_already_has_the_seed_columns() {
        let cells = |plan: &MatrixPlan| {
            plan.cells()
                .iter()
                .map(|c| {
                    (
                        c.scenario.file.clone(),
                        c.variant,
                        c.param_index,
                        c.threads,
                        c.cores,
                    )
                })
                .collect::<Vec<_>>()
        };
        let default = plan(&[]).unwrap();
        let seed = plan(&["threads=1,2,4,6,12"]).unwrap();
        let (default, seed) = (cells(&default), cells(&seed));
        assert!(seed.iter().all(|c| default.contains(c)));
        // The one extra column: pool's acquisition-only file also runs 8 threads, as many
        // as it has slots, the point where its designs are compared (issue 15).
        let extra: Vec<_> = default.iter().filter(|c| !seed.contains(c)).collect();
        assert!(extra.iter().all(|c| c.0 == "pool" && c.3 == 8), "{extra:?}");
    }

    #[test]
    fn clients_and_one_files_point_are_set_apart() {
        let every = every_file();
        let plan = plan(&["clients=100,1000", "sqlmix-slots.threads=8", &every]).unwrap();
        for file in repo_files() {
            let expected: Vec<usize> = match (file.axis, file.name.as_str()) {
                (_, "sqlmix-slots") => vec![8],
                (Axis::Clients, _) => vec![100, 1000],
                _ => file.normal.threads.clone(),
            };
            assert_eq!(counts(&plan, &file.name), expected, "{}", file.name);
        }
        assert_eq!(counts(&plan, "sqlmix-writes"), [16]);
        let lines = plan.settings_lines().join("\n");
        assert!(
            lines.contains("sqlmix-slots.toml (fixed axis): set here sqlmix-slots.threads=8"),
            "{lines}"
        );
        assert!(
            lines.contains("pool-batch.toml (clients axis): set here clients=100,1000"),
            "{lines}"
        );
    }

    #[test]
    fn settings_that_reach_no_selected_file_are_refused() {
        let cases: &[(&[&str], &str)] = &[
            (
                &["clients=100", "scenarios=lookup"],
                "clients=100: no selected scenario file has a clients axis (lookup threads)",
            ),
            (
                &["threads=1,2", "scenarios=pool-clients,sqlmix-slots"],
                "threads=1,2: no selected scenario file has a threads axis (pool-clients clients, sqlmix-slots fixed)",
            ),
            (
                &["sqlmix-slots.threads=8", "scenarios=lookup"],
                "sqlmix-slots.threads=8: sqlmix-slots is not among the selected scenario files (lookup)",
            ),
            (&["nope.threads=8"], "nope.threads=8: unknown scenario file \"nope\"; accepted "),
            (&["scenarios=nope"], "scenarios=\"nope\": unknown scenario file; accepted "),
            (
                &["scenarios=lookup", "timeout=1s", "duration=200ms", "warmup=50ms"],
                "timeout=1s: shorter than warm-up 50ms + duration 200ms + 1s to start a cell of lookup; accepted at least 1s 250ms",
            ),
            (
                &["smoke=true", "scenarios=sqlmix-slots"],
                "scenarios=sqlmix-slots: sqlmix-slots.toml has no [smoke] table; smoke=true accepts ",
            ),
        ];
        for (list, expected) in cases {
            let err = format!("{:#}", plan(list).unwrap_err());
            assert!(err.contains(expected), "{list:?}: {err}");
            assert_eq!(err.lines().count(), 1, "{err}");
        }
        assert!(plan(&[
            "scenarios=lookup",
            "timeout=1250ms",
            "duration=200ms",
            "warmup=50ms"
        ])
        .is_ok());
    }

    #[test]
    fn smoke_runs_each_files_own_smoke_sizes() {
        let plan = plan(&["smoke=true"]).unwrap();
        let with_smoke: Vec<String> = repo_files()
            .into_iter()
            .filter(|f| f.smoke.is_some())
            .map(|f| f.name)
            .collect();
        let planned: Vec<String> = plan.scenarios.iter().map(|s| s.file.clone()).collect();
        assert_eq!(planned, with_smoke);
        assert!(plan.quick, "smoke profiles with the quick window");
        for s in &plan.scenarios {
            let own = repo_files().into_iter().find(|f| f.name == s.file).unwrap();
            let smoke = own.smoke.unwrap();
            assert_eq!(s.threads, smoke.threads, "{}", s.file);
            assert_eq!(s.duration, smoke.duration, "{}", s.file);
            assert_eq!(s.repeats, smoke.repeats, "{}", s.file);
        }
    }

    #[test]
    fn a_cell_request_carries_the_cell() {
        let plan = plan(&["scenarios=lookup", "threads=2", "cores=1", "users=300"]).unwrap();
        let cells = plan.cells();
        let request = cells[0].request(Duration::from_millis(70), Some("p".into()));
        assert_eq!(request.hot_path, "lookup");
        assert_eq!(
            (request.threads, request.cores, request.repeats),
            (2, Some(1), 1)
        );
        assert_eq!(request.duration, Duration::from_millis(70));
        assert!(request
            .params
            .contains(&("users".to_owned(), "300".to_owned())));
        assert_eq!(request.profile.as_deref(), Some("p"));
    }

    #[test]
    fn files_needing_what_the_machine_lacks_are_named_in_one_line() {
        let lib = |what: &str| harness::hotpath::Missing {
            what: what.into(),
            packages: vec!["libdqlite0".into()],
            reason: "cannot load".into(),
        };
        assert_eq!(lacking_line(&[]), None);
        let line = lacking_line(&[
            ("sqlmix-libdqlite".into(), lib("libdqlite.so.0")),
            ("sqlmix-libdqlite-pool".into(), lib("libdqlite.so.0")),
        ])
        .unwrap();
        assert_eq!(
            line,
            "skipped sqlmix-libdqlite.toml, sqlmix-libdqlite-pool.toml (this machine lacks \
             libdqlite.so.0): `just setup` installs it (Debian: libdqlite0)"
        );
    }

    #[test]
    fn default_cores_are_powers_of_two_and_nproc() {
        assert_eq!(default_cores(1), vec![1]);
        assert_eq!(default_cores(2), vec![1, 2]);
        assert_eq!(default_cores(6), vec![1, 2, 4, 6]);
        assert_eq!(default_cores(16), vec![1, 2, 4, 8, 16]);
    }
}

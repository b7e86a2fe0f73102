//! From `key=value` settings and scenario files to the list of cells a matrix will run.
//!
//! Everything a user typed is checked here, before anything runs or any file is written:
//! a bad thread list, an unknown scenario, variant or parameter, or more cores than the
//! machine has is one error line naming the input and what is accepted.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context};
use harness::{affinity, HotPath, Params};
use serde_json::Value;

use crate::scenario_file::{self, max_threads, ParamSweep, ScenarioFile};

/// Settings that are not scenario parameters.
const KEYS: &[&str] = &[
    "threads",
    "cores",
    "scenarios",
    "variants",
    "quick",
    "duration",
    "warmup",
    "repeats",
    "timeout",
    "profile",
];

/// What the user typed after `lab matrix`, parsed but not yet checked against scenarios.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Settings {
    /// `threads=`: thread counts for every scenario.
    pub threads: Option<Vec<usize>>,
    /// `cores=`: core counts.
    pub cores: Option<Vec<usize>>,
    /// `scenarios=`: scenario file names.
    pub scenarios: Option<Vec<String>>,
    /// `variants=`: variant names.
    pub variants: Option<Vec<String>>,
    /// `quick=true`: the quick mode of every scenario.
    pub quick: bool,
    /// `duration=`: measured window per repetition.
    pub duration: Option<Duration>,
    /// `warmup=`: warm-up per repetition.
    pub warmup: Option<Duration>,
    /// `repeats=`: repetitions per cell.
    pub repeats: Option<usize>,
    /// `timeout=`: limit per child process.
    pub timeout: Option<Duration>,
    /// `profile=false`: skip the extra, uncounted repetition that records flamegraphs.
    pub no_profile: bool,
    /// `profile=all`: profile every cell, not only the ones the differentials compare.
    pub profile_all: bool,
    /// Everything else: scenario parameters, checked when scenarios are known.
    pub params: Vec<(String, String)>,
    /// The arguments as typed, for the command that reproduces the run.
    pub typed: Vec<String>,
}

fn int_list(key: &str, text: &str, max: usize, example: &str) -> anyhow::Result<Vec<usize>> {
    let parsed: Option<Vec<usize>> = text
        .split(',')
        .map(|part| {
            part.trim()
                .parse::<usize>()
                .ok()
                .filter(|&n| n >= 1 && n <= max)
        })
        .collect();
    match parsed {
        Some(list) if !text.trim().is_empty() => Ok(list),
        _ => bail!(
            "{key}={text:?}: expected a comma-separated list of integers in 1..={max}, e.g. {key}={example}"
        ),
    }
}

fn boolean(key: &str, value: &str) -> anyhow::Result<bool> {
    match value {
        "true" | "1" | "yes" => Ok(true),
        "false" | "0" | "no" => Ok(false),
        _ => bail!("{key}={value:?}: expected true or false"),
    }
}

fn name_list(key: &str, text: &str) -> anyhow::Result<Vec<String>> {
    let names: Vec<String> = text.split(',').map(|s| s.trim().to_owned()).collect();
    if names.iter().any(String::is_empty) {
        bail!("{key}={text:?}: expected a comma-separated list of names");
    }
    Ok(names)
}

impl Settings {
    /// Parses `key=value` arguments.
    pub fn parse(args: &[String]) -> anyhow::Result<Settings> {
        let mut s = Settings {
            typed: args.to_vec(),
            ..Settings::default()
        };
        let nproc = affinity::allowed_cpus().len();
        for arg in args {
            let Some((key, value)) = arg.split_once('=') else {
                bail!("{arg:?}: expected key=value, e.g. threads=1,2,4 (keys: {}, or a scenario parameter)", KEYS.join(", "));
            };
            let key = key.trim();
            let duration = |v: &str| {
                scenario_file::parse_duration(v).map_err(|m| anyhow::anyhow!("{key}={m}"))
            };
            match key {
                // The pool hot path runs one thread per client: `clients=` is `threads=`.
                "threads" | "clients" => {
                    s.threads = Some(int_list(key, value, max_threads(), "1,2,4")?)
                }
                "cores" => {
                    let cores = int_list(key, value, usize::MAX, "1,2")?;
                    if let Some(&too_many) = cores.iter().find(|&&c| c > nproc) {
                        bail!("cores={too_many}: this machine has {nproc} CPU(s) available; accepted 1..={nproc}");
                    }
                    s.cores = Some(cores);
                }
                "scenarios" => s.scenarios = Some(name_list(key, value)?),
                "variants" => s.variants = Some(name_list(key, value)?),
                "quick" => s.quick = boolean(key, value)?,
                "profile" if value == "all" => s.profile_all = true,
                "profile" => {
                    s.no_profile = !boolean(key, value).map_err(|_| {
                        anyhow::anyhow!("profile={value:?}: expected true, false or all")
                    })?
                }
                "duration" => s.duration = Some(duration(value)?),
                "warmup" => s.warmup = Some(duration(value)?),
                "timeout" => s.timeout = Some(duration(value)?),
                "repeats" => {
                    s.repeats = Some(
                        int_list(key, value, 100, "3")?
                            .into_iter()
                            .last()
                            .unwrap_or(1),
                    )
                }
                _ => s.params.push((key.to_owned(), value.to_owned())),
            }
        }
        Ok(s)
    }
}

/// One scenario as the matrix will run it.
#[derive(Debug, Clone)]
pub struct ScenarioPlan {
    /// Scenario file name.
    pub file: String,
    /// The hot path.
    pub hot_path: &'static dyn HotPath,
    /// Variants.
    pub variants: Vec<&'static str>,
    /// Thread counts.
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
}

/// One cell: everything a child `lab run` needs.
#[derive(Debug, Clone)]
pub struct CellSpec<'a> {
    /// The scenario it belongs to.
    pub scenario: &'a ScenarioPlan,
    /// Variant.
    pub variant: &'static str,
    /// Parameters.
    pub params: Params,
    /// Which of the scenario's parameter sets `params` is.
    pub param_index: usize,
    /// Worker threads.
    pub threads: usize,
    /// CPUs in the mask.
    pub cores: usize,
}

/// The whole matrix.
#[derive(Debug, Clone)]
pub struct MatrixPlan {
    /// Scenarios in order.
    pub scenarios: Vec<ScenarioPlan>,
    /// Whether quick mode was asked for.
    pub quick: bool,
    /// Whether each cell gets an extra, uncounted repetition under the CPU profiler.
    pub profile: bool,
    /// Whether every cell is profiled (`profile=all`) rather than the default selection.
    pub profile_all: bool,
    /// The command that reproduces this run.
    pub command: String,
    /// Project root (reports go below it).
    pub root: PathBuf,
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

impl MatrixPlan {
    /// Checks `settings` against the scenario files under `root/benches` and lays out the
    /// cells.
    pub fn build(settings: &Settings, root: &Path) -> anyhow::Result<MatrixPlan> {
        let files = scenario_file::load_all(&root.join("benches")).map_err(anyhow::Error::msg)?;
        if files.is_empty() {
            bail!("no scenario files in {}", root.join("benches").display());
        }
        let selected: Vec<&ScenarioFile> = match &settings.scenarios {
            None => files.iter().filter(|f| f.in_default).collect(),
            Some(names) => names
                .iter()
                .map(|n| {
                    files.iter().find(|f| f.name == *n).ok_or_else(|| {
                        let all: Vec<_> = files.iter().map(|f| f.name.as_str()).collect();
                        anyhow::anyhow!(
                            "scenarios={n:?}: unknown scenario; accepted {}",
                            all.join(", ")
                        )
                    })
                })
                .collect::<anyhow::Result<_>>()?,
        };
        check_variants_exist(settings, &selected)?;
        check_params_exist(settings, &selected)?;

        let nproc = affinity::allowed_cpus().len();
        let mut scenarios = Vec::new();
        for file in selected {
            let mode = if settings.quick {
                &file.quick
            } else {
                &file.normal
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
                continue;
            }
            let cores = match (&settings.cores, &file.cores) {
                (Some(c), _) => c.clone(),
                (None, Some(c)) => c.iter().copied().filter(|&c| c <= nproc).collect(),
                // Quick mode measures at the machine's full width only.
                (None, None) if settings.quick => vec![nproc],
                (None, None) => default_cores(nproc),
            };
            let mut sweeps = mode.params.clone();
            for (name, text) in &settings.params {
                if let Ok(spec) = harness::params::find_spec(file.hot_path.params(), name) {
                    let values = spec.parse_list(text).map_err(anyhow::Error::msg)?;
                    sweeps.retain(|(n, _)| n != name);
                    sweeps.push((name.clone(), values));
                }
            }
            let param_sets = combinations(file.hot_path, &sweeps)?;
            let duration = settings.duration.unwrap_or(mode.duration);
            let warmup = settings.warmup.unwrap_or(mode.warmup);
            scenarios.push(ScenarioPlan {
                file: file.name.clone(),
                hot_path: file.hot_path,
                variants,
                threads: settings
                    .threads
                    .clone()
                    .unwrap_or_else(|| mode.threads.clone()),
                cores,
                param_sets,
                duration,
                warmup,
                repeats: settings.repeats.unwrap_or(mode.repeats),
                timeout: settings
                    .timeout
                    .or(file.timeout)
                    .unwrap_or(Duration::from_secs(30) + (duration + warmup) * 3),
            });
        }
        if scenarios.is_empty() {
            bail!("variants=...: none of the selected scenarios has these variants");
        }
        let mut command = String::from("just matrix");
        for arg in &settings.typed {
            command.push(' ');
            command.push_str(arg);
        }
        Ok(MatrixPlan {
            scenarios,
            quick: settings.quick,
            profile: !settings.no_profile,
            profile_all: settings.profile_all,
            command,
            root: root.to_path_buf(),
        })
    }

    /// Every cell, scenario by scenario, then variant, parameters, cores and threads.
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
fn combinations(hot_path: &dyn HotPath, sweeps: &[ParamSweep]) -> anyhow::Result<Vec<Params>> {
    let mut sets = vec![Params::defaults(hot_path.params())];
    for (name, values) in sweeps {
        let mut next = Vec::with_capacity(sets.len() * values.len());
        for set in &sets {
            for value in values {
                let mut p = set.clone();
                p.insert(name, value.clone());
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

/// Prints the hot paths, their variants and parameters, and the scenario files.
pub fn print_list(root: &Path) -> anyhow::Result<()> {
    for hot_path in crate::catalog::hot_paths() {
        println!("{}: {}", hot_path.name(), hot_path.summary());
        println!("  variants:");
        for v in hot_path.variants() {
            println!("    {:<20} {}", v.name, v.summary);
        }
        if !hot_path.params().is_empty() {
            println!("  parameters (default; accepted):");
            for p in hot_path.params() {
                println!(
                    "    {:<14} {:<8} {}; {}",
                    p.name,
                    p.default,
                    p.help,
                    p.accepted()
                );
            }
        }
        println!();
    }
    println!("scenario files ({}):", root.join("benches").display());
    for f in scenario_file::load_all(&root.join("benches")).map_err(anyhow::Error::msg)? {
        let threads: Vec<String> = f.normal.threads.iter().map(|t| t.to_string()).collect();
        println!(
            "  {:<20} hot path {:<8} threads {:<12} {}{}",
            f.name,
            f.hot_path.name(),
            threads.join(","),
            if f.in_default {
                ""
            } else {
                "(not in the default matrix) "
            },
            f.description
        );
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
    fn parses_settings_and_keeps_params_for_later() {
        let s = Settings::parse(&args(&[
            "threads=1,2,4,6,12",
            "quick=true",
            "duration=500ms",
            "users=10",
        ]))
        .unwrap();
        assert_eq!(s.threads, Some(vec![1, 2, 4, 6, 12]));
        assert!(s.quick);
        assert_eq!(s.duration, Some(Duration::from_millis(500)));
        assert_eq!(s.params, vec![("users".to_owned(), "10".to_owned())]);
    }

    #[test]
    fn bad_settings_are_one_line_errors_naming_the_input() {
        let cases = [
            (
                "threads=0",
                "threads=\"0\": expected a comma-separated list of integers in 1..=4096",
            ),
            ("threads=abc", "threads=\"abc\""),
            ("threads=1,,2", "threads=\"1,,2\""),
            ("threads=100000", "threads=\"100000\""),
            ("threads=", "threads=\"\""),
            ("cores=0", "cores=\"0\""),
            ("cores=100000", "cores=100000: this machine has"),
            ("quick=maybe", "quick=\"maybe\""),
            ("duration=forever", "duration="),
            ("threads", "expected key=value"),
        ];
        for (arg, expected) in cases {
            let err = format!("{:#}", Settings::parse(&args(&[arg])).unwrap_err());
            assert!(err.contains(expected), "{arg}: {err}");
            assert_eq!(err.lines().count(), 1);
        }
    }

    #[test]
    fn default_cores_are_powers_of_two_and_nproc() {
        assert_eq!(default_cores(1), vec![1]);
        assert_eq!(default_cores(2), vec![1, 2]);
        assert_eq!(default_cores(6), vec![1, 2, 4, 6]);
        assert_eq!(default_cores(16), vec![1, 2, 4, 8, 16]);
    }
}

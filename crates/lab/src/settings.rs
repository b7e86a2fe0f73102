//! `lab matrix`'s `key=value` arguments, parsed into [`Settings`].
//!
//! Checks that need nothing but the text are made here, before any scenario file is read:
//! a malformed list, a key given twice, more cores than the machine has (or than `cpus=`
//! plans for), `quick=true` with `smoke=true`, `cpus=` without `plan=true`. Checking the
//! settings against scenario files is `plan`'s job.

use std::collections::BTreeSet;
use std::time::Duration;

use anyhow::bail;
use harness::affinity;

use crate::cell_request::MAX_REPEATS;
use crate::scenario_file::{self, max_threads};

/// The time budget a matrix plans to unless `budget=` says otherwise.
pub const DEFAULT_BUDGET: Duration = Duration::from_secs(15 * 60);

/// The longest `budget=` accepted.
const MOST_BUDGET: Duration = Duration::from_secs(7 * 24 * 3600);

/// Thread (or client) counts typed for one scenario file: `sqlmix-slots.threads=8,16`.
#[derive(Debug, Clone, PartialEq)]
pub struct FileCounts {
    /// Scenario file name.
    pub file: String,
    /// The key as typed, e.g. `sqlmix-slots.threads`.
    pub key: String,
    /// The counts.
    pub counts: Vec<usize>,
}

/// What the user typed after `lab matrix`, parsed but not yet checked against scenario
/// files.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Settings {
    /// `threads=`: thread counts for every scenario file whose axis is threads.
    pub threads: Option<Vec<usize>>,
    /// `clients=`: client counts for every scenario file whose axis is clients.
    pub clients: Option<Vec<usize>>,
    /// `<file>.threads=` / `<file>.clients=`: one scenario file's counts, whatever its axis.
    pub per_file: Vec<FileCounts>,
    /// `cores=`: core counts.
    pub cores: Option<Vec<usize>>,
    /// `scenarios=`: scenario file names.
    pub scenarios: Option<Vec<String>>,
    /// `variants=`: variant names.
    pub variants: Option<Vec<String>>,
    /// `quick=true`: the quick mode of every scenario file.
    pub quick: bool,
    /// `smoke=true`: the `[smoke]` mode of every scenario file that has one.
    pub smoke: bool,
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
    /// `resume=<run-id>`: continue that interrupted run with its own settings.
    pub resume: Option<String>,
    /// `force=true`: resume even on another commit or machine, or run beside another
    /// `lab matrix` that is measuring on this machine.
    pub force: bool,
    /// `interference=`: the load (other processes' CPU plus steal, in CPUs) above which a
    /// repetition is retaken; `interference=off` gives `Some(None)`: no retakes.
    pub interference: Option<Option<f64>>,
    /// `machine_speed=`: how far from the machine's usual speed (by the canary) a kept
    /// repetition may run, e.g. 0.15; `machine_speed=off` gives `Some(None)`: speeds are
    /// recorded, never judged.
    pub speed_tolerance: Option<Option<f64>>,
    /// `budget=`: the time the plan fits in; `None` for `budget=none` (nothing trimmed).
    /// [`DEFAULT_BUDGET`] when not given.
    pub budget: Option<Duration>,
    /// Whether `budget=` was typed.
    pub budget_typed: bool,
    /// `plan=true`: print the plan and run nothing.
    pub plan_only: bool,
    /// `cpus=N` (with `plan=true`): plan for a machine of N CPUs.
    pub cpus: Option<usize>,
    /// Set by `resume`: plan with the per-run costs of the results files before this
    /// run id, as the run being resumed did.
    pub costs_before: Option<String>,
    /// `locks=off`: measure with the lock table's instrument off in every child (the
    /// uninstrumented figure, no lock table); `locks=on` is the default.
    pub locks_off: bool,
    /// `locks=true`: the lock table as with `on`, and every real server that can run
    /// under it started with the lock library preloaded (`launcher::locks`: its pthread
    /// locks' waits and holds in each record's `extra.locks`).
    pub lock_library: bool,
    /// `interleave=on`: a part whose sides can stay resident together in one process
    /// measures its pairs alternating in short turns (`harness::slices`); off (the
    /// default), whole windows in turn.
    pub interleave: bool,
    /// `precision=5%`: how narrow a decided part's interval must be (half its width,
    /// relative) before its pairs stop; [`verdict::decide::PRECISION`] when not given.
    pub precision: Option<f64>,
    /// Everything else: hot-path parameters, checked when scenario files are known.
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

/// `budget=15m`, `budget=1h30m`, `budget=90s`: 1 s to 7 days.
fn budget(value: &str) -> anyhow::Result<Duration> {
    match humantime::parse_duration(value.trim()) {
        Ok(d) if d >= Duration::from_secs(1) && d <= MOST_BUDGET => Ok(d),
        _ => bail!(
            "budget={value:?}: expected a duration from 1s to 7 days (e.g. 15m, 1h30m) or none"
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

fn interference(value: &str) -> anyhow::Result<Option<f64>> {
    if value.trim() == "off" {
        return Ok(None);
    }
    match value.trim().parse::<f64>() {
        Ok(x) if x > 0.0 && x.is_finite() => Ok(Some(x)),
        _ => bail!(
            "interference={value:?}: expected the load in CPUs above which a repetition is retaken, a number above 0 (e.g. interference=0.25), or off"
        ),
    }
}

fn speed_tolerance(value: &str) -> anyhow::Result<Option<f64>> {
    if value.trim() == "off" {
        return Ok(None);
    }
    match value.trim().parse::<f64>() {
        Ok(x) if x > 0.0 && x < 1.0 => Ok(Some(x)),
        _ => bail!(
            "machine_speed={value:?}: expected how far from its usual speed the machine may run during a kept repetition, a number between 0 and 1 (e.g. machine_speed={}), or off",
            crate::speed::SUGGESTED_TOLERANCE
        ),
    }
}

/// `locks=`: (the instrument off, the lock library on).
fn locks(value: &str) -> anyhow::Result<(bool, bool)> {
    match value.trim() {
        "on" => Ok((false, false)),
        "off" => Ok((true, false)),
        "true" => Ok((false, true)),
        _ => bail!(
            "locks={value:?}: expected on (the lock table, the default), off (the uninstrumented figure, no lock table) or true (also the lock library in real servers)"
        ),
    }
}

/// `precision=5%` or `precision=0.05`: a half-width above 0 and at most 50%.
fn precision(value: &str) -> anyhow::Result<f64> {
    let text = value.trim();
    let parsed = match text.strip_suffix('%') {
        Some(percent) => percent.trim().parse::<f64>().map(|p| p / 100.0),
        None => text.parse::<f64>(),
    };
    match parsed {
        Ok(x) if x > 0.0 && x <= 0.5 => Ok(x),
        _ => bail!(
            "precision={value:?}: expected how narrow a decided part's interval must be before its pairs stop, a half-width above 0% and at most 50% (e.g. precision=5%; the default is {}%)",
            verdict::decide::PRECISION * 100.0
        ),
    }
}

fn on_off(key: &str, value: &str) -> anyhow::Result<bool> {
    match value.trim() {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => bail!("{key}={value:?}: expected on or off"),
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
            budget: Some(DEFAULT_BUDGET),
            ..Settings::default()
        };
        let here = affinity::allowed_cpus().len();
        // cores= is checked against the machine planned for, which cpus= may name later.
        let mut cores_text: Option<String> = None;
        let mut seen = BTreeSet::new();
        for arg in args {
            let Some((key, value)) = arg.split_once('=') else {
                // A setting typed without its value is the likely slip; the keys, twenty
                // of them, would bury the reason.
                let example = match SETTINGS.iter().find(|s| s.key == arg.trim()) {
                    Some(s) => format!("{}={}", s.key, s.example),
                    None => "threads=1,2,4".to_owned(),
                };
                bail!("{arg:?}: expected key=value, e.g. {example}");
            };
            let key = key.trim();
            // `f.threads` and `f.clients` set the same counts, so they count as one key.
            let canonical = match key.split_once('.') {
                Some((file, _)) => format!("{file}.threads"),
                None => key.to_owned(),
            };
            if !seen.insert(canonical) {
                bail!("{arg}: {key} is given twice; give it once, with a list for several values (e.g. {key}=1,2)");
            }
            s.set(key, value, &mut cores_text)?;
        }
        if let Some(n) = s.cpus {
            if !s.plan_only {
                bail!("cpus={n}: only with plan=true, which plans for a machine of {n} CPUs and runs nothing (this machine has {here})");
            }
        }
        if let Some(value) = cores_text {
            let (most, machine) = match s.cpus {
                Some(n) => (n, format!("cpus={n} plans for {n} CPU(s)")),
                None => (here, format!("this machine has {here} CPU(s) available")),
            };
            s.cores = Some(int_list("cores", &value, most, "1").map_err(|_| {
                anyhow::anyhow!("cores={value:?}: expected a comma-separated list of integers in 1..={most} ({machine}), e.g. cores=1")
            })?);
        }
        if s.quick && s.smoke {
            bail!("quick=true with smoke=true: choose one (smoke has its own, smaller sizes)");
        }
        Ok(s)
    }

    /// Takes one `key=value` setting (its key checked once already) through its entry
    /// in [`SETTINGS`]; `cores=` is kept as text in `cores_text`, to be checked against
    /// the machine planned for.
    fn set(
        &mut self,
        key: &str,
        value: &str,
        cores_text: &mut Option<String>,
    ) -> anyhow::Result<()> {
        if let Some(setting) = SETTINGS.iter().find(|s| s.key == key) {
            return (setting.take)(self, value, cores_text);
        }
        match key.split_once('.') {
            Some((file, "threads" | "clients")) if !file.is_empty() => {
                self.per_file.push(FileCounts {
                    file: file.to_owned(),
                    key: key.to_owned(),
                    counts: int_list(key, value, max_threads(), "8,16")?,
                })
            }
            Some((file, _)) => bail!(
                "{key}=...: unknown per-file setting; accepted {file}.threads and {file}.clients"
            ),
            None => self.params.push((key.to_owned(), value.to_owned())),
        }
        Ok(())
    }
}

/// One `lab matrix` setting, declared once: the parser ([`Settings::parse`]), the help
/// text ([`help`]) and the list of accepted keys in errors ([`keys`]) read this entry.
/// ripgrep's flags are the model: the typed result ([`Settings`]) is one struct, each
/// entry says how its text becomes a field.
pub struct Setting {
    /// The key, e.g. `threads`.
    pub key: &'static str,
    /// An example value, e.g. `1,2,4`.
    pub example: &'static str,
    /// What it applies to and does, one line for the help.
    pub help: &'static str,
    /// Parses `value` into its field; `cores=` only keeps the text (checked once `cpus=`
    /// is known).
    take: fn(&mut Settings, &str, &mut Option<String>) -> anyhow::Result<()>,
}

/// The key that stands for every per-file count setting in [`keys`] and the help.
pub const PER_FILE_KEY: &str = "<file>.threads";

/// Every `lab matrix` setting that is not a hot-path parameter, in the order the help
/// lists them. A hot-path parameter (`users=6000`) is any other key, checked once the
/// scenario files are known; `<file>.threads=` / `<file>.clients=` are one file's counts.
pub const SETTINGS: &[Setting] = &[
    Setting {
        key: "threads",
        example: "1,2,4",
        help: "thread counts of every scenario file whose axis is threads",
        take: |s, v, _| {
            put(&mut s.threads, int_list("threads", v, max_threads(), "1,2,4").map(Some))
        },
    },
    Setting {
        key: "clients",
        example: "100,1000",
        help: "client counts of every scenario file whose axis is clients",
        take: |s, v, _| {
            put(&mut s.clients, int_list("clients", v, max_threads(), "100,1000").map(Some))
        },
    },
    Setting {
        key: "cores",
        example: "1,2",
        help: "core counts (at most the CPUs here, or cpus=)",
        take: |_, v, cores| {
            *cores = Some(v.to_owned());
            Ok(())
        },
    },
    Setting {
        key: "scenarios",
        example: "lookup",
        help: "scenario files by name (benches/<name>.toml)",
        take: |s, v, _| put(&mut s.scenarios, name_list("scenarios", v).map(Some)),
    },
    Setting {
        key: "variants",
        example: "dashmap,lmdb",
        help: "variants by name",
        take: |s, v, _| put(&mut s.variants, name_list("variants", v).map(Some)),
    },
    Setting {
        key: "quick",
        example: "true",
        help: "each file's quick mode: fewer cells, shorter windows",
        take: |s, v, _| put(&mut s.quick, boolean("quick", v)),
    },
    Setting {
        key: "smoke",
        example: "true",
        help: "each file's [smoke] mode, seconds a file",
        take: |s, v, _| put(&mut s.smoke, boolean("smoke", v)),
    },
    Setting {
        key: "duration",
        example: "1s",
        help: "measured window of a repetition",
        take: |s, v, _| put(&mut s.duration, duration("duration", v).map(Some)),
    },
    Setting {
        key: "warmup",
        example: "300ms",
        help: "warm-up of a repetition",
        take: |s, v, _| put(&mut s.warmup, duration("warmup", v).map(Some)),
    },
    Setting {
        key: "repeats",
        example: "3",
        help: "repetitions a cell",
        take: |s, v, _| {
            let list = int_list("repeats", v, MAX_REPEATS, "3")?;
            s.repeats = list.last().copied();
            Ok(())
        },
    },
    Setting {
        key: "timeout",
        example: "60s",
        help: "limit of one child process",
        take: |s, v, _| put(&mut s.timeout, duration("timeout", v).map(Some)),
    },
    Setting {
        key: "profile",
        example: "false",
        help: "false: no flamegraphs; all: profile every cell, not only the compared ones",
        take: |s, v, _| {
            if v == "all" {
                s.profile_all = true;
                return Ok(());
            }
            let on = boolean("profile", v)
                .map_err(|_| anyhow::anyhow!("profile={v:?}: expected true, false or all"))?;
            s.no_profile = !on;
            Ok(())
        },
    },
    Setting {
        key: "resume",
        example: "<run-id>",
        help: "continue an interrupted run with its recorded settings",
        take: |s, v, _| {
            s.resume = Some(v.trim().to_owned());
            Ok(())
        },
    },
    Setting {
        key: "force",
        example: "true",
        help: "resume on another commit or host, or run beside another lab matrix",
        take: |s, v, _| put(&mut s.force, boolean("force", v)),
    },
    Setting {
        key: "interference",
        example: "0.25",
        help: "retake a repetition during which other processes took more CPUs than this (off: never)",
        take: |s, v, _| put(&mut s.interference, interference(v).map(Some)),
    },
    Setting {
        key: "machine_speed",
        example: "0.15",
        help: "also retake one whose canary ran outside 1 -/+ this of the usual speed (default off)",
        take: |s, v, _| put(&mut s.speed_tolerance, speed_tolerance(v).map(Some)),
    },
    Setting {
        key: "budget",
        example: "15m",
        help: "the time the plan fits in (the default 15m; none trims nothing)",
        take: |s, v, _| {
            s.budget_typed = true;
            s.budget = if v.trim() == "none" { None } else { Some(budget(v)?) };
            Ok(())
        },
    },
    Setting {
        key: "plan",
        example: "true",
        help: "print the plan and run nothing",
        take: |s, v, _| put(&mut s.plan_only, boolean("plan", v)),
    },
    Setting {
        key: "cpus",
        example: "64",
        help: "with plan=true: plan for a machine of this many CPUs",
        take: |s, v, _| {
            let list = int_list("cpus", v, 1 << 16, "64")?;
            s.cpus = list.last().copied();
            Ok(())
        },
    },
    Setting {
        key: "locks",
        example: "off",
        help: "off: measure without the lock table's instrument (default on); true: also preload the lock library into real servers (their locks' waits and holds)",
        take: |s, v, _| {
            (s.locks_off, s.lock_library) = locks(v)?;
            Ok(())
        },
    },
    Setting {
        key: "interleave",
        example: "on",
        help: "measure the parts' pairs with both sides resident, in short turns, where they can (default off)",
        take: |s, v, _| put(&mut s.interleave, on_off("interleave", v)),
    },
    Setting {
        key: "precision",
        example: "5%",
        help: "stop a decided part's pairs once its interval is this narrow, +- (default 3%; wider is faster)",
        take: |s, v, _| put(&mut s.precision, precision(v).map(Some)),
    },
];

/// Every setting's key, with [`PER_FILE_KEY`] after the counts, as errors list them.
pub fn keys() -> Vec<&'static str> {
    let mut keys: Vec<&'static str> = SETTINGS.iter().map(|s| s.key).collect();
    keys.insert(2, PER_FILE_KEY);
    keys
}

/// The settings as `lab matrix --help` lists them, one line each, from [`SETTINGS`].
pub fn help() -> String {
    let mut out = String::from("Settings (key=value, all optional; defaults come from the scenario files benches/<name>.toml):\n");
    let width = SETTINGS
        .iter()
        .map(|s| s.key.len() + s.example.len() + 1)
        .max()
        .unwrap_or(0);
    let per_file = format!("{PER_FILE_KEY}=8,16");
    let mut line = |left: &str, help: &str| {
        out.push_str(&format!("  {left:<width$}  {help}\n"));
    };
    for (i, s) in SETTINGS.iter().enumerate() {
        if i == 2 {
            line(
                &per_file,
                "one scenario file's counts, whatever its axis (or <file>.clients)",
            );
        }
        line(&format!("{}={}", s.key, s.example), s.help);
    }
    line(
        "<parameter>=<values>",
        "any hot-path parameter, e.g. users=6000 write_pct=0,10 (lab list shows them)",
    );
    out
}

/// Stores a parsed value in its field: the shape of every [`Setting::take`] that only
/// parses one value.
fn put<T>(field: &mut T, value: anyhow::Result<T>) -> anyhow::Result<()> {
    *field = value?;
    Ok(())
}

/// A duration setting: `duration=1s`, `warmup=300ms`, `timeout=60s`.
fn duration(key: &str, value: &str) -> anyhow::Result<Duration> {
    scenario_file::parse_duration(value).map_err(|m| anyhow::anyhow!("{key}={m}"))
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
        let s = Settings::parse(&args(&["interference=0.5", "force=true"])).unwrap();
        assert_eq!((s.interference, s.force), (Some(Some(0.5)), true));
        let s = Settings::parse(&args(&["interference=off"])).unwrap();
        assert_eq!(s.interference, Some(None));
        let s = Settings::parse(&args(&["machine_speed=0.1"])).unwrap();
        assert_eq!(s.speed_tolerance, Some(Some(0.1)));
        let s = Settings::parse(&args(&["machine_speed=off"])).unwrap();
        assert_eq!(s.speed_tolerance, Some(None));
        assert!(Settings::parse(&args(&["locks=off"])).unwrap().locks_off);
        assert!(!Settings::parse(&args(&["locks=on"])).unwrap().locks_off);
        let library = Settings::parse(&args(&["locks=true"])).unwrap();
        assert!(library.lock_library && !library.locks_off);
        assert!(!Settings::parse(&args(&["locks=on"])).unwrap().lock_library);
        assert!(!Settings::parse(&[]).unwrap().locks_off);
        assert!(
            Settings::parse(&args(&["interleave=on"]))
                .unwrap()
                .interleave
        );
        assert!(
            !Settings::parse(&args(&["interleave=off"]))
                .unwrap()
                .interleave
        );
        assert!(!Settings::parse(&[]).unwrap().interleave);
        let five = |v: &str| Settings::parse(&args(&[v])).unwrap().precision;
        assert_eq!(five("precision=5%"), Some(0.05));
        assert_eq!(five("precision=0.05"), Some(0.05));
        assert_eq!(Settings::parse(&[]).unwrap().precision, None);
    }

    #[test]
    fn bad_settings_are_one_line_errors_naming_the_input() {
        let nproc = affinity::allowed_cpus().len();
        let cores = format!("cores=\"0\": expected a comma-separated list of integers in 1..={nproc} (this machine has {nproc} CPU(s) available)");
        let cases = [
            (
                "threads=0",
                "threads=\"0\": expected a comma-separated list of integers in 1..=4096",
            ),
            ("threads=abc", "threads=\"abc\""),
            ("threads=1,,2", "threads=\"1,,2\""),
            ("threads=100000", "threads=\"100000\""),
            ("threads=", "threads=\"\""),
            ("clients=0", "clients=\"0\""),
            ("cores=0", cores.as_str()),
            ("cores=100000", "cores=\"100000\""),
            ("quick=maybe", "quick=\"maybe\""),
            ("interference=0", "interference=\"0\": expected the load in CPUs"),
            ("interference=lots", "interference=\"lots\""),
            ("machine_speed=1.5", "machine_speed=\"1.5\": expected how far"),
            ("smoke=maybe", "smoke=\"maybe\""),
            ("interleave=yes", "interleave=\"yes\""),
            ("precision=0", "precision=\"0\": expected how narrow"),
            ("precision=5", "precision=\"5\": expected how narrow"),
            ("precision=60%", "precision=\"60%\""),
            ("precision=tight", "precision=\"tight\""),
            ("locks=of", "locks=\"of\": expected on (the lock table, the default), off"),
            ("locks=false", "locks=\"false\": expected on"),
            ("duration=forever", "duration="),
            ("threads", "expected key=value"),
            ("sqlmix-slots.threads=0", "sqlmix-slots.threads=\"0\""),
            (
                "sqlmix-slots.slots=1",
                "sqlmix-slots.slots=...: unknown per-file setting; accepted sqlmix-slots.threads and sqlmix-slots.clients",
            ),
        ];
        for (arg, expected) in cases {
            let err = format!("{:#}", Settings::parse(&args(&[arg])).unwrap_err());
            assert!(err.contains(expected), "{arg}: {err}");
            assert_eq!(err.lines().count(), 1);
        }
    }

    #[test]
    fn plan_cpus_and_budget() {
        let s =
            Settings::parse(&args(&["plan=true", "cpus=64", "cores=1,64", "budget=1h"])).unwrap();
        assert!(s.plan_only);
        assert_eq!(s.cpus, Some(64));
        assert_eq!(s.cores, Some(vec![1, 64]));
        assert_eq!(s.budget, Some(Duration::from_secs(3600)));
        assert_eq!(Settings::parse(&[]).unwrap().budget, Some(DEFAULT_BUDGET));
        assert_eq!(
            Settings::parse(&args(&["budget=none"])).unwrap().budget,
            None
        );
        let nproc = affinity::allowed_cpus().len();
        for (list, expected) in [
            (
                &["cpus=64"][..],
                format!("cpus=64: only with plan=true, which plans for a machine of 64 CPUs and runs nothing (this machine has {nproc})"),
            ),
            (&["plan=true", "cpus=8", "cores=9"], "cores=\"9\": expected a comma-separated list of integers in 1..=8 (cpus=8 plans for 8 CPU(s))".to_owned()),
            (&["budget=0s"], "budget=\"0s\": expected a duration from 1s to 7 days".to_owned()),
            (&["plan=maybe"], "plan=\"maybe\": expected true or false".to_owned()),
        ] {
            let err = format!("{:#}", Settings::parse(&args(list)).unwrap_err());
            assert!(err.contains(&expected), "{list:?}: {err}");
            assert_eq!(err.lines().count(), 1);
        }
    }

    #[test]
    fn a_key_given_twice_is_refused() {
        for pair in [
            ["threads=1", "threads=2"],
            ["users=10", "users=20"],
            ["sqlmix-slots.threads=8", "sqlmix-slots.clients=16"],
        ] {
            let err = format!("{:#}", Settings::parse(&args(&pair)).unwrap_err());
            assert!(err.contains("is given twice"), "{pair:?}: {err}");
        }
        let err = Settings::parse(&args(&["quick=true", "smoke=true"])).unwrap_err();
        assert!(err.to_string().contains("choose one"), "{err}");
    }
}

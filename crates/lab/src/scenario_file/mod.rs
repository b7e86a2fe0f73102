//! Scenario files: `benches/<name>.toml`, one experiment of the matrix on one hot path.
//!
//! A scenario file names a hot path, states its axis (`axis = "threads"`, `"clients"` or
//! `"fixed"`: what its thread counts mean, and so which command-line setting may change
//! them) and says which variants, thread counts, parameters (a list is a sweep), window
//! and repetitions to use, with a `[quick]` table of overrides for `quick=true` and a
//! `[smoke]` table (over `[quick]`) for `smoke=true`, the tiny end-to-end check CI runs.
//! Thread and core lists may be relative to the machine (`"nproc"`, `"2nproc"`,
//! `"powers of two"`: [`crate::sizes`]); `overhead` is the file's estimate of what a child
//! costs beyond its window, `min_duration` how far a budget may shorten the window,
//! `pair_duration` the window of each side of a part's pair where it is not `duration`,
//! and `keep_cores` asks a budget to trim its core counts last.
//! Everything is validated when the file is read, with errors that name the file, the line
//! and what is accepted. This module does not merge command-line overrides and resolves
//! no size against a machine: `plan` does.

use std::path::Path;
use std::time::Duration;

use harness::{HotPath, ParamSpec};
use serde_json::Value;

pub use crate::sizes::Sizes;
use raw::RawMode;

/// Repetitions per cell when a file does not say: enough that the order-statistics 95%
/// interval of the median is narrower than min-max (the budget may trim them).
pub const DEFAULT_REPEATS: usize = 8;

/// Most threads one cell may start (the pool hot path runs one thread per client, and the
/// seed went to 3000 clients); lower on a machine whose kernel allows fewer threads.
pub const MAX_THREADS: usize = 4096;

/// The most threads a cell may start on this machine: [`MAX_THREADS`], or a quarter of
/// the kernel's `threads-max` if that is lower.
pub fn max_threads() -> usize {
    std::fs::read_to_string("/proc/sys/kernel/threads-max")
        .ok()
        .and_then(|s| s.trim().parse::<usize>().ok())
        .map_or(MAX_THREADS, |limit| (limit / 4).clamp(1, MAX_THREADS))
}

/// A parameter and the values it sweeps over.
pub type ParamSweep = (String, Vec<Value>);

/// What a scenario file's thread counts are, and so which setting may change them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Axis {
    /// Worker threads; `threads=` replaces them.
    Threads,
    /// Closed-loop clients, one thread each; `clients=` replaces them.
    Clients,
    /// A fixed point for a parameter sweep; only `<file>.threads=` changes it.
    Fixed,
}

impl Axis {
    /// The name a scenario file gives it.
    pub fn name(self) -> &'static str {
        match self {
            Axis::Threads => "threads",
            Axis::Clients => "clients",
            Axis::Fixed => "fixed",
        }
    }

    fn parse(text: &str) -> Result<Axis, String> {
        match text {
            "threads" => Ok(Axis::Threads),
            "clients" => Ok(Axis::Clients),
            "fixed" => Ok(Axis::Fixed),
            _ => Err(format!(
                "{text:?} is not accepted: expected threads, clients or fixed"
            )),
        }
    }
}

/// Which thread counts of a thread sweep get a profiling repetition by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProfileAt {
    /// Threads = 1, = cores and the most: the ends the differential flamegraphs compare.
    Sweep,
    /// The most threads only: for a file whose comparison is between its parameters at the
    /// same thread count (dispatches, say), where a differential across threads repeats
    /// the one its sibling file draws.
    Most,
}

impl ProfileAt {
    fn parse(text: &str) -> Result<ProfileAt, String> {
        match text {
            "sweep" => Ok(ProfileAt::Sweep),
            "most" => Ok(ProfileAt::Most),
            _ => Err(format!("{text:?} is not accepted: expected sweep or most")),
        }
    }
}

/// The settings a scenario file gives, for the normal, quick or smoke mode.
#[derive(Debug, Clone)]
pub struct ModeSettings {
    /// Variants to run.
    pub variants: Vec<&'static str>,
    /// Thread counts (clients, for a client axis), perhaps relative to the CPUs.
    pub threads: Sizes,
    /// Core counts, when the file gives them for this mode, perhaps relative to the CPUs.
    pub cores: Option<Sizes>,
    /// Measured window per repetition.
    pub duration: Duration,
    /// Warm-up per repetition.
    pub warmup: Duration,
    /// Repetitions per cell.
    pub repeats: usize,
    /// Parameters that differ from the hot path's defaults.
    pub params: Vec<ParamSweep>,
}

/// One validated scenario file.
#[derive(Debug, Clone)]
pub struct ScenarioFile {
    /// File stem, e.g. `lookup`; what `scenarios=` names.
    pub name: String,
    /// The hot path it runs.
    pub hot_path: &'static dyn HotPath,
    /// What its thread counts are.
    pub axis: Axis,
    /// What it is for.
    pub description: String,
    /// Whether a plain `just matrix` runs it.
    pub in_default: bool,
    /// Per-cell timeout, when the file sets one.
    pub timeout: Option<Duration>,
    /// Parameters whose lists go hand in hand (the i-th value of each together) instead
    /// of being crossed: `paired = ["connections", "max_requests"]` runs 1 x 1024 and
    /// 10 x 5000, not also 1 x 5000 and 10 x 1024.
    pub paired: Vec<String>,
    /// Which thread counts the default profiling covers (`profile_at`, default `sweep`).
    pub profile_at: ProfileAt,
    /// Whether the profiled cells at 1 thread and at the most threads on the most cores
    /// are profiled twice (`profile_repeat = true`): two profiles of one cell give the
    /// noise floor of a finding that compares profiles (the server's `where_time_goes`).
    pub profile_repeat: bool,
    /// The file's `[seed]` table as JSON (the seed's baseline, figures, settings and what a
    /// model was calibrated on), `Null` when it has none: copied into the results so the
    /// hot path's question reads it without the file.
    pub seed: Value,
    /// What a child takes beyond warm-up and window (starting, building its data,
    /// verifying), as the file estimates it (`overhead`): the budget's cost model uses it
    /// when no results file has measured it.
    pub overhead: Option<Duration>,
    /// The shortest window a budget may cut this file's window to (`min_duration`);
    /// without it the budget leaves the window as it is (a simulated server whose requests
    /// take tens of milliseconds needs its window).
    pub min_duration: Option<Duration>,
    /// The window of each side of a part's pair in a normal run (`pair_duration`), where
    /// it is not `duration`. Why a second window: on a real dqlite node the two sides of
    /// a pair hardly vary together (their log throughputs correlate 0.0-0.3), so a pair's
    /// spread is each window's own (bursty transactions), not the host's, and shrinks as
    /// 1/sqrt(window): 300 ms windows gave an sd of 0.096-0.116 at 1.3 s a pair, 1 s
    /// windows 0.049-0.056 at 2.7 s (`lab matrix scenarios=sqlmix-libdqlite budget=3m
    /// duration=...`); in two default runs the sqlmix parts' pairs varied 0.033-0.071 at
    /// 1 s against 0.076-0.108 at 300 ms, about 30% less pair time for one interval
    /// width (docs/findings.md, runs J and K). The rounds keep `duration`: between
    /// rounds the host's drift dominates, which a longer window does not cancel.
    pub pair_duration: Option<Duration>,
    /// Whether a budget trims this file's core counts last (`keep_cores = true`: the
    /// files whose question is about cores), after repetitions.
    pub keep_cores: bool,
    /// Normal mode.
    pub normal: ModeSettings,
    /// `quick=true` mode.
    pub quick: ModeSettings,
    /// `smoke=true` mode, when the file has a `[smoke]` table.
    pub smoke: Option<ModeSettings>,
}

impl ScenarioFile {
    /// The word for one unit of its thread counts: `clients` on a client axis, else
    /// `threads`.
    pub fn unit(&self) -> &'static str {
        match self.axis {
            Axis::Clients => "clients",
            Axis::Threads | Axis::Fixed => "threads",
        }
    }

    /// Its axis with `counts`, e.g. `threads 1,2,4`, `clients 100,1000` or
    /// `fixed at threads 16`.
    pub fn axis_text(&self, counts: &[usize]) -> String {
        self.axis_words(&join(counts))
    }

    /// Its axis with a list as the file writes it, e.g. `threads 1,2,nproc`.
    pub fn axis_words(&self, list: &str) -> String {
        match self.axis {
            Axis::Fixed => format!("fixed at {} {list}", self.unit()),
            Axis::Threads | Axis::Clients => format!("{} {list}", self.unit()),
        }
    }
}

/// `1,2,4`.
pub fn join(counts: &[usize]) -> String {
    counts
        .iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// Reads and validates one scenario file.
pub fn load(path: &Path) -> Result<ScenarioFile, String> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
    let at = |what: &str, msg: String| format!("{shown}: {what}: {msg}");
    let (raw, hot_path) = raw::read(&text, &shown)?;
    let axis = Axis::parse(&raw.axis).map_err(|m| at("axis", m))?;
    let cores = match raw.cores {
        Some(c) => Some(Sizes::parse(&c, true, usize::MAX).map_err(|m| at("cores", m))?),
        None => None,
    };
    let normal = ModeSettings {
        variants: variants(hot_path, raw.variants.as_deref()).map_err(|m| at("variants", m))?,
        threads: threads(&raw.threads).map_err(|m| at("threads", m))?,
        cores,
        duration: duration_or(raw.duration.as_deref(), Duration::from_secs(1))
            .map_err(|m| at("duration", m))?,
        warmup: duration_or(raw.warmup.as_deref(), Duration::from_millis(300))
            .map_err(|m| at("warmup", m))?,
        repeats: repeats(raw.repeats.unwrap_or(DEFAULT_REPEATS as i64))
            .map_err(|m| at("repeats", m))?,
        params: params(hot_path.params(), &raw.params).map_err(|m| at("params", m))?,
    };
    let quick_defaults = ModeSettings {
        threads: Sizes(normal.threads.0.iter().copied().take(3).collect()),
        duration: Duration::from_millis(300),
        warmup: Duration::from_millis(100),
        repeats: 1,
        ..normal.clone()
    };
    let quick = match raw.quick {
        None => quick_defaults,
        Some(q) => {
            // A [quick] table starts from the normal thread counts, not the first three.
            let base = ModeSettings {
                threads: normal.threads.clone(),
                ..quick_defaults
            };
            overridden(hot_path, &base, q, "quick").map_err(|m| format!("{shown}: {m}"))?
        }
    };
    let smoke = match raw.smoke {
        None => None,
        Some(t) => {
            Some(overridden(hot_path, &quick, t, "smoke").map_err(|m| format!("{shown}: {m}"))?)
        }
    };
    let profile_at = match raw.profile_at.as_deref() {
        Some(text) => ProfileAt::parse(text).map_err(|m| at("profile_at", m))?,
        None => ProfileAt::Sweep,
    };
    let optional = |key: &str, text: Option<String>| {
        text.map(|t| parse_duration(&t).map_err(|m| at(key, m)))
            .transpose()
    };
    let timeout = optional("timeout", raw.timeout)?;
    let overhead = optional("overhead", raw.overhead)?;
    let min_duration = optional("min_duration", raw.min_duration)?;
    let pair_duration = optional("pair_duration", raw.pair_duration)?;
    Ok(ScenarioFile {
        name: path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
        hot_path,
        axis,
        description: raw.description.unwrap_or_default(),
        in_default: raw.in_default,
        timeout,
        paired: raw.paired,
        profile_at,
        profile_repeat: raw.profile_repeat,
        seed: match raw.seed {
            Some(t) => serde_json::to_value(t).map_err(|e| at("seed", e.to_string()))?,
            None => Value::Null,
        },
        overhead,
        min_duration,
        pair_duration,
        keep_cores: raw.keep_cores,
        normal,
        quick,
        smoke,
    })
}

/// `base` with the values a `[quick]` or `[smoke]` table (`table`) sets; parameters merge
/// by name.
fn overridden(
    hot_path: &'static dyn HotPath,
    base: &ModeSettings,
    raw: RawMode,
    table: &str,
) -> Result<ModeSettings, String> {
    let at = |what: &str, msg: String| format!("{table}.{what}: {msg}");
    let mut merged = base.params.clone();
    for (name, values) in params(hot_path.params(), &raw.params).map_err(|m| at("params", m))? {
        merged.retain(|(n, _)| *n != name);
        merged.push((name, values));
    }
    Ok(ModeSettings {
        variants: match raw.variants {
            Some(v) => variants(hot_path, Some(&v)).map_err(|m| at("variants", m))?,
            None => base.variants.clone(),
        },
        threads: match raw.threads {
            Some(t) => threads(&t).map_err(|m| at("threads", m))?,
            None => base.threads.clone(),
        },
        cores: match raw.cores {
            Some(c) => Some(Sizes::parse(&c, true, usize::MAX).map_err(|m| at("cores", m))?),
            None => base.cores.clone(),
        },
        duration: duration_or(raw.duration.as_deref(), base.duration)
            .map_err(|m| at("duration", m))?,
        warmup: duration_or(raw.warmup.as_deref(), base.warmup).map_err(|m| at("warmup", m))?,
        repeats: match raw.repeats {
            Some(n) => repeats(n).map_err(|m| at("repeats", m))?,
            None => base.repeats,
        },
        params: merged,
    })
}

fn variants(hot_path: &dyn HotPath, names: Option<&[String]>) -> Result<Vec<&'static str>, String> {
    match names {
        None => Ok(hot_path.variants().iter().map(|v| v.name).collect()),
        Some([]) => Err("empty list: name at least one variant".into()),
        Some(names) => names
            .iter()
            .map(|n| hot_path.variant(n).map(|v| v.name))
            .collect(),
    }
}

fn threads(values: &[toml::Value]) -> Result<Sizes, String> {
    Sizes::parse(values, false, max_threads())
}

fn repeats(n: i64) -> Result<usize, String> {
    usize::try_from(n)
        .ok()
        .filter(|&n| (1..=100).contains(&n))
        .ok_or_else(|| format!("{n} is not accepted: expected an integer in 1..=100"))
}

fn duration_or(text: Option<&str>, default: Duration) -> Result<Duration, String> {
    text.map_or(Ok(default), parse_duration)
}

/// Parses `1s`, `300ms`, `2m` or a bare number of seconds (`0.5`); accepts 1 ms to 1 h.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let parsed = match text.parse::<f64>() {
        Ok(secs) if secs.is_finite() && secs >= 0.0 => Ok(Duration::from_secs_f64(secs)),
        Ok(_) => Err(()),
        Err(_) => humantime::parse_duration(text).map_err(|_| ()),
    };
    match parsed {
        Ok(d) if d >= Duration::from_millis(1) && d <= Duration::from_secs(3600) => Ok(d),
        _ => Err(format!(
            "{text:?} is not accepted: expected a duration from 1ms to 1h, e.g. 500ms, 2s or 1.5"
        )),
    }
}

fn params(specs: &[ParamSpec], table: &toml::Table) -> Result<Vec<ParamSweep>, String> {
    table
        .iter()
        .map(|(name, value)| {
            let spec = harness::params::find_spec(specs, name)?;
            let items: Vec<&toml::Value> = match value {
                toml::Value::Array(items) if !items.is_empty() => items.iter().collect(),
                toml::Value::Array(_) => return Err(format!("{name}: empty list")),
                single => vec![single],
            };
            let values = items
                .into_iter()
                .map(|v| match v {
                    toml::Value::String(s) => spec.parse(s),
                    toml::Value::Integer(_) | toml::Value::Boolean(_) => spec.parse(&v.to_string()),
                    other => Err(format!("{name}={other}: expected {}", spec.accepted())),
                })
                .collect::<Result<Vec<_>, _>>()?;
            Ok((name.clone(), values))
        })
        .collect()
}

mod folder;
mod groups;
mod raw;

#[cfg(test)]
pub use folder::load_all;
pub use folder::{load_folder, Broken};
#[cfg(test)]
mod tests;

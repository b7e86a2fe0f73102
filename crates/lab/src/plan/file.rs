//! One scenario file's plan on a machine of `nproc` CPUs: its mode (normal, quick,
//! smoke), variants, counts, cores, parameter sets, window, warm-up, repetitions and
//! timeout, each through [`Provenance`]'s one rule (the setting wins, else the file's
//! own value, and the file's settings line records which: "set here duration=1s; as the
//! file has them: warmup 60ms"), with relative sizes resolved against `nproc`. Checks across files are
//! `checks`' job; fitting the result to a budget is `budget`'s.

use std::time::Duration;

use anyhow::{bail, Context};
use harness::params::find_spec;

use super::costs::Measured;
use super::params::{check_counts, combinations};
use super::{default_cores, text, ScenarioPlan, SETUP_MARGIN};
use crate::scenario_file::{
    join, max_threads, Axis, ModeSettings, ParamSweep, ScenarioFile, Sizes,
};
use crate::settings::Settings;
use crate::words::value_text;

/// What a child costs beyond warm-up and window when neither a results file nor the
/// scenario file says (`overhead`): about what a small hot path took here.
pub const DEFAULT_OVERHEAD: Duration = Duration::from_millis(100);

/// The plan of `file`, or the line saying why it runs no cell (no variant left).
pub(super) fn plan_file(
    settings: &Settings,
    file: &ScenarioFile,
    nproc: usize,
    measured: &Measured,
) -> anyhow::Result<Result<ScenarioPlan, Skipped>> {
    let mode: &ModeSettings = if settings.smoke {
        file.smoke
            .as_ref()
            .expect("select keeps files with [smoke]")
    } else if settings.quick {
        &file.quick
    } else {
        &file.normal
    };
    let mut how = Provenance::default();
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
        return Ok(Err(Skipped::Line(format!(
            "{}.toml: skipped, none of variants={} is a {} variant",
            file.name,
            settings.variants.as_deref().unwrap_or_default().join(","),
            file.hot_path.name()
        ))));
    }
    if settings.variants.is_some() {
        how.applied(format!("variants={}", variants.join(",")));
    }
    let threads = file_counts(settings, file, mode, nproc, &mut how);
    let cores = cores_of(settings, mode, nproc, &mut how);
    let sweeps = sweeps_of(settings, file, mode, &mut how)?;
    let param_sets = combinations(file.hot_path, &sweeps, &file.paired)
        .with_context(|| format!("{}.toml", file.name))?;
    // A plan for another machine (`cpus=`) cannot know what that machine has installed:
    // it plans what `just setup` would give it, so the plan does not change with what
    // this machine happens to lack.
    let here = settings.cpus.is_none();
    if let Some(missing) = here
        .then(|| param_sets.iter().find_map(|p| file.hot_path.missing(p)))
        .flatten()
    {
        return Ok(Err(Skipped::Lacking(missing)));
    }
    check_counts(file, &param_sets, &threads)?;
    let duration = how.choose("duration", settings.duration, mode.duration, |d| text(*d));
    // Quick and smoke runs keep their short window, and `duration=` asks one window.
    let pair_duration = file
        .pair_duration
        .filter(|_| settings.duration.is_none() && !settings.quick && !settings.smoke);
    if let Some(d) = pair_duration {
        how.kept(format!("pair_duration {}", text(d)));
    }
    let warmup = how.choose("warmup", settings.warmup, mode.warmup, |d| text(*d));
    let repeats = how.choose("repeats", settings.repeats, mode.repeats, usize::to_string);
    let longest = duration.max(pair_duration.unwrap_or_default());
    let timeout = timeout_of(settings, file, longest, warmup, &mut how)?;
    if settings.locks_off {
        how.applied("locks=off".to_owned());
    }
    if settings.lock_library {
        how.applied("locks=true".to_owned());
    }
    if settings.interleave {
        how.applied("interleave=on".to_owned());
    }
    let (overhead, overhead_from) = overhead_of(measured, file);
    Ok(Ok(ScenarioPlan {
        file: file.name.clone(),
        hot_path: file.hot_path,
        axis: file.axis,
        variants,
        threads,
        cores,
        rows: Default::default(),
        row_variants: Default::default(),
        param_sets,
        duration,
        pair_duration,
        warmup,
        repeats,
        timeout,
        profile_at: file.profile_at,
        profile_repeat: file.profile_repeat,
        settings_line: how.line(file),
        seed: file.seed.clone(),
        overhead,
        overhead_from,
        profile_overhead: measured.profile_overhead(&file.name),
        keep_cores: file.keep_cores,
        min_duration: file.min_duration.unwrap_or(duration).min(duration),
        trimmed: Vec::new(),
        locks_off: settings.locks_off,
        lock_library: settings.lock_library,
        interleave: settings.interleave,
    }))
}

/// The core counts of a file's plan: the setting's, else the file's, else the default.
fn cores_of(
    settings: &Settings,
    mode: &ModeSettings,
    nproc: usize,
    how: &mut Provenance,
) -> Vec<usize> {
    let typed_cores = settings
        .cores
        .clone()
        .map(|c| (format!("cores={}", join(&c)), c));
    how.take(typed_cores, || match &mode.cores {
        Some(sizes) => {
            let c = sizes.resolve(nproc, usize::MAX, true);
            (format!("cores {}{}", join(&c), origin(sizes, nproc)), c)
        }
        None => {
            // Quick and smoke modes measure at the machine's full width only.
            let c = if settings.quick || settings.smoke {
                vec![nproc]
            } else {
                default_cores(nproc)
            };
            let shown = format!("cores {} (the default on {nproc} CPUs)", join(&c));
            (shown, c)
        }
    })
}

/// The parameter sweeps of a file's plan: the settings' values replace the file's.
fn sweeps_of(
    settings: &Settings,
    file: &ScenarioFile,
    mode: &ModeSettings,
    how: &mut Provenance,
) -> anyhow::Result<Vec<ParamSweep>> {
    let mut sweeps = mode.params.clone();
    for (name, text) in &settings.params {
        if let Ok(spec) = find_spec(file.hot_path.params(), name) {
            let values = spec.parse_list(text).map_err(anyhow::Error::msg)?;
            sweeps.retain(|(n, _)| n != name);
            sweeps.push((name.clone(), values));
            how.applied(format!("{name}={text}"));
        }
    }
    for (name, values) in &mode.params {
        if !settings.params.iter().any(|(n, _)| n == name) {
            let values: Vec<String> = values.iter().map(|v| short(&value_text(v))).collect();
            how.kept(format!("{name}={}", values.join(",")));
        }
    }
    Ok(sweeps)
}

/// A cell's timeout: the setting's, else the file's, else 30 s plus three windows; never
/// shorter than a cell needs to start and run.
fn timeout_of(
    settings: &Settings,
    file: &ScenarioFile,
    duration: Duration,
    warmup: Duration,
    how: &mut Provenance,
) -> anyhow::Result<Duration> {
    let least = warmup + duration + SETUP_MARGIN;
    Ok(match (settings.timeout, file.timeout) {
        (None, None) => Duration::from_secs(30) + (duration + warmup) * 3,
        (typed, own) => {
            let t = how.choose("timeout", typed, own.unwrap_or_default(), |d| text(*d));
            if t < least && typed.is_some() {
                bail!(
                    "timeout={}: shorter than warm-up {} + duration {} + {} to start a cell of {}; accepted at least {}",
                    text(t), text(warmup), text(duration), text(SETUP_MARGIN), file.name, text(least)
                );
            }
            if t < least {
                bail!(
                    "{}.toml: timeout {} is shorter than warm-up {} + duration {} + {} to start a cell; give timeout= at least {}",
                    file.name, text(t), text(warmup), text(duration), text(SETUP_MARGIN), text(least)
                );
            }
            t
        }
    })
}

/// A child's cost beyond warm-up and window, and where the figure comes from.
fn overhead_of(measured: &Measured, file: &ScenarioFile) -> (Duration, String) {
    match measured.overhead(&file.name) {
        Some((o, from)) => (o, format!("measured in {from}")),
        None => match file.overhead {
            Some(o) => (o, "the file's estimate".to_owned()),
            None => (DEFAULT_OVERHEAD, "the default estimate".to_owned()),
        },
    }
}

/// Why a selected scenario file runs no cell.
pub enum Skipped {
    /// A line saying so (no variant left).
    Line(String),
    /// Its cells need what this machine lacks (a library, a server).
    Lacking(harness::hotpath::Missing),
}

/// One line naming the files skipped because this machine lacks something, what it
/// lacks and what installs it: the Debian packages the files name (which `just setup`
/// installs), or, for what no file names a package of, `install <program>`; `None` when
/// nothing was skipped.
pub fn lacking_line(lacking: &[(String, harness::hotpath::Missing)]) -> Option<String> {
    if lacking.is_empty() {
        return None;
    }
    let files: Vec<String> = lacking.iter().map(|(f, _)| format!("{f}.toml")).collect();
    let mut what: Vec<&str> = Vec::new();
    let mut packages: Vec<&str> = Vec::new();
    let mut unpackaged: Vec<&str> = Vec::new();
    for (_, m) in lacking {
        if !what.contains(&m.what.as_str()) {
            what.push(&m.what);
        }
        for p in &m.packages {
            if !packages.contains(&p.as_str()) {
                packages.push(p);
            }
        }
        if m.packages.is_empty() && !unpackaged.contains(&m.what.as_str()) {
            unpackaged.push(&m.what);
        }
    }
    // A file without `packages` gives setup nothing to install: name the program.
    let mut how: Vec<String> = Vec::new();
    if !unpackaged.is_empty() {
        how.push(format!("install {}", unpackaged.join(", ")));
    }
    if !packages.is_empty() {
        how.push(format!(
            "`just setup` installs {} (Debian: {})",
            if unpackaged.is_empty() {
                "it"
            } else {
                "the rest"
            },
            packages.join(" ")
        ));
    }
    Some(format!(
        "skipped {} (this machine lacks {}): {}",
        files.join(", "),
        what.join(", "),
        how.join("; ")
    ))
}

/// ` (2nproc,4nproc on 2 CPUs)` after a resolved list whose file entries were relative.
fn origin(sizes: &Sizes, nproc: usize) -> String {
    if sizes.relative() {
        format!(" ({sizes} on {nproc} CPUs)")
    } else {
        String::new()
    }
}

/// The counts a file runs at: `<file>.threads=`, else `threads=` on a thread axis or
/// `clients=` on a client axis, else the file's own, resolved on `nproc` CPUs.
fn file_counts(
    settings: &Settings,
    file: &ScenarioFile,
    mode: &ModeSettings,
    nproc: usize,
    how: &mut Provenance,
) -> Vec<usize> {
    let per_file = settings.per_file.iter().find(|p| p.file == file.name);
    let typed = match (per_file, file.axis) {
        (Some(own), _) => Some((own.key.as_str(), &own.counts)),
        (None, Axis::Threads) => settings.threads.as_ref().map(|t| ("threads", t)),
        (None, Axis::Clients) => settings.clients.as_ref().map(|c| ("clients", c)),
        (None, Axis::Fixed) => None,
    };
    let typed = typed.map(|(key, counts)| (format!("{key}={}", join(counts)), counts.clone()));
    how.take(typed, || {
        let counts = mode.threads.resolve(nproc, max_threads(), false);
        let mut kept = file.axis_text(&counts);
        kept.push_str(&origin(&mode.threads, nproc));
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
        (kept, counts)
    })
}

/// A value as a plan line shows it: a template of many lines (a server's configuration)
/// as its first line and how many follow, a long one cut, so the line stays one line; the
/// results keep the whole text.
fn short(text: &str) -> String {
    const MOST: usize = 72;
    let mut lines = text.lines();
    let first = lines.next().unwrap_or("");
    let more = lines.count();
    let cut: String = first.chars().take(MOST).collect();
    let ellipsis = if cut.len() < first.len() { "..." } else { "" };
    match more {
        0 => format!("{cut}{ellipsis}"),
        n => format!("{cut}{ellipsis} (+{n} lines)"),
    }
}

/// Which of the user's settings reached one scenario file, for its settings line.
#[derive(Debug, Default)]
struct Provenance {
    applied: Vec<String>,
    kept: Vec<String>,
}

impl Provenance {
    /// `typed` (shown as given) when the user set it, else the file's own value (shown as
    /// given); records which in the settings line.
    fn take<T>(&mut self, typed: Option<(String, T)>, own: impl FnOnce() -> (String, T)) -> T {
        match typed {
            Some((shown, value)) => {
                self.applied.push(shown);
                value
            }
            None => {
                let (shown, value) = own();
                self.kept.push(shown);
                value
            }
        }
    }

    /// [`Provenance::take`] for a value shown the usual way: `name=text` when typed,
    /// `name text` when the file's.
    fn choose<T>(
        &mut self,
        name: &str,
        typed: Option<T>,
        own: T,
        text: impl Fn(&T) -> String,
    ) -> T {
        let typed = typed.map(|v| (format!("{name}={}", text(&v)), v));
        self.take(typed, || (format!("{name} {}", text(&own)), own))
    }

    /// Records a setting that applied without a file value beside it (a parameter the
    /// file does not sweep).
    fn applied(&mut self, shown: String) {
        self.applied.push(shown);
    }

    /// Records a file value no setting could change.
    fn kept(&mut self, shown: String) {
        self.kept.push(shown);
    }

    /// The settings line: `lookup.toml (threads axis): set here ...; as the file has them:
    /// ...`.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_setting_wins_and_the_line_says_which() {
        let file = crate::scenario_file::load(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../benches/lookup.toml"),
        )
        .unwrap();
        let mut how = Provenance::default();
        let text = |n: &usize| n.to_string();
        assert_eq!(how.choose("repeats", Some(3), 8, text), 3);
        assert_eq!(how.choose("warmup", None, 60, text), 60);
        let own = how.take(None, || ("cores 1,2 (the default)".to_owned(), vec![1, 2]));
        assert_eq!(own, [1, 2]);
        how.applied("users=300".into());
        assert_eq!(
            how.line(&file),
            "lookup.toml (threads axis): set here repeats=3, users=300; as the file has them: warmup 60, cores 1,2 (the default)"
        );
        assert!(Provenance::default()
            .line(&file)
            .contains("set here none; as the file has them: none"));
    }
}

//! A scenario file's parameter sets: its sweeps crossed (paired ones advancing together)
//! over the hot path's defaults, each checked by the hot path, and the rules that also
//! involve the thread count. Which sweeps apply is `file`'s job.

use anyhow::bail;
use harness::{HotPath, Params};
use serde_json::Value;

use crate::scenario_file::{Axis, ParamSweep, ScenarioFile};

/// Every parameter set of a scenario file: the sweeps crossed, except `paired` ones, which
/// advance together as one sweep (their lists must be equally long).
pub(super) fn combinations(
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
        if let Err(reason) = hot_path.check(set) {
            bail!("{reason}{}", which_set(&sets, set, &reason, None));
        }
    }
    Ok(sets)
}

/// Which of a file's cells the refusal `reason` is about, after it: ` (at 8 threads, with
/// connections=1000)`, naming the count (when given) and the parameters that differ
/// between the file's sets, each value shortened, leaving out what the reason already
/// names. Empty for a file of one set: the reason names its key, and every parameter of
/// the set is in the plan and `lab list`, not in a one-line refusal.
fn which_set(sets: &[Params], set: &Params, reason: &str, at: Option<String>) -> String {
    /// The most characters of a value a refusal repeats.
    const SHORT_VALUE: usize = 24;
    let named = |word: &str| {
        reason
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .any(|w| w == word)
    };
    let args = set.to_args();
    let varying: Vec<String> = args
        .iter()
        .filter(|arg| sets.iter().any(|other| !other.to_args().contains(arg)))
        .filter(|arg| !named(arg.split('=').next().unwrap_or(arg)))
        .map(|arg| match arg.char_indices().nth(SHORT_VALUE) {
            Some((cut, _)) => format!("{}...", &arg[..cut]),
            None => arg.clone(),
        })
        .collect();
    let at = at.filter(|at| !reason.contains(at.as_str()));
    let with = (!varying.is_empty()).then(|| format!("with {}", varying.join(" ")));
    match (at, with) {
        (None, None) => String::new(),
        (Some(at), None) => format!(" (at {at})"),
        (None, Some(with)) => format!(" ({with})"),
        (Some(at), Some(with)) => format!(" (at {at}, {with})"),
    }
}

/// Rules of the hot path that involve the thread (or client) count, for every count and
/// parameter set of a file, before anything runs.
pub(super) fn check_counts(
    file: &ScenarioFile,
    sets: &[Params],
    counts: &[usize],
) -> anyhow::Result<()> {
    for set in sets {
        for &count in counts {
            if let Err(reason) = file.hot_path.check_threads(set, count) {
                let unit = if file.axis == Axis::Clients {
                    "clients"
                } else {
                    "threads"
                };
                let at = which_set(sets, set, &reason, Some(format!("{count} {unit}")));
                bail!("{}.toml: {reason}{at}", file.name);
            }
        }
    }
    Ok(())
}

//! A scenario file's parameter sets: its sweeps crossed (paired ones advancing together)
//! over the hot path's defaults, each checked by the hot path, and the rules that also
//! involve the thread count. Which sweeps apply is `file`'s job.

use anyhow::{bail, Context};
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
pub(super) fn check_counts(
    file: &ScenarioFile,
    sets: &[Params],
    counts: &[usize],
) -> anyhow::Result<()> {
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

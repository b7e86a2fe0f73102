//! Parameter sweeps: scenario files whose groups differ in exactly one parameter, with the
//! throughput (and charted extras) against it; the charts are planned as data, not drawn.

use harness::CellRecord;

use super::charts;
use super::drawing::{extra_series, Drawing, Place, Placed};
use super::group::{slugify, Group};
use crate::words::value_text;

/// Throughput against the values of one parameter that a scenario file sweeps.
pub struct Sweep {
    /// Scenario file.
    pub file: String,
    /// The hot path the file runs.
    pub hot_path: String,
    /// The swept parameter.
    pub param: String,
    /// Its values, in the file's order.
    pub values: Vec<String>,
    /// Threads of the cells charted.
    pub threads: usize,
    /// Cores of the cells charted.
    pub cores: usize,
    /// Per variant, ops/s at each value (`None`: failed or missing).
    pub rows: Vec<(String, Vec<Option<f64>>)>,
    /// The chart, relative to the project root.
    pub svg: String,
    /// The hot path's own figures against the parameter, as (label, path).
    pub extras: Vec<(String, String)>,
}

/// Finds scenario files whose groups differ in exactly one parameter and charts
/// throughput against it, at the largest thread and core count every group has.
pub(super) fn sweeps(
    groups: &[Group<'_>],
    final_dir: &str,
    index: usize,
    drawings: &mut Vec<Placed>,
) -> Vec<Sweep> {
    let mut files: Vec<&str> = groups
        .iter()
        .map(|g| g.file.as_str())
        .filter(|f| !f.is_empty())
        .collect();
    files.dedup();
    files
        .into_iter()
        .filter_map(|file| {
            let members: Vec<&Group<'_>> = groups.iter().filter(|g| g.file == file).collect();
            let mut sweep = sweep_of(file, &members)?;
            let stem = format!(
                "{}-sweep-{}",
                slugify(&format!("m{index}-{file}")),
                slugify(&sweep.param)
            );
            sweep.svg = format!("{final_dir}/charts/{stem}.svg");
            drawings.push(throughput_chart(&sweep, &members, &stem));
            for (key, label, series) in extras(&sweep, &members) {
                let s = &sweep;
                let title = format!(
                    "{}: {label} against {} ({} threads, {} cores)",
                    s.file, s.param, s.threads, s.cores
                );
                let name = format!("{stem}-{}.svg", slugify(key));
                let labels = [title, s.param.clone(), label.into()];
                drawings.push(sweep_chart(&name, labels, &s.values, series, Vec::new()));
                sweep
                    .extras
                    .push((label.to_owned(), format!("{final_dir}/charts/{name}")));
            }
            Some(sweep)
        })
        .collect()
}

/// The sweep of one file's groups, without its charts: `None` unless they are at least
/// two, differ in exactly one parameter, and share a thread and a core count.
fn sweep_of(file: &str, members: &[&Group<'_>]) -> Option<Sweep> {
    if members.len() < 2 {
        return None;
    }
    let [param] = members[0].varying.as_slice() else {
        return None;
    };
    let common = |pick: &dyn Fn(&Group<'_>) -> Vec<usize>| {
        pick(members[0])
            .into_iter()
            .filter(|x| members.iter().all(|m| pick(m).contains(x)))
            .max()
    };
    let threads = common(&|g| g.threads.clone())?;
    let cores = common(&|g| g.cores.clone())?;
    let values: Vec<String> = members
        .iter()
        .map(|m| m.params.get(param).map(value_text).unwrap_or_default())
        .collect();
    let mut variants: Vec<String> = Vec::new();
    for v in members.iter().flat_map(|m| &m.variants) {
        if !variants.contains(v) {
            variants.push(v.clone());
        }
    }
    let rows = variants
        .into_iter()
        .map(|v| {
            let ops = members
                .iter()
                .map(|m| usable(m, &v, threads, cores).map(|c| c.ops_per_sec))
                .collect();
            (v, ops)
        })
        .collect();
    Some(Sweep {
        file: file.to_owned(),
        hot_path: members[0].hot_path.clone(),
        param: param.clone(),
        values,
        threads,
        cores,
        rows,
        svg: String::new(),
        extras: Vec::new(),
    })
}

/// The usable cell of `variant` at the sweep's threads and cores in one group.
fn usable<'g>(
    m: &'g Group<'_>,
    variant: &str,
    threads: usize,
    cores: usize,
) -> Option<&'g CellRecord> {
    m.cell(variant, threads, cores).filter(|c| c.usable())
}

/// The throughput chart of a sweep, with error bars.
fn throughput_chart(s: &Sweep, members: &[&Group<'_>], stem: &str) -> Placed {
    let series: Vec<charts::Series> = s
        .rows
        .iter()
        .map(|(v, ops)| charts::Series {
            name: v.clone(),
            points: ops
                .iter()
                .enumerate()
                .filter_map(|(i, o)| o.map(|o| (i as f64, o)))
                .collect(),
        })
        .collect();
    let bars: Vec<charts::Bars> = s
        .rows
        .iter()
        .map(|(v, _)| {
            members
                .iter()
                .enumerate()
                .filter_map(|(i, m)| {
                    let (lo, hi) = usable(m, v, s.threads, s.cores)?.ops_ci();
                    Some((i as f64, lo, hi))
                })
                .collect()
        })
        .collect();
    let title = format!(
        "{}: throughput against {} ({} threads, {} cores)",
        s.file, s.param, s.threads, s.cores
    );
    let labels = [title, s.param.clone(), "ops/s".into()];
    sweep_chart(&format!("{stem}.svg"), labels, &s.values, series, bars)
}

/// The hot path's charted extras against the swept parameter.
fn extras(
    s: &Sweep,
    members: &[&Group<'_>],
) -> Vec<(&'static str, &'static str, Vec<charts::Series>)> {
    let variants: Vec<String> = s.rows.iter().map(|(v, _)| v.clone()).collect();
    let cells_of = |v: &str| -> Vec<(f64, &CellRecord)> {
        members
            .iter()
            .enumerate()
            .filter_map(|(i, m)| Some((i as f64, usable(m, v, s.threads, s.cores)?)))
            .collect()
    };
    extra_series(&s.hot_path, &variants, cells_of)
}

/// A sweep chart for the report's `charts/` folder.
fn sweep_chart(
    name: &str,
    labels: [String; 3],
    values: &[String],
    series: Vec<charts::Series>,
    bars: Vec<charts::Bars>,
) -> Placed {
    Placed {
        place: Place::Chart(name.to_owned()),
        drawing: Drawing::Sweep {
            labels,
            values: values.to_vec(),
            series,
            bars,
        },
    }
}

//! Parameter sweeps: scenario files whose groups differ in exactly one parameter, with the
//! throughput (and charted extras) against it; the charts are planned as data, not drawn.

use harness::RunRecord;

use super::charts;
use super::drawing::{extra_series, Drawing, Place, Planned};
use super::group::{slugify, Group};

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
    drawings: &mut Vec<Planned>,
) -> Vec<Sweep> {
    let mut out = Vec::new();
    let mut files: Vec<&str> = groups
        .iter()
        .map(|g| g.file.as_str())
        .filter(|f| !f.is_empty())
        .collect();
    files.dedup();
    for file in files {
        let members: Vec<&Group<'_>> = groups.iter().filter(|g| g.file == file).collect();
        if members.len() < 2 {
            continue;
        }
        let [param] = members[0].varying.as_slice() else {
            continue;
        };
        let common = |pick: &dyn Fn(&Group<'_>) -> Vec<usize>| {
            pick(members[0])
                .into_iter()
                .filter(|x| members.iter().all(|m| pick(m).contains(x)))
                .max()
        };
        let (Some(threads), Some(cores)) =
            (common(&|g| g.threads.clone()), common(&|g| g.cores.clone()))
        else {
            continue;
        };
        let values: Vec<String> = members
            .iter()
            .map(|m| {
                m.params
                    .get(param)
                    .map(crate::words::value_text)
                    .unwrap_or_default()
            })
            .collect();
        let mut variants: Vec<String> = Vec::new();
        for m in &members {
            for v in &m.variants {
                if !variants.contains(v) {
                    variants.push(v.clone());
                }
            }
        }
        let rows: Vec<(String, Vec<Option<f64>>)> = variants
            .iter()
            .map(|v| {
                let ops = members
                    .iter()
                    .map(|m| {
                        m.cell(v, threads, cores)
                            .filter(|c| c.usable())
                            .map(|c| c.ops_per_sec)
                    })
                    .collect();
                (v.clone(), ops)
            })
            .collect();
        let series: Vec<charts::Series> = rows
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
        let title =
            format!("{file}: throughput against {param} ({threads} threads, {cores} cores)");
        let bars: Vec<charts::Bars> = rows
            .iter()
            .map(|(v, _)| {
                members
                    .iter()
                    .enumerate()
                    .filter_map(|(i, m)| {
                        let c = m.cell(v, threads, cores).filter(|c| c.usable())?;
                        let (lo, hi) = c.ops_ci();
                        Some((i as f64, lo, hi))
                    })
                    .collect()
            })
            .collect();
        let stem = format!(
            "{}-sweep-{}",
            slugify(&format!("m{index}-{file}")),
            slugify(param)
        );
        let name = format!("{stem}.svg");
        drawings.push(sweep_chart(
            &name,
            [title, param.clone(), "ops/s".into()],
            &values,
            series,
            bars,
        ));
        let scenario = members[0].hot_path.clone();
        let cells_of = |v: &str| -> Vec<(f64, &RunRecord)> {
            members
                .iter()
                .enumerate()
                .filter_map(|(i, m)| {
                    Some((i as f64, m.cell(v, threads, cores).filter(|c| c.usable())?))
                })
                .collect()
        };
        let mut extras = Vec::new();
        for (key, label, series) in extra_series(&scenario, &variants, cells_of) {
            let title =
                format!("{file}: {label} against {param} ({threads} threads, {cores} cores)");
            let extra_name = format!("{stem}-{}.svg", slugify(key));
            drawings.push(sweep_chart(
                &extra_name,
                [title, param.clone(), label.into()],
                &values,
                series,
                Vec::new(),
            ));
            extras.push((label.to_owned(), format!("{final_dir}/charts/{extra_name}")));
        }
        out.push(Sweep {
            extras,
            hot_path: scenario,
            file: file.to_owned(),
            param: (*param).clone(),
            values,
            threads,
            cores,
            rows,
            svg: format!("{final_dir}/charts/{name}"),
        });
    }
    out
}

/// A sweep chart for the report's `charts/` folder.
fn sweep_chart(
    name: &str,
    labels: [String; 3],
    values: &[String],
    series: Vec<charts::Series>,
    bars: Vec<charts::Bars>,
) -> Planned {
    Planned {
        place: Place::Chart(name.to_owned()),
        drawing: Drawing::Sweep {
            labels,
            values: values.to_vec(),
            series,
            bars,
        },
    }
}

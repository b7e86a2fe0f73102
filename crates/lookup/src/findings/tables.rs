//! The tables of the lookup answer: each design's scaling up to the CPUs, and what each
//! hand-off in front of the search threads costs. Cell figures with their intervals, as
//! context: they decide nothing (the parts do, [`super::claims`]).
//!
//! Not here: the parts, the sentences.

use harness::CellRecord;
use verdict::findings::Table;
use verdict::judge::{find, param_text, times, variants_of, widest, Est};

/// `full / (threads x one)` with the interval the two intervals allow.
pub fn efficiency(full: &CellRecord, one: &CellRecord, threads: usize) -> Est {
    let (f, o) = (Est::of(full), Est::of(one).scaled(threads as f64));
    Est {
        median: f.median / o.median,
        low: f.low / o.high,
        high: f.high / o.low,
        n: f.n.min(o.n),
    }
}

/// Per variant: one thread, threads = cores, the efficiency there.
pub fn efficiency_table(file: &[&CellRecord], cores: usize, in_core: usize) -> Table {
    let rows = variants_of(file)
        .into_iter()
        .filter_map(|v| {
            let one = find(file, v, 1, cores)?;
            let full = find(file, v, in_core, cores)?;
            Some(vec![
                format!("`{v}`"),
                Est::of(one).text(),
                Est::of(full).text(),
                efficiency(full, one, in_core).text(),
            ])
        })
        .collect();
    Table {
        title: format!("Scaling up to the cores ({cores} cores)"),
        columns: vec![
            "variant".into(),
            "1 thread, ops/s".into(),
            format!("{in_core} threads, ops/s"),
            "efficiency".into(),
        ],
        rows,
    }
}

/// What each hand-off in front of the search threads costs against direct calls, per
/// directory, at the most threads of `lookup-dispatch.toml`.
pub fn dispatch_table(file: &[&CellRecord]) -> Option<Table> {
    let (cores, threads) = widest(file)?;
    let max_t = *threads.last()?;
    let at = |v: &str, dispatch: &str| {
        file.iter().copied().find(|c| {
            c.variant == v
                && c.threads == max_t
                && c.cores == cores
                && param_text(c, "dispatch") == dispatch
        })
    };
    let modes = ["queue", "rayon", "batched"];
    let rows: Vec<Vec<String>> = variants_of(file)
        .into_iter()
        .filter_map(|v| {
            let direct = at(v, "direct")?;
            let mut row = vec![format!("`{v}`"), Est::of(direct).text()];
            row.extend(
                modes
                    .iter()
                    .map(|m| at(v, m).map_or("-".into(), |c| times(c, direct, ""))),
            );
            Some(row)
        })
        .collect();
    (!rows.is_empty()).then(|| Table {
        title: format!("Dispatch against direct calls at {max_t} threads on {cores} cores"),
        columns: ["directory", "direct, ops/s"]
            .iter()
            .chain(modes.iter())
            .map(|s| (*s).to_owned())
            .collect(),
        rows,
    })
}

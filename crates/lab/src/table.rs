//! Terminal tables: per scenario and variant, rows = cores, columns = threads, each cell
//! `ops/s ±interval / per-thread ops/s`, with oversubscribed cells (threads > cores)
//! marked `*`. The interval is the widest distance from the median to an end of the
//! record's interval (95% CI, or min-max below 6 repetitions), as a percentage.

use std::fmt::Write;

use harness::CellRecord;

pub use crate::words::{cell_text, si};

/// The table for one group of cells (same scenario, variant and params).
pub fn render(title: &str, cells: &[&CellRecord]) -> String {
    let mut threads: Vec<usize> = cells.iter().map(|c| c.threads).collect();
    threads.sort_unstable();
    threads.dedup();
    let mut cores: Vec<usize> = cells.iter().map(|c| c.cores).collect();
    cores.sort_unstable();
    cores.dedup();
    let width = 22;
    let mut out = String::new();
    let _ = writeln!(out, "{title}");
    let _ = write!(out, "{:>13}", "cores\\threads");
    for t in &threads {
        let _ = write!(out, "{t:>width$}");
    }
    out.push('\n');
    for c in &cores {
        let _ = write!(out, "{c:>13}");
        for t in &threads {
            let record = cells
                .iter()
                .find(|r| r.threads == *t && r.cores == *c)
                .copied();
            let _ = write!(out, "{:>width$}", cell_text(record));
        }
        out.push('\n');
    }
    let failures: Vec<String> = cells
        .iter()
        .filter_map(|r| {
            let why = r.failure.as_deref().or(r.verify_error.as_deref())?;
            Some(format!("  t={} c={}: {why}", r.threads, r.cores))
        })
        .collect();
    for f in failures {
        let _ = writeln!(out, "{f}");
    }
    out
}

/// Prints a matrix's tables: per scenario file, variant and parameter set.
pub fn print_plan_tables(plan: &crate::plan::MatrixPlan, records: &[CellRecord]) {
    println!("ops/s / per-thread ops/s; * = more threads than cores");
    for scenario in &plan.scenarios {
        let name = scenario.hot_path.name();
        for variant in &scenario.variants {
            for params in &scenario.param_sets {
                let map = params.to_map();
                let group: Vec<&CellRecord> = records
                    .iter()
                    .filter(|r| {
                        r.scenario_file == scenario.file
                            && r.hot_path == name
                            && r.variant == *variant
                            && r.params == map
                    })
                    .collect();
                if group.is_empty() {
                    continue;
                }
                let mut title = format!("\n{} / {variant}", scenario.file);
                if scenario.param_sets.len() > 1 {
                    title.push_str(&format!("  ({})", swept(scenario, params)));
                }
                print!("{}", render(&title, &group));
            }
        }
    }
}

/// The parameters that vary between this scenario's parameter sets, as `name=value`.
fn swept(scenario: &crate::plan::ScenarioPlan, params: &harness::Params) -> String {
    let first = scenario.param_sets[0].to_map();
    params
        .to_map()
        .iter()
        .filter(|(k, _)| {
            scenario
                .param_sets
                .iter()
                .any(|p| p.to_map().get(*k) != first.get(*k))
        })
        .map(|(k, v)| format!("{k}={}", crate::plan::value_text(v)))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness::schema::CellStatus;

    fn record(threads: usize, cores: usize, ops: f64) -> CellRecord {
        let mut r = harness::testing::synthetic_cell(
            "lookup",
            "",
            "dashmap",
            &[],
            threads,
            cores,
            ops,
            0.0,
            1,
        );
        r.repeats = 0;
        r
    }

    #[test]
    fn si_suffixes() {
        assert_eq!(si(2_310_000.0), "2.31M");
        assert_eq!(si(999.0), "999");
        assert_eq!(si(12_345.0), "12.3k");
        assert_eq!(si(1.5), "1.50");
    }

    #[test]
    fn marks_oversubscribed_and_failed_cells() {
        let a = record(1, 1, 2_000_000.0);
        let b = record(4, 1, 3_000_000.0);
        let mut c = record(4, 2, 1.0);
        c.status = CellStatus::Failed;
        c.failure = Some("timed out after 30 s".into());
        let table = render("lookup / dashmap", &[&a, &b, &c]);
        assert!(table.contains("2.00M/2.00M"), "{table}");
        assert!(table.contains("3.00M/750k*"), "{table}");
        assert!(table.contains("FAILED"), "{table}");
        assert!(table.contains("t=4 c=2: timed out"), "{table}");
        let mut d = record(2, 2, 1_000_000.0);
        d.ops_per_sec_ci = [970_000.0, 1_050_000.0];
        assert!(
            cell_text(Some(&d)).starts_with("1.00M±5%/500k"),
            "{}",
            cell_text(Some(&d))
        );
        // Row for cores=2 has no threads=1 cell.
        assert!(
            table
                .lines()
                .any(|l| l.trim_start().starts_with('2') && l.contains(" -")),
            "{table}"
        );
    }
}

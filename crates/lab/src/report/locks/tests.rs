//! The report's lock table on records whose figures are known.

use super::*;
use harness::lock_table::Quantiles;
use harness::schema::{CellKey, CellStatus};

use super::super::markup::{Format, Html, Markdown};

/// The lock section as the page shows it.
fn html_section(g: &Group<'_>) -> String {
    Html.blocks(&section(g))
}

/// The lock section as `summary.md` shows it.
fn markdown_section(g: &Group<'_>) -> String {
    Markdown.blocks(&section(g))
}

pub(crate) fn cell_with_locks(variant: &str, threads: usize, hold_ns: f64) -> CellRecord {
    let key = CellKey {
        hot_path: "lookup".into(),
        variant: variant.into(),
        params: Default::default(),
        threads,
        cores: 2,
    };
    let mut r = CellRecord::failed(&key, "0-1", "x");
    r.status = CellStatus::Ok;
    r.failure = None;
    r.verified = true;
    r.ops_per_sec = 1e6;
    let q = Quantiles {
        p50: hold_ns,
        p99: hold_ns,
        max: hold_ns,
        mean: hold_ns,
    };
    let row = LockRow {
        name: "directory mutex".into(),
        slots: Some(1),
        acquisitions_per_sec: 1e6,
        acquisitions_per_op: Some(1.0),
        contended_share: Some(0.5),
        wait_ns: Some(q),
        hold_ns: Some(q),
        hold_samples: 10,
        occupancy: Some(hold_ns * 1e-3),
        utilization: Some(hold_ns * 1e-3),
        uncontended_hold_ns: Some(hold_ns),
        ceiling_ops_per_sec: Some(1e9 / hold_ns),
        ceiling_share: Some(hold_ns * 1e-3),
    };
    let load = lock_table::CellLoad {
        threads,
        cores: r.cores,
        ops_per_sec: 1e6,
        cpu_util: 0.0,
    };
    r.bounds = lock_table::bounds(std::slice::from_ref(&row), load);
    r.locks = Some(vec![row]);
    r.locks_complete = Some(false);
    r.locks_unnamed = Some("the queue".into());
    r
}

#[test]
fn the_busiest_lock_is_named_with_its_share_of_the_ceiling() {
    let r = cell_with_locks("global-mutex", 2, 800.0);
    let text = busiest_text(&r).unwrap();
    assert!(
        text.starts_with("directory mutex U 0.80, 80% of its ceiling"),
        "{text}"
    );
    assert_eq!(unnamed_text(&r), Some("the queue"));
    let b = r.bounds.as_ref().unwrap();
    let sentence = bounds_sentence(&VariantBounds {
        variant: "global-mutex",
        cores: 2,
        bounds: b,
    });
    assert!(sentence.contains("N* = "), "{sentence}");
}

#[test]
fn a_group_gets_its_lock_table_and_the_knee_of_its_fewest_threads_cell() {
    let cells = vec![
        cell_with_locks("global-mutex", 1, 800.0),
        cell_with_locks("global-mutex", 2, 900.0),
    ];
    let source = source_of(cells);
    let groups = super::super::group::group_cells(&source, 0);
    let g = &groups[0];
    assert_eq!(table(g).len(), 2);
    assert!(table(g).iter().all(|r| r.busiest));
    let bounds = variant_bounds(g);
    assert_eq!(bounds.len(), 1);
    assert_eq!(bounds[0].bounds.threads, 1, "from the fewest-threads cell");
    let html = html_section(g);
    for text in [
        "<table class=\"locks\">",
        "directory mutex (busiest)",
        "N* = ",
        "the queue",
    ] {
        assert!(html.contains(text), "{text} missing: {html}");
    }
    let md = markdown_section(g);
    assert!(
        md.contains("| global-mutex | 2 | 1 | directory mutex (busiest) | 1 |"),
        "{md}"
    );
    let points = bound_points(g, "global-mutex", 2);
    assert_eq!(points.len(), 2);
    assert!(points[1].1 <= bounds[0].bounds.ceiling_ops_per_sec);
}

fn source_of(cells: Vec<CellRecord>) -> super::super::Source {
    super::super::Source::of_cells(cells)
}

#[test]
fn the_report_states_the_instrument_cost_and_a_run_without_it() {
    let mut cells = vec![
        cell_with_locks("global-mutex", 1, 800.0),
        cell_with_locks("global-mutex", 2, 900.0),
    ];
    for (c, counted) in cells.iter_mut().zip([6.0, 8.0]) {
        c.clock_read_ns = 20.0;
        c.lock_cost = Some(harness::locks::cost::InstrumentCost {
            counted_ns: counted,
            timed_ns: 60.0,
        });
    }
    let source = source_of(cells);
    let groups = super::super::group::group_cells(&source, 0);
    let line = cost_sentence(&groups[0]).unwrap();
    assert!(line.contains("7 ns per acquisition counted"), "{line}");
    assert!(
        line.contains("60 ns per acquisition whose hold is timed"),
        "{line}"
    );
    assert!(line.contains("two clock reads (20 ns each)"), "{line}");
    assert!(markdown_section(&groups[0]).contains(&line));

    // locks=off: no table, and a line saying why.
    let mut off = vec![cell_with_locks("global-mutex", 1, 800.0)];
    off[0].locks = None;
    off[0].bounds = None;
    off[0].locks_off = true;
    let source = source_of(off);
    let groups = super::super::group::group_cells(&source, 0);
    let md = markdown_section(&groups[0]);
    assert!(
        md.contains("Lock table: not measured. This run had locks=off"),
        "{md}"
    );
    assert!(!md.contains("| variant |"), "{md}");
    assert!(html_section(&groups[0]).contains("locks=off"));
}

#[test]
fn one_core_bounds_the_chart_and_the_sentence() {
    // 1 core fully busy at 1M ops/s: D_cpu = 1 us, below the lock's 800 ns hold's 1.25M.
    let mut one = cell_with_locks("global-mutex", 1, 800.0);
    one.cores = 1;
    let load = lock_table::CellLoad {
        threads: 1,
        cores: 1,
        ops_per_sec: 1e6,
        cpu_util: 1.0,
    };
    one.bounds = lock_table::bounds(one.locks.as_deref().unwrap(), load);
    let mut two = one.clone();
    two.threads = 4;
    let source = source_of(vec![one, two]);
    let groups = super::super::group::group_cells(&source, 0);
    let g = &groups[0];
    let b = &variant_bounds(g)[0];
    let sentence = bounds_sentence(b);
    assert!(
        sentence.contains(
            "no thread count passes 1000k ops/s (the CPUs' 1 / D_cpu; the lock's K / S is 1.25M)"
        ),
        "{sentence}"
    );
    assert!(sentence.contains("CPU 1.0 µs per operation"), "{sentence}");
    for (_, bound) in bound_points(g, "global-mutex", 1) {
        assert!(bound <= 1e6 * (1.0 + 1e-9), "{bound}");
    }
}

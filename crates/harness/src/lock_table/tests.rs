//! The lock table's arithmetic on figures whose answers are known.

use super::*;
use crate::locks::LockId;
use crate::schema::{CellKey, CellRecord, CellStatus};

fn tally(acquisitions: u64, contended: u64, holds_ns: &[u64]) -> LockTally {
    let mut t = LockTally {
        acquisitions,
        contended,
        wait_sum_ns: contended * 1000,
        ..LockTally::default()
    };
    let mut w = stats::new_histogram();
    let _ = w.record_n(1000, contended);
    t.waits = Some(w);
    let mut h = stats::new_histogram();
    for &ns in holds_ns {
        h.record(ns).unwrap();
    }
    t.hold_samples = holds_ns.len() as u64;
    t.hold_sum_ns = holds_ns.iter().sum();
    t.holds = Some(h);
    t
}

#[test]
fn a_lock_held_half_the_time_is_half_used_and_its_ceiling_is_k_over_s() {
    // 1 s window, 1000 operations, 2 acquisitions each, 250 us holds: U = 0.5.
    let set = LockSet::new()
        .with(LockId(0), "m", 1)
        .with(LockId(1), "sem", 4)
        .shared(LockId(2), "reads");
    let t = vec![
        tally(2000, 500, &[250_000; 10]),
        tally(2000, 0, &[250_000; 10]),
        LockTally::default(),
    ];
    let r = rows(&set, &t, (1.0, 0.0), 1000);
    assert!((r[0].utilization.unwrap() - 0.5).abs() < 1e-9);
    // A capacity needs the uncontended hold, which one cell's rows do not have.
    assert_eq!((r[0].ceiling_ops_per_sec, r[0].ceiling_share), (None, None));
    // As a 1-thread cell it is its own uncontended cell: K / S = 4000 acquisitions/s =
    // 2000 ops/s (two per operation), and its share is U.
    let mut one = vec![record(1, 2, 1000.0, r.clone())];
    fill_ceilings(&mut one);
    let r1 = one[0].locks.as_ref().unwrap();
    assert!((r1[0].ceiling_ops_per_sec.unwrap() - 2000.0).abs() < 1e-6);
    assert!((r1[1].ceiling_ops_per_sec.unwrap() - 4.0 * 2000.0).abs() < 1e-6);
    assert!((r1[0].ceiling_share.unwrap() - 0.5).abs() < 1e-9);
    assert_eq!(r1[0].uncontended_hold_ns, Some(250_000.0));
    assert_eq!(r[0].contended_share, Some(0.25));
    assert_eq!(r[0].wait_ns.unwrap().mean, 250.0);
    // An unseen lock and a shared side: nulls, not zeros.
    assert_eq!(r[2].utilization, None);
    assert_eq!(r[2].hold_ns, None);
    assert_eq!(r[2].contended_share, None);

    let b = bounds(&r, load(1, 2, 1000.0, 0.0)).unwrap();
    assert_eq!(b.lock, "m");
    // R = 1 ms; S = 0.5 ms; W = 2 x 250 ns; D = R - S - W.
    assert!((b.hold_per_op_ns - 500_000.0).abs() < 1e-6);
    assert!((b.demand_outside_ns - 499_500.0).abs() < 1e-6);
    assert!((b.knee_threads - (999_500.0 / 500_000.0)).abs() < 1e-9);
    assert!((b.ceiling_ops_per_sec - 2000.0).abs() < 1e-6);
    assert!(b.at(100) <= b.ceiling_ops_per_sec && b.at(1) < b.ceiling_ops_per_sec);
}

#[test]
fn repetitions_merge_by_name_to_medians() {
    let row = |name: &str, u: f64| LockRow {
        name: name.into(),
        slots: Some(1),
        utilization: Some(u),
        hold_ns: Some(Quantiles {
            p50: u,
            p99: u,
            max: u,
            mean: u,
        }),
        hold_samples: 1,
        ..LockRow::default()
    };
    let a = [row("x", 0.1), row("y", 1.0)];
    let b = [row("x", 0.3)];
    let c = [row("x", 0.2)];
    let m = merge_rows(&[&a, &b, &c]);
    assert_eq!(m.len(), 2);
    assert_eq!(m[0].utilization, Some(0.2));
    assert_eq!(m[0].hold_ns.unwrap().max, 0.3);
    assert_eq!(m[0].hold_samples, 3);
    assert_eq!(m[1].utilization, Some(1.0));
}

fn load(threads: usize, cores: usize, ops_per_sec: f64, cpu_util: f64) -> CellLoad {
    CellLoad {
        threads,
        cores,
        ops_per_sec,
        cpu_util,
    }
}

/// A usable record of `threads` threads on `cores` CPUs with the lock table `rows`.
fn record(threads: usize, cores: usize, ops: f64, rows: Vec<LockRow>) -> CellRecord {
    let key = CellKey {
        hot_path: "lookup".into(),
        variant: "global-mutex".into(),
        params: Default::default(),
        threads,
        cores,
    };
    let mut r = CellRecord::failed(&key, "0-1", "x");
    r.status = CellStatus::Ok;
    r.failure = None;
    r.verified = true;
    r.ops_per_sec = ops;
    r.locks = Some(rows);
    r
}

/// One mutex taken once per operation at `ops` ops/s over 1 s, held `hold_ns` each.
fn mutex_row(ops: u64, hold_ns: u64) -> Vec<LockRow> {
    let set = LockSet::new().with(LockId(0), "directory mutex", 1);
    rows(&set, &[tally(ops, 0, &[hold_ns; 50])], (1.0, 0.0), ops)
}

#[test]
fn a_lock_whose_hold_doubles_under_contention_has_a_share_below_its_utilisation() {
    // Alone: 1M ops/s, 250 ns holds (U 0.25). At 4 threads: 2M ops/s, 500 ns holds.
    let mut cells = vec![
        record(1, 2, 1e6, mutex_row(1_000_000, 250)),
        record(4, 2, 2e6, mutex_row(2_000_000, 500)),
    ];
    fill_ceilings(&mut cells);
    let alone = &cells[0].locks.as_ref().unwrap()[0];
    let busy = &cells[1].locks.as_ref().unwrap()[0];
    assert!((busy.utilization.unwrap() - 1.0).abs() < 1e-9, "{busy:?}");
    // The ceiling is the capacity at the uncontended hold: K / 250 ns = 4M ops/s.
    assert!(
        (busy.ceiling_ops_per_sec.unwrap() - 4e6).abs() < 1e-3,
        "{busy:?}"
    );
    assert_eq!(busy.uncontended_hold_ns, Some(250.0));
    let share = busy.ceiling_share.unwrap();
    assert!((share - 0.5).abs() < 1e-9, "{busy:?}");
    assert_ne!(Some(share), busy.utilization, "the share is not U again");
    // Alone, the hold is the uncontended one: there the share is U.
    assert!((alone.ceiling_share.unwrap() - alone.utilization.unwrap()).abs() < 1e-12);
}

#[test]
fn without_an_uncontended_cell_the_ceiling_is_null() {
    let mut cells = vec![
        record(4, 2, 2e6, mutex_row(2_000_000, 500)),
        // A 1-thread cell on other cores does not pair with it.
        record(1, 1, 1e6, mutex_row(1_000_000, 250)),
    ];
    fill_ceilings(&mut cells);
    let row = &cells[0].locks.as_ref().unwrap()[0];
    assert_eq!(
        (
            row.uncontended_hold_ns,
            row.ceiling_ops_per_sec,
            row.ceiling_share
        ),
        (None, None, None),
        "{row:?}"
    );
    assert!(row.utilization.is_some(), "U needs no other cell");
    // An unusable 1-thread cell gives no uncontended hold either.
    let mut failed = vec![
        record(1, 2, 1e6, mutex_row(1_000_000, 250)),
        record(4, 2, 2e6, mutex_row(2_000_000, 500)),
    ];
    failed[0].verified = false;
    fill_ceilings(&mut failed);
    assert_eq!(failed[1].locks.as_ref().unwrap()[0].ceiling_share, None);
}

#[test]
fn bounds_include_the_cpus() {
    // 1 core, 1 thread: 1M ops/s, the core fully busy: D_cpu = 1 us per operation. The
    // lock alone (250 ns holds) would pass 4M ops/s; one core cannot pass 1M.
    let r = mutex_row(1_000_000, 250);
    let one_core = bounds(&r, load(1, 1, 1e6, 1.0)).unwrap();
    assert!((one_core.cpu_per_op_ns.unwrap() - 1000.0).abs() < 1e-6);
    assert!((one_core.cpu_ceiling_ops_per_sec.unwrap() - 1e6).abs() < 1e-3);
    assert!((one_core.ceiling_ops_per_sec - 4e6).abs() < 1e-3);
    assert!(one_core.cpu_bound());
    for threads in [1, 2, 12, 1000] {
        assert!(one_core.at(threads) <= 1e6 * (1.0 + 1e-12), "{threads}");
    }
    // N* = (D + S) x min(K / S, cores / D_cpu) = 1 us x 1M/s = 1 thread, not 4.
    assert!((one_core.knee_threads - 1.0).abs() < 1e-9, "{one_core:?}");
    // 4 cores at the same demand: the cores allow 4M, the lock 4M too; at 8 the lock binds.
    let eight = bounds(&r, load(1, 8, 1e6, 1.0 / 8.0)).unwrap();
    assert!(!eight.cpu_bound());
    assert!((eight.limit() - 4e6).abs() < 1e-3);
    assert!((eight.knee_threads - 4.0).abs() < 1e-9, "{eight:?}");
    // Repetitions merge the CPU figures too.
    let merged = merge_bounds(&[&one_core, &one_core]).unwrap();
    assert_eq!(
        merged.cpu_ceiling_ops_per_sec,
        one_core.cpu_ceiling_ops_per_sec
    );
    assert_eq!(merged.cores, 1);
}

//! The ceilings of a run's lock tables, across its cells: each lock's capacity comes from
//! its hold measured uncontended, in the 1-thread cell of the same scenario file, hot
//! path, variant, parameters and cores (the pairing `schema::fill_efficiency` uses), so
//! that a lock whose holds lengthen under contention shows a share of its ceiling below
//! its utilisation. Called after repetitions are merged, like the efficiency; a cell
//! without such a 1-thread cell has null ceilings. It takes no figure of its own.

use std::collections::BTreeMap;

use crate::schema::CellRecord;

/// Fills `uncontended_hold_ns`, `ceiling_ops_per_sec` and `ceiling_share` of every lock
/// row of `cells` from the 1-thread cell that pairs with it (itself at 1 thread), or
/// leaves them null where none does or the lock has no timed hold there.
pub fn fill_ceilings(cells: &mut [CellRecord]) {
    // Collected first (owned), since the cells are rewritten below: per 1-thread cell,
    // its identity and (lock name, mean hold ns) of every lock with a timed hold.
    let uncontended: Vec<(CellId, Vec<(String, f64)>)> = cells
        .iter()
        .filter(|c| c.threads == 1 && c.usable())
        .filter_map(|c| {
            let named = c
                .locks
                .as_deref()?
                .iter()
                .filter_map(|r| Some((r.name.clone(), r.hold_ns?.mean)))
                .filter(|(_, mean)| *mean > 0.0)
                .collect();
            Some((CellId::of(c), named))
        })
        .collect();
    for cell in cells.iter_mut() {
        let id = CellId::of(cell);
        let usable = cell.usable();
        let ops = cell.ops_per_sec;
        let Some(rows) = cell.locks.as_mut() else {
            continue;
        };
        let base = uncontended
            .iter()
            .find(|(k, _)| *k == id)
            .map(|(_, named)| named);
        for row in rows.iter_mut() {
            let s0 = base
                .filter(|_| usable)
                .and_then(|named| named.iter().find(|(n, _)| *n == row.name))
                .map(|(_, mean)| *mean);
            let ceiling = match (row.slots, s0, row.acquisitions_per_op) {
                (Some(k), Some(s0), Some(a)) if a > 0.0 => Some(f64::from(k) / (s0 * 1e-9 * a)),
                _ => None,
            };
            row.uncontended_hold_ns = s0;
            row.ceiling_ops_per_sec = ceiling;
            row.ceiling_share = ceiling.map(|c| ops / c);
        }
    }
}

/// What pairs a cell with its 1-thread cell: everything but the threads.
#[derive(PartialEq)]
struct CellId {
    file: String,
    hot_path: String,
    variant: String,
    params: BTreeMap<String, serde_json::Value>,
    cores: usize,
}

impl CellId {
    fn of(c: &CellRecord) -> CellId {
        CellId {
            file: c.scenario_file.clone(),
            hot_path: c.hot_path.clone(),
            variant: c.variant.clone(),
            params: c.params.clone(),
            cores: c.cores,
        }
    }
}

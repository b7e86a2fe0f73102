//! The store's busy time per table, summed over the seed's collections: what the
//! seed's mongotop measured (milliseconds a collection kept the database busy, at a
//! fixed load) as this lab's stores can say it.
//!
//! | seed's collection | tables here | why |
//! |---|---|---|
//! | `juju.leases` | `lease`, `clock` | Juju 2.2 kept each namespace's clock document in the leases collection (`clock#<namespace>#`), written by every lease transaction: `txn-log`'s `clock` row |
//! | `juju.txns` | `txns`, `txn_log`, `transaction` | mgo/txn's transaction documents and log, and here BEGIN/COMMIT (taking the write lock, appending to the WAL): the transaction machinery |
//!
//! `global-clock` writes no `txns` rows, but its update is still a transaction (as Juju
//! 2.3's lease writes still went through mgo/txn), so its `juju.txns` time is its BEGIN
//! and COMMIT. Its global clock row is advanced by a ticker outside any session (Juju
//! 2.3 kept it in a collection of its own, `globalclock`): in neither sum.
//! Not here: timing the statements ([`crate::store::SessionStats::timed`]).

use std::collections::BTreeMap;
use std::time::Duration;

use crate::store::TRANSACTION;

/// The seed's collection a table's time counts toward: `leases`, `txns`, or `None`.
pub fn collection_of(table: &str) -> Option<&'static str> {
    match table {
        "lease" | "clock" => Some("leases"),
        "txns" | "txn_log" | TRANSACTION => Some("txns"),
        _ => None,
    }
}

/// The `extra` figures of per-table busy time (`tables`: table -> (read ms, write ms),
/// summed over sessions) over a window of `window`: `table_time` (each table's read and
/// write milliseconds) and, flat so that a comparison can read them, the milliseconds
/// per second of window of each seed collection (`busy_ms_per_s_leases`,
/// `busy_ms_per_s_txns`).
pub fn figures(
    tables: &BTreeMap<&str, (f64, f64)>,
    window: Duration,
) -> serde_json::Map<String, serde_json::Value> {
    let seconds = window.as_secs_f64();
    let per_s = |ms: f64| if seconds > 0.0 { ms / seconds } else { 0.0 };
    let sum = |collection: &str| -> f64 {
        tables
            .iter()
            .filter(|(t, _)| collection_of(t) == Some(collection))
            .map(|(_, (r, w))| r + w)
            .sum()
    };
    let mut extra = serde_json::Map::new();
    let table_time: serde_json::Map<String, serde_json::Value> = tables
        .iter()
        .map(|(t, (r, w))| {
            (
                (*t).to_owned(),
                serde_json::json!({ "read_ms": r, "write_ms": w }),
            )
        })
        .collect();
    extra.insert("table_time".into(), serde_json::Value::Object(table_time));
    for collection in ["leases", "txns"] {
        extra.insert(
            format!("busy_ms_per_s_{collection}"),
            serde_json::json!(per_s(sum(collection))),
        );
    }
    extra
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_sum_into_the_seeds_collections_per_second() {
        let tables: BTreeMap<&str, (f64, f64)> = [
            ("lease", (10.0, 20.0)),
            ("clock", (0.0, 6.0)),
            ("txns", (0.0, 8.0)),
            ("txn_log", (0.0, 4.0)),
            (TRANSACTION, (0.0, 12.0)),
        ]
        .into_iter()
        .collect();
        let e = figures(&tables, Duration::from_millis(500));
        assert_eq!(e["busy_ms_per_s_leases"].as_f64(), Some(72.0));
        assert_eq!(e["busy_ms_per_s_txns"].as_f64(), Some(48.0));
        assert_eq!(e["table_time"]["clock"]["write_ms"].as_f64(), Some(6.0));
        assert_eq!(collection_of("other"), None);
    }
}

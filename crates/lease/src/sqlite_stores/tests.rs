//! Where each SQLite store charges an extend's time: the tables the seed's collections
//! sum ([`crate::busy`]). Counts and names only; no time is asserted but "some".

use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::store::LeaseStore;

fn store(design: SqlDesign) -> SqliteLeases {
    SqliteLeases::new(
        design,
        None,
        "normal",
        Arc::new(|| 0),
        Duration::from_millis(1),
    )
    .unwrap()
}

/// The tables one claim and ten extends by the holder charged, and rows written.
fn charged(design: SqlDesign) -> (Vec<&'static str>, u64) {
    let s = store(design);
    let mut session = s.session().unwrap();
    assert!(s.claim(&mut session, "a", "a/0", 0, 60_000).unwrap());
    s.reset_stats(&mut session);
    for k in 0..10 {
        assert!(s.extend(&mut session, "a", "a/0", k, 60_000 + k).unwrap());
    }
    let stats = s.stats(&session);
    assert!(stats
        .tables
        .values()
        .all(|t| t.read + t.write > Duration::ZERO));
    (stats.tables.keys().copied().collect(), stats.rows_written)
}

#[test]
fn each_store_charges_its_tables_and_its_begin_and_commit() {
    let (tables, rows) = charged(SqlDesign::TxnLog);
    assert_eq!(tables, ["clock", "lease", TRANSACTION, "txn_log", "txns"]);
    assert_eq!(rows, 50);
    // The patch: one row, still a transaction; the ticker is in no session.
    let (tables, rows) = charged(SqlDesign::GlobalClock);
    assert_eq!(tables, ["lease", TRANSACTION]);
    assert_eq!(rows, 10);
    let (tables, _) = charged(SqlDesign::SqlUpdate);
    assert_eq!(tables, ["lease", TRANSACTION]);
    let (tables, _) = charged(SqlDesign::Batched);
    assert_eq!(tables, ["lease"]);
}

#[test]
fn a_non_holder_is_refused_by_the_patched_store() {
    let s = store(SqlDesign::GlobalClock);
    let mut session = s.session().unwrap();
    assert!(s.claim(&mut session, "a", "a/0", 0, 60_000).unwrap());
    assert!(!s.extend(&mut session, "a", "a/1", 1, 60_001).unwrap());
    assert_eq!(s.read_back().unwrap()["a"].holder, "a/0");
}

//! The model databases: opening SQLite files with the scenario's pragmas, the schema of a
//! model's tables, seeding, and the two transactions the workload runs.
//!
//! Every model namespace keeps its rows in the shared `units` and `events` tables, keyed by
//! `model`, in the database file of its shard. A read transaction runs three SELECTs; a
//! write transaction updates a unit's agent status and version and appends an event with
//! the same sequence number, so a reader that sees the unit's version without its event
//! (or the other way round) has seen half a write.

use std::collections::HashSet;
use std::path::Path;

use rusqlite::{params, Connection, OpenFlags, OptionalExtension, TransactionBehavior};

/// What the databases hold after a run, as the workload's `verify` reads it back.
#[derive(Debug, Default, Clone)]
pub struct Stored {
    /// Every unit row: (model, unit, version, agent status).
    pub units: Vec<(String, String, i64, String)>,
    /// The payload of every stored event.
    pub payloads: HashSet<String>,
}

/// SQLite settings shared by every connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DbSettings {
    /// `PRAGMA journal_mode`.
    pub journal_mode: &'static str,
    /// `PRAGMA synchronous`.
    pub synchronous: &'static str,
}

/// Accepted journal modes.
pub const JOURNAL_MODES: &[&str] = &["wal", "delete", "truncate", "persist", "memory"];
/// Accepted synchronous levels.
pub const SYNCHRONOUS: &[&str] = &["off", "normal", "full"];

/// The tables and index of every model database.
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS units (
    model TEXT NOT NULL,
    name TEXT NOT NULL,
    agent_status TEXT NOT NULL,
    version INTEGER NOT NULL,
    PRIMARY KEY (model, name)
);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    model TEXT NOT NULL,
    unit TEXT NOT NULL,
    kind TEXT NOT NULL,
    seq INTEGER NOT NULL,
    payload TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_by_unit ON events (model, unit, seq);
";

/// The read transaction's first statement: a unit's status and version.
pub const SELECT_UNIT: &str =
    "SELECT agent_status, version FROM units WHERE model = ?1 AND name = ?2";
/// The read transaction's second statement: the unit's newest event.
pub const SELECT_NEWEST_EVENT: &str = "SELECT MAX(seq) FROM events WHERE model = ?1 AND unit = ?2";
/// The read transaction's third statement: units in the model.
pub const COUNT_UNITS: &str = "SELECT COUNT(*) FROM units WHERE model = ?1";
/// The write transaction's update, returning the new version.
pub const UPDATE_UNIT: &str = "UPDATE units SET agent_status = ?3, version = version + 1 WHERE model = ?1 AND name = ?2 RETURNING version";
/// The write transaction's event.
pub const INSERT_EVENT: &str =
    "INSERT INTO events (model, unit, kind, seq, payload) VALUES (?1, ?2, 'agent-status', ?3, ?4)";
/// The cull of a unit's old events.
pub const CULL_EVENTS: &str = "DELETE FROM events WHERE model = ?1 AND unit = ?2 AND seq <= ?3";
/// Every this many versions a write culls the unit's old events...
pub const CULL_EVERY: i64 = 10;
/// ...keeping the newest this many.
pub const EVENTS_KEPT: i64 = 5;

/// Name of model `index`; model 0 is the controller namespace.
pub fn model_name(index: usize) -> String {
    if index == 0 {
        "controller".to_owned()
    } else {
        format!("model-{index:04}")
    }
}

/// Name of unit `index` of a model.
pub fn unit_name(index: usize) -> String {
    format!("unit/{index}")
}

/// Opens a read-write connection with the settings applied. Busy errors come back at once
/// (`busy_timeout` 0): retrying is the transaction runner's job, as in the seed.
pub fn open(path: &Path, settings: DbSettings) -> rusqlite::Result<Connection> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(std::time::Duration::ZERO)?;
    let _mode: String = conn.query_row(
        &format!("PRAGMA journal_mode = {}", settings.journal_mode),
        [],
        |r| r.get(0),
    )?;
    conn.execute_batch(&format!("PRAGMA synchronous = {};", settings.synchronous))?;
    Ok(conn)
}

/// Opens a read-only connection (for the read pool of `rw-split`).
pub fn open_read_only(path: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(std::time::Duration::ZERO)?;
    Ok(conn)
}

/// Creates the schema and one row per unit of each listed model.
pub fn create(conn: &mut Connection, models: &[usize], units: usize) -> rusqlite::Result<()> {
    conn.execute_batch(SCHEMA)?;
    let tx = conn.transaction()?;
    {
        let mut insert = tx.prepare(
            "INSERT INTO units (model, name, agent_status, version) VALUES (?1, ?2, 'idle', 0)",
        )?;
        for &m in models {
            for u in 0..units {
                insert.execute(params![model_name(m), unit_name(u)])?;
            }
        }
    }
    tx.commit()
}

/// What a read transaction saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadResult {
    /// The unit's agent status.
    pub status: String,
    /// The unit's version.
    pub version: i64,
    /// The newest event sequence number of the unit (0 if none).
    pub newest_event: i64,
    /// Units in the model.
    pub units_in_model: i64,
}

impl ReadResult {
    /// Whether the read saw a whole write (or none): version and newest event agree.
    pub fn consistent(&self) -> bool {
        self.version == self.newest_event
    }
}

/// The read transaction: a unit's status, its newest event, a count.
pub fn read_txn(conn: &mut Connection, model: &str, unit: &str) -> rusqlite::Result<ReadResult> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Deferred)?;
    let (status, version): (String, i64) = tx
        .prepare_cached(SELECT_UNIT)?
        .query_row(params![model, unit], |r| Ok((r.get(0)?, r.get(1)?)))?;
    let newest_event: Option<i64> = tx
        .prepare_cached(SELECT_NEWEST_EVENT)?
        .query_row(params![model, unit], |r| r.get(0))
        .optional()?
        .flatten();
    let units_in_model: i64 = tx
        .prepare_cached(COUNT_UNITS)?
        .query_row(params![model], |r| r.get(0))?;
    tx.finish()?;
    Ok(ReadResult {
        status,
        version,
        newest_event: newest_event.unwrap_or(0),
        units_in_model,
    })
}

/// The write transaction: set the unit's agent status, bump its version, append an event
/// with that version, and every `cull_every`-th version drop the unit's old events.
/// Returns the new version.
pub fn write_txn(
    conn: &mut Connection,
    behavior: TransactionBehavior,
    model: &str,
    unit: &str,
    status: &str,
) -> rusqlite::Result<i64> {
    write_txn_locked_at(conn, behavior, model, unit, status).map(|(version, _)| version)
}

/// [`write_txn`], also returning when its UPDATE had returned: by then the transaction
/// holds SQLite's write lock (taken inside the UPDATE), which the COMMIT releases.
pub fn write_txn_locked_at(
    conn: &mut Connection,
    behavior: TransactionBehavior,
    model: &str,
    unit: &str,
    status: &str,
) -> rusqlite::Result<(i64, std::time::Instant)> {
    let tx = conn.transaction_with_behavior(behavior)?;
    let version: i64 = tx
        .prepare_cached(UPDATE_UNIT)?
        .query_row(params![model, unit, status], |r| r.get(0))?;
    let locked_at = std::time::Instant::now();
    tx.prepare_cached(INSERT_EVENT)?
        .execute(params![model, unit, version, status])?;
    if version % CULL_EVERY == 0 {
        tx.prepare_cached(CULL_EVENTS)?
            .execute(params![model, unit, version - EVENTS_KEPT])?;
    }
    tx.commit()?;
    Ok((version, locked_at))
}

/// Whether an error is SQLite's "busy" or "locked": the ones the runner retries.
pub fn is_busy(err: &rusqlite::Error) -> bool {
    matches!(
        err.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

/// Every unit row of a database: (model, unit, version, agent status).
pub fn all_units(conn: &Connection) -> rusqlite::Result<Vec<(String, String, i64, String)>> {
    let mut stmt = conn.prepare("SELECT model, name, version, agent_status FROM units")?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?;
    rows.collect()
}

/// The payload of every stored event.
pub fn all_payloads(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare("SELECT payload FROM events")?;
    let rows = stmt.query_map([], |r| r.get(0))?;
    rows.collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> DbSettings {
        DbSettings {
            journal_mode: "wal",
            synchronous: "normal",
        }
    }

    #[test]
    fn write_then_read_is_consistent_and_culls_old_events() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.db");
        let mut conn = open(&path, settings()).unwrap();
        create(&mut conn, &[0, 1], 3).unwrap();
        let first = read_txn(&mut conn, "model-0001", "unit/2").unwrap();
        assert_eq!(
            (first.version, first.newest_event, first.units_in_model),
            (0, 0, 3)
        );
        assert!(first.consistent());
        for n in 1..=12 {
            let v = write_txn(
                &mut conn,
                TransactionBehavior::Immediate,
                "model-0001",
                "unit/2",
                &format!("s{n}"),
            )
            .unwrap();
            assert_eq!(v, n);
        }
        let after = read_txn(&mut conn, "model-0001", "unit/2").unwrap();
        assert_eq!(
            (after.status.as_str(), after.version, after.newest_event),
            ("s12", 12, 12)
        );
        let kept: i64 = conn
            .query_row("SELECT COUNT(*) FROM events", [], |r| r.get(0))
            .unwrap();
        assert_eq!(kept, 7, "events up to version 5 culled at version 10");
        assert!(all_units(&conn)
            .unwrap()
            .iter()
            .any(|u| u.0 == "controller"));
    }

    #[test]
    fn a_second_writer_gets_busy_not_a_wait() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.db");
        let mut a = open(&path, settings()).unwrap();
        create(&mut a, &[1], 1).unwrap();
        let mut b = open(&path, settings()).unwrap();
        let held = a
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .unwrap();
        let err = write_txn(
            &mut b,
            TransactionBehavior::Immediate,
            "model-0001",
            "unit/0",
            "x",
        )
        .unwrap_err();
        assert!(is_busy(&err), "{err}");
        drop(held);
    }
}

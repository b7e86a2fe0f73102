//! The SQLite stores: `txn-log` (before the change), `global-clock` (after it),
//! `sql-update` (today) and `batched` (group commit). One database file in a private
//! temporary folder; each worker has its own connection.
//!
//! | store | one extend writes |
//! |---|---|
//! | `txn-log` | a transaction row, the lease, the namespace's shared clock row, a transaction-log row, the transaction row again (5 rows, one transaction) |
//! | `global-clock` | the lease, conditional on the global clock row (1 row); a clock updater advances that row once per simulated second |
//! | `sql-update` | `UPDATE lease SET expiry = ? WHERE uuid = ? AND holder = ?` in its own transaction (1 row) |
//! | `batched` | the same UPDATE, committed in groups (one transaction per group) by whichever caller finds no commit in progress; alone, a caller commits its own extend at once |
//!
//! Each session times its statements by table, busy time only (a sleep in the busy
//! handler left out): `lease`, `clock`, `txns`, `txn_log`, and [`TRANSACTION`] for BEGIN
//! and COMMIT, which every statement's transaction times apart (claims and sweeps
//! included), but for `batched`'s group commits: the leader's `lease` time, whole. The
//! global clock's ticker runs outside any session: its time is nobody's, its writes count
//! in the bytes.
//! Group commit lives in the `group` submodule.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use tempfile::TempDir;

use crate::store::{LeaseStore, SessionStats, StoredLease, TRANSACTION};

mod group;
#[cfg(test)]
mod tests;
use group::GroupCommit;

/// Which SQLite design.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SqlDesign {
    /// `txn-log`
    TxnLog,
    /// `global-clock`
    GlobalClock,
    /// `sql-update`
    SqlUpdate,
    /// `batched`
    Batched,
}

const SCHEMA: &str = "
CREATE TABLE lease (uuid TEXT PRIMARY KEY, namespace TEXT NOT NULL, holder TEXT NOT NULL, expiry INTEGER NOT NULL);
CREATE TABLE clock (namespace TEXT PRIMARY KEY, time INTEGER NOT NULL);
CREATE TABLE txns (id INTEGER PRIMARY KEY AUTOINCREMENT, lease TEXT NOT NULL, op TEXT NOT NULL, state TEXT NOT NULL);
CREATE TABLE txn_log (id INTEGER PRIMARY KEY AUTOINCREMENT, txn INTEGER NOT NULL, lease TEXT NOT NULL);
INSERT INTO clock (namespace, time) VALUES ('global', 0), ('model', 0);
";

/// The namespace every lease of the scenario lives in (the seed: one model).
const NAMESPACE: &str = "model";

/// A worker's connection with its figures.
pub struct SqlSession {
    conn: Connection,
    stats: SessionStats,
}

/// A SQLite lease store.
pub struct SqliteLeases {
    design: SqlDesign,
    path: PathBuf,
    synchronous: &'static str,
    group: Option<GroupCommit>,
    stop: Arc<AtomicBool>,
    helpers: Mutex<Vec<JoinHandle<()>>>,
    background_rows: Arc<AtomicU64>,
    batches: Arc<AtomicU64>,
    batched_extends: Arc<AtomicU64>,
    // Last: removed after every connection is closed.
    _dir: TempDir,
}

/// SQLite's own busy handler schedule (sqliteDefaultBusyCallback, milliseconds), kept so
/// behaviour matches `busy_timeout`; replaced only so that each sleep is measured.
const BUSY_DELAYS_MS: [u64; 12] = [1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100];
/// Give up after this long in the busy handler, as `busy_timeout(10 s)` did.
const BUSY_LIMIT_MS: u64 = 10_000;

/// The busy handler: sleeps as SQLite's default would and notes each sleep as a wait.
fn busy_sleep(count: i32) -> bool {
    let n = count.max(0) as usize;
    let slept_before: u64 = if n < BUSY_DELAYS_MS.len() {
        BUSY_DELAYS_MS[..n].iter().sum()
    } else {
        BUSY_DELAYS_MS.iter().sum::<u64>() + (n - BUSY_DELAYS_MS.len()) as u64 * 100
    };
    if slept_before >= BUSY_LIMIT_MS {
        return false;
    }
    let delay = BUSY_DELAYS_MS[n.min(BUSY_DELAYS_MS.len() - 1)].min(BUSY_LIMIT_MS - slept_before);
    let start = Instant::now();
    std::thread::sleep(Duration::from_millis(delay));
    crate::store::note_wait(start.elapsed());
    true
}

fn open(path: &std::path::Path, synchronous: &str) -> rusqlite::Result<Connection> {
    let conn = Connection::open(path)?;
    conn.busy_handler(Some(busy_sleep))?;
    let _: String = conn.query_row("PRAGMA journal_mode = wal", [], |r| r.get(0))?;
    conn.execute_batch(&format!("PRAGMA synchronous = {synchronous};"))?;
    Ok(conn)
}

fn sql(e: rusqlite::Error) -> String {
    format!("SQLite: {e}")
}

impl SqliteLeases {
    /// Creates the database in a private folder under `data_dir` (or the system's).
    /// `clock` gives the simulated time for the global clock updater; `tick` is one
    /// simulated second in real time.
    pub fn new(
        design: SqlDesign,
        data_dir: Option<&std::path::Path>,
        synchronous: &'static str,
        clock: Arc<dyn Fn() -> i64 + Send + Sync>,
        tick: Duration,
    ) -> Result<SqliteLeases, String> {
        let dir = harness::scratch::private_folder(data_dir, "contention-lab-lease-")?;
        let path = dir.path().join("leases.db");
        open(&path, synchronous)
            .and_then(|c| c.execute_batch(SCHEMA))
            .map_err(sql)?;
        let stop = Arc::new(AtomicBool::new(false));
        let background_rows = Arc::new(AtomicU64::new(0));
        let batches = Arc::new(AtomicU64::new(0));
        let batched_extends = Arc::new(AtomicU64::new(0));
        let mut helpers = Vec::new();
        let mut group = None;
        if design == SqlDesign::GlobalClock {
            let conn = open(&path, synchronous).map_err(sql)?;
            let (stop, rows) = (Arc::clone(&stop), Arc::clone(&background_rows));
            // Named so that profiles show the ticker's cost beside the workers'.
            let ticker = std::thread::Builder::new().name("clock-ticker".into());
            helpers.push(
                ticker
                    .spawn(move || {
                        while !stop.load(Ordering::Relaxed) {
                            std::thread::sleep(tick);
                            if conn
                                .execute(
                                    "UPDATE clock SET time = ?1 WHERE namespace = 'global'",
                                    params![clock()],
                                )
                                .is_ok()
                            {
                                rows.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                    })
                    .map_err(|e| format!("cannot start the clock ticker: {e}"))?,
            );
        }
        if design == SqlDesign::Batched {
            group = Some(GroupCommit::new(
                open(&path, synchronous).map_err(sql)?,
                Arc::clone(&batches),
                Arc::clone(&batched_extends),
            ));
        }
        Ok(SqliteLeases {
            design,
            path,
            synchronous,
            group,
            stop,
            helpers: Mutex::new(helpers),
            background_rows,
            batches,
            batched_extends,
            _dir: dir,
        })
    }
}

impl Drop for SqliteLeases {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for h in self.helpers.lock().drain(..) {
            let _ = h.join();
        }
    }
}

impl LeaseStore for SqliteLeases {
    type Session = SqlSession;

    fn session(&self) -> Result<SqlSession, String> {
        Ok(SqlSession {
            conn: open(&self.path, self.synchronous).map_err(sql)?,
            stats: SessionStats::default(),
        })
    }

    fn stats<'s>(&self, s: &'s SqlSession) -> &'s SessionStats {
        &s.stats
    }

    fn reset_stats(&self, s: &mut SqlSession) {
        s.stats = SessionStats::default();
    }

    fn claim(
        &self,
        s: &mut SqlSession,
        lease: &str,
        holder: &str,
        now: i64,
        expiry: i64,
    ) -> Result<bool, String> {
        let changed = on_lease(
            s,
            "INSERT INTO lease (uuid, namespace, holder, expiry) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (uuid) DO UPDATE SET holder = excluded.holder, expiry = excluded.expiry
             WHERE lease.expiry < ?5",
            params![lease, NAMESPACE, holder, expiry, now],
        )
        .map_err(sql)?;
        Ok(changed == 1)
    }

    fn extend(
        &self,
        s: &mut SqlSession,
        lease: &str,
        holder: &str,
        now: i64,
        expiry: i64,
    ) -> Result<bool, String> {
        match self.design {
            SqlDesign::TxnLog => txn_log_extend(s, lease, holder, now, expiry).map_err(sql),
            SqlDesign::GlobalClock | SqlDesign::SqlUpdate => {
                let update = if self.design == SqlDesign::GlobalClock {
                    "UPDATE lease SET expiry = ?1 WHERE uuid = ?2 AND holder = ?3
                     AND expiry >= (SELECT time FROM clock WHERE namespace = 'global')"
                } else {
                    "UPDATE lease SET expiry = ?1 WHERE uuid = ?2 AND holder = ?3"
                };
                let n = on_lease(s, update, params![expiry, lease, holder]).map_err(sql)?;
                s.stats.rows_written += n as u64;
                Ok(n == 1)
            }
            SqlDesign::Batched => {
                let group = self.group.as_ref().expect("batched has a group committer");
                let (start, waited) = (Instant::now(), crate::store::waits_so_far());
                let ok = group.extend(lease, holder, expiry)?;
                // Queued behind another caller's group is blocked time, left out.
                s.stats
                    .charge("lease", true, crate::store::busy_since(start, waited));
                s.stats.rows_written += u64::from(ok);
                Ok(ok)
            }
        }
    }

    fn sweep(&self, s: &mut SqlSession, now: i64) -> Result<u64, String> {
        let n = on_lease(s, "DELETE FROM lease WHERE expiry < ?1", params![now]).map_err(sql)?;
        Ok(n as u64)
    }

    fn durable(&self) -> bool {
        self.synchronous == "full"
    }

    fn locks(&self) -> harness::locks::LockSet {
        let set = harness::locks::LockSet::new();
        let set = if self.design == SqlDesign::Batched {
            set.with(crate::store::lock_ids::WRITER, "group committer", 1)
                .unnamed("the commit queue's lock")
        } else {
            set
        };
        set.unnamed("SQLite's write lock (its waits are the busy handler's sleeps)")
    }

    fn read_back(&self) -> Result<HashMap<String, StoredLease>, String> {
        // A second SQLite connection in the same process is safe (SQLite shares its
        // locks per file between connections); it reads the committed state.
        read_leases(&self.path)
    }

    fn background_rows(&self) -> u64 {
        self.background_rows.load(Ordering::Relaxed)
    }

    fn window_opened(&self) {
        self.background_rows.store(0, Ordering::Relaxed);
        self.batches.store(0, Ordering::Relaxed);
        self.batched_extends.store(0, Ordering::Relaxed);
    }

    fn extra(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut extra = serde_json::Map::new();
        let batches = self.batches.load(Ordering::Relaxed);
        if self.design == SqlDesign::Batched && batches > 0 {
            let mean = self.batched_extends.load(Ordering::Relaxed) as f64 / batches as f64;
            extra.insert("batch_size_mean".into(), serde_json::json!(mean));
            extra.insert("batches".into(), serde_json::json!(batches));
        }
        extra
    }
}

/// One statement on the lease table (`statement` with `values`) in its own transaction;
/// the rows it changed. BEGIN IMMEDIATE, as in `txn-log`: taking the write lock and
/// starting the snapshot (re-reading pages another connection changed, such as the global
/// clock's ticker's) fall to BEGIN in every store, not to whichever statement comes
/// first. BEGIN and COMMIT are charged to [`TRANSACTION`], so the lease table's time is
/// the statement's alone, as in `txn-log`.
fn on_lease(
    s: &mut SqlSession,
    statement: &str,
    values: impl rusqlite::Params,
) -> rusqlite::Result<usize> {
    let stats = &mut s.stats;
    let conn = &mut s.conn;
    let tx = stats.timed(TRANSACTION, true, || {
        conn.transaction_with_behavior(TransactionBehavior::Immediate)
    })?;
    let n = stats.timed("lease", true, || {
        tx.prepare_cached(statement)?.execute(values)
    })?;
    stats.timed(TRANSACTION, true, || tx.commit())?;
    Ok(n)
}

/// Before the change: a multi-document transaction with a transaction record, an
/// assertion on the holder, the lease, the namespace's shared clock and a log entry.
fn txn_log_extend(
    s: &mut SqlSession,
    lease: &str,
    holder: &str,
    now: i64,
    expiry: i64,
) -> rusqlite::Result<bool> {
    let stats = &mut s.stats;
    let conn = &mut s.conn;
    // Taking the write lock and committing are the transaction machinery's time.
    let tx = stats.timed(TRANSACTION, true, || {
        conn.transaction_with_behavior(TransactionBehavior::Immediate)
    })?;
    stats.timed("txns", true, || {
        tx.prepare_cached("INSERT INTO txns (lease, op, state) VALUES (?1, 'extend', 'preparing')")?
            .execute(params![lease])
    })?;
    let txn = tx.last_insert_rowid();
    let current: Option<String> = stats.timed("lease", false, || {
        tx.prepare_cached("SELECT holder FROM lease WHERE uuid = ?1")?
            .query_row(params![lease], |r| r.get(0))
            .optional()
    })?;
    let mut rows = 1;
    let ok = current.as_deref() == Some(holder);
    if ok {
        stats.timed("lease", true, || {
            tx.prepare_cached("UPDATE lease SET expiry = ?1 WHERE uuid = ?2")?
                .execute(params![expiry, lease])
        })?;
        stats.timed("clock", true, || {
            tx.prepare_cached("UPDATE clock SET time = MAX(time, ?1) WHERE namespace = ?2")?
                .execute(params![now, NAMESPACE])
        })?;
        stats.timed("txn_log", true, || {
            tx.prepare_cached("INSERT INTO txn_log (txn, lease) VALUES (?1, ?2)")?
                .execute(params![txn, lease])
        })?;
        rows += 3;
    }
    stats.timed("txns", true, || {
        tx.prepare_cached("UPDATE txns SET state = ?1 WHERE id = ?2")?
            .execute(params![if ok { "applied" } else { "aborted" }, txn])
    })?;
    rows += 1;
    stats.timed(TRANSACTION, true, || tx.commit())?;
    stats.rows_written += rows;
    Ok(ok)
}

/// Every lease in the database at `path`, through a fresh connection.
pub fn read_leases(path: &std::path::Path) -> Result<HashMap<String, StoredLease>, String> {
    let conn = Connection::open(path).map_err(sql)?;
    let mut stmt = conn
        .prepare("SELECT uuid, holder, expiry FROM lease")
        .map_err(sql)?;
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                StoredLease {
                    holder: r.get(1)?,
                    expiry: r.get(2)?,
                },
            ))
        })
        .map_err(sql)?;
    rows.collect::<rusqlite::Result<HashMap<_, _>>>()
        .map_err(sql)
}

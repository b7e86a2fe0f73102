//! The SQLite stores: `txn-log` (before the change), `global-clock` (after it),
//! `sql-update` (today) and `batched` (group commit). One database file in a private
//! temporary folder; each worker has its own connection.
//!
//! | store | one extend writes |
//! |---|---|
//! | `txn-log` | a transaction row, the lease, the namespace's shared clock row, a transaction-log row, the transaction row again (5 rows, one transaction) |
//! | `global-clock` | the lease, conditional on the global clock row (1 row); a clock updater advances that row once per simulated second |
//! | `sql-update` | `UPDATE lease SET expiry = ? WHERE uuid = ? AND holder = ?` in its own transaction (1 row) |
//! | `batched` | the same UPDATE, queued to a committer that commits groups in one transaction |

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use parking_lot::Mutex;
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use tempfile::TempDir;

use crate::store::{LeaseStore, SessionStats, StoredLease};

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

struct Extend {
    lease: String,
    holder: String,
    expiry: i64,
    reply: Sender<Result<bool, String>>,
}

/// A SQLite lease store.
pub struct SqliteLeases {
    design: SqlDesign,
    path: PathBuf,
    synchronous: &'static str,
    queue: Option<Sender<Extend>>,
    stop: Arc<AtomicBool>,
    helpers: Mutex<Vec<JoinHandle<()>>>,
    background_rows: Arc<AtomicU64>,
    batches: Arc<AtomicU64>,
    batched_extends: Arc<AtomicU64>,
    // Last: removed after every connection is closed.
    _dir: TempDir,
}

fn open(path: &std::path::Path, synchronous: &str) -> rusqlite::Result<Connection> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(Duration::from_secs(10))?;
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
        let mut queue = None;
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
            let (tx, rx) = crossbeam_channel::unbounded();
            let conn = open(&path, synchronous).map_err(sql)?;
            let (b, n) = (Arc::clone(&batches), Arc::clone(&batched_extends));
            helpers.push(
                std::thread::Builder::new()
                    .name("lease-committer".into())
                    .spawn(move || committer(conn, rx, b, n))
                    .map_err(|e| format!("cannot start the batched committer: {e}"))?,
            );
            queue = Some(tx);
        }
        Ok(SqliteLeases {
            design,
            path,
            synchronous,
            queue,
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
        self.queue = None;
        for h in self.helpers.lock().drain(..) {
            let _ = h.join();
        }
    }
}

/// Group commit: take every queued extend (up to 512), apply them in one transaction,
/// answer each caller.
fn committer(
    mut conn: Connection,
    rx: Receiver<Extend>,
    batches: Arc<AtomicU64>,
    extends: Arc<AtomicU64>,
) {
    while let Ok(first) = rx.recv() {
        let mut group = vec![first];
        while group.len() < 512 {
            match rx.try_recv() {
                Ok(more) => group.push(more),
                Err(_) => break,
            }
        }
        let outcome = (|| -> rusqlite::Result<Vec<bool>> {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let mut results = Vec::with_capacity(group.len());
            {
                let mut update = tx.prepare_cached(
                    "UPDATE lease SET expiry = ?1 WHERE uuid = ?2 AND holder = ?3",
                )?;
                for e in &group {
                    results.push(update.execute(params![e.expiry, e.lease, e.holder])? == 1);
                }
            }
            tx.commit()?;
            Ok(results)
        })();
        batches.fetch_add(1, Ordering::Relaxed);
        extends.fetch_add(group.len() as u64, Ordering::Relaxed);
        match outcome {
            Ok(results) => {
                for (e, ok) in group.into_iter().zip(results) {
                    let _ = e.reply.send(Ok(ok));
                }
            }
            Err(err) => {
                let message = sql(err);
                for e in group {
                    let _ = e.reply.send(Err(message.clone()));
                }
            }
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
        let conn = &s.conn;
        let changed = s
            .stats
            .timed("lease", true, || {
                conn.execute(
                    "INSERT INTO lease (uuid, namespace, holder, expiry) VALUES (?1, ?2, ?3, ?4)
                     ON CONFLICT (uuid) DO UPDATE SET holder = excluded.holder, expiry = excluded.expiry
                     WHERE lease.expiry < ?5",
                    params![lease, NAMESPACE, holder, expiry, now],
                )
            })
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
            SqlDesign::GlobalClock => {
                let conn = &s.conn;
                let n = s
                    .stats
                    .timed("lease", true, || {
                        conn.prepare_cached(
                            "UPDATE lease SET expiry = ?1 WHERE uuid = ?2 AND holder = ?3
                             AND expiry >= (SELECT time FROM clock WHERE namespace = 'global')",
                        )?
                        .execute(params![expiry, lease, holder])
                    })
                    .map_err(sql)?;
                s.stats.rows_written += n as u64;
                Ok(n == 1)
            }
            SqlDesign::SqlUpdate => {
                let conn = &mut s.conn;
                let n = s
                    .stats
                    .timed("lease", true, || {
                        let tx = conn.transaction()?;
                        let n = tx
                            .prepare_cached(
                                "UPDATE lease SET expiry = ?1 WHERE uuid = ?2 AND holder = ?3",
                            )?
                            .execute(params![expiry, lease, holder])?;
                        tx.commit()?;
                        Ok::<_, rusqlite::Error>(n)
                    })
                    .map_err(sql)?;
                s.stats.rows_written += n as u64;
                Ok(n == 1)
            }
            SqlDesign::Batched => {
                let (reply, answer) = crossbeam_channel::bounded(1);
                let queue = self.queue.as_ref().expect("batched has a committer");
                let start = Instant::now();
                queue
                    .send(Extend {
                        lease: lease.to_owned(),
                        holder: holder.to_owned(),
                        expiry,
                        reply,
                    })
                    .map_err(|_| "the committer stopped".to_owned())?;
                let ok = answer
                    .recv()
                    .map_err(|_| "the committer stopped".to_owned())??;
                s.stats.tables.entry("lease").or_default().write += start.elapsed();
                s.stats.rows_written += u64::from(ok);
                Ok(ok)
            }
        }
    }

    fn sweep(&self, s: &mut SqlSession, now: i64) -> Result<u64, String> {
        let conn = &s.conn;
        let n = s
            .stats
            .timed("lease", true, || {
                conn.execute("DELETE FROM lease WHERE expiry < ?1", params![now])
            })
            .map_err(sql)?;
        Ok(n as u64)
    }

    fn durable(&self) -> bool {
        true
    }

    fn read_back(&self) -> Result<HashMap<String, StoredLease>, String> {
        let conn = Connection::open(&self.path).map_err(sql)?;
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
    let tx = s
        .conn
        .transaction_with_behavior(TransactionBehavior::Immediate)?;
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
    tx.commit()?;
    stats.rows_written += rows;
    Ok(ok)
}

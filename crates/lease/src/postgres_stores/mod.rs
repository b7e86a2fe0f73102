//! `txn-log`, `global-clock` and `sql-update` on the lab's own PostgreSQL (`backend=
//! postgres`): the SQLite stores' schema and statements, adapted, each worker writing
//! through a connection of its own, durable commits (`fsync` and `synchronous_commit`
//! on). The server is started once per process and stays resident across the windows
//! and repetitions of a cell; each store starts from empty tables.
//!
//! Why here and not in SQLite's module: SQLite has one writer for the whole file, so
//! the namespace `clock` row cannot be a hot spot of its own there; PostgreSQL locks
//! rows, so `txn-log`'s writers queue on the clock row as mgo/txn's did on the clock
//! document. The store's time per table is the database's own (`pg_stat_statements`,
//! [`account`]), not the lab's timing of its calls, and a statement's time there includes
//! its wait for a row lock; its bytes are the WAL it wrote; its workers' lock waits are
//! sampled from `pg_stat_activity` (`lock_wait_ms_per_s`); the server's own CPU time (every
//! process the postmaster forked: backends, WAL writer, checkpointer, read from
//! `/proc` at the window's edges as 389 DS's threads are) is `server_cpu_ms_per_s`, and
//! per extend `server_cpu_us_per_extend`: a figure both stores pay alike, the commit's
//! flush and the row-lock waits not in it (a wait is off CPU), so it compares the work
//! each store asks of the server like with like.
//! Not here: starting the server ([`launcher::postgres`]), the workload and its checks.

pub mod account;

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::Duration;

use launcher::postgres::{Postgres, PostgresOptions};
use postgres::{Client, NoTls, Statement};

use crate::sqlite_stores::SqlDesign;
use crate::store::{LeaseStore, ServerAccount, SessionStats, StoredLease};

/// The role the workers connect as: `pg_stat_statements` keeps each role's statements
/// apart, so the lab's own queries (as `postgres`) and the global clock's ticker are in
/// nobody's time, as with SQLite.
pub const WORKER_ROLE: &str = "lease_worker";

const SCHEMA: &str = "
DROP TABLE IF EXISTS lease, clock, txns, txn_log;
CREATE TABLE lease (uuid TEXT PRIMARY KEY, namespace TEXT NOT NULL, holder TEXT NOT NULL, expiry BIGINT NOT NULL);
CREATE TABLE clock (namespace TEXT PRIMARY KEY, time BIGINT NOT NULL);
CREATE TABLE txns (id BIGSERIAL PRIMARY KEY, lease TEXT NOT NULL, op TEXT NOT NULL, state TEXT NOT NULL);
CREATE TABLE txn_log (id BIGSERIAL PRIMARY KEY, txn BIGINT NOT NULL, lease TEXT NOT NULL);
INSERT INTO clock (namespace, time) VALUES ('global', 0), ('model', 0);
DO $$ BEGIN CREATE ROLE lease_worker LOGIN SUPERUSER; EXCEPTION WHEN duplicate_object THEN NULL; END $$;
";

/// The namespace every lease lives in (the seed: one model).
const NAMESPACE: &str = "model";

/// The settings beside the server's own: WAL I/O timed, for `wal_sync_ms_per_s`.
const SETTINGS: &[(&str, &str)] = &[("track_wal_io_timing", "on")];

/// The process's one server, started by the first store from `lab run`'s main thread
/// (the kernel's death signal follows the thread that started it) and kept for every
/// window and repetition of the cell; stopped when the process exits ([`stop_server`]),
/// and killed with it however it ends.
static SERVER: OnceLock<Mutex<Option<Started>>> = OnceLock::new();

/// A start's outcome, kept: a server that would not start is not tried again per window.
type Started = Result<Arc<Postgres>, String>;

/// The process's resident server, started on first use.
pub fn server() -> Result<Arc<Postgres>, String> {
    let mut slot = SERVER
        .get_or_init(|| Mutex::new(None))
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if slot.is_none() {
        let settings = SETTINGS
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let started = Postgres::start(&PostgresOptions {
            settings,
            ..Default::default()
        });
        if started.is_ok() {
            // SAFETY: registers a plain function without arguments.
            unsafe { libc::atexit(stop_server) };
        }
        *slot = Some(started.map(Arc::new));
    }
    slot.clone().expect("set above")
}

/// Stops the resident server and removes its folder when the process exits normally
/// (statics are never dropped): outside `lab`, no cell's scratch folder would take it.
extern "C" fn stop_server() {
    if let Some(slot) = SERVER.get() {
        let taken = slot.lock().unwrap_or_else(|e| e.into_inner()).take();
        drop(taken);
    }
}

fn pg(e: postgres::Error) -> String {
    format!("PostgreSQL: {e}")
}

/// A worker's connection, its prepared statements and its figures.
pub struct PgSession {
    client: Client,
    claim: Statement,
    extend: Statement,
    sweep: Statement,
    txn: Option<TxnStatements>,
    stats: SessionStats,
}

struct TxnStatements {
    insert_txn: Statement,
    holder: Statement,
    update_lease: Statement,
    update_clock: Statement,
    insert_log: Statement,
    update_txn: Statement,
}

/// A PostgreSQL lease store.
pub struct PgLeases {
    design: SqlDesign,
    server: Arc<Postgres>,
    admin: Mutex<Client>,
    durable: bool,
    wal_at_open: Mutex<Option<String>>,
    /// The server's processes' threads at the window's opening.
    cpu_at_open: Mutex<Option<launcher::procstat::Snapshot>>,
    stop: Arc<AtomicBool>,
    ticker: Mutex<Option<JoinHandle<()>>>,
    sampler: Mutex<Option<JoinHandle<()>>>,
    background_rows: Arc<AtomicU64>,
    /// `pg_stat_activity` samples in the window, and the workers found waiting on a lock
    /// summed over them.
    lock_samples: Arc<[AtomicU64; 2]>,
}

/// How often `pg_stat_activity` is sampled for lock waits: often enough for a mean over
/// a 600 ms window, rarely enough to cost the server little (one query per period).
const LOCK_SAMPLE: Duration = Duration::from_millis(5);

/// Counts the workers waiting on a lock (`wait_event_type = 'Lock'`: a row lock, say)
/// every [`LOCK_SAMPLE`] until `stop`.
fn sample_lock_waits(
    mut conn: Client,
    stop: Arc<AtomicBool>,
    samples: Arc<[AtomicU64; 2]>,
) -> impl FnOnce() {
    move || {
        let Ok(query) = conn.prepare(
            "SELECT count(*) FROM pg_stat_activity WHERE usename = 'lease_worker' AND wait_event_type = 'Lock'",
        ) else {
            return;
        };
        while !stop.load(Ordering::Relaxed) {
            std::thread::sleep(LOCK_SAMPLE);
            if let Ok(n) = conn
                .query_one(&query, &[])
                .and_then(|r| r.try_get::<_, i64>(0))
            {
                samples[0].fetch_add(1, Ordering::Relaxed);
                samples[1].fetch_add(n.max(0) as u64, Ordering::Relaxed);
            }
        }
    }
}

impl PgLeases {
    /// A store of `design` (one of the three on PostgreSQL) on the process's server, its
    /// tables made afresh; `clock` gives the simulated time for the global clock's ticker
    /// and `tick` is one simulated second.
    pub fn new(
        design: SqlDesign,
        clock: Arc<dyn Fn() -> i64 + Send + Sync>,
        tick: Duration,
    ) -> Result<PgLeases, String> {
        if design == SqlDesign::Batched {
            return Err("backend=postgres: `batched` runs on SQLite only; accepted with backend=postgres: txn-log, global-clock, sql-update".to_owned());
        }
        let server = server()?;
        let mut admin = server.client()?;
        admin.batch_execute(SCHEMA).map_err(pg)?;
        let sync: String = admin
            .query_one("SELECT current_setting('synchronous_commit')", &[])
            .and_then(|r| r.try_get(0))
            .map_err(pg)?;
        let fsync: String = admin
            .query_one("SELECT current_setting('fsync')", &[])
            .and_then(|r| r.try_get(0))
            .map_err(pg)?;
        let stop = Arc::new(AtomicBool::new(false));
        let background_rows = Arc::new(AtomicU64::new(0));
        let mut ticker = None;
        if design == SqlDesign::GlobalClock {
            let mut conn = server.client()?;
            let (stop, rows) = (Arc::clone(&stop), Arc::clone(&background_rows));
            ticker = Some(
                std::thread::Builder::new()
                    .name("clock-ticker".into())
                    .spawn(move || {
                        while !stop.load(Ordering::Relaxed) {
                            std::thread::sleep(tick);
                            let now = clock();
                            if conn
                                .execute(
                                    "UPDATE clock SET time = $1 WHERE namespace = 'global'",
                                    &[&now],
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
        let lock_samples: Arc<[AtomicU64; 2]> = Arc::new([AtomicU64::new(0), AtomicU64::new(0)]);
        let sampler = std::thread::Builder::new()
            .name("lock-sampler".into())
            .spawn(sample_lock_waits(
                server.client()?,
                Arc::clone(&stop),
                Arc::clone(&lock_samples),
            ))
            .map_err(|e| format!("cannot start the lock sampler: {e}"))?;
        Ok(PgLeases {
            design,
            server,
            admin: Mutex::new(admin),
            durable: sync == "on" && fsync == "on",
            wal_at_open: Mutex::new(None),
            cpu_at_open: Mutex::new(None),
            stop,
            ticker: Mutex::new(ticker),
            sampler: Mutex::new(Some(sampler)),
            background_rows,
            lock_samples,
        })
    }

    fn admin(&self) -> std::sync::MutexGuard<'_, Client> {
        self.admin.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Every thread of the server's processes now: the postmaster and its children, read from
    /// outside it (the lab's own connections' backends included: its admin queries and
    /// the lock sampler cost both stores alike).
    fn server_threads(&self) -> Option<launcher::procstat::Snapshot> {
        let pids = launcher::procstat::descendants(self.server.pid());
        (!pids.is_empty())
            .then(|| launcher::procstat::Snapshot::read_all(&pids))
            .flatten()
    }

    fn account(&self, window: Duration) -> Result<ServerAccount, String> {
        let start = self
            .wal_at_open
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let mut admin = self.admin();
        let rows = admin
            .query(
                "SELECT s.query, s.total_exec_time FROM pg_stat_statements s \
                 JOIN pg_roles r ON r.oid = s.userid \
                 WHERE r.rolname = $1 AND s.dbid = (SELECT oid FROM pg_database WHERE datname = current_database())",
                &[&WORKER_ROLE],
            )
            .map_err(pg)?;
        let statements: Vec<(String, f64)> = rows
            .iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
            .collect::<Result<_, postgres::Error>>()
            .map_err(pg)?;
        let bytes: i64 = match start {
            Some(lsn) => admin
                .query_one(
                    "SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), $1::text::pg_lsn)::bigint",
                    &[&lsn],
                )
                .and_then(|r| r.try_get(0))
                .map_err(pg)?,
            None => 0,
        };
        let sync_ms: f64 = admin
            .query_one("SELECT wal_sync_time FROM pg_stat_wal", &[])
            .and_then(|r| r.try_get(0))
            .map_err(pg)?;
        let mut extra = serde_json::Map::new();
        let seconds = window.as_secs_f64().max(1e-9);
        // pg_stat_wal is flushed by each backend at most once a second: a lower bound
        // over a window under a second.
        extra.insert(
            "wal_sync_ms_per_s".into(),
            serde_json::json!(sync_ms / seconds),
        );
        let opened = self
            .cpu_at_open
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let (Some(open), Some(close)) = (opened, self.server_threads()) {
            let ms =
                launcher::procstat::ServerAccount::between(&open, &close).on_cpu_ns as f64 / 1e6;
            extra.insert("server_cpu_ms".into(), serde_json::json!(ms));
            extra.insert(
                "server_cpu_ms_per_s".into(),
                serde_json::json!(ms / seconds),
            );
        }
        let samples = self.lock_samples[0].load(Ordering::Relaxed);
        if samples > 0 {
            // Mean workers waiting on a lock: milliseconds of lock wait per second.
            let waiting = self.lock_samples[1].load(Ordering::Relaxed) as f64 / samples as f64;
            extra.insert(
                "lock_wait_ms_per_s".into(),
                serde_json::json!(waiting * 1000.0),
            );
        }
        Ok(ServerAccount {
            tables: account::tables(&statements),
            bytes: bytes.max(0) as u64,
            extra,
        })
    }
}

impl Drop for PgLeases {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for helper in [&self.ticker, &self.sampler] {
            if let Some(t) = helper.lock().unwrap_or_else(|e| e.into_inner()).take() {
                let _ = t.join();
            }
        }
    }
}

impl LeaseStore for PgLeases {
    type Session = PgSession;

    fn session(&self) -> Result<PgSession, String> {
        let url = format!("{} user={WORKER_ROLE}", self.server.url());
        let mut client = Client::connect(&url, NoTls).map_err(pg)?;
        let claim = client
            .prepare(
                "INSERT INTO lease (uuid, namespace, holder, expiry) VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (uuid) DO UPDATE SET holder = excluded.holder, expiry = excluded.expiry \
                 WHERE lease.expiry < $5",
            )
            .map_err(pg)?;
        let extend = client
            .prepare(if self.design == SqlDesign::GlobalClock {
                "UPDATE lease SET expiry = $1 WHERE uuid = $2 AND holder = $3 \
                 AND expiry >= (SELECT time FROM clock WHERE namespace = 'global')"
            } else {
                "UPDATE lease SET expiry = $1 WHERE uuid = $2 AND holder = $3"
            })
            .map_err(pg)?;
        let sweep = client
            .prepare("DELETE FROM lease WHERE expiry < $1")
            .map_err(pg)?;
        let txn = if self.design == SqlDesign::TxnLog {
            let mut p = |s: &str| client.prepare(s).map_err(pg);
            Some(TxnStatements {
                insert_txn: p("INSERT INTO txns (lease, op, state) VALUES ($1, 'extend', 'preparing') RETURNING id")?,
                // FOR UPDATE: SQLite's BEGIN IMMEDIATE held the whole file; here the row.
                holder: p("SELECT holder FROM lease WHERE uuid = $1 FOR UPDATE")?,
                update_lease: p("UPDATE lease SET expiry = $1 WHERE uuid = $2")?,
                update_clock: p("UPDATE clock SET time = GREATEST(time, $1) WHERE namespace = $2")?,
                insert_log: p("INSERT INTO txn_log (txn, lease) VALUES ($1, $2)")?,
                update_txn: p("UPDATE txns SET state = $1 WHERE id = $2")?,
            })
        } else {
            None
        };
        Ok(PgSession {
            client,
            claim,
            extend,
            sweep,
            txn,
            stats: SessionStats::default(),
        })
    }

    fn stats<'s>(&self, s: &'s PgSession) -> &'s SessionStats {
        &s.stats
    }

    fn reset_stats(&self, s: &mut PgSession) {
        s.stats = SessionStats::default();
    }

    fn claim(
        &self,
        s: &mut PgSession,
        lease: &str,
        holder: &str,
        now: i64,
        expiry: i64,
    ) -> Result<bool, String> {
        let mut tx = s.client.transaction().map_err(pg)?;
        let n = tx
            .execute(&s.claim, &[&lease, &NAMESPACE, &holder, &expiry, &now])
            .map_err(pg)?;
        tx.commit().map_err(pg)?;
        Ok(n == 1)
    }

    fn extend(
        &self,
        s: &mut PgSession,
        lease: &str,
        holder: &str,
        now: i64,
        expiry: i64,
    ) -> Result<bool, String> {
        let Some(t) = &s.txn else {
            let mut tx = s.client.transaction().map_err(pg)?;
            let n = tx
                .execute(&s.extend, &[&expiry, &lease, &holder])
                .map_err(pg)?;
            tx.commit().map_err(pg)?;
            s.stats.rows_written += n;
            return Ok(n == 1);
        };
        // Before the change: a transaction record, the holder checked, the lease, the
        // namespace's shared clock row and a log entry, in one transaction.
        let mut tx = s.client.transaction().map_err(pg)?;
        let id: i64 = tx
            .query_one(&t.insert_txn, &[&lease])
            .and_then(|r| r.try_get(0))
            .map_err(pg)?;
        let current: Option<String> = tx
            .query_opt(&t.holder, &[&lease])
            .map_err(pg)?
            .map(|r| r.try_get(0))
            .transpose()
            .map_err(pg)?;
        let ok = current.as_deref() == Some(holder);
        let mut rows = 1;
        if ok {
            tx.execute(&t.update_lease, &[&expiry, &lease])
                .map_err(pg)?;
            tx.execute(&t.update_clock, &[&now, &NAMESPACE])
                .map_err(pg)?;
            tx.execute(&t.insert_log, &[&id, &lease]).map_err(pg)?;
            rows += 3;
        }
        let state = if ok { "applied" } else { "aborted" };
        tx.execute(&t.update_txn, &[&state, &id]).map_err(pg)?;
        rows += 1;
        tx.commit().map_err(pg)?;
        s.stats.rows_written += rows;
        Ok(ok)
    }

    fn sweep(&self, s: &mut PgSession, now: i64) -> Result<u64, String> {
        let mut tx = s.client.transaction().map_err(pg)?;
        let n = tx.execute(&s.sweep, &[&now]).map_err(pg)?;
        tx.commit().map_err(pg)?;
        Ok(n)
    }

    fn durable(&self) -> bool {
        self.durable
    }

    fn read_back(&self) -> Result<HashMap<String, StoredLease>, String> {
        let rows = self
            .admin()
            .query("SELECT uuid, holder, expiry FROM lease", &[])
            .map_err(pg)?;
        rows.iter()
            .map(|r| {
                Ok((
                    r.try_get::<_, String>(0)?,
                    StoredLease {
                        holder: r.try_get(1)?,
                        expiry: r.try_get(2)?,
                    },
                ))
            })
            .collect::<Result<HashMap<_, _>, postgres::Error>>()
            .map_err(pg)
    }

    fn background_rows(&self) -> u64 {
        self.background_rows.load(Ordering::Relaxed)
    }

    fn window_opened(&self) {
        self.background_rows.store(0, Ordering::Relaxed);
        for counter in self.lock_samples.iter() {
            counter.store(0, Ordering::Relaxed);
        }
        let mut admin = self.admin();
        let lsn = admin
            .batch_execute("SELECT pg_stat_statements_reset(); SELECT pg_stat_reset_shared('wal')")
            .and_then(|()| admin.query_one("SELECT pg_current_wal_insert_lsn()::text", &[]))
            .and_then(|r| r.try_get::<_, String>(0));
        *self.wal_at_open.lock().unwrap_or_else(|e| e.into_inner()) = lsn.ok();
        drop(admin);
        *self.cpu_at_open.lock().unwrap_or_else(|e| e.into_inner()) = self.server_threads();
    }

    fn server_account(&self, window: Duration) -> Option<Result<ServerAccount, String>> {
        Some(self.account(window))
    }

    fn locks(&self) -> harness::locks::LockSet {
        harness::locks::LockSet::new()
            .unnamed("PostgreSQL's row locks (the namespace clock row's for txn-log)")
    }
}

/// Per-table execution figures as `extra` keys: `busy_ms_per_s_<table>` for each table
/// whose name is not a seed collection's (`txns` is both: its own time is in
/// `table_time`).
pub fn table_figures(
    tables: &BTreeMap<String, (f64, f64)>,
    window: Duration,
) -> serde_json::Map<String, serde_json::Value> {
    let seconds = window.as_secs_f64();
    tables
        .iter()
        .filter(|(t, _)| !matches!(t.as_str(), "leases" | "txns"))
        .map(|(t, (r, w))| {
            let per_s = if seconds > 0.0 {
                (r + w) / seconds
            } else {
                0.0
            };
            (format!("busy_ms_per_s_{t}"), serde_json::json!(per_s))
        })
        .collect()
}

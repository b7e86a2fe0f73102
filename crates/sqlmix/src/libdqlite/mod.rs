//! `backend=libdqlite`: sqlmix's transactions against a real dqlite node started in this
//! process ([`node`]), spoken to over dqlite's wire protocol by a client of our own
//! ([`wire`], [`client`]).
//!
//! An [`App`] is what one of Juju's dqlite apps is: a node and, for each database on it,
//! a client pool that behaves like Go's `database/sql` (at most `pool_size` open, at most
//! `idle_conns` kept idle, the rest closed when returned, a new one costing a connect,
//! the handshake, LEADER, CLIENT and OPEN). Juju keeps one database per model
//! (`databases=per-model`); `databases=per-app` puts every model of the app in one
//! database, as `backend=dqlite-model` does. Every statement is one request (EXEC_SQL or
//! QUERY_SQL, as go-dqlite's driver sends a query that was not prepared), BEGIN and
//! COMMIT included, and every request is time the caller is blocked on the node, so it
//! is recorded as waiting. Errors reach the runner as the SQLite codes dqlite returned
//! (5, "database is locked", arrives at once for a write that meets a held write lock).
//!
//! The write transaction reads the new version with a SELECT after its UPDATE rather than
//! `UPDATE ... RETURNING`: dqlite 1.11.1 answers a RETURNING statement that meets the lock
//! with code 1 and a column name as its message, which no caller can tell from a real
//! error.

pub mod client;
pub mod go;
pub mod node;
pub mod wire;

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use harness::OpCtx;
use parking_lot::{Condvar, Mutex};

use crate::db::{self, ReadResult};
use client::{Client, WireError};
use node::{Bind, Node};
use wire::Value;

/// How models are laid out in databases on a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Databases {
    /// One database per model (Juju's layout): writes to different models never meet.
    PerModel,
    /// One database per app holding all of its models (the model backend's layout).
    PerApp,
}

/// Accepted `databases` values.
pub const DATABASES: &[&str] = &["per-model", "per-app"];

impl Databases {
    /// Parses a `databases` value.
    pub fn parse(word: &str) -> Result<Databases, String> {
        match word {
            "per-model" => Ok(Databases::PerModel),
            "per-app" => Ok(Databases::PerApp),
            _ => Err(format!(
                "databases={word:?}: accepted {}",
                DATABASES.join(", ")
            )),
        }
    }
}

/// The write transaction's update, without RETURNING (see the module's note).
pub const UPDATE_UNIT: &str =
    "UPDATE units SET agent_status = ?3, version = version + 1 WHERE model = ?1 AND name = ?2";
/// The write transaction's read of the version it just wrote.
pub const SELECT_VERSION: &str = "SELECT version FROM units WHERE model = ?1 AND name = ?2";

/// A client connection of a pool, with the database it opened.
#[derive(Debug)]
pub struct Conn {
    client: Client,
    db: u32,
    pool: usize,
    broken: bool,
}

#[derive(Default)]
struct PoolState {
    idle: Vec<Conn>,
    open: usize,
    waiting: usize,
}

struct Pool {
    database: String,
    state: Mutex<PoolState>,
    returned: Condvar,
}

/// One app: a node and a client pool per database on it.
pub struct App {
    // Before `node`: the connections close before the node stops.
    pools: Vec<Pool>,
    pool_of_model: Vec<usize>,
    max_open: usize,
    max_idle: usize,
    connects: AtomicU64,
    next_client: AtomicU64,
    /// The client's own time after each request (`client_us`; zero by default).
    client_cost: Duration,
    node: Node,
}

fn rows_i64(rows: &wire::Rows) -> Result<i64, WireError> {
    match rows.rows.first().and_then(|r| r.first()) {
        Some(Value::Int(n)) => Ok(*n),
        Some(Value::Null) => Ok(0),
        other => Err(WireError::Protocol(format!(
            "expected a number, got {other:?}"
        ))),
    }
}

impl App {
    /// Starts node `index` with its data in `dir` and creates the schema and units of
    /// `models` (indices) in its databases.
    #[allow(clippy::too_many_arguments)]
    pub fn start(
        index: usize,
        dir: &Path,
        bind: &Bind,
        databases: Databases,
        models: &[usize],
        units: usize,
        max_open: usize,
        max_idle: usize,
    ) -> Result<App, String> {
        let node = Node::start(index, dir, bind)?;
        let mut pools = Vec::new();
        let mut members: Vec<Vec<usize>> = Vec::new();
        let mut pool_of_model = Vec::new();
        for &m in models {
            let p = match databases {
                Databases::PerModel => pools.len(),
                Databases::PerApp => 0,
            };
            if p == pools.len() {
                pools.push(Pool {
                    database: match databases {
                        Databases::PerModel => db::model_name(m),
                        Databases::PerApp => format!("app-{index}"),
                    },
                    state: Mutex::new(PoolState::default()),
                    returned: Condvar::new(),
                });
                members.push(Vec::new());
            }
            members[p].push(m);
            if pool_of_model.len() <= m {
                pool_of_model.resize(m + 1, usize::MAX);
            }
            pool_of_model[m] = p;
        }
        let app = App {
            pools,
            pool_of_model,
            max_open,
            max_idle,
            connects: AtomicU64::new(0),
            next_client: AtomicU64::new(1),
            client_cost: Duration::ZERO,
            node,
        };
        for (p, mine) in members.iter().enumerate() {
            let mut conn = app
                .connect(p)
                .map_err(|e| format!("app {index}: connecting: {e}"))?;
            let mut sql = format!("BEGIN;{}", db::SCHEMA);
            for &m in mine {
                for u in 0..units {
                    sql.push_str(&format!(
                        "INSERT INTO units (model, name, agent_status, version) VALUES ('{}', '{}', 'idle', 0);",
                        db::model_name(m),
                        db::unit_name(u)
                    ));
                }
            }
            sql.push_str("COMMIT;");
            conn.client
                .exec_sql(conn.db, &sql, &[])
                .map_err(|e| format!("app {index}: creating {}: {e}", app.pools[p].database))?;
            app.pools[p].state.lock().open += 1;
            app.put(conn);
        }
        app.connects.store(0, Ordering::Relaxed);
        Ok(app)
    }

    /// The same app with its client spending `cost` after each request's answer, off the
    /// node (`client_us`): a slower client than ours (go-dqlite's driver and Go's
    /// `database/sql` over TCP, as Juju's is) holds each transaction, and the semaphore's
    /// permit, that much longer per statement. A sleep, not a spin: Go multiplexes its
    /// clients on a few threads, so 48 spinning threads here would starve the node in a way
    /// Juju's client does not.
    pub fn with_client_cost(mut self, cost: Duration) -> App {
        self.client_cost = cost;
        self
    }

    /// The node's address.
    pub fn address(&self) -> &str {
        self.node.address()
    }

    /// Client connections made since the schema was created.
    pub fn connects(&self) -> u64 {
        self.connects.load(Ordering::Relaxed)
    }

    fn connect(&self, pool: usize) -> Result<Conn, WireError> {
        let id = self.next_client.fetch_add(1, Ordering::Relaxed);
        let mut client = Client::connect(self.node.address(), id)?;
        let db = client.open(&self.pools[pool].database)?;
        self.connects.fetch_add(1, Ordering::Relaxed);
        Ok(Conn {
            client,
            db,
            pool,
            broken: false,
        })
    }

    /// Takes a connection to `model`'s database as Go's `database/sql` does: an idle one,
    /// else a new one while fewer than `max_open` are open, else waits for one to come
    /// back. Returns whether a new one was made.
    pub fn get(&self, ctx: &mut OpCtx, model: usize) -> Result<(Conn, bool), WireError> {
        let p = self.pool_of_model[model];
        let pool = &self.pools[p];
        let mut st = pool.state.lock();
        loop {
            if let Some(c) = st.idle.pop() {
                return Ok((c, false));
            }
            if st.open < self.max_open {
                st.open += 1;
                drop(st);
                let start = Instant::now();
                let made = self.connect(p);
                ctx.record_wait(start.elapsed());
                if made.is_err() {
                    pool.state.lock().open -= 1;
                    pool.returned.notify_one();
                }
                return made.map(|c| (c, true));
            }
            st.waiting += 1;
            let start = Instant::now();
            pool.returned.wait(&mut st);
            ctx.record_wait(start.elapsed());
            st.waiting -= 1;
        }
    }

    /// Returns a connection: kept idle when someone waits or fewer than `max_idle` are
    /// idle, closed otherwise (and always when it broke).
    pub fn put(&self, conn: Conn) {
        let pool = &self.pools[conn.pool];
        let mut st = pool.state.lock();
        if !conn.broken && (st.waiting > 0 || st.idle.len() < self.max_idle) {
            st.idle.push(conn);
            drop(st);
            pool.returned.notify_one();
        } else {
            st.open -= 1;
            drop(st);
            // A waiter may now open one of its own.
            pool.returned.notify_one();
            drop(conn);
        }
    }

    fn timed<T>(
        &self,
        ctx: &mut OpCtx,
        conn: &mut Conn,
        f: impl FnOnce(&mut Client, u32) -> Result<T, WireError>,
    ) -> Result<T, WireError> {
        let start = Instant::now();
        let r = f(&mut conn.client, conn.db);
        ctx.record_wait(start.elapsed());
        if matches!(r, Err(WireError::Io(_) | WireError::Protocol(_))) {
            conn.broken = true;
        }
        // The client's own time with the answer: not a wait on the node, so not recorded
        // as one.
        if !self.client_cost.is_zero() {
            std::thread::sleep(self.client_cost);
        }
        r
    }

    fn exec(
        &self,
        ctx: &mut OpCtx,
        conn: &mut Conn,
        sql: &str,
        v: &[Value],
    ) -> Result<(), WireError> {
        self.timed(ctx, conn, |c, db| c.exec_sql(db, sql, v))
            .map(drop)
    }

    fn query(
        &self,
        ctx: &mut OpCtx,
        conn: &mut Conn,
        sql: &str,
        v: &[Value],
    ) -> Result<wire::Rows, WireError> {
        self.timed(ctx, conn, |c, db| c.query_sql(db, sql, v))
    }

    fn finish<T>(
        &self,
        ctx: &mut OpCtx,
        conn: &mut Conn,
        body: Result<T, WireError>,
    ) -> Result<T, WireError> {
        match body {
            Ok(v) => self
                .exec(ctx, conn, "COMMIT", &[])
                .map(|()| v)
                .inspect_err(|_| {
                    let _ = self.exec(ctx, conn, "ROLLBACK", &[]);
                }),
            Err(e) => {
                // SQLite may have rolled back already; a failed ROLLBACK changes nothing.
                if !conn.broken {
                    let _ = self.exec(ctx, conn, "ROLLBACK", &[]);
                }
                Err(e)
            }
        }
    }

    /// The read transaction: BEGIN, the three SELECTs, COMMIT, a request each.
    pub fn read_txn(
        &self,
        ctx: &mut OpCtx,
        conn: &mut Conn,
        model: &str,
        unit: &str,
    ) -> Result<ReadResult, WireError> {
        self.exec(ctx, conn, "BEGIN", &[])?;
        let (m, u) = (Value::from(model), Value::from(unit));
        let body = (|| {
            let row = self.query(ctx, conn, db::SELECT_UNIT, &[m.clone(), u.clone()])?;
            let (status, version) = match row.rows.first().map(Vec::as_slice) {
                Some([Value::Text(s), Value::Int(v)]) => (s.clone(), *v),
                other => {
                    return Err(WireError::Protocol(format!("unit row: {other:?}")));
                }
            };
            let newest = self.query(ctx, conn, db::SELECT_NEWEST_EVENT, &[m.clone(), u])?;
            let count = self.query(ctx, conn, db::COUNT_UNITS, &[m])?;
            Ok(ReadResult {
                status,
                version,
                newest_event: rows_i64(&newest)?,
                units_in_model: rows_i64(&count)?,
            })
        })();
        self.finish(ctx, conn, body)
    }

    /// The write transaction: BEGIN, UPDATE, the version read back, the event, now and
    /// then the cull, COMMIT. Returns the new version.
    pub fn write_txn(
        &self,
        ctx: &mut OpCtx,
        conn: &mut Conn,
        model: &str,
        unit: &str,
        status: &str,
    ) -> Result<i64, WireError> {
        self.exec(ctx, conn, "BEGIN", &[])?;
        let (m, u, s) = (Value::from(model), Value::from(unit), Value::from(status));
        let body = (|| {
            self.exec(ctx, conn, UPDATE_UNIT, &[m.clone(), u.clone(), s.clone()])?;
            let version =
                rows_i64(&self.query(ctx, conn, SELECT_VERSION, &[m.clone(), u.clone()])?)?;
            let event = [m.clone(), u.clone(), Value::Int(version), s];
            self.exec(ctx, conn, db::INSERT_EVENT, &event)?;
            if version % db::CULL_EVERY == 0 {
                let cull = [m, u, Value::Int(version - db::EVENTS_KEPT)];
                self.exec(ctx, conn, db::CULL_EVENTS, &cull)?;
            }
            Ok(version)
        })();
        self.finish(ctx, conn, body)
    }

    /// Runs `sql` on `model`'s database outside any transaction the workload knows of
    /// (tests use it to tamper with what is stored).
    pub fn execute(&self, model: usize, sql: &str) -> Result<(), WireError> {
        let mut conn = self.connect(self.pool_of_model[model])?;
        conn.client.exec_sql(conn.db, sql, &[]).map(drop)
    }

    /// What every database holds, read through the node on fresh connections: the unit
    /// rows (model, unit, version, agent status) and the payloads of every event.
    pub fn stored(&self) -> Result<crate::db::Stored, String> {
        let mut stored = crate::db::Stored::default();
        let (units, payloads) = (&mut stored.units, &mut stored.payloads);
        for p in 0..self.pools.len() {
            let name = &self.pools[p].database;
            let read = |conn: &mut Conn| -> Result<_, WireError> {
                let u = conn.client.query_sql(
                    conn.db,
                    "SELECT model, name, version, agent_status FROM units",
                    &[],
                )?;
                let e = conn
                    .client
                    .query_sql(conn.db, "SELECT payload FROM events", &[])?;
                Ok((u, e))
            };
            let (u, e) = self
                .connect(p)
                .and_then(|mut c| read(&mut c))
                .map_err(|e| format!("reading {name} through the node: {e}"))?;
            for row in u.rows {
                match row.as_slice() {
                    [Value::Text(m), Value::Text(n), Value::Int(v), Value::Text(s)] => {
                        units.push((m.clone(), n.clone(), *v, s.clone()))
                    }
                    other => return Err(format!("{name}: unexpected unit row {other:?}")),
                }
            }
            payloads.extend(
                e.rows
                    .into_iter()
                    .filter_map(|r| match r.into_iter().next() {
                        Some(Value::Text(s)) => Some(s),
                        _ => None,
                    }),
            );
        }
        Ok(stored)
    }
}

/// A wire error as the runner's error type: a node's failure keeps dqlite's SQLite code
/// (so [`crate::db::is_busy`] sees busy as busy); connection trouble becomes an I/O error.
pub fn to_sqlite(e: WireError) -> rusqlite::Error {
    let (code, message) = match e {
        WireError::Sqlite { code, message } => (code as i32, message),
        other => (rusqlite::ffi::SQLITE_IOERR, other.to_string()),
    };
    rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(code), Some(message))
}

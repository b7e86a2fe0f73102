//! A dqlite-like serving path (`backend=dqlite`): what the seed's controller talked to.
//!
//! This is not Raft and not dqlite's wire protocol. It keeps the mechanisms that decide
//! throughput in dqlite, each done for real rather than as a formula:
//!
//! - **One serving thread per app.** dqlite's leader runs every client connection's
//!   statements on one event-loop thread, in arrival order. Here each app is a named
//!   thread (`dqlite-app-N`) that owns real SQLite connections, one per client connection,
//!   and executes each request to completion before the next.
//! - **A round trip per statement.** `BEGIN`, every statement and `COMMIT` are separate
//!   requests; the client sleeps `rtt_us` per request (the network, both ways) and then
//!   waits its turn on the serving thread, which spends `serve_us` on each request before
//!   running its SQL (decoding, the VFS, the event loop: dqlite's own CPU cost per
//!   request, spent as a busy loop so that a queue of requests is served back to back
//!   as a loop thread does, with no wake-up between them). Sleeps here run with a 1 µs timer slack so that short ones are not stretched
//!   by the kernel's default 50 µs.
//! - **Writes commit through Raft.** A write's `COMMIT` is held for `commit_us` (replication
//!   to a quorum plus its disk sync) before SQLite commits it. The serving thread goes on
//!   serving others meanwhile, but the write lock stays held, as dqlite's does until the
//!   entry is applied.
//! - **SQLITE_BUSY comes back at once.** The serving thread cannot block, so its
//!   connections have no busy timeout: a write that finds the lock held fails at once and
//!   the caller rolls back and retries (the seed's runner: backoff from 1 ms to 100 ms).
//! - **Connections cost something to make.** The client pool behaves like Go's
//!   `database/sql`: at most `pool_size` open, at most `idle_conns` kept idle (Go's
//!   default is 2), the rest closed when returned. A new connection costs
//!   [`CONNECT_ROUND_TRIPS`] requests (handshake, leader lookup, open the database, the
//!   last a real SQLite open) on the serving thread; closing one costs a request and a real
//!   close there too.
//!
//! Why many connections can lose to two, with nothing else forced: every open
//! transaction stretches while it queues behind the others' statements, so a write holds
//! the lock longer and more writes meet it busy; each busy attempt has already spent the
//! serving thread's time and is spent again on retry; and past `idle_conns` concurrent
//! transactions the pool keeps closing and reopening connections on that same thread.
//!
//! Here: the client side (the pool, transactions as requests); the serving thread is in
//! `serving`.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use harness::OpCtx;
use parking_lot::{Condvar, Mutex};
use rusqlite::Connection;

use crate::db::{self, DbSettings, ReadResult};

mod serving;

use serving::{fine_timer_slack, serve, Request, Row};

/// Requests a new client connection costs before its first statement: the protocol
/// handshake, asking who the leader is, opening the database (go-dqlite's connector).
pub const CONNECT_ROUND_TRIPS: u32 = 3;

/// How an app is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppConfig {
    /// Round trip per request.
    pub rtt: Duration,
    /// Serving-thread time per request before its SQL runs.
    pub serve: Duration,
    /// Extra time a write's commit holds the write lock (Raft replication and sync).
    pub commit: Duration,
    /// Most open client connections.
    pub max_open: usize,
    /// Most idle client connections kept; more are closed when returned.
    pub max_idle: usize,
}

#[derive(Debug, Default)]
struct PoolState {
    idle: Vec<u64>,
    open: usize,
    waiting: usize,
}

/// One app: its serving thread and the client side's connection pool.
pub struct DqliteApp {
    config: AppConfig,
    requests: Mutex<Option<mpsc::Sender<Request>>>,
    server: Option<JoinHandle<()>>,
    pool: Mutex<PoolState>,
    returned: Condvar,
    connects: AtomicU64,
}

/// A client connection borrowed from the app's pool.
#[derive(Debug)]
pub struct ClientConn(u64);

impl DqliteApp {
    /// Starts app `index` serving the database at `path`.
    pub fn start(
        index: usize,
        path: &Path,
        settings: DbSettings,
        config: AppConfig,
    ) -> Result<DqliteApp, String> {
        let (tx, rx) = mpsc::channel();
        let path = path.to_path_buf();
        let (serve_cost, commit) = (config.serve, config.commit);
        let server = std::thread::Builder::new()
            .name(format!("dqlite-app-{index}"))
            .spawn(move || serve(path, settings, serve_cost, commit, rx))
            .map_err(|e| format!("starting dqlite-app-{index}: {e}"))?;
        Ok(DqliteApp {
            config,
            requests: Mutex::new(Some(tx)),
            server: Some(server),
            pool: Mutex::new(PoolState::default()),
            returned: Condvar::new(),
            connects: AtomicU64::new(0),
        })
    }

    /// Client connections opened since the start.
    pub fn connects(&self) -> u64 {
        self.connects.load(Ordering::Relaxed)
    }

    fn send(&self, request: Request) {
        if let Some(tx) = self.requests.lock().as_ref() {
            let _ = tx.send(request);
        }
    }

    /// One request: the round trip, then the turn on the serving thread. All of it is time
    /// the caller is blocked on the database, so it is recorded as waiting.
    fn call<T>(&self, ctx: &mut OpCtx, make: impl FnOnce(mpsc::Sender<T>) -> Request) -> Option<T> {
        fine_timer_slack();
        let start = Instant::now();
        if !self.config.rtt.is_zero() {
            std::thread::sleep(self.config.rtt);
        }
        let (tx, rx) = mpsc::channel();
        self.send(make(tx));
        let answer = rx.recv().ok();
        ctx.record_wait(start.elapsed());
        answer
    }

    fn exec(
        &self,
        ctx: &mut OpCtx,
        conn: &ClientConn,
        stmt: impl FnOnce(&Connection) -> rusqlite::Result<Row> + Send + 'static,
    ) -> rusqlite::Result<Row> {
        let id = conn.0;
        self.call(ctx, |reply| Request::Exec {
            conn: id,
            stmt: Box::new(stmt),
            reply,
        })
        .unwrap_or(Err(rusqlite::Error::InvalidQuery))
    }

    fn commit(&self, ctx: &mut OpCtx, conn: &ClientConn, replicate: bool) -> rusqlite::Result<()> {
        let id = conn.0;
        self.call(ctx, |reply| Request::Commit {
            conn: id,
            replicate,
            reply,
        })
        .unwrap_or(Err(rusqlite::Error::InvalidQuery))
        .map(drop)
    }

    fn rollback(&self, ctx: &mut OpCtx, conn: &ClientConn) {
        let _ = self.exec(ctx, conn, |c| {
            if !c.is_autocommit() {
                c.execute_batch("ROLLBACK")?;
            }
            Ok(Row::None)
        });
    }

    /// Takes a connection as Go's `database/sql` does: an idle one, else a new one while
    /// fewer than `max_open` are open, else waits for one to come back. Returns whether
    /// a new one was made.
    pub fn get(&self, ctx: &mut OpCtx) -> Result<(ClientConn, bool), String> {
        let mut st = self.pool.lock();
        loop {
            if let Some(id) = st.idle.pop() {
                return Ok((ClientConn(id), false));
            }
            if st.open < self.config.max_open {
                st.open += 1;
                drop(st);
                let made = self.connect(ctx);
                if made.is_err() {
                    self.pool.lock().open -= 1;
                    self.returned.notify_one();
                }
                return made.map(|c| (c, true));
            }
            st.waiting += 1;
            let start = Instant::now();
            self.returned.wait(&mut st);
            ctx.record_wait(start.elapsed());
            st.waiting -= 1;
        }
    }

    fn connect(&self, ctx: &mut OpCtx) -> Result<ClientConn, String> {
        for _ in 1..CONNECT_ROUND_TRIPS {
            self.call(ctx, |reply| Request::Hello { reply })
                .ok_or_else(|| "the serving thread stopped".to_owned())?;
        }
        self.connects.fetch_add(1, Ordering::Relaxed);
        self.call(ctx, |reply| Request::Open { reply })
            .unwrap_or_else(|| Err("the serving thread stopped".to_owned()))
            .map(ClientConn)
    }

    /// Returns a connection: kept idle when someone waits or fewer than `max_idle` are
    /// idle, closed otherwise.
    pub fn put(&self, conn: ClientConn) {
        let mut st = self.pool.lock();
        if st.waiting > 0 || st.idle.len() < self.config.max_idle {
            st.idle.push(conn.0);
            drop(st);
            self.returned.notify_one();
        } else {
            st.open -= 1;
            drop(st);
            self.send(Request::Close { conn: conn.0 });
        }
    }

    /// The read transaction, one request per statement.
    pub fn read_txn(
        &self,
        ctx: &mut OpCtx,
        conn: &ClientConn,
        model: &str,
        unit: &str,
    ) -> rusqlite::Result<ReadResult> {
        self.exec(ctx, conn, |c| c.execute_batch("BEGIN").map(|_| Row::None))?;
        let result = self.read_statements(ctx, conn, model, unit);
        match result {
            Ok(r) => {
                self.commit(ctx, conn, false)?;
                Ok(r)
            }
            Err(e) => {
                self.rollback(ctx, conn);
                Err(e)
            }
        }
    }

    fn read_statements(
        &self,
        ctx: &mut OpCtx,
        conn: &ClientConn,
        model: &str,
        unit: &str,
    ) -> rusqlite::Result<ReadResult> {
        let (m, u) = (model.to_owned(), unit.to_owned());
        let Row::StatusVersion(status, version) = self.exec(ctx, conn, move |c| {
            c.prepare_cached(db::SELECT_UNIT)?
                .query_row(rusqlite::params![m, u], |r| {
                    Ok(Row::StatusVersion(r.get(0)?, r.get(1)?))
                })
        })?
        else {
            unreachable!("a unit row")
        };
        let (m, u) = (model.to_owned(), unit.to_owned());
        let Row::Int(newest_event) = self.exec(ctx, conn, move |c| {
            c.prepare_cached(db::SELECT_NEWEST_EVENT)?
                .query_row(rusqlite::params![m, u], |r| {
                    Ok(Row::Int(r.get::<_, Option<i64>>(0)?.unwrap_or(0)))
                })
        })?
        else {
            unreachable!("a count")
        };
        let m = model.to_owned();
        let Row::Int(units_in_model) = self.exec(ctx, conn, move |c| {
            c.prepare_cached(db::COUNT_UNITS)?
                .query_row(rusqlite::params![m], |r| Ok(Row::Int(r.get(0)?)))
        })?
        else {
            unreachable!("a count")
        };
        Ok(ReadResult {
            status,
            version,
            newest_event,
            units_in_model,
        })
    }

    /// The write transaction, one request per statement, committed through "Raft".
    /// A busy error rolls back and comes back at once.
    pub fn write_txn(
        &self,
        ctx: &mut OpCtx,
        conn: &ClientConn,
        model: &str,
        unit: &str,
        status: &str,
    ) -> rusqlite::Result<i64> {
        self.exec(ctx, conn, |c| c.execute_batch("BEGIN").map(|_| Row::None))?;
        let written = self
            .write_statements(ctx, conn, model, unit, status)
            .and_then(|version| self.commit(ctx, conn, true).map(|()| version));
        if written.is_err() {
            self.rollback(ctx, conn);
        }
        written
    }

    fn write_statements(
        &self,
        ctx: &mut OpCtx,
        conn: &ClientConn,
        model: &str,
        unit: &str,
        status: &str,
    ) -> rusqlite::Result<i64> {
        let (m, u, s) = (model.to_owned(), unit.to_owned(), status.to_owned());
        let Row::Int(version) = self.exec(ctx, conn, move |c| {
            c.prepare_cached(db::UPDATE_UNIT)?
                .query_row(rusqlite::params![m, u, s], |r| Ok(Row::Int(r.get(0)?)))
        })?
        else {
            unreachable!("a version")
        };
        let (m, u, s) = (model.to_owned(), unit.to_owned(), status.to_owned());
        self.exec(ctx, conn, move |c| {
            c.prepare_cached(db::INSERT_EVENT)?
                .execute(rusqlite::params![m, u, version, s])
                .map(|_| Row::None)
        })?;
        if version % db::CULL_EVERY == 0 {
            let (m, u) = (model.to_owned(), unit.to_owned());
            self.exec(ctx, conn, move |c| {
                c.prepare_cached(db::CULL_EVENTS)?
                    .execute(rusqlite::params![m, u, version - db::EVENTS_KEPT])
                    .map(|_| Row::None)
            })?;
        }
        Ok(version)
    }
}

impl Drop for DqliteApp {
    fn drop(&mut self) {
        let idle: Vec<u64> = std::mem::take(&mut self.pool.lock().idle);
        for id in idle {
            self.send(Request::Close { conn: id });
        }
        // Hanging up the channel ends the serving thread once it has drained it.
        self.requests.lock().take();
        if let Some(h) = self.server.take() {
            let _ = h.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn app(dir: &Path, max_open: usize, max_idle: usize, commit_ms: u64) -> DqliteApp {
        let settings = DbSettings {
            journal_mode: "wal",
            synchronous: "normal",
        };
        let path = dir.join("app.db");
        let mut conn = db::open(&path, settings).unwrap();
        db::create(&mut conn, &[1], 2).unwrap();
        DqliteApp::start(
            0,
            &path,
            settings,
            AppConfig {
                rtt: Duration::from_micros(10),
                serve: Duration::from_micros(5),
                commit: Duration::from_millis(commit_ms),
                max_open,
                max_idle,
            },
        )
        .unwrap()
    }

    #[test]
    fn writes_commit_and_reads_see_them_whole() {
        let dir = tempfile::tempdir().unwrap();
        let app = app(dir.path(), 2, 2, 1);
        let mut ctx = OpCtx::default();
        let (c, new) = app.get(&mut ctx).unwrap();
        assert!(new);
        for n in 1..=11 {
            let v = app
                .write_txn(&mut ctx, &c, "model-0001", "unit/1", &format!("s{n}"))
                .unwrap();
            assert_eq!(v, n);
        }
        let r = app.read_txn(&mut ctx, &c, "model-0001", "unit/1").unwrap();
        assert_eq!(
            (r.status.as_str(), r.version, r.newest_event),
            ("s11", 11, 11)
        );
        app.put(c);
        assert!(ctx.waited() > Duration::ZERO, "round trips are waits");
    }

    #[test]
    fn a_write_meeting_a_replicating_write_gets_busy_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let app = std::sync::Arc::new(app(dir.path(), 2, 2, 300));
        let mut ctx = OpCtx::default();
        let (a, _) = app.get(&mut ctx).unwrap();
        let (b, _) = app.get(&mut ctx).unwrap();
        let slow = {
            let app = std::sync::Arc::clone(&app);
            std::thread::spawn(move || {
                let mut ctx = OpCtx::default();
                let r = app.write_txn(&mut ctx, &a, "model-0001", "unit/0", "first");
                (r, a)
            })
        };
        std::thread::sleep(Duration::from_millis(100));
        let start = Instant::now();
        let err = app
            .write_txn(&mut ctx, &b, "model-0001", "unit/1", "second")
            .unwrap_err();
        assert!(db::is_busy(&err), "{err}");
        assert!(
            start.elapsed() < Duration::from_millis(150),
            "busy came back at once, not after the commit"
        );
        let (r, a) = slow.join().unwrap();
        assert_eq!(r.unwrap(), 1);
        assert_eq!(
            app.write_txn(&mut ctx, &b, "model-0001", "unit/1", "third")
                .unwrap(),
            1
        );
        app.put(a);
        app.put(b);
    }

    #[test]
    fn the_pool_closes_connections_beyond_its_idle_cap() {
        let dir = tempfile::tempdir().unwrap();
        let app = app(dir.path(), 4, 1, 0);
        let mut ctx = OpCtx::default();
        let (a, _) = app.get(&mut ctx).unwrap();
        let (b, _) = app.get(&mut ctx).unwrap();
        app.put(a);
        app.put(b);
        assert_eq!(app.pool.lock().idle.len(), 1);
        assert_eq!(app.pool.lock().open, 1);
        let (c, new) = app.get(&mut ctx).unwrap();
        assert!(!new, "the idle one is reused");
        let (d, new) = app.get(&mut ctx).unwrap();
        assert!(new, "the closed one is made again");
        assert_eq!(app.connects(), 3);
        app.put(c);
        app.put(d);
    }
}

//! The three pools Rust users pick for PostgreSQL, behind one trait: deadpool-postgres
//! and bb8-postgres (async, over tokio-postgres) and r2d2_postgres (sync, over the
//! `postgres` crate), no TLS. Each request asks for a connection the way the harness
//! times every other hot path's waits: first without waiting (r2d2's `try_get`; the
//! async pools' `get` polled once), and only when no connection is idle does what
//! follows count as the wait (r2d2's `get` with the pool's timeout; the same `get`
//! awaited to its end).
//!
//! Fairness: every pool holds `connections` connections, opened before the window (r2d2
//! and bb8 open `min_idle` when built, deadpool is made to), checks nothing on checkout
//! (r2d2 and bb8 would otherwise ping the server on each one by default, deadpool does
//! not: `RecyclingMethod::Fast`), and runs the same statement text ([`super::statement`]).
//!
//! The async pools run on one multi-thread tokio runtime per cell, and each of the lab's
//! client threads drives its request with `block_on` on it. That is what a user with
//! thread-per-request code (the lab's clients) does with an async pool, and it keeps
//! `threads` the number of requests in flight for all three pools alike, where tasks
//! would add the runtime's scheduling as a second pool in front of the first; the
//! runtime's workers (as many as the clients' CPUs, tokio's default) carry the
//! connections' I/O tasks, as they would in a server built on it. r2d2's connections
//! are the `postgres` crate's sync clients, each driving its own current-thread runtime
//! on the client thread that holds it: no thread beside the clients.

use std::future::Future;
use std::task::Poll;
use std::time::{Duration, Instant};

use tokio_postgres::NoTls;

use super::statement::{run_async, run_sync, Rows, Statement};
use super::timing::Timing;

/// How a request that got no answer ended.
#[derive(Debug)]
pub enum Failed {
    /// No connection within the pool's timeout; the times up to giving up.
    TimedOut(Timing),
    /// The pool or the statement failed; the error.
    Error(String),
}

/// A real pool of connections to PostgreSQL.
pub trait RealPool: Send + Sync {
    /// Runs `statement` on a connection from the pool and returns the connection; the
    /// instants of the request and the rows the server answered.
    fn request(&self, statement: Statement) -> Result<(Timing, Rows), Failed>;
    /// Connections idle in the pool now.
    fn idle(&self) -> usize;
}

/// What every pool is built with.
#[derive(Debug, Clone)]
pub struct PoolConfig {
    /// The server (libpq `key=value` or a `postgresql://` URL).
    pub url: String,
    /// Connections in the pool.
    pub connections: u32,
    /// How long a request waits for a connection before it fails.
    pub timeout: Duration,
}

fn pg_config(url: &str) -> Result<tokio_postgres::Config, String> {
    url.parse().map_err(|e| {
        format!(
            "postgres_url={url:?}: {e}; accepted a libpq key=value string or a postgresql:// URL"
        )
    })
}

/// The cell's runtime for the async pools (see the module's comment for why one, shared).
fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("a tokio runtime: {e}"))
}

/// A request's instants, read as the adapters go.
struct Clock {
    start: Instant,
    waited_from: Option<Instant>,
}

impl Clock {
    fn start() -> Clock {
        Clock {
            start: Instant::now(),
            waited_from: None,
        }
    }
    fn waiting(&mut self) {
        self.waited_from = Some(Instant::now());
    }
    fn timing(&self, got: Instant, end: Instant) -> Timing {
        Timing {
            start: self.start,
            waited_from: self.waited_from,
            got,
            end,
        }
    }
    fn timed_out(&self) -> Failed {
        let now = Instant::now();
        Failed::TimedOut(self.timing(now, now))
    }
}

/// Awaits an async pool's `get`, timing as the wait what follows a first poll that found
/// no idle connection: one get, as a user writes it, that keeps its place in the pool's
/// queue. (A zero timeout would not do: tokio's timer rounds it up to its millisecond
/// tick, and a connection handed over within it would count as no wait.)
async fn first_poll<F: Future>(get: F, clock: &mut Clock) -> F::Output {
    let mut get = std::pin::pin!(get);
    match std::future::poll_fn(|cx| Poll::Ready(get.as_mut().poll(cx))).await {
        Poll::Ready(out) => out,
        Poll::Pending => {
            clock.waiting();
            get.await
        }
    }
}

/// deadpool-postgres.
pub struct Deadpool {
    // Dropped before the runtime its connections' tasks run on.
    pool: deadpool_postgres::Pool,
    runtime: tokio::runtime::Runtime,
}

impl Deadpool {
    /// A pool of `config.connections` open connections.
    pub fn new(config: &PoolConfig) -> Result<Deadpool, String> {
        let runtime = runtime()?;
        let manager = deadpool_postgres::Manager::from_config(
            pg_config(&config.url)?,
            NoTls,
            deadpool_postgres::ManagerConfig {
                recycling_method: deadpool_postgres::RecyclingMethod::Fast,
            },
        );
        let pool = deadpool_postgres::Pool::builder(manager)
            .max_size(config.connections as usize)
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .wait_timeout(Some(config.timeout))
            .create_timeout(Some(config.timeout))
            .build()
            .map_err(|e| format!("deadpool: {e}"))?;
        // deadpool opens connections when first asked: open them all now, held at once.
        runtime.block_on(async {
            let mut held = Vec::new();
            for _ in 0..config.connections {
                held.push(pool.get().await.map_err(|e| format!("deadpool: {e}"))?);
            }
            Ok::<_, String>(())
        })?;
        Ok(Deadpool { pool, runtime })
    }
}

impl RealPool for Deadpool {
    fn request(&self, statement: Statement) -> Result<(Timing, Rows), Failed> {
        use deadpool_postgres::PoolError;
        self.runtime.block_on(async {
            let mut clock = Clock::start();
            let conn = match first_poll(self.pool.get(), &mut clock).await {
                Ok(conn) => conn,
                Err(PoolError::Timeout(_)) => return Err(clock.timed_out()),
                Err(e) => return Err(Failed::Error(format!("deadpool: {e}"))),
            };
            let got = Instant::now();
            let rows = run_async(&conn, statement).await.map_err(Failed::Error)?;
            drop(conn);
            Ok((clock.timing(got, Instant::now()), rows))
        })
    }
    fn idle(&self) -> usize {
        self.pool.status().available
    }
}

type Bb8Manager = bb8_postgres::PostgresConnectionManager<NoTls>;

/// bb8-postgres.
pub struct Bb8 {
    pool: bb8::Pool<Bb8Manager>,
    runtime: tokio::runtime::Runtime,
}

impl Bb8 {
    /// A pool of `config.connections` open connections.
    pub fn new(config: &PoolConfig) -> Result<Bb8, String> {
        let runtime = runtime()?;
        let manager = Bb8Manager::new(pg_config(&config.url)?, NoTls);
        let pool = runtime
            .block_on(
                bb8::Pool::builder()
                    .max_size(config.connections)
                    .min_idle(Some(config.connections))
                    .test_on_check_out(false)
                    .connection_timeout(config.timeout)
                    .build(manager),
            )
            .map_err(|e| format!("bb8: {e}"))?;
        Ok(Bb8 { pool, runtime })
    }
}

impl RealPool for Bb8 {
    fn request(&self, statement: Statement) -> Result<(Timing, Rows), Failed> {
        use bb8::RunError;
        self.runtime.block_on(async {
            let mut clock = Clock::start();
            let conn = match first_poll(self.pool.get(), &mut clock).await {
                Ok(conn) => conn,
                Err(RunError::TimedOut) => return Err(clock.timed_out()),
                Err(e) => return Err(Failed::Error(format!("bb8: {e}"))),
            };
            let got = Instant::now();
            let rows = run_async(&conn, statement).await.map_err(Failed::Error)?;
            drop(conn);
            Ok((clock.timing(got, Instant::now()), rows))
        })
    }
    fn idle(&self) -> usize {
        self.pool.state().idle_connections as usize
    }
}

type R2d2Manager = r2d2_postgres::PostgresConnectionManager<NoTls>;

/// r2d2_postgres.
pub struct R2d2Postgres {
    pool: r2d2::Pool<R2d2Manager>,
}

impl R2d2Postgres {
    /// A pool of `config.connections` open connections.
    pub fn new(config: &PoolConfig) -> Result<R2d2Postgres, String> {
        let pg: postgres::Config = config
            .url
            .parse()
            .map_err(|e| format!("postgres_url={:?}: {e}", config.url))?;
        let pool = r2d2::Pool::builder()
            .max_size(config.connections)
            .min_idle(Some(config.connections))
            .test_on_check_out(false)
            .connection_timeout(config.timeout)
            .build(R2d2Manager::new(pg, NoTls))
            .map_err(|e| format!("r2d2: {e}"))?;
        Ok(R2d2Postgres { pool })
    }
}

impl RealPool for R2d2Postgres {
    fn request(&self, statement: Statement) -> Result<(Timing, Rows), Failed> {
        let mut clock = Clock::start();
        let mut conn = match self.pool.try_get() {
            Some(conn) => conn,
            None => {
                clock.waiting();
                // r2d2's only error is the timeout (quoting any connect error before it).
                match self.pool.get() {
                    Ok(conn) => conn,
                    Err(_) => return Err(clock.timed_out()),
                }
            }
        };
        let got = Instant::now();
        let rows = run_sync(&mut conn, statement).map_err(Failed::Error)?;
        drop(conn);
        Ok((clock.timing(got, Instant::now()), rows))
    }
    fn idle(&self) -> usize {
        self.pool.state().idle_connections as usize
    }
}

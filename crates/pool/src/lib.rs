//! Hot path 3: pooled connection acquisition (the client-driver plateau).
//!
//! The seed: a database driver defaulted to one connection per host with at most 1024
//! requests in flight on it; a load test plateaued between 1000 and 2000 clients with
//! threads waiting in the pool's "await available connection" while CPU stayed mostly
//! idle. Allowing 10 connections x 5000 requests restored linear scaling until CPU ran
//! out. [`pools`] holds four real pool designs, [`workload`] the closed-loop clients (one
//! OS thread each, so `threads` is the number of clients) and the simulated host, whose
//! CPU ([`server`]: `server_cores` virtual cores, `cpu_us` per request and
//! `cpu_per_point_ns` per datapoint, stretched by garbage collection as `heap_points`
//! fills) is a limit of its own next to the pool's. With `statement_points` a request
//! goes out as several statements at once, each on its own lease, as the seed's server
//! wrote each metric of a request as a statement of its own.
//!
//! With `server=postgres` the variants `deadpool`, `bb8` and `r2d2-postgres` ([`real`])
//! lend real connections to a real PostgreSQL instead, each request a real statement,
//! and report what acquiring a connection costs beside it (`acquire_share`).
//!
//! Why statements and a heap: the seed's fix gained nothing at one datapoint per request,
//! most at 100, less at 5000. With one lease per request and costs linear in the batch,
//! the gain is a ratio of two functions of the form (a + b x batch) / (c + d x batch),
//! monotonic in the batch, so it cannot peak in the middle. The seed's server (Hawkular
//! Metrics, June 2016) wrote each metric of a request as a statement of its own, all at
//! once, so a bigger request asks for more of the default's 1024 slots; and it held the
//! parsed requests in a 2 GB heap, which at 5000 datapoints per request and 1000 clients
//! is a quarter full, so that collection takes CPU from the fix, which the CPU limits,
//! and not from the default, which the pool limits (`benches/pool-seed-batch.toml`).
//!
//! Figures in `extra`: `datapoints_per_sec` (answered statements only), `wait_p50_ns`,
//! `wait_p99_ns`, `timeouts`; with a service time `pool_load`, `littles_law_ceiling`,
//! `ceiling_ratio`, `client_ceiling`, `server_util`, `server_ceiling`, `gc_share` (with a
//! heap limit) and `bound_by` (`server`, `pool` or `clients`); with statements
//! `statements_per_request`, `requests_per_sec` and `most_in_flight_per_client`;
//! acquisition-only cells `ns_per_cycle` (each client's time per acquire + release,
//! harness work included: see `noop`).

mod client;
mod figures;
pub mod findings;
pub mod pools;
pub mod real;
pub mod request;
pub mod server;
pub mod workload;

use std::sync::Arc;
use std::time::Duration;

use harness::hotpath::Description;
use harness::{
    CellFailure, HotPath, Measurement, ParamKind, ParamSpec, Params, RunSettings, Variant,
};

use crate::pools::{DriverV3, LockFreeBag, Pool, R2d2Pool, SemaphorePool};
use crate::workload::{PoolWorkload, RequestShape};

/// The pool hot path as `lab` sees it.
pub struct PoolHotPath;

/// The seed's driver: least-loaded connection, waiters on a lock's condition.
pub const DRIVER_V3: Variant = Variant {
    name: "driver-v3",
    summary: "least-loaded connection, in-flight limit, waiters on a lock's condition (the seed's driver)",
    measure: |p, s| measure(p, s, |s| Ok(DriverV3::new(s.connections, s.max_requests))),
};

/// One semaphore of leases in front of the connections.
pub const SEMAPHORE: Variant = Variant {
    name: "semaphore",
    summary: "one semaphore of connections x max_requests permits, then any connection with room",
    measure: |p, s| {
        measure(p, s, |s| {
            Ok(SemaphorePool::new(s.connections, s.max_requests))
        })
    },
};

/// A lock-free bag of slots.
pub const LOCK_FREE: Variant = Variant {
    name: "lock-free",
    summary:
        "a bag of slots with per-client affinity and a hand-off queue; no lock on the fast path",
    measure: |p, s| {
        measure(p, s, |s| {
            Ok(LockFreeBag::new(s.connections, s.max_requests))
        })
    },
};

/// The r2d2 crate's pool.
pub const R2D2: Variant = Variant {
    name: "r2d2",
    summary: "the r2d2 crate: one exclusive connection per request",
    measure: |p, s| measure(p, s, |s| R2d2Pool::new(s.connections, s.max_requests)),
};

/// The pool designs, one per variant: the designs on the simulated server, then the real
/// pools ([`real`]). [`Design::entry`] is each one's registry entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Design {
    /// [`DRIVER_V3`], the seed's driver.
    DriverV3,
    /// [`SEMAPHORE`].
    Semaphore,
    /// [`LOCK_FREE`].
    LockFree,
    /// [`R2D2`] on the simulated server.
    R2d2,
    /// [`real::DEADPOOL`] against PostgreSQL.
    Deadpool,
    /// [`real::BB8`] against PostgreSQL.
    Bb8,
    /// [`real::R2D2_POSTGRES`] against PostgreSQL.
    R2d2Postgres,
}

impl Design {
    /// Its registry entry (each a `const` of its own, for the modules that name one).
    pub const fn entry(self) -> Variant {
        match self {
            Design::DriverV3 => DRIVER_V3,
            Design::Semaphore => SEMAPHORE,
            Design::LockFree => LOCK_FREE,
            Design::R2d2 => R2D2,
            Design::Deadpool => real::DEADPOOL,
            Design::Bb8 => real::BB8,
            Design::R2d2Postgres => real::R2D2_POSTGRES,
        }
    }
}

harness::variant_registry!(VARIANTS = "pool" Design [
    DriverV3,
    Semaphore,
    LockFree,
    R2d2,
    Deadpool,
    Bb8,
    R2d2Postgres,
]);

/// The `server` values: the simulated host, or a real PostgreSQL for the real pools.
const SERVERS: &[&str] = &["simulated", real::SERVER];

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "server",
        kind: ParamKind::Choice(SERVERS),
        default: "simulated",
        help: "simulated: the designs against the simulated host (the service-time parameters); postgres: the real pools (deadpool, bb8, r2d2-postgres) against a real PostgreSQL",
    },
    ParamSpec {
        name: "connections",
        kind: ParamKind::Int { min: 1, max: 1000 },
        default: "1",
        help: "connections per host (the driver's default 1; the fix 10)",
    },
    ParamSpec {
        name: "max_requests",
        kind: ParamKind::Int {
            min: 1,
            max: 100_000,
        },
        default: "1024",
        help: "requests in flight per connection (the default 1024; the fix 5000)",
    },
    ParamSpec {
        name: "batch",
        kind: ParamKind::Int {
            min: 1,
            max: 1_000_000,
        },
        default: "1",
        help: "datapoints per request",
    },
    ParamSpec {
        name: "statement_points",
        kind: ParamKind::Int {
            min: 0,
            max: 1_000_000,
        },
        default: "0",
        help: "datapoints per statement: a request becomes ceil(batch / statement_points) statements sent at once, each on a lease of its own, after the server spends cpu_us parsing it; 0: a request is one statement, cpu_us spent holding its lease (the seed's server wrote a statement per metric: 1)",
    },
    ParamSpec {
        name: "heap_points",
        kind: ParamKind::Int {
            min: 0,
            max: 1_000_000_000_000,
        },
        default: "0",
        help: "the server's heap, in datapoints: requests held there (from arrival to answer) make garbage collection stretch its CPU work by heap / (heap - held); 0: no limit",
    },
    ParamSpec {
        name: "base_us",
        kind: ParamKind::Int {
            min: 0,
            max: 10_000_000,
        },
        default: "20000",
        help: "host latency per statement that uses no server CPU (network, storage), microseconds (0 with every other cost 0: acquisition only)",
    },
    ParamSpec {
        name: "per_point_ns",
        kind: ParamKind::Int {
            min: 0,
            max: 1_000_000_000,
        },
        default: "2000",
        help: "host latency per datapoint that uses no server CPU, nanoseconds",
    },
    ParamSpec {
        name: "server_cores",
        kind: ParamKind::Int { min: 1, max: 4096 },
        default: "24",
        help: "the simulated server's cores (virtual: its CPU is simulated, not this machine's)",
    },
    ParamSpec {
        name: "cpu_us",
        kind: ParamKind::Int {
            min: 0,
            max: 10_000_000,
        },
        default: "500",
        help: "server CPU per request, microseconds",
    },
    ParamSpec {
        name: "cpu_per_point_ns",
        kind: ParamKind::Int {
            min: 0,
            max: 1_000_000_000,
        },
        default: "150",
        help: "server CPU per datapoint, nanoseconds",
    },
    ParamSpec {
        name: "pool_timeout_ms",
        kind: ParamKind::Int {
            min: 1,
            max: 600_000,
        },
        default: "5000",
        help: "how long a client waits for a lease before the request fails",
    },
    ParamSpec {
        name: "read_pct",
        kind: ParamKind::Int { min: 0, max: 100 },
        default: "90",
        help: "server=postgres: requests that are a primary-key read, percent; the rest are a small durable write (one row's counter, one commit)",
    },
    ParamSpec {
        name: "table_rows",
        kind: ParamKind::Int {
            min: 1,
            max: 10_000_000,
        },
        default: "10000",
        help: "server=postgres: rows in the table the requests read and write (keys drawn uniformly)",
    },
    ParamSpec {
        name: "postgres_url",
        kind: ParamKind::Text,
        default: "",
        help: "server=postgres: a running PostgreSQL to use (libpq key=value or postgresql:// URL); empty: the lab starts its own for the cell",
    },
];

/// Most leases a pool may hold (connections x max_requests); r2d2 makes them all up front.
pub const MAX_CAPACITY: usize = 1_000_000;

struct Setup {
    connections: usize,
    max_requests: usize,
    server_cores: usize,
    heap_points: u64,
    shape: RequestShape,
}

fn setup(params: &Params) -> Setup {
    let ns = |name: &str| Duration::from_nanos(params.int(name) as u64);
    Setup {
        connections: params.count("connections"),
        max_requests: params.count("max_requests"),
        server_cores: params.count("server_cores"),
        heap_points: params.int("heap_points") as u64,
        shape: RequestShape {
            batch: params.int("batch") as u64,
            statement_points: params.int("statement_points") as u64,
            base: Duration::from_micros(params.int("base_us") as u64),
            per_point: ns("per_point_ns"),
            cpu: Duration::from_micros(params.int("cpu_us") as u64),
            cpu_per_point: ns("cpu_per_point_ns"),
            pool_timeout: Duration::from_millis(params.int("pool_timeout_ms") as u64),
        },
    }
}

/// One repetition of the pool that `build` makes, after the checks `lab` made before
/// the run (a cell run on its own has had none).
fn measure<P: Pool>(
    params: &Params,
    settings: RunSettings,
    build: impl FnOnce(&Setup) -> Result<P, String>,
) -> Result<Measurement, CellFailure> {
    if params.word("server") != "simulated" {
        return Err(CellFailure::new(format!(
            "server={}: the pool designs run against the simulated server; accepted server=simulated (server=postgres runs deadpool, bb8, r2d2-postgres)",
            params.word("server")
        )));
    }
    PoolHotPath.check(params).map_err(CellFailure::new)?;
    PoolHotPath
        .check_threads(params, settings.threads)
        .map_err(CellFailure::new)?;
    let s = setup(params);
    let pool = build(&s).map_err(CellFailure::new)?;
    let workload = PoolWorkload::new(Arc::new(pool), s.connections, s.max_requests, s.shape)
        .with_server(s.server_cores, s.heap_points);
    harness::runner::run(&workload, settings)
}

/// What `lab` lists about the pool hot path.
const DESCRIPTION: Description = Description {
    name: "pool",
    summary: "client connection pool: throughput plateaus when clients outnumber pool slots",
    variants: VARIANTS,
    params: PARAMS,
    charted_extras: &[
        ("datapoints_per_sec", "datapoints/s"),
        ("ceiling_ratio", "share of the Little's law ceiling"),
        ("server_util", "server CPU utilisation"),
        ("ns_per_cycle", "ns per acquire + release, per thread"),
        (
            "acquire_share",
            "share of request time acquiring a connection",
        ),
    ],
};

impl HotPath for PoolHotPath {
    fn description(&self) -> &'static Description {
        &DESCRIPTION
    }
    fn missing(&self, params: &Params) -> Option<harness::hotpath::Missing> {
        // Only the lab's own PostgreSQL needs anything this machine may lack.
        (params.word("server") == real::SERVER && params.text("postgres_url").is_empty())
            .then(real::database::installed)
            .and_then(Result::err)
            .map(|reason| harness::hotpath::Missing {
                what: "PostgreSQL's server".to_owned(),
                packages: vec!["postgresql".to_owned(), "postgresql-contrib".to_owned()],
                reason,
            })
    }
    fn check(&self, params: &Params) -> Result<(), String> {
        let capacity = params.count("connections") * params.count("max_requests");
        if capacity > MAX_CAPACITY {
            return Err(format!(
                "connections x max_requests = {capacity}: accepted up to {MAX_CAPACITY} leases in all"
            ));
        }
        let s = setup(params);
        if s.shape.service_time() > Duration::from_secs(10) {
            return Err(
                "cpu_us + cpu_per_point_ns x batch + base_us + per_point_ns x batch (per statement with statement_points): a request may take at most 10 s"
                    .into(),
            );
        }
        Ok(())
    }
    fn check_threads(&self, params: &Params, threads: usize) -> Result<(), String> {
        let s = setup(params);
        let held = threads as u64 * s.shape.batch;
        if s.heap_points > 0 && !s.shape.cpu_time().is_zero() && held >= s.heap_points {
            return Err(format!(
                "heap_points={}: {threads} clients x batch {} = {held} datapoints held would fill it; accepted more than that, or 0 (no limit)",
                s.heap_points, s.shape.batch
            ));
        }
        Ok(())
    }
}

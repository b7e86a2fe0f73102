//! The pools Rust users pick for PostgreSQL, lending real connections to a real server
//! (`server=postgres`): deadpool-postgres, bb8-postgres and r2d2_postgres, each request
//! a real statement (a primary-key read or a small durable write, `read_pct`), asking
//! HikariCP-benchmark's question with these crates: what share of a request's time goes
//! to getting its connection (`acquire_share`), how long acquisition takes, and how long
//! clients wait for a connection when they outnumber the connections.
//!
//! The seed-004 cells (`pool-clients.toml`, `pool-seed-batch.toml`) stay on the simulated
//! server: a per-connection cap that binds before the server's CPU needs network latency
//! this machine cannot make (no netem in its kernel, no toxiproxy in Debian), so they are
//! a model; these cells measure acquisition beside a real request on loopback.
//!
//! `pools` the three adapters, `statement` the SQL, `timing` and `figures` the times and
//! what a cell reports, `workload` the clients and invariants, `database` the server,
//! `placement` the CPUs of the server and of the clients.

pub mod database;
pub mod figures;
pub mod placement;
pub mod pools;
pub mod statement;
pub mod timing;
pub mod workload;

use std::sync::Arc;
use std::time::Duration;

use harness::{CellFailure, Measurement, Params, RunSettings, Variant};

use database::Database;
use placement::Placement;
use pools::{Bb8, Deadpool, PoolConfig, R2d2Postgres, RealPool};
use workload::RealWorkload;

/// The `server` parameter's value for these variants.
pub const SERVER: &str = "postgres";

/// The real pools' variant names, as scenario files and `variants=` write them.
pub const NAMES: &[&str] = &["deadpool", "bb8", "r2d2-postgres"];

/// deadpool-postgres.
pub const DEADPOOL: Variant = Variant {
    name: "deadpool",
    summary: "deadpool-postgres (tokio-postgres, async): real connections to PostgreSQL",
    measure: |p, s| measure(p, s, "deadpool", Deadpool::new),
};

/// bb8-postgres.
pub const BB8: Variant = Variant {
    name: "bb8",
    summary: "bb8-postgres (tokio-postgres, async): real connections to PostgreSQL",
    measure: |p, s| measure(p, s, "bb8", Bb8::new),
};

/// r2d2_postgres.
pub const R2D2_POSTGRES: Variant = Variant {
    name: "r2d2-postgres",
    summary: "r2d2_postgres (postgres, sync): real connections to PostgreSQL",
    measure: |p, s| measure(p, s, "r2d2-postgres", R2d2Postgres::new),
};

/// One repetition of the real pool that `build` makes: the server (resident for the
/// window), the table made afresh, the pool filled, the window, the invariants.
fn measure<P: RealPool + 'static>(
    params: &Params,
    settings: RunSettings,
    variant: &str,
    build: fn(&PoolConfig) -> Result<P, String>,
) -> Result<Measurement, CellFailure> {
    if params.word("server") != SERVER {
        return Err(CellFailure::new(format!(
            "variant {variant} lends real connections: accepted only with server={SERVER}"
        )));
    }
    let url = params.text("postgres_url");
    // The lab's own server on the cell's cores, the clients on the others; a server the
    // user named runs where it runs, and the clients on the cell's cores.
    let placement = if url.is_empty() {
        Placement::of_cell()
    } else {
        let cell = harness::affinity::allowed_cpus();
        Placement {
            server: Vec::new(),
            clients: cell,
        }
    };
    let database = Arc::new(Database::open(url, &placement.server).map_err(CellFailure::new)?);
    let rows = params.int("table_rows") as u64;
    database.prepare(rows).map_err(CellFailure::new)?;
    let connections = params.count("connections");
    let timeout = Duration::from_millis(params.int("pool_timeout_ms") as u64);
    let config = PoolConfig {
        url: database.url().to_owned(),
        connections: connections as u32,
        timeout,
    };
    // The pool's threads (the async runtime's workers, r2d2's helpers) and the clients
    // start inside, and keep the clients' CPUs.
    let mut m = placement::on_cpus(&placement.clients, || {
        let pool = build(&config)?;
        let idle = pool.idle();
        if idle != connections {
            return Err(format!(
                "{variant}: {idle} of {connections} connections open before the window"
            ));
        }
        let workload = RealWorkload::new(
            pool,
            Arc::clone(&database),
            connections,
            params.int("read_pct") as u64,
            rows,
            timeout,
        );
        harness::runner::run(&workload, settings).map_err(|e| e.reason)
    })
    .and_then(|r| r)
    .map_err(CellFailure::new)?;
    let cpus = |c: &[usize]| serde_json::json!(harness::affinity::format_cpu_list(c));
    if !placement.server.is_empty() {
        m.extra
            .insert("server_cpus".into(), cpus(&placement.server));
    }
    m.extra
        .insert("client_cpus".into(), cpus(&placement.clients));
    Ok(m)
}

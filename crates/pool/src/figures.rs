//! The figures a pool cell reports beside its throughput: leases granted at once and
//! waited for, the pool's load and Little's-law ceiling, the clients' and the server's
//! ceilings, the server's CPU use, and which limit bound the cell (`bound_by`, the one rule
//! findings read). Computed from the clients' window tallies after the run.

use std::time::Duration;

use harness::stats;
use hdrhistogram::Histogram;

use crate::client::{PoolClient, WindowTally};
use crate::pools::Pool;
use crate::request::RequestShape;
use crate::server::Server;

/// What of the workload the figures read: its requests, the pool's leases in all, and
/// the simulated server, if any.
pub(crate) struct Cell<'a> {
    /// The requests' shape.
    pub shape: &'a RequestShape,
    /// Leases in all (connections x max_requests).
    pub capacity: usize,
    /// The simulated server.
    pub server: Option<&'a Server>,
}

/// The cell's figures (its `extra`).
pub(crate) fn extra<P: Pool>(
    w: Cell<'_>,
    clients: &[PoolClient<P>],
    window: Duration,
) -> serde_json::Map<String, serde_json::Value> {
    let mut waits = harness::stats::new_histogram();
    let mut at_once = 0u64;
    for c in clients {
        if let Some(w) = &c.window.waits {
            harness::stats::merge_into(&mut waits, w);
        }
        at_once += c.window.granted_at_once;
    }
    // Leases granted at once waited zero: counted, never timed.
    let _ = waits.record_n(0, at_once);
    let sum = |f: fn(&WindowTally) -> u64| clients.iter().map(|c| f(&c.window)).sum::<u64>();
    let total =
        |f: fn(&WindowTally) -> Duration| clients.iter().map(|c| f(&c.window)).sum::<Duration>();
    let (served, points) = (sum(|w| w.served), sum(|w| w.points));
    let hold = total(|w| w.hold);
    let rate = stats::rate(served, window);
    let quantile = |q: f64| {
        if waits.is_empty() {
            0
        } else {
            waits.value_at_quantile(q)
        }
    };
    let mut extra = serde_json::Map::new();
    let mut put = |k: &str, v: serde_json::Value| {
        extra.insert(k.to_owned(), v);
    };
    // Answered statements only: a timed-out statement carried no datapoints.
    put(
        "datapoints_per_sec",
        serde_json::json!(stats::rate(points, window)),
    );
    put("wait_p50_ns", serde_json::json!(quantile(0.5)));
    put("wait_p99_ns", serde_json::json!(quantile(0.99)));
    put("timeouts", serde_json::json!(sum(|w| w.timeouts)));
    if w.shape.service_time().is_zero() {
        // Each client's time per acquire + release, harness work included.
        if served > 0 {
            put(
                "ns_per_cycle",
                serde_json::json!(
                    clients.len() as f64 * window.as_secs_f64() * 1e9 / served as f64
                ),
            );
        }
        return extra;
    }
    let statements = w.shape.statements();
    if w.shape.split() {
        put("statements_per_request", serde_json::json!(statements));
        put(
            "requests_per_sec",
            serde_json::json!(stats::rate(sum(|w| w.requests), window)),
        );
        put(
            "most_in_flight_per_client",
            serde_json::json!(clients.iter().map(|c| c.most_in_flight).max()),
        );
    }
    let pool_load = stats::per_second(hold.as_secs_f64(), window) / w.capacity as f64;
    put("pool_load", serde_json::json!(pool_load));
    // Little's law: at most `capacity` statements in flight, each for its service time
    // (the first statement's, the largest).
    let service = w.shape.statement_service().as_secs_f64();
    let ceiling = w.capacity as f64 / service;
    put("littles_law_ceiling", serde_json::json!(ceiling));
    put("ceiling_ratio", serde_json::json!(rate / ceiling));
    // Each client has at most one request open, each with all its statements in flight.
    let client_ceiling =
        clients.len() as f64 * statements as f64 / w.shape.service_time().as_secs_f64();
    put("client_ceiling", serde_json::json!(client_ceiling));
    // The window as the clients saw it open (the first of them) and its length.
    let opened = clients.iter().filter_map(|c| c.window.opened_at).min();
    let server_util = w.server.zip(opened).map(|(s, opened)| {
        let busy = s.busy_between(opened, opened + window);
        let (cpu, gc) = (busy.cpu, busy.gc);
        let util = stats::per_second(cpu.as_secs_f64(), window) / s.cores() as f64;
        // Statements per second the cores could serve with no collection.
        let per_statement = w.shape.cpu_time().as_secs_f64() / statements as f64;
        put("server_util", serde_json::json!(util));
        put(
            "server_ceiling",
            serde_json::json!(s.cores() as f64 / per_statement),
        );
        if s.heap_limited() {
            put(
                "gc_share",
                serde_json::json!(gc.as_secs_f64() / cpu.as_secs_f64().max(f64::MIN_POSITIVE)),
            );
        }
        util
    });
    let lease_wait = lease_wait_share(clients, &waits, window);
    put(
        "bound_by",
        serde_json::json!(bound_by(server_util, pool_load, lease_wait)),
    );
    extra
}

/// Share of the clients' time spent waiting for a lease in the window.
fn lease_wait_share<P: Pool>(
    clients: &[PoolClient<P>],
    waits: &Histogram<u64>,
    window: Duration,
) -> f64 {
    let waited_ns = waits.mean() * waits.len() as f64;
    waited_ns / (window.as_nanos() as f64 * clients.len().max(1) as f64)
}

/// A limit this close to full counts as the one that held: a closed loop never drives a
/// resource to 100%, and 0.85 sits above the busiest non-binding limit seen here (the
/// server at 78% with the fix at 2000 clients).
pub const BUSY: f64 = 0.85;

/// Share of the clients' time queued for a lease above which the pool, not the clients,
/// set the pace.
pub const QUEUED: f64 = 0.05;

/// Which limit held a cell's throughput: the server's CPU when it was nearly always busy,
/// else the pool when its leases were nearly always held and clients queued for them,
/// else the clients themselves (each has one request in flight).
pub fn bound_by(server_util: Option<f64>, pool_load: f64, lease_wait: f64) -> &'static str {
    if server_util.is_some_and(|u| u >= BUSY) {
        "server"
    } else if pool_load >= BUSY && lease_wait >= QUEUED {
        "pool"
    } else {
        "clients"
    }
}

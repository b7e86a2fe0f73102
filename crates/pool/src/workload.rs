//! Closed-loop clients: each worker thread is one client that acquires a lease, sends a
//! request of `batch` datapoints, waits for the simulated host to answer, releases, and
//! repeats. The host answers after its CPU part (queued on the simulated server's
//! `server_cores`, see [`crate::server`]) and its latency that uses no CPU (network,
//! storage), both slept while holding the lease, as a request holds its slot on a real
//! connection.
//!
//! The harness work per cycle is the same for every design and kept off the fast path:
//! a lease granted at once ([`Pool::try_acquire`]) reads no clock; only a client that must
//! wait is timed. An audit counter per host connection, kept here and not by the pool,
//! checks that no design ever puts more requests in flight on a connection than its limit
//! (a double hand-out); with a service time it runs every cycle, in acquisition-only
//! cells one cycle in [`AUDIT_SAMPLE`] per client, so that its shared counter does not
//! become the cost being measured. After the run every lease must be back in the pool.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use harness::stats;
use harness::{OpCtx, Outcome, Worker, Workload};
use hdrhistogram::Histogram;

use crate::pools::Pool;
use crate::server::Server;

/// In acquisition-only cells a client audits one cycle in this many (and every cycle when
/// requests take time); also the latency sampling rate of those cells.
pub const AUDIT_SAMPLE: u32 = 16;

/// How requests look and what the host spends on them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RequestShape {
    /// Datapoints per request.
    pub batch: u64,
    /// Latency per request that uses no server CPU (network, storage).
    pub base: Duration,
    /// Latency per datapoint that uses no server CPU.
    pub per_point: Duration,
    /// Server CPU per request.
    pub cpu: Duration,
    /// Server CPU per datapoint.
    pub cpu_per_point: Duration,
    /// How long a client waits for a lease before giving up (a counted timeout).
    pub pool_timeout: Duration,
}

impl RequestShape {
    /// Acquisition only: no host time at all.
    pub const fn acquisition_only(pool_timeout: Duration) -> Self {
        RequestShape {
            batch: 1,
            base: Duration::ZERO,
            per_point: Duration::ZERO,
            cpu: Duration::ZERO,
            cpu_per_point: Duration::ZERO,
            pool_timeout,
        }
    }

    /// Server CPU one request needs.
    pub fn cpu_time(&self) -> Duration {
        self.cpu + self.cpu_per_point * self.batch as u32
    }

    /// Latency of one request that uses no server CPU.
    pub fn latency(&self) -> Duration {
        self.base + self.per_point * self.batch as u32
    }

    /// The host's service time for one request with no queue at the server.
    pub fn service_time(&self) -> Duration {
        self.cpu_time() + self.latency()
    }
}

/// The workload over pool `P`.
pub struct PoolWorkload<P: Pool> {
    pool: Arc<P>,
    shape: RequestShape,
    audit: Arc<Vec<AtomicUsize>>,
    audit_every: u32,
    limit: usize,
    capacity: usize,
    server: Option<Arc<Server>>,
}

impl<P: Pool> PoolWorkload<P> {
    /// Clients of `pool`, which has `connections` x `max_requests` room, against a host
    /// with unlimited CPU.
    pub fn new(pool: Arc<P>, connections: usize, max_requests: usize, shape: RequestShape) -> Self {
        let acquisition_only = shape.service_time().is_zero();
        PoolWorkload {
            pool,
            shape,
            audit: Arc::new((0..connections).map(|_| AtomicUsize::new(0)).collect()),
            audit_every: if acquisition_only { AUDIT_SAMPLE } else { 1 },
            limit: max_requests,
            capacity: connections * max_requests,
            server: None,
        }
    }

    /// The same, against a server of `cores` virtual cores (when requests use CPU).
    pub fn with_server(mut self, cores: usize) -> Self {
        if !self.shape.cpu_time().is_zero() {
            self.server = Some(Arc::new(Server::new(cores)));
        }
        self
    }

    /// Audits every cycle instead of a sample (tests of a broken pool).
    pub fn audit_every_cycle(mut self) -> Self {
        self.audit_every = 1;
        self
    }
}

/// One client.
pub struct PoolClient<P: Pool> {
    pool: Arc<P>,
    local: P::Local,
    shape: RequestShape,
    acquisition_only: bool,
    server: Option<Arc<Server>>,
    audit: Arc<Vec<AtomicUsize>>,
    audit_every: u32,
    audit_countdown: u32,
    limit: usize,
    over_limit: u64,
    sent: u64,
    answered: u64,
    longest_wait: Duration,
    window: WindowTally,
}

/// What a client counts in the measured window only.
#[derive(Default)]
struct WindowTally {
    served: u64,
    granted_at_once: u64,
    timeouts: u64,
    hold: Duration,
    cpu: Duration,
    waits: Option<Histogram<u64>>,
}

impl<P: Pool> PoolClient<P> {
    fn waits(&mut self) -> &mut Histogram<u64> {
        self.window
            .waits
            .get_or_insert_with(harness::stats::new_histogram)
    }

    /// The lease, and whether the pool made us wait; `None` on a timeout.
    #[inline]
    fn lease(&mut self, ctx: &mut OpCtx) -> Option<P::Lease> {
        if let Some(lease) = self.pool.try_acquire(&mut self.local) {
            self.window.granted_at_once += 1;
            return Some(lease);
        }
        let start = Instant::now();
        let lease = self.pool.acquire(&mut self.local, self.shape.pool_timeout);
        let waited = start.elapsed();
        ctx.record_wait(waited);
        self.longest_wait = self.longest_wait.max(waited);
        self.waits().saturating_record(waited.as_nanos() as u64);
        lease
    }

    /// The host answers: CPU on the server (queued), then latency that uses none.
    fn serve(&mut self) {
        let granted = Instant::now();
        let cpu = self.shape.cpu_time();
        let cpu_done = match &self.server {
            Some(server) => server.schedule(granted, cpu),
            None => granted + cpu,
        };
        let answered_at = cpu_done + self.shape.latency();
        let now = Instant::now();
        if answered_at > now {
            std::thread::sleep(answered_at - now);
        }
        self.window.cpu += cpu;
        self.window.hold += granted.elapsed();
    }
}

impl<P: Pool> Worker for PoolClient<P> {
    #[inline]
    fn op(&mut self, ctx: &mut OpCtx) -> Outcome {
        let Some(lease) = self.lease(ctx) else {
            self.window.timeouts += 1;
            return Outcome::timed_out(0);
        };
        self.audit_countdown -= 1;
        let audited = self.audit_countdown == 0;
        let connection = if audited {
            self.audit_countdown = self.audit_every;
            let c = self.pool.connection_of(&lease);
            let in_flight = self.audit[c].fetch_add(1, Ordering::AcqRel) + 1;
            if in_flight > self.limit {
                self.over_limit += 1;
            }
            Some(c)
        } else {
            None
        };
        self.sent += 1;
        if !self.acquisition_only {
            self.serve();
        }
        self.answered += 1;
        if let Some(c) = connection {
            self.audit[c].fetch_sub(1, Ordering::AcqRel);
        }
        self.pool.release(lease, &mut self.local);
        self.window.served += 1;
        Outcome::OK
    }

    fn window_opened(&mut self) {
        let mut waits = self.window.waits.take();
        if let Some(w) = waits.as_mut() {
            w.reset();
        }
        self.window = WindowTally {
            waits,
            ..WindowTally::default()
        };
    }
}

impl<P: Pool> Workload for PoolWorkload<P> {
    type Worker = PoolClient<P>;

    // Measured: every client blocks only in `acquire` (timed) or in the host's answer
    // (not a wait on the hot path).
    fn waits_measured(&self) -> bool {
        true
    }

    fn latency_sample_every(&self) -> u32 {
        // Sub-microsecond cycles: two clock reads each would be most of the cost.
        if self.shape.service_time().is_zero() {
            AUDIT_SAMPLE
        } else {
            1
        }
    }

    fn worker(&self, index: usize, _threads: usize) -> PoolClient<P> {
        PoolClient {
            pool: Arc::clone(&self.pool),
            local: self.pool.local(index),
            shape: self.shape,
            acquisition_only: self.shape.service_time().is_zero(),
            server: self.server.clone(),
            audit: Arc::clone(&self.audit),
            audit_every: self.audit_every,
            // Spread the sampled audits so clients do not audit in step.
            audit_countdown: 1 + (index as u32 % self.audit_every),
            limit: self.limit,
            over_limit: 0,
            sent: 0,
            answered: 0,
            longest_wait: Duration::ZERO,
            window: WindowTally::default(),
        }
    }

    fn verify(&self, clients: &[PoolClient<P>]) -> Result<(), String> {
        let over: u64 = clients.iter().map(|c| c.over_limit).sum();
        if over > 0 {
            return Err(format!(
                "{over} audited requests found their connection over its limit of {} (a lease handed out twice)",
                self.limit
            ));
        }
        let (sent, answered): (u64, u64) = clients
            .iter()
            .fold((0, 0), |(s, a), c| (s + c.sent, a + c.answered));
        if sent != answered {
            return Err(format!("{sent} requests sent but {answered} answered"));
        }
        if let Some(stuck) = self
            .audit
            .iter()
            .position(|a| a.load(Ordering::Acquire) != 0)
        {
            return Err(format!(
                "connection {stuck} still has requests in flight after the run"
            ));
        }
        let free = self.pool.free_leases();
        if free != self.capacity {
            return Err(format!(
                "{free} of {} leases back in the pool after the run",
                self.capacity
            ));
        }
        let slack = self.shape.pool_timeout + Duration::from_secs(1);
        if let Some(c) = clients.iter().find(|c| c.longest_wait > slack) {
            return Err(format!(
                "a client waited {:?} for a lease, past the pool timeout",
                c.longest_wait
            ));
        }
        Ok(())
    }

    fn extra(
        &self,
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
        let served: u64 = clients.iter().map(|c| c.window.served).sum();
        let hold: Duration = clients.iter().map(|c| c.window.hold).sum();
        let cpu: Duration = clients.iter().map(|c| c.window.cpu).sum();
        let rate = stats::rate(served, window);
        let service = self.shape.service_time().as_secs_f64();
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
        // Served requests only: a timed-out request carried no datapoints.
        put(
            "datapoints_per_sec",
            serde_json::json!(rate * self.shape.batch as f64),
        );
        put("wait_p50_ns", serde_json::json!(quantile(0.5)));
        put("wait_p99_ns", serde_json::json!(quantile(0.99)));
        put(
            "timeouts",
            serde_json::json!(clients.iter().map(|c| c.window.timeouts).sum::<u64>()),
        );
        if service == 0.0 {
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
        let pool_load = stats::per_second(hold.as_secs_f64(), window) / self.capacity as f64;
        put("pool_load", serde_json::json!(pool_load));
        // Little's law: at most `capacity` requests in flight, each for `service`.
        let ceiling = self.capacity as f64 / service;
        put("littles_law_ceiling", serde_json::json!(ceiling));
        put("ceiling_ratio", serde_json::json!(rate / ceiling));
        let client_ceiling = clients.len() as f64 / service;
        put("client_ceiling", serde_json::json!(client_ceiling));
        let server_util = self.server.as_ref().map(|s| {
            let util = stats::per_second(cpu.as_secs_f64(), window) / s.cores() as f64;
            let cpu = self.shape.cpu_time().as_secs_f64();
            put("server_util", serde_json::json!(util));
            put("server_ceiling", serde_json::json!(s.cores() as f64 / cpu));
            util
        });
        let wait_share = waits_share(clients, &waits, window);
        put(
            "bound_by",
            serde_json::json!(bound_by(server_util, pool_load, wait_share)),
        );
        extra
    }
}

/// Share of the clients' time spent waiting for a lease in the window.
fn waits_share<P: Pool>(
    clients: &[PoolClient<P>],
    waits: &Histogram<u64>,
    window: Duration,
) -> f64 {
    let waited_ns = waits.mean() * waits.len() as f64;
    waited_ns / (window.as_nanos() as f64 * clients.len().max(1) as f64)
}

/// Which limit held a cell's throughput: the server's CPU when it was nearly always busy,
/// else the pool when its leases were nearly always held and clients queued for them,
/// else the clients themselves (each has one request in flight).
pub fn bound_by(server_util: Option<f64>, pool_load: f64, wait_share: f64) -> &'static str {
    if server_util.is_some_and(|u| u >= 0.85) {
        "server"
    } else if pool_load >= 0.85 && wait_share >= 0.05 {
        "pool"
    } else {
        "clients"
    }
}

//! Closed-loop clients: each worker thread is one client that acquires a lease, sends a
//! request of `batch` datapoints, waits for the simulated host to answer (it takes
//! `base + per_point x batch`, slept while holding the lease, as a request holds its slot
//! on a real connection), releases, and repeats.
//!
//! An audit counter per host connection, kept by the workload and not by the pool, checks
//! that no design ever puts more requests in flight on a connection than its limit.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use harness::{OpCtx, Outcome, Worker, Workload};
use hdrhistogram::Histogram;

use crate::pools::Pool;

/// How requests look and how long the host takes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RequestShape {
    /// Datapoints per request.
    pub batch: u64,
    /// Host time per request, whatever its size.
    pub base: Duration,
    /// Host time per datapoint.
    pub per_point: Duration,
    /// How long a client waits for a lease before giving up (a counted timeout).
    pub pool_timeout: Duration,
}

impl RequestShape {
    /// The host's service time for one request.
    pub fn service_time(&self) -> Duration {
        self.base + self.per_point * self.batch as u32
    }
}

/// The workload over pool `P`.
pub struct PoolWorkload<P: Pool> {
    pool: Arc<P>,
    shape: RequestShape,
    audit: Arc<Vec<AtomicUsize>>,
    limit: usize,
    capacity: usize,
}

impl<P: Pool> PoolWorkload<P> {
    /// Clients of `pool`, which has `connections` x `max_requests` room.
    pub fn new(pool: Arc<P>, connections: usize, max_requests: usize, shape: RequestShape) -> Self {
        PoolWorkload {
            pool,
            shape,
            audit: Arc::new((0..connections).map(|_| AtomicUsize::new(0)).collect()),
            limit: max_requests,
            capacity: connections * max_requests,
        }
    }
}

/// One client.
pub struct PoolClient<P: Pool> {
    pool: Arc<P>,
    local: P::Local,
    shape: RequestShape,
    audit: Arc<Vec<AtomicUsize>>,
    limit: usize,
    over_limit: u64,
    sent: u64,
    answered: u64,
    timeouts: u64,
    longest_wait: Duration,
    window_waits: Histogram<u64>,
    window_hold: Duration,
    window_timeouts: u64,
}

impl<P: Pool> Worker for PoolClient<P> {
    fn op(&mut self, ctx: &mut OpCtx) -> Outcome {
        let start = Instant::now();
        let lease = self.pool.acquire(&mut self.local, self.shape.pool_timeout);
        let granted = Instant::now();
        let waited = granted - start;
        ctx.record_wait(waited);
        self.longest_wait = self.longest_wait.max(waited);
        self.window_waits
            .saturating_record(waited.as_nanos() as u64);
        let Some(lease) = lease else {
            self.timeouts += 1;
            self.window_timeouts += 1;
            return Outcome::timed_out(0);
        };
        let connection = self.pool.connection_of(&lease);
        let in_flight = self.audit[connection].fetch_add(1, Ordering::AcqRel) + 1;
        if in_flight > self.limit {
            self.over_limit += 1;
        }
        self.sent += 1;
        let service = self.shape.service_time();
        if !service.is_zero() {
            std::thread::sleep(service);
        }
        self.answered += 1;
        self.audit[connection].fetch_sub(1, Ordering::AcqRel);
        self.window_hold += granted.elapsed();
        self.pool.release(lease, &mut self.local);
        Outcome::OK
    }

    fn window_opened(&mut self) {
        self.window_waits.reset();
        self.window_hold = Duration::ZERO;
        self.window_timeouts = 0;
    }
}

impl<P: Pool> Workload for PoolWorkload<P> {
    type Worker = PoolClient<P>;

    // Measured: every client blocks only in `acquire`, which is timed.
    fn waits_measured(&self) -> bool {
        true
    }

    fn worker(&self, index: usize, _threads: usize) -> PoolClient<P> {
        PoolClient {
            pool: Arc::clone(&self.pool),
            local: self.pool.local(index),
            shape: self.shape,
            audit: Arc::clone(&self.audit),
            limit: self.limit,
            over_limit: 0,
            sent: 0,
            answered: 0,
            timeouts: 0,
            longest_wait: Duration::ZERO,
            window_waits: harness::stats::new_histogram(),
            window_hold: Duration::ZERO,
            window_timeouts: 0,
        }
    }

    fn verify(&self, clients: &[PoolClient<P>]) -> Result<(), String> {
        let over: u64 = clients.iter().map(|c| c.over_limit).sum();
        if over > 0 {
            return Err(format!(
                "{over} requests found their connection over its limit of {}",
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
        for c in clients {
            harness::stats::merge_into(&mut waits, &c.window_waits);
        }
        let hold: Duration = clients.iter().map(|c| c.window_hold).sum();
        let requests = waits.len() as f64;
        let secs = window.as_secs_f64().max(1e-9);
        let service = self.shape.service_time().as_secs_f64();
        let mut extra = serde_json::Map::new();
        let mut put = |k: &str, v: serde_json::Value| {
            extra.insert(k.to_owned(), v);
        };
        put(
            "datapoints_per_sec",
            serde_json::json!(requests * self.shape.batch as f64 / secs),
        );
        put(
            "wait_p50_ns",
            serde_json::json!(if waits.is_empty() {
                0
            } else {
                waits.value_at_quantile(0.5)
            }),
        );
        put(
            "wait_p99_ns",
            serde_json::json!(if waits.is_empty() {
                0
            } else {
                waits.value_at_quantile(0.99)
            }),
        );
        put(
            "pool_load",
            serde_json::json!(hold.as_secs_f64() / secs / self.capacity as f64),
        );
        put(
            "timeouts",
            serde_json::json!(clients.iter().map(|c| c.window_timeouts).sum::<u64>()),
        );
        if service > 0.0 {
            // Little's law: at most `capacity` requests in flight, each for `service`.
            let ceiling = self.capacity as f64 / service;
            put("littles_law_ceiling", serde_json::json!(ceiling));
            put(
                "ceiling_ratio",
                serde_json::json!(requests / secs / ceiling),
            );
            put(
                "client_ceiling",
                serde_json::json!(clients.len() as f64 / service),
            );
        }
        extra
    }
}

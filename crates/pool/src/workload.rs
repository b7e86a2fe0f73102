//! Closed-loop clients: each worker thread is one client that sends a request of `batch`
//! datapoints, waits for the answer and sends the next. The simulated server first
//! spends CPU on the request as a whole (parsing it, when the request is split into
//! statements), then the request's statements go out at once, each on a lease of its
//! own: a statement holds its lease while it queues for and uses the server's CPU
//! (`server_cores`, see [`crate::server`]) and for its latency that uses no CPU (network,
//! storage), as a statement holds its slot on a real connection. A request is answered
//! when its last statement is. By default a request is one statement; the seed's server
//! wrote each metric's datapoints as statements of their own, which `statement_points`
//! models, so that a bigger request asks for more leases at once.
//!
//! One operation is one statement answered. A client with statements in flight that
//! finds no free lease waits for a lease or for its own next answer, whichever comes
//! first, as the seed's driver thread did in "await available connection" while the
//! statements it had sent came back.
//!
//! The harness work per cycle is the same for every design and kept off the fast path:
//! a lease granted at once ([`Pool::try_acquire`]) reads no clock; only a client that must
//! wait is timed. An audit counter per host connection, kept here and not by the pool,
//! checks that no design ever puts more statements in flight on a connection than its
//! limit (a double hand-out); with a service time it runs for every statement, in
//! acquisition-only cells one cycle in [`AUDIT_SAMPLE`] per client, so that its shared
//! counter does not become the cost being measured. After the run every lease must be
//! back in the pool.

//!
//! This module holds the workload (building clients, verify); a request's arithmetic is
//! `request`, a client's state machine `client`, the figures a cell reports `figures`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use harness::locks::LockSet;
use harness::Workload;

use crate::client::{PoolClient, WindowTally, LEASES};
pub use crate::figures::{bound_by, BUSY, QUEUED};
use crate::pools::Pool;
pub use crate::request::RequestShape;
use crate::server::Server;

/// In acquisition-only cells a client audits one cycle in this many (and every statement
/// when requests take time); also the latency sampling rate of those cells.
pub const AUDIT_SAMPLE: u32 = 16;
/// The workload over pool `P`.
pub struct PoolWorkload<P: Pool> {
    pub(crate) pool: Arc<P>,
    pub(crate) shape: RequestShape,
    pub(crate) audit: Arc<Vec<AtomicUsize>>,
    pub(crate) audit_every: u32,
    pub(crate) limit: usize,
    pub(crate) capacity: usize,
    pub(crate) server: Option<Arc<Server>>,
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

    /// The same, against a server of `cores` virtual cores and a heap of `heap_points`
    /// datapoints (0: no limit), when requests use CPU.
    pub fn with_server(mut self, cores: usize, heap_points: u64) -> Self {
        if !self.shape.cpu_time().is_zero() {
            self.server = Some(Arc::new(Server::new(cores, heap_points)));
        }
        self
    }

    /// Audits every cycle instead of a sample (tests of a broken pool).
    pub fn audit_every_cycle(mut self) -> Self {
        self.audit_every = 1;
        self
    }
}

impl<P: Pool> PoolWorkload<P> {
    /// About how long a request takes once the run has settled: its service time, or
    /// what the busiest resource (the server's cores, the pool's leases) needs per request
    /// times the clients queued for it (the bottleneck law).
    fn settled_request_time(&self, clients: usize) -> Duration {
        let statements = self.shape.statements() as f64;
        let pool = statements * self.shape.statement_service().as_secs_f64() / self.capacity as f64;
        let cpu = self.server.as_ref().map_or(0.0, |s| {
            self.shape.cpu_time().as_secs_f64() / s.cores() as f64
        });
        self.shape
            .service_time()
            .max(Duration::from_secs_f64(clients as f64 * pool.max(cpu)))
    }

    /// Where client `index` of `clients` starts, as in a run long under way: part-way
    /// through its first request (already parsed, at a random statement), after a random
    /// delay within the time a settled run takes per statement of a request. Started
    /// together at statement 0, every client would first queue to have its request
    /// parsed, a first-come-first-served server would keep them in that lockstep for the
    /// whole run, and a request of thousands of statements takes minutes to come round
    /// again, far longer than a warm-up.
    fn first_request_at(&self, index: usize, clients: usize) -> (u64, Duration) {
        let mut rng = harness::stats::SplitMix64::new(index as u64);
        let statements = self.shape.statements();
        let answered = rng.below(statements as usize) as u64;
        let round = self.settled_request_time(clients) / statements as u32;
        (answered, round.mul_f64(rng.next_f64()))
    }
}

impl<P: Pool> Workload for PoolWorkload<P> {
    type Worker = PoolClient<P>;

    // Measured: every client blocks only in `acquire` (timed) or in the host's answer
    // (not a wait on the hot path).
    fn waits_measured(&self) -> bool {
        true
    }

    fn locks(&self) -> Option<LockSet> {
        Some(
            LockSet::new()
                .with(LEASES, "connection leases", self.capacity as u32)
                .unnamed("the pool's own locks inside acquire and release (its parking lock, r2d2's mutex)"),
        )
    }

    fn latency_sample_every(&self) -> u32 {
        // Sub-microsecond cycles: two clock reads each would be most of the cost.
        if self.shape.service_time().is_zero() {
            AUDIT_SAMPLE
        } else {
            1
        }
    }

    fn worker(&self, index: usize, threads: usize) -> PoolClient<P> {
        // The first request is held from the start (see `first_request_at`).
        if let Some(server) = &self.server {
            server.hold(self.shape.batch);
        }
        PoolClient {
            pool: Arc::clone(&self.pool),
            local: self.pool.local(index),
            shape: self.shape,
            statements: self.shape.statements(),
            acquisition_only: self.shape.service_time().is_zero(),
            server: self.server.clone(),
            audit: Arc::clone(&self.audit),
            audit_every: self.audit_every,
            // Spread the sampled audits so clients do not audit in step.
            audit_countdown: 1 + (index as u32 % self.audit_every),
            limit: self.limit,
            over_limit: 0,
            request: None,
            first_request_at: Some(self.first_request_at(index, threads)),
            rng: harness::stats::SplitMix64::new(!(index as u64)),
            sent: 0,
            answered: 0,
            abandoned: 0,
            most_in_flight: 0,
            longest_wait: Duration::ZERO,
            window: WindowTally::default(),
        }
    }

    fn verify(&self, clients: &[PoolClient<P>]) -> Result<(), String> {
        let over: u64 = clients.iter().map(|c| c.over_limit).sum();
        if over > 0 {
            return Err(format!(
                "{over} audited statements found their connection over its limit of {} (a lease handed out twice)",
                self.limit
            ));
        }
        let (sent, answered, abandoned) = clients.iter().fold((0, 0, 0), |(s, a, x), c| {
            (s + c.sent, a + c.answered, x + c.abandoned)
        });
        if sent != answered + abandoned {
            return Err(format!(
                "{sent} statements sent but {answered} answered and {abandoned} abandoned at the close"
            ));
        }
        if let Some(stuck) = self
            .audit
            .iter()
            .position(|a| a.load(Ordering::Acquire) != 0)
        {
            return Err(format!(
                "connection {stuck} still has statements in flight after the run"
            ));
        }
        let free = self.pool.free_leases();
        if free != self.capacity {
            return Err(format!(
                "{free} of {} leases back in the pool after the run",
                self.capacity
            ));
        }
        if let Some(held) = self.server.as_ref().map(|s| s.live_points()) {
            if held != 0 {
                return Err(format!(
                    "the server still holds {held} datapoints of requests after the run"
                ));
            }
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
        let cell = crate::figures::Cell {
            shape: &self.shape,
            capacity: self.capacity,
            server: self.server.as_deref(),
        };
        crate::figures::extra(cell, clients, window)
    }
}

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

use std::cmp::Ordering as By;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use harness::locks::{Hold, LockId, LockSet};
use harness::stats;
use harness::{OpCtx, Outcome, Worker, Workload};
use hdrhistogram::Histogram;

use crate::pools::Pool;
use crate::server::{Charge, Server};

/// How often a client waiting past the planned close of the window looks whether it has
/// closed (a timer slip, usually well under a millisecond).
const CLOSE_POLL: Duration = Duration::from_millis(1);

/// How often a client waiting in the warm-up looks whether the window has closed: a wait
/// that began there (for a request parsed behind seconds of the server's queue) may
/// otherwise outlast the window.
const WARMUP_POLL: Duration = Duration::from_millis(100);

/// In acquisition-only cells a client audits one cycle in this many (and every statement
/// when requests take time); also the latency sampling rate of those cells.
pub const AUDIT_SAMPLE: u32 = 16;

/// How requests look and what the host spends on them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RequestShape {
    /// Datapoints per request.
    pub batch: u64,
    /// Datapoints per statement; 0: the request is one statement.
    pub statement_points: u64,
    /// Latency per statement that uses no server CPU (network, storage).
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
            statement_points: 0,
            base: Duration::ZERO,
            per_point: Duration::ZERO,
            cpu: Duration::ZERO,
            cpu_per_point: Duration::ZERO,
            pool_timeout,
        }
    }

    /// Whether the request goes out as statements of `statement_points` datapoints.
    fn split(&self) -> bool {
        self.statement_points > 0
    }

    /// Statements per request.
    pub fn statements(&self) -> u64 {
        if self.split() {
            self.batch.div_ceil(self.statement_points)
        } else {
            1
        }
    }

    /// Datapoints in statement `index` of a request (the last may carry fewer).
    pub fn points_of(&self, index: u64) -> u64 {
        if self.split() {
            (self.batch - index * self.statement_points).min(self.statement_points)
        } else {
            self.batch
        }
    }

    /// Server CPU for the request as a whole, before its statements take leases: with
    /// statements, the per-request CPU is the server parsing the request; a request that
    /// is one statement spends it while holding its lease instead.
    pub fn parse_cpu(&self) -> Duration {
        if self.split() {
            self.cpu
        } else {
            Duration::ZERO
        }
    }

    /// Server CPU of a statement of `points` datapoints, spent holding its lease.
    pub fn statement_cpu(&self, points: u64) -> Duration {
        let per_points = self.cpu_per_point * points as u32;
        if self.split() {
            per_points
        } else {
            self.cpu + per_points
        }
    }

    /// Latency of a statement of `points` datapoints that uses no server CPU.
    pub fn statement_latency(&self, points: u64) -> Duration {
        self.base + self.per_point * points as u32
    }

    /// Server CPU one request needs, all statements included.
    pub fn cpu_time(&self) -> Duration {
        self.cpu + self.cpu_per_point * self.batch as u32
    }

    /// How long the first (largest) statement holds its lease with no queue at the
    /// server.
    pub fn statement_service(&self) -> Duration {
        let points = self.points_of(0);
        self.statement_cpu(points) + self.statement_latency(points)
    }

    /// The host's time for one request with no queue at the server and leases for all
    /// its statements at once.
    pub fn service_time(&self) -> Duration {
        self.parse_cpu() + self.statement_service()
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

/// The lock table's id of the pool's leases (connections x max_requests slots).
const LEASES: LockId = LockId(0);

/// A statement sent and not yet answered: the lease it holds and when its answer comes.
struct InFlight<L> {
    answer_at: Instant,
    sent_at: Instant,
    lease: L,
    /// The lease's timer in the lock table, ended at the answer's (simulated) time.
    hold: Hold,
    points: u64,
    connection: Option<usize>,
}

// Ordered by answer time, earliest first in a `BinaryHeap` (a max-heap).
impl<L> PartialEq for InFlight<L> {
    fn eq(&self, other: &Self) -> bool {
        self.answer_at == other.answer_at
    }
}
impl<L> Eq for InFlight<L> {}
impl<L> PartialOrd for InFlight<L> {
    fn partial_cmp(&self, other: &Self) -> Option<By> {
        Some(self.cmp(other))
    }
}
impl<L> Ord for InFlight<L> {
    fn cmp(&self, other: &Self) -> By {
        other.answer_at.cmp(&self.answer_at)
    }
}

/// The request a client has open: statements still to send, and those in flight.
struct OpenRequest<L> {
    next: u64,
    ready_at: Instant,
    in_flight: BinaryHeap<InFlight<L>>,
}

/// One client.
pub struct PoolClient<P: Pool> {
    pool: Arc<P>,
    local: P::Local,
    shape: RequestShape,
    statements: u64,
    acquisition_only: bool,
    server: Option<Arc<Server>>,
    audit: Arc<Vec<AtomicUsize>>,
    audit_every: u32,
    audit_countdown: u32,
    limit: usize,
    over_limit: u64,
    request: Option<OpenRequest<P::Lease>>,
    first_request_at: Option<(u64, Duration)>,
    rng: harness::stats::SplitMix64,
    sent: u64,
    answered: u64,
    abandoned: u64,
    most_in_flight: usize,
    longest_wait: Duration,
    window: WindowTally,
}

/// What a client counts in the measured window only.
#[derive(Default)]
struct WindowTally {
    served: u64,
    points: u64,
    requests: u64,
    granted_at_once: u64,
    timeouts: u64,
    hold: Duration,
    opened_at: Option<Instant>,
    waits: Option<Histogram<u64>>,
}

impl<P: Pool> PoolClient<P> {
    fn waits(&mut self) -> &mut Histogram<u64> {
        self.window
            .waits
            .get_or_insert_with(harness::stats::new_histogram)
    }

    /// A lease, waiting at most `timeout`; the wait (when there is one) is timed.
    #[inline]
    fn lease(&mut self, ctx: &mut OpCtx, timeout: Duration) -> Option<(P::Lease, Hold)> {
        if let Some(lease) = self.pool.try_acquire(&mut self.local) {
            self.window.granted_at_once += 1;
            return Some((lease, ctx.acquired(LEASES, None)));
        }
        let start = Instant::now();
        let lease = self.pool.acquire(&mut self.local, timeout);
        let waited = start.elapsed();
        ctx.record_wait(waited);
        self.longest_wait = self.longest_wait.max(waited);
        self.waits().saturating_record(waited.as_nanos() as u64);
        lease.map(|lease| (lease, ctx.acquired(LEASES, Some(waited))))
    }

    /// Counts a statement in flight on its connection; returns the connection when this
    /// statement is audited.
    fn audit_in(&mut self, lease: &P::Lease) -> Option<usize> {
        self.audit_countdown -= 1;
        if self.audit_countdown != 0 {
            return None;
        }
        self.audit_countdown = self.audit_every;
        let c = self.pool.connection_of(lease);
        let in_flight = self.audit[c].fetch_add(1, Ordering::AcqRel) + 1;
        if in_flight > self.limit {
            self.over_limit += 1;
        }
        Some(c)
    }

    fn audit_out(&self, connection: Option<usize>) {
        if let Some(c) = connection {
            self.audit[c].fetch_sub(1, Ordering::AcqRel);
        }
    }

    /// Server CPU for `cpu` of work arriving now: when it is done and what it cost.
    fn charge(&self, now: Instant, cpu: Duration) -> Charge {
        match &self.server {
            Some(server) => server.schedule(now, cpu),
            None => Charge {
                done: now + cpu,
                cpu,
                gc: Duration::ZERO,
            },
        }
    }

    /// Acquisition only: acquire, audit (sampled), release; no clock read on the fast path.
    #[inline]
    fn cycle(&mut self, ctx: &mut OpCtx) -> Outcome {
        let Some((lease, mut hold)) = self.lease(ctx, self.shape.pool_timeout) else {
            self.window.timeouts += 1;
            return Outcome::timed_out(0);
        };
        let connection = self.audit_in(&lease);
        self.sent += 1;
        self.answered += 1;
        self.audit_out(connection);
        hold.end();
        self.pool.release(lease, &mut self.local);
        self.window.served += 1;
        self.window.points += self.shape.batch;
        Outcome::OK
    }

    /// Opens the next request: the server holds its datapoints and parses it; its
    /// statements go out when the parse is done. The first request starts part-way,
    /// already parsed and held since the client was made, after a delay of its own (see
    /// [`PoolWorkload::first_request_at`]).
    fn open_request(&mut self) {
        let now = Instant::now();
        let (next, ready_at) = match self.first_request_at.take() {
            Some((answered, delay)) => (answered, now + delay),
            None => {
                if let Some(server) = &self.server {
                    server.hold(self.shape.batch);
                }
                let parse = self.shape.parse_cpu();
                let ready_at = if parse.is_zero() {
                    now
                } else {
                    self.charge(now, parse).done
                };
                (0, ready_at)
            }
        };
        self.request = Some(OpenRequest {
            next,
            ready_at,
            in_flight: BinaryHeap::new(),
        });
    }

    /// Sends statement `index` of the open request on `lease`, at `sent_at` (now, or
    /// later in simulated time when an operation is completed there).
    fn send(&mut self, (lease, hold): (P::Lease, Hold), index: u64, sent_at: Instant) {
        let connection = self.audit_in(&lease);
        let points = self.shape.points_of(index);
        let charge = self.charge(sent_at, self.shape.statement_cpu(points));
        // The latency that uses no CPU varies, uniformly within half its mean either
        // side: networks and disks never answer in lockstep, and deterministic answers
        // would keep clients marching in step behind a first-come-first-served server.
        let latency = self
            .shape
            .statement_latency(points)
            .mul_f64(0.5 + self.rng.next_f64());
        let answer_at = charge.done + latency;
        self.sent += 1;
        let request = self.request.as_mut().expect("a request is open");
        request.next = index + 1;
        request.in_flight.push(InFlight {
            answer_at,
            sent_at,
            lease,
            hold,
            points,
            connection,
        });
        self.most_in_flight = self.most_in_flight.max(request.in_flight.len());
    }

    /// The earliest statement in flight is answered: its lease goes back, and the
    /// request is answered with its last statement.
    fn answer(&mut self) {
        let request = self.request.as_mut().expect("a request is open");
        let done = request.in_flight.pop().expect("a statement in flight");
        let closed = request.next == self.statements && request.in_flight.is_empty();
        self.audit_out(done.connection);
        // Answered early when completed in simulated time: it held its lease until its
        // answer was due.
        let held = done.answer_at.max(Instant::now()) - done.sent_at;
        done.hold.end_after(held);
        self.pool.release(done.lease, &mut self.local);
        self.answered += 1;
        self.window.served += 1;
        self.window.points += done.points;
        self.window.hold += held;
        if closed {
            self.close_request();
            self.window.requests += 1;
        }
    }

    fn close_request(&mut self) {
        self.request = None;
        if let Some(server) = &self.server {
            server.free(self.shape.batch);
        }
    }

    /// Requests that take time: runs until one statement is answered (see
    /// [`PoolClient::complete_in_simulated_time`] for the one under way at the close).
    fn statement(&mut self, ctx: &mut OpCtx) -> Outcome {
        let closes = ctx.window_ends_at();
        loop {
            let Some(request) = &self.request else {
                self.open_request();
                continue;
            };
            let now = Instant::now();
            if ctx.window_closed() {
                return self.complete_in_simulated_time(ctx, now);
            }
            // Wake often enough to see the window close: past its planned close, and
            // every so often in the warm-up, when the close is not known yet.
            let closes = Some(closes.map_or(now + WARMUP_POLL, |at| at.max(now + CLOSE_POLL)));
            let next_answer = request.in_flight.peek().map(|s| s.answer_at);
            if next_answer.is_some_and(|at| at <= now) {
                self.answer();
                return Outcome::OK;
            }
            let next = request.next;
            if next == self.statements || now < request.ready_at {
                // All sent, or the request not parsed yet: wait for what comes first, or
                // for the close of the window.
                let ready = (next < self.statements).then_some(request.ready_at);
                let at = match (next_answer, ready) {
                    (Some(a), Some(r)) => a.min(r),
                    (a, r) => a.or(r).expect("an answer or the parse to wait for"),
                };
                sleep_until(closes.map_or(at, |c| at.min(c)));
                continue;
            }
            // Wait for a lease, but no longer than this client's own next answer: its
            // statements come back (and free their leases) while it waits.
            let give_up = next_answer.unwrap_or(now + self.shape.pool_timeout);
            // A wait cut short to look for the close is not a timeout; a pool that says no
            // before the wait is over is.
            let until = closes.map_or(give_up, |c| give_up.min(c));
            match self.lease(ctx, until - now) {
                Some(lease) => self.send(lease, next, Instant::now()),
                None if next_answer.is_some() => {}
                None if until < give_up && Instant::now() >= until => {}
                None => return self.statement_timed_out(next),
            }
        }
    }

    /// The operation under way when the window closes: it started inside the window, so
    /// it counts, but its answer may be seconds away behind the server's queue. Its
    /// simulated times are already known (or, for a statement still to send, follow from
    /// when its request is parsed), so it is completed in simulated time, not slept out:
    /// the answer counts as it would have, and the cell ends without waiting for it.
    fn complete_in_simulated_time(&mut self, ctx: &mut OpCtx, now: Instant) -> Outcome {
        let request = self.request.as_ref().expect("a request is open");
        if request.in_flight.is_empty() {
            let (next, ready_at) = (request.next, request.ready_at);
            match self.lease(ctx, self.shape.pool_timeout) {
                Some(lease) => self.send(lease, next, ready_at.max(now)),
                None => return self.statement_timed_out(next),
            }
        }
        self.answer();
        Outcome::OK
    }

    /// Nothing in flight and no lease within the pool timeout: statement `index` fails,
    /// and its request goes on without it.
    fn statement_timed_out(&mut self, index: u64) -> Outcome {
        self.window.timeouts += 1;
        let request = self.request.as_mut().expect("a request is open");
        request.next = index + 1;
        if request.next == self.statements {
            self.close_request();
        }
        Outcome::timed_out(0)
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

fn sleep_until(at: Instant) {
    let now = Instant::now();
    if at > now {
        std::thread::sleep(at - now);
    }
}

impl<P: Pool> Worker for PoolClient<P> {
    #[inline]
    fn op(&mut self, ctx: &mut OpCtx) -> Outcome {
        if self.acquisition_only {
            self.cycle(ctx)
        } else {
            self.statement(ctx)
        }
    }

    fn window_opened(&mut self) {
        let mut waits = self.window.waits.take();
        if let Some(w) = waits.as_mut() {
            w.reset();
        }
        self.window = WindowTally {
            waits,
            opened_at: Some(Instant::now()),
            ..WindowTally::default()
        };
    }

    fn finish(&mut self) {
        // Statements still in flight when the window closes are abandoned at once (their
        // answers would only delay the end of the cell); their leases go back, and the
        // server lets go of the request.
        let unopened = self.first_request_at.take().is_some();
        let request = self.request.take();
        let held = unopened || request.is_some();
        if let Some(mut request) = request {
            while let Some(s) = request.in_flight.pop() {
                self.audit_out(s.connection);
                self.pool.release(s.lease, &mut self.local);
                self.abandoned += 1;
            }
        }
        if held {
            if let Some(server) = &self.server {
                server.free(self.shape.batch);
            }
        }
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
        let total = |f: fn(&WindowTally) -> Duration| {
            clients.iter().map(|c| f(&c.window)).sum::<Duration>()
        };
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
        if self.shape.service_time().is_zero() {
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
        let statements = self.shape.statements();
        if self.shape.split() {
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
        let pool_load = stats::per_second(hold.as_secs_f64(), window) / self.capacity as f64;
        put("pool_load", serde_json::json!(pool_load));
        // Little's law: at most `capacity` statements in flight, each for its service time
        // (the first statement's, the largest).
        let service = self.shape.statement_service().as_secs_f64();
        let ceiling = self.capacity as f64 / service;
        put("littles_law_ceiling", serde_json::json!(ceiling));
        put("ceiling_ratio", serde_json::json!(rate / ceiling));
        // Each client has at most one request open, each with all its statements in flight.
        let client_ceiling =
            clients.len() as f64 * statements as f64 / self.shape.service_time().as_secs_f64();
        put("client_ceiling", serde_json::json!(client_ceiling));
        // The window as the clients saw it open (the first of them) and its length.
        let opened = clients.iter().filter_map(|c| c.window.opened_at).min();
        let server_util = self.server.as_ref().zip(opened).map(|(s, opened)| {
            let busy = s.busy_between(opened, opened + window);
            let (cpu, gc) = (busy.cpu, busy.gc);
            let util = stats::per_second(cpu.as_secs_f64(), window) / s.cores() as f64;
            // Statements per second the cores could serve with no collection.
            let per_statement = self.shape.cpu_time().as_secs_f64() / statements as f64;
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

//! One closed-loop client (a worker thread): sends a request, holds a lease per
//! statement, waits for answers, and settles what is in flight at the window's close.
//! Tallies its window for the figures; not where the figures are computed (`figures`).

use std::cmp::Ordering as By;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use harness::locks::{Hold, LockId};
use harness::{OpCtx, Outcome, Worker};
use hdrhistogram::Histogram;

use crate::pools::Pool;
use crate::request::RequestShape;
use crate::server::{Charge, Server};

/// How often a client waiting past the planned close of the window looks whether it has
/// closed (a timer slip, usually well under a millisecond).
const CLOSE_POLL: Duration = Duration::from_millis(1);

/// How often a client waiting in the warm-up looks whether the window has closed: a wait
/// that began there (for a request parsed behind seconds of the server's queue) may
/// otherwise outlast the window.
const WARMUP_POLL: Duration = Duration::from_millis(100);

/// The lock table's id of the pool's leases (connections x max_requests slots).
pub(crate) const LEASES: LockId = LockId(0);

/// A statement sent and not yet answered: the lease it holds and when its answer comes.
pub(crate) struct InFlight<L> {
    pub(crate) answer_at: Instant,
    pub(crate) sent_at: Instant,
    pub(crate) lease: L,
    /// The lease's timer in the lock table, ended at the answer's (simulated) time.
    pub(crate) hold: Hold,
    pub(crate) points: u64,
    pub(crate) connection: Option<usize>,
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
pub(crate) struct OpenRequest<L> {
    pub(crate) next: u64,
    pub(crate) ready_at: Instant,
    pub(crate) in_flight: BinaryHeap<InFlight<L>>,
}

/// One client.
pub struct PoolClient<P: Pool> {
    pub(crate) pool: Arc<P>,
    pub(crate) local: P::Local,
    pub(crate) shape: RequestShape,
    pub(crate) statements: u64,
    pub(crate) acquisition_only: bool,
    pub(crate) server: Option<Arc<Server>>,
    pub(crate) audit: Arc<Vec<AtomicUsize>>,
    pub(crate) audit_every: u32,
    pub(crate) audit_countdown: u32,
    pub(crate) limit: usize,
    pub(crate) over_limit: u64,
    pub(crate) request: Option<OpenRequest<P::Lease>>,
    pub(crate) first_request_at: Option<(u64, Duration)>,
    pub(crate) rng: harness::stats::SplitMix64,
    pub(crate) sent: u64,
    pub(crate) answered: u64,
    pub(crate) abandoned: u64,
    pub(crate) most_in_flight: usize,
    pub(crate) longest_wait: Duration,
    pub(crate) window: WindowTally,
}

/// What a client counts in the measured window only.
#[derive(Default)]
pub(crate) struct WindowTally {
    pub(crate) served: u64,
    pub(crate) points: u64,
    pub(crate) requests: u64,
    pub(crate) granted_at_once: u64,
    pub(crate) timeouts: u64,
    pub(crate) hold: Duration,
    pub(crate) opened_at: Option<Instant>,
    pub(crate) waits: Option<Histogram<u64>>,
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

//! A request's shape: how many datapoints, how many statements, and what the simulated
//! server spends on it (parse CPU, per-statement CPU and latency). Arithmetic only: no
//! clients, no pool, no clock.

use std::time::Duration;

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
    pub(crate) fn split(&self) -> bool {
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

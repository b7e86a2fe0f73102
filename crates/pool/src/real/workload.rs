//! Closed-loop clients of a real pool: each of the lab's threads is one client that
//! picks a row and a statement (a read with probability `read_pct`, else a durable
//! write), runs it on a connection from the pool and starts the next. One operation is
//! one request answered.
//!
//! The invariants checked after every run: every request a client sent was answered,
//! timed out waiting or failed, and none failed; each read returned the row asked for
//! and each write updated one row; the counters in the table add up to the writes the
//! clients saw answered (the server's own count, read back); every connection is back
//! in the pool; no wait outlasted the pool's timeout.

use std::sync::Arc;
use std::time::Duration;

use harness::locks::{LockId, LockSet};
use harness::{OpCtx, Outcome, Worker, Workload};

use super::database::Database;
use super::figures::CellTally;
use super::pools::{Failed, RealPool};
use super::statement::Statement;
use super::timing::AcquireTally;

/// The lock table's id of the pool's connections.
const CONNECTIONS: LockId = LockId(0);

/// A cell's clients, pool and server.
pub struct RealWorkload<P: RealPool> {
    pool: Arc<P>,
    database: Arc<Database>,
    connections: usize,
    read_pct: u64,
    rows: u64,
    timeout: Duration,
}

impl<P: RealPool> RealWorkload<P> {
    /// Clients of `pool` (`connections` connections) on `database`, whose table has
    /// `rows` rows made afresh.
    pub fn new(
        pool: P,
        database: Arc<Database>,
        connections: usize,
        read_pct: u64,
        rows: u64,
        timeout: Duration,
    ) -> Self {
        RealWorkload {
            pool: Arc::new(pool),
            database,
            connections,
            read_pct,
            rows,
            timeout,
        }
    }
}

/// One client.
pub struct RealClient<P: RealPool> {
    pool: Arc<P>,
    rng: harness::stats::SplitMix64,
    read_pct: u64,
    rows: u64,
    sent: u64,
    answered: u64,
    timed_out: u64,
    failed: u64,
    reads: u64,
    writes: u64,
    rows_read: u64,
    rows_written: u64,
    first_error: Option<String>,
    longest_wait: Duration,
    window: WindowTally,
}

/// What a client counts in the measured window only.
#[derive(Default)]
struct WindowTally {
    times: AcquireTally,
    reads: u64,
    writes: u64,
    timeouts: u64,
}

impl<P: RealPool> Worker for RealClient<P> {
    fn op(&mut self, ctx: &mut OpCtx) -> Outcome {
        let id = 1 + self.rng.below(self.rows as usize) as i32;
        let statement = if (self.rng.below(100) as u64) < self.read_pct {
            Statement::Read(id)
        } else {
            Statement::Write(id)
        };
        self.sent += 1;
        match self.pool.request(statement) {
            Ok((timing, rows)) => {
                let wait = timing.wait();
                if let Some(w) = wait {
                    ctx.record_wait(w);
                    self.longest_wait = self.longest_wait.max(w);
                }
                ctx.acquired(CONNECTIONS, wait)
                    .end_after(timing.end.saturating_duration_since(timing.got));
                self.answered += 1;
                self.rows_read += rows.read;
                self.rows_written += rows.written;
                self.window.times.record(&timing);
                match statement {
                    Statement::Read(_) => {
                        self.reads += 1;
                        self.window.reads += 1;
                    }
                    Statement::Write(_) => {
                        self.writes += 1;
                        self.window.writes += 1;
                    }
                }
                Outcome::OK
            }
            Err(Failed::TimedOut(timing)) => {
                if let Some(w) = timing.wait() {
                    ctx.record_wait(w);
                    self.longest_wait = self.longest_wait.max(w);
                }
                self.timed_out += 1;
                self.window.times.record(&timing);
                self.window.timeouts += 1;
                Outcome::timed_out(0)
            }
            Err(Failed::Error(e)) => {
                self.failed += 1;
                self.first_error.get_or_insert(e);
                Outcome::failed(0)
            }
        }
    }

    fn window_opened(&mut self) {
        self.window = WindowTally::default();
    }
}

impl<P: RealPool> Workload for RealWorkload<P> {
    type Worker = RealClient<P>;

    // Measured: a client blocks in the pool (timed as the wait) or on the server's answer
    // (the request's work, not a wait on a shared resource of the lab's).
    fn waits_measured(&self) -> bool {
        true
    }

    fn locks(&self) -> Option<LockSet> {
        Some(
            LockSet::new()
                .with(CONNECTIONS, "connections", self.connections as u32)
                .unnamed("the pool's own locks and queues inside get and release"),
        )
    }

    fn worker(&self, index: usize, _threads: usize) -> RealClient<P> {
        RealClient {
            pool: Arc::clone(&self.pool),
            rng: harness::stats::SplitMix64::new(0x9e37_79b9 ^ index as u64),
            read_pct: self.read_pct,
            rows: self.rows,
            sent: 0,
            answered: 0,
            timed_out: 0,
            failed: 0,
            reads: 0,
            writes: 0,
            rows_read: 0,
            rows_written: 0,
            first_error: None,
            longest_wait: Duration::ZERO,
            window: WindowTally::default(),
        }
    }

    fn verify(&self, clients: &[RealClient<P>]) -> Result<(), String> {
        let sum = |f: fn(&RealClient<P>) -> u64| clients.iter().map(f).sum::<u64>();
        let failed = sum(|c| c.failed);
        if let Some(e) = clients.iter().find_map(|c| c.first_error.as_ref()) {
            return Err(format!("{failed} requests failed; the first: {e}"));
        }
        let (sent, answered, timed_out) =
            (sum(|c| c.sent), sum(|c| c.answered), sum(|c| c.timed_out));
        if sent != answered + timed_out + failed {
            return Err(format!(
                "{sent} requests sent but {answered} answered, {timed_out} timed out and {failed} failed"
            ));
        }
        let (reads, writes) = (sum(|c| c.reads), sum(|c| c.writes));
        let (rows_read, rows_written) = (sum(|c| c.rows_read), sum(|c| c.rows_written));
        if rows_read != reads || rows_written != writes {
            return Err(format!(
                "{reads} reads and {writes} writes answered, but {rows_read} rows read and {rows_written} written"
            ));
        }
        let committed = self.database.committed_writes()?;
        if committed != writes as i64 {
            return Err(format!(
                "{writes} writes answered but the table's counters add up to {committed}"
            ));
        }
        let idle = self.pool.idle();
        if idle != self.connections {
            return Err(format!(
                "{idle} of {} connections idle in the pool after the run",
                self.connections
            ));
        }
        let slack = self.timeout + Duration::from_secs(1);
        if let Some(c) = clients.iter().find(|c| c.longest_wait > slack) {
            return Err(format!(
                "a client waited {:?} for a connection, past the pool timeout",
                c.longest_wait
            ));
        }
        Ok(())
    }

    fn extra(
        &self,
        clients: &[RealClient<P>],
        window: Duration,
    ) -> serde_json::Map<String, serde_json::Value> {
        let mut cell = CellTally::default();
        for c in clients {
            cell.times.add(&c.window.times);
            cell.reads += c.window.reads;
            cell.writes += c.window.writes;
            cell.timeouts += c.window.timeouts;
            cell.starved += u64::from(c.window.reads + c.window.writes == 0);
        }
        super::figures::extra(&cell, self.connections, window)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::super::statement::Rows;
    use super::super::timing::Timing;
    use super::*;

    /// A pool that answers at once and says it wrote `written` rows per write.
    struct Fake {
        written: u64,
    }

    impl RealPool for Fake {
        fn request(&self, statement: Statement) -> Result<(Timing, Rows), Failed> {
            let now = Instant::now();
            let timing = Timing {
                start: now,
                waited_from: None,
                got: now,
                end: now,
            };
            match statement {
                Statement::Read(_) => Ok((
                    timing,
                    Rows {
                        read: 1,
                        written: 0,
                    },
                )),
                Statement::Write(_) => Ok((
                    timing,
                    Rows {
                        read: 0,
                        written: self.written,
                    },
                )),
            }
        }
        fn idle(&self) -> usize {
            1
        }
    }

    fn run(pool: Fake, read_pct: u64) -> Result<(), String> {
        // No server is reached before the checks that fail here.
        let database = Arc::new(Database::open("host=/nonexistent port=1", &[]).unwrap());
        let w = RealWorkload::new(pool, database, 1, read_pct, 10, Duration::from_secs(1));
        let m = harness::runner::run(&w, harness::testing::settings(2, 5, 20)).unwrap();
        m.verified
    }

    #[test]
    fn a_write_the_server_did_not_count_fails_the_run() {
        let e = run(Fake { written: 0 }, 0).unwrap_err();
        assert!(e.contains("0 written"), "{e}");
    }

    #[test]
    fn with_the_rows_right_the_server_is_asked_for_its_count() {
        // Every write counted one row: the next check is the server's sum, which this
        // unreachable server cannot give, and the run says so in one line.
        let e = run(Fake { written: 1 }, 50).unwrap_err();
        assert!(e.contains("/nonexistent") && !e.contains('\n'), "{e}");
    }
}

//! How one transaction runs through a runner's gates: the breaker, the semaphore, a
//! connection of the shard's backend, and busy errors retried with backoff. Not here: how
//! the shards were made ([`super::build`]).

use std::time::{Duration, Instant};

use harness::locks::Held;
use harness::OpCtx;
use parking_lot::Mutex;
use rand::Rng;
use rusqlite::{Connection, TransactionBehavior};

use super::{Shard, TxnRunner};
use crate::db::{self, ReadResult};
use crate::gate::{self, lock_ids, Admit, BreakerMode};
use crate::libdqlite;

/// What one transaction cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TxnCost {
    /// Attempts after the first.
    pub retries: u32,
    /// Busy or locked errors met.
    pub busy_errors: u32,
    /// Time slept in backoff.
    pub backoff: Duration,
    /// Client connections made (`backend=dqlite`).
    pub connects: u32,
    /// Turned away by an open breaker without touching the database.
    pub rejected: bool,
    /// Time spent waiting for a semaphore slot, every attempt (zero without one).
    pub gate_wait: Duration,
    /// Time spent inside the gate, every attempt: from the slot taken (or, without a
    /// semaphore, from where it would be taken) to the attempt's end. What `gate_ms_per_txn`
    /// reports for both clients, the lab's and the Go one.
    pub gate_held: Duration,
}

/// A transaction the workload asks for.
#[derive(Debug, Clone, Copy)]
pub enum Txn<'a> {
    /// Read a unit.
    Read {
        /// Model index.
        model: usize,
        /// Unit name.
        unit: &'a str,
    },
    /// Write a unit's status.
    Write {
        /// Model index.
        model: usize,
        /// Unit name.
        unit: &'a str,
        /// The new status (unique per write, so verification can find it).
        status: &'a str,
    },
}

/// What a transaction returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TxnResult {
    /// A read's view.
    Read(ReadResult),
    /// A write's new version.
    Written(i64),
}

impl TxnRunner {
    /// Runs one transaction through the design's gates, retrying busy errors with backoff.
    pub fn run(
        &self,
        txn: Txn<'_>,
        ctx: &mut OpCtx,
        rng: &mut impl Rng,
    ) -> (Result<TxnResult, String>, TxnCost) {
        let model = match txn {
            Txn::Read { model, .. } | Txn::Write { model, .. } => model,
        };
        let shard = &self.shards[self.shard_of_model[model]];
        let name = &self.model_names[model];
        let mut cost = TxnCost::default();
        let mut probe = false;
        if let Some(b) = &self.breaker {
            if b.mode() == BreakerMode::Reject {
                match b.admit() {
                    Admit::Pass => {}
                    Admit::Probe => probe = true,
                    Admit::Reject => {
                        cost.rejected = true;
                        return (Err("turned away: the breaker is open".to_owned()), cost);
                    }
                }
            }
        }
        for attempt in 0..gate::MAX_ATTEMPTS {
            if let Some(b) = &self.breaker {
                if b.mode() == BreakerMode::Park {
                    b.wait_while_open(ctx);
                }
            }
            let result = {
                let asked = Instant::now();
                let _permit = shard.semaphore.as_ref().map(|s| s.acquire(ctx));
                let entered = Instant::now();
                cost.gate_wait += entered - asked;
                let r = self.attempt(shard, name, txn, ctx, &mut cost);
                cost.gate_held += entered.elapsed();
                r
            };
            match result {
                Ok(r) => {
                    if let Some(b) = &self.breaker {
                        b.on_success(probe);
                    }
                    return (Ok(r), cost);
                }
                Err(e) if db::is_busy(&e) => {
                    cost.busy_errors += 1;
                    if let Some(b) = &self.breaker {
                        b.on_busy(probe);
                        // A probe that failed has had its say; the rest is an ordinary retry.
                        probe = false;
                    }
                    if attempt + 1 == gate::MAX_ATTEMPTS {
                        break;
                    }
                    cost.retries += 1;
                    let delay = gate::backoff(attempt, rng);
                    let start = Instant::now();
                    std::thread::sleep(delay);
                    // A backoff sleep is time blocked on the database, like a lock wait.
                    let slept = start.elapsed();
                    cost.backoff += slept;
                    ctx.record_wait(slept);
                }
                Err(e) => return (Err(format!("SQLite: {e}")), cost),
            }
        }
        (
            Err(format!(
                "gave up after {} busy attempts",
                gate::MAX_ATTEMPTS
            )),
            cost,
        )
    }

    fn attempt(
        &self,
        shard: &Shard,
        model: &str,
        txn: Txn<'_>,
        ctx: &mut OpCtx,
        cost: &mut TxnCost,
    ) -> rusqlite::Result<TxnResult> {
        if let Some(real) = &shard.real {
            let model_index = match txn {
                Txn::Read { model, .. } | Txn::Write { model, .. } => model,
            };
            let (mut conn, new) = real.get(ctx, model_index).map_err(libdqlite::to_sqlite)?;
            cost.connects += u32::from(new);
            let result = match txn {
                Txn::Read { unit, .. } => real
                    .read_txn(ctx, &mut conn, model, unit)
                    .map(TxnResult::Read),
                Txn::Write { unit, status, .. } => real
                    .write_txn(ctx, &mut conn, model, unit, status)
                    .map(TxnResult::Written),
            };
            real.put(conn);
            return result.map_err(libdqlite::to_sqlite);
        }
        if let Some(app) = &shard.app {
            let (conn, new) = app.get(ctx).map_err(|_| rusqlite::Error::InvalidQuery)?;
            cost.connects += u32::from(new);
            let result = match txn {
                Txn::Read { unit, .. } => {
                    app.read_txn(ctx, &conn, model, unit).map(TxnResult::Read)
                }
                Txn::Write { unit, status, .. } => app
                    .write_txn(ctx, &conn, model, unit, status)
                    .map(TxnResult::Written),
            };
            app.put(conn);
            return result;
        }
        match txn {
            Txn::Read { unit, .. } => {
                let read =
                    |conn: &mut Connection| db::read_txn(conn, model, unit).map(TxnResult::Read);
                match (&shard.single, &shard.pool) {
                    (Some(single), _) => read(&mut lock(single, ctx)),
                    (None, Some(pool)) => read(&mut pool.get(ctx)),
                    (None, None) => unreachable!("every design has a single connection or a pool"),
                }
            }
            Txn::Write { unit, status, .. } => {
                // SQLite's write lock, as the runner sees it: held from the return of a
                // successful write's UPDATE (which took it) to the end of its COMMIT, one
                // lock per database file; a write that met busy errors first waited for it
                // (the backoff slept so far).
                let write = |conn: &mut Connection,
                             behavior,
                             ctx: &mut OpCtx|
                 -> rusqlite::Result<TxnResult> {
                    let (written, start) =
                        db::write_txn_locked_at(conn, behavior, model, unit, status)?;
                    let waited = (cost.busy_errors > 0).then_some(cost.backoff);
                    ctx.acquired(lock_ids::SQLITE_WRITE, waited)
                        .end_after(start.elapsed());
                    Ok(TxnResult::Written(written))
                };
                match (&shard.single, &shard.writer, &shard.pool) {
                    (Some(single), _, _) => {
                        let mut conn = lock(single, ctx);
                        write(&mut conn, TransactionBehavior::Deferred, ctx)
                    }
                    (None, Some(writer), _) => {
                        let mut conn = lock(writer, ctx);
                        write(&mut conn, TransactionBehavior::Immediate, ctx)
                    }
                    (None, None, Some(pool)) => {
                        let mut conn = pool.get(ctx);
                        write(&mut conn, TransactionBehavior::Deferred, ctx)
                    }
                    (None, None, None) => unreachable!("every design has somewhere to write"),
                }
            }
        }
    }
}

fn lock<'m>(
    m: &'m Mutex<Connection>,
    ctx: &mut OpCtx,
) -> Held<parking_lot::MutexGuard<'m, Connection>> {
    ctx.lock(lock_ids::CONNECTION, || m.try_lock(), || m.lock())
}

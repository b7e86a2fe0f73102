//! The transaction runner in each of its designs (the variants). A design is a real
//! arrangement of gates in front of real SQLite connections:
//!
//! | variant | in front of SQLite |
//! |---|---|
//! | `single-conn` | one connection behind a mutex |
//! | `pool` | P connections, any free one per transaction, DEFERRED, busy retried with backoff |
//! | `semaphore` | the pool plus a K-slot semaphore around every transaction |
//! | `rw-split` | one writer connection (BEGIN IMMEDIATE) plus P read-only connections |
//! | `sharded` | S database files, each with its own pool and K-slot semaphore; namespaces hashed to a shard, the controller on shard 0 |
//! | `breaker` | the pool plus a circuit breaker that parks (or, `breaker_mode=reject`, turns away) transactions after repeated busy errors |
//!
//! With `backend=local` the connections are in-process SQLite; with `backend=dqlite-model`
//! each shard is an app of [`crate::dqlite`] (one serving thread, a round trip per
//! statement, writes committed through "Raft") and the pool is that app's client pool; with
//! `backend=libdqlite` each shard is a real dqlite node in this process
//! ([`crate::libdqlite`]) with a client pool per database.
//!
//! `sharded` shares the same totals as the unsharded designs by default
//! (`shard_resources=split`: `pool_size` connections and `slots` permits divided across
//! the shards, at least one each); `shard_resources=each` gives every shard its own full
//! pool and semaphore, as the seed's three dqlite apps had.
//!
//! The databases live in a private temporary folder that goes away with the runner.

use std::path::Path;
use std::time::{Duration, Instant};

use harness::OpCtx;
use parking_lot::Mutex;
use rand::Rng;
use rusqlite::{Connection, TransactionBehavior};
use tempfile::TempDir;

use crate::db::{self, DbSettings, ReadResult};
use crate::dqlite::{AppConfig, DqliteApp};
use crate::gate::{self, lock_ids, Admit, Breaker, BreakerMode, Pool, Semaphore};
use crate::libdqlite::node::Bind;
use crate::libdqlite::{self, App, Databases};
use harness::locks::{Held, LockSet};

/// The designs, by variant name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Design {
    /// `single-conn`
    SingleConn,
    /// `pool`
    Pool,
    /// `semaphore`
    Semaphore,
    /// `rw-split`
    RwSplit,
    /// `sharded`
    Sharded,
    /// `breaker`
    Breaker,
}

impl Design {
    /// Parses a variant name.
    pub fn parse(name: &str) -> Result<Design, String> {
        Ok(match name {
            "single-conn" => Design::SingleConn,
            "pool" => Design::Pool,
            "semaphore" => Design::Semaphore,
            "rw-split" => Design::RwSplit,
            "sharded" => Design::Sharded,
            "breaker" => Design::Breaker,
            _ => return Err(format!("unknown variant {name:?} of sqlmix")),
        })
    }
}

/// Where the SQL runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// In-process SQLite; busy errors come back at once and the runner backs off.
    Local,
    /// The model of dqlite's serving path, an app per shard ([`crate::dqlite`];
    /// `backend=dqlite-model`, formerly `dqlite`).
    Dqlite {
        /// Round trip per request.
        rtt: Duration,
        /// Serving-thread time per request.
        serve: Duration,
        /// Raft commit time of a write.
        commit: Duration,
        /// Idle client connections kept per app.
        idle_conns: usize,
    },
    /// A real dqlite node per shard, in this process ([`crate::libdqlite`]).
    Libdqlite {
        /// Idle client connections kept per database.
        idle_conns: usize,
        /// One database per model or per app.
        databases: Databases,
        /// The client's own time after each request (`client_us`).
        client_cost: Duration,
    },
}

impl Backend {
    /// The `backend` word for this backend, as results record it.
    pub fn word(&self) -> &'static str {
        match self {
            Backend::Local => "local",
            Backend::Dqlite { .. } => "dqlite-model",
            Backend::Libdqlite { .. } => "libdqlite",
        }
    }
}

/// How `sharded` shares connections and permits between its shards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShardResources {
    /// The totals of the unsharded designs, divided across the shards (at least 1 each).
    Split,
    /// Every shard gets the full `pool_size` and `slots`.
    Each,
}

/// Accepted `shard_resources` values.
pub const SHARD_RESOURCES: &[&str] = &["split", "each"];

impl ShardResources {
    /// The word for the report.
    pub fn word(self) -> &'static str {
        match self {
            ShardResources::Split => "split",
            ShardResources::Each => "each",
        }
    }
}

/// Shard `index`'s part of `total` split over `shards`: the remainder goes to the first
/// shards, and every shard gets at least one.
pub fn share(total: usize, shards: usize, index: usize) -> usize {
    let shards = shards.max(1);
    (total / shards + usize::from(index < total % shards)).max(1)
}

/// How the runner is built.
#[derive(Debug, Clone)]
pub struct RunnerConfig {
    /// Which design.
    pub design: Design,
    /// Model namespaces.
    pub models: usize,
    /// Units per model.
    pub units: usize,
    /// Connections per pool.
    pub pool_size: usize,
    /// Semaphore slots; `None` = no semaphore.
    pub slots: Option<usize>,
    /// Database files for `sharded` (1 for the others).
    pub shards: usize,
    /// SQLite settings.
    pub db: DbSettings,
    /// Where the private temporary folder is made (`None`: the system's).
    pub data_dir: Option<std::path::PathBuf>,
    /// Where the SQL runs.
    pub backend: Backend,
    /// How `sharded` shares the pool and the permits.
    pub shard_resources: ShardResources,
    /// What `breaker` does while open.
    pub breaker_mode: BreakerMode,
    /// Where a `backend=libdqlite` node listens.
    pub dqlite_bind: Bind,
}

struct Shard {
    app: Option<DqliteApp>,
    real: Option<App>,
    single: Option<Mutex<Connection>>,
    writer: Option<Mutex<Connection>>,
    pool: Option<Pool>,
    semaphore: Option<Semaphore>,
}

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

/// The transaction runner: shards of gated connections and their databases.
pub struct TxnRunner {
    design: Design,
    shards: Vec<Shard>,
    breaker: Option<Breaker>,
    model_names: Vec<String>,
    shard_of_model: Vec<usize>,
    paths: Vec<std::path::PathBuf>,
    resources: Vec<(usize, Option<usize>)>,
    backend: Backend,
    shard_split: ShardResources,
    // Last: the folder is removed after every connection above has closed.
    dir: TempDir,
}

/// FNV-1a, a stable hash so a namespace always lands on the same shard.
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf29ce484222325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100000001b3)
    })
}

impl TxnRunner {
    /// Creates the databases, seeds them and opens the connections.
    pub fn new(config: &RunnerConfig) -> Result<TxnRunner, String> {
        let dir =
            harness::scratch::private_folder(config.data_dir.as_deref(), "contention-lab-sqlmix-")?;
        let shards = if config.design == Design::Sharded {
            config.shards.max(1)
        } else {
            1
        };
        let model_names: Vec<String> = (0..config.models).map(db::model_name).collect();
        let shard_of_model: Vec<usize> = model_names
            .iter()
            .enumerate()
            .map(|(i, name)| {
                if i == 0 {
                    0
                } else {
                    (fnv1a(name) % shards as u64) as usize
                }
            })
            .collect();
        let sql = |e: rusqlite::Error| format!("SQLite: {e}");
        let mut built = Vec::new();
        let mut paths = Vec::new();
        let mut resources = Vec::new();
        for s in 0..shards {
            let mine: Vec<usize> = (0..config.models)
                .filter(|&m| shard_of_model[m] == s)
                .collect();
            let (pool_size, slots) = match config.shard_resources {
                ShardResources::Split if shards > 1 => (
                    share(config.pool_size, shards, s),
                    config.slots.map(|k| share(k, shards, s)),
                ),
                _ => (config.pool_size, config.slots),
            };
            let gated = matches!(config.design, Design::Semaphore | Design::Sharded);
            resources.push((pool_size, slots.filter(|_| gated)));
            if let Backend::Libdqlite { .. } = config.backend {
                let node_dir = dir.path().join(format!("node-{s}"));
                built.push(Self::real(config, s, &node_dir, &mine, pool_size, slots)?);
                continue;
            }
            let path = dir.path().join(format!("shard-{s}.db"));
            let mut conn = db::open(&path, config.db).map_err(sql)?;
            db::create(&mut conn, &mine, config.units).map_err(sql)?;
            built.push(Self::gates(config, s, &path, conn, pool_size, slots)?);
            paths.push(path);
        }
        Ok(TxnRunner {
            design: config.design,
            shards: built,
            breaker: (config.design == Design::Breaker)
                .then(|| Breaker::with_mode(8, Duration::from_millis(5), config.breaker_mode)),
            model_names,
            shard_of_model,
            paths,
            resources,
            backend: config.backend,
            shard_split: config.shard_resources,
            dir,
        })
    }

    /// Shard `index` as a real dqlite node with the design's gates in front of it.
    fn real(
        config: &RunnerConfig,
        index: usize,
        dir: &Path,
        models: &[usize],
        pool_size: usize,
        slots: Option<usize>,
    ) -> Result<Shard, String> {
        let Backend::Libdqlite {
            idle_conns,
            databases,
            client_cost,
        } = config.backend
        else {
            unreachable!("called for backend=libdqlite only")
        };
        let max_open = match config.design {
            Design::SingleConn => 1,
            Design::RwSplit => return Err(
                "variant rw-split with backend=libdqlite: dqlite has no read-only connections; accepted with libdqlite: single-conn, pool, semaphore, sharded, breaker".to_owned(),
            ),
            _ => pool_size,
        };
        let app = App::start(
            index,
            dir,
            &config.dqlite_bind,
            databases,
            models,
            config.units,
            max_open,
            idle_conns.min(max_open),
        )?
        .with_client_cost(client_cost);
        Ok(Shard {
            app: None,
            real: Some(app),
            single: None,
            writer: None,
            pool: None,
            semaphore: match config.design {
                Design::Semaphore | Design::Sharded => slots.map(Semaphore::new),
                _ => None,
            },
        })
    }

    fn gates(
        config: &RunnerConfig,
        index: usize,
        path: &Path,
        first: Connection,
        pool_size: usize,
        slots: Option<usize>,
    ) -> Result<Shard, String> {
        let sql = |e: rusqlite::Error| format!("SQLite: {e}");
        let pool = |first: Option<Connection>| -> rusqlite::Result<Pool> {
            let mut conns: Vec<Connection> = first.into_iter().collect();
            while conns.len() < pool_size {
                conns.push(db::open(path, config.db)?);
            }
            Ok(Pool::new(conns))
        };
        let semaphore = match config.design {
            Design::Semaphore | Design::Sharded => slots.map(Semaphore::new),
            _ => None,
        };
        if let Backend::Dqlite {
            rtt,
            serve,
            commit,
            idle_conns,
        } = config.backend
        {
            if config.design == Design::RwSplit {
                return Err(
                    "variant rw-split with backend=dqlite-model: dqlite has no read-only connections; accepted with dqlite-model: single-conn, pool, semaphore, sharded, breaker".to_owned(),
                );
            }
            // The seeding connection closes: the app opens its own on its serving thread.
            drop(first);
            let max_open = if config.design == Design::SingleConn {
                1
            } else {
                pool_size
            };
            let app = DqliteApp::start(
                index,
                path,
                config.db,
                AppConfig {
                    rtt,
                    serve,
                    commit,
                    max_open,
                    max_idle: idle_conns.min(max_open),
                },
            )?;
            return Ok(Shard {
                app: Some(app),
                real: None,
                single: None,
                writer: None,
                pool: None,
                semaphore,
            });
        }
        Ok(match config.design {
            Design::SingleConn => Shard {
                app: None,
                real: None,
                single: Some(Mutex::new(first)),
                writer: None,
                pool: None,
                semaphore,
            },
            Design::RwSplit => {
                let readers = (0..pool_size)
                    .map(|_| db::open_read_only(path))
                    .collect::<rusqlite::Result<_>>()
                    .map_err(sql)?;
                Shard {
                    app: None,
                    real: None,
                    single: None,
                    writer: Some(Mutex::new(first)),
                    pool: Some(Pool::new(readers)),
                    semaphore,
                }
            }
            _ => Shard {
                app: None,
                real: None,
                single: None,
                writer: None,
                pool: Some(pool(Some(first)).map_err(sql)?),
                semaphore,
            },
        })
    }

    /// The model namespace names, index = model.
    pub fn model_name(&self, model: usize) -> &str {
        &self.model_names[model]
    }

    /// The database files.
    pub fn paths(&self) -> &[std::path::PathBuf] {
        &self.paths
    }

    /// The private folder holding the databases.
    pub fn folder(&self) -> &Path {
        self.dir.path()
    }

    /// Connections and permits of each shard: (connections, permits or `None` for no
    /// semaphore).
    pub fn shard_resources(&self) -> Vec<(usize, Option<usize>)> {
        self.resources.clone()
    }

    /// Where the SQL runs.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// How `sharded` shared its resources (`None` for the unsharded designs).
    pub fn shard_split(&self) -> Option<ShardResources> {
        (self.design == Design::Sharded).then_some(self.shard_split)
    }

    /// Client connections the dqlite apps have made since the start (0 for local).
    pub fn connects(&self) -> u64 {
        self.shards
            .iter()
            .filter_map(|s| s.app.as_ref())
            .map(DqliteApp::connects)
            .chain(
                self.shards
                    .iter()
                    .filter_map(|s| s.real.as_ref())
                    .map(App::connects),
            )
            .sum()
    }

    /// The real dqlite apps, shard by shard (empty unless `backend=libdqlite`).
    pub fn real_apps(&self) -> impl Iterator<Item = &App> {
        self.shards.iter().filter_map(|s| s.real.as_ref())
    }

    /// What the databases hold: every unit row (model, unit, version, agent status) and
    /// every event payload, read from the files or, for `backend=libdqlite`, through the
    /// nodes.
    pub fn stored(&self) -> Result<crate::workload::Stored, String> {
        let mut stored = crate::workload::Stored::default();
        for app in self.real_apps() {
            let mine = app.stored()?;
            stored.units.extend(mine.units);
            stored.payloads.extend(mine.payloads);
        }
        for path in &self.paths {
            let conn =
                Connection::open(path).map_err(|e| format!("reopening {}: {e}", path.display()))?;
            stored
                .units
                .extend(db::all_units(&conn).map_err(|e| format!("reading units: {e}"))?);
            stored
                .payloads
                .extend(db::all_payloads(&conn).map_err(|e| format!("reading events: {e}"))?);
        }
        Ok(stored)
    }

    /// Times the breaker opened (`breaker` only).
    pub fn breaker_trips(&self) -> Option<u64> {
        self.breaker.as_ref().map(Breaker::trips)
    }

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
                let _permit = shard.semaphore.as_ref().map(|s| s.acquire(ctx));
                self.attempt(shard, name, txn, ctx, &mut cost)
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

    /// The gates and locks this runner's design takes, as the lock table names them
    /// (every shard's together: the table's K is their sum).
    pub fn locks(&self) -> LockSet {
        let sum = |f: fn(&Shard) -> Option<usize>| -> Option<u32> {
            let k: usize = self.shards.iter().filter_map(f).sum();
            (k > 0).then_some(k as u32)
        };
        let mut set = LockSet::new();
        if let Some(k) = sum(|s| s.semaphore.as_ref().map(Semaphore::slots)) {
            set = set.with(lock_ids::SEMAPHORE, "transaction semaphore", k);
        }
        if let Some(k) = sum(|s| s.pool.as_ref().map(Pool::size)) {
            let name = if self.design == Design::RwSplit {
                "read-only connections"
            } else {
                "connection pool"
            };
            set = set.with(lock_ids::POOL, name, k);
        }
        if let Some(k) = sum(|s| s.single.as_ref().or(s.writer.as_ref()).map(|_| 1)) {
            let name = if self.design == Design::RwSplit {
                "writer connection mutex"
            } else {
                "connection mutex"
            };
            set = set.with(lock_ids::CONNECTION, name, k);
        }
        if self.breaker.is_some() {
            set = set.unnamed("the breaker's state lock");
        }
        if self.shards.iter().any(|s| s.app.is_some()) {
            return set.unnamed(
                "the dqlite app's client pool, serving thread and write lock (backend=dqlite)",
            );
        }
        set.with(
            lock_ids::SQLITE_WRITE,
            "SQLite write lock (a write's UPDATE to COMMIT)",
            self.shards.len() as u32,
        )
        .unnamed("SQLite's other internal locks (WAL index, checkpoints)")
    }

    /// Which design this runner is.
    pub fn design(&self) -> Design {
        self.design
    }
}

fn lock<'m>(
    m: &'m Mutex<Connection>,
    ctx: &mut OpCtx,
) -> Held<parking_lot::MutexGuard<'m, Connection>> {
    ctx.lock(lock_ids::CONNECTION, || m.try_lock(), || m.lock())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controller_is_pinned_to_shard_zero_and_models_spread() {
        let config = RunnerConfig {
            design: Design::Sharded,
            models: 30,
            units: 2,
            pool_size: 1,
            slots: Some(2),
            shards: 3,
            db: DbSettings {
                journal_mode: "wal",
                synchronous: "normal",
            },
            data_dir: None,
            backend: Backend::Local,
            shard_resources: ShardResources::Each,
            breaker_mode: BreakerMode::Park,
            dqlite_bind: Bind::Abstract,
        };
        let runner = TxnRunner::new(&config).unwrap();
        assert_eq!(runner.shard_of_model[0], 0);
        for s in 0..3 {
            assert!(
                runner.shard_of_model.iter().filter(|&&x| x == s).count() >= 3,
                "{:?}",
                runner.shard_of_model
            );
        }
        assert_eq!(runner.paths().len(), 3);
        let folder = runner.folder().to_path_buf();
        assert!(folder.is_dir());
        drop(runner);
        assert!(!folder.exists(), "the private folder goes with the runner");
    }

    #[test]
    fn split_shards_share_the_unsharded_totals() {
        assert_eq!((0..3).map(|s| share(4, 3, s)).sum::<usize>(), 4);
        assert_eq!(
            (0..3).map(|s| share(2, 3, s)).collect::<Vec<_>>(),
            [1, 1, 1]
        );
        assert_eq!((0..2).map(|s| share(12, 2, s)).collect::<Vec<_>>(), [6, 6]);
    }
}

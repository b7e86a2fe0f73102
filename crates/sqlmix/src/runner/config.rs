//! How a transaction runner is built: its design, where its SQL runs and how `sharded`
//! shares its resources. Plain data, read from a cell's parameters by
//! [`crate::variants`]; nothing here opens a database.

use std::time::Duration;

use crate::db::DbSettings;
use crate::gate::BreakerMode;
use crate::libdqlite::node::Bind;
use crate::libdqlite::Databases;

/// The designs, one per variant; each variant's name and summary are its entry in
/// [`crate::variants`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Design {
    /// One connection behind a mutex.
    SingleConn,
    /// P connections, any free one per transaction.
    Pool,
    /// The pool plus a K-slot semaphore around every transaction.
    Semaphore,
    /// One writer connection plus P read-only connections.
    RwSplit,
    /// S database files, each with its own pool and semaphore.
    Sharded,
    /// The pool plus a circuit breaker.
    Breaker,
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

//! The transaction runner in each of its designs (the variants, whose names and summaries
//! are in [`crate::variants`]). A design is a real arrangement of gates in front of real
//! SQLite connections:
//!
//! | [`Design`] | in front of SQLite |
//! |---|---|
//! | `SingleConn` | one connection behind a mutex |
//! | `Pool` | P connections, any free one per transaction, DEFERRED, busy retried with backoff |
//! | `Semaphore` | the pool plus a K-slot semaphore around every transaction |
//! | `RwSplit` | one writer connection (BEGIN IMMEDIATE) plus P read-only connections |
//! | `Sharded` | S database files, each with its own pool and K-slot semaphore; namespaces hashed to a shard, the controller on shard 0 |
//! | `Breaker` | the pool plus a circuit breaker that parks (or, `breaker_mode=reject`, turns away) transactions after repeated busy errors |
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
//!
//! Here: the runner and what it reports; [`config`] how it is configured, [`build`] how
//! each backend's shards are made, [`txn`] how a transaction runs through the gates.

mod build;
mod config;
mod txn;

use std::path::Path;

use harness::locks::LockSet;
use parking_lot::Mutex;
use rusqlite::Connection;
use tempfile::TempDir;

use crate::db;
use crate::dqlite::DqliteApp;
use crate::gate::{lock_ids, Breaker, Pool, Semaphore};
use crate::libdqlite::App;

pub use build::share;
pub use config::{Backend, Design, RunnerConfig, ShardResources, SHARD_RESOURCES};
pub use txn::{Txn, TxnCost, TxnResult};

struct Shard {
    app: Option<DqliteApp>,
    real: Option<App>,
    single: Option<Mutex<Connection>>,
    writer: Option<Mutex<Connection>>,
    pool: Option<Pool>,
    semaphore: Option<Semaphore>,
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

impl TxnRunner {
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
    pub fn stored(&self) -> Result<crate::db::Stored, String> {
        let mut stored = crate::db::Stored::default();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::DbSettings;
    use crate::gate::BreakerMode;
    use crate::libdqlite::node::Bind;

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

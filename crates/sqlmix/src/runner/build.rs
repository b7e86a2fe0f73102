//! How a runner's shards are made for each backend: local SQLite connections behind the
//! design's gates, an app of the dqlite model, or a real dqlite node; the databases
//! created and seeded first. Not here: running transactions ([`super::txn`]).

use std::path::Path;
use std::time::Duration;

use parking_lot::Mutex;
use rusqlite::Connection;

use super::{Backend, Design, RunnerConfig, Shard, ShardResources, TxnRunner};
use crate::db;
use crate::dqlite::{AppConfig, DqliteApp};
use crate::gate::{Breaker, Pool, Semaphore};
use crate::libdqlite::App;

/// Shard `index`'s part of `total` split over `shards`: the remainder goes to the first
/// shards, and every shard gets at least one.
pub fn share(total: usize, shards: usize, index: usize) -> usize {
    let shards = shards.max(1);
    (total / shards + usize::from(index < total % shards)).max(1)
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
        let max_open =
            match config.design {
                Design::SingleConn => 1,
                Design::RwSplit => return Err(
                    "design RwSplit with backend=libdqlite: dqlite has no read-only connections"
                        .to_owned(),
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

    /// Shard `index` over the database at `path` (seeded through `first`) with the
    /// design's gates: local connections, or an app of the dqlite model.
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
        if let Backend::Dqlite { .. } = config.backend {
            // The seeding connection closes: the app opens its own on its serving thread.
            drop(first);
            return Self::model_app(config, index, path, pool_size, semaphore);
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

    /// Shard `index` as an app of the dqlite model over the database at `path`.
    fn model_app(
        config: &RunnerConfig,
        index: usize,
        path: &Path,
        pool_size: usize,
        semaphore: Option<Semaphore>,
    ) -> Result<Shard, String> {
        let Backend::Dqlite {
            rtt,
            serve,
            commit,
            idle_conns,
        } = config.backend
        else {
            unreachable!("called for backend=dqlite-model only")
        };
        if config.design == Design::RwSplit {
            return Err(
                "design RwSplit with backend=dqlite-model: dqlite has no read-only connections"
                    .to_owned(),
            );
        }
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
        Ok(Shard {
            app: Some(app),
            real: None,
            single: None,
            writer: None,
            pool: None,
            semaphore,
        })
    }
}

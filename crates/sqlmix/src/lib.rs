//! Hot path 2: a SQLite read/write mix behind a transaction runner (the semaphore problem).
//!
//! The seed: a controller ran all model-database work through a transaction runner gated
//! by a weighted semaphore (one slot per CPU) that retried busy and locked errors with
//! exponential backoff. Removing the semaphore made things worse, doubling it made things
//! worse, a semaphore of 2 over 2 connections was best, sharding by namespace helped less
//! than linearly, and a burst of writes tanked the reads. This crate reruns that
//! investigation on real SQLite (rusqlite, bundled): [`db`] holds the schema and the two
//! transactions, [`gate`] the pool, semaphore, breaker and backoff, [`dqlite`] a model of
//! dqlite's serving path (`backend=dqlite-model`), [`libdqlite`] a real dqlite node in
//! this process with a wire-protocol client of our own (`backend=libdqlite`), [`runner`]
//! the six designs, and [`workload`] the mix and its verification.

pub mod db;
pub mod dqlite;
pub mod findings;
pub mod gate;
pub mod libdqlite;
pub mod runner;
pub mod workload;

use std::path::Path;
use std::sync::Arc;

use harness::hotpath::Description;
use harness::{
    CellFailure, HotPath, Measurement, ParamKind, ParamSpec, Params, RunSettings, Variant,
};

use crate::db::{DbSettings, JOURNAL_MODES, SYNCHRONOUS};
use crate::gate::{BreakerMode, BREAKER_MODES};
use crate::runner::{Backend, Design, RunnerConfig, ShardResources, TxnRunner, SHARD_RESOURCES};
use crate::workload::SqlmixWorkload;

/// The sqlmix hot path as `lab` sees it.
pub struct SqlmixHotPath;

const VARIANTS: &[Variant] = &[
    Variant {
        name: "single-conn",
        summary: "one connection behind a mutex",
    },
    Variant {
        name: "pool",
        summary: "P connections, any free one, DEFERRED, busy retried with backoff",
    },
    Variant {
        name: "semaphore",
        summary: "the pool plus a K-slot semaphore around every transaction (the seed's runner)",
    },
    Variant {
        name: "rw-split",
        summary: "one BEGIN IMMEDIATE writer plus P read-only connections",
    },
    Variant {
        name: "sharded",
        summary: "S database files by namespace hash, each with its own pool and semaphore",
    },
    Variant {
        name: "breaker",
        summary:
            "the pool plus a circuit breaker that parks transactions after repeated busy errors",
    },
];

/// Accepted `backend` values. `dqlite` is the old name of `dqlite-model`, kept so that
/// results files and commands that say `dqlite` still mean the model.
pub const BACKENDS: &[&str] = &["local", "dqlite-model", "libdqlite", "dqlite"];

/// Whether a `backend` value names the model of dqlite's serving path (`dqlite-model`, or
/// `dqlite` as results files written before the real node existed say).
pub fn is_model_backend(word: &str) -> bool {
    matches!(word, "dqlite-model" | "dqlite")
}

/// The `backend` value as this build names it: `dqlite` reads as `dqlite-model`.
pub fn backend_word(word: &str) -> &str {
    if is_model_backend(word) {
        "dqlite-model"
    } else {
        word
    }
}

const SLOT_WORDS: &[&str] = &["nproc", "2nproc", "4nproc", "unlimited"];

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "models",
        kind: ParamKind::Int {
            min: 1,
            max: 10_000,
        },
        default: "20",
        help: "model namespaces (the seed: 20, 50, 100)",
    },
    ParamSpec {
        name: "units",
        kind: ParamKind::Int {
            min: 1,
            max: 10_000,
        },
        default: "10",
        help: "units per model",
    },
    ParamSpec {
        name: "read_pct",
        kind: ParamKind::Int { min: 0, max: 100 },
        default: "95",
        help: "percent of transactions that only read",
    },
    ParamSpec {
        name: "pool_size",
        kind: ParamKind::Int { min: 1, max: 1024 },
        default: "4",
        help: "connections per pool (P)",
    },
    ParamSpec {
        name: "slots",
        kind: ParamKind::IntOr {
            min: 1,
            max: 65_536,
            words: SLOT_WORDS,
        },
        default: "nproc",
        help: "semaphore slots K (semaphore, sharded): a count, nproc, 2nproc, 4nproc or unlimited",
    },
    ParamSpec {
        name: "shards",
        kind: ParamKind::Int { min: 1, max: 64 },
        default: "3",
        help: "database files for sharded (S)",
    },
    ParamSpec {
        name: "journal_mode",
        kind: ParamKind::Choice(JOURNAL_MODES),
        default: "wal",
        help: "SQLite journal mode",
    },
    ParamSpec {
        name: "synchronous",
        kind: ParamKind::Choice(SYNCHRONOUS),
        default: "normal",
        help: "SQLite synchronous level",
    },
    ParamSpec {
        name: "shard_resources",
        kind: ParamKind::Choice(SHARD_RESOURCES),
        default: "split",
        help: "sharded: split = pool_size and slots divided across the shards (the unsharded totals), each = every shard its own",
    },
    ParamSpec {
        name: "backend",
        kind: ParamKind::Choice(BACKENDS),
        default: "local",
        help: "local = in-process SQLite; dqlite-model = a model of dqlite (one serving thread per app, a round trip per statement, writes committed through Raft, busy returned at once; `dqlite` is its old name); libdqlite = a real dqlite node per app in this process (needs libdqlite.so.0)",
    },
    ParamSpec {
        name: "databases",
        kind: ParamKind::Choice(libdqlite::DATABASES),
        default: "per-model",
        help: "backend=libdqlite: per-model = a database per model with its own client pool (Juju's layout); per-app = one database per app (the model's layout)",
    },
    ParamSpec {
        name: "dqlite_bind",
        kind: ParamKind::Choice(libdqlite::node::BINDS),
        default: "abstract",
        help: "backend=libdqlite: where a node listens: abstract = an abstract Unix socket (Juju's @node-N), loopback = a free TCP port on 127.0.0.1",
    },
    ParamSpec {
        name: "client_us",
        kind: ParamKind::Int {
            min: 0,
            max: 1_000_000,
        },
        default: "0",
        help: "backend=libdqlite: the client's own time after each request's answer, microseconds (a sleep: a slower client, such as Go's go-dqlite over TCP, holds each transaction and its permit longer)",
    },
    ParamSpec {
        name: "rtt_us",
        kind: ParamKind::Int {
            min: 0,
            max: 1_000_000,
        },
        default: "20",
        help: "backend=dqlite-model: round trip per request, microseconds (the seed's apps sat on local sockets)",
    },
    ParamSpec {
        name: "serve_us",
        kind: ParamKind::Int {
            min: 0,
            max: 1_000_000,
        },
        default: "200",
        help: "backend=dqlite-model: the serving thread's own time per request (protocol, VFS, loop), microseconds",
    },
    ParamSpec {
        name: "commit_us",
        kind: ParamKind::Int {
            min: 0,
            max: 1_000_000,
        },
        default: "1000",
        help: "backend=dqlite-model: a write's Raft commit (replication and sync), microseconds; the write lock stays held meanwhile",
    },
    ParamSpec {
        name: "idle_conns",
        kind: ParamKind::Int { min: 0, max: 1024 },
        default: "2",
        help: "backend=dqlite-model and libdqlite: idle client connections kept per app (per database with libdqlite) (Go database/sql's default: 2); more are closed when returned",
    },
    ParamSpec {
        name: "breaker_mode",
        kind: ParamKind::Choice(BREAKER_MODES),
        default: "park",
        help: "breaker: park = transactions wait while it is open; reject = turned away at once until a probe succeeds",
    },
    harness::scratch::DATA_DIR,
];

/// Semaphore slots for a `slots` value on this many CPUs; `None` means no semaphore.
pub fn resolve_slots(value: &serde_json::Value, cpus: usize) -> Option<usize> {
    match value.as_str() {
        Some("unlimited") => None,
        Some("nproc") => Some(cpus),
        Some("2nproc") => Some(2 * cpus),
        Some("4nproc") => Some(4 * cpus),
        _ => Some(value.as_u64().unwrap_or(1) as usize),
    }
}

/// The runner configuration for `variant` and `params`.
pub fn config(variant: &str, params: &Params) -> Result<RunnerConfig, String> {
    Ok(RunnerConfig {
        design: Design::parse(variant)?,
        models: params.count("models"),
        units: params.count("units"),
        pool_size: params.count("pool_size"),
        slots: resolve_slots(
            params.value("slots"),
            harness::affinity::allowed_cpus().len(),
        ),
        shards: params.count("shards"),
        db: DbSettings {
            journal_mode: params.choice("journal_mode", JOURNAL_MODES),
            synchronous: params.choice("synchronous", SYNCHRONOUS),
        },
        data_dir: harness::scratch::data_dir(params).map(Path::to_path_buf),
        backend: match backend_word(params.word("backend")) {
            "local" => Backend::Local,
            "libdqlite" => Backend::Libdqlite {
                idle_conns: params.count("idle_conns"),
                databases: libdqlite::Databases::parse(params.word("databases"))?,
                client_cost: std::time::Duration::from_micros(params.int("client_us") as u64),
            },
            "dqlite-model" => Backend::Dqlite {
                rtt: std::time::Duration::from_micros(params.int("rtt_us") as u64),
                serve: std::time::Duration::from_micros(params.int("serve_us") as u64),
                commit: std::time::Duration::from_micros(params.int("commit_us") as u64),
                idle_conns: params.count("idle_conns"),
            },
            other => {
                return Err(format!(
                    "backend={other:?}: accepted {}",
                    BACKENDS.join(", ")
                ))
            }
        },
        shard_resources: if params.word("shard_resources") == "each" {
            ShardResources::Each
        } else {
            ShardResources::Split
        },
        breaker_mode: BreakerMode::parse(params.word("breaker_mode"))?,
        dqlite_bind: libdqlite::node::Bind::parse(params.word("dqlite_bind"))?,
    })
}

/// What `lab` lists about the sqlmix hot path.
const DESCRIPTION: Description = Description {
    name: "sqlmix",
    summary:
        "SQLite transactions behind a semaphore-gated runner: does the semaphore help, at which K?",
    variants: VARIANTS,
    params: PARAMS,
    charted_extras: &[
        ("reads_per_sec", "reads/s"),
        ("writes_per_sec", "writes/s"),
        ("retries_per_txn", "retries per transaction"),
        ("rejected_per_sec", "rejected transactions/s"),
        ("connects_per_sec", "connections opened/s"),
    ],
};

impl HotPath for SqlmixHotPath {
    fn description(&self) -> &'static Description {
        &DESCRIPTION
    }
    fn question(&self) -> Option<&'static str> {
        Some(findings::QUESTION)
    }
    fn claims(&self, planned: &harness::decide::Planned<'_>) -> Vec<harness::decide::Claim> {
        findings::claims(planned)
    }
    fn answer(&self, run: &harness::findings::Run<'_>) -> Option<harness::findings::Answer> {
        findings::answer(run)
    }
    fn check(&self, params: &Params) -> Result<(), String> {
        harness::scratch::check_data_dir(params.text("data_dir"))
    }
    fn missing(&self, params: &Params) -> Option<harness::hotpath::Missing> {
        // Only the real node needs anything this machine may lack.
        (params.word("backend") == "libdqlite")
            .then(libdqlite::node::available)
            .and_then(Result::err)
            .map(|reason| harness::hotpath::Missing {
                what: libdqlite::node::LIBRARY.to_owned(),
                packages: vec![libdqlite::node::PACKAGE.to_owned()],
                reason,
            })
    }
    fn measure(
        &self,
        variant: &str,
        params: &Params,
        settings: RunSettings,
    ) -> Result<Measurement, CellFailure> {
        self.variant(variant).map_err(CellFailure::new)?;
        let config = config(variant, params).map_err(CellFailure::new)?;
        let runner = Arc::new(TxnRunner::new(&config).map_err(CellFailure::new)?);
        let workload = SqlmixWorkload::new(
            runner,
            config.models,
            config.units,
            params.count("read_pct") as u32,
        );
        harness::runner::run(&workload, settings)
    }
}

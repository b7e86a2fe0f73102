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
//! the six designs, [`variants`] their registry, and [`workload`] the mix and its
//! verification.

pub mod db;
pub mod dqlite;
pub mod findings;
pub mod gate;
pub mod libdqlite;
pub mod runner;
pub mod variants;
pub mod workload;

pub use variants::{backend_word, config, is_model_backend, resolve_slots, BACKENDS};

use harness::hotpath::Description;
use harness::{HotPath, ParamKind, ParamSpec, Params};

use crate::db::{JOURNAL_MODES, SYNCHRONOUS};
use crate::gate::BREAKER_MODES;
use crate::runner::SHARD_RESOURCES;
use crate::variants::SLOT_WORDS;

/// The sqlmix hot path as `lab` sees it.
pub struct SqlmixHotPath;

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
        name: "client",
        kind: ParamKind::Choice(libdqlite::go::CLIENTS),
        default: "lab",
        help: "backend=libdqlite: lab = the lab's own Rust wire client; go = a Go program on go-dqlite and database/sql (Juju's stack) with Juju's gate around each transaction (variants semaphore and pool), built from Debian's packages by scripts/build-go-client.sh (on demand)",
    },
    ParamSpec {
        name: "retry",
        kind: ParamKind::Choice(libdqlite::go::RETRIES),
        default: "juju",
        help: "client=go: how a retryable error is retried outside the gate; juju = Juju's runner (retry.ExpBackoff(1ms, 100ms, 0.8, true), 250 attempts, 25 s: every 1 ms), doubling = the lab's Rust runner's (1 ms doubling to 100 ms, jittered)",
    },
    ParamSpec {
        name: "load",
        kind: ParamKind::Choice(libdqlite::go::LOADS),
        default: "closed",
        help: "client=go: closed = `threads` goroutines running transactions back to back; seed = a Juju controller's shape: per model database a change stream (Juju's polling, backing off from 100 ms when idle, a watcher's read per change) and `threads` step workers spread over the models, offering `rate` transactions/s in all",
    },
    ParamSpec {
        name: "rate",
        kind: ParamKind::Int {
            min: 0,
            max: 1_000_000,
        },
        default: "0",
        help: "load=seed: the step workers' transactions/s in all (each runs one every threads/rate seconds, no catch-up when late)",
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

/// What `lab` lists about the sqlmix hot path.
const DESCRIPTION: Description = Description {
    name: "sqlmix",
    summary:
        "SQLite transactions behind a semaphore-gated runner: does the semaphore help, at which K?",
    variants: variants::VARIANTS,
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
    fn check(&self, params: &Params) -> Result<(), String> {
        harness::scratch::check_data_dir(params.text("data_dir"))?;
        libdqlite::go::check(params)
    }
    fn missing(&self, params: &Params) -> Option<harness::hotpath::Missing> {
        // Only the real node, and the Go client driving it, need anything this machine may
        // lack.
        if params.word("backend") != "libdqlite" {
            return None;
        }
        if let Err(reason) = libdqlite::node::available() {
            return Some(harness::hotpath::Missing {
                what: libdqlite::node::LIBRARY.to_owned(),
                packages: vec![libdqlite::node::PACKAGE.to_owned()],
                reason,
            });
        }
        if params.word("client") != libdqlite::go::GO {
            return None;
        }
        libdqlite::go::binary()
            .err()
            .map(|reason| harness::hotpath::Missing {
                what: libdqlite::go::BINARY.to_owned(),
                packages: libdqlite::go::PACKAGES
                    .iter()
                    .map(|p| p.to_string())
                    .collect(),
                reason,
            })
    }
}

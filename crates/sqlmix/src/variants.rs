//! The registry of sqlmix's variants, one entry per [`Design`] ([`Design::entry`]: its
//! name, summary and measuring function, the only place its name is written), and how a
//! cell's parameters become a runner and one measured repetition. Not here: the runner
//! itself ([`crate::runner`]) or the transactions' mix ([`crate::workload`]).

use std::path::Path;
use std::sync::Arc;

use harness::{CellFailure, Measurement, Params, RunSettings, Variant};

use crate::db::{DbSettings, JOURNAL_MODES, SYNCHRONOUS};
use crate::gate::BreakerMode;
use crate::libdqlite;
use crate::runner::{Backend, Design, RunnerConfig, ShardResources, TxnRunner};
use crate::workload::SqlmixWorkload;

harness::variant_registry!(pub VARIANTS = "sqlmix" Design [
    SingleConn,
    Pool,
    Semaphore,
    RwSplit,
    Sharded,
    Breaker,
]);

impl Design {
    /// Its registry entry.
    pub const fn entry(self) -> Variant {
        let (name, summary, measure): (_, _, harness::hotpath::Measure) = match self {
            Design::SingleConn => (
                "single-conn",
                "one connection behind a mutex",
                |p, s| measure(Design::SingleConn, p, s),
            ),
            Design::Pool => (
                "pool",
                "P connections, any free one, DEFERRED, busy retried with backoff",
                |p, s| measure(Design::Pool, p, s),
            ),
            Design::Semaphore => (
                "semaphore",
                "the pool plus a K-slot semaphore around every transaction (the seed's runner)",
                |p, s| measure(Design::Semaphore, p, s),
            ),
            Design::RwSplit => (
                "rw-split",
                "one BEGIN IMMEDIATE writer plus P read-only connections",
                |p, s| measure(Design::RwSplit, p, s),
            ),
            Design::Sharded => (
                "sharded",
                "S database files by namespace hash, each with its own pool and semaphore",
                |p, s| measure(Design::Sharded, p, s),
            ),
            Design::Breaker => (
                "breaker",
                "the pool plus a circuit breaker that parks transactions after repeated busy errors",
                |p, s| measure(Design::Breaker, p, s),
            ),
        };
        Variant {
            name,
            summary,
            measure,
        }
    }
}

/// One repetition of `design` (its entry's [`Variant::measure`]).
fn measure(
    design: Design,
    params: &Params,
    settings: RunSettings,
) -> Result<Measurement, CellFailure> {
    let config = config_of(design, params).map_err(CellFailure::new)?;
    let runner = Arc::new(TxnRunner::new(&config).map_err(CellFailure::new)?);
    let read_pct = params.count("read_pct") as u32;
    if params.word("client") == libdqlite::go::GO {
        let options = libdqlite::go::Options {
            read_pct,
            retry: params.word("retry"),
            load: params.word("load"),
            rate: params.int("rate").max(0) as u64,
        };
        return libdqlite::go::measure(&runner, &config, options, settings);
    }
    let workload = SqlmixWorkload::new(runner, config.models, config.units, read_pct);
    harness::runner::run(&workload, settings)
}

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

/// Accepted `slots` words.
pub const SLOT_WORDS: &[&str] = &["nproc", "2nproc", "4nproc", "unlimited"];

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

/// The runner configuration for variant `variant` and `params`.
pub fn config(variant: &str, params: &Params) -> Result<RunnerConfig, String> {
    config_of(Design::parse(variant)?, params)
}

/// The runner configuration for `design` and `params`.
fn config_of(design: Design, params: &Params) -> Result<RunnerConfig, String> {
    libdqlite::go::check(params)?;
    let config = RunnerConfig {
        design,
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
    };
    let juju = [Design::Semaphore, Design::Pool];
    if params.word("client") == libdqlite::go::GO && !juju.contains(&design) {
        return Err(format!(
            "variant {} with client=go: the Go client runs Juju's runner, a K-slot semaphore or none; accepted with client=go: {}",
            design.name(),
            juju.map(Design::name).join(", ")
        ));
    }
    if design == Design::RwSplit && config.backend != Backend::Local {
        let word = config.backend.word();
        let accepted: Vec<_> = Design::EVERY
            .into_iter()
            .filter(|&d| d != Design::RwSplit)
            .map(Design::name)
            .collect();
        return Err(format!(
            "variant {} with backend={word}: dqlite has no read-only connections; accepted with {word}: {}",
            design.name(),
            accepted.join(", ")
        ));
    }
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_design_has_one_entry_and_parses_back() {
        assert_eq!(VARIANTS.len(), Design::EVERY.len());
        for (d, v) in Design::EVERY.into_iter().zip(VARIANTS) {
            assert_eq!(Design::parse(v.name), Ok(d));
        }
        assert!(Design::parse("impl2").is_err());
    }
}

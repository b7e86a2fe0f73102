//! Hot path 4: leadership lease renewals (the seed's "effect of lease tweaks").
//!
//! Every application has a leadership lease that its leader claims for 60 s and extends
//! every 30 s. Before the seed's change each extension was a multi-document transaction
//! that also wrote a per-namespace clock and a transaction log; after it, one conditional
//! update against a global clock; today, one SQL UPDATE per extension. [`store`] is the
//! contract, [`sqlite_stores`] and [`other_stores`] the six stores, and [`workload`] the
//! holders, the sweeper and the checks (one holder per lease, acknowledged extends read
//! back, non-holders refused). Whether a store is durable comes from its settings
//! (`synchronous=full`); the kill test in `lab` checks it across a crash. `load=seed`
//! paces the holders to the seed's schedule (each lease extended once per `extend_s` of
//! simulated time), and [`busy`] sums each store's busy time per table into the seed's
//! collections (juju.leases, juju.txns) for [`findings`].

pub mod busy;
pub mod findings;
pub mod other_stores;
pub mod postgres_stores;
pub mod sqlite_stores;
pub mod store;
pub mod workload;

use std::sync::Arc;
use std::time::Duration;

use harness::hotpath::Description;
use harness::{
    CellFailure, HotPath, Measurement, ParamKind, ParamSpec, Params, RunSettings, Variant,
};

use crate::other_stores::{LmdbLeases, MemoryLeases};
use crate::sqlite_stores::{SqlDesign, SqliteLeases};
use crate::store::LeaseStore;
use crate::workload::{lease_name, LeaseShape, LeaseWorkload, SimClock};

/// The lease hot path as `lab` sees it.
pub struct LeaseHotPath;

harness::variant_registry!(VARIANTS = "lease" Design [
    TxnLog,
    GlobalClock,
    SqlUpdate,
    Batched,
    Lmdb,
    Memory,
]);

/// The store designs, one per variant; [`Design::entry`] is each one's registry entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Design {
    /// A transaction per extend writing a namespace clock and a log (before the change).
    TxnLog,
    /// One conditional update against a global clock (after the change).
    GlobalClock,
    /// One SQL UPDATE per extend (today).
    SqlUpdate,
    /// Extends committed in groups.
    Batched,
    /// LMDB, a write transaction per extend.
    Lmdb,
    /// A concurrent map, not durable.
    Memory,
}

impl Design {
    /// Its registry entry: the one place its name and summary are written.
    pub const fn entry(self) -> Variant {
        let (name, summary, measure): (_, _, harness::hotpath::Measure) = match self {
            Design::TxnLog => (
                "txn-log",
                "before the change: a transaction writing the lease, a shared namespace clock and a log",
                |p, s| measure(Design::TxnLog, p, s),
            ),
            Design::GlobalClock => (
                "global-clock",
                "after the change: one conditional update; a global clock row advanced once per second",
                |p, s| measure(Design::GlobalClock, p, s),
            ),
            Design::SqlUpdate => (
                "sql-update",
                "today: UPDATE lease ... WHERE uuid = ? AND holder = ?, one transaction per extend",
                |p, s| measure(Design::SqlUpdate, p, s),
            ),
            Design::Batched => (
                "batched",
                "extends queued and committed in groups (group commit)",
                |p, s| measure(Design::Batched, p, s),
            ),
            Design::Lmdb => (
                "lmdb",
                "LMDB, one write transaction per extend (one writer at a time)",
                |p, s| measure(Design::Lmdb, p, s),
            ),
            Design::Memory => (
                "memory",
                "a concurrent map without durability: the lower bound",
                |p, s| measure(Design::Memory, p, s),
            ),
        };
        Variant {
            name,
            summary,
            measure,
        }
    }

    /// Its SQLite design, for the four SQLite stores.
    pub fn sql(self) -> Option<SqlDesign> {
        match self {
            Design::TxnLog => Some(SqlDesign::TxnLog),
            Design::GlobalClock => Some(SqlDesign::GlobalClock),
            Design::SqlUpdate => Some(SqlDesign::SqlUpdate),
            Design::Batched => Some(SqlDesign::Batched),
            Design::Lmdb | Design::Memory => None,
        }
    }
}

const SYNC: &[&str] = &["off", "normal", "full"];

/// `backend`: where the SQL stores keep their tables.
const BACKEND: &[&str] = &["sqlite", "postgres"];

/// `load`: as fast as the store goes (or `rate`), or the seed's schedule.
const LOAD: &[&str] = &["closed", "seed"];

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "applications",
        kind: ParamKind::Int {
            min: 1,
            max: 100_000,
        },
        default: "500",
        help: "applications, one leadership lease each (the seed: 500)",
    },
    ParamSpec {
        name: "units",
        kind: ParamKind::Int { min: 1, max: 100 },
        default: "3",
        help: "units per application, the candidate holders (the seed: 3)",
    },
    ParamSpec {
        name: "lease_s",
        kind: ParamKind::Int {
            min: 1,
            max: 86_400,
        },
        default: "60",
        help: "lease duration, simulated seconds",
    },
    ParamSpec {
        name: "extend_s",
        kind: ParamKind::Int {
            min: 1,
            max: 86_400,
        },
        default: "30",
        help: "extend interval, simulated seconds (must be shorter than lease_s)",
    },
    ParamSpec {
        name: "time_scale",
        kind: ParamKind::Int {
            min: 1,
            max: 100_000,
        },
        default: "1000",
        help: "simulated seconds per real second (1000: a 60 s lease lapses in 60 ms)",
    },
    ParamSpec {
        name: "rate",
        kind: ParamKind::Int {
            min: 0,
            max: 10_000_000,
        },
        default: "0",
        help: "fixed-rate mode: operations per second in all (0 = as fast as the store goes)",
    },
    ParamSpec {
        name: "load",
        kind: ParamKind::Choice(LOAD),
        default: "closed",
        help: "closed: as fast as the store goes (or `rate` when set); seed: each lease extended once per extend_s of simulated time, applications x time_scale / extend_s operations per second in all (5% of them a non-holder's refused attempt)",
    },
    ParamSpec {
        name: "backend",
        kind: ParamKind::Choice(BACKEND),
        default: "sqlite",
        help: "where txn-log, global-clock and sql-update keep their tables: sqlite (a file in the cell's folder) or postgres (the lab's own PostgreSQL, started once per cell, durable commits, time per table from pg_stat_statements)",
    },
    ParamSpec {
        name: "synchronous",
        kind: ParamKind::Choice(SYNC),
        default: "normal",
        help: "SQLite synchronous level; full also makes LMDB fsync every commit",
    },
    ParamSpec {
        name: "ack_log",
        kind: ParamKind::Text,
        default: "",
        help: "a file each acknowledged extend is appended to (lease, holder, expiry) as it happens, for a crash test to check against (empty: none)",
    },
    harness::scratch::DATA_DIR,
];

fn run<S: LeaseStore>(
    store: S,
    shape: LeaseShape,
    clock: Arc<SimClock>,
    settings: RunSettings,
    ack_log: Option<&std::path::Path>,
) -> Result<Measurement, CellFailure> {
    let mut workload =
        LeaseWorkload::new(Arc::new(store), shape, clock).map_err(CellFailure::new)?;
    if let Some(path) = ack_log {
        workload = workload.with_ack_log(path).map_err(CellFailure::new)?;
    }
    harness::runner::run(&workload, settings)
}

/// The seed's load in operations per second: each of `applications` leases once per
/// `extend_s` simulated seconds, `time_scale` simulated seconds per real second (500
/// leases every 30 s at 100x: 1667 per second).
fn seed_rate(params: &Params) -> u64 {
    let (apps, extend, scale) = (
        params.int("applications"),
        params.int("extend_s"),
        params.int("time_scale"),
    );
    (apps * scale / extend.max(1)).max(0) as u64
}

/// Every lease stored by variant `variant` in `folder` (the private folder a run made
/// under `data_dir`), read by this process as after a restart: for the crash test, whose
/// child was killed and left the folder behind.
pub fn read_back_folder(
    variant: &str,
    folder: &std::path::Path,
) -> Result<std::collections::HashMap<String, store::StoredLease>, String> {
    let design = Design::parse(variant).ok();
    if let Some(Design::Lmdb) = design {
        return other_stores::read_lmdb_folder(folder);
    }
    if design.and_then(Design::sql).is_some() {
        return sqlite_stores::read_leases(&folder.join("leases.db"));
    }
    let on_disk: Vec<_> = Design::EVERY
        .into_iter()
        .filter(|&d| d != Design::Memory)
        .map(Design::name)
        .collect();
    Err(format!(
        "variant {variant:?} keeps nothing on disk; accepted: {}",
        on_disk.join(", ")
    ))
}

/// What `lab` lists about the lease hot path.
const DESCRIPTION: Description = Description {
    name: "lease",
    summary: "leadership lease renewals: how many writes each extension costs in each store design",
    variants: VARIANTS,
    params: PARAMS,
    charted_extras: &[
        ("extends_per_sec", "extends/s"),
        ("writes_per_extend", "rows written per extend"),
        ("bytes_per_extend", "bytes written per extend"),
    ],
};

impl HotPath for LeaseHotPath {
    fn description(&self) -> &'static Description {
        &DESCRIPTION
    }
    fn missing(&self, params: &Params) -> Option<harness::hotpath::Missing> {
        // Only the PostgreSQL stores need anything this machine may lack.
        (params.choice("backend", BACKEND) == "postgres")
            .then(launcher::postgres::bin_dir)
            .and_then(Result::err)
            .map(|reason| harness::hotpath::Missing {
                what: "PostgreSQL (postgres, initdb, pg_stat_statements)".to_owned(),
                packages: vec!["postgresql".to_owned(), "postgresql-contrib".to_owned()],
                reason,
            })
    }
    fn check(&self, params: &Params) -> Result<(), String> {
        let (lease, extend) = (params.int("lease_s"), params.int("extend_s"));
        if lease <= extend {
            return Err(format!(
                "lease_s={lease} with extend_s={extend}: a lease must last longer than the extend interval; accepted lease_s > extend_s"
            ));
        }
        if params.choice("load", LOAD) == "seed" && params.int("rate") != 0 {
            return Err(format!(
                "load=seed with rate={}: the seed's load sets the rate itself; accepted rate=0 with load=seed",
                params.int("rate")
            ));
        }
        if seed_rate(params) < 1 && params.choice("load", LOAD) == "seed" {
            return Err(
                "load=seed gives less than one operation per second: accepted applications x time_scale >= extend_s".to_owned(),
            );
        }
        harness::scratch::check_data_dir(params.text("data_dir"))
    }
}

/// One repetition of `design` (its entry's [`Variant::measure`]), after the checks `lab`
/// made before the run (a cell run on its own has had none).
fn measure(
    design: Design,
    params: &Params,
    settings: RunSettings,
) -> Result<Measurement, CellFailure> {
    LeaseHotPath.check(params).map_err(CellFailure::new)?;
    let scale = params.int("time_scale") as f64;
    let shape = LeaseShape {
        applications: params.count("applications"),
        units: params.count("units"),
        lease_ms: params.int("lease_s") * 1000,
        time_scale: scale,
        rate: match params.choice("load", LOAD) {
            "seed" => seed_rate(params),
            _ => params.int("rate") as u64,
        },
    };
    let clock = Arc::new(SimClock::new(scale));
    let data_dir = harness::scratch::data_dir(params);
    let ack_log = params.path("ack_log");
    let sync = params.choice("synchronous", SYNC);
    if params.choice("backend", BACKEND) == "postgres" {
        let sql = design
            .sql()
            .filter(|d| *d != sqlite_stores::SqlDesign::Batched);
        let Some(sql) = sql else {
            return Err(CellFailure::new(format!(
                "backend=postgres with variant {}: accepted txn-log, global-clock, sql-update",
                design.name()
            )));
        };
        let c = Arc::clone(&clock);
        let tick = Duration::from_secs_f64(1.0 / scale);
        // The server starts (or is found) under the cell's mask, so it keeps the cell's
        // cores; the workers, the load, then go to the machine's other CPUs where it has
        // any, as the server hot path and the real pools place theirs.
        let store = postgres_stores::PgLeases::new(sql, Arc::new(move || c.now()), tick)
            .map_err(CellFailure::new)?;
        let server = harness::affinity::allowed_cpus();
        let clients = launcher::procstat::client_cpus(&server, &launcher::procstat::machine_cpus());
        launcher::procstat::set_thread_cpus(&clients).map_err(CellFailure::new)?;
        let measured = run(store, shape, clock, settings, ack_log);
        launcher::procstat::set_thread_cpus(&server).map_err(CellFailure::new)?;
        return measured.map(|mut m| {
            let list = harness::affinity::format_cpu_list;
            m.extra
                .insert("server_cpus".into(), serde_json::json!(list(&server)));
            m.extra
                .insert("client_cpus".into(), serde_json::json!(list(&clients)));
            m
        });
    }
    if let Some(sql) = design.sql() {
        let c = Arc::clone(&clock);
        let tick = Duration::from_secs_f64(1.0 / scale);
        let store = SqliteLeases::new(sql, data_dir, sync, Arc::new(move || c.now()), tick)
            .map_err(CellFailure::new)?;
        return run(store, shape, clock, settings, ack_log);
    }
    match design {
        Design::Lmdb => {
            let names = (0..shape.applications).map(lease_name).collect();
            let store =
                LmdbLeases::new(data_dir, names, sync == "full").map_err(CellFailure::new)?;
            run(store, shape, clock, settings, ack_log)
        }
        _ => run(MemoryLeases::new(), shape, clock, settings, ack_log),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(pairs: &[(&str, &str)]) -> Params {
        harness::testing::params(&LeaseHotPath, pairs)
    }

    #[test]
    fn the_seeds_load_is_every_lease_once_per_extend_interval() {
        // 500 leases every 30 simulated seconds at 100x: 1666 operations per second.
        let p = params(&[("load", "seed"), ("time_scale", "100")]);
        assert_eq!(seed_rate(&p), 1666);
        assert_eq!(LeaseHotPath.check(&p), Ok(()));
        let p = params(&[("load", "seed"), ("time_scale", "1000"), ("extend_s", "15")]);
        assert_eq!(seed_rate(&p), 33_333);
    }

    #[test]
    fn the_seeds_load_sets_the_rate_itself() {
        let err = LeaseHotPath
            .check(&params(&[("load", "seed"), ("rate", "500")]))
            .unwrap_err();
        assert!(err.starts_with("load=seed with rate=500"), "{err}");
        let err = LeaseHotPath
            .check(&params(&[
                ("load", "seed"),
                ("applications", "1"),
                ("time_scale", "1"),
            ]))
            .unwrap_err();
        assert!(err.contains("less than one operation per second"), "{err}");
    }

    #[test]
    fn both_sides_of_the_seeds_comparison_record_every_figure_it_reads() {
        // What the comparisons read must be a positive number in each record's extra:
        // presence only, no speed asserted.
        let p = params(&[("load", "seed"), ("time_scale", "100")]);
        for variant in ["txn-log", "global-clock"] {
            let settings = harness::testing::settings(1, 50, 300);
            let m = LeaseHotPath.measure(variant, &p, settings).unwrap();
            assert_eq!(m.verified, Ok(()), "{variant}");
            for key in claims_figures() {
                let v = m.extra[&key].as_f64().unwrap_or(0.0);
                assert!(v > 0.0, "{variant}: {key} = {v}");
            }
            assert_eq!(m.extra["paced_ops_per_sec"].as_u64(), Some(1666));
        }
    }

    /// The figures the registry's comparisons read, from a plan of both sides.
    fn claims_figures() -> Vec<String> {
        let cells: Vec<verdict::decide::CellRef> = ["txn-log", "global-clock"]
            .iter()
            .map(|v| {
                verdict::decide::CellRef::new(findings::claims::SEED_LOAD, v, 1, 2)
                    .with("load", "seed")
            })
            .collect();
        let seeds = std::collections::BTreeMap::new();
        let planned = verdict::decide::Planned {
            cells: &cells,
            seeds: &seeds,
        };
        let figures: Vec<String> = findings::registry(planned.seeds())
            .claims(&planned)
            .into_iter()
            .filter_map(|c| Some(c.comparison?.figure))
            .collect();
        assert!(!figures.is_empty(), "the plan decides the SQLite parts");
        figures
    }
}

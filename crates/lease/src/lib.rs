//! Hot path 4: leadership lease renewals (the seed's "effect of lease tweaks").
//!
//! Every application has a leadership lease that its leader claims for 60 s and extends
//! every 30 s. Before the seed's change each extension was a multi-document transaction
//! that also wrote a per-namespace clock and a transaction log; after it, one conditional
//! update against a global clock; today, one SQL UPDATE per extension. [`store`] is the
//! contract, [`sqlite_stores`] and [`other_stores`] the six stores, and [`workload`] the
//! holders, the sweeper and the checks (one holder per lease, acknowledged extends read
//! back, non-holders refused). Whether a store is durable comes from its settings
//! (`synchronous=full`); the kill test in `lab` checks it across a crash.

pub mod findings;
pub mod other_stores;
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

const VARIANTS: &[Variant] = &[
    Variant {
        name: "txn-log",
        summary:
            "before the change: a transaction writing the lease, a shared namespace clock and a log",
    },
    Variant {
        name: "global-clock",
        summary:
            "after the change: one conditional update; a global clock row advanced once per second",
    },
    Variant {
        name: "sql-update",
        summary:
            "today: UPDATE lease ... WHERE uuid = ? AND holder = ?, one transaction per extend",
    },
    Variant {
        name: "batched",
        summary: "extends queued and committed in groups (group commit)",
    },
    Variant {
        name: "lmdb",
        summary: "LMDB, one write transaction per extend (one writer at a time)",
    },
    Variant {
        name: "memory",
        summary: "a concurrent map without durability: the lower bound",
    },
];

const SYNC: &[&str] = &["off", "normal", "full"];

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

/// Every lease stored by variant `variant` in `folder` (the private folder a run made
/// under `data_dir`), read by this process as after a restart: for the crash test, whose
/// child was killed and left the folder behind.
pub fn read_back_folder(
    variant: &str,
    folder: &std::path::Path,
) -> Result<std::collections::HashMap<String, store::StoredLease>, String> {
    match variant {
        "txn-log" | "global-clock" | "sql-update" | "batched" => {
            sqlite_stores::read_leases(&folder.join("leases.db"))
        }
        "lmdb" => other_stores::read_lmdb_folder(folder),
        other => Err(format!(
            "variant {other:?} keeps nothing on disk; accepted: txn-log, global-clock, sql-update, batched, lmdb"
        )),
    }
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
    fn question(&self) -> Option<&'static str> {
        Some(findings::QUESTION)
    }
    fn answer(&self, run: &harness::findings::Run<'_>) -> Option<harness::findings::Answer> {
        findings::answer(run)
    }
    fn check(&self, params: &Params) -> Result<(), String> {
        let (lease, extend) = (params.int("lease_s"), params.int("extend_s"));
        if lease <= extend {
            return Err(format!(
                "lease_s={lease} with extend_s={extend}: a lease must last longer than the extend interval; accepted lease_s > extend_s"
            ));
        }
        harness::scratch::check_data_dir(params.text("data_dir"))
    }
    fn measure(
        &self,
        variant: &str,
        params: &Params,
        settings: RunSettings,
    ) -> Result<Measurement, CellFailure> {
        self.check(params).map_err(CellFailure::new)?;
        let scale = params.int("time_scale") as f64;
        let shape = LeaseShape {
            applications: params.count("applications"),
            units: params.count("units"),
            lease_ms: params.int("lease_s") * 1000,
            time_scale: scale,
            rate: params.int("rate") as u64,
        };
        let clock = Arc::new(SimClock::new(scale));
        let data_dir = harness::scratch::data_dir(params);
        let ack_log = params.path("ack_log");
        let sync = params.choice("synchronous", SYNC);
        let sql = |design| {
            let c = Arc::clone(&clock);
            let tick = Duration::from_secs_f64(1.0 / scale);
            SqliteLeases::new(design, data_dir, sync, Arc::new(move || c.now()), tick)
                .map_err(CellFailure::new)
        };
        match variant {
            "txn-log" => run(sql(SqlDesign::TxnLog)?, shape, clock, settings, ack_log),
            "global-clock" => run(
                sql(SqlDesign::GlobalClock)?,
                shape,
                clock,
                settings,
                ack_log,
            ),
            "sql-update" => run(sql(SqlDesign::SqlUpdate)?, shape, clock, settings, ack_log),
            "batched" => run(sql(SqlDesign::Batched)?, shape, clock, settings, ack_log),
            "lmdb" => {
                let names = (0..shape.applications).map(lease_name).collect();
                let store =
                    LmdbLeases::new(data_dir, names, sync == "full").map_err(CellFailure::new)?;
                run(store, shape, clock, settings, ack_log)
            }
            "memory" => run(MemoryLeases::new(), shape, clock, settings, ack_log),
            other => Err(CellFailure::new(
                self.variant(other).err().unwrap_or_default(),
            )),
        }
    }
}

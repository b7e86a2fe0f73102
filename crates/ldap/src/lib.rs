//! Hot path 5: the seed's own server. Seed 002 measured 389 Directory Server answering
//! randomised `(uid=...)` searches over 6000 users and 4000 groups with
//! `nsslapd-threadnumber` at 1, 2, 4, 6 and 12, and saw per-thread throughput fall past
//! 4 threads. The `lookup` hot path models that server in-process; this one runs the
//! real servers: 389 DS (`389-ds`) and OpenLDAP (`openldap`) for comparison.
//!
//! A cell's `threads` is the server's worker-thread setting and its `cores` the CPUs the
//! server is pinned to; `connections` client connections (the seed's ldclt used 10) search from the
//! machine's other CPUs where there are any. Each repetition starts its own server from
//! an image ([`image`]) in the cell's scratch folder and kills it at the end
//! ([`server`]), so repetitions interleave in the matrix like any other hot path's and
//! nothing outlives the cell. A comparison's pairs are measured otherwise ([`pairs`]):
//! both cells' servers resident at once, started afresh every few pairs, the idle one
//! stopped,
//! windows alternated between them; a window is measured the same way in both
//! ([`window`]). Every record carries the server's time account (`server_time_share`),
//! its CPU use and the clients' (`extra`), and where each ran.
//!
//! The clients are what the runner measures ([`workload`]); the server's side is read
//! from `/proc` ([`procstat`]). [`findings`] answers the seed's question from the records.

pub mod data;
pub mod ds389;
pub mod findings;
pub mod openldap;
pub mod pairs;
pub use launcher::procstat;
pub mod image;
pub mod server;
pub mod window;
pub mod workload;

use std::path::PathBuf;

use harness::hotpath::{Description, Variant};
use harness::{
    scratch, CellFailure, HotPath, Measurement, PairSide, ParamKind, ParamSpec, Params, RunSettings,
};

use crate::server::Running;

/// The command that installs both servers (and what `just setup` runs).
pub const INSTALL: &str =
    "just setup (apt-get install -y 389-ds-base python3-lib389 ldap-utils slapd)";

/// The Debian packages both servers come from (`scripts/setup.sh` installs them).
pub const PACKAGES: &[&str] = &["389-ds-base", "python3-lib389", "ldap-utils", "slapd"];

/// The most worker threads a cell may ask of a server.
pub const MAX_SERVER_THREADS: usize = 1024;

/// The ldap hot path as `lab` sees it.
pub struct LdapHotPath;

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "connections",
        kind: ParamKind::Int { min: 1, max: 1024 },
        default: "10",
        help: "client connections searching at once, one thread each (the seed's ldclt used 10; named so because clients= is the clients axis)",
    },
    ParamSpec {
        name: "users",
        kind: ParamKind::Int {
            min: 1,
            max: 1_000_000,
        },
        default: "6000",
        help: "user entries in the directory (the seed had 6000)",
    },
    ParamSpec {
        name: "groups",
        kind: ParamKind::Int {
            min: 0,
            max: 1_000_000,
        },
        default: "4000",
        help: "group entries in the directory (the seed had 4000)",
    },
    scratch::DATA_DIR,
];

harness::variant_registry!(VARIANTS = "ldap" Design [Ds389, OpenLdap]);

const DESCRIPTION: Description = Description {
    name: "ldap",
    summary: "the seed's own server: real 389 DS (and OpenLDAP) answering uid searches, threads = the server's worker threads",
    variants: VARIANTS,
    params: PARAMS,
    charted_extras: &[
        ("server_cpu_util", "server CPU use (share of its CPUs)"),
        ("client_cpu_util", "client CPU use (share of their CPUs)"),
    ],
};

/// Which server a variant runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Design {
    /// 389 Directory Server.
    Ds389,
    /// OpenLDAP slapd.
    OpenLdap,
}

impl Design {
    /// Its registry entry: the one place its variant's name and summary are written.
    pub const fn entry(self) -> Variant {
        match self {
            Design::Ds389 => Variant {
                name: "389-ds",
                summary:
                    "389 Directory Server (ns-slapd, BDB backend), nsslapd-threadnumber = threads",
                measure: |p, s| measure_design(Design::Ds389, p, s),
            },
            Design::OpenLdap => Variant {
                name: "openldap",
                summary: "OpenLDAP slapd (mdb backend), threads = threads (slapd's minimum is 2)",
                measure: |p, s| measure_design(Design::OpenLdap, p, s),
            },
        }
    }

    /// Whether its programs are installed; `Err` names what is missing.
    pub fn available(self) -> Result<(), String> {
        match self {
            Design::Ds389 => ds389::program().map(drop),
            Design::OpenLdap => openldap::programs().map(drop),
        }
    }

    /// Its image for this directory, built if needed.
    pub fn image(self, users: usize, groups: usize) -> Result<PathBuf, String> {
        match self {
            Design::Ds389 => ds389::image(users, groups),
            Design::OpenLdap => openldap::image(users, groups),
        }
    }

    /// Starts a copy of `image` in `folder`.
    pub fn start(
        self,
        image: &std::path::Path,
        folder: &std::path::Path,
        threads: usize,
        cpus: &[usize],
        entries: usize,
    ) -> Result<Running, String> {
        match self {
            Design::Ds389 => ds389::start(image, folder, threads, cpus),
            Design::OpenLdap => openldap::start(image, folder, threads, cpus, entries),
        }
    }
}

impl HotPath for LdapHotPath {
    fn preloads_locks(&self) -> bool {
        // Both servers start through `launcher::process::Running` with their wrappers named
        // (`server::LOCK_WRAPPERS`).
        true
    }
    fn description(&self) -> &'static Description {
        &DESCRIPTION
    }

    fn missing(&self, _params: &Params) -> Option<harness::hotpath::Missing> {
        let why: Vec<String> = Design::EVERY
            .iter()
            .filter_map(|k| k.available().err())
            .collect();
        (!why.is_empty()).then(|| harness::hotpath::Missing {
            what: "389 Directory Server and OpenLDAP's slapd".to_owned(),
            packages: PACKAGES.iter().map(|p| (*p).to_owned()).collect(),
            reason: why.join(", "),
        })
    }

    fn check(&self, params: &Params) -> Result<(), String> {
        scratch::check_data_dir(params.text(scratch::DATA_DIR.name))
    }

    fn check_threads(&self, _params: &Params, threads: usize) -> Result<(), String> {
        if threads > MAX_SERVER_THREADS {
            return Err(format!(
                "threads={threads}: a server's worker threads; accepted 1..={MAX_SERVER_THREADS}"
            ));
        }
        Ok(())
    }

    fn pairs_in_one_process(&self) -> bool {
        true
    }

    fn measure_pairs(
        &self,
        sides: &[PairSide<'_>],
        pairs: usize,
        settings: RunSettings,
    ) -> Option<Result<Vec<Vec<Measurement>>, CellFailure>> {
        Some(pairs::measure_pairs(sides, pairs, settings).map_err(CellFailure::new))
    }
}

/// One repetition of `design` (its entry's [`Variant::measure`]), once its programs are
/// found installed.
fn measure_design(
    design: Design,
    params: &Params,
    settings: RunSettings,
) -> Result<Measurement, CellFailure> {
    design
        .available()
        .map_err(|e| CellFailure::new(format!("{e}; install with {INSTALL}")))?;
    measure(design, params, settings).map_err(CellFailure::new)
}

/// One repetition: a fresh server from the image, warmed up, searched by the clients
/// over one window ([`window::Resident::window`]), killed.
fn measure(design: Design, params: &Params, settings: RunSettings) -> Result<Measurement, String> {
    let cpus = window::Cpus::of_cell();
    let mut server = window::Resident::start(design, params, settings.threads, &cpus)?;
    let m = server.window(&cpus, settings);
    server.stop();
    m
}

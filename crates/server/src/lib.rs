//! Hot path 6: your own server. A scenario file says how to start a server with a
//! worker-thread setting (`[server]`: a command template with `{threads}`, `{port}`,
//! `{data_dir}`, an optional configuration file and one-time preparation, how to know it
//! is ready) and how to load it (`[load]`: a command whose output holds its throughput,
//! or one of the lab's own loads), and the lab gives it seed 002's treatment: the thread
//! x core matrix with the server pinned to the cell's cores and the load on the other
//! CPUs, one server per repetition, the server's time account and CPU use, its profile
//! (its processes sampled with the lab's), and the seed's question answered by one
//! generic finding ([`findings`]).
//!
//! The modules: [`spec`] (the tables as parameters, every template and pattern checked
//! before anything runs), [`template`] (`{name}` variables), [`prepare`] and [`cache`]
//! (the one-time preparation, kept between runs), [`process`] (a server that outlives
//! nothing), [`procstat`] (its threads' time from `/proc`), [`load`] (a window of load),
//! [`window`] (one repetition). The ldap hot path runs 389 DS and OpenLDAP on the same
//! [`process`], [`procstat`], [`cache`] and [`findings`] machinery.

/// The template cache, kept in [`launcher::cache`] (the ldap hot path and PostgreSQL use
/// it too); named here too for the callers that knew it as `server::cache`.
pub use launcher::cache;
/// The server process and its time account, kept in [`launcher`] (one place starts real
/// servers); named here too for the callers that knew them as `server::process` and
/// `server::procstat`.
pub use launcher::{process, procstat};
pub mod findings;
pub mod load;
pub mod prepare;
pub mod spec;
pub mod template;
pub mod tiny;
pub mod window;

use harness::hotpath::{Description, Missing, Variant};
use harness::{scratch, CellFailure, HotPath, Params};

/// The most worker threads a cell may ask of a server.
pub const MAX_SERVER_THREADS: usize = 4096;

/// The one variant: the server the file's `[server]` table starts.
pub const VARIANT: &str = "configured";

/// The server hot path as `lab` sees it.
pub struct ServerHotPath;

/// The server hot path's one variant, in the shape every hot path's variants take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Design {
    /// The server the scenario file's `[server]` table starts.
    Configured,
}

impl Design {
    /// Its registry entry.
    pub const fn entry(self) -> Variant {
        match self {
            Design::Configured => Variant {
                name: VARIANT,
                summary: "the server the scenario file's [server] table starts, its worker-thread setting = threads, driven by its [load]",
                measure: |params, settings| window::measure(params, settings).map_err(CellFailure::new),
            },
        }
    }
}

harness::variant_registry!(VARIANTS = "server" Design [Configured]);

const DESCRIPTION: Description = Description {
    name: "server",
    summary: "your own server: the program a scenario file names, threads = its worker-thread setting, pinned to the cell's cores",
    variants: VARIANTS,
    params: spec::PARAMS,
    charted_extras: &[
        ("server_cpu_util", "server CPU use (share of its CPUs)"),
        ("client_cpu_util", "client CPU use (share of their CPUs)"),
    ],
};

impl HotPath for ServerHotPath {
    fn preloads_locks(&self) -> bool {
        // The user's server starts through `launcher::process::Running`; one that is
        // statically linked or clears LD_PRELOAD is refused there with a line saying so.
        true
    }
    fn description(&self) -> &'static Description {
        &DESCRIPTION
    }

    fn check(&self, params: &Params) -> Result<(), String> {
        scratch::check_data_dir(params.text(scratch::DATA_DIR.name))?;
        spec::server(params)?;
        spec::load(params).map(drop)
    }

    fn check_threads(&self, _params: &Params, threads: usize) -> Result<(), String> {
        if threads > MAX_SERVER_THREADS {
            return Err(format!(
                "threads={threads}: a server's worker threads; accepted 1..={MAX_SERVER_THREADS}"
            ));
        }
        Ok(())
    }

    fn missing(&self, params: &Params) -> Option<Missing> {
        let server = spec::server(params).ok()?;
        let mut lacking: Vec<String> = Vec::new();
        if server.program != "lab" && process::find_program(&server.program).is_none() {
            lacking.push(server.program.clone());
        }
        if let Ok(spec::LoadSpec::Command { command, .. }) = spec::load(params) {
            let program = command.split_whitespace().next().unwrap_or_default();
            if !program.contains('{') && process::find_program(program).is_none() {
                lacking.push(program.to_owned());
            }
        }
        (!lacking.is_empty()).then(|| Missing {
            what: lacking.join(" and "),
            packages: server.packages.clone(),
            reason: format!("{} not found on PATH or in /usr/sbin", lacking.join(", ")),
        })
    }
}

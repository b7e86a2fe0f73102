//! The load of one window against a started server: a command of the user's
//! ([`command`]) or one of the lab's own ([`builtin`]), both on the clients' CPUs, both
//! returning the runner's `Measurement` and the server's threads at the window's edges.
//! Not here: starting the server, the server's account and the record's extras
//! ([`crate::window`]).

pub mod builtin;
pub mod command;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::SystemTime;

use harness::{runner, Measurement, RunSettings};

use crate::procstat::{self, Cpus, Snapshot};
use crate::spec::LoadSpec;

/// The server's threads when the window opened and when it closed.
pub type Edges = Option<(Snapshot, Snapshot)>;

/// The server a window drives, and where its load runs.
pub struct Target<'a> {
    /// The server's port on 127.0.0.1.
    pub port: u16,
    /// The server's processes.
    pub server: &'a [u32],
    /// The server's and the clients' CPUs.
    pub cpus: &'a Cpus,
    /// The cell's folder (a load command runs there).
    pub folder: &'a Path,
}

/// One window of `load` with `clients` clients against `target`; `values` fills a load
/// command's template.
pub fn window(
    load: &LoadSpec,
    clients: usize,
    target: &Target<'_>,
    values: BTreeMap<&'static str, String>,
    settings: RunSettings,
) -> Result<(Measurement, Edges), String> {
    let Target {
        port,
        server,
        cpus,
        folder,
    } = *target;
    let protocol = match load {
        LoadSpec::Command {
            command,
            throughput,
            errors,
        } => {
            let w = command::Window {
                command,
                throughput,
                errors: errors.as_ref(),
                values,
                folder,
                cpus: &cpus.clients,
                server,
                clients,
            };
            return w.measure(settings);
        }
        LoadSpec::Line { request } => builtin::Protocol::Line(request.clone()),
        LoadSpec::Memcached => {
            builtin::load_keys(port)?;
            builtin::Protocol::Memcached
        }
    };
    let rng_seed = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64);
    let clients_of = builtin::Clients::new(port, protocol, server.to_vec(), rng_seed);
    let workload = builtin::BuiltinLoad(clients_of.clone());
    // The clients' threads inherit this thread's mask; the server keeps its own.
    let result = procstat::set_thread_cpus(&cpus.clients).map(|()| {
        runner::run(
            &workload,
            RunSettings {
                threads: clients,
                ..settings
            },
        )
    });
    procstat::set_thread_cpus(&cpus.server)?;
    let m = result?.map_err(|f| f.reason)?;
    let (open, close) = clients_of.edges();
    Ok((m, open.zip(close)))
}

/// What a window's clients saw, each client's figures: whether it connected, how many
/// answers were right and wrong, and the first wrong answer and failure it met.
pub struct Tally<'a> {
    /// Each client's connection error, if it had one.
    pub connect_errors: Vec<Option<&'a str>>,
    /// Answers checked and right, all clients.
    pub answered: u64,
    /// Answers checked and wrong, all clients.
    pub wrong: u64,
    /// The first wrong answer, in words.
    pub first_wrong: Option<String>,
    /// The first failed request, in words.
    pub first_failure: Option<String>,
}

/// The invariants every checking client load shares (the ldap hot path's and the
/// built-in ones): every client connected, no answer was wrong, and some request was
/// answered. `noun` names a request, singular and plural (`("search", "searches")`);
/// `wrong` says how a wrong one reads (`answered with the wrong entry`).
pub fn verdict(t: Tally<'_>, (one, many): (&str, &str), wrong: &str) -> Result<(), String> {
    if let Some((i, Some(why))) = t
        .connect_errors
        .iter()
        .enumerate()
        .find(|(_, e)| e.is_some())
    {
        return Err(format!("client {i}: {why}"));
    }
    if t.wrong > 0 {
        let first = t
            .first_wrong
            .map_or(String::new(), |f| format!(" (first: {f})"));
        return Err(format!(
            "{} of {} {many} {wrong}{first}",
            t.wrong,
            t.wrong + t.answered
        ));
    }
    if t.answered == 0 {
        let why = t.first_failure.unwrap_or_else(|| format!("no {one} ran"));
        return Err(format!("no {one} was answered: {why}"));
    }
    Ok(())
}

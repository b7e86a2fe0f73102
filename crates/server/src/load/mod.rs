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

use harness::{runner, Measurement, Outcome, RunSettings};

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

/// What one checking client counted in a window: right and wrong answers, failed
/// requests, and the first wrong answer and failure it met, in words. The ldap hot
/// path's clients and the built-in ones each keep one, so their invariants
/// ([`verdict`]) and their record's extras ([`extra`]) read alike.
#[derive(Debug, Default)]
pub struct Checked {
    /// Answers checked and right.
    pub answered: u64,
    /// Answers checked and wrong.
    pub wrong: u64,
    /// The first wrong answer, in words, where the check says why.
    pub first_wrong: Option<String>,
    /// Requests that failed (an error, a timeout, a lost connection).
    pub failed: u64,
    /// The first failed request, in words.
    pub first_failure: Option<String>,
}

impl Checked {
    /// Counts a right answer.
    pub fn count_right(&mut self) -> Outcome {
        self.answered += 1;
        Outcome::OK
    }

    /// Counts a wrong answer (`why`, where the check says).
    pub fn count_wrong(&mut self, why: Option<String>) -> Outcome {
        self.wrong += 1;
        if let Some(why) = why {
            self.first_wrong.get_or_insert(why);
        }
        Outcome::failed(0)
    }

    /// Counts a failed request.
    pub fn count_failed(&mut self, why: String) -> Outcome {
        self.failed += 1;
        self.first_failure.get_or_insert(why);
        Outcome::failed(0)
    }
}

/// The invariants every checking client load shares: every client connected, no answer
/// was wrong, and some request was answered. `clients` gives each client's connection
/// error (if it had one) and counts; `noun` names a request, singular and plural
/// (`("search", "searches")`); `wrong` says how a wrong one reads (`answered with the
/// wrong entry`).
pub fn verdict<'a>(
    clients: impl IntoIterator<Item = (Option<&'a str>, &'a Checked)>,
    (one, many): (&str, &str),
    wrong: &str,
) -> Result<(), String> {
    let mut all = Checked::default();
    for (i, (connect_error, c)) in clients.into_iter().enumerate() {
        if let Some(why) = connect_error {
            return Err(format!("client {i}: {why}"));
        }
        all.answered += c.answered;
        all.wrong += c.wrong;
        all.first_wrong = all.first_wrong.or_else(|| c.first_wrong.clone());
        all.first_failure = all.first_failure.or_else(|| c.first_failure.clone());
    }
    if all.wrong > 0 {
        let first = all
            .first_wrong
            .map_or(String::new(), |f| format!(" (first: {f})"));
        return Err(format!(
            "{} of {} {many} {wrong}{first}",
            all.wrong,
            all.wrong + all.answered
        ));
    }
    if all.answered == 0 {
        let why = all.first_failure.unwrap_or_else(|| format!("no {one} ran"));
        return Err(format!("no {one} was answered: {why}"));
    }
    Ok(())
}

/// The extras every checking client load records: `clients`, `failed_<many>` (the
/// failed requests) and, where one failed, `first_failure`.
pub fn extra<'a>(
    clients: impl IntoIterator<Item = &'a Checked>,
    many: &str,
) -> serde_json::Map<String, serde_json::Value> {
    let (mut count, mut failed, mut first) = (0usize, 0u64, None);
    for c in clients {
        count += 1;
        failed += c.failed;
        first = first.or_else(|| c.first_failure.clone());
    }
    let mut out = serde_json::Map::new();
    out.insert("clients".into(), count.into());
    out.insert(format!("failed_{many}"), failed.into());
    if let Some(why) = first {
        out.insert("first_failure".into(), why.into());
    }
    out
}

#[cfg(test)]
mod tests;

//! What a scenario file says about its server and its load, as the hot path's parameters,
//! and those parameters read back as a [`ServerSpec`] and a [`LoadSpec`].
//!
//! A scenario file writes them as two tables, `[server]` and `[load]`; `lab` reads a
//! table named like a prefix of a hot path's parameters as those parameters
//! (`[server] command = ...` is `server_command`), so they travel to a cell's child like
//! any parameter and every record states the commands that made it. Everything a cell
//! could refuse is refused here, when the plan is checked: an unknown template variable,
//! a pattern that does not compile, a load that is neither built in nor a command.
//! This module starts nothing.

use std::time::Duration;

use harness::{scratch, ParamKind, ParamSpec, Params};
use regex_lite::Regex;

use crate::template;

/// Variables of the server's command, configuration and readiness command.
pub const SERVER_VARIABLES: &[&str] = &[
    "threads", "port", "host", "data_dir", "config", "prepared", "cpus", "lab",
];
/// Variables of the one-time preparation.
pub const PREPARE_VARIABLES: &[&str] = &["prepared", "lab"];
/// Variables of the load command.
pub const LOAD_VARIABLES: &[&str] = &[
    "clients", "port", "host", "seconds", "threads", "data_dir", "prepared", "lab",
];

/// The built-in loads.
pub const BUILTIN_LOADS: &[&str] = &["none", "line", "memcached"];

/// The hot path's parameters: the `[server]` and `[load]` tables, the load's clients and
/// the scratch folder.
pub const PARAMS: &[ParamSpec] = &[
    text("server_command", "the server's command (stays in the foreground), e.g. memcached -t {threads} -p {port}"),
    text("server_config", "a configuration file's text, written to {config} before the server starts"),
    ParamSpec { name: "server_ready", kind: ParamKind::Text, default: "port", help: "how a server shows it is ready: port (its port accepts a connection) or a command that exits 0" },
    ParamSpec { name: "server_ready_timeout", kind: ParamKind::Int { min: 1, max: 600 }, default: "20", help: "seconds a server may take to become ready" },
    text("server_prepare", "a one-time preparation (a data load) that fills {prepared}; its folder is cached between cells and runs"),
    ParamSpec { name: "server_copy_prepared", kind: ParamKind::Bool, default: "false", help: "give each server a fresh copy of the prepared folder (a server that writes to its data), with the folder's path rewritten in its text files" },
    text("server_leftovers", "files the server makes outside its folder that a kill leaves behind (comma-separated), removed once it is gone"),
    text("server_program", "the program the file needs; a machine without it skips the file in one line (default: the command's first word)"),
    text("server_packages", "the Debian packages that install it, comma-separated (just setup installs them)"),
    text("server_comm", "the server's thread names as profiles show them, comma-separated (default: the program's name)"),
    ParamSpec { name: "server_default_threads", kind: ParamKind::IntOr { min: 1, max: 4096, words: &["none", "nproc"] }, default: "none", help: "the thread count the server runs when not told (nproc: one per CPU), for the threads = CPUs against the default part" },
    text("server_default_setting", "what {threads} is written as at the default's thread count (e.g. -1 or auto), so that cell runs the server's own default"),
    ParamSpec { name: "server_port", kind: ParamKind::IntOr { min: 1, max: 65535, words: &["auto"] }, default: "auto", help: "the port: auto picks a free one per server; a fixed port already in use fails the cell" },
    ParamSpec { name: "load_builtin", kind: ParamKind::Choice(BUILTIN_LOADS), default: "none", help: "a load of the lab's own: line (a request line, a reply line) or memcached (get and set, every answer checked)" },
    text("load_command", "the load's command, run once to warm up and once for the window, e.g. wrk -t2 -c{clients} -d{seconds}s http://{host}:{port}/"),
    text("load_throughput", "a regular expression whose first group is the load's operations per second in its output, or json:<path>"),
    text("load_errors", "a regular expression whose first group is the load's failed operations (no match: none), or json:<path>"),
    ParamSpec { name: "load_request", kind: ParamKind::Text, default: "GET", help: "the line a line load sends (every reply line counts)" },
    ParamSpec { name: "connections", kind: ParamKind::Int { min: 1, max: 1024 }, default: "10", help: "the load's clients ({clients}), one connection each (named so because clients= is the clients axis)" },
    scratch::DATA_DIR,
];

const fn text(name: &'static str, help: &'static str) -> ParamSpec {
    ParamSpec {
        name,
        kind: ParamKind::Text,
        default: "",
        help,
    }
}

/// How the server shows it is ready.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ready {
    /// Its port accepts a TCP connection.
    Port,
    /// This command (a template) exits 0.
    Command(String),
}

/// The server of a cell, as its parameters say.
#[derive(Debug, Clone)]
pub struct ServerSpec {
    /// The command template.
    pub command: String,
    /// The configuration file's template, if any.
    pub config: Option<String>,
    /// How it shows it is ready.
    pub ready: Ready,
    /// How long it may take.
    pub ready_timeout: Duration,
    /// The preparation's command template, if any.
    pub prepare: Option<String>,
    /// Whether each server gets a copy of the prepared folder.
    pub copy_prepared: bool,
    /// Files it leaves outside its folder.
    pub leftovers: Vec<std::path::PathBuf>,
    /// The program it needs.
    pub program: String,
    /// The packages that install it.
    pub packages: Vec<String>,
    /// Its thread names in profiles.
    pub comm: Vec<String>,
    /// Its own default thread count: `Some(None)` for one per CPU.
    pub default_threads: Option<Option<usize>>,
    /// What `{threads}` becomes at the default's count.
    pub default_setting: Option<String>,
    /// A fixed port, or `None` for a free one per server.
    pub port: Option<u16>,
}

impl ServerSpec {
    /// The server's default thread count on `cpus` CPUs, if the file says.
    pub fn default_on(&self, cpus: usize) -> Option<usize> {
        self.default_threads.map(|d| d.unwrap_or(cpus))
    }

    /// `{threads}` as written for a cell of `threads` on `cpus` CPUs: the default's
    /// setting at the default's count, else the number.
    pub fn threads_setting(&self, threads: usize, cpus: usize) -> String {
        match (&self.default_setting, self.default_on(cpus)) {
            (Some(setting), Some(d)) if d == threads => setting.clone(),
            _ => threads.to_string(),
        }
    }
}

/// Where a figure is in a load's output.
#[derive(Debug, Clone)]
pub enum Pattern {
    /// The first group of a regular expression.
    Regex(Regex),
    /// A dotted path into the output as JSON (`a.b.0.c`).
    Json(String),
}

impl Pattern {
    /// Parses `json:<path>` or a regular expression with a group; `what` names it.
    pub fn parse(what: &str, text: &str) -> Result<Pattern, String> {
        if let Some(path) = text.strip_prefix("json:") {
            return Ok(Pattern::Json(path.trim().to_owned()));
        }
        let re = Regex::new(text).map_err(|e| {
            let first = e.to_string();
            let line = first.lines().last().unwrap_or("").trim().to_owned();
            format!("{what}={text:?}: not a regular expression ({line})")
        })?;
        if re.captures_len() < 2 {
            return Err(format!(
                "{what}={text:?}: needs a group around the figure, e.g. Requests/sec:\\s+([0-9.]+)"
            ));
        }
        Ok(Pattern::Regex(re))
    }

    /// The figure in `output`; `None` when the pattern does not find one.
    pub fn find(&self, output: &str) -> Option<f64> {
        match self {
            Pattern::Regex(re) => re
                .captures_iter(output)
                .last()
                .and_then(|c| c.get(1))
                .and_then(|m| m.as_str().replace(',', "").parse().ok()),
            Pattern::Json(path) => {
                let value: serde_json::Value = serde_json::from_str(output.trim()).ok()?;
                let found = path.split('.').filter(|s| !s.is_empty()).try_fold(
                    &value,
                    |v, key| match key.parse::<usize>() {
                        Ok(i) if v.is_array() => v.get(i),
                        _ => v.get(key),
                    },
                )?;
                found
                    .as_f64()
                    .or_else(|| found.as_str().and_then(|s| s.parse().ok()))
            }
        }
    }

    /// The pattern as written, for a failure line.
    pub fn text(&self) -> String {
        match self {
            Pattern::Regex(re) => re.as_str().to_owned(),
            Pattern::Json(path) => format!("json:{path}"),
        }
    }
}

/// How a cell's load drives the server.
#[derive(Debug, Clone)]
pub enum LoadSpec {
    /// A command the lab runs, its figures read from its output.
    Command {
        /// The command template.
        command: String,
        /// Its operations per second.
        throughput: Pattern,
        /// Its failed operations, if it reports them.
        errors: Option<Pattern>,
    },
    /// The lab's line load: `request` sent, a line back.
    Line {
        /// The line sent.
        request: String,
    },
    /// The lab's memcached load.
    Memcached,
}

fn non_empty(params: &Params, name: &str) -> Option<String> {
    let t = params.text(name).trim();
    (!t.is_empty()).then(|| t.to_owned())
}

/// The server the parameters describe, every template checked.
pub fn server(params: &Params) -> Result<ServerSpec, String> {
    let command = non_empty(params, "server_command").ok_or(
        "server.command: missing: a [server] table must say how to start the server, e.g. command = \"memcached -t {threads} -p {port}\"",
    )?;
    template::check("server.command", &command, SERVER_VARIABLES)?;
    let config = non_empty(params, "server_config");
    if let Some(c) = &config {
        template::check("server.config", c, SERVER_VARIABLES)?;
    }
    let ready = match params.text("server_ready").trim() {
        "" | "port" => Ready::Port,
        cmd => {
            template::check("server.ready", cmd, SERVER_VARIABLES)?;
            Ready::Command(cmd.to_owned())
        }
    };
    let prepare = non_empty(params, "server_prepare");
    if let Some(p) = &prepare {
        template::check("server.prepare", p, PREPARE_VARIABLES)?;
    }
    let uses_prepared = [Some(&command), config.as_ref()]
        .into_iter()
        .flatten()
        .any(|t| template::variables(t).contains(&"prepared"));
    if uses_prepared && prepare.is_none() {
        return Err("server: {prepared} is used but no prepare step fills it: add prepare = \"...\" to [server]".to_owned());
    }
    // `{lab}` is the lab's own program, always there.
    let program = non_empty(params, "server_program").unwrap_or_else(|| {
        match command.split_whitespace().next().unwrap_or_default() {
            "{lab}" => "lab".to_owned(),
            first => first.to_owned(),
        }
    });
    let name = program.rsplit('/').next().unwrap_or(&program).to_owned();
    let list = |name: &str| -> Vec<String> {
        params
            .text(name)
            .split(',')
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .collect()
    };
    let comm = Some(list("server_comm"))
        .filter(|l| !l.is_empty())
        .unwrap_or_else(|| vec![name.chars().take(15).collect()]);
    let default_threads = match params.value("server_default_threads") {
        serde_json::Value::String(w) if w == "nproc" => Some(None),
        v => v.as_u64().map(|n| Some(n as usize)),
    };
    let default_setting = non_empty(params, "server_default_setting");
    if default_setting.is_some() && default_threads.is_none() {
        return Err("server.default_setting: needs default_threads (the count at which {threads} is written so)".to_owned());
    }
    Ok(ServerSpec {
        command,
        config,
        ready,
        ready_timeout: Duration::from_secs(params.count("server_ready_timeout") as u64),
        prepare,
        copy_prepared: params.flag("server_copy_prepared"),
        leftovers: list("server_leftovers")
            .into_iter()
            .map(Into::into)
            .collect(),
        program,
        packages: list("server_packages"),
        comm,
        default_threads,
        default_setting,
        port: params.value("server_port").as_u64().map(|p| p as u16),
    })
}

/// The load the parameters describe, every template and pattern checked.
pub fn load(params: &Params) -> Result<LoadSpec, String> {
    let command = non_empty(params, "load_command");
    match (params.word("load_builtin"), command) {
        ("none", None) => Err("load: missing: a [load] table must name a builtin (line, memcached) or a command with a throughput pattern".to_owned()),
        ("none", Some(command)) => {
            template::check("load.command", &command, LOAD_VARIABLES)?;
            let throughput = non_empty(params, "load_throughput").ok_or(
                "load.throughput: missing: a load command needs a pattern for its operations per second, e.g. throughput = 'Requests/sec:\\s+([0-9.]+)'",
            )?;
            let errors = non_empty(params, "load_errors")
                .map(|e| Pattern::parse("load.errors", &e))
                .transpose()?;
            Ok(LoadSpec::Command {
                command,
                throughput: Pattern::parse("load.throughput", &throughput)?,
                errors,
            })
        }
        (builtin, Some(_)) => Err(format!(
            "load: both builtin = {builtin:?} and a command: name one"
        )),
        ("line", None) => Ok(LoadSpec::Line {
            request: params.text("load_request").to_owned(),
        }),
        (_, None) => Ok(LoadSpec::Memcached),
    }
}

#[cfg(test)]
mod tests;

//! One repetition of a `server` cell: the prepared data, a fresh server in the cell's
//! scratch folder pinned to the cell's cores, one window of the load from the other
//! CPUs, the server's time account from its threads' schedstat at the window's edges,
//! the record's extras, and the server killed with everything it started.
//!
//! Refused here, each as a failed cell with its reason in one line: a fixed port already
//! in use, a server that exits or is not ready in time, a server whose threads may run
//! outside the cell's CPUs, a load that fails or prints no figure. Not here: what the
//! scenario file said ([`crate::spec`]), how a load runs ([`crate::load`]).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use harness::{affinity, probe, scratch, Measurement, Params, RunSettings};
use serde_json::json;

use crate::load::{self, Target};
use crate::process::{self, Running, Start};
use crate::procstat::{self, Cpus};
use crate::spec::{self, Ready, ServerSpec};
use crate::{cache, prepare, template};

/// The configuration file's name in the server's folder (`{config}`).
pub const CONFIG_FILE: &str = "server.conf";

/// One repetition of a cell of `threads` server threads.
pub fn measure(params: &Params, settings: RunSettings) -> Result<Measurement, String> {
    let server = spec::server(params)?;
    let load = spec::load(params)?;
    let cpus = Cpus::of_cell();
    let prepared = prepare::ensure(&server)?;
    let folder = scratch::private_folder(scratch::data_dir(params), "contention-lab-server-")?;
    let data_dir = folder.path().join("data");
    std::fs::create_dir(&data_dir).map_err(|e| format!("{}: {e}", data_dir.display()))?;
    let prepared = match prepared {
        Some(p) if server.copy_prepared => {
            let copy = data_dir.join("prepared");
            std::fs::create_dir(&copy).map_err(|e| e.to_string())?;
            let files = cache::naming_files(&p);
            let names: Vec<&str> = files.iter().map(String::as_str).collect();
            cache::copy_into(&p, &copy, &names).map(|()| Some(copy))?
        }
        other => other,
    };
    let port = match server.port {
        Some(p) if process::port_in_use(p) => {
            return Err(format!(
                "server.port {p}: something already listens on 127.0.0.1:{p}; stop it or use port = \"auto\""
            ))
        }
        Some(p) => p,
        None => process::free_port()?,
    };
    let setting = server.threads_setting(settings.threads, cpus.server.len());
    let values = server_values(&setting, port, &data_dir, prepared.as_ref(), &cpus);
    if let Some(text) = &server.config {
        let path = data_dir.join(CONFIG_FILE);
        std::fs::write(&path, template::fill(text, &values))
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    let mut running = start(&server, port, &data_dir, &cpus, &values)?;
    let mut m = window(&mut running, &load, params, &cpus, &values, settings)?;
    m.extra
        .insert("server_threads_setting".into(), json!(setting));
    if let Some(d) = server.default_on(cpus.server.len()) {
        m.extra.insert("server_default_threads".into(), json!(d));
    }
    running.stop();
    Ok(m)
}

fn server_values(
    setting: &str,
    port: u16,
    data_dir: &std::path::Path,
    prepared: Option<&PathBuf>,
    cpus: &Cpus,
) -> BTreeMap<&'static str, String> {
    BTreeMap::from([
        ("threads", setting.to_owned()),
        ("port", port.to_string()),
        ("host", "127.0.0.1".to_owned()),
        ("data_dir", data_dir.to_string_lossy().into_owned()),
        (
            "config",
            data_dir.join(CONFIG_FILE).to_string_lossy().into_owned(),
        ),
        (
            "prepared",
            prepared.map_or(String::new(), |p| p.to_string_lossy().into_owned()),
        ),
        ("cpus", affinity::format_cpu_list(&cpus.server)),
        ("lab", lab_program()),
    ])
}

/// The lab's own program (`{lab}`): the child measuring the cell is `lab run`.
fn lab_program() -> String {
    std::env::current_exe().map_or("lab".to_owned(), |p| p.to_string_lossy().into_owned())
}

/// Starts the server and waits until it is ready; refuses one that ignores its mask.
fn start(
    server: &ServerSpec,
    port: u16,
    data_dir: &std::path::Path,
    cpus: &Cpus,
    values: &BTreeMap<&'static str, String>,
) -> Result<Running, String> {
    let mut command = Command::new("sh");
    // `exec`: the shell becomes the server, so the pid the lab kills and accounts is it.
    command
        .arg("-c")
        .arg(format!("exec {}", template::fill(&server.command, values)));
    let ready_line = match &server.ready {
        Ready::Port => None,
        Ready::Command(t) => Some(template::fill(t, values)),
    };
    let start = Start {
        folder: data_dir,
        port,
        cpus: &cpus.server,
        leftovers: &server.leftovers,
        logs: &[],
        timeout: server.ready_timeout,
        lock_wrappers: Some(&[]),
    };
    let running = Running::start(command, start, |r| match &ready_line {
        None => Ok(process::port_in_use(r.port)),
        Some(line) => Ok(Command::new("sh")
            .arg("-c")
            .arg(line)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())),
    })?;
    process::check_mask(&running.processes(), &cpus.server)?;
    Ok(running)
}

/// One window against a ready server, and the record's extras.
fn window(
    running: &mut Running,
    load: &spec::LoadSpec,
    params: &Params,
    cpus: &Cpus,
    values: &BTreeMap<&'static str, String>,
    settings: RunSettings,
) -> Result<Measurement, String> {
    // Settle: a server's workers may still be starting when its port first answers.
    std::thread::sleep(Duration::from_millis(50));
    let pids = running.processes();
    let clients = params.count("connections");
    let mut load_values = values.clone();
    load_values.insert("clients", clients.to_string());
    load_values.insert("seconds", String::new());
    let target = Target {
        port: running.port,
        server: &pids,
        cpus,
        folder: &running.folder,
    };
    probe::set_companions(&pids);
    let began = Instant::now();
    let result = load::window(load, clients, &target, load_values, settings);
    probe::set_companions(&[]);
    let (mut m, edges) = result?;
    let alive = running.alive();
    if !alive {
        m.verified = Err(format!(
            "the server died during the window: {}",
            running.log_tail()
        ));
    }
    let extra = &mut m.extra;
    extra.insert(
        "server_cpus".into(),
        json!(affinity::format_cpu_list(&cpus.server)),
    );
    extra.insert(
        "client_cpus".into(),
        json!(affinity::format_cpu_list(&cpus.clients)),
    );
    extra.insert(
        "server_start_s".into(),
        json!(running.started_in.as_secs_f64()),
    );
    extra.insert("server_processes".into(), json!(pids.len()));
    extra.insert("load_s".into(), json!(began.elapsed().as_secs_f64()));
    extra.insert(
        "server_off_cpu".into(),
        json!("in a profiled cell's profile: server_off_cpu (the scheduler's switch-outs of the server's threads with their stacks, weighted by the time until each ran again; perf as root), or server_off_cpu_absent saying why not"),
    );
    let edges = edges.filter(|_| alive);
    procstat::record_window(
        &mut m,
        cpus,
        edges,
        "the server's threads were not seen at both edges of the window",
    );
    Ok(m)
}

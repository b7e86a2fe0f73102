//! The lab's own loads, for servers whose protocol is small enough to speak here: the
//! harness's runner drives them, so their cells get what every hot path's get (latency
//! percentiles, the clients' time account, a window counted the runner's way).
//!
//! - `line`: each client sends a request line and reads one reply line (the test server
//!   speaks it; so does anything answering a line per line).
//! - `memcached`: the text protocol, 9 gets to 1 set over 1000 keys loaded before the
//!   window, every value checked (a set always writes the key's own value, so any answer
//!   other than that value is wrong whatever the interleaving).
//!
//! The first client reads the server's threads at the window's edges (when it sees the
//! window open, and in `finish` right after it sees it close), so the server's account
//! covers the clients' window. This module starts no server.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use harness::{OpCtx, Outcome, Worker, Workload};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::procstat::Snapshot;

/// Keys the memcached load uses.
pub const KEYS: usize = 1000;
/// How long one request may take before the client counts it failed.
const OP_TIMEOUT: Duration = Duration::from_secs(10);

/// Which protocol the clients speak.
#[derive(Debug, Clone)]
pub enum Protocol {
    /// A request line, a reply line.
    Line(String),
    /// memcached's text protocol.
    Memcached,
}

fn connect(port: u16) -> Result<BufReader<TcpStream>, String> {
    let addr = ([127, 0, 0, 1], port).into();
    let s = TcpStream::connect_timeout(&addr, Duration::from_secs(5))
        .map_err(|e| format!("cannot connect to 127.0.0.1:{port}: {e}"))?;
    s.set_read_timeout(Some(OP_TIMEOUT))
        .map_err(|e| e.to_string())?;
    s.set_nodelay(true).map_err(|e| e.to_string())?;
    Ok(BufReader::new(s))
}

fn value_of(key: usize) -> String {
    format!("value-of-{key}")
}

fn send(conn: &mut BufReader<TcpStream>, text: &str) -> Result<(), String> {
    conn.get_mut()
        .write_all(text.as_bytes())
        .map_err(|e| e.to_string())
}

fn read_line(conn: &mut BufReader<TcpStream>) -> Result<String, String> {
    let mut line = String::new();
    match conn.read_line(&mut line) {
        Ok(0) => Err("the server closed the connection".to_owned()),
        Ok(_) => Ok(line.trim_end().to_owned()),
        Err(e) => Err(e.to_string()),
    }
}

fn set(conn: &mut BufReader<TcpStream>, key: usize) -> Result<(), String> {
    let v = value_of(key);
    send(conn, &format!("set k{key} 0 0 {}\r\n{v}\r\n", v.len()))?;
    match read_line(conn)?.as_str() {
        "STORED" => Ok(()),
        other => Err(format!("set k{key}: {other}")),
    }
}

/// A get; `Ok(false)` for a wrong value.
fn get(conn: &mut BufReader<TcpStream>, key: usize) -> Result<bool, String> {
    send(conn, &format!("get k{key}\r\n"))?;
    let head = read_line(conn)?;
    if head == "END" {
        return Ok(false);
    }
    if !head.starts_with(&format!("VALUE k{key} ")) {
        return Err(format!("get k{key}: {head}"));
    }
    let data = read_line(conn)?;
    let end = read_line(conn)?;
    Ok(data == value_of(key) && end == "END")
}

/// Sets every key once, so that gets find their values (before the clients start).
pub fn load_keys(port: u16) -> Result<(), String> {
    let mut conn = connect(port)?;
    (0..KEYS).try_for_each(|k| set(&mut conn, k))
}

/// The clients of one window.
pub struct Clients {
    port: u16,
    protocol: Protocol,
    server: Vec<u32>,
    rng_seed: u64,
    edges: Mutex<(Option<Snapshot>, Option<Snapshot>)>,
}

impl Clients {
    /// Clients of the server on `port` (processes `server`) speaking `protocol`.
    pub fn new(port: u16, protocol: Protocol, server: Vec<u32>, rng_seed: u64) -> Arc<Clients> {
        Arc::new(Clients {
            port,
            protocol,
            server,
            rng_seed,
            edges: Mutex::new((None, None)),
        })
    }

    /// The server's threads when the window opened and when it closed.
    pub fn edges(&self) -> (Option<Snapshot>, Option<Snapshot>) {
        self.edges.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// The workload the runner drives.
pub struct BuiltinLoad(pub Arc<Clients>);

/// One client connection.
pub struct Client {
    index: usize,
    conn: Result<BufReader<TcpStream>, String>,
    rng: SmallRng,
    shared: Arc<Clients>,
    checked: super::Checked,
}

impl Client {
    fn request(&mut self) -> Result<bool, String> {
        let conn = self.conn.as_mut().map_err(|e| e.clone())?;
        match &self.shared.protocol {
            Protocol::Line(request) => {
                send(conn, &format!("{request}\n"))?;
                Ok(!read_line(conn)?.is_empty())
            }
            Protocol::Memcached => {
                let key = self.rng.random_range(0..KEYS);
                if self.rng.random_range(0..10) == 0 {
                    set(conn, key).map(|()| true)
                } else {
                    get(conn, key)
                }
            }
        }
    }

    fn read_edge(&self, close: bool) {
        if self.index == 0 {
            let s = Snapshot::read_all(&self.shared.server);
            let mut edges = self.shared.edges.lock().unwrap_or_else(|e| e.into_inner());
            if close {
                edges.1 = s;
            } else {
                edges.0 = s;
            }
        }
    }
}

impl Worker for Client {
    fn op(&mut self, _ctx: &mut OpCtx) -> Outcome {
        match self.request() {
            Ok(true) => self.checked.count_right(),
            Ok(false) => self.checked.count_wrong(None),
            Err(why) => self.checked.count_failed(why),
        }
    }

    fn window_opened(&mut self) {
        self.read_edge(false);
    }

    fn finish(&mut self) {
        self.read_edge(true);
    }
}

impl Workload for BuiltinLoad {
    type Worker = Client;

    fn worker(&self, index: usize, _threads: usize) -> Client {
        Client {
            index,
            conn: connect(self.0.port),
            rng: SmallRng::seed_from_u64(self.0.rng_seed.wrapping_add(index as u64)),
            shared: Arc::clone(&self.0),
            checked: super::Checked::default(),
        }
    }

    fn verify(&self, workers: &[Client]) -> Result<(), String> {
        super::verdict(
            workers
                .iter()
                .map(|w| (w.conn.as_ref().err().map(String::as_str), &w.checked)),
            ("request", "requests"),
            "were answered wrongly",
        )
    }

    fn extra(
        &self,
        workers: &[Client],
        _window: Duration,
    ) -> serde_json::Map<String, serde_json::Value> {
        super::extra(workers.iter().map(|w| &w.checked), "requests")
    }
}

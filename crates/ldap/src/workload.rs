//! The clients: `clients` connections, each on its own thread, issuing the seed's
//! randomised `(uid=user_NNNNNNN)` equality searches (anonymous, subtree from the suffix,
//! every attribute, as the seed's ldclt asked) and checking every answer.
//!
//! The first client also reads the server's threads at the window's edges (when it sees
//! the window open, and in `finish` right after it sees it close), so that the server's
//! account covers the same window as the clients'. This module starts no server.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use harness::{OpCtx, Outcome, Worker, Workload};
use ldap3::{LdapConn, LdapConnSettings, Scope, SearchEntry};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::data;
use crate::procstat::Snapshot;

/// How long one search may take before it counts as failed.
const OP_TIMEOUT: Duration = Duration::from_secs(10);

/// Opens an anonymous connection.
fn connect(url: &str) -> Result<LdapConn, String> {
    let settings = LdapConnSettings::new().set_conn_timeout(Duration::from_secs(5));
    LdapConn::with_settings(settings, url).map_err(|e| format!("cannot connect to {url}: {e}"))
}

/// One search; the entries as (DN, uid values).
fn search(conn: &mut LdapConn, filter: &str) -> Result<Vec<(String, Vec<String>)>, String> {
    let (entries, _) = conn
        .with_timeout(OP_TIMEOUT)
        .search(data::SUFFIX, Scope::Subtree, filter, Vec::<&str>::new())
        .and_then(|r| r.success())
        .map_err(|e| e.to_string())?;
    Ok(entries
        .into_iter()
        .map(|e| {
            let mut e = SearchEntry::construct(e);
            let uids = e.attrs.remove("uid").unwrap_or_default();
            (e.dn, uids)
        })
        .collect())
}

/// Whether the server at `url` answers a search for the suffix entry.
pub fn probe_search(url: &str) -> Result<(), String> {
    let mut conn = connect(url)?;
    let (entries, _) = conn
        .with_timeout(Duration::from_secs(2))
        .search(data::SUFFIX, Scope::Base, "(objectClass=*)", vec!["1.1"])
        .and_then(|r| r.success())
        .map_err(|e| e.to_string())?;
    if entries.len() == 1 {
        Ok(())
    } else {
        Err(format!("{} entries for the suffix", entries.len()))
    }
}

/// Reads every entry once, so the window measures a warm server (the seed's ran ldclt
/// for minutes): 389 DS fills its entry cache, OpenLDAP faults its map in. Returns the
/// entries seen.
pub fn warm(url: &str) -> Result<usize, String> {
    let mut conn = connect(url)?;
    let (entries, _) = conn
        .with_timeout(Duration::from_secs(60))
        .search(data::SUFFIX, Scope::Subtree, "(objectClass=*)", vec!["1.1"])
        .and_then(|r| r.success())
        .map_err(|e| format!("warming the server up: {e}"))?;
    Ok(entries.len())
}

/// What the clients share: where the server is, and its threads at the window's edges.
#[derive(Debug)]
pub struct Shared {
    url: String,
    server_pid: u32,
    users: usize,
    rng_seed: u64,
    /// Test fault: clients check each answer against the next user, as if the server had
    /// answered a search for one uid with another's entry.
    mislabel: bool,
    edges: Mutex<Edges>,
}

/// The workload: a server's address and the directory's size.
pub struct LdapWorkload {
    shared: Arc<Shared>,
}

impl LdapWorkload {
    /// Clients of the server at `url` (process `server_pid`) holding `users` users.
    pub fn new(url: String, server_pid: u32, users: usize, rng_seed: u64) -> LdapWorkload {
        LdapWorkload {
            shared: Arc::new(Shared {
                url,
                server_pid,
                users: users.max(1),
                rng_seed,
                mislabel: false,
                edges: Mutex::new((None, None)),
            }),
        }
    }

    /// The same, with clients that expect the wrong entry for every search (tests only:
    /// shows that verify catches a wrong answer).
    pub fn mislabelled(url: String, server_pid: u32, users: usize) -> LdapWorkload {
        let mut w = LdapWorkload::new(url, server_pid, users, 1);
        Arc::get_mut(&mut w.shared)
            .expect("not shared yet")
            .mislabel = true;
        w
    }

    /// The server's threads when the window opened and when it closed.
    pub fn edges(&self) -> (Option<Snapshot>, Option<Snapshot>) {
        self.shared
            .edges
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

/// One client connection.
pub struct LdapWorker {
    index: usize,
    conn: Result<LdapConn, String>,
    rng: SmallRng,
    shared: Arc<Shared>,
    checked: server::load::Checked,
}

/// The server's threads at one edge of the window, as `edges` says where.
type Edges = (Option<Snapshot>, Option<Snapshot>);

impl LdapWorker {
    /// Worker 0 reads the server's threads and stores them with `store`: one reading an
    /// edge is enough, and the other workers' would differ only by their timing.
    fn read_edge(&self, store: impl FnOnce(&mut Edges, Option<Snapshot>)) {
        if self.index == 0 {
            let s = Snapshot::read(self.shared.server_pid);
            store(
                &mut self.shared.edges.lock().unwrap_or_else(|e| e.into_inner()),
                s,
            );
        }
    }
}

impl Worker for LdapWorker {
    fn op(&mut self, _ctx: &mut OpCtx) -> Outcome {
        let users = self.shared.users;
        let i = self.rng.random_range(1..=users);
        let expected = if self.shared.mislabel {
            i % users + 1
        } else {
            i
        };
        let conn = match &mut self.conn {
            Ok(c) => c,
            Err(_) => return Outcome::failed(0),
        };
        match search(conn, &data::filter(i)) {
            Ok(entries) => match data::check_answer(expected, &entries) {
                Ok(()) => self.checked.count_right(),
                Err(why) => self.checked.count_wrong(Some(why)),
            },
            Err(why) => self.checked.count_failed(why),
        }
    }

    fn window_opened(&mut self) {
        self.read_edge(|edges, s| edges.0 = s);
    }

    fn finish(&mut self) {
        self.read_edge(|edges, s| edges.1 = s);
    }
}

impl Workload for LdapWorkload {
    type Worker = LdapWorker;

    fn worker(&self, index: usize, _threads: usize) -> LdapWorker {
        LdapWorker {
            index,
            conn: connect(&self.shared.url),
            rng: SmallRng::seed_from_u64(self.shared.rng_seed.wrapping_add(index as u64)),
            shared: Arc::clone(&self.shared),
            checked: server::load::Checked::default(),
        }
    }

    fn verify(&self, workers: &[LdapWorker]) -> Result<(), String> {
        server::load::verdict(
            workers
                .iter()
                .map(|w| (w.conn.as_ref().err().map(String::as_str), &w.checked)),
            ("search", "searches"),
            "answered with the wrong entry",
        )
    }

    fn extra(
        &self,
        workers: &[LdapWorker],
        _window: Duration,
    ) -> serde_json::Map<String, serde_json::Value> {
        server::load::extra(workers.iter().map(|w| &w.checked), "searches")
    }
}

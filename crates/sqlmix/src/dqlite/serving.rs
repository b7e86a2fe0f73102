//! The serving side of a dqlite-model app: its one thread, which runs every client
//! connection's requests in arrival order on real SQLite connections and holds writes'
//! commits for Raft. Not here: the client side's pool and transactions (the parent).

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rusqlite::Connection;

use crate::db::{self, DbSettings};

/// What a statement returns.
#[derive(Debug)]
pub(super) enum Row {
    None,
    Int(i64),
    StatusVersion(String, i64),
}

pub(super) type Stmt = Box<dyn FnOnce(&Connection) -> rusqlite::Result<Row> + Send>;
pub(super) type Reply = mpsc::Sender<rusqlite::Result<Row>>;

pub(super) enum Request {
    /// A request with no SQL (handshake, leader lookup): only its serving cost.
    Hello {
        reply: mpsc::Sender<()>,
    },
    Open {
        reply: mpsc::Sender<Result<u64, String>>,
    },
    Exec {
        conn: u64,
        stmt: Stmt,
        reply: Reply,
    },
    /// Commit; `replicate` holds it for the Raft commit first (writes).
    Commit {
        conn: u64,
        replicate: bool,
        reply: Reply,
    },
    Close {
        conn: u64,
    },
}

/// The serving thread's loop: one request at a time, commits held for Raft released when due.
pub(super) fn serve(
    path: PathBuf,
    settings: DbSettings,
    serve_cost: Duration,
    commit: Duration,
    rx: mpsc::Receiver<Request>,
) {
    fine_timer_slack();
    let mut conns: HashMap<u64, Connection> = HashMap::new();
    let mut next_id = 0u64;
    let mut replicating: VecDeque<(Instant, u64, Reply)> = VecDeque::new();
    let finish = |conns: &HashMap<u64, Connection>, id: u64, reply: Reply| {
        let r = match conns.get(&id) {
            Some(c) => c.execute_batch("COMMIT").map(|_| Row::None),
            None => Err(rusqlite::Error::InvalidQuery),
        };
        let _ = reply.send(r);
    };
    loop {
        let now = Instant::now();
        while replicating.front().is_some_and(|(due, _, _)| *due <= now) {
            let (_, id, reply) = replicating.pop_front().expect("checked");
            finish(&conns, id, reply);
        }
        let request = match replicating.front() {
            Some((due, _, _)) => match rx.recv_timeout(due.saturating_duration_since(now)) {
                Ok(r) => r,
                Err(mpsc::RecvTimeoutError::Timeout) => continue,
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            },
            None => match rx.recv() {
                Ok(r) => r,
                Err(_) => break,
            },
        };
        spin(serve_cost);
        match request {
            Request::Hello { reply } => {
                let _ = reply.send(());
            }
            Request::Open { reply } => {
                let opened = db::open(&path, settings).map_err(|e| format!("SQLite: {e}"));
                let _ = reply.send(opened.map(|c| {
                    next_id += 1;
                    conns.insert(next_id, c);
                    next_id
                }));
            }
            Request::Exec { conn, stmt, reply } => {
                let r = match conns.get(&conn) {
                    Some(c) => stmt(c),
                    None => Err(rusqlite::Error::InvalidQuery),
                };
                let _ = reply.send(r);
            }
            Request::Commit {
                conn,
                replicate,
                reply,
            } => {
                if replicate && !commit.is_zero() {
                    replicating.push_back((Instant::now() + commit, conn, reply));
                } else {
                    finish(&conns, conn, reply);
                }
            }
            Request::Close { conn } => {
                conns.remove(&conn);
            }
        }
    }
    for (_, id, reply) in replicating.drain(..) {
        finish(&conns, id, reply);
    }
}

/// Busy for `cost` of wall time: the serving thread's own work on a request.
pub(super) fn spin(cost: Duration) {
    if cost.is_zero() {
        return;
    }
    let start = Instant::now();
    while start.elapsed() < cost {
        std::hint::spin_loop();
    }
}

/// Sets this thread's timer slack to 1 µs (once): the kernel's default 50 µs would turn
/// every short round-trip sleep into at least 50 µs more.
pub(super) fn fine_timer_slack() {
    thread_local! {
        static DONE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }
    DONE.with(|done| {
        if !done.replace(true) {
            // SAFETY: prctl(PR_SET_TIMERSLACK) only changes this thread's timer slack.
            unsafe {
                libc::prctl(libc::PR_SET_TIMERSLACK, 1_000 as libc::c_ulong);
            }
        }
    });
}

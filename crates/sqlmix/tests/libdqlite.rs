//! The real dqlite node (`backend=libdqlite`): the wire client against a node in this
//! process, busy as code 5, the runner's designs verifying through the node, tampering
//! caught, a node that cannot start failing cleanly, and nodes started from several
//! threads at once keeping apart (issue 41). Each test prints why it is
//! skipped where libdqlite.so.0 does not load (CI installs it with `scripts/setup.sh`).

use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

use harness::testing;
use harness::{HotPath, OpCtx, Params, Worker, Workload};
use sqlmix::libdqlite::client::{Client, WireError};
use sqlmix::libdqlite::node::{self, Bind, Node};
use sqlmix::libdqlite::wire::Value;
use sqlmix::runner::TxnRunner;
use sqlmix::workload::{SqlmixWorker, SqlmixWorkload};
use sqlmix::SqlmixHotPath;

fn have_libdqlite(test: &str) -> bool {
    match node::available() {
        Ok(()) => true,
        Err(e) => {
            println!("{test}: skipped: {e}");
            false
        }
    }
}

fn small(dir: &std::path::Path, extra: &[(&str, &str)]) -> Params {
    let mut pairs = vec![
        ("backend", "libdqlite"),
        ("models", "4"),
        ("units", "3"),
        ("read_pct", "50"),
        ("pool_size", "3"),
        ("slots", "2"),
        ("data_dir", dir.to_str().unwrap()),
    ];
    pairs.extend_from_slice(extra);
    testing::params(&SqlmixHotPath, &pairs)
}

#[test]
fn the_wire_client_speaks_to_a_real_node() {
    if !have_libdqlite("the_wire_client_speaks_to_a_real_node") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for (i, bind) in [Bind::Abstract, Bind::Loopback].into_iter().enumerate() {
        let node = Node::start(i, &dir.path().join(format!("n{i}")), &bind).unwrap();
        let mut c = Client::connect(node.address(), 1).unwrap();
        assert_eq!(c.leader.1, node.address(), "a lone node leads itself");
        let db = c.open("test").unwrap();
        c.exec_sql(
            db,
            "CREATE TABLE t (n INTEGER, s TEXT, b BLOB, f REAL)",
            &[],
        )
        .unwrap();
        let insert = c
            .prepare(db, "INSERT INTO t VALUES (?1, ?2, ?3, ?4)")
            .unwrap();
        assert_eq!(insert.params, 4);
        for i in 0..300i64 {
            let r = c
                .exec(
                    insert,
                    &[
                        Value::Int(i),
                        Value::from(format!("row {i}").as_str()),
                        Value::Blob(vec![i as u8; (i % 11) as usize]),
                        Value::Float(i as f64 / 2.0),
                    ],
                )
                .unwrap();
            assert_eq!(r.rows_affected, 1);
        }
        c.finalize(insert).unwrap();
        // Enough rows to come back in more than one message.
        let rows = c
            .query_sql(db, "SELECT n, s, b, f, NULL FROM t ORDER BY n", &[])
            .unwrap();
        assert_eq!(rows.columns, ["n", "s", "b", "f", "NULL"]);
        assert_eq!(rows.rows.len(), 300);
        assert_eq!(
            rows.rows[299],
            vec![
                Value::Int(299),
                Value::from("row 299"),
                Value::Blob(vec![43; 2]),
                Value::Float(149.5),
                Value::Null
            ]
        );
        let count = c
            .prepare(db, "SELECT COUNT(*) FROM t WHERE n >= ?1")
            .unwrap();
        let rows = c.query(count, &[Value::Int(100)]).unwrap();
        assert_eq!(rows.rows, vec![vec![Value::Int(200)]]);
        let err = c.exec_sql(db, "SELECT * FROM nowhere", &[]).unwrap_err();
        assert!(
            matches!(&err, WireError::Sqlite { code: 1, message } if message.contains("nowhere")),
            "{err}"
        );
        drop(c);
        drop(node);
    }
}

#[test]
fn a_write_meeting_a_held_write_lock_gets_code_5_at_once() {
    if !have_libdqlite("a_write_meeting_a_held_write_lock_gets_code_5_at_once") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let node = Node::start(0, &dir.path().join("n"), &Bind::Abstract).unwrap();
    let mut a = Client::connect(node.address(), 1).unwrap();
    let mut b = Client::connect(node.address(), 2).unwrap();
    let (da, db) = (a.open("x").unwrap(), b.open("x").unwrap());
    a.exec_sql(da, "CREATE TABLE t (n INTEGER)", &[]).unwrap();
    a.exec_sql(da, "BEGIN; INSERT INTO t VALUES (1)", &[])
        .unwrap();
    b.exec_sql(db, "BEGIN", &[]).unwrap();
    let start = Instant::now();
    let err = b.exec_sql(db, "INSERT INTO t VALUES (2)", &[]).unwrap_err();
    assert!(err.is_busy(), "{err}");
    assert!(
        matches!(err, WireError::Sqlite { code, .. } if code & 0xff == 5),
        "{err}"
    );
    assert!(
        start.elapsed() < Duration::from_millis(500),
        "busy came back without a busy wait"
    );
    let _ = b.exec_sql(db, "ROLLBACK", &[]);
    a.exec_sql(da, "COMMIT", &[]).unwrap();
    b.exec_sql(db, "INSERT INTO t VALUES (3)", &[]).unwrap();
    let rows = b.query_sql(db, "SELECT COUNT(*) FROM t", &[]).unwrap();
    assert_eq!(rows.rows, vec![vec![Value::Int(2)]]);
}

#[test]
fn the_designs_verify_through_the_node_and_leave_nothing() {
    if !have_libdqlite("the_designs_verify_through_the_node_and_leave_nothing") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let served = ["single-conn", "pool", "semaphore", "sharded", "breaker"];
    let cases = served
        .iter()
        .map(|v| (*v, "per-model"))
        .chain([("pool", "per-app"), ("sharded", "per-app")]);
    for (variant, databases) in cases {
        let p = small(dir.path(), &[("databases", databases)]);
        // Both kinds of statement must reach the node. A 200 ms window on a loaded
        // two-core machine now and then holds no read or no write (2 runs in 80 here):
        // that is the machine, not the design, so such a window is taken again, up to
        // three times; every window must verify.
        let mut both = false;
        for _ in 0..3 {
            let m = SqlmixHotPath
                .measure(variant, &p, testing::settings(4, 20, 200))
                .unwrap_or_else(|f| panic!("{variant} {databases}: {f}"));
            assert_eq!(m.verified, Ok(()), "{variant} {databases}");
            assert_eq!(m.extra["backend"], "libdqlite");
            assert!(m.extra["connects_per_sec"].is_number());
            let counted = |k: &str| m.extra[k].as_f64().unwrap() > 0.0;
            if counted("writes_per_sec") && counted("reads_per_sec") {
                both = true;
                break;
            }
        }
        assert!(
            both,
            "{variant} {databases}: no window of three held both a read and a write"
        );
    }
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    let p = small(dir.path(), &[]);
    let failure = SqlmixHotPath
        .measure("rw-split", &p, testing::settings(1, 10, 50))
        .unwrap_err();
    assert!(failure.reason.contains("backend=libdqlite"), "{failure}");
}

/// A runner over a real node and a worker that has committed some writes.
fn written(dir: &std::path::Path) -> (Arc<TxnRunner>, SqlmixWorkload, Vec<SqlmixWorker>) {
    let p = small(dir, &[("read_pct", "0"), ("models", "2")]);
    let config = sqlmix::config("pool", &p).unwrap();
    let runner = Arc::new(TxnRunner::new(&config).unwrap());
    let workload = SqlmixWorkload::new(Arc::clone(&runner), config.models, config.units, 0);
    let mut worker = workload.worker(0, 1);
    let mut ctx = OpCtx::default();
    for _ in 0..30 {
        assert!(worker.op(&mut ctx).is_ok());
    }
    (runner, workload, vec![worker])
}

#[test]
fn verify_reads_through_the_node_and_catches_a_wrong_version_count() {
    if !have_libdqlite("verify_reads_through_the_node_and_catches_a_wrong_version_count") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (runner, workload, workers) = written(dir.path());
    assert_eq!(workload.verify(&workers), Ok(()));
    let app = runner.real_apps().next().unwrap();
    app.execute(
        1,
        "UPDATE units SET version = version + 1 WHERE rowid = (SELECT MIN(rowid) FROM units)",
    )
    .unwrap();
    let err = workload.verify(&workers).unwrap_err();
    assert!(err.contains("stored version"), "{err}");
}

#[test]
fn a_torn_write_is_seen_by_a_read_and_fails_verify() {
    if !have_libdqlite("a_torn_write_is_seen_by_a_read_and_fails_verify") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let p = small(
        dir.path(),
        &[("read_pct", "100"), ("models", "2"), ("units", "1")],
    );
    let config = sqlmix::config("pool", &p).unwrap();
    let runner = Arc::new(TxnRunner::new(&config).unwrap());
    let workload = SqlmixWorkload::new(Arc::clone(&runner), config.models, config.units, 100);
    // Half a write: the version moves without its event, as a torn commit would leave it.
    for model in 0..2 {
        let app = runner.real_apps().next().unwrap();
        app.execute(model, "UPDATE units SET version = version + 1")
            .unwrap();
    }
    let mut worker = workload.worker(0, 1);
    let mut ctx = OpCtx::default();
    for _ in 0..5 {
        assert!(worker.op(&mut ctx).is_ok());
    }
    let err = workload.verify(&[worker]).unwrap_err();
    assert!(err.contains("saw part of a write"), "{err}");
}

#[test]
fn a_node_that_cannot_start_fails_its_cell_and_leaves_nothing() {
    if !have_libdqlite("a_node_that_cannot_start_fails_its_cell_and_leaves_nothing") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let busy = taken.local_addr().unwrap().to_string();
    for bad in [busy.as_str(), "not an address", "@"] {
        let node_dir = dir.path().join("n");
        let err = Node::start(3, &node_dir, &Bind::Exactly(bad.to_owned()));
        if bad == "@" {
            // "@" alone asks dqlite to choose an abstract name: that one starts.
            drop(err.unwrap());
            std::fs::remove_dir_all(&node_dir).unwrap();
            continue;
        }
        let err = err.unwrap_err();
        assert!(err.contains("dqlite node 3") && err.contains(bad), "{err}");
        assert!(!node_dir.exists(), "{bad}: its folder is gone");
    }
    let named_3 = || {
        std::fs::read_dir("/proc/self/task")
            .unwrap()
            .flatten()
            .filter(|t| {
                std::fs::read_to_string(t.path().join("comm"))
                    .is_ok_and(|c| c.trim() == "dqlite-node-3")
            })
            .count()
    };
    assert_eq!(
        named_3(),
        0,
        "no thread of the failed nodes is left running"
    );
    // Through the hot path: the cell fails with the node's reason and leaves no folder.
    let p = small(dir.path(), &[("dqlite_bind", "loopback")]);
    let mut config = sqlmix::config("pool", &p).unwrap();
    config.dqlite_bind = Bind::Exactly(busy.clone());
    let err = TxnRunner::new(&config).err().unwrap();
    assert!(err.contains("dqlite_node_") && err.contains(&busy), "{err}");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    drop(taken);
}

/// One round of [`nodes_started_together_from_several_threads_keep_their_own_data`] on
/// one thread: a node, a table of its own in a database every node names the same, and
/// what the node then reads back. Waits at `together` while its node runs, whatever
/// happened, so that no thread is left waiting for one that failed.
fn own_node_round(
    dir: &std::path::Path,
    thread: usize,
    round: usize,
    together: &Barrier,
) -> Result<(), String> {
    let started = Node::start(
        100 + thread,
        &dir.join(format!("t{thread}-r{round}")),
        &Bind::Abstract,
    );
    let checked = started.as_ref().map_err(Clone::clone).and_then(|node| {
        let mut c = Client::connect(node.address(), 1).map_err(|e| e.to_string())?;
        let db = c.open("same-name").map_err(|e| e.to_string())?;
        // A node that shared another's VFS would find this table there already.
        c.exec_sql(
            db,
            "CREATE TABLE owner (thread INTEGER, round INTEGER)",
            &[],
        )
        .map_err(|e| e.to_string())?;
        c.exec_sql(
            db,
            "INSERT INTO owner VALUES (?1, ?2)",
            &[Value::Int(thread as i64), Value::Int(round as i64)],
        )
        .map_err(|e| e.to_string())?;
        let rows = c
            .query_sql(db, "SELECT thread, round FROM owner", &[])
            .map_err(|e| e.to_string())?;
        let own = vec![vec![Value::Int(thread as i64), Value::Int(round as i64)]];
        if rows.rows != own {
            return Err(format!("read {:?}", rows.rows));
        }
        Ok(())
    });
    // Every node of the round is up here at once, then they stop together.
    together.wait();
    drop(started);
    checked.map_err(|e| format!("thread {thread} round {round}: {e}"))
}

/// Issue 41: libdqlite 1.11.1 names a node's VFS from a counter `dqlite_node_create`
/// bumps without a lock, so two nodes created at the same moment could share one VFS,
/// serve each other's tables and free each other's memory (the suite once aborted with
/// `free(): invalid pointer`). Rounds of nodes created together from several threads
/// catch that as a table one node finds already made by another (or "database is
/// locked", or an abort); without `node`'s lock this failed about one run in three on
/// two cores, with it in none of 300.
#[test]
fn nodes_started_together_from_several_threads_keep_their_own_data() {
    if !have_libdqlite("nodes_started_together_from_several_threads_keep_their_own_data") {
        return;
    }
    const THREADS: usize = 8;
    const ROUNDS: usize = 10;
    let dir = tempfile::tempdir().unwrap();
    let (start, together) = (Barrier::new(THREADS), Barrier::new(THREADS));
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for thread in 0..THREADS {
            let (start, together, failures, dir) = (&start, &together, &failures, dir.path());
            s.spawn(move || {
                for round in 0..ROUNDS {
                    start.wait();
                    if let Err(e) = own_node_round(dir, thread, round, together) {
                        failures.lock().unwrap().push(e);
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(failures.is_empty(), "{failures:#?}");
}

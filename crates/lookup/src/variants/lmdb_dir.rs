//! `lmdb`: the directory in an LMDB environment (lmdb-rkv), one read-only transaction per
//! search. LMDB readers take no lock: each claims a reader slot once per thread and then
//! reads a consistent snapshot of the memory map, which is why the seed's server moved to
//! it. Writers serialize on LMDB's single writer lock.
//!
//! The environment lives in a private temporary folder removed when the directory drops.
//! Commits do not fsync (NO_SYNC): this hot path is about read-side locking, not disks.

use std::path::Path;
use std::time::Instant;

use harness::locks::LockSet;
use harness::OpCtx;
use lmdb::{Database, Environment, EnvironmentFlags, Transaction, WriteFlags};
use tempfile::TempDir;

use crate::directory::lock_ids::WRITER;
use crate::directory::{Directory, DirectoryData, Entry};

/// Users (key = uid) and groups (key = `group:<cn>`) in one LMDB database.
pub struct LmdbDirectory {
    // Field order matters: the environment must close before its folder is removed.
    env: Environment,
    db: Database,
    uids: Vec<String>,
    _dir: TempDir,
}

impl LmdbDirectory {
    /// Creates the environment in a fresh temporary folder and loads `data`.
    pub fn new(data: &DirectoryData) -> Result<Self, String> {
        let dir = harness::scratch::private_folder(None, "contention-lab-lmdb-")?;
        let (env, db) = open_and_load(dir.path(), data)
            .map_err(|e| format!("cannot build the LMDB directory: {e}"))?;
        Ok(LmdbDirectory {
            env,
            db,
            uids: data.users.iter().map(|u| u.uid.clone()).collect(),
            _dir: dir,
        })
    }
}

fn open_and_load(path: &Path, data: &DirectoryData) -> lmdb::Result<(Environment, Database)> {
    let bytes_needed = (data.users.len() + data.groups.len()) * 1024 * 4;
    let env = Environment::new()
        .set_flags(EnvironmentFlags::NO_SYNC | EnvironmentFlags::NO_META_SYNC)
        .set_max_readers(4096)
        .set_map_size(bytes_needed.max(64 << 20))
        .open(path)?;
    let db = env.open_db(None)?;
    let mut txn = env.begin_rw_txn()?;
    for user in &data.users {
        txn.put(db, &user.uid, &user.encode(), WriteFlags::empty())?;
    }
    for group in &data.groups {
        let key = format!("group:{}", group.cn);
        txn.put(
            db,
            &key,
            &group.members.join(",").as_bytes(),
            WriteFlags::empty(),
        )?;
    }
    txn.commit()?;
    Ok((env, db))
}

impl Directory for LmdbDirectory {
    fn search(&self, uid: &str, _thread: usize, _ctx: &mut OpCtx) -> Option<Entry> {
        let txn = self.env.begin_ro_txn().ok()?;
        let entry = txn.get(self.db, &uid).ok().and_then(Entry::decode);
        txn.abort();
        entry
    }

    fn modify(&self, uid: &str, ctx: &mut OpCtx) -> bool {
        // LMDB offers no try-begin: time the whole begin, which is the writer-lock wait.
        let start = Instant::now();
        let Ok(mut txn) = self.env.begin_rw_txn() else {
            return false;
        };
        let waited = start.elapsed();
        ctx.record_wait(waited);
        // Held until the commit (or the early return) drops the transaction.
        let _writer = ctx.acquired(WRITER, Some(waited));
        let Some(mut entry) = txn.get(self.db, &uid).ok().and_then(Entry::decode) else {
            return false;
        };
        entry.revision += 1;
        txn.put(self.db, &uid, &entry.encode(), WriteFlags::empty())
            .is_ok()
            && txn.commit().is_ok()
    }

    fn locks(&self) -> LockSet {
        // Readers take no lock (MVCC). The begin is always timed, so every write counts
        // as contended and its wait is the begin's whole time.
        LockSet::new().with(WRITER, "LMDB writer lock", 1)
    }

    fn total_revisions(&self) -> u64 {
        let Ok(txn) = self.env.begin_ro_txn() else {
            return 0;
        };
        self.uids
            .iter()
            .filter_map(|uid| txn.get(self.db, uid).ok().and_then(Entry::decode))
            .map(|e| e.revision)
            .sum()
    }
}

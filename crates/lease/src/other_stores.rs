//! The two stores that are not SQLite: `lmdb` (one LMDB write transaction per extend;
//! LMDB has one writer at a time) and `memory` (a concurrent map, no durability: the
//! lower bound).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use dashmap::DashMap;
use lmdb::{Database, Environment, EnvironmentFlags, Transaction, WriteFlags};
use tempfile::TempDir;

use crate::store::lock_ids::WRITER;
use crate::store::{LeaseStore, SessionStats, StoredLease};

fn encode(l: &StoredLease) -> Vec<u8> {
    format!("{}\u{1f}{}", l.holder, l.expiry).into_bytes()
}

fn decode(bytes: &[u8]) -> Option<StoredLease> {
    let text = std::str::from_utf8(bytes).ok()?;
    let (holder, expiry) = text.split_once('\u{1f}')?;
    Some(StoredLease {
        holder: holder.to_owned(),
        expiry: expiry.parse().ok()?,
    })
}

/// Leases in LMDB (lmdb-rkv).
pub struct LmdbLeases {
    env: Environment,
    db: Database,
    names: Vec<String>,
    path: PathBuf,
    sync: bool,
    // Last: removed after the environment closes.
    _dir: TempDir,
}

fn lm(e: lmdb::Error) -> String {
    format!("LMDB: {e}")
}

fn open_env(path: &Path, sync: bool) -> lmdb::Result<(Environment, Database)> {
    let flags = if sync {
        EnvironmentFlags::empty()
    } else {
        EnvironmentFlags::NO_SYNC
    };
    let env = Environment::new()
        .set_flags(flags)
        .set_max_readers(4096)
        .set_map_size(256 << 20)
        .open(path)?;
    let db = env.open_db(None)?;
    Ok((env, db))
}

impl LmdbLeases {
    /// An environment in a private folder; `names` are every lease the workload uses (the
    /// sweeper visits them). `sync`: fsync every commit (synchronous=full).
    pub fn new(
        data_dir: Option<&Path>,
        names: Vec<String>,
        sync: bool,
    ) -> Result<LmdbLeases, String> {
        let dir = harness::scratch::private_folder(data_dir, "contention-lab-lease-")?;
        let (env, db) = open_env(dir.path(), sync).map_err(lm)?;
        Ok(LmdbLeases {
            env,
            db,
            names,
            path: dir.path().to_path_buf(),
            sync,
            _dir: dir,
        })
    }

    /// The environment's folder.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn update(
        &self,
        stats: &mut SessionStats,
        lease: &str,
        decide: impl FnOnce(Option<StoredLease>) -> Option<StoredLease>,
    ) -> Result<bool, String> {
        let (start, waited_before) = (Instant::now(), crate::store::waits_so_far());
        let mut txn = self.env.begin_rw_txn().map_err(lm)?;
        // Beginning a write transaction is taking LMDB's single writer lock, held until
        // the commit.
        let waited = start.elapsed();
        crate::store::note_wait(waited);
        let _writer = harness::locks::thread_acquired(WRITER, Some(waited));
        let current = match txn.get(self.db, &lease) {
            Ok(bytes) => decode(bytes),
            Err(lmdb::Error::NotFound) => None,
            Err(e) => return Err(lm(e)),
        };
        let written = match decide(current) {
            Some(next) => {
                txn.put(self.db, &lease, &encode(&next), WriteFlags::empty())
                    .map_err(lm)?;
                true
            }
            None => false,
        };
        txn.commit().map_err(lm)?;
        stats.charge(
            "lease",
            true,
            crate::store::busy_since(start, waited_before),
        );
        Ok(written)
    }
}

impl LeaseStore for LmdbLeases {
    type Session = SessionStats;
    fn session(&self) -> Result<SessionStats, String> {
        Ok(SessionStats::default())
    }
    fn stats<'s>(&self, s: &'s SessionStats) -> &'s SessionStats {
        s
    }
    fn reset_stats(&self, s: &mut SessionStats) {
        *s = SessionStats::default();
    }
    fn claim(
        &self,
        s: &mut SessionStats,
        lease: &str,
        holder: &str,
        now: i64,
        expiry: i64,
    ) -> Result<bool, String> {
        self.update(s, lease, |cur| match cur {
            Some(l) if l.expiry >= now => None,
            _ => Some(StoredLease {
                holder: holder.to_owned(),
                expiry,
            }),
        })
    }
    fn extend(
        &self,
        s: &mut SessionStats,
        lease: &str,
        holder: &str,
        _now: i64,
        expiry: i64,
    ) -> Result<bool, String> {
        let ok = self.update(s, lease, |cur| match cur {
            Some(l) if l.holder == holder => Some(StoredLease {
                holder: l.holder,
                expiry,
            }),
            _ => None,
        })?;
        s.rows_written += u64::from(ok);
        Ok(ok)
    }
    fn sweep(&self, s: &mut SessionStats, now: i64) -> Result<u64, String> {
        let (start, waited_before) = (Instant::now(), crate::store::waits_so_far());
        let mut txn = self.env.begin_rw_txn().map_err(lm)?;
        let waited = start.elapsed();
        crate::store::note_wait(waited);
        let _writer = harness::locks::thread_acquired(WRITER, Some(waited));
        let mut removed = 0;
        for name in &self.names {
            let expired = match txn.get(self.db, name) {
                Ok(bytes) => decode(bytes).is_some_and(|l| l.expiry < now),
                Err(_) => false,
            };
            if expired {
                txn.del(self.db, name, None).map_err(lm)?;
                removed += 1;
            }
        }
        txn.commit().map_err(lm)?;
        s.charge(
            "lease",
            true,
            crate::store::busy_since(start, waited_before),
        );
        Ok(removed)
    }
    fn durable(&self) -> bool {
        self.sync
    }
    fn locks(&self) -> harness::locks::LockSet {
        // The begin is always timed (LMDB has no try-begin): every write counts as
        // contended, its wait the begin's whole time.
        harness::locks::LockSet::new().with(WRITER, "LMDB writer lock", 1)
    }
    fn read_back(&self) -> Result<HashMap<String, StoredLease>, String> {
        // Through this environment: LMDB forbids opening the same environment twice in
        // one process (its locks are per process).
        let txn = self.env.begin_ro_txn().map_err(lm)?;
        let mut out = HashMap::new();
        for name in &self.names {
            if let Ok(bytes) = txn.get(self.db, name) {
                if let Some(l) = decode(bytes) {
                    out.insert(name.clone(), l);
                }
            }
        }
        Ok(out)
    }
}

/// Every lease in the LMDB environment in `folder`, read by a process that has no other
/// environment open on it (the crash test, after its child was killed).
pub fn read_lmdb_folder(folder: &Path) -> Result<HashMap<String, StoredLease>, String> {
    use lmdb::Cursor;
    let (env, db) = open_env(folder, true).map_err(lm)?;
    let txn = env.begin_ro_txn().map_err(lm)?;
    let mut out = HashMap::new();
    {
        let mut cursor = txn.open_ro_cursor(db).map_err(lm)?;
        for item in cursor.iter_start() {
            let (key, value) = item.map_err(lm)?;
            if let (Ok(name), Some(l)) = (std::str::from_utf8(key), decode(value)) {
                out.insert(name.to_owned(), l);
            }
        }
    }
    Ok(out)
}

/// Leases in a concurrent map: no disk, no durability.
pub struct MemoryLeases {
    leases: DashMap<String, StoredLease>,
}

impl MemoryLeases {
    /// An empty map.
    pub fn new() -> Self {
        MemoryLeases {
            leases: DashMap::new(),
        }
    }
}

impl Default for MemoryLeases {
    fn default() -> Self {
        Self::new()
    }
}

impl LeaseStore for MemoryLeases {
    type Session = SessionStats;
    fn session(&self) -> Result<SessionStats, String> {
        Ok(SessionStats::default())
    }
    fn stats<'s>(&self, s: &'s SessionStats) -> &'s SessionStats {
        s
    }
    fn reset_stats(&self, s: &mut SessionStats) {
        *s = SessionStats::default();
    }
    fn claim(
        &self,
        _s: &mut SessionStats,
        lease: &str,
        holder: &str,
        now: i64,
        expiry: i64,
    ) -> Result<bool, String> {
        let mut entry = self.leases.entry(lease.to_owned()).or_insert(StoredLease {
            holder: String::new(),
            expiry: i64::MIN,
        });
        if entry.expiry >= now {
            return Ok(false);
        }
        *entry = StoredLease {
            holder: holder.to_owned(),
            expiry,
        };
        Ok(true)
    }
    fn extend(
        &self,
        s: &mut SessionStats,
        lease: &str,
        holder: &str,
        _now: i64,
        expiry: i64,
    ) -> Result<bool, String> {
        let (start, waited_before) = (Instant::now(), crate::store::waits_so_far());
        let entry = match self.leases.try_get_mut(lease) {
            dashmap::try_result::TryResult::Present(l) => Some(l),
            dashmap::try_result::TryResult::Absent => None,
            dashmap::try_result::TryResult::Locked => {
                // Another thread holds this key's shard: block, and account it.
                let l = self.leases.get_mut(lease);
                crate::store::note_wait(start.elapsed());
                l
            }
        };
        let ok = match entry {
            Some(mut l) if l.holder == holder => {
                l.expiry = expiry;
                true
            }
            _ => false,
        };
        s.charge(
            "lease",
            true,
            crate::store::busy_since(start, waited_before),
        );
        s.rows_written += u64::from(ok);
        Ok(ok)
    }
    fn sweep(&self, _s: &mut SessionStats, now: i64) -> Result<u64, String> {
        let before = self.leases.len();
        self.leases.retain(|_, l| l.expiry >= now);
        Ok(before.saturating_sub(self.leases.len()) as u64)
    }
    fn durable(&self) -> bool {
        false
    }
    fn locks(&self) -> harness::locks::LockSet {
        harness::locks::LockSet::new().unnamed("the concurrent map's shard locks (inside dashmap)")
    }
    fn read_back(&self) -> Result<HashMap<String, StoredLease>, String> {
        Ok(self
            .leases
            .iter()
            .map(|e| (e.key().clone(), e.value().clone()))
            .collect())
    }
}

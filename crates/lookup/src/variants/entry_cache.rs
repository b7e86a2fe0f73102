//! `entry-cache`: a directory server's entry cache in front of its database. Every search
//! takes the cache lock to look the entry up *and move it to the front of the LRU list*,
//! and bumps global hit and miss counters: reads that are secretly writes, so readers
//! serialize on one lock and fight over the counters' cache line. This is the shape of the
//! seed's per-thread decline.
//!
//! Lock order is always database, then cache; a miss fills the cache while still holding
//! the database's read lock and a modify invalidates while holding its write lock, so the
//! cache never keeps a stale copy.

use std::collections::HashMap;
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicU64, Ordering};

use harness::locks::LockSet;
use harness::OpCtx;
use lru::LruCache;
use parking_lot::{Mutex, RwLock};

use crate::directory::lock_ids::{DIRECTORY, DIRECTORY_READ, ENTRY_CACHE};
use crate::directory::{Directory, DirectoryData, Entry};

/// The database (a map behind a reader-writer lock) with an LRU entry cache in front.
pub struct EntryCacheDirectory {
    database: RwLock<HashMap<String, Entry>>,
    cache: Mutex<LruCache<String, Entry>>,
    hits: AtomicU64,
    misses: AtomicU64,
}

impl EntryCacheDirectory {
    /// Loads `data` into the database; the cache starts empty and holds up to
    /// `cache_entries` entries.
    pub fn new(data: &DirectoryData, cache_entries: usize) -> Self {
        let database = data
            .users
            .iter()
            .map(|u| (u.uid.clone(), u.clone()))
            .collect();
        EntryCacheDirectory {
            database: RwLock::new(database),
            cache: Mutex::new(LruCache::new(
                NonZeroUsize::new(cache_entries.max(1)).expect("at least one entry"),
            )),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }
}

impl Directory for EntryCacheDirectory {
    fn search(&self, uid: &str, _thread: usize, ctx: &mut OpCtx) -> Option<Entry> {
        {
            let mut cache = ctx.lock(ENTRY_CACHE, || self.cache.try_lock(), || self.cache.lock());
            if let Some(entry) = cache.get(uid) {
                self.hits.fetch_add(1, Ordering::Relaxed);
                return Some(entry.clone());
            }
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        let database = ctx.lock(
            DIRECTORY_READ,
            || self.database.try_read(),
            || self.database.read(),
        );
        let entry = database.get(uid)?.clone();
        let mut cache = ctx.lock(ENTRY_CACHE, || self.cache.try_lock(), || self.cache.lock());
        cache.put(entry.uid.clone(), entry.clone());
        Some(entry)
    }

    fn modify(&self, uid: &str, ctx: &mut OpCtx) -> bool {
        let mut database = ctx.lock(
            DIRECTORY,
            || self.database.try_write(),
            || self.database.write(),
        );
        let Some(entry) = database.get_mut(uid) else {
            return false;
        };
        entry.revision += 1;
        ctx.lock(ENTRY_CACHE, || self.cache.try_lock(), || self.cache.lock())
            .pop(uid);
        true
    }

    fn locks(&self) -> LockSet {
        LockSet::new()
            .shared(DIRECTORY_READ, "database lock (read)")
            .with(DIRECTORY, "database lock (write)", 1)
            .with(ENTRY_CACHE, "entry cache lock (LRU and counters)", 1)
    }

    fn total_revisions(&self) -> u64 {
        self.database.read().values().map(|e| e.revision).sum()
    }

    fn extra(&self) -> serde_json::Map<String, serde_json::Value> {
        let hits = self.hits.load(Ordering::Relaxed) as f64;
        let misses = self.misses.load(Ordering::Relaxed) as f64;
        let mut extra = serde_json::Map::new();
        if hits + misses > 0.0 {
            extra.insert(
                "cache_hit_ratio".into(),
                serde_json::json!(hits / (hits + misses)),
            );
        }
        extra
    }
}

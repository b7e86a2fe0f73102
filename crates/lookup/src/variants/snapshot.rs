//! `arc-swap-snapshot`, the fix: the directory is an immutable snapshot that readers load
//! through `arc-swap` without taking any lock or writing any shared cache line, and the
//! search statistics a server must keep are per-thread counters (each on its own cache
//! line) summed only when someone asks. A modify copies the map (entries are shared
//! `Arc`s, so only pointers are copied), changes one entry and publishes the new snapshot;
//! writers serialize on a mutex so no modification is lost.
//!
//! The trade: writes cost O(users). That is right for a directory that is read far more
//! than written, as the seed's is, and wrong for a write-heavy one.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;
use harness::locks::LockSet;
use harness::OpCtx;

use crate::directory::lock_ids::WRITER;
use crate::directory::{Directory, DirectoryData, Entry};

type Snapshot = HashMap<String, Arc<Entry>>;

/// Threads that get a counter of their own; more share slots (correct, slightly slower).
const COUNTER_SLOTS: usize = 1024;

/// A counter alone on its cache line (128 bytes covers adjacent-line prefetch).
#[repr(align(128))]
#[derive(Default)]
struct PaddedCounter(AtomicU64);

/// Users in an atomically replaceable immutable map.
pub struct SnapshotDirectory {
    users: ArcSwap<Snapshot>,
    writer: Mutex<()>,
    searches: Box<[PaddedCounter]>,
}

impl SnapshotDirectory {
    /// Loads `data` as the first snapshot.
    pub fn new(data: &DirectoryData) -> Self {
        let users: Snapshot = data
            .users
            .iter()
            .map(|u| (u.uid.clone(), Arc::new(u.clone())))
            .collect();
        SnapshotDirectory {
            users: ArcSwap::from_pointee(users),
            writer: Mutex::new(()),
            searches: (0..COUNTER_SLOTS)
                .map(|_| PaddedCounter::default())
                .collect(),
        }
    }

    /// Searches served so far, summed over threads.
    pub fn searches(&self) -> u64 {
        self.searches
            .iter()
            .map(|c| c.0.load(Ordering::Relaxed))
            .sum()
    }
}

impl Directory for SnapshotDirectory {
    fn search(&self, uid: &str, thread: usize, _ctx: &mut OpCtx) -> Option<Entry> {
        let snapshot = self.users.load();
        // Deref the Arc rather than clone it: cloning would bump a shared reference count.
        let entry = snapshot.get(uid).map(|e| Entry::clone(e));
        self.searches[thread % COUNTER_SLOTS]
            .0
            .fetch_add(1, Ordering::Relaxed);
        entry
    }

    fn modify(&self, uid: &str, ctx: &mut OpCtx) -> bool {
        let _writer = ctx.lock(
            WRITER,
            || self.writer.try_lock().ok(),
            || self.writer.lock().expect("writer mutex poisoned"),
        );
        let current = self.users.load_full();
        let Some(old) = current.get(uid) else {
            return false;
        };
        let mut updated = Entry::clone(old);
        updated.revision += 1;
        let mut next = Snapshot::clone(&current);
        next.insert(uid.to_owned(), Arc::new(updated));
        self.users.store(Arc::new(next));
        true
    }

    fn locks(&self) -> LockSet {
        // Readers take no lock: one load of the snapshot pointer.
        LockSet::new().with(WRITER, "writer mutex", 1)
    }

    fn total_revisions(&self) -> u64 {
        self.users.load().values().map(|e| e.revision).sum()
    }

    fn extra(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut extra = serde_json::Map::new();
        extra.insert(
            "searches_counted".into(),
            serde_json::json!(self.searches()),
        );
        extra
    }
}

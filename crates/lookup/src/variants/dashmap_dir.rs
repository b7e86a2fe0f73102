//! `dashmap`: the user map split into shards, each behind its own reader-writer lock, so
//! searches for different users rarely meet on one lock.

use dashmap::try_result::TryResult;
use dashmap::DashMap;
use harness::locks::LockSet;
use harness::OpCtx;

use crate::directory::{Directory, DirectoryData, Entry};

/// Users in a [`DashMap`] keyed by uid.
pub struct DashMapDirectory {
    users: DashMap<String, Entry>,
}

impl DashMapDirectory {
    /// Loads `data`.
    pub fn new(data: &DirectoryData) -> Self {
        let users = DashMap::with_capacity(data.users.len());
        for u in &data.users {
            users.insert(u.uid.clone(), u.clone());
        }
        DashMapDirectory { users }
    }
}

impl Directory for DashMapDirectory {
    fn search(&self, uid: &str, _thread: usize, ctx: &mut OpCtx) -> Option<Entry> {
        match self.users.try_get(uid) {
            TryResult::Present(entry) => Some(entry.clone()),
            TryResult::Absent => None,
            // The shard is write-locked: wait for it, and account the wait.
            TryResult::Locked => ctx.acquire(|| None, || self.users.get(uid).map(|e| e.clone())),
        }
    }

    fn modify(&self, uid: &str, ctx: &mut OpCtx) -> bool {
        let entry = match self.users.try_get_mut(uid) {
            TryResult::Present(entry) => Some(entry),
            TryResult::Absent => None,
            TryResult::Locked => ctx.acquire(|| None, || self.users.get_mut(uid)),
        };
        match entry {
            Some(mut entry) => {
                entry.revision += 1;
                true
            }
            None => false,
        }
    }

    fn locks(&self) -> LockSet {
        LockSet::new().unnamed("dashmap's per-shard reader-writer locks (inside the crate)")
    }

    fn total_revisions(&self) -> u64 {
        self.users.iter().map(|e| e.revision).sum()
    }
}

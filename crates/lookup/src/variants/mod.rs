//! The designs being compared, one module each, and the one place that maps a variant
//! to its type ([`with_directory`]). Its name and summary are in [`crate::registry`].
//!
//! | variant | design |
//! |---|---|
//! | `global-mutex` | the whole directory behind one `std::sync::Mutex` (the big lock) |
//! | `rwlock-std` | `std::sync::RwLock` around the directory |
//! | `rwlock-parking-lot` | `parking_lot::RwLock` around the directory |
//! | `dashmap` | a sharded concurrent map |
//! | `lmdb` | LMDB through lmdb-rkv, one read transaction per search |
//! | `entry-cache` | an LRU entry cache plus global hit counters, updated by every read |
//! | `arc-swap-snapshot` | readers load an immutable snapshot; statistics per thread |

mod dashmap_dir;
mod entry_cache;
mod lmdb_dir;
mod locked;
mod snapshot;

use std::sync::Arc;

pub use dashmap_dir::DashMapDirectory;
pub use entry_cache::EntryCacheDirectory;
pub use lmdb_dir::LmdbDirectory;
pub use locked::{GlobalMutex, LockedDirectory, ParkingLotRwLock, StdRwLock};
pub use snapshot::SnapshotDirectory;

use crate::directory::{Directory, DirectoryData};

/// A variant, as the code names it: which directory [`with_directory`] builds (its
/// entry, name included, is [`Design::entry`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Design {
    /// The big lock.
    GlobalMutex,
    /// std's reader-writer lock.
    RwLockStd,
    /// parking_lot's reader-writer lock.
    RwLockParkingLot,
    /// A sharded map.
    DashMap,
    /// LMDB.
    Lmdb,
    /// The entry cache whose reads write.
    EntryCache,
    /// The lock-free snapshot.
    ArcSwapSnapshot,
}

/// Something to do with a built directory, whatever its concrete type. The concrete type
/// matters: the hot loop is compiled once per design, with no dynamic dispatch in it.
pub trait WithDirectory {
    /// What the action returns.
    type Output;
    /// Does it.
    fn call<D: Directory>(self, dir: Arc<D>) -> Self::Output;
}

/// Builds variant `name` loaded with `data` and hands it to `action`.
pub fn with_directory<A: WithDirectory>(
    name: Design,
    data: &DirectoryData,
    cache_entries: usize,
    action: A,
) -> Result<A::Output, String> {
    Ok(match name {
        Design::GlobalMutex => action.call(Arc::new(LockedDirectory::<GlobalMutex>::new(data))),
        Design::RwLockStd => action.call(Arc::new(LockedDirectory::<StdRwLock>::new(data))),
        Design::RwLockParkingLot => {
            action.call(Arc::new(LockedDirectory::<ParkingLotRwLock>::new(data)))
        }
        Design::DashMap => action.call(Arc::new(DashMapDirectory::new(data))),
        Design::Lmdb => action.call(Arc::new(LmdbDirectory::new(data)?)),
        Design::EntryCache => action.call(Arc::new(EntryCacheDirectory::new(data, cache_entries))),
        Design::ArcSwapSnapshot => action.call(Arc::new(SnapshotDirectory::new(data))),
    })
}

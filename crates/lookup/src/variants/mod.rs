//! The designs being compared, one module each, and the one place that maps a variant's
//! name to its type.
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

use harness::Variant;

pub use dashmap_dir::DashMapDirectory;
pub use entry_cache::EntryCacheDirectory;
pub use lmdb_dir::LmdbDirectory;
pub use locked::{GlobalMutex, LockedDirectory, ParkingLotRwLock, StdRwLock};
pub use snapshot::SnapshotDirectory;

use crate::directory::{Directory, DirectoryData};

/// Every variant, in the order reports list them.
pub const ALL: &[Variant] = &[
    Variant {
        name: "global-mutex",
        summary: "the whole directory behind one std Mutex (the big lock)",
    },
    Variant {
        name: "rwlock-std",
        summary: "std RwLock around the directory: readers share, a writer excludes",
    },
    Variant {
        name: "rwlock-parking-lot",
        summary: "parking_lot RwLock around the directory",
    },
    Variant {
        name: "dashmap",
        summary: "sharded concurrent map: a lock per shard",
    },
    Variant {
        name: "lmdb",
        summary: "LMDB, one read transaction per search: readers take no lock",
    },
    Variant {
        name: "entry-cache",
        summary: "LRU entry cache and global hit counters updated under a lock by every read",
    },
    Variant {
        name: "arc-swap-snapshot",
        summary: "the fix: readers load an immutable snapshot, hit counters are per thread",
    },
];

/// A variant, parsed from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VariantName {
    /// `global-mutex`
    GlobalMutex,
    /// `rwlock-std`
    RwLockStd,
    /// `rwlock-parking-lot`
    RwLockParkingLot,
    /// `dashmap`
    DashMap,
    /// `lmdb`
    Lmdb,
    /// `entry-cache`
    EntryCache,
    /// `arc-swap-snapshot`
    ArcSwapSnapshot,
}

impl VariantName {
    /// Parses a variant name, listing the accepted ones on error.
    pub fn parse(name: &str) -> Result<VariantName, String> {
        Ok(match name {
            "global-mutex" => VariantName::GlobalMutex,
            "rwlock-std" => VariantName::RwLockStd,
            "rwlock-parking-lot" => VariantName::RwLockParkingLot,
            "dashmap" => VariantName::DashMap,
            "lmdb" => VariantName::Lmdb,
            "entry-cache" => VariantName::EntryCache,
            "arc-swap-snapshot" => VariantName::ArcSwapSnapshot,
            _ => {
                let names: Vec<_> = ALL.iter().map(|v| v.name).collect();
                return Err(format!(
                    "unknown variant {name:?} of lookup: accepted {}",
                    names.join(", ")
                ));
            }
        })
    }
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
    name: VariantName,
    data: &DirectoryData,
    cache_entries: usize,
    action: A,
) -> Result<A::Output, String> {
    Ok(match name {
        VariantName::GlobalMutex => {
            action.call(Arc::new(LockedDirectory::<GlobalMutex>::new(data)))
        }
        VariantName::RwLockStd => action.call(Arc::new(LockedDirectory::<StdRwLock>::new(data))),
        VariantName::RwLockParkingLot => {
            action.call(Arc::new(LockedDirectory::<ParkingLotRwLock>::new(data)))
        }
        VariantName::DashMap => action.call(Arc::new(DashMapDirectory::new(data))),
        VariantName::Lmdb => action.call(Arc::new(LmdbDirectory::new(data)?)),
        VariantName::EntryCache => {
            action.call(Arc::new(EntryCacheDirectory::new(data, cache_entries)))
        }
        VariantName::ArcSwapSnapshot => action.call(Arc::new(SnapshotDirectory::new(data))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_variant_parses() {
        for v in ALL {
            VariantName::parse(v.name).unwrap();
        }
        let err = VariantName::parse("impl2").unwrap_err();
        assert!(
            err.contains("global-mutex") && err.contains("arc-swap-snapshot"),
            "{err}"
        );
    }
}

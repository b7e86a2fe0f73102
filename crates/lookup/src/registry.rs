//! The registry of lookup's variants: each one entry holding its name, its summary and
//! its measuring function ([`VariantName::entry`]), the only place a variant's name is
//! written. Not here: the designs themselves ([`crate::variants`]) or how a repetition is
//! measured ([`crate::measure`]).

use harness::Variant;

use crate::measure::measure;
use crate::variants::VariantName;

harness::variant_registry!(pub ALL = "lookup" VariantName [
    GlobalMutex,
    RwLockStd,
    RwLockParkingLot,
    DashMap,
    Lmdb,
    EntryCache,
    ArcSwapSnapshot,
]);

impl VariantName {
    /// Its registry entry: the one place its name and summary are written.
    pub const fn entry(self) -> Variant {
        let (name, summary, measure): (_, _, harness::hotpath::Measure) = match self {
            VariantName::GlobalMutex => (
                "global-mutex",
                "the whole directory behind one std Mutex (the big lock)",
                |p, s| measure(VariantName::GlobalMutex, p, s),
            ),
            VariantName::RwLockStd => (
                "rwlock-std",
                "std RwLock around the directory: readers share, a writer excludes",
                |p, s| measure(VariantName::RwLockStd, p, s),
            ),
            VariantName::RwLockParkingLot => (
                "rwlock-parking-lot",
                "parking_lot RwLock around the directory",
                |p, s| measure(VariantName::RwLockParkingLot, p, s),
            ),
            VariantName::DashMap => (
                "dashmap",
                "sharded concurrent map: a lock per shard",
                |p, s| measure(VariantName::DashMap, p, s),
            ),
            VariantName::Lmdb => (
                "lmdb",
                "LMDB, one read transaction per search: readers take no lock",
                |p, s| measure(VariantName::Lmdb, p, s),
            ),
            VariantName::EntryCache => (
                "entry-cache",
                "LRU entry cache and global hit counters updated under a lock by every read",
                |p, s| measure(VariantName::EntryCache, p, s),
            ),
            VariantName::ArcSwapSnapshot => (
                "arc-swap-snapshot",
                "the fix: readers load an immutable snapshot, hit counters are per thread",
                |p, s| measure(VariantName::ArcSwapSnapshot, p, s),
            ),
        };
        Variant {
            name,
            summary,
            measure,
        }
    }
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

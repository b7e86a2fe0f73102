//! The registry of lookup's variants: each one entry holding its name, its summary and
//! its measuring function ([`Design::entry`]), the only place a variant's name is
//! written. Not here: the designs themselves ([`crate::variants`]) or how a repetition is
//! measured ([`crate::measure`]).

use harness::Variant;

use crate::measure::measure;
use crate::variants::Design;

harness::variant_registry!(pub VARIANTS = "lookup" Design [
    GlobalMutex,
    RwLockStd,
    RwLockParkingLot,
    DashMap,
    Lmdb,
    EntryCache,
    ArcSwapSnapshot,
]);

impl Design {
    /// Its registry entry: the one place its name and summary are written.
    pub const fn entry(self) -> Variant {
        let (name, summary, measure): (_, _, harness::hotpath::Measure) = match self {
            Design::GlobalMutex => (
                "global-mutex",
                "the whole directory behind one std Mutex (the big lock)",
                |p, s| measure(Design::GlobalMutex, p, s),
            ),
            Design::RwLockStd => (
                "rwlock-std",
                "std RwLock around the directory: readers share, a writer excludes",
                |p, s| measure(Design::RwLockStd, p, s),
            ),
            Design::RwLockParkingLot => (
                "rwlock-parking-lot",
                "parking_lot RwLock around the directory",
                |p, s| measure(Design::RwLockParkingLot, p, s),
            ),
            Design::DashMap => (
                "dashmap",
                "sharded concurrent map: a lock per shard",
                |p, s| measure(Design::DashMap, p, s),
            ),
            Design::Lmdb => (
                "lmdb",
                "LMDB, one read transaction per search: readers take no lock",
                |p, s| measure(Design::Lmdb, p, s),
            ),
            Design::EntryCache => (
                "entry-cache",
                "LRU entry cache and global hit counters updated under a lock by every read",
                |p, s| measure(Design::EntryCache, p, s),
            ),
            Design::ArcSwapSnapshot => (
                "arc-swap-snapshot",
                "the fix: readers load an immutable snapshot, hit counters are per thread",
                |p, s| measure(Design::ArcSwapSnapshot, p, s),
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
        for v in VARIANTS {
            Design::parse(v.name).unwrap();
        }
        let err = Design::parse("impl2").unwrap_err();
        assert!(
            err.contains("global-mutex") && err.contains("arc-swap-snapshot"),
            "{err}"
        );
    }
}

//! Hot path 1: a directory server's `(uid=<user>)` equality search with N worker threads.
//!
//! The seed (389 Directory Server, 6000 users and 4000 groups) saw per-thread search
//! throughput *fall* as worker threads rose, even with idle cores, and blamed locking and
//! thread coordination. This crate rebuilds that search over one deterministic synthetic
//! directory ([`directory`]) behind several designs ([`variants`]): the big lock, two
//! reader-writer locks, a sharded map, LMDB, a directory-server-style entry cache whose
//! reads secretly write, and a lock-free snapshot read path that removes the problem.
//! Every search copies the entry out as a server copies it into a response.
//!
//! [`workload`] turns any [`directory::Directory`] into a [`harness::Workload`];
//! [`LookupHotPath`] is what `lab` runs. With `dispatch=direct` (the default) nothing here
//! times anything: the harness does. The other dispatches ([`dispatch`]) put a server's
//! connection threads and work queue in front of the search threads and measure that
//! server themselves.

pub mod directory;
pub mod dispatch;
pub mod findings;
pub mod measure;
pub mod registry;
pub mod variants;
pub mod workload;

use harness::hotpath::Description;
use harness::{HotPath, ParamKind, ParamSpec};

use crate::dispatch::Dispatch;

/// The lookup hot path as `lab` sees it.
pub struct LookupHotPath;

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "users",
        kind: ParamKind::Int { min: 1, max: 5_000_000 },
        default: "6000",
        help: "user entries in the directory (the seed had 6000)",
    },
    ParamSpec {
        name: "groups",
        kind: ParamKind::Int { min: 0, max: 5_000_000 },
        default: "4000",
        help: "group entries in the directory (the seed had 4000)",
    },
    ParamSpec {
        name: "write_pct",
        kind: ParamKind::Int { min: 0, max: 100 },
        default: "0",
        help: "percent of operations that modify an entry (take the write side); 0 = pure reads as in the seed",
    },
    ParamSpec {
        name: "keys",
        kind: ParamKind::Choice(&["uniform", "zipf"]),
        default: "uniform",
        help: "which users are searched: uniform, or zipf (exponent 0.99, a few hot users)",
    },
    ParamSpec {
        name: "cache_entries",
        kind: ParamKind::Int { min: 1, max: 5_000_000 },
        default: "6000",
        help: "capacity of the entry-cache variant's LRU (entries)",
    },
    ParamSpec {
        name: "dispatch",
        kind: ParamKind::Choice(Dispatch::NAMES),
        default: "direct",
        help: "how searches reach the threads: direct (each makes its own), queue (one locked work queue), rayon (a rayon pool), batched (the fix: batches, only sleepers woken)",
    },
    ParamSpec {
        name: "connections",
        kind: ParamKind::Int { min: 1, max: 64 },
        default: "2",
        help: "connection threads feeding the search threads (not with dispatch=direct)",
    },
    ParamSpec {
        name: "in_flight",
        kind: ParamKind::Int { min: 1, max: 65_536 },
        default: "128",
        help: "requests each connection thread keeps outstanding, the clients it multiplexes (not with dispatch=direct)",
    },
    ParamSpec {
        name: "batch",
        kind: ParamKind::Int { min: 1, max: 65_536 },
        default: "16",
        help: "most requests handed over at once with dispatch=batched",
    },
];

/// The dispatch figures worth a chart: where the search threads' time goes.
const CHARTED_EXTRAS: &[(&str, &str)] = &[
    (
        "queue_wait_share",
        "share of search-thread time in the hand-off",
    ),
    (
        "directory_wait_share",
        "share of search-thread time blocked in the directory",
    ),
];

/// What `lab` lists about the lookup hot path.
const DESCRIPTION: Description = Description {
    name: "lookup",
    summary: "seed 002's uid search on the lab's designs: a lock on every read against lock-free",
    variants: registry::VARIANTS,
    params: PARAMS,
    charted_extras: CHARTED_EXTRAS,
};

impl HotPath for LookupHotPath {
    fn description(&self) -> &'static Description {
        &DESCRIPTION
    }
    fn guards_locks(&self) -> bool {
        // Every design's mutexes (the directory's, the entry cache's) go through
        // `OpCtx::lock`; the rwlock's shared side admits many and is not delayed.
        true
    }
    fn interleaves(&self, params: &harness::Params) -> bool {
        // A dispatching server's own threads (a queue's searchers, rayon's pool) would go
        // on spinning or sleeping on their own while the team is parked.
        params.word("dispatch") == "direct"
    }
}

//! The lock table's instrument: which locks a hot path takes, how often, how long each
//! acquisition waited and how long it held the lock.
//!
//! A hot path declares its locks once ([`Workload::locks`](crate::Workload::locks)) as a
//! [`LockSet`]: a small [`LockId`] per lock (a constant of the crate), a name, and how
//! many holders it admits (its slots K: 1 for a mutex, K for a semaphore or a pool of K
//! connections, none for the shared side of a reader-writer lock). It then takes each
//! lock through [`OpCtx::lock`](crate::OpCtx::lock) (a guard-returning lock call, timed
//! from acquire to drop) or reports an acquisition it made itself through
//! [`OpCtx::acquired`](crate::OpCtx::acquired) (a permit or a lease), or, where no
//! context reaches the call site, [`thread_acquired`].
//!
//! What it costs, and where: the acquisition is counted and the sampler's countdown
//! stepped before the lock is tried, so that nothing of the instrument runs while the
//! lock is held but a sampled hold's two clock reads (its start, taken as the lock is
//! got, and its end, taken just before the release); a contended acquisition reads the
//! clock once when it gets the lock, as [`OpCtx::acquire`](crate::OpCtx::acquire) does
//! for an uninstrumented lock, and that read is also its hold's start. The wait and the
//! hold go into per-thread histograms after the release, when the [`Hold`] drops; waits
//! are exhaustive, holds a random subset (the same geometric [`LatencySampler`] as
//! latency, at the workload's latency rate). Nothing here touches a shared cache line:
//! per-thread figures are summed by the runner after the window ([`crate::lock_table`]
//! turns them into rows). The instrument's own cost per acquisition is measured by
//! [`cost::instrument_cost`]; [`set_instrument`] turns it off for a process (`lab
//! matrix locks=off`), which then measures the uninstrumented figure.
//!
//! This module does not decide which locks matter or compute ceilings; it counts.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use hdrhistogram::Histogram;

use crate::sampler::LatencySampler;
use crate::stats;

pub mod cost;
pub mod delay;
mod hold;
#[cfg(test)]
mod tests;

pub use hold::{Held, Hold};

/// The most locks one hot path may name (ids `0..MAX_LOCKS`).
pub const MAX_LOCKS: usize = 16;

/// A lock's number within its hot path: an index into the per-thread tallies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LockId(pub u8);

impl LockId {
    fn index(self) -> usize {
        usize::from(self.0).min(MAX_LOCKS - 1)
    }
}

/// One named lock (or permit set, or connection set) of a hot path.
#[derive(Debug, Clone, PartialEq)]
pub struct LockSpec {
    /// Its id at the call sites.
    pub id: LockId,
    /// Its name in the table, e.g. `directory` or `transaction semaphore`.
    pub name: String,
    /// Holders it admits at once (K); `None` for a shared side (a reader-writer lock's
    /// readers), which has no ceiling of its own.
    pub slots: Option<u32>,
}

/// Every lock a hot path names, and what it does not name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LockSet {
    /// The named locks.
    pub locks: Vec<LockSpec>,
    /// The synchronization points the hot path takes but does not name (e.g. a sharded
    /// map's internal locks); `None` when every one is named.
    pub unnamed: Option<String>,
}

impl LockSet {
    /// An empty set: a hot path that takes no lock at all.
    pub fn new() -> LockSet {
        LockSet::default()
    }

    /// Adds an exclusive lock or a set of `slots` interchangeable slots.
    pub fn with(mut self, id: LockId, name: &str, slots: u32) -> LockSet {
        self.locks.push(LockSpec {
            id,
            name: name.to_owned(),
            slots: Some(slots.max(1)),
        });
        self
    }

    /// Adds the shared side of a lock (readers), which has no ceiling of its own.
    pub fn shared(mut self, id: LockId, name: &str) -> LockSet {
        self.locks.push(LockSpec {
            id,
            name: name.to_owned(),
            slots: None,
        });
        self
    }

    /// Says what the hot path takes but does not name (appended to any earlier note).
    pub fn unnamed(mut self, what: &str) -> LockSet {
        self.unnamed = Some(match self.unnamed.take() {
            Some(before) => format!("{before}; {what}"),
            None => what.to_owned(),
        });
        self
    }

    /// Both sets' locks; a lock id of `other` already used here is dropped.
    pub fn join(mut self, other: LockSet) -> LockSet {
        for spec in other.locks {
            if self.locks.iter().all(|l| l.id != spec.id) {
                self.locks.push(spec);
            }
        }
        if let Some(what) = other.unnamed {
            self = self.unnamed(&what);
        }
        self
    }
}

/// One thread's (or, summed, one run's) figures for one lock.
#[derive(Debug, Clone, Default)]
pub struct LockTally {
    /// Acquisitions.
    pub acquisitions: u64,
    /// Acquisitions that had to wait (the try failed).
    pub contended: u64,
    /// Time waited, summed over the contended acquisitions (every one is timed).
    pub wait_sum_ns: u64,
    /// The contended acquisitions' waits.
    pub waits: Option<Histogram<u64>>,
    /// Holds timed (a sample of the acquisitions).
    pub hold_samples: u64,
    /// Time held, summed over the timed holds.
    pub hold_sum_ns: u64,
    /// The timed holds.
    pub holds: Option<Histogram<u64>>,
}

impl LockTally {
    /// A contended acquisition's wait (every one is timed).
    fn waited(&mut self, waited: Duration) {
        let ns = waited.as_nanos() as u64;
        self.contended += 1;
        self.wait_sum_ns += ns;
        self.waits
            .get_or_insert_with(stats::new_histogram)
            .saturating_record(ns);
    }

    fn hold(&mut self, held: Duration) {
        let ns = held.as_nanos() as u64;
        self.hold_samples += 1;
        self.hold_sum_ns += ns;
        self.holds
            .get_or_insert_with(stats::new_histogram)
            .saturating_record(ns);
    }

    /// Adds `other`'s figures to these.
    pub fn add(&mut self, other: &LockTally) {
        self.acquisitions += other.acquisitions;
        self.contended += other.contended;
        self.wait_sum_ns += other.wait_sum_ns;
        self.hold_samples += other.hold_samples;
        self.hold_sum_ns += other.hold_sum_ns;
        for (into, from) in [
            (&mut self.waits, &other.waits),
            (&mut self.holds, &other.holds),
        ] {
            if let Some(from) = from {
                stats::merge_into(into.get_or_insert_with(stats::new_histogram), from);
            }
        }
    }
}

/// A run's lock figures: the set the hot path named and the tallies summed over its
/// threads, by lock id.
#[derive(Debug, Clone, Default)]
pub struct LockMeasurement {
    /// What the hot path named.
    pub set: LockSet,
    /// Summed over threads, indexed by [`LockId`].
    pub tallies: Vec<LockTally>,
}

/// Adds every tally of `from` into `into`, by lock id.
pub fn add_tallies(into: &mut Vec<LockTally>, from: &[LockTally]) {
    if into.len() < from.len() {
        into.resize_with(from.len(), LockTally::default);
    }
    for (a, b) in into.iter_mut().zip(from) {
        a.add(b);
    }
}

/// Whether this process counts lock acquisitions: a process-wide switch, like the probe,
/// because `lab run` measures one cell per process and the switch must reach every
/// worker's context and every store that counts without one.
static INSTRUMENT_OFF: AtomicBool = AtomicBool::new(false);

/// Turns the lock table's instrument on (the default) or off for this process, before the
/// runs it should apply to: with it off, [`OpCtx::lock`](crate::OpCtx::lock) is
/// [`OpCtx::acquire`](crate::OpCtx::acquire), nothing is counted or timed, and a record
/// has no lock table (`locks_off` says why).
pub fn set_instrument(on: bool) {
    INSTRUMENT_OFF.store(!on, Ordering::SeqCst);
}

/// Whether the lock table's instrument is on in this process.
pub fn instrument_on() -> bool {
    !INSTRUMENT_OFF.load(Ordering::Relaxed)
}

/// Whether real servers this process starts run under the lock library
/// (`launcher::locks`): off by default, because the library costs the server time, and a
/// process-wide switch for the reason [`set_instrument`] is one.
static PRELOAD: AtomicBool = AtomicBool::new(false);

/// Turns the lock library on or off for the servers this process starts from now on.
pub fn set_preload(on: bool) {
    PRELOAD.store(on, Ordering::SeqCst);
}

/// Whether servers this process starts run under the lock library.
pub fn preload_on() -> bool {
    PRELOAD.load(Ordering::Relaxed)
}

/// A thread's counters: tallies by lock id and the sampler that picks holds to time.
#[derive(Debug, Default)]
pub(crate) struct LockCounters {
    pub(crate) tallies: Vec<LockTally>,
    /// `None` outside the runner (benchmarks, tests): acquisitions are counted, no hold
    /// is timed.
    pub(crate) sampler: Option<LatencySampler>,
    /// The instrument is off ([`set_instrument`]): nothing is counted.
    pub(crate) off: bool,
}

impl LockCounters {
    /// Counters that time one hold in `sample_every` on average, or count nothing when
    /// the instrument is off.
    pub(crate) fn sampled(sample_every: u32, rng_seed: u64) -> LockCounters {
        LockCounters {
            tallies: Vec::new(),
            sampler: Some(LatencySampler::new(sample_every, rng_seed ^ 0x10c4_7ab1e)),
            off: !instrument_on(),
        }
    }

    #[inline]
    fn tally(&mut self, id: LockId) -> &mut LockTally {
        let index = id.index();
        if index >= self.tallies.len() {
            self.tallies.resize_with(index + 1, LockTally::default);
        }
        &mut self.tallies[index]
    }

    /// Counts an acquisition of `id` about to be made and says whether to time its hold.
    /// Called before the lock is tried, so that it costs the holder nothing.
    #[inline]
    pub(crate) fn count(&mut self, id: LockId) -> bool {
        self.tally(id).acquisitions += 1;
        self.sampler.as_mut().is_some_and(LatencySampler::time_next)
    }

    /// Counts an acquisition of `id` already made (`waited`: `Some` when it had to wait)
    /// and starts its hold's timer when it is sampled; the wait is recorded when the
    /// hold drops.
    #[inline]
    pub(crate) fn acquired(&mut self, id: LockId, waited: Option<Duration>) -> Hold {
        if self.off {
            return Hold::NONE;
        }
        let timed = self.count(id);
        Hold::begin(id, timed, waited)
    }
}

thread_local! {
    /// Holds and waits recorded on this thread, and acquisitions reported without a
    /// context.
    static THREAD: RefCell<LockCounters> = const {
        RefCell::new(LockCounters { tallies: Vec::new(), sampler: None, off: false })
    };
}

#[cold]
fn record(id: LockId, held: Option<Duration>, waited: Option<Duration>) {
    THREAD.with(|t| {
        let mut t = t.borrow_mut();
        let tally = t.tally(id);
        if let Some(waited) = waited {
            tally.waited(waited);
        }
        if let Some(held) = held {
            tally.hold(held);
        }
    });
}

/// Counts an acquisition made where no [`crate::OpCtx`] reaches (a store behind a
/// contract without one), on the calling thread; the runner collects it with the
/// context's figures. `waited`: `Some` when it had to wait (the caller accounts that wait
/// as it already does).
pub fn thread_acquired(id: LockId, waited: Option<Duration>) -> Hold {
    THREAD.with(|t| t.borrow_mut().acquired(id, waited))
}

/// Forgets this thread's figures and times one hold in `sample_every` from now on (the
/// runner calls it when the window opens).
pub(crate) fn thread_reset(sample_every: u32, rng_seed: u64) {
    THREAD.with(|t| *t.borrow_mut() = LockCounters::sampled(sample_every, rng_seed ^ 0x7b));
}

/// This thread's figures since [`thread_reset`], leaving it counting nothing.
pub(crate) fn thread_take() -> Vec<LockTally> {
    THREAD.with(|t| std::mem::take(&mut *t.borrow_mut()).tallies)
}

/// Puts `saved` back as this thread's counters and returns what they were (the
/// calibration keeps its own figures out of a thread's).
pub(crate) fn thread_swap(saved: LockCounters) -> LockCounters {
    THREAD.with(|t| std::mem::replace(&mut *t.borrow_mut(), saved))
}

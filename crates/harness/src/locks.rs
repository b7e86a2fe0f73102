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
//! What it costs: every acquisition adds one to a per-thread counter and steps the
//! sampler's countdown; a contended acquisition (the try failed) is already timed by
//! [`OpCtx::acquire`](crate::OpCtx::acquire) and its wait goes into a per-thread
//! histogram, so waits are exhaustive; holds are timed for a random subset (the same
//! geometric [`LatencySampler`] as latency, at the workload's latency rate), two clock
//! reads each. Nothing here touches a shared cache line: per-thread figures are summed
//! by the runner after the window ([`crate::lock_table`] turns them into rows).
//!
//! This module does not decide which locks matter or compute ceilings; it counts.

use std::cell::RefCell;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use crate::sampler::LatencySampler;
use crate::stats;

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
    #[inline]
    fn count(&mut self, waited: Option<Duration>) {
        self.acquisitions += 1;
        if let Some(waited) = waited {
            let ns = waited.as_nanos() as u64;
            self.contended += 1;
            self.wait_sum_ns += ns;
            self.waits
                .get_or_insert_with(stats::new_histogram)
                .saturating_record(ns);
        }
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

/// A thread's counters: tallies by lock id and the sampler that picks holds to time.
#[derive(Debug, Default)]
pub(crate) struct LockCounters {
    pub(crate) tallies: Vec<LockTally>,
    /// `None` outside the runner (benchmarks, tests): acquisitions are counted, no hold
    /// is timed.
    pub(crate) sampler: Option<LatencySampler>,
}

impl LockCounters {
    /// Counters that time one hold in `sample_every` on average.
    pub(crate) fn sampled(sample_every: u32, seed: u64) -> LockCounters {
        LockCounters {
            tallies: Vec::new(),
            sampler: Some(LatencySampler::new(sample_every, seed ^ 0x10c4_7ab1e)),
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

    /// Counts an acquisition of `id` (`waited`: `Some` when it had to wait) and decides
    /// whether to time its hold.
    #[inline]
    pub(crate) fn acquired(&mut self, id: LockId, waited: Option<Duration>) -> Hold {
        self.tally(id).count(waited);
        if self.sampler.as_mut().is_some_and(LatencySampler::time_next) {
            Hold::started(id)
        } else {
            Hold::NONE
        }
    }
}

/// A held lock's timer: when dropped (or [`Hold::end`]) the hold, if this acquisition
/// was picked for timing, is recorded on the calling thread. Keep it alive exactly as
/// long as the lock is held.
#[derive(Debug)]
#[must_use = "the hold ends when this is dropped"]
pub struct Hold {
    started: Option<(Instant, LockId)>,
}

impl Hold {
    /// A hold that is not timed.
    pub const NONE: Hold = Hold { started: None };

    #[cold]
    fn started(id: LockId) -> Hold {
        Hold {
            started: Some((Instant::now(), id)),
        }
    }

    /// Whether this hold is being timed.
    pub fn timed(&self) -> bool {
        self.started.is_some()
    }

    /// Ends the hold now (the lock is about to be released).
    #[inline]
    pub fn end(&mut self) {
        if let Some((start, id)) = self.started.take() {
            record_hold(id, start.elapsed());
        }
    }

    /// Ends the hold with a length the caller knows better than the clock (a lease held
    /// in simulated time until its answer was due).
    pub fn end_after(mut self, held: Duration) {
        if let Some((_, id)) = self.started.take() {
            record_hold(id, held);
        }
    }
}

impl Drop for Hold {
    #[inline]
    fn drop(&mut self) {
        self.end();
    }
}

/// A lock guard with its hold timer: derefs to the guard; the hold ends just before the
/// guard is released (the timer is dropped first).
#[derive(Debug)]
pub struct Held<G> {
    // Field order is drop order: the timer reads the clock while the lock is still held.
    hold: Hold,
    guard: G,
}

impl<G> Held<G> {
    /// Wraps `guard` with its timer.
    #[inline]
    pub fn new(guard: G, hold: Hold) -> Held<G> {
        Held { hold, guard }
    }

    /// Ends the hold and hands back the bare guard (to wait on a condition variable,
    /// which releases the lock, or to release it by hand).
    pub fn into_inner(self) -> G {
        let Held { mut hold, guard } = self;
        hold.end();
        guard
    }
}

impl<G> std::ops::Deref for Held<G> {
    type Target = G;
    #[inline]
    fn deref(&self) -> &G {
        &self.guard
    }
}

impl<G> std::ops::DerefMut for Held<G> {
    #[inline]
    fn deref_mut(&mut self) -> &mut G {
        &mut self.guard
    }
}

thread_local! {
    /// Holds timed on this thread and acquisitions reported without a context.
    static THREAD: RefCell<LockCounters> = const {
        RefCell::new(LockCounters { tallies: Vec::new(), sampler: None })
    };
}

fn record_hold(id: LockId, held: Duration) {
    THREAD.with(|t| t.borrow_mut().tally(id).hold(held));
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
pub(crate) fn thread_reset(sample_every: u32, seed: u64) {
    THREAD.with(|t| *t.borrow_mut() = LockCounters::sampled(sample_every, seed ^ 0x7b));
}

/// This thread's figures since [`thread_reset`], leaving it counting nothing.
pub(crate) fn thread_take() -> Vec<LockTally> {
    THREAD.with(|t| std::mem::take(&mut *t.borrow_mut()).tallies)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_untimed_context_counts_and_times_nothing() {
        let mut c = LockCounters::default();
        for _ in 0..10 {
            let hold = c.acquired(LockId(2), None);
            assert!(!hold.timed());
        }
        c.acquired(LockId(2), Some(Duration::from_micros(5))).end();
        assert_eq!(c.tallies.len(), 3);
        let t = &c.tallies[2];
        assert_eq!((t.acquisitions, t.contended, t.wait_sum_ns), (11, 1, 5_000));
        assert_eq!(t.hold_samples, 0);
    }

    #[test]
    fn a_sampled_thread_times_about_one_hold_in_n() {
        thread_reset(4, 1);
        for _ in 0..4000 {
            let _hold = thread_acquired(LockId(0), None);
        }
        let t = thread_take();
        assert_eq!(t[0].acquisitions, 4000);
        assert!(
            (700..1300).contains(&t[0].hold_samples),
            "{}",
            t[0].hold_samples
        );
        assert!(thread_take().is_empty(), "taken once");
    }

    #[test]
    fn sets_join_and_note_what_they_leave_unnamed() {
        let a = LockSet::new().with(LockId(0), "directory", 1);
        let b = LockSet::new()
            .with(LockId(0), "twice", 1)
            .shared(LockId(1), "reads")
            .unnamed("the map's shards");
        let joined = a.join(b).unnamed("the queue");
        let names: Vec<_> = joined.locks.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["directory", "reads"]);
        assert_eq!(
            joined.unnamed.as_deref(),
            Some("the map's shards; the queue")
        );
    }
}
